/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Guest-side test library. One test file states one behaviour:
 *
 *	static void run(void) { ... amt_fail("why") ... }
 *	AMT_TEST("name", "the behaviour it proves", 120, run)
 *
 * main() resets the module to its defaults, records MemAvailable, runs the
 * test in a fresh child with a timeout, then drains the reaper and checks
 * that the memory came back. It prints exactly one TAP verdict line.
 */
#ifndef AMT_GUEST_H
#define AMT_GUEST_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "../../module/interface.h"

#define AMT_KO "/amt/async_mm_teardown.ko"
#define AMT_PARAMS AMT_PARAMS_DIR "/"
#define AMT_STATS AMT_STATS_FILE
#define AMT_DRAIN AMT_DRAIN_FILE
#define AMT_TRACE "/sys/kernel/tracing/"
#define MiB (1024UL * 1024UL)

struct amt_test {
	const char *name;
	const char *behaviour;
	unsigned int timeout_s;
	void (*fn)(void);
	/* also run in mode=self: the behaviour holds for both modes */
	bool self_too;
};

/*
 * argv[1]: "--modes" prints the modes the test runs in (the guest's /init
 * runs it once per mode); "reaper" or "self" runs it in that mode (the
 * module's mode parameter, set before and reset after the test; verdicts
 * then name the mode: "headline [self]"). No argument: reaper.
 */
int amt_main(const struct amt_test *t, int argc, char **argv);
/* The mode this run tests: "reaper" or "self". */
extern const char *amt_mode;
/* Teardowns completed in this mode: "reaped_by_reaper" or "reaped_by_self". */
long amt_torn_down(void);
/*
 * amt_slow=N on the kernel command line (the debug kernel: KASAN and
 * lockdep under TCG) multiplies every test's timeout by N.
 */
unsigned int amt_slow(void);
/*
 * amt_tslow=N: how many times slower a teardown is on this kernel (the
 * debug kernel's KASAN: ~18x, docs/testing.md); scales the bounds that
 * measure teardowns themselves (memory back within 1 s).
 */
unsigned int amt_teardown_slow(void);
/*
 * KEY=N on the kernel command line (KEY with its "="), @def if absent: how
 * a boot asks a test for a longer run (scripts/check-workloads.sh).
 */
unsigned int amt_cmdline_uint(const char *key, unsigned int def);

#define AMT_TEST_(n, b, timeout, f, self)				\
	int main(int argc, char **argv)					\
	{								\
		static const struct amt_test t = { n, b, timeout, f, self }; \
		return amt_main(&t, argc, argv);			\
	}
#define AMT_TEST(n, b, timeout, f) AMT_TEST_(n, b, timeout, f, false)
/* A behaviour of both modes: run once with the reaper, once with self. */
#define AMT_TEST_BOTH(n, b, timeout, f) AMT_TEST_(n, b, timeout, f, true)

/* Verdicts from inside the test (the child): they do not return. */
void amt_fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
void amt_skip(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
/* A diagnostic line ("# ...") that does not change the verdict. */
void amt_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define amt_assert(cond, ...) do { if (!(cond)) amt_fail(__VA_ARGS__); } while (0)

/*
 * Typed comparisons, as kselftest's ASSERT_EQ(): both sides are evaluated
 * once, and a failure prints the values compared, then the message
 * ("queued: amt_stat("queued") == 4 failed: 3 vs 4"). Whole numbers only.
 */
void amt_fail_cmp(const char *a, const char *op, const char *b, long long va,
		  long long vb, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 6, 7)));
