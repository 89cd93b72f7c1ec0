// SPDX-License-Identifier: GPL-2.0
/*
 * A drain waits for what was deferred before it started, not for a quiet
 * moment: under a continuous stream of large exits it still returns.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "amt_guest.h"

#define SPAWNERS 2

static pid_t spawner(void)
{
	pid_t pid = fork();

	if (pid < 0)
		amt_fail("fork: %s", strerror(errno));
	if (!pid) {
		for (;;) {
			pid_t hog = amt_hog(96, AMT_HOG_ANON);

			kill(hog, SIGKILL);
			amt_reap(hog);
		}
	}
	return pid;
}

static void run(void)
{
	long q0 = amt_stat("queued"), t0s = amt_stat("drain_timeouts"), q1, q2;
	pid_t s[SPAWNERS];
	int i, err;

	for (i = 0; i < SPAWNERS; i++)
		s[i] = spawner();
	/* the stream is flowing: exits are being deferred (slow kernels too) */
	for (i = 0; i < 600 && amt_stat("queued") - q0 < 2; i++)
		usleep(100000);
	q1 = amt_stat("queued");
	for (i = 0; i < 3; i++) {
		uint64_t t0 = amt_now_ns();

		err = amt_drain(30000);
		amt_note("drain %d under the stream: %.0f ms, %s", i,
			 (amt_now_ns() - t0) / 1e6, err ? strerror(err) : "ok");
		amt_assert(!err, "drain %d under a stream of exits: %s", i,
			   strerror(err));
		usleep(300000 * amt_teardown_slow());
	}
	/* and it went on flowing while the drains ran */
	for (i = 0; i < 600 && amt_stat("queued") - q1 < 4; i++)
		usleep(100000);
	q2 = amt_stat("queued");
	for (i = 0; i < SPAWNERS; i++) {
		kill(s[i], SIGKILL);
		waitpid(s[i], NULL, 0);
	}
	amt_note("%ld exits deferred before the drains, %ld from the first drain on",
		 q1 - q0, q2 - q1);
	amt_assert_ge(q1 - q0, 2,
		      "no stream: exits deferred before the drains");
	amt_assert_ge(q2 - q1, 4,
		      "no stream: exits deferred from the first drain on");
	amt_assert_eq(amt_stat("drain_timeouts"), t0s, "a drain timed out");
}

AMT_TEST_BOTH("drain_stream", "a drain returns once everything deferred before it has ended, under a continuous stream of large exits", 180, run)
