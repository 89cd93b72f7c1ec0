// SPDX-License-Identifier: GPL-2.0
/*
 * amtctl stats and watch: the module's debugfs stats file ("name value" per
 * line) as a table, JSON, Prometheus text format, or live rates. Lines this
 * version does not know are passed through, never an error: the module may
 * be newer than amtctl.
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "amtctl.h"

#define AMT_PROM_PREFIX AMT_NAME "_"

/* ---- units ---- */

static bool amtctl_has_word(const char *name, const char *word)
{
	size_t n = strlen(name), w = strlen(word);
	const char *p;

	if (n >= w + 1 && name[n - w - 1] == '_' && !strcmp(name + n - w, word))
		return true;	/* ..._word */
	for (p = name; (p = strstr(p, word)); p++)
		if ((p == name || p[-1] == '_') && p[w] == '_')
			return true;	/* word_... or ..._word_... */
	return false;
}

static bool amtctl_unit_pages(const char *name)
{
	return amtctl_has_word(name, "pages");
}

static bool amtctl_unit_ns(const char *name)
{
	return amtctl_has_word(name, "ns");
}

/* ---- the table ---- */

static void amtctl_stats_table(const struct amtctl_stats *st)
{
	const struct amtctl_stat *s;
	int i, nw = 0, vw = 0, l;

	for (i = 0; i < st->n; i++) {
		l = strlen(st->s[i].name);
		nw = l > nw ? l : nw;
		l = strlen(st->s[i].value);
		vw = l > vw ? l : vw;
	}
	for (i = 0; i < st->n; i++) {
		s = &st->s[i];
		printf("%-*s  %*s", nw, s->name, vw, s->value);
		if (s->numeric && amtctl_unit_pages(s->name))
			printf("  (%.1f MiB)", amtctl_pages_mib(s->num));
		else if (s->numeric && amtctl_unit_ns(s->name))
			printf("  (%.3f ms)", s->num / 1e6);
		putchar('\n');
	}
}

/* ---- JSON ---- */

static void amtctl_json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void amtctl_stats_json(const struct amtctl_stats *st)
{
	int i;

	putchar('{');
	for (i = 0; i < st->n; i++) {
		if (i)
			fputs(", ", stdout);
		amtctl_json_string(st->s[i].name);
		fputs(": ", stdout);
		if (st->s[i].numeric)
			fputs(st->s[i].value, stdout);
		else
			amtctl_json_string(st->s[i].value);
	}
	puts("}");
}

/* ---- Prometheus text format ---- */

struct amtctl_metric {
	const char *stat;	/* the stats line */
	const char *metric;	/* after "async_mm_teardown_" */
	bool counter;
	bool ns;		/* nanoseconds, exported in seconds */
	const char *label;	/* reason="..." in a family, or "" */
	const char *help;
};

