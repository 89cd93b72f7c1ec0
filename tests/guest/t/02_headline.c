// SPDX-License-Identifier: GPL-2.0
/* A large killed process is queued, reaped, and its waitpid() is fast. */
#include "amt_guest.h"

static void run(void)
{
	uint64_t sync_ns[3], async_ns[3];
	long q0 = amt_stat("queued"), r0 = amt_torn_down();
	int i;

	amt_trace_start();
	for (i = 0; i < 3; i++) {
		pid_t pid;

		amt_assert(!amt_param_set("enabled", "0"), "cannot disable");
		pid = amt_hog(512, AMT_HOG_ANON);
		sync_ns[i] = amt_kill_wait(pid);
		amt_assert_eq(amt_trace_count("mm_reaper_queue", pid), 0,
			      "disabled, yet pid %d was queued", pid);

		amt_assert(!amt_param_set("enabled", "1"), "cannot enable");
		pid = amt_hog(512, AMT_HOG_ANON);
		async_ns[i] = amt_kill_wait(pid);
		amt_assert(!amt_drain(60000), "drain failed");
		amt_assert_eq(amt_trace_count("mm_reaper_queue", pid), 1,
			      "pid %d not queued exactly once", pid);
		amt_assert_eq(amt_trace_count("mm_reaper_reap", pid), 1,
			      "pid %d not reaped exactly once", pid);
	}
	amt_assert_eq(amt_stat("queued") - q0, 3, "queued");
	amt_assert_eq(amt_torn_down() - r0, 3, "reaped");
	amt_median(sync_ns, 3);
	amt_median(async_ns, 3);
	amt_note("512 MiB kill->waitpid median: inline %.1f ms, deferred %.1f ms",
		 sync_ns[1] / 1e6, async_ns[1] / 1e6);
	/* A loose bound: the benchmarks measure; this only proves a win. */
	amt_assert_lt(async_ns[1] * 3, sync_ns[1],
		      "deferred median (ns) not 3x below inline");
}

AMT_TEST_BOTH("headline", "a large killed process is queued once, reaped once, and waitpid() returns well before an inline teardown would", 300, run)
