// SPDX-License-Identifier: GPL-2.0
/*
 * exit_latency section 7, cpusplit: where the reaper's extra CPU goes when
 * teardowns run back-to-back.
 */
#include "bench.h"

/* Pin @pid (0: the caller) to @cpu, or let it run anywhere (-1). */
static void pin(pid_t pid, int cpu)
{
	long i, n = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	CPU_ZERO(&set);
	for (i = 0; i < n; i++)
		if (cpu < 0 || i == cpu)
			CPU_SET(i, &set);
	if (sched_setaffinity(pid, sizeof(set), &set))
		die("sched_setaffinity(%d, CPU %d): %s", pid, cpu,
		    strerror(errno));
}

/* Every mm_reaper thread to @cpu (-1: anywhere). */
static void pin_reapers(int cpu)
{
	pid_t pids[MAX_REAPERS];
	int i, n = reaper_pids(pids, MAX_REAPERS);

	for (i = 0; i < n; i++)
		pin(pids[i], cpu);
}

/* Spins on CPU 0 at nice 19, the reaper's own weight: they take turns. */
static pid_t cpu0_spinner(void)
{
	pid_t pid = fork();

	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (!pid) {
		pin(0, 0);
		if (setpriority(PRIO_PROCESS, 0, 19))
			_exit(1);
		amt_write_file("/proc/self/oom_score_adj", "-1000");
		for (;;)
			;
	}
	return pid;
}

/* What a run adds to the reaper's teardowns (0: nothing); struct split_result's index. */
enum { SPLIT_SPIN = 1, SPLIT_ALLOC = 2 };

/*
 * The reaper on CPU 0 tears down @n children of @mb MiB killed one after
 * another by the parent on CPU 1. SPLIT_ALLOC: the next child allocates
 * (on CPU 1) right after the kill, while the teardown runs; otherwise
 * after it. SPLIT_SPIN: a nice 19 spinner shares CPU 0 all along.
 */
static struct cpu_res cpu_split_one(unsigned int how, int n, unsigned long mb)
{
	struct cpu_res r = { 0 };
	pid_t pid, spinner = 0;
	uint64_t r0;
	long p0;
	int i;

	set_cfg(REAPER);
	pin_reapers(0);
	pid = amt_hog(mb, AMT_HOG_ANON);
	if (how & SPLIT_SPIN)
		spinner = cpu0_spinner();
	r0 = reaper_cpu_ns();
	p0 = reaper_preemptions();
	for (i = 0; i < n; i++) {
		kill(pid, SIGKILL);
		amt_reap(pid);
		if (!(how & SPLIT_ALLOC))
			settle();
		if (i + 1 < n)
			pid = amt_hog(mb, AMT_HOG_ANON);
	}
	settle();
	r.reaper_ms = (reaper_cpu_ns() - r0) / 1e6 / n;
	r.preempted = (double)(reaper_preemptions() - p0) / n;
	if (spinner) {
		kill(spinner, SIGKILL);
		waitpid(spinner, NULL, 0);
	}
	return r;
}

void bench_cpusplit(struct results *res)
{
	struct split_result *r = &res->cpusplit;
	const unsigned long mb = 256;
	int n = quick ? 2 : 8, nr = quick ? 1 : 3, round, c;
	struct cpu_res *s = r->s;

	r->mb = mb;
	r->n = n;
	r->rounds = nr;
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		r->skipped = true;
		return;
	}
	pin(0, 1);
	fprintf(stderr, "# cpusplit: %d rounds\n", nr);
	for (round = 0; round < nr; round++)
		for (c = 0; c < NR_SPLIT; c++) {
			unsigned int k = (round + c) % NR_SPLIT;
			struct cpu_res x = cpu_split_one(k, n, mb);

			s[k].reaper_ms += x.reaper_ms / nr;
			s[k].preempted += x.preempted / nr;
		}
	pin(0, -1);
	pin_reapers(-1);
}
