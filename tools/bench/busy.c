// SPDX-License-Identifier: GPL-2.0
/*
 * exit_latency section 8, busy: 16 children of 96 MiB killed together
 * while a CPU burner runs on every CPU (at nice 0, then at nice -5): the
 * time until their memory is back. No drain inside the timing: a drain
 * hurries the teardowns (amt_hurry()), which is what this section
 * must not do; memory back is polled every 2 ms.
 */
#include "bench.h"

#define BUSY_LIMIT_S 60

static uint64_t busy_round(enum cfg c, int nice)
{
	pid_t pids[BUSY_N], b[AMT_BURNERS];
	uint64_t t0, ns = 0;
	long base;
	int k;

	set_cfg(c);
	base = amt_mem_back_kb();
	for (k = 0; k < BUSY_N; k++)
		pids[k] = amt_hog(BUSY_MB, AMT_HOG_ANON);
	amt_burners_start(b);
	amt_burners_nice(b, nice);
	t0 = amt_now_ns();
	amt_kill_reap(pids, BUSY_N);
	while (amt_now_ns() - t0 < BUSY_LIMIT_S * 1000000000ULL) {
		if (amt_mem_back_kb() >= base - MEM_TOL_KB * 3) {
			ns = amt_now_ns() - t0;
			break;
		}
		usleep(2000);
	}
	amt_burners_stop(b);
	/* 0: not back within BUSY_LIMIT_S, counted as that */
	return ns ? ns : BUSY_LIMIT_S * 1000000000ULL;
}

void bench_busy(struct results *res)
{
	static const int nices[NR_BUSY] = { 0, -5 };
	struct busy_result *r = &res->busy;
	uint64_t back[NR_CFG][MAX_SAMPLES];
	int i, j, c, round, n = quick ? 2 : (rounds + 1) / 2 + 1;

	r->n = n;
	for (c = 0; c < NR_CFG; c++)
		r->have[c] = cfg_available(c);
	for (i = 0; i < NR_BUSY; i++) {
		fprintf(stderr, "# busy: burners at nice %d\n", nices[i]);
		r->nice[i] = nices[i];
		for (round = 0; round < n; round++)
			for (j = 0; j < NR_CFG; j++) {
				c = (round + j) % NR_CFG;
				if (r->have[c])
					back[c][round] = busy_round(c, nices[i]);
			}
		for (c = 0; c < NR_CFG; c++)
			if (r->have[c])
				r->back[i][c] = dist_of(back[c], n);
	}
	settle();
}
