// SPDX-License-Identifier: GPL-2.0
/* exit_latency: what every section uses (bench.h). */
#include "bench.h"

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "exit_latency: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}


/* Nearest-rank percentiles of @n samples in ns, reported in ms. */
struct dist dist_of(const uint64_t *in, int n)
{
	uint64_t v[MAX_SAMPLES * 4];
	struct dist d = { .n = n };

	if (!n)
		return d;
	memcpy(v, in, n * sizeof(*v));
	qsort(v, n, sizeof(*v), cmp_u64);
#define PCT(p) (v[(int)ceil((p) / 100.0 * n) - 1] / 1e6)
	d.med = n % 2 ? v[n / 2] / 1e6 : (v[n / 2 - 1] + v[n / 2]) / 2e6;
	d.p10 = PCT(10);
	d.p90 = PCT(90);
	d.p99 = PCT(99);
#undef PCT
	d.min = v[0] / 1e6;
	d.max = v[n - 1] / 1e6;
	return d;
}

/* Nothing queued, nothing in flight, memory back: a clean start. */
void settle(void)
{
	int err = amt_loaded() ? amt_drain(120000) : 0;

	if (err)
		die("drain failed: %s", strerror(err));
	usleep(20000);
}

void set_cfg(enum cfg c)
{
	settle();
	if (!amt_loaded() && amt_load(cap_param))
		die("insmod failed");
	if (c == SYNC) {
		amt_param_set("enabled", "0");
		return;
	}
	if (amt_param_set("mode", c == SELF ? "self" : "reaper"))
		die("cannot set mode=%s (the kernel log says why); only the sections busy and prefork run without it",
		    cfg_name[c]);
	amt_param_set("enabled", "1");
}

/* Can this kernel run configuration @c (mode=self may be refused)? */
bool cfg_available(enum cfg c)
{
	bool ok;

	if (c != SELF)
		return true;
	settle();
	if (!amt_loaded() && amt_load(cap_param))
		die("insmod failed");
	ok = !amt_param_set("mode", "self");
	amt_param_set("mode", "reaper");
	return ok;
}

/* The CPU a task runs or last ran on (/proc/PID/stat field 39). */
int task_cpu_of(pid_t pid)
{
	char path[64], buf[1024], *p;
	int field = 2;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (amt_read_file(path, buf, sizeof(buf)) <= 0)
		die("%s unreadable", path);
	p = strrchr(buf, ')');	/* the name may hold spaces */
	while (p && field < 39) {
		p = strchr(p + 1, ' ');
		field++;
	}
	if (!p)
		die("%s: no processor field", path);
	return atoi(p + 1);
}

/* A task's CPU time so far (schedstat), in ns. */
uint64_t task_cpu_ns(pid_t pid)
{
	char path[64], buf[128];

	snprintf(path, sizeof(path), "/proc/%d/schedstat", pid);
	if (amt_read_file(path, buf, sizeof(buf)) <= 0)
		die("%s unreadable", path);
	return strtoull(buf, NULL, 10);
}


/* The mm_reaper threads' pids (the module may run several), up to @max. */
int reaper_pids(pid_t *pids, int max)
{
	char path[300], comm[32];
	struct dirent *e;
	DIR *d;
	int n = 0;

	if (!amt_loaded() || !(d = opendir("/proc")))
		return 0;
	while (n < max && (e = readdir(d))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		if (amt_read_file(path, comm, sizeof(comm)) > 0 &&
		    !strcmp(comm, "mm_reaper\n"))
			pids[n++] = atoi(e->d_name);
	}
	closedir(d);
	return n;
}

/* The mm_reaper threads' together, 0 if the module is not loaded. */
uint64_t reaper_cpu_ns(void)
{
	pid_t pids[MAX_REAPERS];
	int i, n = reaper_pids(pids, MAX_REAPERS);
	uint64_t sum = 0;

	for (i = 0; i < n; i++)
		sum += task_cpu_ns(pids[i]);
	return sum;
}

