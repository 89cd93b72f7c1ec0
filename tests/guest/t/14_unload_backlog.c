// SPDX-License-Identifier: GPL-2.0
/* Unloading with a backlog queued tears it all down and leaks nothing. */
#include <errno.h>
#include <string.h>
#include "amt_guest.h"

#define N 4

static void run(void)
{
	long q0 = amt_stat("queued"), dq;
	pid_t pids[N];
	int i, round, err;

	for (round = 0; round < 3; round++) {
		for (i = 0; i < N; i++)
			pids[i] = amt_hog(160, AMT_HOG_ANON);
		amt_kill_reap(pids, N);
		dq = amt_stat("queued") - q0;
		if (dq != N)
			amt_stats_note();
		amt_assert_eq(dq, N, "round %d: queued", round);
		err = amt_unload();
		amt_assert(!err, "unload with backlog: %s", strerror(err));
		err = amt_load(NULL);
		amt_assert(!err, "reload: %s", strerror(err));
		q0 = amt_stat("queued");
		amt_assert_eq(q0, 0, "queued after a fresh load");
	}
}

AMT_TEST("unload_backlog", "rmmod with teardowns queued succeeds, frees them all and leaks no memory", 240, run)
