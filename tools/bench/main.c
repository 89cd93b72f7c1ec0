// SPDX-License-Identifier: GPL-2.0
/*
 * exit_latency: the benchmark of make bench. Runs in the guest (static),
 * with the module at /amt/async_mm_teardown.ko.
 *
 *	exit_latency [--rounds N] [--json FILE] [--plot FILE] [--quick]
 *		     [--only=SECTION[,SECTION...]] [--spawn-only]
 *		     [--spawn-settle MS] [--trace FILE]
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
 *     are reaped, and until their memory is back (M = 8 also with
 *     parallel=0 in each mode: the zap helpers' effect on many exits);
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
 *     child allocating on the other CPU, both, or neither;
 *  8. busy: 16 children of 96 MiB killed together with a CPU burner on
 *     every CPU (nice 0, then -5): time until their memory is back;
 *  9. prefork: a prefork server forking workers of 96 MiB while it kills
 *     others, a CPU burner on every CPU: fork() latency p50/p99/max, and
 *     the respawn (kill to the replacement's fork() returning);
 * 10. zap: one child of 64 MiB to 8 GiB (as the guest has room) killed,
 *     the second CPU idle: memory back and kill->waitpid() with
 *     parallel=0 and parallel=1 in each mode, and inline;
 * 11. pinned: one child of 1 GiB killed while the fixture module holds its
 *     mm: memory back while held, and the holder's final mmput(), inline,
 *     with zap_pinned=0 and with zap_pinned=1 in each mode.
 *
 * A configuration this kernel refuses (mode=self on 6.1-RT) is skipped
 * by busy and prefork; the other sections need all three.
 *
 * --only runs the named sections alone (latency, parallel, spawn, cpu,
 * wake, cpusplit, busy, prefork, zap, pinned; 5. comes with 2. and 4.). --spawn-only is --only=spawn: make
 * bench-icount runs it under QEMU's -icount, where guest time counts
 * instructions and host noise vanishes. --spawn-settle is the idle time
 * after each insmod or rmmod of 3. before its loops are timed (default
 * 300 ms; make bench-icount, where idle time costs no host time, uses
 * 12 s: right after boot the loops ran at half speed for a while, see
 * docs/benchmarks.md). --trace FILE adds, after everything, one traced
 * round of 8 x 256 MiB killed together per configuration (trace.c), for
 * scripts/trace-parallel.py.
 *
 * Prints a human table on stdout, writes the same as JSON to the --json
 * FILE (both from render.c) and the latency medians by size (anonymous memory, THP off, kill)
 * as gnuplot data to the --plot FILE.
 * The figures are only comparable within one run (one boot).
 */
#include <sys/utsname.h>
#include "bench.h"

const char *const cfg_name[NR_CFG] = { "sync", "reaper", "self" };
const char *const kind_name[] = { "anon", "thp", "shmem", "file" };

int rounds = 7;
bool quick;
int spawn_settle_ms = 300;
const char *trace_path;
unsigned long mem_total_mb;
char cap_param[64];
static struct results res;

/* 5. drain: GiB torn down per second of reaper CPU, from 2. and 4. */
static void drain(struct results *r)
{
	r->drain.gib = r->parallel.gib + r->cpu.gib;
	r->drain.cpu_s = r->parallel.cpu_s + r->cpu.cpu_s;
}

/*
 * The sections, in the order they run: each fills its part of struct
 * results, then render.c shows it. A new one: a file with its function, a
 * result struct and a render function (bench.h), a line here (and in enum
 * section, if --only may name it). scripts/bench.sh reads the names from
 * this table.
 */
static const struct section_def {
	const char *name;	/* for --only; NULL: runs after the one before */
	int id;			/* enum section, or -1 */
	const char *summary;
	void (*run)(struct results *r);
	void (*render)(const struct results *r);
} section_table[] = {
	{ "latency", S_LATENCY, "kill->waitpid() and memory back, by size and kind", bench_latency, render_latency },
	{ "parallel", S_PARALLEL, "M children killed together", bench_parallel, render_parallel },
	{ "spawn", S_SPAWN, "fork+exec and fork+_exit rates, module not loaded vs loaded", bench_spawn, render_spawn },
	{ "cpu", S_CPU, "CPU of the exit path per teardown", bench_cpu, render_cpu },
	{ NULL, -1, "drain: GiB per second of reaper CPU (from parallel and cpu)", drain, render_drain },
	{ "wake", S_WAKE, "where the parent wakes from waitpid()", bench_wake, render_wake },
	{ "cpusplit", S_CPUSPLIT, "where the reaper's extra CPU goes", bench_cpusplit, render_cpusplit },
	{ "busy", S_BUSY, "memory back with a CPU burner on every CPU", bench_busy, render_busy },
	{ "prefork", S_PREFORK, "a prefork server's fork() while its workers die, CPUs busy", bench_prefork, render_prefork },
	{ "zap", S_ZAP, "one large kill, the second CPU idle: memory back with and without helpers", bench_zap, render_zap },
	{ "pinned", S_PINNED, "one large kill while its mm is held: memory back while held, the holder's mmput()", bench_pinned, render_pinned },
};
#define NR_TABLE (sizeof(section_table) / sizeof(section_table[0]))
#define ALL_SECTIONS ((1U << NR_SECTIONS) - 1)
unsigned int sections = ALL_SECTIONS;

