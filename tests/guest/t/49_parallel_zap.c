// SPDX-License-Identifier: GPL-2.0
/*
 * A large deferred teardown frees its private memory in chunks, on idle
 * CPUs too, before its final mmput() (docs/design.md, "Parallel
 * teardown"), and never on a CPU that has other work:
 *
 * 1. Idle: a 2 GiB process killed with parallel=1, parallel=0 and the
 *    module disabled (inline), in one boot: the memory is back each time
 *    (within 2 %), helpers on the idle vCPU zapped chunks with parallel=1
 *    and none without, and the parallel teardown took no longer than one
 *    CPU's (a loose bound: make bench measures).
 * 2. Busy: a burner pinned on every vCPU: the helpers asked for a 512 MiB
 *    teardown find their CPU busy and zap nothing, and the burners get no
 *    less CPU than with parallel=0.
 * 3. Confined: a 512 MiB process allowed on vCPU 0 only: a self teardown
 *    (on that vCPU) asks for no helper elsewhere; the reaper, allowed
 *    everywhere, does.
 * 4. Together: 4 processes of 256 MiB killed at once: only a teardown
 *    that starts alone asks for helpers (the others take the CPUs), so
 *    at most one of the four (all four before that rule).
 */
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "amt_guest.h"

#define BIG_MB 2048
#define BUSY_MB 512
#define BURST_N 4
#define BURST_MB 256
#define LIMIT_S 120

static int ncpus;

struct round {
	uint64_t ns;		/* kill to memory back */
	long chunks, helper_chunks, busy, zaps, by_self;
	double burner_share;	/* CPU the burners got in the window, of all */
};

/* utime + stime of @pid, in clock ticks */
static long cpu_ticks(pid_t pid)
{
	unsigned long ut = 0, st = 0;
	char path[64], buf[1024], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (amt_read_file(path, buf, sizeof(buf)) <= 0)
		return 0;
	/* after the comm's ')': state is field 3, utime 14, stime 15 */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
			 &ut, &st) != 2)
		return 0;
	return ut + st;
}

static void pin(pid_t pid, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	amt_assert(!sched_setaffinity(pid, sizeof(set), &set),
		   "cannot pin %d to cpu %d", pid, cpu);
}

/*
 * @enabled, @parallel: the module's; @busy: burners pinned on each vCPU;
 * @confined: the process allowed on vCPU 0 only
 */
static struct round one(bool enabled, bool parallel, bool busy, int mb,
			bool confined)
{
	long s0 = amt_stat("reaped_by_self");
	long c0 = amt_stat("zap_chunks"), h0 = amt_stat("zap_helper_chunks");
	long b0 = amt_stat("zap_helpers_busy"), z0 = amt_stat("zap_parallel");
	long base, tol = mb * 1024L / 50, ticks0 = 0, ticks = 0;
	long hz = sysconf(_SC_CLK_TCK);
	struct round r = { 0 };
	pid_t pid, b[AMT_BURNERS];
	uint64_t t0;
	int i;

	amt_assert(!amt_param_set("enabled", enabled ? "1" : "0"),
		   "cannot set enabled");
	amt_assert(!amt_param_set("parallel", parallel ? "1" : "0"),
		   "cannot set parallel");
	base = amt_mem_back_kb();
	pid = amt_hog(mb, AMT_HOG_ANON);
	if (confined)
		pin(pid, 0);
	if (busy) {
		amt_burners_start(b);
		for (i = 0; i < AMT_BURNERS; i++)
			pin(b[i], i % ncpus);
		usleep(200000);
		for (i = 0; i < AMT_BURNERS; i++)
			ticks0 += cpu_ticks(b[i]);
	}
	t0 = amt_now_ns();
	kill(pid, SIGKILL);
	amt_reap(pid);
	r.ns = amt_mem_back_ns(base, tol, t0, LIMIT_S * amt_teardown_slow());
	if (busy) {
		for (i = 0; i < AMT_BURNERS; i++)
			ticks += cpu_ticks(b[i]);
		r.burner_share = r.ns ? (double)(ticks - ticks0) / hz /
			((double)r.ns / 1e9 * ncpus) : 0;
		amt_burners_stop(b);
	}
	amt_assert(r.ns, "%d MiB: memory not back within %d s (%s)", mb,
		   LIMIT_S, !enabled ? "inline" : parallel ? "parallel" : "one CPU");
	r.chunks = amt_stat("zap_chunks") - c0;
	r.helper_chunks = amt_stat("zap_helper_chunks") - h0;
	r.busy = amt_stat("zap_helpers_busy") - b0;
	r.zaps = amt_stat("zap_parallel") - z0;
	r.by_self = amt_stat("reaped_by_self") - s0;
	return r;
}

