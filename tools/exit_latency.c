// SPDX-License-Identifier: GPL-2.0
/*
 * exit_latency: the benchmark of make bench. Runs in the guest (static),
 * with the module at /amt/async_mm_teardown.ko.
 *
 *	exit_latency [--rounds N] [--json FILE] [--plot FILE] [--quick]
 *		     [--only=SECTION[,SECTION...]] [--spawn-only]
 *		     [--spawn-settle MS]
 *
 * Compares three configurations A/B/C-interleaved within one boot, the
 * order rotating every round: "sync" (the module loaded, enabled=0: the
 * kernel's own exit path; the hook's cost is measured separately below),
 * "reaper" (enabled=1 mode=reaper) and "self" (enabled=1 mode=self).
 *
 *  1. latency: kill->waitpid() of a child holding N MiB, for N from 8 MiB
 *     (the floor) up to what the guest allows, THP off and on, shmem and
 *     a mapped tmpfs file, and a voluntary _exit() at the largest size;
 *     for the large sizes also kill -> memory back (MemAvailable plus the
 *     per-CPU free lists within 16 MiB of the level before the child ran;
 *     see wait_mem_back());
 *  2. parallel: M children of 256 MiB killed together: time until all
 *     are reaped, and until their memory is back;
 *  3. spawn: fork+exec+wait and fork+_exit loops with the module not
 *     loaded vs loaded (each mode); per-round ratios, mean and 95% CI;
 *  4. cpu: CPU of the exit path per teardown (the child's cgroup, plus the
 *     mm_reaper threads' schedstat in reaper mode), drained after each
 *     kill, and back-to-back (each child allocates while the previous
 *     one's teardown may still run);
 *  5. drain: GiB torn down per second of reaper CPU, from 2. and 4.;
 *  6. wake: on which CPU the parent wakes from waitpid(), the child's or
 *     another, and the latency in each case (in self mode the child goes
 *     on tearing down after it woke the parent);
 *  7. cpusplit: where the reaper's extra CPU back-to-back goes: the
 *     reaper's CPU per teardown with a task sharing its CPU, with the next
 *     child allocating on the other CPU, both, or neither.
 *
 * --only runs the named sections alone (latency, parallel, spawn, cpu,
 * wake, cpusplit; 5. comes with 2. and 4.). --spawn-only is --only=spawn: make
 * bench-icount runs it under QEMU's -icount, where guest time counts
 * instructions and host noise vanishes. --spawn-settle is the idle time
 * after each insmod or rmmod of 3. before its loops are timed (default
 * 300 ms; make bench-icount, where idle time costs no host time, uses
 * 12 s: right after boot the loops ran at half speed for a while, see
 * docs/benchmarks.md).
 *
 * Prints a human table on stdout, writes the same as JSON to the --json
 * FILE and the latency medians by size (anonymous memory, THP off, kill)
 * as gnuplot data to the --plot FILE.
 * The figures are only comparable within one run (one boot).
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include "../tests/guest/lib/amt_test.h"

enum cfg { SYNC, REAPER, SELF, NR_CFG };
static const char *const cfg_name[NR_CFG] = { "sync", "reaper", "self" };

enum kind { K_ANON, K_THP, K_SHMEM, K_FILE };
static const char *const kind_name[] = { "anon", "thp", "shmem", "file" };

#define MAX_SAMPLES 64
#define MEM_TOL_KB (16 * 1024)

static int rounds = 7;
static bool quick;
static int spawn_settle_ms = 300;
/* --only: the sections to run (make bench-icount: spawn alone) */
enum section {
	S_LATENCY, S_PARALLEL, S_SPAWN, S_CPU, S_WAKE, S_CPUSPLIT, NR_SECTIONS
};
static const char *const section_name[NR_SECTIONS] = {
	"latency", "parallel", "spawn", "cpu", "wake", "cpusplit"
};
#define ALL_SECTIONS ((1U << NR_SECTIONS) - 1)
static unsigned int sections = ALL_SECTIONS;
#define RUNS(sec) (sections & (1U << (sec)))
static FILE *json;
static int json_items;		/* items in the open JSON array */
static unsigned long mem_total_mb;
static char cap_param[64];

/* ---- helpers ---- */

static void die(const char *fmt, ...)
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

struct dist {
	int n;
	double med, p10, p90, p99, min, max;	/* ms */
};

/* Nearest-rank percentiles of @n samples in ns, reported in ms. */
static struct dist dist_of(const uint64_t *in, int n)
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

static void json_dist(const char *key, const struct dist *d)
{
	fprintf(json, "\"%s\": {\"n\": %d, \"median_ms\": %.3f, \"p10_ms\": %.3f, "
		"\"p90_ms\": %.3f, \"p99_ms\": %.3f, \"min_ms\": %.3f, \"max_ms\": %.3f}",
		key, d->n, d->med, d->p10, d->p90, d->p99, d->min, d->max);
}

static void json_array(const char *key)
{
	fprintf(json, ",\n\"%s\": [", key);
	json_items = 0;
}

static void json_item(void)
{
	fprintf(json, "%s\n  {", json_items++ ? "," : "");
}

/* Nothing queued, nothing in flight, memory back: a clean start. */
static void settle(void)
{
	int err = amt_loaded() ? amt_drain(120000) : 0;

	if (err)
		die("drain failed: %s", strerror(err));
	usleep(20000);
}

