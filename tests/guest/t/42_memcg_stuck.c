// SPDX-License-Identifier: GPL-2.0
/*
 * A charge at memory.max waits for the deferred teardowns of its memcg
 * only while they free (docs/design.md, "memcg", the bound): behind a
 * teardown stuck in an mmu_notifier (the fixture's stall), a replacement
 * that needs the stuck memory waits, then meets the memcg OOM killer once
 * the teardown has freed nothing for AMT_MEMCG_STALL (2 s), instead of
 * waiting for as long as the teardown is stuck. (Without the module the
 * supervisor would have waited in waitpid() for the stuck exit instead.)
 * One mode: the bound counts from the teardown's start, which both modes
 * stamp in the same place (amt_start()).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "amt_guest.h"

#define MB 192
#define ROOM 16		/* MiB the cgroup has beyond the stuck process */
#define STALL_S 2	/* AMT_MEMCG_STALL */

static void run(void)
{
	long q0, t0, w0, wn0, k0;
	uint64_t start, took;
	pid_t stuck, pid;
	char cg[128];
	int st = 0, i;

	amt_helper_load();
	amt_write_file(AMT_HELPER "stall", "0");
	amt_assert(amt_helper_wait("stalled", 0, 10000),
		   "the fixture is still busy from an earlier test");
	/*
	 * Room for little more than the stuck process: the replacement meets
	 * the limit at once, well within the stall bound, on a slow kernel
	 * too.
	 */
	amt_assert(!amt_cgroup_create("amt_memcg_stuck", MB + ROOM, cg,
				      sizeof(cg)), "cannot create a cgroup");
	amt_write_file("/proc/self/oom_score_adj", "-1000");
	/* out of the pressure window of the tests before (1 s) */
	sleep(2);

	amt_assert(!amt_write_file(AMT_HELPER "stall", "1"), "cannot stall");
	amt_hog_cgroup = cg;
	amt_hog_oom_score_adj = "0";
	stuck = amt_hog_fn(amt_stalling_body, (void *)MB);
	q0 = amt_stat("queued");
	t0 = amt_stat("memcg_tight");
	amt_kill_wait(stuck);
	amt_hog_cgroup = NULL;
	amt_hog_oom_score_adj = NULL;
	amt_assert_eq(amt_stat("queued") - q0, 1,
		      "the stuck process's exit was not deferred into its full cgroup");
	amt_assert_eq(amt_stat("memcg_tight") - t0, 1,
		      "the stuck process's exit was not deferred into its full cgroup");
	amt_assert(amt_helper_wait("stalled", 1, 5000),
		   "the teardown never stalled");

	/* the replacement needs the stuck memory: more than the room left */
	w0 = amt_stat("memcg_waits");
	wn0 = amt_stat("memcg_wait_ns");
	k0 = amt_cgroup_get(cg, "memory.events", "oom_kill");
	start = amt_now_ns();
	pid = fork();
	amt_assert_ge(pid, 0, "fork: %s", strerror(errno));
	if (!pid) {
		amt_cgroup_enter(cg);
		amt_write_file("/proc/self/oom_score_adj", "0");
		amt_map_anon(MB);
		_exit(0);
	}
	for (i = 0; i < 60000 && waitpid(pid, &st, WNOHANG) == 0; i++)
		usleep(1000);
	took = amt_now_ns() - start;
	if (i == 60000) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
	amt_write_file(AMT_HELPER "stall", "0");
	amt_note("replacement of %d MiB in a %d MiB cgroup behind a stuck %d MiB teardown: ended after %.2f s (status 0x%x), memcg OOM kills +%ld, memcg_waits +%ld (%.2f s)",
		 MB, MB + ROOM, MB, took / 1e9, st,
		 amt_cgroup_get(cg, "memory.events", "oom_kill") - k0,
		 amt_stat("memcg_waits") - w0,
		 (amt_stat("memcg_wait_ns") - wn0) / 1e9);
	amt_assert_lt(i, 60000, "the replacement's charge waited 60 s behind a stuck teardown");
	amt_assert_gt(amt_stat("memcg_waits"), w0,
		      "the replacement's charge did not wait for the teardown");
	amt_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL &&
		   amt_cgroup_get(cg, "memory.events", "oom_kill") > k0,
		   "the replacement was not memcg-OOM-killed (status 0x%x)", st);
	/* the wait ends at the stall bound, not with the stuck teardown */
	amt_assert_lt(took, (STALL_S + 8) * 1000000000ULL * amt_teardown_slow(),
		      "the replacement ended late (ns after its start)");
	amt_assert(!amt_drain(60000), "drain after the stall failed");
	rmdir(cg);
}

AMT_TEST("memcg_stuck",
	 "a charge at memory.max waits for a deferred teardown of its memcg only while it frees: behind a stuck one, the replacement meets the memcg OOM killer after the 2 s stall bound",
	 180, run)