/* 4.: BURST_N processes killed together; returns the parallel teardowns */
static long burst(void)
{
	long z0 = amt_stat("zap_parallel"), q0 = amt_stat("queued"), base;
	pid_t pid[BURST_N];
	uint64_t t0;
	int i;

	amt_assert(!amt_param_set("enabled", "1"), "cannot set enabled");
	base = amt_mem_back_kb();
	for (i = 0; i < BURST_N; i++)
		pid[i] = amt_hog(BURST_MB, AMT_HOG_ANON);
	t0 = amt_now_ns();
	amt_kill_reap(pid, BURST_N);
	amt_assert(amt_mem_back_ns(base, BURST_N * BURST_MB * 1024L / 50, t0,
				   LIMIT_S * amt_teardown_slow()),
		   "%d x %d MiB killed together: memory not back", BURST_N,
		   BURST_MB);
	amt_assert_eq(amt_stat("queued") - q0, BURST_N,
		      "teardowns deferred of the processes killed together");
	return amt_stat("zap_parallel") - z0;
}

static void run(void)
{
	struct round on, off, in, busy_on, busy_off, confined;
	char cap[32];

	ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	amt_assert_ge(ncpus, 2, "needs a second vCPU");
	/* the default cap (RAM/4) would keep 2 GiB off the reapers' queue */
	snprintf(cap, sizeof(cap), "%ld", sysconf(_SC_PHYS_PAGES));
	amt_assert(!amt_param_set("max_pending_pages", cap), "cannot raise the cap");
	/* and past the low-memory gate: 2 GiB alive in the debug kernel's 2.5 */
	amt_assert(!amt_param_set("min_available_pct", "0"),
		   "cannot open the low-memory gate");
	/* 1. the second vCPU idle */
	in = one(false, true, false, BIG_MB, false);
	off = one(true, false, false, BIG_MB, false);
	on = one(true, true, false, BIG_MB, false);
	amt_note("2 GiB kill to memory back: inline %.0f ms, one CPU %.0f ms, parallel %.0f ms (%ld chunks, %ld by helpers)",
		 in.ns / 1e6, off.ns / 1e6, on.ns / 1e6, on.chunks,
		 on.helper_chunks);
	amt_assert_eq(off.zaps, 0, "parallel=0 zapped");
	amt_assert_eq(on.zaps, 1, "parallel teardowns of the 2 GiB kill");
	amt_assert_ge(on.chunks, BIG_MB / 8 / 2, "chunks zapped");
	amt_assert_gt(on.helper_chunks, 0, "chunks zapped by a helper on the idle vCPU");
	amt_assert_le(on.ns, off.ns * 3 / 2,
		      "parallel teardown (ns) slower than one CPU's");

	/* 2. every vCPU busy */
	busy_off = one(true, false, true, BUSY_MB, false);
	busy_on = one(true, true, true, BUSY_MB, false);
	amt_note("512 MiB, burners pinned: their CPU share %.2f (parallel) vs %.2f (one CPU); helpers that left %ld, chunks by helpers %ld",
		 busy_on.burner_share, busy_off.burner_share, busy_on.busy,
		 busy_on.helper_chunks);
	amt_assert_eq(busy_on.zaps, 1, "parallel teardowns under burners");
	amt_assert_ge(busy_on.busy, ncpus - 1,
		      "helpers that found their CPU busy");
	amt_assert_eq(busy_on.helper_chunks, 0,
		      "chunks zapped by helpers on a busy CPU");
	amt_assert(busy_on.burner_share >= busy_off.burner_share - 0.1,
		   "the burners got %.2f of the CPUs with parallel=1, %.2f without",
		   busy_on.burner_share, busy_off.burner_share);

	/* 3. the process confined to vCPU 0 */
	confined = one(true, true, false, BUSY_MB, true);
	amt_note("512 MiB confined to vCPU 0: %ld parallel teardowns, %ld chunks by helpers",
		 confined.zaps, confined.helper_chunks);
	/* (a self teardown handed to the reaper would zap on both vCPUs) */
	if (!strcmp(amt_mode, "self"))
		amt_assert_eq(confined.by_self, 1,
			      "teardowns of the confined process by itself");
	amt_assert_eq(confined.zaps, strcmp(amt_mode, "self") ? 1 : 0,
		      "parallel teardowns of a process confined to vCPU 0");

	/* 4. killed together */
	amt_assert_le(burst(), 1,
		      "parallel teardowns of the processes killed together");
	amt_assert(!amt_param_set("parallel", "1"), "cannot restore parallel");
	amt_reset_defaults();
}

AMT_TEST_BOTH("parallel_zap", "a large deferred teardown frees its memory on idle CPUs too, and never on a busy one", 600, run)
