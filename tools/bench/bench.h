/* SPDX-License-Identifier: GPL-2.0 */
/*
 * exit_latency, the benchmark of make bench (main.c says what it measures):
 * what its sections share. One file per section (latency.c, parallel.c,
 * spawn.c, cpu.c, wake.c, cpusplit.c, busy.c, prefork.c, zap.c, pinned.c),
 * listed in main.c's table, each
 * filling its result struct; helpers in common.c; the targets in
 * targets.c; render.c writes the results as text and as JSON.
 */
#ifndef BENCH_H
#define BENCH_H

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include "amt_guest.h"

enum cfg { SYNC, REAPER, SELF, NR_CFG };
extern const char *const cfg_name[NR_CFG];

enum kind { K_ANON, K_THP, K_SHMEM, K_FILE };
extern const char *const kind_name[];

#define MAX_SAMPLES 64
#define MEM_TOL_KB (16 * 1024)
#define MAX_REAPERS 16

/* The options (main.c). */
extern int rounds;
extern bool quick;
extern int spawn_settle_ms;
extern unsigned long mem_total_mb;
extern char cap_param[64];
extern const char *trace_path;

/* The sections --only can name, in the order they run (main.c's table). */
enum section {
	S_LATENCY, S_PARALLEL, S_SPAWN, S_CPU, S_WAKE, S_CPUSPLIT, S_BUSY,
	S_PREFORK, S_ZAP, S_PINNED, NR_SECTIONS
};
extern unsigned int sections;
#define RUNS(sec) (sections & (1U << (sec)))

struct dist {
	int n;
	double med, p10, p90, p99, min, max;	/* ms */
};

struct ci {
	double mean, lo, hi;
};

struct cpu_res {
	double child_ms, reaper_ms;	/* per teardown */
	double helper_ms;		/* per teardown: parallel zap helpers */
	double preempted;		/* the reaper, per teardown */
	double migrated;		/* the reaper, per teardown; < 0: unknown */
};

/* 10. zap: variants, in the order they rotate */
enum zap_var { ZV_SYNC, ZV_REAPER_ONE, ZV_REAPER_PAR, ZV_SELF_ONE,
	       ZV_SELF_PAR, NR_ZAP_VAR };
#define NR_ZAP_SIZES 6

/* 11. pinned: variants, in the order they rotate */
enum pin_var { PV_SYNC, PV_NOZAP, PV_REAPER, PV_SELF, NR_PIN_VAR };
#define PIN_MB 1024UL

/*
 * What the sections found. Each section's function measures and fills its
 * part of struct results; render.c alone shows it, as text and as JSON.
 */
struct run_info {
	char kernel[65];
	unsigned long mem_mb;
	long cpus;
	const char *module_params;
	int rounds;
	bool quick;
	char sections[96];	/* the names, comma-separated */
};

struct lat_row {
	enum kind kind;
	unsigned long mb;
	bool voluntary;
	int n;
	uint64_t lat[NR_CFG][MAX_SAMPLES];
	uint64_t back[NR_CFG][MAX_SAMPLES];	/* 0: not measured */
	struct dist d[NR_CFG], b[NR_CFG];	/* of lat, back; b[].n 0: none */
};

struct lat_result {			/* 1. latency */
	struct lat_row *rows;
	int nr;
};

#define NR_PAR 3
struct par_row {
	int m;				/* children killed together */
	bool skipped;			/* they do not fit the guest */
	struct dist tail[NR_CFG], back[NR_CFG];	/* all reaped, memory back */
	bool have_one;			/* back_one measured (M = 8) */
	struct dist back_one[2];	/* reaper, self with parallel=0 */
};

struct par_result {			/* 2. parallel */
	unsigned long mb;		/* per child */
	int n;				/* rounds */
	int nr;
	struct par_row rows[NR_PAR];
	double gib, cpu_s;		/* reaper mode: torn down, its CPU */
};

struct spawn_loop {
	const char *name;
	struct ci base;			/* not loaded, per s */
	struct ci ratio[2];		/* reaper, self: loaded / not loaded */
};

struct spawn_result {			/* 3. spawn */
	int n, iters, settle_ms;
	struct spawn_loop loop[2];	/* fork+exec+wait, fork+_exit+wait */
};

struct cpu_result {			/* 4. cpu */
	unsigned long mb;
	int n, rounds;			/* teardowns per round, rounds */
	struct cpu_res drained[NR_CFG], overlap[2];	/* overlap: sync, reaper */
	double gib, cpu_s;		/* reaper mode, drained */
};

struct drain_result {			/* 5. drain, from 2. and 4. */
	double gib, cpu_s;		/* cpu_s 0: nothing to show */
};

struct wake_mode {
	int same, other;		/* wakes on the child's CPU, on another */
	struct dist lat_same, lat_other;
};

struct wake_result {			/* 6. wake */
	unsigned long mb;
	int n;
	struct wake_mode mode[NR_CFG];
};

/* 7. cpusplit: index SPLIT_SPIN | SPLIT_ALLOC (cpusplit.c) */
#define NR_SPLIT 4
struct split_result {
	unsigned long mb;
	int n, rounds;
	bool skipped;			/* fewer than 2 CPUs */
	struct cpu_res s[NR_SPLIT];	/* reaper_ms and preempted only */
};

