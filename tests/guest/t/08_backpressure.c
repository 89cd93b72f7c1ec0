// SPDX-License-Identifier: GPL-2.0
/* With the cap forced low, parallel exits split into queued and inline. */
#include <signal.h>
#include <stdio.h>
#include "amt_guest.h"

#define N 8
#define MB 128

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
	for (i = 0; i < N; i++)
		kill(pids[i], SIGKILL);
	for (i = 0; i < N; i++)
		amt_reap(pids[i]);
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
}

AMT_TEST("backpressure", "with max_pending_pages forced low, parallel exits split into queued and inline fallbacks that add up, never over the cap", 240, run)
