// SPDX-License-Identifier: GPL-2.0
/*
 * exit_latency --trace FILE: after section 2, one more round of M = 8
 * children killed together per configuration, with the scheduler's and the
 * module's tracepoints on, written to FILE for scripts/trace-parallel.py:
 * where the CPUs went between the kills and the last waitpid() (children
 * before and after exit_notify(), teardowns, reapers, the parent). A
 * diagnostic, not a measurement: tracing itself costs time, so nothing
 * here is compared with the untraced rounds.
 */
#include <fcntl.h>
#include <signal.h>
#include "bench.h"

#define TRACEFS "/sys/kernel/tracing"
#define TRACE_M 8

static const char * const trace_events[] = {
	"sched/sched_switch", "sched/sched_wakeup", "sched/sched_wakeup_new",
	"sched/sched_process_exit", "sched/sched_migrate_task",
	"sched/sched_stat_runtime",
	"async_mm_teardown/mm_reaper_queue",
	"async_mm_teardown/mm_reaper_reap",
};

static int trace_write(const char *file, const char *what)
{
	char path[192];

	snprintf(path, sizeof(path), TRACEFS "/%s", file);
	return amt_write_file(path, what);
}

static void trace_mark(const char *fmt, ...)
{
	char buf[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	trace_write("trace_marker", buf);
}

/* Append the trace buffer to @out, then empty it. */
static void trace_dump(FILE *out)
{
	char line[512];
	FILE *in = fopen(TRACEFS "/trace", "r");

	if (!in)
		die("cannot read " TRACEFS "/trace: %s", strerror(errno));
	while (fgets(line, sizeof(line), in))
		if (line[0] != '#')
			fputs(line, out);
	fclose(in);
	trace_write("trace", "");
}

/* The first number after the colon of @key's line in @buf, or -1. */
static double sched_field(const char *buf, const char *key)
{
	const char *p = strstr(buf, key);

	if (!p || !(p = strchr(p, ':')))
		return -1;
	return strtod(p + 1, NULL);
}

/*
 * Where CFS placed each child: its se.vruntime and run time so far (ms,
 * from /proc/PID/sched), its CPU, and each CPU's root min_vruntime (from
 * debugfs, where it is mounted), as "# sched WHEN ..." lines: taken before
 * the kills and right after them, before most children have run, so the
 * wake-up placement shows.
 */
static void sched_snapshot(FILE *out, const char *when, const pid_t *pids,
			   int n)
{
	static char buf[1 << 18];
	char path[64], *line, *save;
	int k, cpu = -1, rq = -1;

	for (k = 0; k < n; k++) {
		snprintf(path, sizeof(path), "/proc/%d/sched", pids[k]);
		if (amt_read_file(path, buf, sizeof(buf)) <= 0)
			continue;
		fprintf(out, "# sched %s pid=%d vruntime=%.3f exec=%.3f prio=%.0f cpu=%d\n",
			when, pids[k], sched_field(buf, "se.vruntime"),
			sched_field(buf, "se.sum_exec_runtime"),
			sched_field(buf, "\nprio"), task_cpu_of(pids[k]));
	}
	if (amt_read_file("/sys/kernel/debug/sched/debug", buf,
			  sizeof(buf)) <= 0)
		return;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "cpu#", 4))
			rq = atoi(line + 4);
		if (!strncmp(line, "cfs_rq[", 7))
			cpu = strcmp(strchr(line, ':'), ":/") ? -1 : atoi(line + 7);
		else if (cpu >= 0 && strstr(line, ".min_vruntime"))
			fprintf(out, "# sched %s cpu=%d min_vruntime=%.3f\n",
				when, cpu, sched_field(line, "min_vruntime"));
		/* the runnable tasks (state R), tree-key = se.vruntime */
		else if ((line[0] == ' ' || line[0] == '>') && line[1] == 'R')
			fprintf(out, "# sched %s rq=%d task %s\n", when, rq,
				line + 2);
	}
}

void bench_parallel_trace(const char *path)
{
	const unsigned long mb = 256;
	FILE *out = fopen(path, "w");
	size_t i;
	int c, k;

	if (!out)
		die("--trace %s: %s", path, strerror(errno));
	if (TRACE_M * mb > mem_total_mb * 6 / 10) {
		fprintf(out, "# skipped: %d x %lu MiB does not fit\n", TRACE_M, mb);
		fclose(out);
		return;
	}
	trace_write("tracing_on", "0");
	trace_write("trace", "");
	trace_write("buffer_size_kb", "8192");
	trace_write("trace_clock", "global");
	for (c = 0; c < NR_CFG; c++) {
		pid_t pids[TRACE_M];
		long base;
		uint64_t t0;

		set_cfg(c);
		/* the module's events exist only while it is loaded */
		for (i = 0; i < sizeof(trace_events) / sizeof(trace_events[0]); i++) {
			char f[128];

			snprintf(f, sizeof(f), "events/%s/enable", trace_events[i]);
			if (trace_write(f, "1"))
				fprintf(out, "# cannot enable %s\n", trace_events[i]);
		}
		base = amt_mem_back_kb();
		for (k = 0; k < TRACE_M; k++)
			pids[k] = amt_hog(mb, AMT_HOG_ANON);
		fprintf(out, "# config %s parent %d children", cfg_name[c],
			getpid());
		for (k = 0; k < TRACE_M; k++)
			fprintf(out, " %d", pids[k]);
		fprintf(out, "\n");
		sched_snapshot(out, "before", pids, TRACE_M);
		trace_write("tracing_on", "1");
		trace_mark("amt_bench: kill %s", cfg_name[c]);
		t0 = amt_now_ns();
		for (k = 0; k < TRACE_M; k++)
			kill(pids[k], SIGKILL);
		sched_snapshot(out, "after", pids, TRACE_M);
		for (k = 0; k < TRACE_M; k++)
			amt_reap(pids[k]);
		trace_mark("amt_bench: reaped %s", cfg_name[c]);
		wait_mem_back(base, t0);
		trace_mark("amt_bench: back %s", cfg_name[c]);
		trace_write("tracing_on", "0");
		trace_dump(out);
		settle();
	}
	trace_write("events/enable", "0");
	fclose(out);
}
