// SPDX-License-Identifier: GPL-2.0
/*
 * A thread that drops the mm last while its group leader is still on its
 * way to exit_notify() does not start the teardown nor wake the reaper:
 * the parent's waitpid() waits for the leader, and work started then only
 * competes with it (the vhost worker of 6.4+, whose teardown held up the
 * release's synchronize_rcu(): docs/design.md, "Late final drops").
 *
 * The process: a leader holding /dev/amt_block (its close blocks after
 * exit_mm()) and 256 MiB, and a thread without CLONE_FILES that sleeps in
 * D state at the fixture's gate when the process is killed. The leader's
 * exit_mm() is not the last; the gate opens; the thread's exit_mm() is.
 * The thread leaves the mm to the leader (to_leader +1) and nothing is
 * torn down before the leader's exit_notify(): with the leader's close
 * held for 300 ms more, the reaper takes it at the 100 ms bound (handoffs
 * +1); let go at once, the leader tears it down (mode=self) or queues it
 * for the reaper (mode=reaper) after its own exit_notify().
 *
 * On the module's debug build (make check-debug), the race the thread can
 * lose: debugfs debug_leader_delay_ms makes it sleep between seeing the
 * leader not yet past exit_notify() and stashing under it, and the leader
 * is let go meanwhile; the thread must take its entry back
 * (to_leader_back +1, to_leader +0) and have it torn down as its own.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "amt_guest.h"

#define MB 256
#define STACK (64 * 1024)

static int gate_thread(void *unused)
{
	int fd = open(AMT_BLOCK_DEV, O_WRONLY);	/* its close never blocks */

	/* sleeps at the gate, SIGKILL or not; then the kill takes it */
	if (fd >= 0)
		write(fd, "x", 1);
	for (;;)
		pause();
	return 0;
}

static void body(void *unused)
{
	char *stack = malloc(STACK);
	int i;

	/* a thread with a files table of its own: the device is not in it */
	if (!stack || clone(gate_thread, stack + STACK,
			    CLONE_VM | CLONE_FS | CLONE_SIGHAND | CLONE_THREAD |
			    CLONE_SYSVSEM, NULL) < 0)
		_exit(5);
	for (i = 0; i < 2000 && amt_helper_get("waiting") < 1; i++)
		usleep(1000);
	if (amt_helper_get("waiting") != 1 ||
	    open(AMT_BLOCK_DEV, O_RDONLY) < 0)
		_exit(6);
	amt_map_anon(MB);
}

/* The number of threads of @pid (its "Threads:"), or -1. */
static long threads(pid_t pid)
{
	char path[64], line[128];
	long n = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %ld", &n) == 1)
			break;
	fclose(f);
	return n;
}

/*
 * One kill. @hold_ms: how long the leader's close stays blocked after the
 * thread is gone: past AMT_STASH_MAX (100 ms) the stash left to the
 * leader goes to the reaper; at 0 the leader takes it.
 */
/* The stats a kill moves, before it. */
struct base {
	long queued, exit_not_last, to_leader, to_leader_back, handoffs;
	long reaped, reaped_by_self, reaped_by_reaper;
};

#define SNAP(b, name)	((b)->name = amt_stat(#name))
#define DELTA(b, name)	(amt_stat(#name) - (b)->name)

/*
 * Start the process with the leader's close held and the thread at the
 * gate, take @b, kill it: the leader's exit_mm() has passed, not last.
 */
static pid_t kill_held(struct base *b)
{
	pid_t pid;

	amt_assert(!amt_write_file(AMT_HELPER "hold", "1") &&
		   !amt_write_file(AMT_HELPER "gate", "1"),
		   "cannot hold the fixture");
	pid = amt_hog_fn(body, NULL);
	SNAP(b, queued);
	SNAP(b, exit_not_last);
	SNAP(b, to_leader);
	SNAP(b, to_leader_back);
	SNAP(b, handoffs);
	SNAP(b, reaped);
	SNAP(b, reaped_by_self);
	SNAP(b, reaped_by_reaper);
	kill(pid, SIGKILL);
	amt_assert(amt_helper_wait("blocked", 1, 10000),
		   "the leader's close never blocked");
	amt_assert_eq(DELTA(b, exit_not_last), 1,
		      "the leader's exit_mm() was not the first drop");
	amt_assert_eq(DELTA(b, queued), 0,
		      "the leader's exit_mm() was not the first drop");
	return pid;
}

