// SPDX-License-Identifier: GPL-2.0
/*
 * A close that blocks after exit_mm() (a hard-mounted NFS file, a stalled
 * FUSE daemon, a slow driver's release()) does not hold the dead process's
 * memory: it comes back within 1 s of the kill while the close still
 * blocks, a drain returns, and rmmod completes while such a close blocks.
 * Without the stash hand-off, self mode held the whole mm until the close
 * returned, and rmmod waited for it.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "amt_guest.h"

#define MB 1024
#define TOL_KB (48 * 1024)

/* Holds /dev/amt_block open and 1 GiB of anonymous memory. */
static void body(void *unused)
{
	if (open(AMT_BLOCK_DEV, O_RDONLY) < 0)
		_exit(5);
	amt_map_anon(MB);
}

static long blocked(void)
{
	return amt_helper_get("blocked");
}

/* Kill @pid and return once its exit blocks in the close. */
static void kill_until_blocked(pid_t pid)
{
	kill(pid, SIGKILL);
	amt_helper_wait("blocked", 1, 10000);
	amt_assert_eq(blocked(), 1, "the close of pid %d never blocked", pid);
	amt_assert_eq(waitpid(pid, NULL, WNOHANG), 0,
		      "pid %d was reaped although its close blocks", pid);
}

static void run(void)
{
	long base, q0, r0, h0, rr0;
	bool self = !strcmp(amt_mode, "self");
	uint64_t t0, dt;
	char cap[32];
	pid_t pid;
	int err;

	amt_helper_load();
	/* a close left blocked by an earlier failure ends first */
	amt_write_file(AMT_HELPER "hold", "0");
	amt_helper_wait("blocked", 0, 10000);
	amt_assert_eq(blocked(), 0, "closes still blocked");
	/* room for 1 GiB on the reaper's queue (default: RAM/4) */
	snprintf(cap, sizeof(cap), "%ld", amt_mem_total_kb() / 4 * 3 / 4);
	amt_assert(!amt_param_set("max_pending_pages", cap), "cannot set cap");
	base = amt_mem_back_kb();
	q0 = amt_stat("queued");
	r0 = amt_stat("reaped");
	h0 = amt_stat("handoffs");
	rr0 = amt_stat("reaped_by_reaper");
	amt_assert(!amt_write_file(AMT_HELPER "hold", "1"), "cannot hold");
	pid = amt_hog_fn(body, NULL);
	t0 = amt_now_ns();
	kill_until_blocked(pid);
	/* back, and its teardown ended (the last pages go just before) */
	while ((amt_mem_back_kb() < base - TOL_KB ||
		amt_stat("reaped") - r0 < 1) &&
	       amt_now_ns() - t0 < 1000000000ULL * amt_teardown_slow())
		usleep(2000);
	dt = amt_now_ns() - t0;
	amt_note("memory back %.0f ms after the kill, close blocked: %ld",
		 dt / 1e6, blocked());
	amt_assert_ge(amt_mem_back_kb(), base - TOL_KB,
		      "1 s after the kill, with the close blocked, kB back (of %ld kB)",
		      base);
	amt_assert_eq(blocked(), 1, "the close stopped blocking early");
	amt_assert_eq(amt_stat("queued") - q0, 1, "queued");
	amt_assert_eq(amt_stat("reaped") - r0, 1, "reaped");
	amt_assert_eq(amt_stat("pending_mms"), 0, "pending_mms");
	if (self) {
		amt_assert_eq(amt_stat("handoffs") - h0, 1,
			      "self mode: handoffs");
		amt_assert_eq(amt_stat("reaped_by_reaper") - rr0, 1,
			      "self mode: reaped_by_reaper");
	}
	err = amt_drain(3000);
	amt_assert(!err, "drain with a close blocked: %s", strerror(err));
	amt_write_file(AMT_HELPER "hold", "0");
	amt_reap(pid);

	/* rmmod does not wait for a task whose close blocks */
	amt_write_file(AMT_HELPER "hold", "1");
	pid = amt_hog_fn(body, NULL);
	kill_until_blocked(pid);
	t0 = amt_now_ns();
	err = amt_unload();
	amt_note("rmmod took %.0f ms", (amt_now_ns() - t0) / 1e6);
	amt_assert(!err, "rmmod while a close blocks: %s", strerror(err));
	amt_assert_eq(blocked(), 1, "the close ended before rmmod returned");
	amt_write_file(AMT_HELPER "hold", "0");
	amt_reap(pid);
	err = amt_load(NULL);
	amt_assert(!err, "reload: %s", strerror(err));
}

AMT_TEST_BOTH("stuck_close", "a 1 GiB process whose close blocks after exit_mm() has its memory back within 1 s while the close blocks; drain and rmmod do not wait for the close", 180, run)
