/* SPDX-License-Identifier: GPL-2.0 */
/*
 * exit_latency, the benchmark of make bench (main.c says what it measures):
 * what its sections share. One file per section (latency.c, parallel.c,
 * spawn.c, cpu.c, wake.c, cpusplit.c), listed in main.c's table; helpers
 * in common.c; the targets in targets.c.
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
#include "../../tests/guest/lib/amt_test.h"

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

/* The sections --only can name, in the order they run (main.c's table). */
enum section {
	S_LATENCY, S_PARALLEL, S_SPAWN, S_CPU, S_WAKE, S_CPUSPLIT, NR_SECTIONS
};
extern unsigned int sections;
#define RUNS(sec) (sections & (1U << (sec)))

/* The JSON file (common.c writes the shared shapes). */
extern FILE *json;
extern int json_items;		/* items in the open JSON array */

struct dist {
	int n;
	double med, p10, p90, p99, min, max;	/* ms */
};

struct ci {
	double mean, lo, hi;
};

struct lat_row {
	enum kind kind;
	unsigned long mb;
	bool voluntary;
	int n;
	uint64_t lat[NR_CFG][MAX_SAMPLES];
	uint64_t back[NR_CFG][MAX_SAMPLES];	/* 0: not measured */
};

struct cpu_res {
	double child_ms, reaper_ms;	/* per teardown */
	double preempted;		/* the reaper, per teardown */
	double migrated;		/* the reaper, per teardown; < 0: unknown */
};

/* common.c */
void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
struct dist dist_of(const uint64_t *in, int n);
struct ci ci_of(const double *v, int n);
double t95(int df);
void json_dist(const char *key, const struct dist *d);
void json_array(const char *key);
void json_item(void);
void settle(void);
void set_cfg(enum cfg c);
uint64_t task_cpu_ns(pid_t pid);
int reaper_pids(pid_t *pids, int max);
uint64_t reaper_cpu_ns(void);
long reaper_preemptions(void);
long reaper_migrations(void);
pid_t spawn(unsigned long mb, enum kind k);
uint64_t wait_mem_back(long base_kb, uint64_t t0);
void warm_up(void);

/* The sections, and what later ones read of earlier ones' results. */
void bench_latency(void);
void write_plot(const char *path);
extern struct lat_row *lat_rows;
extern int nr_lat_rows;

void bench_parallel(void);
extern double drain_gib, drain_cpu_s;	/* reaper-mode totals for 5. */
extern struct dist par_tail[NR_CFG], par_back[NR_CFG];	/* M = 8 */
extern bool have_par8;

void bench_spawn(void);
extern double spawn_ratio[2][2][MAX_SAMPLES];	/* [loop][reaper, self][round] */
extern int spawn_n;

void bench_cpu(void);
extern struct cpu_res cpu_d[NR_CFG], cpu_o[2];
double cpu_ratio(const struct cpu_res *r, enum cfg c);

void bench_wake(void);
void bench_cpusplit(void);

/* targets.c */
void report_targets(void);

#endif /* BENCH_H */
