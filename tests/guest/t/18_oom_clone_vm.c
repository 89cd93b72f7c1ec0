// SPDX-License-Identifier: GPL-2.0
/*
 * A CLONE_VM pair in two thread groups, killed by the (memcg) OOM killer:
 * no queue event from either, whichever drops the mm last.
 */
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include "amt_guest.h"

static int sharer(void *arg)
{
	for (;;)
		pause();
	return 0;
}

/* fork an owner in @cg that clones a CLONE_VM sharer, then eats @mb */
static pid_t pair(const char *cg, unsigned long mb, pid_t *other, bool wait_ready)
{
	int fds[2];
	pid_t owner;

	amt_assert(!pipe(fds), "pipe");
	owner = fork();
	if (!owner) {
		char *stack = malloc(65536), *p;
		pid_t s;

		amt_cgroup_enter(cg);
		s = clone(sharer, stack + 65536, CLONE_VM | SIGCHLD, NULL);
		p = mmap(NULL, mb * MiB, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		madvise(p, mb * MiB, MADV_NOHUGEPAGE);
		if (!wait_ready && write(fds[1], &s, sizeof(s)) != sizeof(s))
			_exit(3);
		amt_touch(p, mb * MiB);
		if (wait_ready && write(fds[1], &s, sizeof(s)) != sizeof(s))
			_exit(3);
		for (;;)
			pause();
	}
	close(fds[1]);
	amt_assert_eq(read(fds[0], other, sizeof(*other)), sizeof(*other),
		      "owner died early");
	close(fds[0]);
	return owner;
}

static void run(void)
{
	long rej0, sh0, oom0;
	pid_t owner, other;
	char cg[128];
	int round, st1, st2;

	prctl(PR_SET_CHILD_SUBREAPER, 1);
	amt_assert(!amt_cgroup_create("amt_oomclone", 1024, cg, sizeof(cg)),
		   "cannot create a memory cgroup");
	amt_trace_start();
	/* Positive control: the same pair killed by us is queued once. */
	owner = pair(cg, 192, &other, true);
	kill(owner, SIGKILL);
	kill(other, SIGKILL);
	waitpid(owner, NULL, 0);
	waitpid(other, NULL, 0);
	amt_assert(!amt_drain(60000), "drain failed");
	amt_assert_eq(amt_trace_count("mm_reaper_queue", 0), 1,
		      "control: times the pair was queued");

	amt_assert(!amt_cgroup_set(cg, "memory.max", "268435456"),
		   "cannot set memory.max");
	sh0 = amt_stat("oom_sharer_caught");
	for (round = 0; round < 4; round++) {
		rej0 = amt_stat("rejected_oom_victim");
		oom0 = amt_cgroup_get(cg, "memory.events", "oom_kill");
		amt_trace_start();
		owner = pair(cg, 512, &other, false);
		waitpid(owner, &st1, 0);
		waitpid(other, &st2, 0);
		amt_assert(WIFSIGNALED(st1) && WIFSIGNALED(st2),
			   "round %d: the pair was not killed", round);
		amt_assert_gt(amt_cgroup_get(cg, "memory.events", "oom_kill"),
			      oom0, "round %d: no memcg OOM kill", round);
		amt_assert(!amt_drain(60000), "drain failed");
		amt_assert_eq(amt_trace_count("mm_reaper_queue", 0), 0,
			      "round %d: an OOM-killed shared mm was queued",
			      round);
		amt_assert_eq(amt_stat("rejected_oom_victim"), rej0 + 1,
			      "round %d: rejected_oom_victim, want +1", round);
	}
	amt_note("%ld of 4 final drops came from the unmarked sharer",
		 amt_stat("oom_sharer_caught") - sh0);
	rmdir(cg);
}

AMT_TEST_BOTH("oom_clone_vm", "a CLONE_VM pair killed by the OOM killer is never queued, whichever process drops the mm (control: killed by us, queued once)", 240, run)