/* 8. busy: index 0 burners at nice 0, 1 at nice -5 */
#define NR_BUSY 2
#define BUSY_N 16
#define BUSY_MB 96UL
struct busy_result {
	int n;				/* rounds */
	bool have[NR_CFG];		/* false: mode unavailable here */
	int nice[NR_BUSY];
	struct dist back[NR_BUSY][NR_CFG];	/* memory back */
};

/* 9. prefork */
#define PREFORK_MB 96UL
#define PREFORK_FORKS 24
struct prefork_result {
	int n, forks, workers;		/* rounds, forks per round, kept */
	unsigned long base_mb;		/* the server's own, shared */
	bool have[NR_CFG];
	long queued[NR_CFG];		/* of the workers killed: deferred */
	struct dist fork[NR_CFG];	/* fork() latency */
	struct dist respawn[NR_CFG];	/* kill to fork() returned */
};

#define MAX_TARGETS 64
struct target {
	char what[128];
	double value, limit;
	const char *op;			/* "<=" or ">=" */
	bool met;
};

struct target_result {
	bool heading;			/* a section with targets ran */
	int nr;
	struct target t[MAX_TARGETS];
};

struct zap_result {			/* 10. zap */
	int n;				/* rounds */
	bool have_self;
	unsigned long mb[NR_ZAP_SIZES];
	bool ran[NR_ZAP_SIZES];		/* false: no room in this guest */
	struct dist back[NR_ZAP_SIZES][NR_ZAP_VAR];	/* memory back */
	struct dist reap[NR_ZAP_SIZES][NR_ZAP_VAR];	/* kill->waitpid() */
	/* deferred only: the teardown (mm_reaper_reap's ns), its zap phase
	 * (mm_reaper_zap's ns), the rest (the final mmput()) */
	struct dist teardown[NR_ZAP_SIZES][NR_ZAP_VAR];
	struct dist zapped[NR_ZAP_SIZES][NR_ZAP_VAR];
	struct dist rest[NR_ZAP_SIZES][NR_ZAP_VAR];
	long helper_chunks[NR_ZAP_SIZES];	/* all rounds, parallel=1 */
};

struct pin_result {			/* 11. pinned */
	int n, wait_s;			/* rounds, the wait while held */
	unsigned long mb;
	bool ran, have_self;
	int back_rounds[NR_PIN_VAR];	/* memory back while held */
	struct dist back[NR_PIN_VAR];	/* of those: kill to memory back */
	struct dist mmput[NR_PIN_VAR];	/* the holder's final mmput() */
	long zapped[NR_PIN_VAR];	/* pinned_zapped, all rounds */
};

struct results {
	struct run_info run;
	struct lat_result latency;
	struct par_result parallel;
	struct spawn_result spawn;
	struct cpu_result cpu;
	struct drain_result drain;
	struct wake_result wake;
	struct split_result cpusplit;
	struct busy_result busy;
	struct prefork_result prefork;
	struct zap_result zap;
	struct pin_result pinned;
	struct target_result targets;
};

/* common.c */
void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
struct dist dist_of(const uint64_t *in, int n);
struct ci ci_of(const double *v, int n);
double t95(int df);
void settle(void);
void set_cfg(enum cfg c);
bool cfg_available(enum cfg c);
uint64_t task_cpu_ns(pid_t pid);
int task_cpu_of(pid_t pid);
int reaper_pids(pid_t *pids, int max);
uint64_t helper_cpu_ns(void);
uint64_t reaper_cpu_ns(void);
long reaper_preemptions(void);
long reaper_migrations(void);
pid_t spawn(unsigned long mb, enum kind k);
uint64_t wait_mem_back(long base_kb, uint64_t t0);
void warm_up(void);

/* The sections: each fills its part of @r (main.c's table). */
void bench_latency(struct results *r);
void bench_parallel(struct results *r);
void bench_parallel_trace(const char *path);
void bench_spawn(struct results *r);
void bench_cpu(struct results *r);
double cpu_ratio(const struct cpu_res *r, enum cfg c);
void bench_wake(struct results *r);
void bench_cpusplit(struct results *r);
void bench_busy(struct results *r);
void bench_prefork(struct results *r);
void bench_zap(struct results *r);
void bench_pinned(struct results *r);

/* targets.c: the targets of issue 5, from the sections that ran */
void check_targets(struct results *r);

/* render.c: the results as text (stdout) and as JSON (the file) */
void render_open(const char *json_path);
void render_run(const struct results *r);
void render_latency(const struct results *r);
void render_parallel(const struct results *r);
void render_spawn(const struct results *r);
void render_cpu(const struct results *r);
void render_drain(const struct results *r);
void render_wake(const struct results *r);
void render_cpusplit(const struct results *r);
void render_busy(const struct results *r);
void render_prefork(const struct results *r);
void render_zap(const struct results *r);
void render_pinned(const struct results *r);
void render_targets(const struct results *r);
void render_json_end(double elapsed_s);
void render_text_end(double elapsed_s);
void write_plot(const char *path, const struct lat_result *l);

#endif /* BENCH_H */
