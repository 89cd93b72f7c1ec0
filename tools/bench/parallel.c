// SPDX-License-Identifier: GPL-2.0
/*
 * exit_latency section 2, parallel: M children killed together, until all
 * are reaped and until their memory is back. At M = 8 each mode also runs
 * with parallel=0 (every teardown on one CPU, as before the zap helpers),
 * interleaved with the rest: what the helpers do to many exits at once.
 */
#include "bench.h"

/* the variants of a round: NR_CFG configurations, then the two one-CPU */
#define NR_PAR_VAR (NR_CFG + 2)

static enum cfg var_cfg(int v)
{
	return v < NR_CFG ? v : v == NR_CFG ? REAPER : SELF;
}

void bench_parallel(struct results *res)
{
	static const int ms[NR_PAR] = { 4, 8, 16 };
	struct par_result *p = &res->parallel;
	const unsigned long mb = 256;
	uint64_t tail[NR_PAR_VAR][MAX_SAMPLES], back[NR_PAR_VAR][MAX_SAMPLES];
	int i, c, v, j, nv, round, n = quick ? 2 : (rounds + 1) / 2 + 1;

	p->mb = mb;
	p->n = n;
	for (i = 0; i < NR_PAR; i++) {
		struct par_row *w = &p->rows[p->nr++];
		int m = ms[i];

		w->m = m;
		if (m * mb > mem_total_mb * 6 / 10 || m > 32) {
			w->skipped = true;
			continue;
		}
		fprintf(stderr, "# parallel: M = %d\n", m);
		w->have_one = m == 8;
		nv = w->have_one ? NR_PAR_VAR : NR_CFG;
		for (round = 0; round < n; round++)
			for (j = 0; j < nv; j++) {
				pid_t pids[32];
				long base;
				uint64_t t0, cpu0 = 0;
				int k;

				v = (round + j) % nv;
				c = var_cfg(v);
				set_cfg(c);
				amt_param_set("parallel", v < NR_CFG ? "1" : "0");
				base = amt_mem_back_kb();
				for (k = 0; k < m; k++)
					pids[k] = amt_hog(mb, AMT_HOG_ANON);
				cpu0 = reaper_cpu_ns() + helper_cpu_ns();
				t0 = amt_now_ns();
				amt_kill_reap(pids, m);
				tail[v][round] = amt_now_ns() - t0;
				back[v][round] = wait_mem_back(base, t0);
				settle();
				if (v == REAPER) {
					p->gib += m * mb / 1024.0;
					p->cpu_s += (reaper_cpu_ns() +
						     helper_cpu_ns() - cpu0) / 1e9;
				}
			}
		for (c = 0; c < NR_CFG; c++) {
			w->tail[c] = dist_of(tail[c], n);
			w->back[c] = dist_of(back[c], n);
		}
		for (c = 0; w->have_one && c < 2; c++)
			w->back_one[c] = dist_of(back[NR_CFG + c], n);
	}
	amt_param_set("parallel", "1");
}
