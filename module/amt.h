/* SPDX-License-Identifier: GPL-2.0 */
/*
 * async_mm_teardown: declarations shared between the module's files.
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#ifndef AMT_H
#define AMT_H

#include <linux/llist.h>
#include <linux/mm_types.h>
#include <linux/sched.h>
#include "policy.h"

/*
 * An invariant of ours. The debug build (AMT_DEBUG=1, used on the KASAN and
 * lockdep kernel of make check-debug) checks it and WARNs; production
 * builds only type-check the expression, never evaluate it: no side
 * effects inside.
 */
#ifdef AMT_DEBUG
#define AMT_CHECK(cond) WARN_ON_ONCE(!(cond))
#else
#define AMT_CHECK(cond) BUILD_BUG_ON_INVALID(!(cond))
#endif

/* main.c: parameters (see MODULE_PARM_DESC there for their meaning) */
extern bool amt_enabled;
extern unsigned long amt_thresh_pages;
extern unsigned long amt_max_pending_pages;
extern bool amt_oom_guard;

/*
 * One queued teardown. The entry owns the last mm_users reference of @mm;
 * a NULL @mm marks a drain barrier (struct amt_barrier).
 */
struct amt_entry {
	struct llist_node llnode;
	struct mm_struct *mm;
	unsigned long charged;	/* pages charged to the budget at enqueue */
	pid_t pid;		/* the exiting task, for the tracepoints */
};

/* hook.c */
int amt_hook_init(void);
void amt_hook_exit(void);
void amt_wait_redirected(long __percpu *inflight);

/* reaper.c */
int amt_reaper_start(void);
void amt_reaper_stop(void);
bool amt_reaper_charge(unsigned long pages);
void amt_reaper_uncharge(unsigned long pages);
void amt_reaper_queue(struct amt_entry *e);
void amt_reaper_queue_exit(struct amt_entry *e);
bool amt_reaper_wake_owed(void);
/* Exits queued without a wake-up yet (reaper.c); read by self.c's hook. */
extern atomic_t amt_wake_owed;
int amt_reaper_drain(unsigned int timeout_ms);
struct task_struct *amt_reaper_task(void);
long amt_pending_mms(void);
long amt_pending_pages(void);
long amt_pending_pages_peak(void);
void amt_reaper_boost(void);
unsigned long amt_reaper_wait_progress(unsigned int ms);
void amt_reaper_reset_peak(void);

/* fput.c: files closed by the time a drain returns */
void amt_flush_fput(void);
void amt_fput_init(void);
void amt_fput_exit(void);

/* self.c: mode=self */
enum amt_mode { AMT_MODE_REAPER, AMT_MODE_SELF };
extern int amt_mode;
bool amt_self_available(void);
bool amt_self_stash(struct mm_struct *mm, unsigned long rss);
int amt_self_wait(unsigned int ms);
void amt_self_init(void);
void amt_self_exit(void);

/* oom.c: OOM exclusion, OOM-time drain, reclaim visibility, memcg room */
bool amt_oom_involved(struct task_struct *tsk, struct mm_struct *mm);
bool amt_under_pressure(void);
bool amt_memcg_full(struct task_struct *tsk, unsigned long pages);
int amt_oom_init(void);
void amt_oom_exit(void);

/* stats.c: every counter has exactly one place that increments it */
enum amt_stat {
	/* 0 .. AMT_NR_VERDICTS - 1: one counter per enum amt_verdict */
	AMT_STAT_REAPED = AMT_NR_VERDICTS,
	AMT_STAT_REAPED_PAGES,		/* charged pages of reaped mms */
	AMT_STAT_DRAINS,
	AMT_STAT_DRAIN_TIMEOUTS,
	AMT_STAT_OOM_MARKED,		/* victim mms seen by oom:mark_victim */
	AMT_STAT_OOM_SHARER,		/* final drops caught only by that mark */
	AMT_STAT_OOM_DRAINS,		/* OOM notifier calls with a backlog */
	AMT_STAT_OOM_FREED_PAGES,	/* pages reported freed to the OOM killer */
	AMT_STAT_SHRINKER_SCANS,
	AMT_STAT_SELF_DONE,		/* mms torn down by their own task */
	AMT_STAT_SELF_NS,		/* the time those teardowns took */
	AMT_STAT_SELF_MEMPOLICY,	/* self mode impossible: a mempolicy */
	AMT_STAT_WAKE_FALLBACK,		/* reaper woken by the bound, not the exit */
	AMT_STAT_NOT_LAST,		/* exit drops that left another mm user */
	AMT_STAT_UNRECOGNIZED,		/* exiting mmput()s not of the lazy mm */
	AMT_NR_STATS,
};

void amt_stat_inc(unsigned int stat);
void amt_stat_add(unsigned int stat, unsigned long n);
void amt_stat_teardown(u64 ns);
int amt_stats_init(void);
void amt_stats_exit(void);

#endif /* AMT_H */
