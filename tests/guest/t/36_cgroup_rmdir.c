// SPDX-License-Identifier: GPL-2.0
/*
 * What a container runtime or a service manager does after reaping the
 * last task of a cgroup: read cgroup.events, then rmdir the cgroup. With
 * the teardown deferred (and still running, in the task itself or in a
 * reaper) the cgroup must be empty and removable at once, as without the
 * module: 12 times in a row, cgroup.events says "populated 0" and rmdir
 * succeeds at the first try, in a median 5 ms of waitpid() returning (the
 * same rounds without the module are the reference for slow kernels).
 * Each kill must have been deferred, or the test would prove nothing.
 *
 * Except cgroup.events in mode=self on a kernel where a dying task leaves
 * its cgroup only at its final context switch (cgroup_task_dead(), 7.0+):
 * a teardown in the task after exit_notify() keeps "populated 1" until it
 * ends, as waitpid() waited without the module (rmdir itself still
 * succeeds at once there, measured on 7.2). The module defaults to
 * mode=reaper on such kernels (docs/design.md); the test then requires the
 * first-try rmdir within the bound, and reports how long populated stayed. *
 * (self_cgroup used to report 140-200 ms here: it timed the drain that
 * followed the rmdir, not the rmdir.)
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include "amt_guest.h"

#define ROUNDS 12
#define MB 128

/*
 * Kill a task of MB MiB in a fresh cgroup; return the time from waitpid()
 * until cgroup.events said populated 0 (polled up to @bound; @wait_pop
 * false: not waited for) and rmdir succeeded, which must be at the first
 * try. @deferred: the kill must have been deferred, else inline.
 */
static uint64_t one_round(int r, bool deferred, bool wait_pop, uint64_t bound)
{
	long q0 = amt_stat("queued"), populated;
	uint64_t t0, ns;
	char cg[128];
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
	 * Up to 6.x cgroup_exit() empties the cgroup before the parent is
	 * woken; on 7.0+ only the task's final switch, a moment after the
	 * wake-up, does, with or without the module (the kernel's own
	 * selftests stopped expecting it at once): poll, as a runtime
	 * watching cgroup.events does.
	 */
	do
		populated = amt_cgroup_get(cg, "cgroup.events", "populated");
	while (populated && wait_pop && amt_now_ns() - t0 < bound &&
	       !usleep(100));
	err = rmdir(cg) ? errno : 0;
	ns = amt_now_ns() - t0;
	amt_assert_eq(amt_stat("queued") - q0, deferred ? 1 : 0,
		      "round %d: queued", r);
	amt_assert(!err, "round %d: rmdir right after waitpid() failed: %s",
		   r, strerror(err));
	amt_assert(populated == 0 || !wait_pop,
		   "round %d: cgroup.events still says populated %ld %.0f ms after waitpid()",
		   r, populated, bound / 1e6);
	amt_assert(!amt_drain(60000), "drain failed");
	return ns;
}

static void run(void)
{
	/* the documented exception, see above */
	bool waits = !strcmp(amt_mode, "self") && amt_self_holds_cgroup();
	/* 5 ms (a slow kernel's syscalls are slow too: amt_tslow) */
	uint64_t bound = 5000000ULL * amt_teardown_slow();
	uint64_t ns[ROUNDS], inl[ROUNDS], med_bound, max_bound;
	int r;

	/* Without the module's path, the same rounds: the kernel's own. */
	amt_assert(!amt_param_set("enabled", "0"), "cannot disable");
	for (r = 0; r < ROUNDS; r++)
		inl[r] = one_round(r, false, true, 4 * bound);
	amt_assert(!amt_param_set("enabled", "1"), "cannot enable");
	for (r = 0; r < ROUNDS; r++)
		ns[r] = one_round(r, true, !waits, 4 * bound);
	amt_median(inl, ROUNDS);
	amt_median(ns, ROUNDS);
	amt_note("%d kills of %d MiB in a cgroup, cgroup.events populated 0 + rmdir after waitpid(), ms: median %.2f, worst %.2f (without the module: %.2f, %.2f), all at the first try%s",
		 ROUNDS, MB, ns[ROUNDS / 2] / 1e6, ns[ROUNDS - 1] / 1e6,
		 inl[ROUNDS / 2] / 1e6, inl[ROUNDS - 1] / 1e6,
		 waits ? " (populated stays 1 until the self teardown ends on this kernel)" : "");
	/*
	 * The median within 5 ms (or twice the kernel's own); the worst
	 * within 4 times that, or twice the kernel's own worst: TCG now and
	 * then delays by some ms the final context switch that empties the
	 * cgroup on 7.x (8-11 ms once in 20 rounds seen on 7.2, against a
	 * 3 ms worst without the module; not explained yet).
	 */
	med_bound = bound > 2 * inl[ROUNDS / 2] ? bound : 2 * inl[ROUNDS / 2];
	max_bound = 4 * med_bound > 2 * inl[ROUNDS - 1] ?
		    4 * med_bound : 2 * inl[ROUNDS - 1];
	amt_assert_le(ns[ROUNDS / 2], med_bound,
		      "populated 0 and rmdir after waitpid(): median (ns)");
	amt_assert_le(ns[ROUNDS - 1], max_bound,
		      "populated 0 and rmdir after waitpid(): worst (ns)");
}

AMT_TEST_BOTH("cgroup_rmdir",
	      "12 times in a row a killed 128 MiB task's cgroup is unpopulated and removed at the first rmdir, in a median 5 ms of waitpid() (or twice the kernel's own), while its teardown is deferred",
	      300, run)
