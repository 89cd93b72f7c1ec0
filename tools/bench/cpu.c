// SPDX-License-Identifier: GPL-2.0
/*
 * exit_latency section 4, cpu: CPU of the exit path per teardown, drained
 * and back-to-back (feeds section 5, drain).
 */
#include "bench.h"

const char *cpu_cg = "/sys/fs/cgroup/bench_cpu";

static uint64_t cg_usage_ns(void)
{
	return amt_cgroup_get(cpu_cg, "cpu.stat", "usage_usec") * 1000ULL;
}


/*
 * Drained: each child's exit path measured alone, from the kill until
 * everything it queued is torn down, as the CPU its cgroup used plus the
 * reaper's and the zap helpers' (kworkers, root cgroup). Self mode's
 * teardown runs after the parent reaped the child, in the child's cgroup,
 * so the cgroup is the meter of the tearing task in all modes.
 */
static struct cpu_res cpu_drained(enum cfg c, int n, unsigned long mb)
{
	uint64_t cg = 0, rp = 0, hp = 0;
	long pre = 0, mig = 0;
	struct cpu_res r;
	int i;

	set_cfg(c);
	for (i = 0; i < n; i++) {
		pid_t pid = amt_hog(mb, AMT_HOG_ANON);
		uint64_t u0 = cg_usage_ns(), r0 = reaper_cpu_ns();
		uint64_t h0 = helper_cpu_ns();
		long p0 = reaper_preemptions(), m0 = reaper_migrations();

		kill(pid, SIGKILL);
		amt_reap(pid);
		settle();
		cg += cg_usage_ns() - u0;
		rp += reaper_cpu_ns() - r0;
		hp += helper_cpu_ns() - h0;
		pre += reaper_preemptions() - p0;
		mig = m0 < 0 || mig < 0 ? -1 : mig + reaper_migrations() - m0;
	}
	r.child_ms = cg / 1e6 / n;
	r.reaper_ms = rp / 1e6 / n;
	r.helper_ms = hp / 1e6 / n;
	r.preempted = (double)pre / n;
	r.migrated = mig < 0 ? -1 : (double)mig / n;
	return r;
}

/*
 * Back-to-back: the next child allocates while the previous teardown may
 * still run. Per child: its CPU at reap (wait4) minus before the kill; the
 * reaper's over the whole window. Self mode is left out: its teardown is
 * not in wait4's figure and the cgroup would mix in the allocations.
 */
static struct cpu_res cpu_overlap(enum cfg c, int n, unsigned long mb)
{
	uint64_t ex = 0, r0, h0;
	struct cpu_res r;
	long p0, m0;
	int i;

	set_cfg(c);
	r0 = reaper_cpu_ns();
	h0 = helper_cpu_ns();
	p0 = reaper_preemptions();
	m0 = reaper_migrations();
	for (i = 0; i < n; i++) {
		pid_t pid = amt_hog(mb, AMT_HOG_ANON);
		uint64_t before = task_cpu_ns(pid);
		struct rusage ru;
		int st;

		kill(pid, SIGKILL);
		while (wait4(pid, &st, 0, &ru) < 0 && errno == EINTR)
			;
		amt_reap(pid);	/* forget it in the library */
		ex += (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
		      (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL - before;
	}
	settle();
	r.child_ms = ex / 1e6 / n;
	r.reaper_ms = (reaper_cpu_ns() - r0) / 1e6 / n;
	r.helper_ms = (helper_cpu_ns() - h0) / 1e6 / n;
	r.preempted = (double)(reaper_preemptions() - p0) / n;
	r.migrated = m0 < 0 ? -1 : (double)(reaper_migrations() - m0) / n;
	return r;
}

/* The CPU per teardown of mode @c in @r, relative to sync's. */
double cpu_ratio(const struct cpu_res *r, enum cfg c)
{
	return (r[c].child_ms + r[c].reaper_ms + r[c].helper_ms) /
	       (r[SYNC].child_ms + r[SYNC].reaper_ms + r[SYNC].helper_ms);
}

void bench_cpu(struct results *res)
{
	struct cpu_result *r = &res->cpu;
	const unsigned long mb = 256;
	int n = quick ? 2 : 8, round, nr = quick ? 1 : 3, c;
	struct cpu_res *d = r->drained, *o = r->overlap;
	char path[256];

	if (amt_cgroup_create("bench_cpu", 0, path, sizeof(path)))
		die("cannot create %s", cpu_cg);
	amt_hog_cgroup = cpu_cg;
	fprintf(stderr, "# cpu: %d rounds\n", nr);
	for (round = 0; round < nr; round++) {
		for (c = 0; c < NR_CFG; c++) {
			enum cfg k = (round + c) % NR_CFG;
			struct cpu_res x = cpu_drained(k, n, mb);

			d[k].child_ms += x.child_ms / nr;
			d[k].reaper_ms += x.reaper_ms / nr;
			d[k].helper_ms += x.helper_ms / nr;
			d[k].preempted += x.preempted / nr;
			d[k].migrated += x.migrated / nr;
		}
		for (c = 0; c < 2; c++) {
			enum cfg k = (round + c) % 2 ? REAPER : SYNC;
			struct cpu_res x = cpu_overlap(k, n, mb);

			o[k].child_ms += x.child_ms / nr;
			o[k].reaper_ms += x.reaper_ms / nr;
			o[k].helper_ms += x.helper_ms / nr;
			o[k].preempted += x.preempted / nr;
			o[k].migrated += x.migrated / nr;
		}
	}
	amt_hog_cgroup = NULL;
	rmdir(cpu_cg);

	r->mb = mb;
	r->n = n;
	r->rounds = nr;
	r->gib = nr * n * mb / 1024.0;
	r->cpu_s = nr * n * (d[REAPER].reaper_ms + d[REAPER].helper_ms) / 1e3;
}