static void set_cfg(enum cfg c)
{
	settle();
	if (!amt_loaded() && amt_load(cap_param))
		die("insmod failed");
	if (c == SYNC) {
		amt_param_set("enabled", "0");
		return;
	}
	if (amt_param_set("mode", c == SELF ? "self" : "reaper"))
		die("cannot set mode=%s", cfg_name[c]);
	amt_param_set("enabled", "1");
}

/* A task's CPU time so far (schedstat), in ns. */
static uint64_t task_cpu_ns(pid_t pid)
{
	char path[64], buf[128];

	snprintf(path, sizeof(path), "/proc/%d/schedstat", pid);
	if (amt_read_file(path, buf, sizeof(buf)) <= 0)
		die("%s unreadable", path);
	return strtoull(buf, NULL, 10);
}

#define MAX_REAPERS 16

/* The mm_reaper threads' pids (the module may run several), up to @max. */
static int reaper_pids(pid_t *pids, int max)
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
static uint64_t reaper_cpu_ns(void)
{
	pid_t pids[MAX_REAPERS];
	int i, n = reaper_pids(pids, MAX_REAPERS);
	uint64_t sum = 0;

	for (i = 0; i < n; i++)
		sum += task_cpu_ns(pids[i]);
	return sum;
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
static long reaper_preemptions(void)
{
	long n = reaper_proc_field("status", "nonvoluntary_ctxt_switches");

	return n < 0 ? 0 : n;
}

/*
 * How often the reaper moved to another CPU so far, -1 where the kernel
 * does not say (/proc/PID/sched needs CONFIG_SCHED_DEBUG before 6.16).
 */
static long reaper_migrations(void)
{
	return reaper_proc_field("sched", "se.nr_migrations");
}

static void file_body(void *arg)
{
	amt_map_tmpfs("/tmp/bench-file", (unsigned long)arg, true);
}

static pid_t spawn(unsigned long mb, enum kind k)
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
static uint64_t wait_mem_back(long base_kb, uint64_t t0)
{
	uint64_t ns = amt_mem_back_ns(base_kb, MEM_TOL_KB, t0, 120);

	if (!ns)
		die("memory did not come back in 120 s");
	return ns;
}

/* Not recorded: programs paged in, every configuration's path taken once. */
static void warm_up(void)
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

/* ---- 1. latency ---- */

struct lat_row {
	enum kind kind;
	unsigned long mb;
	bool voluntary;
	int n;
	uint64_t lat[NR_CFG][MAX_SAMPLES];
	uint64_t back[NR_CFG][MAX_SAMPLES];	/* 0: not measured */
};

static void one_exit(struct lat_row *r, enum cfg c, int i)
{
	bool back = r->mb >= 256;
	long base = back ? amt_mem_back_kb() : 0;
	pid_t pid = spawn(r->mb, r->kind);
	uint64_t t0;

	t0 = amt_now_ns();
	if (r->voluntary)
		amt_hog_exit(pid);
	else
		kill(pid, SIGKILL);
	amt_reap(pid);
	r->lat[c][i] = amt_now_ns() - t0;
	r->back[c][i] = back ? wait_mem_back(base, t0) : 0;
}

static void print_lat_header(void)
{
	printf("\n1. kill->waitpid() latency, ms: median (p90 / p99); memory back = kill until the memory is free again\n");
	printf("%-6s %6s %-4s | %-22s | %-22s | %-22s | %9s %9s\n", "kind",
	       "MiB", "exit", "sync", "reaper", "self", "sync/reap",
	       "sync/self");
}

static void report_lat(struct lat_row *r)
{
	struct dist d[NR_CFG], b[NR_CFG];
	int c;

	for (c = 0; c < NR_CFG; c++) {
		d[c] = dist_of(r->lat[c], r->n);
		b[c] = dist_of(r->back[c], r->back[c][0] ? r->n : 0);
	}
	printf("%-6s %6lu %-4s |", kind_name[r->kind], r->mb,
	       r->voluntary ? "exit" : "kill");
	for (c = 0; c < NR_CFG; c++)
		printf(" %7.1f (%5.1f / %5.1f) |", d[c].med, d[c].p90, d[c].p99);
	printf(" %8.0fx %8.0fx\n", d[SYNC].med / d[REAPER].med,
	       d[SYNC].med / d[SELF].med);
	if (b[SYNC].n)
		printf("%-17s | %7.1f               | %7.1f               | %7.1f               | %8.2fx %8.2fx\n",
		       "  memory back", b[SYNC].med, b[REAPER].med,
		       b[SELF].med, b[REAPER].med / b[SYNC].med,
		       b[SELF].med / b[SYNC].med);
	json_item();
	fprintf(json, "\"kind\": \"%s\", \"size_mb\": %lu, \"exit\": \"%s\"",
		kind_name[r->kind], r->mb, r->voluntary ? "exit" : "kill");
	for (c = 0; c < NR_CFG; c++) {
		fprintf(json, ",\n   \"%s\": {", cfg_name[c]);
		json_dist("latency", &d[c]);
		if (b[c].n) {
			fprintf(json, ", ");
			json_dist("memory_back", &b[c]);
		}
		fprintf(json, "}");
	}
	fprintf(json, "}");
}

static struct lat_row *lat_rows;
static int nr_lat_rows;

static void add_row(enum kind k, unsigned long mb, bool voluntary)
{
	struct lat_row *r;

	lat_rows = realloc(lat_rows, (nr_lat_rows + 1) * sizeof(*r));
	r = &lat_rows[nr_lat_rows++];
	memset(r, 0, sizeof(*r));
	r->kind = k;
	r->mb = mb;
	r->voluntary = voluntary;
	/* small sizes are quick: more samples for their tails */
	r->n = mb <= 64 ? 3 * rounds : rounds;
	if (r->n > MAX_SAMPLES)
		r->n = MAX_SAMPLES;
}

static void bench_latency(void)
{
	static const unsigned long sizes[] = { 8, 64, 256, 1024, 2048, 4096 };
	unsigned long big = 0;
	int i, j, k, c, round;

	for (k = K_ANON; k <= K_THP; k++)
		for (i = 0; i < 6; i++) {
			/* leave room: the child, page tables, the guest */
			if (sizes[i] > mem_total_mb / 2 || (quick && sizes[i] > 256))
				continue;
			add_row(k, sizes[i], false);
			big = sizes[i];
		}
	add_row(K_ANON, big, true);
	add_row(K_SHMEM, quick ? 256 : 1024, false);
	add_row(K_FILE, quick ? 256 : 1024, false);

	warm_up();
	for (round = 0; round < 3 * rounds; round++) {
		fprintf(stderr, "# latency: round %d of %d\n", round + 1, 3 * rounds);
		for (j = 0; j < NR_CFG; j++) {
			c = (round + j) % NR_CFG;
			set_cfg(c);
			for (i = 0; i < nr_lat_rows; i++) {
				if (round >= lat_rows[i].n)
					continue;
				one_exit(&lat_rows[i], c, round);
				settle();
			}
		}
	}
	print_lat_header();
	json_array("latency");
	for (i = 0; i < nr_lat_rows; i++)
		report_lat(&lat_rows[i]);
	fprintf(json, "]");
}

/* ---- 2. parallel exits ---- */

static double drain_gib, drain_cpu_s;	/* reaper-mode totals for 5. */
static struct dist par_tail[NR_CFG], par_back[NR_CFG];	/* M = 8 */
static bool have_par8;

static void bench_parallel(void)
{
	static const int ms[] = { 4, 8, 16 };
	const unsigned long mb = 256;
	uint64_t tail[NR_CFG][MAX_SAMPLES], back[NR_CFG][MAX_SAMPLES];
	int i, c, j, round, n = quick ? 2 : (rounds + 1) / 2 + 1;

	printf("\n2. M children of %lu MiB killed together, ms: all reaped; memory back (median of %d)\n",
	       mb, n);
	printf("%-4s | %-19s | %-19s | %-19s | %-19s\n", "M", "sync",
	       "reaper", "self", "reaper/sync, self/sync");
	json_array("parallel");
	for (i = 0; i < 3; i++) {
		int m = ms[i];
		struct dist t[NR_CFG], b[NR_CFG];

		if (m * mb > mem_total_mb * 6 / 10 || m > 32) {
			printf("%-4d | skipped: %lu MiB does not fit this guest\n",
			       m, m * mb);
			continue;
		}
		fprintf(stderr, "# parallel: M = %d\n", m);
		for (round = 0; round < n; round++)
			for (j = 0; j < NR_CFG; j++) {
				pid_t pids[32];
				long base;
				uint64_t t0, cpu0 = 0;
				int k;

				c = (round + j) % NR_CFG;
				set_cfg(c);
				base = amt_mem_back_kb();
				for (k = 0; k < m; k++)
					pids[k] = amt_hog(mb, AMT_HOG_ANON);
				cpu0 = reaper_cpu_ns();
				t0 = amt_now_ns();
				for (k = 0; k < m; k++)
					kill(pids[k], SIGKILL);
				for (k = 0; k < m; k++)
					amt_reap(pids[k]);
				tail[c][round] = amt_now_ns() - t0;
				back[c][round] = wait_mem_back(base, t0);
				settle();
				if (c == REAPER) {
					drain_gib += m * mb / 1024.0;
					drain_cpu_s += (reaper_cpu_ns() - cpu0) / 1e9;
				}
			}
		for (c = 0; c < NR_CFG; c++) {
			t[c] = dist_of(tail[c], n);
			b[c] = dist_of(back[c], n);
			if (m == 8) {
				par_tail[c] = t[c];
				par_back[c] = b[c];
				have_par8 = true;
			}
		}
		printf("%-4d | %7.1f; %7.1f   | %7.1f; %7.1f   | %7.1f; %7.1f   | back %.2fx, %.2fx; tail 1/%.0f, 1/%.0f\n",
		       m, t[SYNC].med, b[SYNC].med, t[REAPER].med,
		       b[REAPER].med, t[SELF].med, b[SELF].med,
		       b[REAPER].med / b[SYNC].med, b[SELF].med / b[SYNC].med,
		       t[SYNC].med / t[REAPER].med, t[SYNC].med / t[SELF].med);
		json_item();
		fprintf(json, "\"m\": %d, \"size_mb\": %lu", m, mb);
		for (c = 0; c < NR_CFG; c++) {
			fprintf(json, ",\n   \"%s\": {", cfg_name[c]);
			json_dist("all_reaped", &t[c]);
			fprintf(json, ", ");
			json_dist("memory_back", &b[c]);
			fprintf(json, "}");
		}
		fprintf(json, "}");
	}
	fprintf(json, "]");
}

/* ---- 3. small-process cost ---- */

/* Iterations of @loop per second. */
static double spawn_rate(bool exec_it, int iters)
{
	uint64_t t0 = amt_now_ns();
	int i;

	for (i = 0; i < iters; i++) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork: %s", strerror(errno));
		if (!pid) {
			if (exec_it)
				execl("/proc/self/exe", "exit_latency",
				      "--exit0", (char *)NULL);
			_exit(0);
		}
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	return iters / ((amt_now_ns() - t0) / 1e9);
}

/* Student's t, two-sided 95%, for @df degrees of freedom. */
static double t95(int df)
{
	static const double t[] = { 12.71, 4.30, 3.18, 2.78, 2.57, 2.45, 2.36,
		2.31, 2.26, 2.23, 2.20, 2.18, 2.16, 2.14, 2.13, 2.12, 2.11,
		2.10, 2.09, 2.09, 2.08, 2.07, 2.07, 2.06, 2.06, 2.06, 2.05,
		2.05, 2.05, 2.04 };

	return df < 1 ? NAN : df <= 30 ? t[df - 1] : 2.0;
}

struct ci {
	double mean, lo, hi;
};

static struct ci ci_of(const double *v, int n)
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

/*
 * Configurations for the spawn loops: the module not loaded, loaded in
 * reaper mode, loaded in self mode (self mode hooks a second function).
 */
static const char *const spawn_cfg_name[3] = { "not loaded", "reaper", "self" };

static int set_spawn_cfg(int c)
{
	if (c == 0) {
		settle();
		return amt_loaded() ? amt_unload() : 0;
	}
	set_cfg(c == 1 ? REAPER : SELF);
	return 0;
}

static double spawn_ratio[2][2][MAX_SAMPLES];	/* [loop][reaper, self][round] */
static double spawn_base[2][MAX_SAMPLES];
static int spawn_n;

static void bench_spawn(void)
{
	static const char *const loop_name[2] = { "fork+exec+wait", "fork+_exit+wait" };
	int n = quick ? 3 : 3 * rounds, iters = quick ? 50 : 200;
	int round, j, l, c;

	if (n > MAX_SAMPLES)
		n = MAX_SAMPLES;
	spawn_n = n;
	fprintf(stderr, "# spawn: %d rounds\n", n);
	for (round = 0; round < n; round++) {
		double rate[3][2];

		for (j = 0; j < 3; j++) {
			c = (round + j) % 3;
			if (set_spawn_cfg(c))
				die("rmmod failed");
			/*
			 * Let the work an insmod or rmmod leaves behind
			 * (RCU callbacks, freeing the module, ftrace's
			 * trampoline) finish before the loop is timed.
			 */
			usleep(spawn_settle_ms * 1000);
			for (l = 0; l < 2; l++)
				rate[c][l] = spawn_rate(l == 0, iters);
		}
		/* per round, on the console log: where a spread comes from */
		fprintf(stderr, "# spawn round %d (first: %s): exec %.0f %.0f %.0f, _exit %.0f %.0f %.0f /s (not loaded, reaper, self)\n",
			round, spawn_cfg_name[round % 3],
			rate[0][0], rate[1][0], rate[2][0],
			rate[0][1], rate[1][1], rate[2][1]);
		for (l = 0; l < 2; l++) {
			spawn_base[l][round] = rate[0][l];
			spawn_ratio[l][0][round] = rate[1][l] / rate[0][l];
			spawn_ratio[l][1][round] = rate[2][l] / rate[0][l];
		}
	}
	printf("\n3. small processes: loaded rate / not-loaded rate, mean [95%% CI] over %d interleaved rounds of %d, %d ms idle after each (un)load\n",
	       n, iters, spawn_settle_ms);
	json_array("spawn");
	for (l = 0; l < 2; l++) {
		struct ci base = ci_of(spawn_base[l], n);
		struct ci r = ci_of(spawn_ratio[l][0], n);
		struct ci s = ci_of(spawn_ratio[l][1], n);

		printf("%-16s not loaded %7.0f/s | reaper %.4f [%.4f, %.4f] | self %.4f [%.4f, %.4f]\n",
		       loop_name[l], base.mean, r.mean, r.lo, r.hi, s.mean,
		       s.lo, s.hi);
		json_item();
		fprintf(json, "\"loop\": \"%s\", \"rounds\": %d, \"iterations\": %d, "
			"\"settle_ms\": %d, \"unloaded_per_s\": %.1f, "
			"\"reaper_ratio\": {\"mean\": %.4f, \"ci95\": [%.4f, %.4f]}, "
			"\"self_ratio\": {\"mean\": %.4f, \"ci95\": [%.4f, %.4f]}}",
			loop_name[l], n, iters, spawn_settle_ms, base.mean,
			r.mean, r.lo, r.hi,
			s.mean, s.lo, s.hi);
	}
	fprintf(json, "]");
}

/* ---- 4. CPU of the exit path ---- */

static const char *cpu_cg = "/sys/fs/cgroup/bench_cpu";

static uint64_t cg_usage_ns(void)
{
	return amt_cgroup_get(cpu_cg, "cpu.stat", "usage_usec") * 1000ULL;
}

struct cpu_res {
	double child_ms, reaper_ms;	/* per teardown */
	double preempted;		/* the reaper, per teardown */
	double migrated;		/* the reaper, per teardown; < 0: unknown */
};

/*
 * Drained: each child's exit path measured alone, from the kill until
 * everything it queued is torn down, as the CPU its cgroup used plus the
 * reaper's. Self mode's teardown runs after the parent reaped the child,
 * in the child's cgroup, so the cgroup is the one meter for all modes.
 */
static struct cpu_res cpu_drained(enum cfg c, int n, unsigned long mb)
{
	uint64_t cg = 0, rp = 0;
	long pre = 0, mig = 0;
	struct cpu_res r;
	int i;

	set_cfg(c);
	for (i = 0; i < n; i++) {
		pid_t pid = amt_hog(mb, AMT_HOG_ANON);
		uint64_t u0 = cg_usage_ns(), r0 = reaper_cpu_ns();
		long p0 = reaper_preemptions(), m0 = reaper_migrations();

		kill(pid, SIGKILL);
		amt_reap(pid);
		settle();
		cg += cg_usage_ns() - u0;
		rp += reaper_cpu_ns() - r0;
		pre += reaper_preemptions() - p0;
		mig = m0 < 0 || mig < 0 ? -1 : mig + reaper_migrations() - m0;
	}
	r.child_ms = cg / 1e6 / n;
	r.reaper_ms = rp / 1e6 / n;
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
	uint64_t ex = 0, r0;
	struct cpu_res r;
	long p0, m0;
	int i;

	set_cfg(c);
	r0 = reaper_cpu_ns();
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
	r.preempted = (double)(reaper_preemptions() - p0) / n;
	r.migrated = m0 < 0 ? -1 : (double)(reaper_migrations() - m0) / n;
	return r;
}

static struct cpu_res cpu_d[NR_CFG], cpu_o[2];

/* Reaper mode: how often the reaper lost its CPU mid-teardown. */
static const char *preempted_note(const struct cpu_res *r, enum cfg c)
{
	static char buf[96];

	if (c != REAPER)
		return "";
	if (r->migrated < 0)
		snprintf(buf, sizeof(buf), ", reaper preempted %.1fx per teardown",
			 r->preempted);
	else
		snprintf(buf, sizeof(buf), ", reaper preempted %.1fx, migrated %.1fx per teardown",
			 r->preempted, r->migrated);
	return buf;
}

static double cpu_ratio(const struct cpu_res *r, enum cfg c)
{
	return (r[c].child_ms + r[c].reaper_ms) /
	       (r[SYNC].child_ms + r[SYNC].reaper_ms);
}

static void bench_cpu(void)
{
	const unsigned long mb = 256;
	int n = quick ? 2 : 8, round, nr = quick ? 1 : 3, c;
	struct cpu_res *d = cpu_d, *o = cpu_o;
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
			d[k].preempted += x.preempted / nr;
			d[k].migrated += x.migrated / nr;
		}
		for (c = 0; c < 2; c++) {
			enum cfg k = (round + c) % 2 ? REAPER : SYNC;
			struct cpu_res x = cpu_overlap(k, n, mb);

			o[k].child_ms += x.child_ms / nr;
			o[k].reaper_ms += x.reaper_ms / nr;
			o[k].preempted += x.preempted / nr;
			o[k].migrated += x.migrated / nr;
		}
	}
	amt_hog_cgroup = NULL;
	rmdir(cpu_cg);

	printf("\n4. CPU per %lu MiB teardown, ms (mean of %d x %d): exit path in the child's cgroup + mm_reaper\n",
	       mb, nr, n);
	for (c = 0; c < NR_CFG; c++)
		printf("drained      %-6s child %7.1f + reaper %7.1f = %7.1f  (%.3fx sync)%s\n",
		       cfg_name[c], d[c].child_ms, d[c].reaper_ms,
		       d[c].child_ms + d[c].reaper_ms, cpu_ratio(d, c),
		       preempted_note(&d[c], c));
	for (c = 0; c < 2; c++)
		printf("back-to-back %-6s child %7.1f + reaper %7.1f = %7.1f  (%.3fx sync)%s\n",
		       cfg_name[c], o[c].child_ms, o[c].reaper_ms,
		       o[c].child_ms + o[c].reaper_ms, cpu_ratio(o, c),
		       preempted_note(&o[c], c));
	fprintf(json, ",\n\"cpu\": {\"size_mb\": %lu, \"teardowns\": %d, \"rounds\": %d",
		mb, n, nr);
	for (c = 0; c < NR_CFG; c++)
		fprintf(json, ",\n  \"drained_%s\": {\"child_ms\": %.3f, \"reaper_ms\": %.3f, \"reaper_preempted\": %.2f, \"reaper_migrated\": %.2f}",
			cfg_name[c], d[c].child_ms, d[c].reaper_ms,
			d[c].preempted, d[c].migrated);
	for (c = 0; c < 2; c++)
		fprintf(json, ",\n  \"overlap_%s\": {\"child_ms\": %.3f, \"reaper_ms\": %.3f, \"reaper_preempted\": %.2f, \"reaper_migrated\": %.2f}",
			cfg_name[c], o[c].child_ms, o[c].reaper_ms,
			o[c].preempted, o[c].migrated);
	fprintf(json, "}");
	drain_gib += nr * n * mb / 1024.0;
	drain_cpu_s += nr * n * d[REAPER].reaper_ms / 1e3;
}

