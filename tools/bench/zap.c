// SPDX-License-Identifier: GPL-2.0
/*
 * exit_latency section 10, zap: one child of N MiB killed, the second CPU
 * idle: the time until its memory is back with the teardown on one CPU
 * (parallel=0) and with helpers on idle CPUs (parallel=1), in each mode,
 * next to inline, and its kill->waitpid(); the sizes around
 * AMT_ZAP_MIN_PAGES say where the helpers start to pay. A drain waits for
 * the teardown (it sleeps: a poller would take the helper's idle CPU).
 * A size runs only where the guest has room for it and the pending cap
 * (3/4 of RAM) takes it: 8 GiB needs a 12 GiB guest (AMT_BENCH_MEM=12G).
 */
#include "bench.h"

static const unsigned long zap_mb[NR_ZAP_SIZES] = {
	64, 128, 256, 1024, 2048, 8192
};

/*
 * Room for one child of @mb beside the guest's own 1 GiB, and under the
 * pending cap with 64 MiB to spare (its stack and libraries count too)
 */
static bool zap_fits(unsigned long mb)
{
	return mb + 1024 <= (unsigned long)amt_mem_back_kb() / 1024 &&
	       mb + 64 <= mem_total_mb * 3 / 4;
}

struct zap_sample {
	uint64_t back, reap;		/* memory back, kill->waitpid() */
	uint64_t teardown, zapped;	/* deferred: the module's events */
};

static struct zap_sample zap_round(int v, unsigned long mb,
				   long *helper_chunks)
{
	struct zap_sample s = { 0 };
	long h0, base;
	uint64_t t0;
	pid_t pid;

	set_cfg(v == ZV_SYNC ? SYNC : v <= ZV_REAPER_PAR ? REAPER : SELF);
	amt_param_set("parallel",
		      v == ZV_REAPER_PAR || v == ZV_SELF_PAR ? "1" : "0");
	h0 = amt_stat("zap_helper_chunks");
	base = amt_mem_back_kb();
	pid = amt_hog(mb, AMT_HOG_ANON);
	amt_trace_start();	/* (an empty buffer) */
	t0 = amt_now_ns();
	kill(pid, SIGKILL);
	amt_reap(pid);
	s.reap = amt_now_ns() - t0;
	s.back = amt_mem_back_ns(base, MEM_TOL_KB, t0, 120);
	/* the drain that ended it waited for mm_reaper_reap */
	s.teardown = amt_trace_value("mm_reaper_reap", pid, "ns");
	s.zapped = amt_trace_value("mm_reaper_zap", pid, "ns");
	*helper_chunks += amt_stat("zap_helper_chunks") - h0;
	amt_param_set("parallel", "1");
	return s;
}

void bench_zap(struct results *res)
{
	struct zap_result *r = &res->zap;
	struct zap_sample smp[NR_ZAP_VAR][MAX_SAMPLES];
	uint64_t x[5][MAX_SAMPLES];
	int i, j, k, v, round, n = quick ? 2 : rounds;

	r->n = n;
	r->have_self = cfg_available(SELF);
	for (i = 0; i < NR_ZAP_SIZES; i++) {
		r->mb[i] = zap_mb[i];
		r->helper_chunks[i] = 0;
		r->ran[i] = zap_fits(zap_mb[i]);
		if (!r->ran[i])
			continue;
		fprintf(stderr, "# zap: %lu MiB\n", zap_mb[i]);
		for (round = 0; round < n; round++)
			for (j = 0; j < NR_ZAP_VAR; j++) {
				v = (round + j) % NR_ZAP_VAR;
				if (v >= ZV_SELF_ONE && !r->have_self)
					continue;
				smp[v][round] = zap_round(v, zap_mb[i],
							  &r->helper_chunks[i]);
			}
		for (v = 0; v < NR_ZAP_VAR; v++) {
			if (v >= ZV_SELF_ONE && !r->have_self)
				continue;
			for (round = 0, k = 0; round < n; round++) {
				struct zap_sample *s = &smp[v][round];

				x[0][round] = s->back;
				x[1][round] = s->reap;
				x[2][round] = s->teardown;
				/* only the rounds that zapped (helpers came) */
				if (!s->zapped || s->zapped > s->teardown)
					continue;
				x[3][k] = s->zapped;
				x[4][k++] = s->teardown - s->zapped;
			}
			r->back[i][v] = dist_of(x[0], n);
			r->reap[i][v] = dist_of(x[1], n);
			r->teardown[i][v] = dist_of(x[2], n);
			r->zapped[i][v] = dist_of(x[3], k);
			r->rest[i][v] = dist_of(x[4], k);
		}
	}
	/* as amt_trace_start() found them: the --trace pass sets its own */
	amt_trace_stop();
	amt_write_file(AMT_TRACE "events/async_mm_teardown/enable", "0");
	amt_write_file(AMT_TRACE "options/record-cmd", "1");
	settle();
}
