// SPDX-License-Identifier: GPL-2.0
/* Unloading while self-mode exits are in flight loses and leaks nothing. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include "amt_guest.h"

#define N 4

static void run(void)
{
	pid_t pids[N];
	int round, i, err;

	for (round = 0; round < 4; round++) {
		if (amt_param_set("mode", "self"))
			amt_skip("mode=self unavailable on this kernel");
		for (i = 0; i < N; i++)
			pids[i] = amt_hog(128, AMT_HOG_ANON);
		/* kill, then unload while they are still exiting */
		for (i = 0; i < N; i++)
			kill(pids[i], SIGKILL);
		err = amt_unload();
		amt_assert(!err, "round %d: unload: %s", round, strerror(err));
		for (i = 0; i < N; i++)
			amt_reap(pids[i]);
		err = amt_load(NULL);
		amt_assert(!err, "round %d: reload: %s", round, strerror(err));
	}
}

AMT_TEST("self_unload", "rmmod while self-mode exits are in flight succeeds, and every stashed mm is torn down (memory returns)", 240, run)