/* ---- 7. where the reaper's extra CPU goes ---- */

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

enum { SPLIT_SPIN = 1, SPLIT_ALLOC = 2, NR_SPLIT = 4 };
static const char *const split_name[NR_SPLIT] = {
	"alone", "next_child_allocating", "cpu_shared", "both"
};

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

static void bench_cpusplit(void)
{
	const unsigned long mb = 256;
	int n = quick ? 2 : 8, nr = quick ? 1 : 3, round, c;
	struct cpu_res s[NR_SPLIT] = { 0 };

	printf("\n7. reaper CPU per %lu MiB teardown, ms (mean of %d x %d); reaper pinned to CPU 0, parent and children to CPU 1\n",
	       mb, nr, n);
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		printf("skipped: needs 2 CPUs\n");
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
	printf("%-13s%-27s%s\n", "", "each teardown alone",
	       "next child allocating");
	for (c = 0; c < NR_SPLIT; c += 2)
		printf("%-10s %6.1f (%.3fx, %4.1f pre)  %6.1f (%.3fx, %4.1f pre)\n",
		       c ? "CPU shared" : "own CPU",
		       s[c].reaper_ms, s[c].reaper_ms / s[0].reaper_ms,
		       s[c].preempted, s[c + 1].reaper_ms,
		       s[c + 1].reaper_ms / s[0].reaper_ms, s[c + 1].preempted);
	printf("(x: relative to the reaper alone on its own CPU; pre: preemptions per teardown; CPU shared: a nice 19 spinner on CPU 0)\n");
	fprintf(json, ",\n\"cpusplit\": {\"size_mb\": %lu, \"teardowns\": %d, \"rounds\": %d",
		mb, n, nr);
	for (c = 0; c < NR_SPLIT; c++)
		fprintf(json, ",\n  \"%s\": {\"reaper_ms\": %.3f, \"reaper_preempted\": %.2f}",
			split_name[c], s[c].reaper_ms, s[c].preempted);
	fprintf(json, "}");
}

