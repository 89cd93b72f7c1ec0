// SPDX-License-Identifier: GPL-2.0
/* The global OOM killer with a backlog queued: the queue goes first. */
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
#include "amt_guest.h"

#define N 3

static void run(void)
{
	long total_mb = amt_mem_total_kb() / 1024, d0, f0, k0, s0;
	pid_t pids[N], spin[AMT_BURNERS], eater;
	char v[32];
	int i, st;

	snprintf(v, sizeof(v), "%ld", amt_mem_total_kb() / 4 * 3 / 4);
	amt_assert(!amt_param_set("max_pending_pages", v), "cannot set cap");
	amt_write_file("/proc/self/oom_score_adj", "-1000");
	for (i = 0; i < N; i++)
		pids[i] = amt_hog(total_mb / 6, AMT_HOG_ANON);
	/* Starve the nice-19 reaper so the backlog is still there. */
	amt_burners_start(spin);
	for (i = 0; i < N; i++)
		kill(pids[i], SIGKILL);
	for (i = 0; i < N; i++)
		amt_reap(pids[i]);
	amt_note("backlog: %ld mms, %ld pages", amt_stat("pending_mms"),
		 amt_stat("pending_pages"));
	if (amt_stat("pending_mms") == 0)
		amt_skip("the reaper drained before the OOM could start");
	d0 = amt_stat("oom_drains");
	s0 = amt_stat("shrinker_scans");
	f0 = amt_stat("oom_freed_pages");
	/* More than RAM even after the drain: the OOM killer must kill. */
	k0 = amt_vmstat("oom_kill");
	amt_write_file("/proc/sys/vm/overcommit_memory", "1");
	amt_hog_oom_score_adj = "1000";
	eater = amt_hog_try(total_mb + 256, AMT_HOG_ANON);
	amt_hog_oom_score_adj = NULL;
	amt_write_file("/proc/sys/vm/overcommit_memory", "0");
	if (eater)
		st = amt_reap(eater), amt_fail("the eater survived (status %#x)", st);
	amt_assert(amt_vmstat("oom_kill") > k0, "the OOM killer did not fire");
	amt_burners_stop(spin);
	amt_assert(!amt_drain(60000), "drain failed");
	amt_stats_note();
	/*
	 * Reclaim reaches the shrinker before the OOM killer: its boost often
	 * empties the queue first. Either way the queue must have been served.
	 */
	amt_note("served by: shrinker scans +%ld, OOM drains +%ld (%ld pages)",
		 amt_stat("shrinker_scans") - s0, amt_stat("oom_drains") - d0,
		 amt_stat("oom_freed_pages") - f0);
	amt_assert(amt_stat("oom_drains") > d0 || amt_stat("shrinker_scans") > s0,
		   "neither reclaim nor the OOM notifier asked for the backlog");
	amt_assert(amt_stat("oom_drains") == d0 || amt_stat("oom_freed_pages") > f0,
		   "the OOM notifier drained but reported nothing freed");
	amt_assert(amt_stat("pending_mms") == 0, "backlog left behind");
}

AMT_TEST("oom_backlog", "a global OOM with a backlog queued: reclaim or the OOM notifier drains the queue, the OOM killer still kills the real hog, no splat", 240, run)
