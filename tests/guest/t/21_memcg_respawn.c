// SPDX-License-Identifier: GPL-2.0
/*
 * Kill-and-respawn inside a cgroup limited to 1.5x the process size: no
 * memcg OOM kill with oom_guard on (control: off, the queued old process
 * pushes the cgroup into OOM kills). With the guard on, the exits are
 * deferred all the same (memcg_tight): the new process's charges at
 * memory.max wait in memcg reclaim for the old one's teardown.
 */
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
#include "amt_guest.h"

#define MB 192
#define ROUNDS 6

static long stress(const char *cg)
{
	long k0 = amt_cgroup_get(cg, "memory.events", "oom_kill");
	pid_t cur = 0, spin[AMT_BURNERS];
	int i;

	/*
	 * Into the cgroup first, with what we fork (the hogs, the burners):
	 * a move into a cgroup waits for an RCU grace period, whose kthread
	 * the burners below would starve. The cgroup competes with the
	 * reapers as one entity of its cpu.weight: the most there is (about
	 * nice -15 against them), so that the burners still starve them.
	 */
	amt_assert(!amt_cgroup_set(cg, "cpu.weight", "10000"),
		   "cannot set cpu.weight");
	amt_assert(!amt_cgroup_enter(cg), "cannot enter %s", cg);
	/*
	 * A busy machine, with work of higher priority than the processes
	 * that die (amt_starve_start()): the reapers get little CPU.
	 */
	amt_starve_start(spin);
	amt_hog_oom_score_adj = "0";	/* we are -1000: let them be killable */
	for (i = 0; i < ROUNDS; i++) {
		if (cur)
			amt_kill_wait(cur);
		cur = amt_hog_try(MB, AMT_HOG_ANON);
		amt_hog_demote(cur);
	}
	if (cur)
		amt_kill_wait(cur);
	amt_hog_oom_score_adj = NULL;
	/* not through the drain: the reapers at ~1 % of a CPU test nothing */
	amt_starve_stop(spin);
	amt_assert(!amt_cgroup_enter("/sys/fs/cgroup"),
		   "cannot leave %s", cg);
	amt_assert(!amt_drain(60000), "drain failed");
	return amt_cgroup_get(cg, "memory.events", "oom_kill") - k0;
}

static void run(void)
{
	long off, on, m0 = amt_stat("rejected_memcg");
	long t0 = amt_stat("memcg_tight"), w0 = amt_stat("memcg_waits");
	char cg[128];

	amt_assert(!amt_cgroup_create("amt_memcg_respawn", MB * 3 / 2, cg,
				      sizeof(cg)), "cannot create a cgroup");
	amt_write_file("/proc/self/oom_score_adj", "-1000");
	amt_assert(!amt_param_set("oom_guard", "0"), "cannot set oom_guard");
	off = stress(cg);
	amt_assert(!amt_param_set("oom_guard", "1"), "cannot set oom_guard");
	on = stress(cg);
	amt_note("%d respawns of %d MiB in a %d MiB cgroup: memcg OOM kills %ld with the guard off, %ld with it on; rejected_memcg +%ld, memcg_tight +%ld, memcg_waits +%ld",
		 ROUNDS, MB, MB * 3 / 2, off, on, amt_stat("rejected_memcg") - m0,
		 amt_stat("memcg_tight") - t0, amt_stat("memcg_waits") - w0);
	amt_assert_gt(off, 0, "the stress is not real: no memcg OOM kill even without the guard");
	amt_assert_eq(on, 0, "memcg OOM kills with oom_guard on");
	amt_assert_gt(amt_stat("memcg_tight"), t0,
		      "no exit was deferred into the cgroup without room");
	amt_assert_gt(amt_stat("memcg_waits"), w0,
		      "no charge at memory.max waited for a deferred teardown");
	rmdir(cg);
}

AMT_TEST("memcg_respawn", "kill-and-respawn in a cgroup limited to 1.5x the process causes no memcg OOM kill with oom_guard on (control: off, it does)", 400, run)
