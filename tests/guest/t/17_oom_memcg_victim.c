// SPDX-License-Identifier: GPL-2.0
/* A memcg OOM victim is never queued (positive control first). */
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "amt_guest.h"

static void run(void)
{
	long oom0, rej0, mark0;
	char cg[128];
	pid_t pid;
	int st, round;

	amt_assert(!amt_cgroup_create("amt_oomv", 1024, cg, sizeof(cg)),
		   "cannot create a memory cgroup");
	amt_hog_cgroup = cg;
	amt_trace_start();
	/* Positive control: a plain large exit in this cgroup is queued. */
	pid = amt_hog(192, AMT_HOG_ANON);
	amt_kill_wait(pid);
	amt_assert(!amt_drain(60000), "drain failed");
	amt_assert_eq(amt_trace_count("mm_reaper_queue", pid), 1,
		      "control: a 192 MiB exit in a 1 GiB cgroup was not queued");

	amt_assert(!amt_cgroup_set(cg, "memory.max", "268435456"),
		   "cannot set memory.max");
	for (round = 0; round < 3; round++) {
		oom0 = amt_cgroup_get(cg, "memory.events", "oom_kill");
		rej0 = amt_stat("rejected_oom_victim");
		mark0 = amt_stat("oom_victims_marked");
		pid = fork();
		if (!pid) {
			char *p;

			amt_cgroup_enter(cg);
			p = mmap(NULL, 512 * MiB, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			madvise(p, 512 * MiB, MADV_NOHUGEPAGE);
			amt_touch(p, 512 * MiB);
			_exit(0);	/* not reached: 512 MiB > 256 MiB */
		}
		waitpid(pid, &st, 0);
		amt_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
			   "round %d: the 512 MiB child was not OOM-killed", round);
		amt_assert_gt(amt_cgroup_get(cg, "memory.events", "oom_kill"),
			      oom0, "round %d: memory.events shows no oom_kill",
			      round);
		amt_assert(!amt_drain(60000), "drain failed");
		amt_assert_eq(amt_trace_count("mm_reaper_queue", pid), 0,
			      "round %d: memcg OOM victim %d was queued", round,
			      pid);
		amt_assert_gt(amt_stat("oom_victims_marked"), mark0,
			      "round %d: oom:mark_victim not seen", round);
		amt_assert_eq(amt_stat("rejected_oom_victim"), rej0 + 1,
			      "round %d: rejected_oom_victim, want +1 (the OOM gate, not another one, must catch it)",
			      round);
	}
	amt_hog_cgroup = NULL;
	rmdir(cg);
}

AMT_TEST_BOTH("oom_memcg_victim", "a memcg OOM victim is never queued, counted as an OOM rejection (control: same cgroup, plain exit, queued)", 180, run)
