// SPDX-License-Identifier: GPL-2.0
/*
 * exit_latency section 2, parallel: M children killed together, until all
 * are reaped and until their memory is back.
 */
#include "bench.h"

void bench_parallel(struct results *res)
{
	static const int ms[NR_PAR] = { 4, 8, 16 };
	struct par_result *p = &res->parallel;
	const unsigned long mb = 256;
	uint64_t tail[NR_CFG][MAX_SAMPLES], back[NR_CFG][MAX_SAMPLES];
	int i, c, j, round, n = quick ? 2 : (rounds + 1) / 2 + 1;

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
		for (round = 0; round < n; round++)
			for (j = 0; j < NR_CFG; j++) {
				pid_t pids[32];
				long base;
				uint64_t t0, cpu0 = 0;
				int k;

				c = (round + j) % NR_CFG;
				set_cfg(c);
				base = amt_mem_back_kb();
				for (k = 0; k < m; k++)
					pids[k] = amt_hog(mb, AMT_HOG_ANON);
				cpu0 = reaper_cpu_ns() + helper_cpu_ns();
				t0 = amt_now_ns();
				for (k = 0; k < m; k++)
					kill(pids[k], SIGKILL);
				for (k = 0; k < m; k++)
					amt_reap(pids[k]);
				tail[c][round] = amt_now_ns() - t0;
				back[c][round] = wait_mem_back(base, t0);
				settle();
				if (c == REAPER) {
					p->gib += m * mb / 1024.0;
					p->cpu_s += (reaper_cpu_ns() +
						     helper_cpu_ns() - cpu0) / 1e9;
				}
			}
		for (c = 0; c < NR_CFG; c++) {
			w->tail[c] = dist_of(tail[c], n);
			w->back[c] = dist_of(back[c], n);
		}
	}
}