static void one(int hold_ms)
{
	bool self = !strcmp(amt_mode, "self"), in_time;
	struct base b;
	uint64_t t_gate;
	pid_t pid;
	int i;

	pid = kill_held(&b);
	t_gate = amt_now_ns();
	amt_write_file(AMT_HELPER "gate", "0");
	amt_assert(amt_helper_wait("waiting", 0, 10000), "the gate did not open");
	/* the thread is gone once the leader is the process's only task */
	for (i = 0; i < 10000 && threads(pid) != 1; i++)
		usleep(1000);
	amt_assert_eq(threads(pid), 1, "the thread did not exit");
	amt_assert_eq(DELTA(&b, queued), 1,
		      "the thread's drop was not left to the leader");
	amt_assert_eq(DELTA(&b, to_leader), 1,
		      "the thread's drop was not left to the leader");
	/*
	 * Nothing starts before the leader's exit_notify() or the 100 ms
	 * bound (AMT_STASH_MAX, from the stash). The checks that need the
	 * bound not to have passed are made only if this came well within
	 * it (a slow guest: a note instead).
	 */
	in_time = amt_now_ns() - t_gate < 50000000ULL;
	if (in_time) {
		amt_assert_eq(DELTA(&b, reaped), 0,
			      "torn down while the leader's close blocks");
		amt_assert_eq(DELTA(&b, handoffs), 0,
			      "handed off while the leader's close blocks");
	}
	usleep(hold_ms * 1000);
	amt_write_file(AMT_HELPER "hold", "0");
	amt_reap(pid);
	amt_assert(!amt_drain(60000), "drain failed");
	amt_note("leader's close held %d ms more (%s): to_leader +%ld, handoffs +%ld, reaped_by_self +%ld, reaped_by_reaper +%ld",
		 hold_ms, in_time ? "in time" : "too slow to check the bound",
		 DELTA(&b, to_leader), DELTA(&b, handoffs),
		 DELTA(&b, reaped_by_self),
		 DELTA(&b, reaped_by_reaper));
	amt_assert_eq(DELTA(&b, reaped), 1, "reaped");
	/* the bound, or the leader: self tears down, reaper mode queues */
	if (hold_ms) {
		amt_assert_eq(DELTA(&b, handoffs), 1,
			      "the leader's close blocked past the bound: handoffs");
	} else if (in_time) {
		amt_assert_eq(DELTA(&b, handoffs), 0,
			      "the leader did not %s it",
			      self ? "tear down" : "queue");
		amt_assert_eq(self ? DELTA(&b, reaped_by_self) :
			      DELTA(&b, reaped_by_reaper), 1,
			      "the leader did not %s it",
			      self ? "tear down" : "queue");
	}
}

#define DELAY "/sys/kernel/debug/async_mm_teardown/debug_leader_delay_ms"

/* Where @pid's thread other than the leader sleeps (wchan), into @buf. */
static bool thread_wchan(pid_t pid, char *buf, size_t len)
{
	char path[320];
	struct dirent *d;
	bool ok = false;
	FILE *f;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return false;
	while (!ok && (d = readdir(dir))) {
		if (d->d_name[0] == '.' || atoi(d->d_name) == pid)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/wchan", pid,
			 d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		ok = fgets(buf, len, f) != NULL;
		fclose(f);
	}
	closedir(dir);
	return ok;
}

/*
 * The leader passes exit_notify() while the thread, having chosen to leave
 * its mm to it, sleeps before stashing (the debug build's delay).
 */
static void race(void)
{
	bool self = !strcmp(amt_mode, "self");
	char wchan[64] = "";
	struct base b;
	pid_t pid;
	int i;

	pid = kill_held(&b);
	amt_assert(!amt_write_file(DELAY, "5000"), "cannot set %s", DELAY);
	amt_write_file(AMT_HELPER "gate", "0");
	/* the thread is in the delay when it sleeps in msleep() */
	for (i = 0; i < 4000; i++) {
		if (thread_wchan(pid, wchan, sizeof(wchan)) &&
		    !strncmp(wchan, "msleep", 6))
			break;
		usleep(1000);
	}
	amt_write_file(DELAY, "0");
	amt_assert(!strncmp(wchan, "msleep", 6),
		   "the thread never reached the delay (wchan '%s')", wchan);
	/* the leader now passes exit_notify(), then waits as a zombie */
	amt_write_file(AMT_HELPER "hold", "0");
	amt_reap(pid);
	amt_assert(!amt_drain(60000), "drain failed");
	amt_note("leader past exit_notify() in the thread's window (%s): queued +%ld, to_leader +%ld, to_leader_back +%ld, reaped_by_self +%ld, reaped_by_reaper +%ld",
		 amt_mode, DELTA(&b, queued), DELTA(&b, to_leader),
		 DELTA(&b, to_leader_back), DELTA(&b, reaped_by_self),
		 DELTA(&b, reaped_by_reaper));
	amt_assert_eq(DELTA(&b, queued), 1,
		      "the thread did not take its drop back");
	amt_assert_eq(DELTA(&b, to_leader_back), 1,
		      "the thread did not take its drop back");
	amt_assert_eq(DELTA(&b, to_leader), 0,
		      "the thread did not take its drop back");
	/* self: by the thread, unless it was late past the bound */
	amt_assert_eq(DELTA(&b, reaped), 1,
		      "not torn down as the thread's own");
	amt_assert_eq(self && DELTA(&b, handoffs) == 0 ?
		      DELTA(&b, reaped_by_self) :
		      DELTA(&b, reaped_by_reaper), 1,
		      "not torn down as the thread's own (%s, handoffs +%ld)",
		      self ? "self" : "reaper", DELTA(&b, handoffs));
}

static void run(void)
{
	char cap[32];

	amt_helper_load();
	amt_write_file(AMT_HELPER "hold", "0");
	amt_write_file(AMT_HELPER "gate", "0");
	amt_assert(amt_helper_wait("blocked", 0, 10000) &&
		   amt_helper_wait("waiting", 0, 10000),
		   "the fixture is still busy from an earlier test");
	snprintf(cap, sizeof(cap), "%ld", amt_mem_total_kb() / 4 * 3 / 4);
	amt_assert(!amt_param_set("max_pending_pages", cap), "cannot set cap");
	one(300);
	one(0);
	if (!access(DELAY, F_OK))
		race();
}

AMT_TEST_BOTH("thread_first",
	      "a thread that drops the mm last before its leader reaches exit_notify() leaves it to the leader, which tears it down (mode=self) or queues it for the reaper after its own exit_notify(), or to the reaper at the 100 ms bound",
	      120, run)
