// SPDX-License-Identifier: GPL-2.0
/*
 * pending_pages, the budget, the shrinker and the OOM notifier count what a
 * teardown will free (anonymous and swap), not the RSS: a process whose
 * RSS is a mapped tmpfs file (page cache that stays after the unmap) takes
 * no budget, while one of anonymous memory of the same size is over it.
 */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
#include "amt_guest.h"

#define MB 256
#define FILE_PATH "/tmp/amt_charge"

static void file_body(void *unused)
{
	amt_map_tmpfs(FILE_PATH, MB, false);
}

static void run(void)
{
	long q0 = amt_stat("queued"), b0 = amt_stat("rejected_budget");
	long pp0 = amt_stat("reaped_pages");
	pid_t pid;

	/* 8 MiB: far below either process's RSS */
	amt_assert(!amt_param_set("max_pending_pages", "2048"), "cannot set cap");
	pid = amt_hog_fn(file_body, NULL);
	amt_kill_wait(pid);
	amt_assert(!amt_drain(60000), "drain failed");
	amt_assert_eq(amt_stat("queued") - q0, 1,
		      "file-backed 256 MiB: queued");
	amt_assert_eq(amt_stat("rejected_budget"), b0,
		      "file-backed 256 MiB: rejected_budget");
	amt_assert_lt(amt_stat("reaped_pages") - pp0, 2048,
		      "file-backed 256 MiB: pages charged");
	unlink(FILE_PATH);

	pid = amt_hog(MB, AMT_HOG_ANON);
	amt_kill_wait(pid);
	amt_assert_eq(amt_stat("queued") - q0, 1,
		      "anonymous 256 MiB: queued (the file-backed one, want no more)");
	amt_assert_eq(amt_stat("rejected_budget") - b0, 1,
		      "anonymous 256 MiB: rejected_budget");
}

AMT_TEST("freeable_charge", "the budget counts the pages a teardown frees (anonymous, swap), not file pages that stay cached", 120, run)
