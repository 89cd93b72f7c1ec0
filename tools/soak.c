// SPDX-License-Identifier: GPL-2.0
/*
 * soak: load/unload and enable/disable/mode cycles of the module while
 * other processes keep exiting, large and small, for a bounded time.
 *
 *	soak SECONDS
 *
 * Workers (separate processes) loop: two kill large children (32-192 MiB,
 * some multi-threaded, a third exiting on their own, a quarter killed while
 * still faulting their memory in), one spawns small ones
 * (fork+_exit, fork+exec). Each cycle loads the module (reaper and self
 * mode alternately, a low threshold so most large exits defer), flips
 * enabled and mode and drains under that load, then unloads it while the
 * workers still run. Between cycles the workers pause and the memory must
 * be back to the level before the soak began. Prints one TAP verdict; the
 * host judges the kernel log (KASAN, lockdep, WARN, bad rss-counter).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include "amt_guest.h"

#define NR_WORKERS 3
#define MEM_TOL_KB (64 * 1024)

struct shared {
	volatile int pause;		/* main asks the workers to idle */
	volatile int gen;		/* which pause */
	volatile int ack[NR_WORKERS];	/* a worker is idle for pause gen */
	volatile long large, small;	/* exits done */
};
static struct shared *sh;

static void *sleeper(void *arg)
{
	pause();
	return arg;
}

/*
 * A child that maps and touches @mb MiB, maybe with threads, then writes
 * a byte to @ready.
 */
