// SPDX-License-Identifier: GPL-2.0
/*
 * A CLONE_VM sharer in another thread group drops the last reference: the
 * mm is deferred exactly once, whichever process exits last.
 */
#include <sched.h>
#include <signal.h>
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

static void run(void)
{
	int round;

	/* orphaned sharers come back to us, not to init */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	for (round = 0; round < 2; round++) {
		long q0 = amt_stat("queued"), r0 = amt_torn_down();
		size_t len = 192 * MiB;
		char *stack = malloc(65536), *p;
		pid_t owner, other;
		int ready[2];

		amt_assert(!pipe(ready), "pipe");
		owner = fork();
		if (!owner) {
			pid_t s;

			p = mmap(NULL, len, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			amt_touch(p, len);
			/* a separate process (SIGCHLD) sharing our mm */
			s = clone(sharer, stack + 65536, CLONE_VM | SIGCHLD,
				  NULL);
			if (write(ready[1], &s, sizeof(s)) != sizeof(s))
				_exit(3);
			for (;;)
				pause();
		}
		close(ready[1]);
		amt_assert_eq(read(ready[0], &other, sizeof(other)),
			      sizeof(other), "owner died");
		close(ready[0]);
		amt_trace_start();
		/* round 0: the sharer drops last; round 1: the owner does */
		if (round == 0) {
			kill(owner, SIGKILL);
			waitpid(owner, NULL, 0);
			kill(other, SIGKILL);
		} else {
			kill(other, SIGKILL);
			usleep(200000);
			kill(owner, SIGKILL);
			waitpid(owner, NULL, 0);
		}
		/* the sharer was reparented to us: reap it */
		waitpid(other, NULL, 0);
		amt_assert(!amt_drain(60000), "drain failed");
		amt_assert_eq(amt_trace_count("mm_reaper_queue", 0), 1,
			      "round %d: queue events for one shared mm", round);
		amt_assert_eq(amt_stat("queued") - q0, 1, "round %d: queued",
			      round);
		amt_assert_eq(amt_torn_down() - r0, 1, "round %d: reaped",
			      round);
		free(stack);
	}
}

AMT_TEST_BOTH("clone_vm", "an mm shared by two processes (CLONE_VM) is deferred once, whichever drops it last", 120, run)
