// SPDX-License-Identifier: GPL-2.0
/*
 * Flipping enabled under concurrent exits loses nothing. In the self run
 * the flipper also flips mode: a record stashed in self mode must still be
 * consumed by its task after a switch to reaper, and the other way round.
 */
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "amt_guest.h"

#define ROUNDS 12

/* Either mode may have taken any exit while the flipper runs. */
static long torn_down(void)
{
	return amt_stat("reaped");
}

static void run(void)
{
	long q0 = amt_stat("queued"), r0 = torn_down();
	long rp0 = amt_stat("reaped_by_reaper"), sd0 = amt_stat("reaped_by_self");
	bool flip_mode = !strcmp(amt_mode, "self");
	long s0 = amt_stat("sync");
	pid_t flipper;
	int i;

	flipper = fork();
	if (!flipper) {
		for (i = 0;; i++) {
			amt_param_set("enabled", "0");
			if (flip_mode)
				amt_param_set("mode", i & 1 ? "self" : "reaper");
			usleep(500);
			amt_param_set("enabled", "1");
			usleep(500);
		}
	}
	for (i = 0; i < ROUNDS; i++) {
		pid_t a = amt_hog(80, AMT_HOG_ANON);
		pid_t b = amt_hog(80, AMT_HOG_ANON);

		kill(a, SIGKILL);
		kill(b, SIGKILL);
		amt_reap(a);
		amt_reap(b);
	}
	kill(flipper, SIGKILL);
	waitpid(flipper, NULL, 0);
	amt_assert(!amt_param_set("enabled", "1"), "cannot enable");
	amt_assert(!amt_drain(60000), "drain failed");
	{
		long q = amt_stat("queued") - q0, r = torn_down() - r0;
		long s = amt_stat("sync") - s0;

		amt_note("%d exits: queued %ld (reaper %ld, self %ld), inline %ld",
			 2 * ROUNDS, q, amt_stat("reaped_by_reaper") - rp0,
			 amt_stat("reaped_by_self") - sd0, s);
		amt_assert_eq(q, r, "queued vs reaped");
		amt_assert_ge(q + s, 2 * ROUNDS, "exits lost: queued + inline");
		amt_assert_eq(amt_stat("pending_mms"), 0, "queue not empty");
	}
}

AMT_TEST_BOTH("toggle", "rapid enable/disable flips under concurrent large exits lose and leak nothing", 300, run)
