// SPDX-License-Identifier: GPL-2.0
/* Below thresh_pages the exit stays inline; above it, it is queued. */
#include "amt_guest.h"

static void run(void)
{
	long q0 = amt_stat("queued"), s0 = amt_stat("sync_small");
	pid_t small, large;

	amt_trace_start();
	small = amt_hog(16, AMT_HOG_ANON);
	amt_kill_wait(small);
	amt_assert_eq(amt_trace_count("mm_reaper_queue", small), 0,
		      "16 MiB process was queued");
	amt_assert_eq(amt_stat("queued"), q0, "queued moved for a small exit");
	amt_assert_gt(amt_stat("sync_small"), s0,
		      "sync_small did not count it");

	/* Positive control: the same hog, above the threshold. */
	large = amt_hog(128, AMT_HOG_ANON);
	amt_kill_wait(large);
	amt_assert(!amt_drain(60000), "drain failed");
	amt_assert_eq(amt_trace_count("mm_reaper_queue", large), 1,
		      "128 MiB process was not queued");

	/* Lower the threshold: the small one is now eligible. */
	amt_assert(!amt_param_set("thresh_pages", "1024"), "cannot set thresh");
	small = amt_hog(16, AMT_HOG_ANON);
	amt_kill_wait(small);
	amt_assert(!amt_drain(60000), "drain failed");
	amt_assert_eq(amt_trace_count("mm_reaper_queue", small), 1,
		      "16 MiB process not queued with thresh_pages=1024");
}

AMT_TEST_BOTH("below_threshold", "exits below thresh_pages stay inline and above it are queued (both controls)", 120, run)
