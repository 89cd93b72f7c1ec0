// SPDX-License-Identifier: GPL-2.0
/*
 * The shrinker's scan, run by kswapd and every direct reclaimer exactly
 * under pressure, costs the same with a long queue as with none: it hands
 * off the stashes (their own list) and boosts the reapers (a few threads),
 * and walks nothing per queued mm. Its time (shrinker_scan_ns) in each
 * drop_caches=2 (shrink_slab() on every node), the one reaper stuck in
 * the fixture's notifier so that the queue stays: with nothing queued,
 * then with N small mms queued.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "amt_guest.h"

#define N 1000
#define SCANS 30
#define SMALL_KB 1024

/*
 * @drops drop_caches=2, each timed by the counters: the median of their
 * mean scan times, ns. A median: a scan preempted once (a timer thread on
 * PREEMPT_RT, the reaper) would carry its wait into a mean of all.
 */
static uint64_t scan_ns(int drops)
{
	uint64_t v[SCANS];
	long n, n0, ns0;
	int i;

	for (i = 0; i < drops; i++) {
		n0 = amt_stat("shrinker_scans");
		ns0 = amt_stat("shrinker_scan_ns");
		amt_assert(!amt_write_file("/proc/sys/vm/drop_caches", "2"),
			   "drop_caches");
		n = amt_stat("shrinker_scans") - n0;
		amt_assert_ge(n, 1, "drop_caches=2 made no scan");
		v[i] = (amt_stat("shrinker_scan_ns") - ns0) / n;
	}
	return amt_median(v, drops);
}

/* A small process that exits on its own: deferred (thresh_pages is low). */
static void small_exit(void)
{
	pid_t pid = fork();
	char *m;

	amt_assert_ge(pid, 0, "fork: %s", strerror(errno));
	if (!pid) {
		m = mmap(NULL, SMALL_KB << 10, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			_exit(1);
		memset(m, 1, SMALL_KB << 10);
		_exit(0);
	}
	amt_assert_eq(waitpid(pid, NULL, 0), pid, "waitpid");
}

static void run(void)
{
	uint64_t idle_ns, busy_ns;
	char params[96];
	long q0, p;
	pid_t stuck;
	int i, err;

	err = amt_unload();
	amt_assert(!err, "unload: %s", strerror(err));
	/* one reaper, stuck below: everything after it stays queued */
	snprintf(params, sizeof(params),
		 "reapers=1 mode=reaper thresh_pages=64 max_pending_pages=%ld",
		 amt_mem_total_kb() / 4 / 2);
	err = amt_load(params);
	amt_assert(!err, "load: %s", strerror(err));
	amt_helper_load();
	amt_assert(!amt_write_file(AMT_HELPER "stall", "1"), "cannot stall");
	stuck = amt_hog_fn(amt_stalling_body, (void *)8);
	kill(stuck, SIGKILL);
	amt_reap(stuck);
	amt_assert(amt_helper_wait("stalled", 1, 10000),
		   "the reaper never stalled");

	/* the first scans find cold caches */
	scan_ns(5);
	idle_ns = scan_ns(SCANS);
	/* out of the scans' pressure window, where exits go inline */
	usleep(1200000);
	q0 = amt_stat("queued");
	for (i = 0; i < N; i++)
		small_exit();
	p = amt_stat("pending_mms");
	amt_assert_eq(amt_stat("queued") - q0, N, "small exits queued");
	amt_assert_ge(p, N, "pending_mms");
	busy_ns = scan_ns(SCANS);
	amt_note("the shrinker's scan: %.1f us with nothing queued, %.1f us with %ld queued (medians of %d)",
		 idle_ns / 1e3, busy_ns / 1e3, p, SCANS);

	amt_write_file(AMT_HELPER "stall", "0");
	amt_assert(amt_helper_wait("stalled", 0, 10000),
		   "the stall did not end");
	amt_assert(!amt_drain(60000), "drain failed");
	err = amt_unload();
	amt_assert(!err, "unload: %s", strerror(err));
	err = amt_load(NULL);
	amt_assert(!err, "reload: %s", strerror(err));
	amt_assert_le(busy_ns, 2 * idle_ns + 5000,
		      "the shrinker's scan (ns) with %ld mms queued, against twice none's",
		      p);
}

AMT_TEST("shrinker_cost", "the shrinker's scan costs no more with 1000 mms queued than with none (a queue behind a stuck teardown)", 240, run)
