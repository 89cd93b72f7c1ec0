// SPDX-License-Identifier: GPL-2.0
/*
 * The memcg wait cannot wait for shmem, so a process whose shared memory
 * would not fit beside a replacement stays inline. Its shmem pages
 * (MAP_SHARED|MAP_ANONYMOUS: a database's shared buffers) are freed at the
 * last fput() of their file; a deferred teardown runs that fput() where
 * no task_work can (a reaper, or a task past exit_task_work()), so the
 * kernel's fput worker frees them a jiffy or more after the teardown, when
 * the memcg wait has already ended, and a replacement charging at
 * memory.max in between meets the memcg OOM killer. Without the module
 * the dying task's own task_work frees them before its parent learns of
 * the death. In a cgroup with room for one, the exit is therefore inline
 * (rejected_memcg), and the replacement gets its memory without an OOM
 * kill; an anonymous process of the same size in the same cgroup is
 * deferred (its wait can see it), as memcg_respawn shows.
 */
#include <stdio.h>
#include <unistd.h>
#include "amt_guest.h"

#define MB 256
#define LIMIT_MB (MB * 3 / 2)	/* room for one */

static void run(void)
{
	static const char * const why[] = {
		"sync", "sync_small", "rejected", "rejected_pressure",
		"rejected_nomem", "rejected_budget", "exit_not_last",
		"exit_late",
	};
	long q0, r0, t0, k0, w0[sizeof(why) / sizeof(why[0])];
	size_t i;
	pid_t hog, pid;
	char cg[128];

	amt_assert(!amt_cgroup_create("amt_memcg_shmem", LIMIT_MB, cg,
				      sizeof(cg)), "cannot create a cgroup");
	amt_write_file("/proc/self/oom_score_adj", "-1000");
	/* out of the pressure window of the tests before (1 s) */
	sleep(2);

	amt_hog_cgroup = cg;
	amt_hog_oom_score_adj = "0";
	hog = amt_hog(MB, AMT_HOG_SHMEM);
	amt_hog_cgroup = NULL;
	amt_hog_oom_score_adj = NULL;
	q0 = amt_stat("queued");
	r0 = amt_stat("rejected_memcg");
	t0 = amt_stat("memcg_tight");
	k0 = amt_cgroup_get(cg, "memory.events", "oom_kill");
	for (i = 0; i < sizeof(why) / sizeof(why[0]); i++)
		w0[i] = amt_stat(why[i]);
	amt_kill_wait(hog);
	if (amt_stat("rejected_memcg") - r0 != 1)
		for (i = 0; i < sizeof(why) / sizeof(why[0]); i++)
			amt_note("%s +%ld", why[i], amt_stat(why[i]) - w0[i]);
	amt_note("%d MiB of shmem in a %d MiB cgroup: queued +%ld, rejected_memcg +%ld, memcg_tight +%ld",
		 MB, LIMIT_MB, amt_stat("queued") - q0,
		 amt_stat("rejected_memcg") - r0, amt_stat("memcg_tight") - t0);
	amt_assert(amt_stat("queued") == q0 &&
		   amt_stat("rejected_memcg") - r0 == 1,
		   "the shmem process's exit was not kept inline (queued +%ld, rejected_memcg +%ld)",
		   amt_stat("queued") - q0, amt_stat("rejected_memcg") - r0);

	/* the replacement, at once: its shared memory must fit */
	amt_hog_cgroup = cg;
	amt_hog_oom_score_adj = "0";
	pid = amt_hog_try(MB, AMT_HOG_SHMEM);
	amt_hog_cgroup = NULL;
	amt_hog_oom_score_adj = NULL;
	amt_assert(pid && amt_cgroup_get(cg, "memory.events", "oom_kill") == k0,
		   "the replacement did not get its %d MiB (%s, memcg OOM kills +%ld)",
		   MB, pid ? "alive" : "died",
		   amt_cgroup_get(cg, "memory.events", "oom_kill") - k0);
	amt_kill_wait(pid);
	rmdir(cg);
}

AMT_TEST("memcg_shmem",
	 "a process whose shmem would not fit beside a replacement in its memcg is torn down inline (the memcg wait cannot see shmem), and the replacement gets its memory",
	 120, run)