/* ---- 6. where the parent wakes ---- */

/* The CPU a task runs or last ran on (/proc/PID/stat field 39). */
static int task_cpu_of(pid_t pid)
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

/*
 * exit_notify() wakes the parent (a sync wakeup, whose hint the scheduler
 * ignores for an exiting waker); in self mode the child then goes on
 * tearing its mm down, so a parent placed on the child's CPU competes with
 * the teardown. waitid(WNOWAIT) returns at that wake without reaping: the
 * zombie's stat still names the CPU it runs (or last ran) on, read right
 * after the wake (a zombie pulled away meanwhile counts as another CPU),
 * and sched_getcpu() names the parent's. Per mode: how often the two are
 * the same, and kill -> waitid in each case (in sync mode that includes
 * the whole teardown).
 */
static void bench_wake(void)
{
	const unsigned long mb = 256;
	int n = quick ? 4 : 3 * rounds, round, j, c;
	uint64_t lat[NR_CFG][2][MAX_SAMPLES];
	int cnt[NR_CFG][2] = { { 0 } };

	if (n > MAX_SAMPLES)
		n = MAX_SAMPLES;
	warm_up();	/* the section may run alone (--only) */
	fprintf(stderr, "# wake: %d rounds\n", n);
	for (round = 0; round < n; round++)
		for (j = 0; j < NR_CFG; j++) {
			pid_t pid;
			siginfo_t si;
			uint64_t t0, dt;
			int me, same;

			c = (round + j) % NR_CFG;
			set_cfg(c);
			pid = amt_hog(mb, AMT_HOG_ANON);
			t0 = amt_now_ns();
			kill(pid, SIGKILL);
			while (waitid(P_PID, pid, &si, WEXITED | WNOWAIT) < 0)
				if (errno != EINTR)
					die("waitid: %s", strerror(errno));
			me = sched_getcpu();
			dt = amt_now_ns() - t0;
			if (me < 0)
				die("sched_getcpu: %s", strerror(errno));
			same = task_cpu_of(pid) == me;
			amt_reap(pid);
			lat[c][same][cnt[c][same]++] = dt;
			settle();
		}
	printf("\n6. where the parent wakes from waitpid() (%d kills of %lu MiB per mode): on the child's CPU or another; wake latency, ms: median (p90)\n",
	       n, mb);
	json_array("wake");
	for (c = 0; c < NR_CFG; c++) {
		struct dist s = dist_of(lat[c][1], cnt[c][1]);
		struct dist o = dist_of(lat[c][0], cnt[c][0]);

		printf("%-6s child's CPU %2d of %2d: %6.1f (%6.1f) | other CPU %2d: %6.1f (%6.1f)\n",
		       cfg_name[c], cnt[c][1], n, s.med, s.p90, cnt[c][0],
		       o.med, o.p90);
		json_item();
		fprintf(json, "\"mode\": \"%s\", \"size_mb\": %lu, \"n\": %d, \"same_cpu\": %d, ",
			cfg_name[c], mb, n, cnt[c][1]);
		json_dist("latency_same_cpu", &s);
		fprintf(json, ", ");
		json_dist("latency_other_cpu", &o);
		fprintf(json, "}");
	}
	fprintf(json, "]");
}

