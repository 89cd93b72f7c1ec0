// SPDX-License-Identifier: GPL-2.0
/* A process mapping a tmpfs file is deferred; the file's data survives. */
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "amt_guest.h"

#define FILE_MB 128
#define PATH "/tmp/amt_tmpfs_file"

static void body(void *unused)
{
	amt_map_tmpfs(PATH, FILE_MB, false);
}

static void run(void)
{
	unsigned char buf[4096];
	pid_t pid;
	off_t off;
	int fd;

	amt_trace_start();
	pid = amt_hog_fn(body, NULL);
	amt_kill_wait(pid);
	amt_assert(!amt_drain(60000), "drain failed");
	amt_assert_eq(amt_trace_count("mm_reaper_queue", pid), 1,
		      "process with a %d MiB shared tmpfs mapping not queued",
		      FILE_MB);
	fd = open(PATH, O_RDONLY);
	amt_assert_ge(fd, 0, "file gone");
	for (off = 0; off < (off_t)(FILE_MB * MiB); off += 16 * MiB) {
		amt_assert_eq(pread(fd, buf, sizeof(buf), off), sizeof(buf),
			      "short read at offset %ld", (long)off);
		amt_assert_eq(buf[0], 0x5a, "data lost at offset %ld",
			      (long)off);
		amt_assert_eq(buf[4095], 0x5a, "data lost at offset %ld",
			      (long)off);
	}
	close(fd);
	unlink(PATH);
}

AMT_TEST_BOTH("tmpfs_file", "a process with a shared tmpfs file mapping is deferred and the file keeps its data", 120, run)