/* Every stats line of the module, from the header the module builds with. */
#define AMTCTL_COUNTER_COUNTER	true
#define AMTCTL_COUNTER_GAUGE	false
/* the units of interface.h; only ns is converted (to seconds) */
#define AMTCTL_NS_exits		false
#define AMTCTL_NS_calls		false
#define AMTCTL_NS_pages		false
#define AMTCTL_NS_mms		false
#define AMTCTL_NS_chunks	false
#define AMTCTL_NS_ns		true
#define AMTCTL_NS_pid		false
#define AMTCTL_NS_threads	false
#define AMTCTL_NS_bool		false
#define AMTCTL_METRIC(n, k, s, u, m, l, h) \
	{ #n, m, AMTCTL_COUNTER_##k, AMTCTL_NS_##u, l, h },
static const struct amtctl_metric amtctl_metrics[] = {
	AMT_STAT_LIST(AMTCTL_METRIC)
};

#define AMTCTL_NR_METRICS ARRAY_SIZE(amtctl_metrics)

struct amtctl_family {
	char metric[96];
	char help[160];
	bool counter;
};

struct amtctl_sample {
	int family;
	char label[64];		/* the reason="..." value, or empty */
	const struct amtctl_stat *stat;
	bool ns;
};

static const struct amtctl_metric *amtctl_metric_find(const char *stat,
						      const char **label)
{
	const struct amtctl_metric *m;
	size_t i, n;

	*label = NULL;
	for (i = 0; i < AMTCTL_NR_METRICS; i++) {
		m = &amtctl_metrics[i];
		if (!strcmp(stat, m->stat)) {
			*label = m->label[0] ? m->label : NULL;
			return m;
		}
	}
	/*
	 * A newer module's line in a labelled family ("rejected_" + a new
	 * reason) is still one of its series.
	 */
	for (i = 0; i < AMTCTL_NR_METRICS; i++) {
		m = &amtctl_metrics[i];
		if (!m->label[0])
			continue;
		n = strlen(m->stat) - strlen(m->label);
		if (!strncmp(stat, m->stat, n) && stat[n]) {
			*label = stat + n;
			return m;
		}
	}
	return NULL;
}

/* Metric names and label values: [a-zA-Z0-9_], not starting with a digit. */
static void amtctl_sanitize(char *dst, size_t len, const char *src)
{
	size_t i;

	for (i = 0; src[i] && i < len - 1; i++) {
		char c = src[i];

		dst[i] = ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9')) ? c : '_';
	}
	dst[i] = 0;
}

static int amtctl_family_get(struct amtctl_family *f, int *nf,
			     const char *metric, const char *help, bool counter)
{
	int i;

	for (i = 0; i < *nf; i++)
		if (!strcmp(f[i].metric, metric))
			return f[i].counter == counter ? i : -1;
	snprintf(f[*nf].metric, sizeof(f[*nf].metric), "%s", metric);
	snprintf(f[*nf].help, sizeof(f[*nf].help), "%s", help);
	f[*nf].counter = counter;
	return (*nf)++;
}

static void amtctl_stats_prometheus(const struct amtctl_stats *st)
{
	struct amtctl_family fam[128];
	struct amtctl_sample smp[128];
	const struct amtctl_metric *m;
	const struct amtctl_stat *s;
	char metric[96], name[64], help[160];
	const char *label;
	int nf = 0, ns = 0, i, j;

	for (i = 0; i < st->n; i++) {
		s = &st->s[i];
		if (!s->numeric) {
			printf("# amtctl: skipped stats line '%s': not a number\n",
			       s->name);
			continue;
		}
		m = amtctl_metric_find(s->name, &label);
		amtctl_sanitize(name, sizeof(name), m ? "" : s->name);
		if (m) {
			snprintf(metric, sizeof(metric), AMT_PROM_PREFIX "%s",
				 m->metric);
			snprintf(help, sizeof(help), "%s", m->help);
		} else {
			/* Unknown to this version: pass it on as a gauge. */
			snprintf(metric, sizeof(metric), AMT_PROM_PREFIX "%s",
				 name);
			snprintf(help, sizeof(help),
				 "The stats line %s (not known to this amtctl).",
				 name);
		}
		smp[ns].family = amtctl_family_get(fam, &nf, metric, help,
						   m && m->counter);
		smp[ns].stat = s;
		smp[ns].ns = m && m->ns;
		amtctl_sanitize(smp[ns].label, sizeof(smp[ns].label),
				label ? label : "");
		for (j = 0; j < ns && smp[ns].family >= 0; j++)
			if (smp[j].family == smp[ns].family &&
			    !strcmp(smp[j].label, smp[ns].label))
				smp[ns].family = -1;
		if (smp[ns].family < 0) {
			printf("# amtctl: skipped stats line '%s': its metric name is taken\n",
			       s->name);
			continue;
		}
		ns++;
	}
	/* Each family's HELP and TYPE once, then all of its series. */
	for (i = 0; i < nf; i++) {
		printf("# HELP %s %s\n# TYPE %s %s\n", fam[i].metric,
		       fam[i].help, fam[i].metric,
		       fam[i].counter ? "counter" : "gauge");
		for (j = 0; j < ns; j++) {
			if (smp[j].family != i)
				continue;
			fputs(fam[i].metric, stdout);
			if (smp[j].label[0])
				printf("{reason=\"%s\"}", smp[j].label);
			if (smp[j].ns)
				printf(" %.9f\n", smp[j].stat->num / 1e9);
			else
				printf(" %s\n", smp[j].stat->value);
		}
	}
}

int amtctl_stats(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "prometheus", no_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	struct amtctl_stats st;
	int c, fmt = 0, err;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":jp", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
		case 'p':
			if (fmt && fmt != c)
				return amtctl_usage("give --json or --prometheus, not both");
			fmt = c;
			break;
		default:
			return amtctl_bad_option(c, argv);
		}
	}
	if (optind < argc)
		return amtctl_usage("unexpected argument '%s'", argv[optind]);
	err = amtctl_stats_read(&st);
	if (err)
		return amtctl_stats_error(err);
	if (fmt == 'j')
		amtctl_stats_json(&st);
	else if (fmt == 'p')
		amtctl_stats_prometheus(&st);
	else
		amtctl_stats_table(&st);
	return AMTCTL_OK;
}

