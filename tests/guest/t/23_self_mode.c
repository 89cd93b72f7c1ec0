// SPDX-License-Identifier: GPL-2.0
/* mode=self: waitpid() is fast and the dying task tears its own mm down. */
#include "amt_guest.h"

static void run(void)
{
	uint64_t sync_ns[3], self_ns[3];
	long d0 = amt_stat("reaped_by_self"), r0 = amt_stat("reaped_by_reaper");
	int i;

	if (amt_param_set("mode", "self"))
		amt_skip("mode=self unavailable on this kernel");
	amt_trace_start();
	for (i = 0; i < 3; i++) {
		pid_t pid;

		amt_assert(!amt_param_set("enabled", "0"), "cannot disable");
		pid = amt_hog(512, AMT_HOG_ANON);
		sync_ns[i] = amt_kill_wait(pid);
		amt_assert(!amt_param_set("enabled", "1"), "cannot enable");
		pid = amt_hog(512, AMT_HOG_ANON);
		self_ns[i] = amt_kill_wait(pid);
		amt_assert(!amt_drain(60000), "drain failed");
		amt_assert_eq(amt_trace_count("mm_reaper_queue", pid), 1,
			      "pid %d not deferred exactly once", pid);
		amt_assert_eq(amt_trace_count("mm_reaper_reap", pid), 1,
			      "pid %d not torn down exactly once", pid);
	}
	amt_assert_eq(amt_stat("reaped_by_self") - d0, 3, "reaped_by_self");
	amt_assert_eq(amt_stat("reaped_by_reaper"), r0,
		      "the reaper tore down a self-mode mm");
	amt_median(sync_ns, 3);
	amt_median(self_ns, 3);
	amt_note("512 MiB kill->waitpid median: inline %.1f ms, self %.1f ms",
		 sync_ns[1] / 1e6, self_ns[1] / 1e6);
	amt_assert_lt(self_ns[1] * 3, sync_ns[1],
		      "self median (ns) not 3x below inline");
}

AMT_TEST("self_mode", "with mode=self a large killed process is torn down by itself, after waitpid() returned, well before an inline teardown would", 300, run)
