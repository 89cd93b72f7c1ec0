// SPDX-License-Identifier: GPL-2.0
/*
 * mode=self keeps the teardown CPU in the dying task's cgroup (control: in
 * reaper mode it escapes), and the cgroup can be removed after waitpid().
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "amt_guest.h"

static pid_t hog_in(const char *name, char *cg, size_t len)
{
	pid_t pid;

	amt_assert(!amt_cgroup_create(name, 0, cg, len), "cannot create a cgroup");
	amt_hog_cgroup = cg;
	pid = amt_hog(512, AMT_HOG_ANON);
	amt_hog_cgroup = NULL;
	return pid;
}

/* cpu.stat usage_usec of the dying task's cgroup across a 512 MiB kill */
static long cpu_delta(const char *mode)
{
	char cg[128];
	long before, after;
	pid_t pid;

	amt_assert(!amt_param_set("mode", mode), "cannot set mode=%s", mode);
	pid = hog_in("amt_self_cpu", cg, sizeof(cg));
	before = amt_cgroup_get(cg, "cpu.stat", "usage_usec");
	amt_kill_wait(pid);
	amt_assert(!amt_drain(60000), "drain failed");
	after = amt_cgroup_get(cg, "cpu.stat", "usage_usec");
	rmdir(cg);
	return after - before;
}

/* how long rmdir of the dead task's cgroup must wait after waitpid() */
static long rmdir_wait_ms(const char *mode)
{
	char cg[128];
	uint64_t t0;
	pid_t pid;
	int i;

	/* "inline": the module's path switched off, for comparison */
	amt_assert(!amt_param_set("enabled", strcmp(mode, "inline") ? "1" : "0"),
		   "cannot set enabled");
	if (strcmp(mode, "inline"))
		amt_assert(!amt_param_set("mode", mode), "cannot set mode=%s",
			   mode);
	pid = hog_in("amt_self_rmdir", cg, sizeof(cg));
	amt_kill_wait(pid);
	t0 = amt_now_ns();
	for (i = 0; rmdir(cg) && errno == EBUSY && i < 500; i++)
		usleep(10000);
	/* the time of the rmdir only, not of the drain below */
	t0 = amt_now_ns() - t0;
	amt_assert(access(cg, F_OK), "rmdir of the dead task's cgroup failed: %s",
		   strerror(errno));
	amt_assert(!amt_drain(60000), "drain failed");
	return t0 / 1000000;
}

static void run(void)
{
	long self_us, reaper_us, self_rm, reaper_rm, inline_rm;

	if (amt_param_set("mode", "self"))
		amt_skip("mode=self unavailable on this kernel");
	self_us = cpu_delta("self");
	reaper_us = cpu_delta("reaper");
	self_rm = rmdir_wait_ms("self");
	reaper_rm = rmdir_wait_ms("reaper");
	inline_rm = rmdir_wait_ms("inline");
	amt_note("cgroup CPU across a 512 MiB kill: self %.1f ms, reaper %.1f ms",
		 self_us / 1e3, reaper_us / 1e3);
	amt_note("rmdir after waitpid() waited %ld ms (self), %ld ms (reaper), %ld ms (inline)",
		 self_rm, reaper_rm, inline_rm);
	amt_assert_gt(self_us, 4 * reaper_us,
		      "self mode did not charge the teardown to the cgroup (us, against 4x reaper mode's)");
	amt_assert_gt(self_us, 10000,
		      "self mode did not charge the teardown to the cgroup (us)");
}

AMT_TEST("self_cgroup", "mode=self charges the teardown CPU to the dying task's cgroup (control: reaper mode does not) and the cgroup can be removed after waitpid()", 240, run)
