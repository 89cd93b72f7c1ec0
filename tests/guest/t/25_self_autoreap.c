// SPDX-License-Identifier: GPL-2.0
/* mode=self works for autoreaped children (SIGCHLD ignored) and threads. */
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "amt_guest.h"

static void *sleeper(void *arg)
{
	for (;;)
		pause();
	return NULL;
}

/* a 6-thread 192 MiB child of a parent that ignores SIGCHLD */
static void autoreaped(void)
{
	int ready[2];
	pid_t mid, hog;
	char c;

	amt_assert(!pipe(ready), "pipe");
	mid = fork();
	if (!mid) {
		signal(SIGCHLD, SIG_IGN);
		hog = fork();
		if (!hog) {
			char *p = mmap(NULL, 192 * MiB, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			pthread_t t;
			int i;

			for (i = 0; i < 5; i++)
				pthread_create(&t, NULL, sleeper, NULL);
			amt_touch(p, 192 * MiB);
			if (write(ready[1], "r", 1) != 1)
				_exit(3);
			for (;;)
				pause();
		}
		if (read(ready[0], &c, 1) != 1)
			_exit(3);
		kill(hog, SIGKILL);
		/* autoreaped: there is no zombie to wait for */
		while (kill(hog, 0) == 0)
			usleep(1000);
		_exit(0);
	}
	waitpid(mid, NULL, 0);
}

static void run(void)
{
	long d0, q0;
	int i;

	if (amt_param_set("mode", "self"))
		amt_skip("mode=self unavailable on this kernel");
	for (i = 0; i < 3; i++) {
		d0 = amt_stat("reaped_by_self");
		q0 = amt_stat("queued");
		autoreaped();
		amt_assert(!amt_drain(60000), "drain failed");
		amt_assert_eq(amt_stat("queued") - q0, 1, "round %d: queued",
			      i);
		amt_assert_eq(amt_stat("reaped_by_self") - d0, 1,
			      "round %d: reaped_by_self", i);
	}
}

AMT_TEST("self_autoreap", "mode=self tears down an autoreaped (SIGCHLD ignored) 6-thread process exactly once", 180, run)
