// SPDX-License-Identifier: GPL-2.0
/* A multi-threaded process is deferred exactly once, by its last thread. */
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include "amt_guest.h"

#define NTHREADS 8

static void *thread_fn(void *arg)
{
	size_t len = 16 * MiB;
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p != MAP_FAILED)
		amt_touch(p, len);
	pthread_barrier_wait(arg);
	for (;;)
		pause();
	return NULL;
}

static void body(void *unused)
{
	static pthread_barrier_t b;
	pthread_t t;
	void *p;
	int i;

	pthread_barrier_init(&b, NULL, NTHREADS + 1);
	for (i = 0; i < NTHREADS; i++)
		if (pthread_create(&t, NULL, thread_fn, &b))
			_exit(2);
	p = mmap(NULL, 128 * MiB, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		_exit(2);
	amt_touch(p, 128 * MiB);
	pthread_barrier_wait(&b);
}

static void run(void)
{
	long q0, r0, n0;
	int round;

	for (round = 0; round < 5; round++) {
		pid_t pid;

		q0 = amt_stat("queued");
		n0 = amt_stat("exit_not_last");
		r0 = amt_torn_down();
		amt_trace_start();
		pid = amt_hog_fn(body, NULL);
		amt_kill_wait(pid);
		amt_assert(!amt_drain(60000), "drain failed");
		amt_assert_eq(amt_trace_count("mm_reaper_queue", 0), 1,
			      "round %d: queue events for one %d-thread process",
			      round, NTHREADS + 1);
		amt_assert_eq(amt_stat("queued") - q0, 1, "round %d: queued",
			      round);
		amt_assert_eq(amt_torn_down() - r0, 1, "round %d: reaped",
			      round);
		/* every other thread found the mm still in use */
		amt_assert_eq(amt_stat("exit_not_last") - n0, NTHREADS,
			      "round %d: exit_not_last", round);
	}
}

AMT_TEST_BOTH("threads", "a killed 9-thread process is deferred exactly once and reaped once", 240, run)
