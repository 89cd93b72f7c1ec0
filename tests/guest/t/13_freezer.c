// SPDX-License-Identifier: GPL-2.0
/*
 * A pm_test freezer cycle with deferred teardowns in flight: no teardown
 * runs while the system is frozen (docs/design.md, "Suspend"). A self
 * teardown's task is gone from the process lists the freezer walks once
 * its parent reaped it, so before the PM notifier it went on tearing down
 * through the frozen window; the reapers are freezable. Both modes: the
 * power:suspend_resume events bound the window (freeze_processes ends,
 * thaw_processes begins) and no mm_reaper_reap may fall inside it. Then
 * the reaper (or the task) works after the thaw.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "amt_guest.h"

#define N 2
#define MB 320

/* The trace's timestamp (ns) of a line, from "... <s.us>: <event>: ..." */
static uint64_t line_ts(const char *line)
{
	const char *br = strstr(line, "] ");
	char *end;
	double s;

	if (!br || !(br = strchr(br + 2, ' ')))
		return 0;
	s = strtod(br, &end);
	return end != br && *end == ':' ? (uint64_t)(s * 1e9) : 0;
}

static void run(void)
{
	uint64_t frozen = 0, thawed = 0, ts, inside = 0;
	long q0 = amt_stat("queued"), backlog;
	int i, err, reaps = 0;
	char line[512];
	pid_t pids[N], pid;
	FILE *f;

	if (access("/sys/power/pm_test", W_OK))
		amt_skip("no /sys/power/pm_test (CONFIG_PM_DEBUG off)");
	amt_assert(!amt_write_file("/sys/power/pm_test", "freezer"),
		   "cannot select pm_test freezer");
	for (i = 0; i < N; i++)
		pids[i] = amt_hog(MB, AMT_HOG_ANON);
	amt_trace_start();
	amt_assert(!amt_write_file(AMT_TRACE "events/power/suspend_resume/enable",
				   "1"), "cannot enable power:suspend_resume");
	amt_kill_reap(pids, N);
	backlog = amt_stat("pending_mms");
	err = amt_write_file("/sys/power/state", "freeze");
	amt_write_file("/sys/power/pm_test", "none");
	amt_trace_stop();
	amt_assert(!err, "freezer cycle failed: %s", strerror(err));
	amt_assert_gt(backlog, 0, "nothing was deferred at freeze time: the test cannot see what it tests");
	amt_assert(!amt_drain(60000), "drain after thaw failed");
	amt_assert_eq(amt_stat("queued") - q0, N, "queued");

	f = fopen(AMT_TRACE "trace", "r");
	amt_assert(f, "cannot read the trace");
	while (fgets(line, sizeof(line), f)) {
		ts = line_ts(line);
		if (strstr(line, "freeze_processes[0] end"))
			frozen = ts;
		else if (strstr(line, "thaw_processes[0] begin"))
			thawed = ts;
		else if (strstr(line, "mm_reaper_reap:")) {
			reaps++;
			if (frozen && !thawed)
				inside = ts;
		}
	}
	fclose(f);
	amt_note("%ld of %d deferred at the freeze; %d teardowns traced; frozen %.3f s to %.3f s",
		 backlog, N, reaps, frozen / 1e9, thawed / 1e9);
	amt_assert(frozen && thawed, "no freeze window in the trace");
	amt_assert(!inside, "a teardown ended at %.3f s, inside the frozen window (%.3f to %.3f s)",
		   inside / 1e9, frozen / 1e9, thawed / 1e9);

	/* Teardowns go on after the thaw. */
	amt_trace_start();
	pid = amt_hog(128, AMT_HOG_ANON);
	amt_kill_wait(pid);
	amt_assert(!amt_drain(60000), "drain failed");
	amt_assert_eq(amt_trace_count("mm_reaper_reap", pid), 1,
		      "no teardown after the thaw");
}

AMT_TEST_BOTH("freezer", "a pm_test freezer cycle with deferred teardowns in flight: none runs inside the frozen window, and teardowns go on after the thaw", 180, run)