/* The parallel zap's helpers' (zap_helper_ns), 0 if the module is not loaded */
uint64_t helper_cpu_ns(void)
{
	long ns = amt_stat("zap_helper_ns");

	return ns > 0 ? ns : 0;
}

/*
 * The sum of the numbers after @key's colon in the reaper threads'
 * /proc/PID/@file, -1 if the module is not loaded or a file has no such
 * line.
 */
static long reaper_proc_field(const char *file, const char *key)
{
	pid_t pids[MAX_REAPERS];
	int i, n = reaper_pids(pids, MAX_REAPERS);
	char path[64], buf[8192], *p;
	long sum = 0;

	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/proc/%d/%s", pids[i], file);
		if (amt_read_file(path, buf, sizeof(buf)) <= 0)
			return -1;
		p = strstr(buf, key);
		p = p ? strchr(p, ':') : NULL;
		if (!p)
			return -1;
		sum += strtol(p + 1, NULL, 10);
	}
	return n ? sum : -1;
}

/* How often the reaper was preempted so far, 0 if unknown. */
long reaper_preemptions(void)
{
	long n = reaper_proc_field("status", "nonvoluntary_ctxt_switches");

	return n < 0 ? 0 : n;
}

/*
 * How often the reaper moved to another CPU so far, -1 where the kernel
 * does not say (/proc/PID/sched needs CONFIG_SCHED_DEBUG before 6.16).
 */
long reaper_migrations(void)
{
	return reaper_proc_field("sched", "se.nr_migrations");
}

static void file_body(void *arg)
{
	amt_map_tmpfs("/tmp/bench-file", (unsigned long)arg, true);
}

pid_t spawn(unsigned long mb, enum kind k)
{
	switch (k) {
	case K_ANON:
		return amt_hog(mb, AMT_HOG_ANON);
	case K_THP:
		return amt_hog(mb, AMT_HOG_THP);
	case K_SHMEM:
		return amt_hog(mb, AMT_HOG_SHMEM);
	default:
		return amt_hog_fn(file_body, (void *)mb);
	}
}

/* Time from @t0 until the dead children's memory is back (see the lib). */
uint64_t wait_mem_back(long base_kb, uint64_t t0)
{
	uint64_t ns = amt_mem_back_ns(base_kb, MEM_TOL_KB, t0, 120);

	if (!ns)
		die("memory did not come back in 120 s");
	return ns;
}

/* Not recorded: programs paged in, every configuration's path taken once. */
void warm_up(void)
{
	enum cfg c;

	for (c = 0; c < NR_CFG; c++) {
		pid_t pid;

		set_cfg(c);
		pid = spawn(256, K_ANON);
		kill(pid, SIGKILL);
		amt_reap(pid);
		settle();
	}
}

/* Student's t, two-sided 95%, for @df degrees of freedom. */
double t95(int df)
{
	static const double t[] = { 12.71, 4.30, 3.18, 2.78, 2.57, 2.45, 2.36,
		2.31, 2.26, 2.23, 2.20, 2.18, 2.16, 2.14, 2.13, 2.12, 2.11,
		2.10, 2.09, 2.09, 2.08, 2.07, 2.07, 2.06, 2.06, 2.06, 2.05,
		2.05, 2.05, 2.04 };

	return df < 1 ? NAN : df <= 30 ? t[df - 1] : 2.0;
}


struct ci ci_of(const double *v, int n)
{
	double s = 0, ss = 0, h;
	struct ci r;
	int i;

	for (i = 0; i < n; i++)
		s += v[i];
	r.mean = s / n;
	for (i = 0; i < n; i++)
		ss += (v[i] - r.mean) * (v[i] - r.mean);
	h = n > 1 ? t95(n - 1) * sqrt(ss / (n - 1)) / sqrt(n) : NAN;
	r.lo = r.mean - h;
	r.hi = r.mean + h;
	return r;
}
