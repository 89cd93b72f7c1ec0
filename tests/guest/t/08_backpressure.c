// SPDX-License-Identifier: GPL-2.0
/*
 * With the cap forced low, parallel exits split into queued and inline.
 *
 * On the module's debug build (make check-debug), the race of a budget
 * charge about to be rejected with the first charge admitted after a cap
 * write: debugfs debug_charge_delay_ms holds every charge between its add
 * and its check, so the admitted one restarts the peak while the other's
 * pages are still in the budget counter; the peak must not count them.
 */
#include <stdio.h>
#include <unistd.h>
#include "amt_guest.h"

#define N 8
#define MB 128
#define DELAY "/sys/kernel/debug/async_mm_teardown/debug_charge_delay_ms"

static void race(long cap)
{
	long q0 = amt_stat("queued"), b0 = amt_stat("rejected_budget");
	pid_t pids[2];
	char v[32];
	int i;

	for (i = 0; i < 2; i++)
		pids[i] = amt_hog(MB, AMT_HOG_ANON);
	snprintf(v, sizeof(v), "%ld", cap);
	amt_assert(!amt_param_set("max_pending_pages", v), "cannot set cap");
	amt_assert(!amt_write_file(DELAY, "1000"), "cannot set %s", DELAY);
	amt_kill_reap(pids, 2);
	amt_write_file(DELAY, "0");
	amt_assert(!amt_drain(60000), "drain failed");
	amt_assert_eq(amt_stat("queued") - q0, 1, "queued in the race");
	amt_assert_eq(amt_stat("rejected_budget") - b0, 1,
		      "budget fallbacks in the race");
	amt_assert_le(amt_stat("pending_pages_peak"), cap,
		      "pending pages peaked over the cap in the race");
}

static void run(void)
{
	long q0 = amt_stat("queued"), b0 = amt_stat("rejected_budget");
	long cap = 3 * MB * 256 / 2;	/* pages: room for one, not two */
	pid_t pids[N];
	char v[32];
	int i;

	snprintf(v, sizeof(v), "%ld", cap);
	amt_assert(!amt_param_set("max_pending_pages", v), "cannot set cap");
	for (i = 0; i < N; i++)
		pids[i] = amt_hog(MB, AMT_HOG_ANON);
	amt_kill_reap(pids, N);
	amt_assert(!amt_drain(60000), "drain failed");
	{
		long q = amt_stat("queued") - q0;
		long b = amt_stat("rejected_budget") - b0;

		amt_note("cap %ld pages: queued %ld, rejected_budget %ld", cap,
			 q, b);
		amt_assert_eq(q + b, N, "queued + budget fallbacks");
		amt_assert_ge(q, 1, "nothing queued at all");
		amt_assert_ge(b, 1, "the cap never pushed back");
	}
	amt_assert_le(amt_stat("pending_pages_peak"), cap,
		      "pending pages peaked over the cap");
	amt_assert_eq(amt_stat("pending_pages"), 0,
		      "budget not returned: pages pending");
	amt_assert_eq(amt_stat("pending_mms"), 0,
		      "budget not returned: mms pending");
	if (!access(DELAY, F_OK))
		race(cap);
}

AMT_TEST("backpressure", "with max_pending_pages forced low, parallel exits split into queued and inline fallbacks that add up, never over the cap", 240, run)
