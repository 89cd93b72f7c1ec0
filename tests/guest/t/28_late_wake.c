// SPDX-License-Identifier: GPL-2.0
/*
 * The reaper is woken only after exit_notify(), but a task that stalls
 * between exit_mm() and exit_notify() does not hold its queued mm back:
 * the bound (wake_fallback) wakes the reaper while the task is still
 * exiting. The stall: the last close of a 1 GiB unlinked tmpfs file, which
 * exit_files() leaves to exit_task_work(), where it is truncated.
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "amt_guest.h"

#define STALL_MB 1024UL

static void body(void *arg)
{
	char *p = mmap(NULL, 128 * MiB, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int fd = memfd_create("stall", 0);

	if (p == MAP_FAILED || fd < 0)
		_exit(5);
	madvise(p, 128 * MiB, MADV_NOHUGEPAGE);
	amt_touch(p, 128 * MiB);
	/* not mapped: the last reference is the fd, closed on the exit path */
	if (fallocate(fd, 0, 0, STALL_MB * MiB))
		_exit(6);
}

static void run(void)
{
	long r0 = amt_stat("reaped"), f0 = amt_stat("wake_fallback");
	uint64_t t0, t_reaped = 0, t_exited = 0;
	siginfo_t si;
	pid_t pid;
	int st;

	amt_assert_ge(f0, 0, "no wake_fallback in the stats");
	pid = amt_hog_fn(body, NULL);
	t0 = amt_now_ns();
	amt_hog_exit(pid);
	while (!t_exited) {
		if (!t_reaped && amt_stat("reaped") > r0)
			t_reaped = amt_now_ns();
		si.si_pid = 0;
		/* exited (zombie) is enough: WNOWAIT leaves it to amt_reap() */
		if (!waitid(P_PID, pid, &si, WEXITED | WNOHANG | WNOWAIT) &&
		    si.si_pid == pid)
			t_exited = amt_now_ns();
		else
			usleep(2000);
		amt_assert_lt(amt_now_ns() - t0, 60000000000ULL,
			      "child %d still exiting after 60 s", pid);
	}
	st = amt_reap(pid);
	amt_assert(WIFEXITED(st) && !WEXITSTATUS(st), "child status %#x", st);
	amt_note("exit took %.0f ms; the reaper had torn the 128 MiB down after %.0f ms",
		 (t_exited - t0) / 1e6, t_reaped ? (t_reaped - t0) / 1e6 : -1.0);
	/* precondition: without a stall this test proves nothing */
	amt_assert_ge(t_exited - t0, 200000000ULL,
		      "the exit (ns) was short: no stall to test the bound with");
	amt_assert(t_reaped && t_reaped < t_exited,
		   "the queued mm waited for its task's exit_notify() (%.0f ms): the late wake-up has no bound",
		   (t_exited - t0) / 1e6);
	amt_assert_gt(amt_stat("wake_fallback"), f0,
		      "wake_fallback did not count the bound's wake-up");
}

AMT_TEST("late_wake", "a task stalled between exit_mm() and exit_notify() does not hold its queued mm back", 180, run)
