// SPDX-License-Identifier: GPL-2.0
/* exit_latency: the targets of issue 5, from the sections that ran. */
#include "bench.h"

static struct lat_row *find_row(enum kind k, unsigned long mb, bool vol)
{
	int i;

	for (i = 0; i < nr_lat_rows; i++)
		if (lat_rows[i].kind == k && lat_rows[i].mb == mb &&
		    lat_rows[i].voluntary == vol)
			return &lat_rows[i];
	return NULL;
}

static int nr_targets;

static void target(const char *what, double value, const char *op,
		   double limit)
{
	bool met = !strcmp(op, "<=") ? value <= limit : value >= limit;

	printf("%-62s %9.4f %s %-8.4f %s\n", what, value, op, limit,
	       met ? "met" : "MISSED");
	json_item();
	fprintf(json, "\"target\": \"%s\", \"value\": %.4f, \"op\": \"%s\", "
		"\"limit\": %.4f, \"met\": %s}", what, value, op, limit,
		met ? "true" : "false");
	nr_targets++;
}

void report_targets(void)
{
	struct lat_row *g = find_row(K_ANON, 1024, false);
	struct lat_row *f = find_row(K_ANON, 8, false);
	/* the floor: an 8 MiB exit, inline in every mode */
	struct dist floor_med = f ? dist_of(f->lat[SYNC], f->n) : (struct dist){ 0 };
	int i, c;

	/* sections 6 and 7 (wake, cpusplit) have no target of their own */
	if (sections & ~(1U << S_WAKE | 1U << S_CPUSPLIT))
		printf("\nTargets (issue 5), per mode:\n");
	json_array("targets");
	for (c = REAPER; c <= SELF; c++) {
		char what[128];

		if (g) {
			struct dist s = dist_of(g->lat[SYNC], g->n);
			struct dist a = dist_of(g->lat[c], g->n);
			struct dist b = dist_of(g->back[c], g->n);
			struct dist bs = dist_of(g->back[SYNC], g->n);

			snprintf(what, sizeof(what), "%s: 1 GiB latency / sync", cfg_name[c]);
			target(what, a.med / s.med, "<=", 0.01);
			snprintf(what, sizeof(what), "%s: 1 GiB latency / 8 MiB floor", cfg_name[c]);
			target(what, a.med / floor_med.med, "<=", 1.5);
			snprintf(what, sizeof(what), "%s: 1 GiB memory back / sync", cfg_name[c]);
			target(what, b.med / bs.med, "<=", 1.1);
		}
		for (i = 0; i < nr_lat_rows; i++) {
			struct lat_row *r = &lat_rows[i];
			struct dist a = dist_of(r->lat[c], r->n);

			if (r->voluntary || r->kind > K_THP || r->mb < 64)
				continue;
			snprintf(what, sizeof(what), "%s: p99 %s %lu MiB / floor median",
				 cfg_name[c], kind_name[r->kind], r->mb);
			target(what, a.p99 / floor_med.med, "<=", 2.0);
		}
		for (i = 0; i < 2 && RUNS(S_SPAWN); i++) {
			struct ci r = ci_of(spawn_ratio[i][c - REAPER], spawn_n);

			snprintf(what, sizeof(what), "%s: %s rate / unloaded (CI low end)",
				 cfg_name[c], i ? "fork+_exit" : "fork+exec");
			target(what, r.lo, ">=", 0.99);
		}
		if (have_par8) {
			snprintf(what, sizeof(what), "%s: M=8 all reaped / sync", cfg_name[c]);
			target(what, par_tail[c].med / par_tail[SYNC].med, "<=", 0.02);
			snprintf(what, sizeof(what), "%s: M=8 memory back / sync", cfg_name[c]);
			target(what, par_back[c].med / par_back[SYNC].med, "<=", 1.1);
		}
		if (!RUNS(S_CPU))
			continue;
		snprintf(what, sizeof(what), "%s: CPU per teardown / sync, drained", cfg_name[c]);
		target(what, cpu_ratio(cpu_d, c), "<=", 1.05);
		if (c == REAPER) {
			snprintf(what, sizeof(what), "%s: CPU per teardown / sync, back-to-back",
				 cfg_name[c]);
			target(what, cpu_ratio(cpu_o, c), "<=", 1.05);
		}
	}
	fprintf(json, "]");
}