/* gnuplot data: size, then the sync, reaper and self medians, p10, p90 */
static void write_plot(const char *path)
{
	FILE *f = fopen(path, "w");
	int i, c;

	if (!f)
		die("%s: %s", path, strerror(errno));
	fprintf(f, "# size_mb sync(med p10 p90) reaper(med p10 p90) self(med p10 p90), ms\n");
	for (i = 0; i < nr_lat_rows; i++) {
		struct lat_row *r = &lat_rows[i];

		if (r->kind != K_ANON || r->voluntary)
			continue;
		fprintf(f, "%lu", r->mb);
		for (c = 0; c < NR_CFG; c++) {
			struct dist d = dist_of(r->lat[c], r->n);

			fprintf(f, " %.3f %.3f %.3f", d.med, d.p10, d.p90);
		}
		fprintf(f, "\n");
	}
	fclose(f);
}

/* ---- targets ---- */

static struct lat_row *find_row(enum kind k, unsigned long mb, bool vol)
{
	int i;

	for (i = 0; i < nr_lat_rows; i++)
		if (lat_rows[i].kind == k && lat_rows[i].mb == mb &&
		    lat_rows[i].voluntary == vol)
			return &lat_rows[i];
	return NULL;
}

static int nr_targets;

static void target(const char *what, double value, const char *op,
		   double limit)
{
	bool met = !strcmp(op, "<=") ? value <= limit : value >= limit;

	printf("%-62s %9.4f %s %-8.4f %s\n", what, value, op, limit,
	       met ? "met" : "MISSED");
	json_item();
	fprintf(json, "\"target\": \"%s\", \"value\": %.4f, \"op\": \"%s\", "
		"\"limit\": %.4f, \"met\": %s}", what, value, op, limit,
		met ? "true" : "false");
	nr_targets++;
}

