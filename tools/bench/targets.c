// SPDX-License-Identifier: GPL-2.0
/*
 * exit_latency: the targets of issue 5 (and, for the sections zap and
 * pinned, of issue 31), from the sections that ran.
 */
#include "bench.h"

static const struct lat_row *find_row(const struct lat_result *l, enum kind k,
				      unsigned long mb, bool vol)
{
	int i;

	for (i = 0; i < l->nr; i++)
		if (l->rows[i].kind == k && l->rows[i].mb == mb &&
		    l->rows[i].voluntary == vol)
			return &l->rows[i];
	return NULL;
}

static void target(struct target_result *t, const char *what, double value,
		   const char *op, double limit)
{
	struct target *x;

	if (t->nr == MAX_TARGETS)
		die("more than %d targets", MAX_TARGETS);
	x = &t->t[t->nr++];
	snprintf(x->what, sizeof(x->what), "%s", what);
	x->value = value;
	x->op = op;
	x->limit = limit;
	x->met = !strcmp(op, "<=") ? value <= limit : value >= limit;
}

/* Issue 31: memory back sooner than inline, and while a pin is held */
static void check_zap_targets(const struct results *res,
			      struct target_result *t)
{
	static const int par[NR_CFG] = { 0, ZV_REAPER_PAR, ZV_SELF_PAR };
	static const int pin[NR_CFG] = { PV_SYNC, PV_REAPER, PV_SELF };
	const struct zap_result *z = &res->zap;
	const struct pin_result *p = &res->pinned;
	char what[128];
	int c, i;

	for (c = REAPER; c <= SELF; c++) {
		if (c == SELF && !z->have_self)
			break;
		for (i = 0; i < NR_ZAP_SIZES && RUNS(S_ZAP); i++) {
			if (!z->ran[i] || z->mb[i] < 1024)
				continue;
			snprintf(what, sizeof(what), "%s: %lu MiB memory back, parallel / sync",
				 cfg_name[c], z->mb[i]);
			target(t, what, z->back[i][par[c]].med /
			       z->back[i][ZV_SYNC].med, "<=", 0.6);
		}
	}
	if (!RUNS(S_PINNED) || !p->ran)
		return;
	for (c = SYNC; c <= SELF; c++) {
		if (c == SELF && !p->have_self)
			break;
		snprintf(what, sizeof(what), "%s: pinned %lu MiB, rounds back while held",
			 cfg_name[c], p->mb);
		/* inline, the holder keeps it: that the fixture held the mm */
		target(t, what, (double)p->back_rounds[pin[c]] / p->n,
		       c == SYNC ? "<=" : ">=", c == SYNC ? 0 : 1);
	}
}

void check_targets(struct results *res)
{
	const struct lat_result *l = &res->latency;
	const struct lat_row *g = find_row(l, K_ANON, 1024, false);
	const struct lat_row *f = find_row(l, K_ANON, 8, false);
	/* the floor: an 8 MiB exit, inline in every mode */
	struct dist floor_med = f ? f->d[SYNC] : (struct dist){ 0 };
	const struct par_row *par8 = NULL;
	struct target_result *t = &res->targets;
	int i, c;

	for (i = 0; i < res->parallel.nr; i++)
		if (res->parallel.rows[i].m == 8 && !res->parallel.rows[i].skipped)
			par8 = &res->parallel.rows[i];
	/* sections 6. to 9. have no target of their own */
	t->heading = sections & ~(1U << S_WAKE | 1U << S_CPUSPLIT | 1U << S_BUSY |
				1U << S_PREFORK);
	for (c = REAPER; c <= SELF; c++) {
		char what[128];

		if (g) {
			const struct dist *s = &g->d[SYNC], *a = &g->d[c];
			const struct dist *b = &g->b[c], *bs = &g->b[SYNC];

			snprintf(what, sizeof(what), "%s: 1 GiB latency / sync", cfg_name[c]);
			target(t, what, a->med / s->med, "<=", 0.01);
			snprintf(what, sizeof(what), "%s: 1 GiB latency / 8 MiB floor", cfg_name[c]);
			target(t, what, a->med / floor_med.med, "<=", 1.5);
			snprintf(what, sizeof(what), "%s: 1 GiB memory back / sync", cfg_name[c]);
			target(t, what, b->med / bs->med, "<=", 1.1);
		}
		for (i = 0; i < l->nr; i++) {
			const struct lat_row *r = &l->rows[i];

			if (r->voluntary || r->kind > K_THP || r->mb < 64)
				continue;
			snprintf(what, sizeof(what), "%s: p99 %s %lu MiB / floor median",
				 cfg_name[c], kind_name[r->kind], r->mb);
			target(t, what, r->d[c].p99 / floor_med.med, "<=", 2.0);
		}
		for (i = 0; i < 2 && RUNS(S_SPAWN); i++) {
			const struct ci *r = &res->spawn.loop[i].ratio[c - REAPER];

			snprintf(what, sizeof(what), "%s: %s rate / unloaded (CI low end)",
				 cfg_name[c], i ? "fork+_exit" : "fork+exec");
			target(t, what, r->lo, ">=", 0.99);
		}
		if (par8) {
			snprintf(what, sizeof(what), "%s: M=8 all reaped / sync", cfg_name[c]);
			target(t, what, par8->tail[c].med / par8->tail[SYNC].med, "<=", 0.02);
			snprintf(what, sizeof(what), "%s: M=8 memory back / sync", cfg_name[c]);
			target(t, what, par8->back[c].med / par8->back[SYNC].med, "<=", 1.1);
			/* issue 31: the zap helpers make many exits no slower */
			snprintf(what, sizeof(what), "%s: M=8 memory back, parallel=1 / parallel=0",
				 cfg_name[c]);
			target(t, what, par8->back[c].med /
			       par8->back_one[c - REAPER].med, "<=", 1.05);
		}
		if (!RUNS(S_CPU))
			continue;
		snprintf(what, sizeof(what), "%s: CPU per teardown / sync, drained", cfg_name[c]);
		target(t, what, cpu_ratio(res->cpu.drained, c), "<=", 1.05);
		if (c == REAPER) {
			snprintf(what, sizeof(what), "%s: CPU per teardown / sync, back-to-back",
				 cfg_name[c]);
			target(t, what, cpu_ratio(res->cpu.overlap, c), "<=", 1.05);
		}
	}
	check_zap_targets(res, t);
}
