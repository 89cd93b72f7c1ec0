// SPDX-License-Identifier: GPL-2.0
/* A pm_test freezer cycle completes with a backlog queued. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include "amt_guest.h"

#define N 3

static void run(void)
{
	long q0 = amt_stat("queued");
	pid_t pids[N], pid;
	int i, err;

	if (access("/sys/power/pm_test", W_OK))
		amt_skip("no /sys/power/pm_test (CONFIG_PM_DEBUG off)");
	amt_assert(!amt_write_file("/sys/power/pm_test", "freezer"),
		   "cannot select pm_test freezer");
	for (i = 0; i < N; i++)
		pids[i] = amt_hog(192, AMT_HOG_ANON);
	for (i = 0; i < N; i++)
		kill(pids[i], SIGKILL);
	for (i = 0; i < N; i++)
		amt_reap(pids[i]);
	amt_note("backlog before freeze: %ld mms", amt_stat("pending_mms"));
	err = amt_write_file("/sys/power/state", "freeze");
	amt_write_file("/sys/power/pm_test", "none");
	amt_assert(!err, "freezer cycle failed: %s", strerror(err));
	amt_assert(!amt_drain(60000), "drain after thaw failed");
	amt_assert(amt_stat("queued") - q0 == N, "backlog not queued");
	/* The reaper works after the thaw. */
	amt_trace_start();
	pid = amt_hog(128, AMT_HOG_ANON);
	amt_kill_wait(pid);
	amt_assert(!amt_drain(60000), "drain failed");
	amt_assert(amt_trace_count("mm_reaper_reap", pid) == 1,
		   "no reap after thaw");
}

AMT_TEST("freezer", "a pm_test freezer cycle completes with a backlog queued and the reaper works after thaw", 180, run)
