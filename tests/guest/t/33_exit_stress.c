// SPDX-License-Identifier: GPL-2.0
/*
 * Every exit_mm() final drop is recognised, however the dying task is
 * scheduled: 200 exits, eight killed together at a time, on both vCPUs
 * against two CPU burners (preemption inside exit_mm() is then likely),
 * are each recognised by exit_mm()'s call site (none counted as a late
 * drop) and deferred, or sent back by a safety gate (the budget, when the
 * reapers of the slow debug kernel fall behind). The threshold is lowered
 * to 2 MiB so that the children are quick to make: recognition does not
 * depend on size. Also run in make check's preempt=full boot.
 */
#include "amt_guest.h"

#define ROUNDS 25
#define K 8
#define MB 4

static void run(void)
{
	long q0 = amt_stat("queued"), n0 = amt_stat("exit_not_last");
	long u0 = amt_stat("exit_late"), p0 = amt_stat("exit_preempted");
	long s0 = amt_stat("sync"), j0 = amt_stat("rejected");
	pid_t b[AMT_BURNERS], pids[K];
	long dq, dn, du, ds, dj;
	int r, i;

	amt_assert(!amt_param_set("thresh_pages", "512"), "cannot set threshold");
	amt_burners_start(b);
	for (r = 0; r < ROUNDS; r++) {
		for (i = 0; i < K; i++)
			pids[i] = amt_hog(MB, AMT_HOG_ANON);
		amt_kill_reap(pids, K);
	}
	amt_burners_stop(b);
	amt_assert(!amt_drain(60000), "drain failed");
	dq = amt_stat("queued") - q0;
	dn = amt_stat("exit_not_last") - n0;
	du = amt_stat("exit_late") - u0;
	ds = amt_stat("sync") - s0;
	/*
	 * A safety gate may send some back (the budget, on the slow debug
	 * kernel, where the reapers fall behind): recognised all the same.
	 * The children are above the threshold; the burners, small, are not
	 * rejected but sync_small.
	 */
	dj = amt_stat("rejected") - j0;
	amt_note("%d exits: queued %ld, exit_not_last %ld, inline (any exit) %ld, late (not from the call site) %ld, recognised by call site after a preemption %ld",
		 ROUNDS * K, dq, dn, ds, du, amt_stat("exit_preempted") - p0);
	if (dq + dn + dj != ROUNDS * K || du)
		amt_stats_note();
	/* a temporary holder (MGLRU's walk on 7.x) may drop the last one */
	/* (inline: other exits, the burners' among them, are small) */
	amt_assert_eq(dq + dn + dj, ROUNDS * K,
		      "exits queued + exit_not_last + rejected by a gate; want every one recognised at the call site");
	amt_assert_eq(du, 0,
		      "exits late; want every one recognised at the call site");
	amt_assert_eq(amt_stat("exit_site_known"), 1,
		      "exit_mm()'s call site was not learned");
}

AMT_TEST_BOTH("exit_stress",
	      "200 exits killed eight at a time against CPU burners are each recognised by exit_mm()'s call site and deferred (or sent back by a safety gate)",
	      300, run)
