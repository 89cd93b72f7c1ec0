// SPDX-License-Identifier: GPL-2.0
/*
 * CPU hotplug during a stream of deferred teardowns: cpu1 goes offline and
 * online again and again while large processes are killed three at a
 * time. Every exit is deferred and torn down (the reapers and the dying
 * tasks migrate, the wake-up's irq_work and the delayed work items of an
 * offlined CPU run elsewhere), the memory comes back, and the kernel log
 * stays clean (the harness's verdict).
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "amt_guest.h"

#define CPU1 "/sys/devices/system/cpu/cpu1/online"
#define ROUNDS 8
#define N 3
#define MB 80

static void run(void)
{
	long q0 = amt_stat("queued"), r0 = amt_stat("reaped");
	pid_t toggler, pids[N];
	int i, j, st = 0;

	if (access(CPU1, W_OK))
		amt_skip("cpu1 cannot go offline here (%s)", strerror(errno));
	toggler = fork();
	amt_assert_ge(toggler, 0, "fork: %s", strerror(errno));
	if (!toggler) {
		for (;;) {
			if (amt_write_file(CPU1, "0"))
				_exit(3);
			usleep(20000);
			if (amt_write_file(CPU1, "1"))
				_exit(4);
			usleep(20000);
		}
	}
	for (i = 0; i < ROUNDS; i++) {
		for (j = 0; j < N; j++)
			pids[j] = amt_hog(MB, AMT_HOG_ANON);
		amt_kill_reap(pids, N);
	}
	kill(toggler, SIGKILL);
	waitpid(toggler, &st, 0);
	amt_assert(!amt_write_file(CPU1, "1"), "cpu1 does not come back");
	amt_assert(WIFSIGNALED(st), "the toggler failed (status %#x)", st);
	amt_assert(!amt_drain(60000), "drain failed");
	amt_assert_eq(amt_stat("queued") - q0, ROUNDS * N, "queued");
	amt_assert_eq(amt_stat("reaped") - r0, ROUNDS * N, "reaped");
}

AMT_TEST_BOTH("cpu_hotplug", "cpu1 offlined and onlined again and again while large processes are killed: every exit deferred and torn down, memory back, no splat", 240, run)