static pid_t large_child(unsigned long mb, int threads, bool exit_itself,
			 int ready)
{
	pid_t pid = fork();

	if (pid)
		return pid;
	{
		char *p = mmap(NULL, mb * MiB, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		pthread_t t;
		int i;

		if (p == MAP_FAILED)
			_exit(2);
		amt_touch(p, mb * MiB);
		for (i = 0; i < threads; i++)
			pthread_create(&t, NULL, sleeper, NULL);
		if (write(ready, "", 1) != 1)
			_exit(3);
		if (exit_itself)
			_exit(0);
		for (;;)
			pause();
	}
}

/* Idle (no child) while paused, saying so for each pause it sees. */
static void wait_idle(int w)
{
	while (sh->pause) {
		sh->ack[w] = sh->gen;
		usleep(10000);
	}
}

/*
 * Kill (or let exit) large children: mostly once they are fully touched,
 * one in four at a random point while they still fault memory in.
 */
static void large_worker(int w)
{
	unsigned int seed = getpid();
	int ready[2];
	char c;

	if (pipe(ready))
		_exit(2);
	for (;;) {
		unsigned long mb = 32 + rand_r(&seed) % 161;
		int threads = rand_r(&seed) % 4 == 0 ? 4 : 0;
		bool vol = rand_r(&seed) % 3 == 0;
		bool early = rand_r(&seed) % 4 == 0, reaped = false;
		pid_t pid;

		if (sh->pause)
			wait_idle(w);
		pid = large_child(mb, threads, vol, ready[1]);
		if (pid < 0)
			continue;
		if (!vol && early) {
			usleep(rand_r(&seed) % 20000);
			kill(pid, SIGKILL);
		} else if (!vol) {
			/* ready, or dead before it (OOM-killed, no memory) */
			struct pollfd p = { .fd = ready[0], .events = POLLIN };

			int n;

			while ((n = poll(&p, 1, 100)) <= 0 &&
			       waitpid(pid, NULL, WNOHANG) != pid)
				;
			if (n > 0)
				kill(pid, SIGKILL);
			else
				reaped = true;
		}
		while (!reaped && waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		/* a byte a killed or exited child wrote must not count next time */
		fcntl(ready[0], F_SETFL, O_NONBLOCK);
		while (read(ready[0], &c, 1) == 1)
			;
		fcntl(ready[0], F_SETFL, 0);
		__sync_fetch_and_add(&sh->large, 1);
	}
}

static void small_worker(int w)
{
	for (unsigned long i = 0;; i++) {
		pid_t pid;

		if (sh->pause)
			wait_idle(w);
		pid = fork();
		if (!pid) {
			if (i % 2)
				execl("/proc/self/exe", "soak", "--exit0",
				      (char *)NULL);
			_exit(0);
		}
		if (pid > 0)
			while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
				;
		__sync_fetch_and_add(&sh->small, 1);
	}
}

static bool pause_workers(void)
{
	int w, i;

	sh->gen++;
	sh->pause = 1;
	for (i = 0; i < 6000; i++) {
		for (w = 0; w < NR_WORKERS && sh->ack[w] == sh->gen; w++)
			;
		if (w == NR_WORKERS)
			return true;
		usleep(10000);
	}
	printf("not ok - soak # workers did not pause in 60 s\n");
	return false;
}

static void resume_workers(void)
{
	sh->pause = 0;
}

/* Everything torn down and freed: back within MEM_TOL_KB of @base_kb. */
static long mem_back(long base_kb)
{
	long now = 0;
	int i;

	for (i = 0; i < 300; i++) {
		amt_drop_caches();
		now = amt_mem_back_kb();
		if (now >= base_kb - MEM_TOL_KB)
			break;
		usleep(100000);
	}
	return now;
}

static int unload_retrying(void)
{
	int err = 0, i;

	/* EBUSY while a drain writer holds a module reference */
	for (i = 0; i < 300; i++) {
		err = amt_unload();
		if (err != EBUSY && err != EAGAIN)
			break;
		usleep(100000);
	}
	return err;
}

int main(int argc, char **argv)
{
	unsigned int secs = argc > 1 ? strtoul(argv[1], NULL, 10) : 300;
	unsigned int seed = 1, cycle, flips = 0, drains = 0;
	pid_t workers[NR_WORKERS];
	uint64_t t0 = amt_now_ns();
	long base, now;
	int w, err;

	if (argc > 1 && !strcmp(argv[1], "--exit0"))
		return 0;
	setvbuf(stdout, NULL, _IONBF, 0);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	if (amt_loaded() && amt_unload())
		return printf("not ok - soak # cannot unload the module first\n"), 1;
	for (w = 0; w < NR_WORKERS; w++) {
		workers[w] = fork();
		if (!workers[w]) {
			if (w < 2)
				large_worker(w);
			small_worker(w);
		}
	}
	/*
	 * The baseline is taken after a warm-up without the module: caches
	 * and (on the debug kernel) KASAN's quarantine of freed objects,
	 * up to 1/32 of RAM, have reached their working size by then.
	 */
	sleep(10);
	if (!pause_workers())
		goto out;
	base = mem_back(0);
	resume_workers();

	for (cycle = 0; (amt_now_ns() - t0) / 1000000000ULL < secs; cycle++) {
		char params[128];
		int i;

		snprintf(params, sizeof(params),
			 "mode=%s thresh_pages=4096 max_pending_pages=%ld",
			 cycle % 2 ? "self" : "reaper",
			 amt_mem_total_kb() / 4 / 3);
		err = amt_load(params);
		if (err) {
			printf("not ok - soak # cycle %u: insmod %s: %s\n",
			       cycle, params, strerror(err));
			goto out;
		}
		for (i = 0; i < 6; i++) {
			usleep(200000 + rand_r(&seed) % 400000);
			switch (rand_r(&seed) % 4) {
			case 0:
				amt_param_set("enabled", "0");
				usleep(rand_r(&seed) % 200000);
				amt_param_set("enabled", "1");
				flips++;
				break;
			case 1:
				amt_param_set("mode", rand_r(&seed) % 2 ?
					      "self" : "reaper");
				flips++;
				break;
			case 2:
				amt_drain(5000);
				drains++;
				break;
			default:
				break;
			}
		}
		/* the point: unload while exits are being deferred */
		err = unload_retrying();
		if (err) {
			printf("not ok - soak # cycle %u: rmmod: %s\n", cycle,
			       strerror(err));
			goto out;
		}
		if (!pause_workers())
			goto out;
		now = mem_back(base);
		if (now < base - MEM_TOL_KB) {
			printf("not ok - soak # cycle %u: memory not back: %ld kB, before the soak %ld kB\n",
			       cycle, now, base);
			goto out;
		}
		printf("# cycle %u (%.0f s): %ld large and %ld small exits so far, memory back (%+ld kB)\n",
		       cycle, (amt_now_ns() - t0) / 1e9, sh->large, sh->small,
		       now - base);
		resume_workers();
	}
	printf("ok - soak: %u load/unload cycles, %u flips, %u drains in %.0f s under %ld large and %ld small exits; memory back after every cycle\n",
	       cycle, flips, drains, (amt_now_ns() - t0) / 1e9, sh->large,
	       sh->small);
	err = 0;
	goto stop;
out:
	err = 1;
stop:
	/* idle workers have no children left to orphan (else: the end anyway) */
	if (!pause_workers())
		err = 1;
	for (w = 0; w < NR_WORKERS; w++)
		kill(workers[w], SIGKILL);
	for (w = 0; w < NR_WORKERS; w++)
		waitpid(workers[w], NULL, 0);
	return err;
}
