// SPDX-License-Identifier: GPL-2.0
/* An unlinked tmpfs file mapped by a dead process frees its space at reap. */
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <unistd.h>
#include "../lib/amt_test.h"

#define FILE_MB 256
#define PATH "/tmp/amt_unlinked"

static void body(void *unused)
{
	int fd = open(PATH, O_RDWR | O_CREAT | O_TRUNC, 0600);
	char *p;

	if (fd < 0 || ftruncate(fd, FILE_MB * MiB))
		_exit(2);
	p = mmap(NULL, FILE_MB * MiB, PROT_READ | PROT_WRITE, MAP_SHARED,
		 fd, 0);
	if (p == MAP_FAILED)
		_exit(2);
	memset(p, 1, FILE_MB * MiB);
	close(fd);
	unlink(PATH);
}

static long used_mb(void)
{
	struct statfs s;

	if (statfs("/tmp", &s))
		return -1;
	return (long)((s.f_blocks - s.f_bfree) * s.f_bsize / MiB);
}

static void run(void)
{
	long before = used_mb(), during;
	pid_t pid;

	amt_trace_start();
	pid = amt_hog_fn(body, NULL);
	during = used_mb();
	amt_assert(during - before >= FILE_MB - 8,
		   "tmpfs usage grew only %ld MiB", during - before);
	amt_kill_wait(pid);
	amt_assert(!amt_drain(60000), "drain failed");
	amt_assert(amt_trace_count("mm_reaper_queue", pid) == 1,
		   "process mapping an unlinked file not queued");
	/* drain flushes the delayed fput: the inode is evicted by now */
	amt_assert(used_mb() - before < 8,
		   "tmpfs still holds %ld MiB after the reap",
		   used_mb() - before);
}

AMT_TEST("unlink_while_mapped", "an unlinked tmpfs file mapped by a deferred process gives its space back once reaped", 120, run)
