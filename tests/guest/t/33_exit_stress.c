// SPDX-License-Identifier: GPL-2.0
/*
 * Every exit_mm() final drop is recognised, however the dying task is
 * scheduled: 200 exits, eight killed together at a time, on both vCPUs
 * against two CPU burners (preemption inside exit_mm() is then likely),
 * are all deferred, each recognised by exit_mm()'s call site (none
 * counted as a late drop). The threshold is lowered to 2 MiB so that the
 * children are quick to make: recognition does not depend on size. Also run in make check's preempt=full boot.
 */
#include <signal.h>
#include "../lib/amt_test.h"

#define ROUNDS 25
#define K 8
#define MB 4

static void run(void)
{
	long q0 = amt_stat("queued"), n0 = amt_stat("exit_not_last");
	long u0 = amt_stat("exit_late"), p0 = amt_stat("exit_preempted");
	long s0 = amt_stat("sync");
	pid_t b[AMT_BURNERS], pids[K];
	long dq, dn, du, ds;
	int r, i;

	amt_assert(!amt_param_set("thresh_pages", "512"), "cannot set threshold");
	amt_burners_start(b);
	for (r = 0; r < ROUNDS; r++) {
		for (i = 0; i < K; i++)
			pids[i] = amt_hog(MB, AMT_HOG_ANON);
		for (i = 0; i < K; i++)
			kill(pids[i], SIGKILL);
		for (i = 0; i < K; i++)
			amt_reap(pids[i]);
	}
	amt_burners_stop(b);
	amt_assert(!amt_drain(60000), "drain failed");
	dq = amt_stat("queued") - q0;
	dn = amt_stat("exit_not_last") - n0;
	du = amt_stat("exit_late") - u0;
	ds = amt_stat("sync") - s0;
	amt_note("%d exits: queued %ld, exit_not_last %ld, inline (any exit) %ld, late (not from the call site) %ld, recognised by call site after a preemption %ld",
		 ROUNDS * K, dq, dn, ds, du, amt_stat("exit_preempted") - p0);
	if (dq + dn != ROUNDS * K || du)
		amt_stats_note();
	/* a temporary holder (MGLRU's walk on 7.x) may drop the last one */
	/* (inline: other exits, the burners' among them, are small) */
	amt_assert(dq + dn == ROUNDS * K && du == 0,
		   "of %d exits: queued %ld, exit_not_last %ld, late %ld; want every one deferred from the call site",
		   ROUNDS * K, dq, dn, du);
	amt_assert(amt_stat("exit_site_known") == 1,
		   "exit_mm()'s call site was not learned");
}

AMT_TEST_BOTH("exit_stress",
	      "200 exits killed eight at a time against CPU burners are all deferred, each recognised by exit_mm()'s call site",
	      300, run)
