// SPDX-License-Identifier: GPL-2.0
/* The drain barrier returns only when everything queued before is freed. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "amt_guest.h"

#define N 4

static void run(void)
{
	long q0 = amt_stat("queued"), r0 = amt_torn_down();
	pid_t pids[N];
	int i, err;

	for (i = 0; i < N; i++)
		pids[i] = amt_hog(128, AMT_HOG_ANON);
	amt_kill_reap(pids, N);
	amt_assert_eq(amt_stat("queued") - q0, N, "queued");
	err = amt_drain(60000);
	amt_assert(!err, "drain: %s", strerror(err));
	amt_assert_eq(amt_torn_down() - r0, N,
		      "reaped when the drain returned");
	amt_assert_eq(amt_stat("pending_mms"), 0,
		      "mms pending after the drain");
	amt_assert_eq(amt_stat("pending_pages"), 0,
		      "pages pending after the drain");
	/* An empty queue drains at once; bad timeouts are refused. */
	amt_assert(!amt_drain(1000), "empty drain failed");
	amt_assert_eq(amt_write_file(AMT_DRAIN, "0"), EINVAL,
		      "drain 0 accepted");
	amt_assert_eq(amt_write_file(AMT_DRAIN, "x"), EINVAL,
		      "drain x accepted");
	/* Parameters stay usable while a drain waits (no param mutex held). */
	{
		pid_t d, hog = amt_hog(256, AMT_HOG_ANON);
		uint64_t t0;

		kill(hog, SIGKILL);
		amt_reap(hog);
		d = fork();
		if (!d)
			_exit(amt_drain(60000));
		t0 = amt_now_ns();
		amt_assert(!amt_param_set("enabled", "1"), "enabled write failed");
		amt_note("parameter write during a drain took %.1f ms",
			 (amt_now_ns() - t0) / 1e6);
		waitpid(d, NULL, 0);
	}
}

AMT_TEST_BOTH("drain", "writing /sys/kernel/async_mm_teardown/drain returns only after every earlier teardown is done", 180, run)
