// SPDX-License-Identifier: GPL-2.0
/* An unlinked tmpfs file mapped by a dead process frees its space at reap. */
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include "amt_guest.h"

#define FILE_MB 256
#define PATH "/tmp/amt_unlinked"

static void body(void *unused)
{
	amt_map_tmpfs(PATH, FILE_MB, true);
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
	pid_t spin[AMT_BURNERS] = { 0 };
	int round;

	amt_trace_start();
	/*
	 * Rounds 1 and 2 with two CPU burners: a drainer slowed down lets
	 * the kernel's delayed-fput worker take the files first, and the
	 * drain must still wait until it has closed them.
	 */
	for (round = 0; round < 3; round++) {
		pid_t pid = amt_hog_fn(body, NULL);

		if (round == 1)
			amt_burners_start(spin);

		during = used_mb();
		amt_assert_ge(during - before, FILE_MB - 8,
			      "tmpfs usage growth (MiB)");
		amt_kill_wait(pid);
		/*
		 * Generous: in reaper mode the burners (nice 0) leave the
		 * nice-19 reaper ~1.5 % of a CPU, and on the debug kernel
		 * a 256 MiB teardown then takes minutes.
		 */
		amt_assert(!amt_drain(600000), "round %d: drain failed",
			   round);
		amt_assert_eq(amt_trace_count("mm_reaper_queue", pid), 1,
			      "process mapping an unlinked file not queued");
		/* drain closes the delayed fputs: the inode is evicted by now */
		amt_assert_lt(used_mb() - before, 8,
			      "round %d: tmpfs MiB still held after the drain",
			      round);
	}
	amt_burners_stop(spin);
}

AMT_TEST_BOTH("unlink_while_mapped", "an unlinked tmpfs file mapped by a deferred process gives its space back once reaped", 600, run)