static void report_targets(void)
{
	struct lat_row *g = find_row(K_ANON, 1024, false);
	struct lat_row *f = find_row(K_ANON, 8, false);
	/* the floor: an 8 MiB exit, inline in every mode */
	struct dist floor_med = f ? dist_of(f->lat[SYNC], f->n) : (struct dist){ 0 };
	int i, c;

	/* sections 6 and 7 (wake, cpusplit) have no target of their own */
	if (sections & ~(1U << S_WAKE | 1U << S_CPUSPLIT))
		printf("\nTargets (issue 5), per mode:\n");
	json_array("targets");
	for (c = REAPER; c <= SELF; c++) {
		char what[128];

		if (g) {
			struct dist s = dist_of(g->lat[SYNC], g->n);
			struct dist a = dist_of(g->lat[c], g->n);
			struct dist b = dist_of(g->back[c], g->n);
			struct dist bs = dist_of(g->back[SYNC], g->n);

			snprintf(what, sizeof(what), "%s: 1 GiB latency / sync", cfg_name[c]);
			target(what, a.med / s.med, "<=", 0.01);
			snprintf(what, sizeof(what), "%s: 1 GiB latency / 8 MiB floor", cfg_name[c]);
			target(what, a.med / floor_med.med, "<=", 1.5);
			snprintf(what, sizeof(what), "%s: 1 GiB memory back / sync", cfg_name[c]);
			target(what, b.med / bs.med, "<=", 1.1);
		}
		for (i = 0; i < nr_lat_rows; i++) {
			struct lat_row *r = &lat_rows[i];
			struct dist a = dist_of(r->lat[c], r->n);

			if (r->voluntary || r->kind > K_THP || r->mb < 64)
				continue;
			snprintf(what, sizeof(what), "%s: p99 %s %lu MiB / floor median",
				 cfg_name[c], kind_name[r->kind], r->mb);
			target(what, a.p99 / floor_med.med, "<=", 2.0);
		}
		for (i = 0; i < 2 && RUNS(S_SPAWN); i++) {
			struct ci r = ci_of(spawn_ratio[i][c - REAPER], spawn_n);

			snprintf(what, sizeof(what), "%s: %s rate / unloaded (CI low end)",
				 cfg_name[c], i ? "fork+_exit" : "fork+exec");
			target(what, r.lo, ">=", 0.99);
		}
		if (have_par8) {
			snprintf(what, sizeof(what), "%s: M=8 all reaped / sync", cfg_name[c]);
			target(what, par_tail[c].med / par_tail[SYNC].med, "<=", 0.02);
			snprintf(what, sizeof(what), "%s: M=8 memory back / sync", cfg_name[c]);
			target(what, par_back[c].med / par_back[SYNC].med, "<=", 1.1);
		}
		if (!RUNS(S_CPU))
			continue;
		snprintf(what, sizeof(what), "%s: CPU per teardown / sync, drained", cfg_name[c]);
		target(what, cpu_ratio(cpu_d, c), "<=", 1.05);
		if (c == REAPER) {
			snprintf(what, sizeof(what), "%s: CPU per teardown / sync, back-to-back",
				 cfg_name[c]);
			target(what, cpu_ratio(cpu_o, c), "<=", 1.05);
		}
	}
	fprintf(json, "]");
}

