// SPDX-License-Identifier: GPL-2.0
/*
 * What a container runtime or a service manager does after reaping the
 * last task of a cgroup: read cgroup.events, then rmdir the cgroup. With
 * the teardown deferred (and still running, in the task itself or in a
 * reaper) the cgroup must be empty and removable at once, as without the
 * module: 20 times in a row, cgroup.events says "populated 0" and rmdir
 * succeeds at the first try, both within 5 ms of waitpid() returning. Each kill
 * must have been deferred, or the test would prove nothing.
 *
 * Except mode=self on a kernel where a dying task leaves its cgroup only at
 * its final context switch (cgroup_task_dead(), v7.0+) and rmdir waits for
 * it (cgroup_drain_dying()): a teardown in the task after exit_notify()
 * then keeps the cgroup populated, and rmdir waits for the teardown, as
 * waitpid() would have without the module. There the module defaults to
 * mode=reaper (docs/design.md); the test checks that rmdir still succeeds
 * at the first try, never EBUSY, and reports the wait.
 *
 * (self_cgroup used to report 140-200 ms here: it timed the drain that
 * followed the rmdir, not the rmdir.)
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include "../lib/amt_test.h"

#define ROUNDS 20
#define MB 256

static void run(void)
{
	/* the documented exception, see above */
	bool waits = !strcmp(amt_mode, "self") && amt_self_holds_cgroup();
	/* 5 ms (a slow kernel's syscalls are slow too: amt_tslow) */
	uint64_t worst = 0, bound = 5000000ULL * amt_teardown_slow();
	char cg[128];
	int r;

	for (r = 0; r < ROUNDS; r++) {
		long q0 = amt_stat("queued"), populated;
		uint64_t t0, ns;
		pid_t pid;
		int err;

		amt_assert(!amt_cgroup_create("amt_rmdir", 0, cg, sizeof(cg)),
			   "cannot create a cgroup");
		amt_hog_cgroup = cg;
		pid = amt_hog(MB, AMT_HOG_ANON);
		amt_hog_cgroup = NULL;
		kill(pid, SIGKILL);
		amt_reap(pid);
		t0 = amt_now_ns();
		/*
		 * Up to 6.x cgroup_exit() empties the cgroup before the parent
		 * is woken; on 7.0+ only the task's final switch, a moment
		 * after the wake-up, does, with or without the module (the
		 * kernel's own selftests stopped expecting it at once): poll,
		 * as a runtime watching cgroup.events does.
		 */
		do
			populated = amt_cgroup_get(cg, "cgroup.events",
						   "populated");
		while (populated && !waits && amt_now_ns() - t0 < bound &&
		       !usleep(100));
		err = rmdir(cg) ? errno : 0;
		ns = amt_now_ns() - t0;
		worst = ns > worst ? ns : worst;
		amt_assert(amt_stat("queued") - q0 == 1,
			   "round %d: the kill was not deferred (queued +%ld)", r,
			   amt_stat("queued") - q0);
		amt_assert(!err, "round %d: rmdir right after waitpid() failed: %s",
			   r, strerror(err));
		if (waits)
			continue;
		amt_assert(populated == 0,
			   "round %d: cgroup.events still says populated %ld 5 ms (x amt_tslow) after waitpid()",
			   r, populated);
		amt_assert(ns < bound,
			   "round %d: populated+rmdir took %.1f ms, want < %.0f ms",
			   r, ns / 1e6, bound / 1e6);
		amt_assert(!amt_drain(60000), "drain failed");
	}
	amt_note("%d kills of %d MiB in a cgroup: cgroup.events + rmdir after waitpid() at most %.2f ms, all at the first try%s",
		 ROUNDS, MB, worst / 1e6,
		 waits ? " (rmdir waits for the self teardown on this kernel)" : "");
}

AMT_TEST_BOTH("cgroup_rmdir",
	      "20 times in a row a killed 256 MiB task's cgroup is unpopulated and removed at the first rmdir, within 5 ms of waitpid(), while its teardown is deferred",
	      300, run)
