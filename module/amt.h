/* SPDX-License-Identifier: GPL-2.0 */
/*
 * async_mm_teardown: declarations shared between the module's files.
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#ifndef AMT_H
#define AMT_H

#include <linux/list.h>
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
 * One deferred teardown (pending.c). It owns the last mm_users reference of
 * @mm from amt_defer() until amt_teardown() drops it.
 */
enum amt_entry_state { AMT_STASHED, AMT_QUEUED, AMT_RUNNING };

struct amt_entry {
	struct list_head deferred;	/* on the deferred list until it ends */
	struct list_head queue;		/* on the reaper's queue while QUEUED */
	struct hlist_node stash;	/* in the stash table while STASHED */
	struct task_struct *task;	/* mode=self: the task (a reference) */
	struct mm_struct *mm;
	unsigned long charged;	/* freeable pages counted in pending_pages */
	unsigned long freeable0; /* freeable pages when its teardown began */
	unsigned long rss;	/* RSS at the deferral, for the tracepoints */
	unsigned long since;	/* jiffies at the deferral */
	u64 seq;		/* deferral order, for drains */
	pid_t pid;		/* the exiting task, for the tracepoints */
	enum amt_entry_state state;	/* under pending.c's lock */
	int nice0;		/* self: the task's nice before its teardown */
	bool reniced;		/* self: it tears down at nice 19 */
};

/*
 * The longest a stashed mm waits for its task to reach its teardown after
 * exit_notify() before the reaper takes it (docs/design.md, "The bound").
 */
#define AMT_STASH_MAX	(HZ / 10)

enum amt_handoff_which {
	AMT_HANDOFF_LATE,	/* stashed AMT_STASH_MAX ago or more */
	AMT_HANDOFF_STUCK,	/* their task has not reached exit_notify() */
	AMT_HANDOFF_ALL,
};

/* pending.c: the deferred set */
extern atomic_t amt_nr_stashed;
bool amt_pending_charge(unsigned long pages, bool capped);
void amt_pending_uncharge(unsigned long pages);
struct amt_entry *amt_entry_new(struct mm_struct *mm, unsigned long rss);
void amt_defer(struct amt_entry *e, struct task_struct *task);
struct amt_entry *amt_stash_take(struct task_struct *tsk);
struct amt_entry *amt_queue_take(void);
bool amt_queue_empty(void);
unsigned int amt_handoff(enum amt_handoff_which which, unsigned long *next);
void amt_self_unrenice(void);
void amt_teardown(struct amt_entry *e, bool by_self);
unsigned long amt_progress(void);
void amt_wait_ended(long timeout);
u64 amt_epoch(void);
long amt_wait_epoch(u64 epoch, long timeout);
long amt_pending_mms(void);
long amt_pending_pages(void);
long amt_pending_pages_peak(void);
void amt_pending_reset_peak(void);
bool amt_pending_empty(void);

/* hook.c */
int amt_hook_init(void);
void amt_hook_exit(void);
void amt_wait_redirected(long __percpu *inflight);

/* reaper.c */
#define AMT_MAX_REAPERS 16
int amt_reaper_start(unsigned int n);
void amt_reaper_stop(void);
bool amt_is_reaper(struct task_struct *t);
u64 amt_reaper_cpu_ns(void);
unsigned int amt_reaper_count(void);
void amt_reaper_queue_exit(struct amt_entry *e);
void amt_reaper_watch_stash(void);
unsigned int amt_reaper_handoff(enum amt_handoff_which which);
bool amt_reaper_wake_owed(void);
/* Exits queued without a wake-up yet (reaper.c); read by self.c's hook. */
extern atomic_t amt_wake_owed;
int amt_reaper_drain(unsigned int timeout_ms);
struct task_struct *amt_reaper_task(void);
void amt_reaper_boost(void);
unsigned long amt_reaper_wait_progress(unsigned int ms);

/* fput.c: files closed by the time a drain returns */
void amt_flush_fput(void);
void amt_fput_init(void);
void amt_fput_exit(void);

/* self.c: mode=self */
enum amt_mode { AMT_MODE_REAPER, AMT_MODE_SELF };
extern int amt_mode;
bool amt_self_available(void);
bool amt_self_possible(void);
void amt_self_stash(struct amt_entry *e);
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
	AMT_STAT_REAPED_REAPER = AMT_NR_VERDICTS, /* torn down by the reaper */
	AMT_STAT_REAPED_SELF,		/* torn down by their own task */
	AMT_STAT_REAPED_PAGES,		/* charged pages of reaped mms */
	AMT_STAT_HANDOFFS,		/* stashes the reaper took over */
	AMT_STAT_DRAINS,
	AMT_STAT_DRAIN_TIMEOUTS,
	AMT_STAT_OOM_MARKED,		/* victim mms seen by oom:mark_victim */
	AMT_STAT_OOM_SHARER,		/* final drops caught only by that mark */
	AMT_STAT_OOM_DRAINS,		/* OOM notifier calls with a backlog */
	AMT_STAT_OOM_FREED_PAGES,	/* pages reported freed to the OOM killer */
	AMT_STAT_SHRINKER_SCANS,
	AMT_STAT_SELF_NS,		/* the time self teardowns took */
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
