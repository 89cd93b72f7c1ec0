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
		trace_write("tracing_on", "1");
		trace_mark("amt_bench: kill %s", cfg_name[c]);
		t0 = amt_now_ns();
		for (k = 0; k < TRACE_M; k++)
			kill(pids[k], SIGKILL);
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
