// SPDX-License-Identifier: GPL-2.0
/*
 * One teardown stuck in __mmput() (an mmu_notifier whose release() waits on
 * a device) does not hold up the rest of the reaper's queue: the reapers
 * are several, so four exits killed behind it have their memory back
 * within 1 s while it is still stuck. With one reaper they waited for it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "amt_guest.h"

#define N 4
#define MB 128
#define TOL_KB (48 * 1024)

static long stalled(void)
{
	return amt_helper_get("stalled");
}

/*
 * One teardown stalled, then N more exits: returns how long their memory
 * took to come back and their teardowns to end (0: not within 1 s).
 */
static uint64_t round_behind_stall(void)
{
	long q0 = amt_stat("queued"), r0, base;
	pid_t stuck, pids[N];
	uint64_t t0;
	char cap[32];
	int i;

	/* room for all five on the reaper's queue (default: RAM/4) */
	snprintf(cap, sizeof(cap), "%ld", amt_mem_total_kb() / 4 * 3 / 4);
	amt_assert(!amt_param_set("max_pending_pages", cap), "cannot set cap");
	amt_assert(!amt_write_file(AMT_HELPER "stall", "1"), "cannot stall");
	stuck = amt_hog_fn(amt_stalling_body, (void *)MB);
	amt_kill_wait(stuck);
	if (!amt_helper_wait("stalled", 1, 5000))
		amt_stats_note();
	amt_assert_eq(stalled(), 1, "the teardown never stalled (queued +%ld)",
		      amt_stat("queued") - q0);

	r0 = amt_stat("reaped");
	base = amt_mem_back_kb();
	for (i = 0; i < N; i++)
		pids[i] = amt_hog(MB, AMT_HOG_ANON);
	t0 = amt_now_ns();
	amt_kill_reap(pids, N);
	/* back, and their teardowns ended (the last pages go just before) */
	while ((amt_mem_back_kb() < base - TOL_KB ||
		amt_stat("reaped") - r0 < N) &&
	       amt_now_ns() - t0 < 1000000000ULL * amt_teardown_slow())
		usleep(2000);
	amt_assert_eq(amt_stat("queued") - q0, N + 1, "queued");
	amt_assert_eq(stalled(), 1, "the stall ended early");
	if (amt_mem_back_kb() < base - TOL_KB || amt_stat("reaped") - r0 < N) {
		amt_note("1 s after the kill: %ld of %ld kB back, reaped +%ld",
			 amt_mem_back_kb(), base, amt_stat("reaped") - r0);
		t0 = 0;
	} else {
		t0 = amt_now_ns() - t0;
		amt_assert_eq(amt_stat("pending_mms"), 1,
			      "pending_mms, want the stuck one");
	}
	amt_write_file(AMT_HELPER "stall", "0");
	amt_assert(!amt_drain(60000), "drain after the stall failed");
	return t0;
}

static void run(void)
{
	uint64_t ns;
	int err;

	amt_assert_ge(amt_stat("reaper_threads"), 2, "reaper threads");
	amt_helper_load();
	/*
	 * Exits within a second of direct reclaim stay inline (the pressure
	 * window): the tests before may have caused some.
	 */
	sleep(2);
	amt_write_file(AMT_HELPER "stall", "0");
	amt_helper_wait("stalled", 0, 10000);
	amt_assert_eq(stalled(), 0, "teardowns still stalled");

	ns = round_behind_stall();
	amt_assert(ns, "with %ld reapers, %d exits queued behind a stuck teardown were not torn down within 1 s",
		   amt_stat("reaper_threads"), N);
	amt_note("%d x %d MiB behind a stuck teardown: memory back in %.0f ms",
		 N, MB, ns / 1e6);

	/* The control: with one reaper they wait for the stuck teardown. */
	err = amt_unload();
	amt_assert(!err, "unload: %s", strerror(err));
	err = amt_load("reapers=1 mode=reaper");
	amt_assert(!err, "load reapers=1: %s", strerror(err));
	ns = round_behind_stall();
	amt_assert(!ns, "control: with one reaper the exits behind a stuck teardown were torn down in %.0f ms: the test cannot see what it tests",
		   ns / 1e6);
	err = amt_unload();
	amt_assert(!err, "unload: %s", strerror(err));
	err = amt_load(NULL);
	amt_assert(!err, "reload: %s", strerror(err));
}

AMT_TEST("stuck_teardown", "one teardown stuck in an mmu_notifier does not delay four others queued behind it: their memory is back within 1 s (and, as a control, with one reaper it is not)", 180, run)
