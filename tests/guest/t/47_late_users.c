// SPDX-License-Identifier: GPL-2.0
/*
 * Users of a dead mm that the deferral lets in (docs/design.md, "Known
 * limits", readers that outlive the exit): mmget_not_zero() succeeds on a
 * deferred mm where it would fail without the module.
 *
 * 1. A /proc/PID/smaps_rollup file opened before the kill (it keeps only
 *    an mm_count reference, and each read takes mm_users with
 *    mmget_not_zero()) is read in a loop across the death.
 * 2. A process with a userfaultfd registered on its memory: the uffd's
 *    release in the dying task's exit_task_work() takes mm_users and the
 *    mmap write lock and walks every VMA.
 *
 * Either may drop the last reference and tear the mm down itself. Every
 * exit must be deferred (or, for a read in progress at exit_mm(), left
 * to the reader) and end exactly once, the reader's reads
 * must end, the memory come back, and the kernel log stay clean.
 *
 * 3. (reaper mode) The same made certain with the fixture: a late user
 *    takes the deferred mm while the only reaper is held up, so the
 *    reaper's drop is not the last. The entry must stay counted as
 *    pending until the late user's mmput() has freed the memory (before,
 *    it ended as if freed at the reaper's drop).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "amt_guest.h"
#include "../helper/amt_helper.h"

#define MB 192

/* Read @fd from the start until it has nothing more; exit with the count. */
static void reader(int fd)
{
	char buf[4096];
	int n = 0;

	while (pread(fd, buf, sizeof(buf), 0) > 0 && n < 100000)
		n++;
	_exit(n >= 100000 ? 1 : 0);
}

static void proc_reader_round(void)
{
	long q0 = amt_stat("queued"), r0 = amt_stat("reaped");
	long n0 = amt_stat("exit_not_last");
	char path[64];
	pid_t hog, rd;
	int fd, st = 0;

	hog = amt_hog(MB, AMT_HOG_ANON);
	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", hog);
	fd = open(path, O_RDONLY);
	amt_assert_ge(fd, 0, "open %s: %s", path, strerror(errno));
	rd = fork();
	amt_assert_ge(rd, 0, "fork: %s", strerror(errno));
	if (!rd)
		reader(fd);
	close(fd);
	amt_kill_wait(hog);
	amt_assert(!amt_drain(60000), "drain failed");
	amt_assert(waitpid(rd, &st, 0) == rd && WIFEXITED(st) &&
		   !WEXITSTATUS(st), "the reader did not end (status %#x)", st);
	/*
	 * A read in progress at exit_mm() makes its drop not the last
	 * (exit_not_last): the reader tears down, nothing is deferred.
	 */
	amt_assert_eq(amt_stat("queued") - q0 + amt_stat("exit_not_last") - n0,
		      1, "/proc reader: queued + exit_not_last");
	amt_assert_eq(amt_stat("reaped") - r0, amt_stat("queued") - q0,
		      "/proc reader: reaped vs queued");
}

/* A hog body: a userfaultfd registered on all its memory. */
static void uffd_body(void *mb)
{
	size_t len = (unsigned long)mb * MiB;
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	int uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	void *p;

	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api))
		_exit(7);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		_exit(8);
	madvise(p, len, MADV_NOHUGEPAGE);
	/* touched first: a missing-page fault would wait for a handler */
	amt_touch(p, len);
	reg.range.start = (unsigned long)p;
	reg.range.len = len;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		_exit(9);
}

static void uffd_round(void)
{
	long q0 = amt_stat("queued"), r0 = amt_stat("reaped");
	int uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	pid_t hog;

	/* (Debian's kernels have it; a kernel without it has no such user) */
	if (uffd < 0 && errno == ENOSYS) {
		amt_note("no userfaultfd in this kernel: no such late user to test");
		return;
	}
	if (uffd >= 0)
		close(uffd);
	hog = amt_hog_fn(uffd_body, (void *)MB);

	amt_kill_wait(hog);
	amt_assert(!amt_drain(60000), "drain failed");
	amt_assert_eq(amt_stat("queued") - q0, 1, "userfaultfd: queued");
	amt_assert_eq(amt_stat("reaped") - r0, 1, "userfaultfd: reaped");
}

static void held_round(void)
{
	long q0, r0, l0, p1;
	pid_t stuck, hog;
	int fd, err, i;

	err = amt_unload();
	amt_assert(!err, "unload: %s", strerror(err));
	err = amt_load("reapers=1 mode=reaper");
	amt_assert(!err, "load reapers=1: %s", strerror(err));
	amt_reset_defaults();
	q0 = amt_stat("queued");
	r0 = amt_stat("reaped");
	l0 = amt_stat("late_users");
	/* the only reaper held up in the fixture's notifier */
	amt_assert(!amt_write_file(AMT_HELPER "stall", "1"), "cannot stall");
	stuck = amt_hog_fn(amt_stalling_body, (void *)96);
	amt_kill_wait(stuck);
	amt_assert(amt_helper_wait("stalled", 1, 10000), "no stall");
	/* a late user of the next one's mm, taken while it is queued */
	hog = amt_hog(MB, AMT_HOG_ANON);
	fd = open(AMT_BLOCK_DEV, O_RDONLY);
	amt_assert(fd >= 0 && !ioctl(fd, AMT_IOC_GRAB_MM, hog),
		   "cannot grab the hog's mm: %s", strerror(errno));
	amt_kill_wait(hog);
	amt_assert_eq(amt_stat("queued") - q0, 2, "queued");
	amt_assert(!ioctl(fd, AMT_IOC_MMGET),
		   "mmget_not_zero() of the deferred mm failed: %s",
		   strerror(errno));
	amt_write_file(AMT_HELPER "stall", "0");
	/* both teardowns taken by the reaper; the second one's drop not last */
	for (i = 0; i < 500 && amt_stat("late_users") == l0; i++)
		usleep(10000);
	usleep(300000);
	p1 = amt_stat("pending_mms");
	amt_assert_eq(amt_stat("late_users") - l0, 1, "late_users");
	amt_assert_eq(p1, 1, "pending_mms while the late user holds the mm");
	amt_assert(!ioctl(fd, AMT_IOC_MMPUT), "mmput: %s", strerror(errno));
	for (i = 0; i < 300 && amt_stat("pending_mms"); i++)
		usleep(10000);
	amt_assert_eq(amt_stat("pending_mms"), 0,
		      "pending_mms 3 s after the late user's mmput()");
	amt_assert_eq(amt_stat("reaped") - r0, 2, "reaped");
	close(fd);
	err = amt_unload();
	amt_assert(!err, "unload: %s", strerror(err));
	err = amt_load(NULL);
	amt_assert(!err, "reload: %s", strerror(err));
}

static void run(void)
{
	int i;

	amt_helper_load();
	for (i = 0; i < 3; i++) {
		proc_reader_round();
		uffd_round();
	}
	if (!strcmp(amt_mode, "reaper"))
		held_round();
}

AMT_TEST_BOTH("late_users", "a /proc reader and a userfaultfd that take a dying process's mm after its deferral: every exit deferred and ended once, the reads end, memory back, no splat", 180, run)