#define AMT_ASSERT_CMP_(a, op, b, ...)					\
	do {								\
		long long a_ = (a), b_ = (b);				\
		if (!(a_ op b_))					\
			amt_fail_cmp(#a, #op, #b, a_, b_, __VA_ARGS__);	\
	} while (0)
#define amt_assert_eq(a, b, ...) AMT_ASSERT_CMP_(a, ==, b, __VA_ARGS__)
#define amt_assert_ne(a, b, ...) AMT_ASSERT_CMP_(a, !=, b, __VA_ARGS__)
#define amt_assert_lt(a, b, ...) AMT_ASSERT_CMP_(a, <, b, __VA_ARGS__)
#define amt_assert_le(a, b, ...) AMT_ASSERT_CMP_(a, <=, b, __VA_ARGS__)
#define amt_assert_gt(a, b, ...) AMT_ASSERT_CMP_(a, >, b, __VA_ARGS__)
#define amt_assert_ge(a, b, ...) AMT_ASSERT_CMP_(a, >=, b, __VA_ARGS__)

/*
 * The fixture module (tests/guest/helper/): /dev/amt_block, whose close
 * blocks while the parameter "hold" is 1. Fails the test if it cannot load.
 */
#define AMT_HELPER "/sys/module/amt_helper/parameters/"
#define AMT_BLOCK_DEV "/dev/amt_block"
void amt_helper_load(void);
long amt_helper_get(const char *param);	/* a parameter's number, -1 */
/* Wait up to @ms for the fixture's @param to read @want; did it? */
bool amt_helper_wait(const char *param, long want, int ms);
/*
 * An amt_hog_fn() body: the fixture's mmu_notifier on the hog's mm (its
 * teardown stalls while "stall" is 1), then (unsigned long)@mb MiB
 * mapped and touched.
 */
void amt_stalling_body(void *mb);
/* Does the running kernel have the function SYM (/proc/kallsyms)? */
bool amt_kernel_has(const char *sym);
/*
 * Does a dying task keep its cgroup populated until its final switch
 * (cgroup_task_dead(), v7.0+), so that rmdir waits for a teardown in the
 * task? The module then defaults to mode=reaper.
 */
bool amt_self_holds_cgroup(void);
/*
 * Does a dying task hold up RCU-tasks grace periods after exit_notify()
 * (6.1 with CONFIG_TASKS_RCU, not 6.12)? The module then defaults to
 * mode=reaper, and self mode leaves mms with mmu notifiers to the reaper.
 */
bool amt_self_holds_tasks_rcu(void);
/* a kernel module of the guest's kernel from /amt/kmod/: 0 or errno */
int amt_kmod_load(const char *name);

/* Module control. */
bool amt_loaded(void);
int amt_load(const char *params);	/* 0 or errno */
int amt_unload(void);			/* 0 or errno */
int amt_param_set(const char *name, const char *val); /* 0 or errno */
long amt_param_get(const char *name);
int amt_drain(unsigned int ms);		/* 0 or errno */
void amt_reset_defaults(void);
/* -1 if missing; a name not in module/interface.h fails the test */
long amt_stat(const char *name);
extern const char *const amt_stat_names[];	/* NULL-terminated */

void amt_stats_note(void);		/* every stat as a "# stats:" line */

/* System state. */
long amt_vmstat(const char *name);	/* a /proc/vmstat counter */
long amt_mem_available_kb(void);
/* a /proc/meminfo field ("AnonPages:"), kB; -1 if absent */
long amt_meminfo(const char *key);
/* Where did the memory go? A snapshot, then a note per field that moved. */
#define AMT_NR_MEMINFO 9
void amt_meminfo_snap(long *v);
void amt_meminfo_diff(const long *base);
long amt_mem_total_kb(void);
/* MemAvailable plus the per-CPU free page lists: what is free or freeable. */
long amt_mem_back_kb(void);
/*
 * ns from @t0 until amt_mem_back_kb() is within @tol_kb of @base_kb: first
 * a drain (it blocks without CPU until every deferred teardown ended; at
 * once with nothing deferred), then polling every 2 ms. Polling alone would
 * steal CPU from the teardowns it waits for. 0 on failure or timeout.
 */
uint64_t amt_mem_back_ns(long base_kb, long tol_kb, uint64_t t0,
			 unsigned int timeout_s);
void amt_drop_caches(void);
int amt_write_file(const char *path, const char *val); /* 0 or errno */
int amt_read_file(const char *path, char *buf, size_t len); /* bytes or -errno */
uint64_t amt_now_ns(void);
uint64_t amt_median(uint64_t *v, int n);	/* sorts v */
/* In a hog body: map and touch @mb MiB anonymous, no huge pages. */
void amt_map_anon(unsigned long mb);
/* In a hog body: map @mb MiB of a tmpfs file shared, fill it with 0x5a. */
void *amt_map_tmpfs(const char *path, unsigned long mb, bool unlink_it);

/* Processes that hold memory. */
enum amt_hog_kind {
	AMT_HOG_ANON,		/* anonymous, MADV_NOHUGEPAGE */
	AMT_HOG_THP,		/* anonymous, MADV_HUGEPAGE */
	AMT_HOG_SHMEM,		/* MAP_SHARED|MAP_ANONYMOUS */
};

/*
 * Fork a child that maps and touches @mb MiB, then waits. Returns its pid
 * once the memory is resident. amt_hog_exit() makes it _exit() voluntarily.
 */
pid_t amt_hog(unsigned long mb, enum amt_hog_kind kind);
pid_t amt_hog_fn(void (*fn)(void *), void *arg); /* custom child body */
/* Like amt_hog(), but returns 0 if the child died (OOM) before ready. */
pid_t amt_hog_try(unsigned long mb, enum amt_hog_kind kind);
pid_t amt_hog_fn_try(void (*fn)(void *), void *arg);
extern const char *amt_hog_cgroup;	 /* new hogs join this cgroup */
extern const char *amt_hog_oom_score_adj; /* and set this oom_score_adj */
/*
 * CPU burners at nice 0 (oom_score_adj -1000), one per vCPU of the test
 * guest (2), started and stopped together: contention for the reaper.
 */
#define AMT_BURNERS 2
void amt_burners_start(pid_t b[AMT_BURNERS]);
void amt_burners_stop(pid_t b[AMT_BURNERS]);	/* stopped ones are 0 */
/*
 * Work of higher priority than the processes that die: the caller goes to
 * nice -10 and starts the burners there, hogs it spawns grow at -10 too,
 * and amt_hog_demote() sends a grown one to nice 10, where it dies. Their
 * teardowns then get nice 10's share (the reapers take the dead tasks'
 * share, docs/design.md, "The give-way"): ~1 % of a CPU, as inline ones
 * would, while the kernel's own nice-0 threads (RCU, the OOM reaper) keep
 * ~10 %. amt_starve_stop() stops the burners and brings the caller back.
 */
void amt_starve_start(pid_t b[AMT_BURNERS]);
void amt_starve_stop(pid_t b[AMT_BURNERS]);
void amt_hog_demote(pid_t pid);
/* the burners' nice */
void amt_burners_nice(pid_t b[AMT_BURNERS], int nice);
void amt_hog_ready(void);			  /* from a custom body */
void amt_touch(void *p, size_t len);
void amt_hog_exit(pid_t pid);
/* SIGKILL and reap; returns the kill->waitpid() time in ns. */
uint64_t amt_kill_wait(pid_t pid);
/* Reap only; returns the wait status. */
int amt_reap(pid_t pid);
/* SIGKILL all @n, then reap them: they exit together. */
void amt_kill_reap(const pid_t *pids, int n);

/* cgroup v2: create /sys/fs/cgroup/NAME with memory.max (0: no limit). */
int amt_cgroup_create(const char *name, unsigned long max_mb, char *path,
		      size_t len);
int amt_cgroup_set(const char *cg, const char *file, const char *val);
int amt_cgroup_enter(const char *cg);	/* move the caller in */
/* a number from FILE, or the value of "KEY value" line in it */
long amt_cgroup_get(const char *cg, const char *file, const char *key);

/* Tracepoints of the module. */
void amt_trace_start(void);
void amt_trace_stop(void);
int amt_trace_count(const char *event, pid_t pid); /* pid 0: any */
/* The number after " @key=" in the last @event for @pid; 0 if none. */
uint64_t amt_trace_value(const char *event, pid_t pid, const char *key);
/* The function tracer on one kernel function too, in the same buffer. */
void amt_ftrace_start(const char *fn);
void amt_ftrace_stop(void);
/*
 * Trace lines recorded in task PID that contain NEEDLE; only those after
 * the module's event AFTER for PID if AFTER is not NULL.
 */
int amt_trace_lines(pid_t pid, const char *needle, const char *after);
/* Write @what to the trace buffer (trace_marker), between two events. */
void amt_trace_mark(const char *what);
/* The trace timestamp (ns) of the first line holding @needle, 0 if none. */
uint64_t amt_trace_ts(const char *needle);

#endif /* AMT_GUEST_H */
