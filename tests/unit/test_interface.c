// SPDX-License-Identifier: GPL-2.0
/*
 * Host checks of module/interface.h, the one definition of the stats lines
 * and parameters that the module, amtctl and the guest tests share: names
 * unique and well formed, Prometheus names that follow the conventions
 * (counters end in _total, time is exported in seconds), labelled families
 * consistent, one stats line per verdict of policy.h.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "../../module/interface.h"
#include "../../module/policy.h"

static int failed, passed;

#define CHECK(cond, ...) do {						\
	if (cond) {							\
		passed++;						\
	} else {							\
		failed++;						\
		printf("not ok - ");					\
		printf(__VA_ARGS__);					\
		printf("\n");						\
	}								\
} while (0)

struct stat_def {
	const char *name, *kind, *src, *unit, *metric, *label, *help;
};

#define AMT_STAT_DEF(n, k, s, u, m, l, h) { #n, #k, #s, #u, m, l, h },
static const struct stat_def stats[] = { AMT_STAT_LIST(AMT_STAT_DEF) };
#define NSTATS (sizeof(stats) / sizeof(stats[0]))
static const char *const modes[] = { AMT_MODE_NAMES };
#define NMODES (sizeof(modes) / sizeof(modes[0]))

struct param_def {
	const char *name, *when, *type, *allowed, *help;
};

#define AMT_PARAM_DEF(n, w, t, a, h) { #n, #w, #t, a, h },
static const struct param_def params[] = { AMT_PARAM_LIST(AMT_PARAM_DEF) };
#define NPARAMS (sizeof(params) / sizeof(params[0]))

static bool word(const char *s)
{
	if (!*s || (*s >= '0' && *s <= '9'))
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
		      *s == '_'))
			return false;
	return true;
}

static bool ends(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && !strcmp(s + n - t, tail);
}

int main(void)
{
	static const char *const units[] = {
		"exits", "calls", "pages", "mms", "chunks", "ns", "pid",
		"threads", "bool",
	};
	size_t i, j, verdicts = 0;

	for (i = 0; i < NSTATS; i++) {
		const struct stat_def *s = &stats[i];
		bool unit_ok = false;

		CHECK(word(s->name) && word(s->metric),
		      "stat %s: name and metric %s are [a-z0-9_]", s->name,
		      s->metric);
		CHECK(!strcmp(s->kind, "COUNTER") || !strcmp(s->kind, "GAUGE"),
		      "stat %s: kind %s", s->name, s->kind);
		/* a per-CPU counter only grows */
		CHECK(!strcmp(s->src, "MODULE") ||
		      (!strcmp(s->src, "PERCPU") && !strcmp(s->kind, "COUNTER")),
		      "stat %s: src %s (%s)", s->name, s->src, s->kind);
		for (j = 0; j < sizeof(units) / sizeof(units[0]); j++)
			unit_ok |= !strcmp(s->unit, units[j]);
		CHECK(unit_ok, "stat %s: unknown unit %s", s->name, s->unit);
		CHECK(strlen(s->help) > 10 && ends(s->help, "."),
		      "stat %s: help is a sentence", s->name);
		CHECK(!strcmp(s->kind, "COUNTER") == ends(s->metric, "_total"),
		      "stat %s: a metric ends in _total if and only if it counts",
		      s->name);
		CHECK(!!strcmp(s->unit, "ns") == !strstr(s->metric, "seconds"),
		      "stat %s: a time in ns is exported in seconds", s->name);
		for (j = 0; j < i; j++) {
			CHECK(strcmp(stats[j].name, s->name),
			      "stat %s listed twice", s->name);
			/* a shared metric is a labelled family */
			if (!strcmp(stats[j].metric, s->metric))
				CHECK(*s->label && *stats[j].label &&
				      strcmp(s->label, stats[j].label) &&
				      !strcmp(s->help, stats[j].help) &&
				      !strcmp(s->kind, stats[j].kind),
				      "stats %s and %s share %s without distinct labels",
				      stats[j].name, s->name, s->metric);
		}
		if (!strncmp(s->name, "sync_", 5) ||
		    !strncmp(s->name, "rejected_", 9))
			verdicts++;
	}
	/* every verdict but AMT_DEFER ("queued") is a line of its own */
	CHECK(verdicts == AMT_NR_VERDICTS - 1,
	      "%zu sync_/rejected_ lines for %d inline verdicts", verdicts,
	      AMT_NR_VERDICTS - 1);
	CHECK(!strcmp(stats[0].name, "queued"), "queued comes first");

	for (i = 0; i < NPARAMS; i++) {
		const struct param_def *p = &params[i];

		CHECK(word(p->name), "param %s: name", p->name);
		CHECK(!strcmp(p->when, "RUNTIME") || !strcmp(p->when, "LOAD"),
		      "param %s: when %s", p->name, p->when);
		CHECK(!strcmp(p->type, "BOOL") || !strcmp(p->type, "CHOICE") ||
		      !strcmp(p->type, "NUMBER") ||
		      !strcmp(p->type, "PERCENT"), "param %s: type %s", p->name,
		      p->type);
		CHECK(*p->allowed && ends(p->help, "."),
		      "param %s: allowed values and a help sentence", p->name);
		for (j = 0; j < i; j++)
			CHECK(strcmp(params[j].name, p->name),
			      "param %s listed twice", p->name);
		/* mode, the only CHOICE: its text names every value */
		for (j = 0; !strcmp(p->type, "CHOICE") && j < NMODES; j++)
			CHECK(strstr(p->allowed, modes[j]) != NULL,
			      "param %s: '%s' not in '%s'", p->name, modes[j],
			      p->allowed);
	}
	CHECK(AMT_DRAIN_MIN_MS >= 1 && AMT_DRAIN_MIN_MS < AMT_DRAIN_MAX_MS,
	      "drain range %d..%d", AMT_DRAIN_MIN_MS, AMT_DRAIN_MAX_MS);
	printf("%s - interface.h: %zu stats lines and %zu parameters well formed (%d checks)\n",
	       failed ? "not ok" : "ok", NSTATS, NPARAMS, passed + failed);
	return failed != 0;
}