/* The names of the sections in MASK, joined by SEP, in BUF. */
static void section_list(unsigned int mask, const char *sep, char *buf,
			 size_t size)
{
	int i;

	*buf = 0;
	for (i = 0; i < (int)NR_TABLE; i++)
		if (section_table[i].name && mask & (1U << section_table[i].id))
			snprintf(buf + strlen(buf), size - strlen(buf), "%s%s",
				 *buf ? sep : "", section_table[i].name);
}

/* --only=LIST: comma-separated section names */
static void parse_only(const char *list)
{
	char buf[128], all[128], *name, *save = NULL;
	int i;

	section_list(ALL_SECTIONS, ", ", all, sizeof(all));
	snprintf(buf, sizeof(buf), "%s", list);
	sections = 0;
	for (name = strtok_r(buf, ",", &save); name;
	     name = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < (int)NR_TABLE; i++)
			if (section_table[i].name &&
			    !strcmp(name, section_table[i].name))
				break;
		if (i == (int)NR_TABLE)
			die("--only: unknown section '%s' (%s)", name, all);
		sections |= 1U << section_table[i].id;
	}
	if (!sections)
		die("--only: name at least one section (%s)", all);
}

int main(int argc, char **argv)
{
	struct run_info *run = &res.run;
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
		else if (!strncmp(argv[i], "--trace=", 8))
			trace_path = argv[i] + 8;
		else if (!strcmp(argv[i], "--trace") && i + 1 < argc)
			trace_path = argv[++i];
		else if (!strcmp(argv[i], "--spawn-only"))
			parse_only("spawn");
		else if (!strncmp(argv[i], "--spawn-settle=", 15))
			spawn_settle_ms = atoi(argv[i] + 15);
		else if (!strcmp(argv[i], "--spawn-settle") && i + 1 < argc)
			spawn_settle_ms = atoi(argv[++i]);
		else
			die("usage: exit_latency [--rounds N] [--json FILE] [--plot FILE] [--quick] [--only=SECTION,...] [--spawn-only] [--spawn-settle MS] [--trace FILE]");
	}
	if (rounds < 2 || rounds > MAX_SAMPLES)
		die("--rounds must be 2..%d", MAX_SAMPLES);
	if (spawn_settle_ms < 0 || spawn_settle_ms > 60000)
		die("--spawn-settle must be 0..60000 (ms)");
	if (quick)
		rounds = 2;
	render_open(json_path);
	uname(&u);
	mem_total_mb = amt_mem_total_kb() / 1024;
	/*
	 * The default cap (RAM/4) would send the largest children inline;
	 * like the RFC's measurements, allow 3/4 of RAM to be pending.
	 */
	snprintf(cap_param, sizeof(cap_param), "max_pending_pages=%lu",
		 mem_total_mb * 256 * 3 / 4);
	run->mem_mb = mem_total_mb;
	run->cpus = sysconf(_SC_NPROCESSORS_ONLN);
	run->module_params = cap_param;
	run->rounds = rounds;
	run->quick = quick;
	snprintf(run->kernel, sizeof(run->kernel), "%s", u.release);
	section_list(sections, ",", run->sections, sizeof(run->sections));
	render_run(&res);

	for (i = 0; i < (int)NR_TABLE; i++) {
		const struct section_def *d = &section_table[i];

		if (d->id < 0 || RUNS(d->id)) {
			d->run(&res);
			d->render(&res);
		}
	}
	if (trace_path)
		bench_parallel_trace(trace_path);
	check_targets(&res);
	render_targets(&res);
	if (plot_path && RUNS(S_LATENCY))
		write_plot(plot_path, &res.latency);
	render_json_end((amt_now_ns() - t0) / 1e9);
	if (amt_loaded())
		amt_unload();
	render_text_end((amt_now_ns() - t0) / 1e9);
	return 0;
}
