// SPDX-License-Identifier: GPL-2.0
/* A process with an AIO context is torn down inline. */
#include <linux/aio_abi.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "amt_guest.h"

static void body(void *unused)
{
	aio_context_t ctx = 0;
	void *p;

	if (syscall(SYS_io_setup, 8, &ctx))
		_exit(5);
	p = mmap(NULL, 128 * MiB, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		_exit(2);
	amt_touch(p, 128 * MiB);
}

static void run(void)
{
	long a0 = amt_stat("rejected_aio");
	pid_t pid;

	amt_trace_start();
	pid = amt_hog_fn(body, NULL);
	amt_kill_wait(pid);
	amt_assert_eq(amt_trace_count("mm_reaper_queue", pid), 0,
		      "AIO user was queued");
	amt_assert_eq(amt_stat("rejected_aio"), a0 + 1,
		      "rejected_aio, want +1");
	/* Control: the same size without AIO is queued. */
	pid = amt_hog(128, AMT_HOG_ANON);
	amt_kill_wait(pid);
	amt_assert(!amt_drain(60000), "drain failed");
	amt_assert_eq(amt_trace_count("mm_reaper_queue", pid), 1,
		      "control without AIO not queued");
}

AMT_TEST_BOTH("aio", "a process with an AIO context stays on the inline path (control: same size without AIO is queued)", 120, run)
