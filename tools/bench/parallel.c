// SPDX-License-Identifier: GPL-2.0
/*
 * exit_latency section 2, parallel: M children killed together, until all
 * are reaped and until their memory is back.
 */
#include "bench.h"

double drain_gib, drain_cpu_s;	/* reaper-mode totals for 5. */
struct dist par_tail[NR_CFG], par_back[NR_CFG];	/* M = 8 */
bool have_par8;

void bench_parallel(void)
{
	static const int ms[] = { 4, 8, 16 };
	const unsigned long mb = 256;
	uint64_t tail[NR_CFG][MAX_SAMPLES], back[NR_CFG][MAX_SAMPLES];
	int i, c, j, round, n = quick ? 2 : (rounds + 1) / 2 + 1;

	printf("\n2. M children of %lu MiB killed together, ms: all reaped; memory back (median of %d)\n",
	       mb, n);
	printf("%-4s | %-19s | %-19s | %-19s | %-19s\n", "M", "sync",
	       "reaper", "self", "reaper/sync, self/sync");
	json_array("parallel");
	for (i = 0; i < 3; i++) {
		int m = ms[i];
		struct dist t[NR_CFG], b[NR_CFG];

		if (m * mb > mem_total_mb * 6 / 10 || m > 32) {
			printf("%-4d | skipped: %lu MiB does not fit this guest\n",
			       m, m * mb);
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
				cpu0 = reaper_cpu_ns();
				t0 = amt_now_ns();
				for (k = 0; k < m; k++)
					kill(pids[k], SIGKILL);
				for (k = 0; k < m; k++)
					amt_reap(pids[k]);
				tail[c][round] = amt_now_ns() - t0;
				back[c][round] = wait_mem_back(base, t0);
				settle();
				if (c == REAPER) {
					drain_gib += m * mb / 1024.0;
					drain_cpu_s += (reaper_cpu_ns() - cpu0) / 1e9;
				}
			}
		for (c = 0; c < NR_CFG; c++) {
			t[c] = dist_of(tail[c], n);
			b[c] = dist_of(back[c], n);
			if (m == 8) {
				par_tail[c] = t[c];
				par_back[c] = b[c];
				have_par8 = true;
			}
		}
		printf("%-4d | %7.1f; %7.1f   | %7.1f; %7.1f   | %7.1f; %7.1f   | back %.2fx, %.2fx; tail 1/%.0f, 1/%.0f\n",
		       m, t[SYNC].med, b[SYNC].med, t[REAPER].med,
		       b[REAPER].med, t[SELF].med, b[SELF].med,
		       b[REAPER].med / b[SYNC].med, b[SELF].med / b[SYNC].med,
		       t[SYNC].med / t[REAPER].med, t[SYNC].med / t[SELF].med);
		json_item();
		fprintf(json, "\"m\": %d, \"size_mb\": %lu", m, mb);
		for (c = 0; c < NR_CFG; c++) {
			fprintf(json, ",\n   \"%s\": {", cfg_name[c]);
			json_dist("all_reaped", &t[c]);
			fprintf(json, ", ");
			json_dist("memory_back", &b[c]);
			fprintf(json, "}");
		}
		fprintf(json, "}");
	}
	fprintf(json, "]");
}
