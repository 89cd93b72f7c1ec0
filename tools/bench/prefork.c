// SPDX-License-Identifier: GPL-2.0
/*
 * exit_latency section 9, prefork: a prefork server keeps PREFORK_WORKERS
 * workers and, without pause, kills the oldest, reaps it and forks its
 * replacement, while a CPU burner runs on every CPU: the fork() latencies,
 * and the respawn (from the kill to the replacement's fork() returning).
 * The server maps one region before any fork and touches its first
 * PREFORK_BASE_MB, so every worker's pages, written into the inherited
 * part, hang off anon_vmas under the server's root: a dying worker's
 * teardown write-locks that root (unlink_anon_vmas()) and the binary's
 * i_mmap (free_pgtables()), both of which the next fork() takes in
 * dup_mmap(). A teardown preempted while holding one shows here.
 */
#include <sys/prctl.h>
#include "bench.h"

#define PREFORK_WORKERS 3
#define PREFORK_BASE_MB 64UL

/* Fork a worker that writes its PREFORK_MB, and wait until it has. */
static pid_t worker_start(char *mem, uint64_t *fork_ns)
{
	uint64_t t0;
	pid_t pid;
	int p[2];
	char ch;

	if (pipe(p))
		die("pipe: %s", strerror(errno));
	t0 = amt_now_ns();
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(p[0]);
		memset(mem + (PREFORK_BASE_MB << 20), 1, PREFORK_MB << 20);
		if (write(p[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	*fork_ns = amt_now_ns() - t0;
	close(p[1]);
	if (read(p[0], &ch, 1) != 1)
		die("a prefork worker died before it was ready");
	close(p[0]);
	return pid;
}

/* Kill and reap: the ns from the kill to the end of waitpid(). */
static uint64_t worker_stop(pid_t pid)
{
	uint64_t t0 = amt_now_ns();

	kill(pid, SIGKILL);
	if (waitpid(pid, NULL, 0) != pid)
		die("waitpid(%d): %s", pid, strerror(errno));
	return amt_now_ns() - t0;
}

/* @n forks, each right after a worker was killed and reaped */
static void prefork_round(enum cfg c, char *mem, uint64_t *lat,
			  uint64_t *respawn, int n, long *queued)
{
	pid_t w[PREFORK_WORKERS], b[AMT_BURNERS];
	uint64_t unused;
	long q0;
	int i;

	set_cfg(c);
	for (i = 0; i < PREFORK_WORKERS; i++)
		w[i] = worker_start(mem, &unused);
	amt_burners_start(b);
	q0 = amt_stat("queued");
	for (i = 0; i < n; i++) {
		respawn[i] = worker_stop(w[i % PREFORK_WORKERS]);
		w[i % PREFORK_WORKERS] = worker_start(mem, &lat[i]);
		respawn[i] += lat[i];
	}
	*queued += amt_stat("queued") - q0;
	amt_burners_stop(b);
	for (i = 0; i < PREFORK_WORKERS; i++)
		worker_stop(w[i]);
}

void bench_prefork(struct results *res)
{
	struct prefork_result *r = &res->prefork;
	size_t len = (PREFORK_BASE_MB + PREFORK_MB) << 20;
	uint64_t lat[NR_CFG][MAX_SAMPLES * 4], respawn[NR_CFG][MAX_SAMPLES * 4];
	int j, c, round, n = quick ? 2 : (rounds + 1) / 2 + 1;
	int per = quick ? 6 : PREFORK_FORKS;
	char *mem;

	/* dist_of() takes MAX_SAMPLES * 4 */
	if (per > MAX_SAMPLES * 4 / n)
		per = MAX_SAMPLES * 4 / n;

	r->n = n;
	r->forks = per;
	r->workers = PREFORK_WORKERS;
	r->base_mb = PREFORK_BASE_MB;
	for (c = 0; c < NR_CFG; c++)
		r->have[c] = cfg_available(c);
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		die("mmap %zu: %s", len, strerror(errno));
	/* base pages, as the other sections' children have (THP off) */
	madvise(mem, len, MADV_NOHUGEPAGE);
	/* the anon_vma root every worker's pages hang off */
	memset(mem, 1, PREFORK_BASE_MB << 20);
	for (round = 0; round < n; round++)
		for (j = 0; j < NR_CFG; j++) {
			c = (round + j) % NR_CFG;
			if (r->have[c])
				prefork_round(c, mem, lat[c] + round * per,
					      respawn[c] + round * per, per,
					      &r->queued[c]);
		}
	munmap(mem, len);
	for (c = 0; c < NR_CFG; c++)
		if (r->have[c]) {
			r->fork[c] = dist_of(lat[c], n * per);
			r->respawn[c] = dist_of(respawn[c], n * per);
		}
	settle();
}
