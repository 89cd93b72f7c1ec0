// SPDX-License-Identifier: GPL-2.0
/* A large process that calls _exit() itself is deferred too. */
#include <sys/wait.h>
#include "amt_guest.h"

static void run(void)
{
	long q0 = amt_stat("queued");
	pid_t pid;
	int st;

	amt_trace_start();
	pid = amt_hog(256, AMT_HOG_ANON);
	amt_hog_exit(pid);
	st = amt_reap(pid);
	amt_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		   "hog did not exit voluntarily (status %#x)", st);
	amt_assert(!amt_drain(60000), "drain failed");
	amt_assert_eq(amt_trace_count("mm_reaper_queue", pid), 1,
		      "voluntary exit of pid %d not queued", pid);
	amt_assert_eq(amt_stat("queued") - q0, 1, "queued");
}

AMT_TEST_BOTH("voluntary_exit", "a large process calling _exit() is deferred like a killed one", 120, run)