/* ---- watch ---- */

static volatile sig_atomic_t amtctl_stop;

static void amtctl_on_signal(int sig AMTCTL_UNUSED)
{
	amtctl_stop = 1;
}

static double amtctl_val(const struct amtctl_stats *st, const char *name)
{
	const struct amtctl_stat *s = amtctl_stats_get(st, name);

	return s && s->numeric ? s->num : 0;
}

static double amtctl_rate(const struct amtctl_stats *a,
			  const struct amtctl_stats *b, const char *name,
			  double dt)
{
	double d = amtctl_val(b, name) - amtctl_val(a, name);

	return d > 0 ? d / dt : 0;	/* < 0: the module was reloaded */
}

static double amtctl_ts(struct timespec *ts)
{
	return ts->tv_sec + ts->tv_nsec / 1e9;
}

int amtctl_watch(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	static struct amtctl_stats a, b;
	struct sigaction sa = { .sa_handler = amtctl_on_signal };
	struct timespec next, t0, t1;
	double interval = 1, dt;
	long count = -1, done;
	char *end;
	int c, err;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":i:n:", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (amtctl_parse_seconds(optarg, 86400, &interval) ||
			    interval < 0.01)
				return amtctl_usage("invalid interval '%s': give seconds, from 0.01 to 86400",
						    optarg);
			break;
		case 'n':
			errno = 0;
			count = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || count < 1)
				return amtctl_usage("invalid count '%s': give a positive whole number",
						    optarg);
			break;
		default:
			return amtctl_bad_option(c, argv);
		}
	}
	if (optind < argc)
		return amtctl_usage("unexpected argument '%s'", argv[optind]);

	err = amtctl_stats_read(&a);
	if (err)
		return amtctl_stats_error(err);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	printf("%10s %10s %10s %10s %11s %11s\n", "queued/s", "sync/s",
	       "rejected/s", "reaped/s", "pending_mms", "pending_MiB");
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	next = t0;
	for (done = 0; count < 0 || done < count; done++) {
		next.tv_sec += (time_t)interval;
		next.tv_nsec += (long)((interval - (time_t)interval) * 1e9);
		if (next.tv_nsec >= 1000000000L) {
			next.tv_sec++;
			next.tv_nsec -= 1000000000L;
		}
		while (!amtctl_stop &&
		       clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next,
				       NULL) == EINTR)
			;
		if (amtctl_stop)
			break;
		err = amtctl_stats_read(&b);
		if (err)
			return amtctl_stats_error(err);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		dt = amtctl_ts(&t1) - amtctl_ts(&t0);
		printf("%10.1f %10.1f %10.1f %10.1f %11.0f %11.1f\n",
		       amtctl_rate(&a, &b, "queued", dt),
		       amtctl_rate(&a, &b, "sync", dt),
		       amtctl_rate(&a, &b, "rejected", dt),
		       amtctl_rate(&a, &b, "reaped", dt),
		       amtctl_val(&b, "pending_mms"),
		       amtctl_pages_mib(amtctl_val(&b, "pending_pages")));
		fflush(stdout);
		a = b;
		t0 = t1;
	}
	return AMTCTL_OK;
}
