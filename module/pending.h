/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The deferred set (pending.c): every deferred mm from the deferral to the
 * end of its teardown.
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#ifndef AMT_PENDING_H
#define AMT_PENDING_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/list_lru.h>
#include <linux/mm.h>
#include <linux/mm_types.h>
#include <linux/sched.h>
#include <linux/shrinker.h>
#include "zap.h"

/*
 * One deferred teardown. It owns the last mm_users reference of @mm from
 * amt_defer() until amt_teardown() drops it, and is in one state, changed
 * under pending.c's lock: STASHED (mode=self: kept for its task, which
 * takes it after exit_notify()), QUEUED (for the reaper) or RUNNING (taken;
 * its taker alone tears it down).
 */
enum amt_entry_state { AMT_STASHED, AMT_QUEUED, AMT_RUNNING };

struct amt_entry {
	struct list_head deferred;	/* on the deferred list until it ends */
	struct list_head lru;		/* on amt_lru by memcg, until it ends */
	struct list_head queue;		/* on the reaper's queue while QUEUED */
	struct hlist_node stash;	/* in the stash table while STASHED */
	struct list_head stashed;	/* and on amt_stashes, in that order */
	struct task_struct *task;	/* stashed under it (a reference) */
	struct mm_struct *mm;
	unsigned long charged;	/* freeable pages counted in pending_pages */
	unsigned long freeable0; /* freeable pages when its teardown began */
	unsigned long since;	/* jiffies at the deferral */
	unsigned long started;	/* jiffies its teardown began (0: not yet) */
	unsigned long seen_freeable;	/* memcg reclaim's last look ... */
	unsigned long seen_at;		/* ... and when it last fell */
	u64 seq;		/* deferral order, for drains */
	pid_t pid;		/* the exiting task, for the tracepoints */
	enum amt_entry_state state;	/* under pending.c's lock */
	int nice0;		/* the dying task's nice */
	bool by_self;		/* its teardown ran in its task */
	u64 ns;			/* how long our mmput() took */
	struct list_head linger; /* on amt_lingering: a late user has it */
	bool to_reaper;		/* stashed under a leader for the reaper */
	bool pinned;		/* non-task holders shared it at the drop */
};

/*
 * The longest a stashed mm waits for its task to reach its teardown after
 * exit_notify() before the reaper takes it (docs/design.md, "The bound on
 * a stash, and the hand-off").
 */
#define AMT_STASH_MAX	(HZ / 10)

enum amt_handoff_which {
	AMT_HANDOFF_LATE,	/* stashed AMT_STASH_MAX ago or more */
	/*
	 * Their task has not reached exit_notify(); one past it takes its
	 * stash within AMT_YIELD and a nap.
	 */
	AMT_HANDOFF_STUCK,
	AMT_HANDOFF_ALL,
};

#ifdef AMT_DEBUG
extern u32 amt_debug_leader_delay_ms;
extern u32 amt_debug_charge_delay_ms;
#endif

extern atomic_t amt_nr_stashed;

int amt_pending_init(void);
void amt_pending_exit(void);
int amt_pending_lru_init(struct shrinker *shrinker);
bool amt_pending_memcg_visible(void);
void amt_pending_memcg_walk(struct shrink_control *sc, list_lru_walk_cb fn,
			    void *arg);
unsigned long amt_pending_memcg_count(struct shrink_control *sc);
bool amt_pending_charge(unsigned long pages, bool capped);
void amt_pending_uncharge(unsigned long pages);
struct amt_entry *amt_entry_new(struct mm_struct *mm);
void amt_entry_free(struct amt_entry *e);
void amt_defer(struct amt_entry *e, struct task_struct *task);
bool amt_defer_to_leader(struct amt_entry *e, struct task_struct *leader);
bool amt_stash_own(struct task_struct *tsk);
struct amt_entry *amt_stash_take(struct task_struct *tsk, bool *queued);
struct amt_entry *amt_queue_take(void);
bool amt_queue_empty(void);
unsigned int amt_handoff(enum amt_handoff_which which, unsigned long *next);
void amt_teardown(struct amt_entry *e, bool by_self);
void amt_pending_linger_flush(void);
unsigned long amt_progress(void);
unsigned long amt_pending_reaper_load(unsigned long *weight);
void amt_pending_suspend(bool on);
int amt_pending_self_running(void);
void amt_wait_ended(long timeout);
u64 amt_epoch(void);
long amt_wait_epoch(u64 epoch, long timeout);
long amt_pending_mms(void);
long amt_pending_pages(void);
long amt_pending_pages_peak(void);
bool amt_pending_empty(void);

#endif /* AMT_PENDING_H */