/* The names of the sections in MASK, joined by SEP, in BUF. */
static void section_list(unsigned int mask, const char *sep, char *buf,
			 size_t size)
{
	int i;

	*buf = 0;
	for (i = 0; i < NR_SECTIONS; i++)
		if (mask & (1U << i))
			snprintf(buf + strlen(buf), size - strlen(buf), "%s%s",
				 *buf ? sep : "", section_name[i]);
}

/* --only=LIST: comma-separated section names */
static void parse_only(const char *list)
{
	char buf[128], all[96], *name, *save = NULL;
	int i;

	section_list(ALL_SECTIONS, ", ", all, sizeof(all));
	snprintf(buf, sizeof(buf), "%s", list);
	sections = 0;
	for (name = strtok_r(buf, ",", &save); name;
	     name = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < NR_SECTIONS; i++)
			if (!strcmp(name, section_name[i]))
				break;
		if (i == NR_SECTIONS)
			die("--only: unknown section '%s' (%s)", name, all);
		sections |= 1U << i;
	}
	if (!sections)
		die("--only: name at least one section (%s)", all);
}

int main(int argc, char **argv)
{
	char names[64] = "";
	const char *json_path = "/tmp/bench.json", *plot_path = NULL;
	struct utsname u;
	uint64_t t0 = amt_now_ns();
	int i;

	if (argc > 1 && !strcmp(argv[1], "--exit0"))
		return 0;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--json") && i + 1 < argc)
			json_path = argv[++i];
		else if (!strcmp(argv[i], "--plot") && i + 1 < argc)
			plot_path = argv[++i];
		else if (!strcmp(argv[i], "--quick"))
			quick = true;
		else if (!strncmp(argv[i], "--only=", 7))
			parse_only(argv[i] + 7);
		else if (!strcmp(argv[i], "--only") && i + 1 < argc)
			parse_only(argv[++i]);
		else if (!strcmp(argv[i], "--spawn-only"))
			parse_only("spawn");
		else if (!strncmp(argv[i], "--spawn-settle=", 15))
			spawn_settle_ms = atoi(argv[i] + 15);
		else if (!strcmp(argv[i], "--spawn-settle") && i + 1 < argc)
			spawn_settle_ms = atoi(argv[++i]);
		else
			die("usage: exit_latency [--rounds N] [--json FILE] [--plot FILE] [--quick] [--only=SECTION,...] [--spawn-only] [--spawn-settle MS]");
	}
	if (rounds < 2 || rounds > MAX_SAMPLES)
		die("--rounds must be 2..%d", MAX_SAMPLES);
	if (spawn_settle_ms < 0 || spawn_settle_ms > 60000)
		die("--spawn-settle must be 0..60000 (ms)");
	if (quick)
		rounds = 2;
	json = fopen(json_path, "w");
	if (!json)
		die("%s: %s", json_path, strerror(errno));
	setvbuf(stdout, NULL, _IOLBF, 0);
	uname(&u);
	mem_total_mb = amt_mem_total_kb() / 1024;
	/*
	 * The default cap (RAM/4) would send the largest children inline;
	 * like the RFC's measurements, allow 3/4 of RAM to be pending.
	 */
	snprintf(cap_param, sizeof(cap_param), "max_pending_pages=%lu",
		 mem_total_mb * 256 * 3 / 4);
	section_list(sections, ",", names, sizeof(names));
	printf("=== exit_latency on Linux %s, %lu MiB, %ld CPUs; module loaded with %s; %d rounds; sections %s\n",
	       u.release, mem_total_mb, sysconf(_SC_NPROCESSORS_ONLN),
	       cap_param, rounds, names);
	fprintf(json, "{\"kernel\": \"%s\", \"mem_mb\": %lu, \"cpus\": %ld, "
		"\"module_params\": \"%s\", \"rounds\": %d, \"quick\": %s, "
		"\"sections\": \"%s\"",
		u.release, mem_total_mb, sysconf(_SC_NPROCESSORS_ONLN),
		cap_param, rounds, quick ? "true" : "false", names);

	if (RUNS(S_LATENCY))
		bench_latency();
	if (RUNS(S_PARALLEL))
		bench_parallel();
	if (RUNS(S_SPAWN))
		bench_spawn();
	if (RUNS(S_CPU))
		bench_cpu();
	if (drain_cpu_s > 0) {
		printf("\n5. drain: %.2f GiB torn down in %.2f s of reaper CPU = %.2f GiB/s\n",
		       drain_gib, drain_cpu_s, drain_gib / drain_cpu_s);
		fprintf(json, ",\n\"drain\": {\"gib\": %.3f, \"reaper_cpu_s\": %.3f, \"gib_per_cpu_s\": %.3f}",
			drain_gib, drain_cpu_s, drain_gib / drain_cpu_s);
	}
	if (RUNS(S_WAKE))
		bench_wake();
	if (RUNS(S_CPUSPLIT))
		bench_cpusplit();
	report_targets();
	if (plot_path && RUNS(S_LATENCY))
		write_plot(plot_path);
	fprintf(json, ",\n\"elapsed_s\": %.0f}\n", (amt_now_ns() - t0) / 1e9);
	fclose(json);
	if (amt_loaded())
		amt_unload();
	printf("=== end (%.0f s)\n", (amt_now_ns() - t0) / 1e9);
	return 0;
}
