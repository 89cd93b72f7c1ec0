// SPDX-License-Identifier: GPL-2.0
/*
 * The deferred set: every deferred mm until its teardown ends. amt_lock
 * guards the entries' states and every list, so each state change is one
 * step (docs/design.md, "Who holds which reference").
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#include <linux/delay.h>
#include <linux/hashtable.h>
#include <linux/list_lru.h>
#include <linux/memcontrol.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/topology.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include "amt.h"
#include "amt_trace.h"
#include "params.h"
#include "pending.h"
#include "policy.h"
#include "stats.h"

static DEFINE_SPINLOCK(amt_lock);
static LIST_HEAD(amt_deferred);		/* every entry, in seq order */
static LIST_HEAD(amt_queue);		/* QUEUED entries */
static DEFINE_HASHTABLE(amt_stash_table, 8);	/* STASHED entries */
static LIST_HEAD(amt_stashes);		/* the same, in stash (seq) order */
static u64 amt_seq;			/* the last seq given out */
static unsigned long amt_freed;		/* pages ended teardowns gave back */

#ifdef AMT_DEBUG
/* debugfs: sleep before stashing under a leader, so it passes exit_notify() */
u32 amt_debug_leader_delay_ms;
/* debugfs: sleep between a charge's budget add and its check */
u32 amt_debug_charge_delay_ms;
#endif

/* Stashes not taken yet; read locklessly by amt_notify_ftrace(). */
atomic_t amt_nr_stashed = ATOMIC_INIT(0);

/*
 * The budget counter takes every capped charge before its check, so it also
 * holds charges about to be rejected; pending_pages and its peak count only
 * admitted charges, or the peak could show a total that was never admitted.
 */
static atomic_long_t amt_budget_cnt = ATOMIC_LONG_INIT(0);
static atomic_long_t amt_pending_pages_cnt = ATOMIC_LONG_INIT(0);
static atomic_long_t amt_pending_mms_cnt = ATOMIC_LONG_INIT(0);
static atomic_long_t amt_pending_peak = ATOMIC_LONG_INIT(0);
static unsigned long amt_peak_gen;
static atomic_long_t amt_ended = ATOMIC_LONG_INIT(0);
/* Self teardowns running, which the freezer cannot see (suspend.c). */
static atomic_t amt_self_running = ATOMIC_INIT(0);
/* Under amt_lock: a suspend is under way, no stash is taken by its task. */
static bool amt_suspending;
/* Entries QUEUED or torn down by a reaper, and their tasks' load weight. */
static atomic_long_t amt_reaper_n = ATOMIC_LONG_INIT(0);
static atomic_long_t amt_reaper_w = ATOMIC_LONG_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(amt_ended_wq);

/* Entries are charged and listed per memcg, for memcg reclaim (memcg.c). */
static struct kmem_cache *amt_entry_cache;
static struct list_lru amt_lru;
static bool amt_lru_on;

static void amt_peak_follow_cap(void)
{
	unsigned long gen = READ_ONCE(amt_max_pending_gen);
	unsigned long seen = READ_ONCE(amt_peak_gen);

	if (seen != gen && cmpxchg(&amt_peak_gen, seen, gen) == seen)
		atomic_long_set(&amt_pending_peak, amt_pending_pages());
}

static void amt_note_peak(long total)
{
	long peak;

	amt_peak_follow_cap();
	peak = atomic_long_read(&amt_pending_peak);

	while (total > peak &&
	       !atomic_long_try_cmpxchg(&amt_pending_peak, &peak, total))
		;
}

/**
 * amt_pending_charge() - count an mm's freeable pages as pending
 * @pages: the charge, memoised in the entry: RSS keeps shrinking
 * @capped: apply max_pending_pages (the reaper's queue; not a stash)
 *
 * Return: true if charged; false (nothing charged) if over the cap: concurrent
 * chargers may over-reject, never over-admit.
 */
bool amt_pending_charge(unsigned long pages, bool capped)
{
	long total = atomic_long_add_return(pages, &amt_budget_cnt);

#ifdef AMT_DEBUG
	if (READ_ONCE(amt_debug_charge_delay_ms))
		msleep(READ_ONCE(amt_debug_charge_delay_ms));
#endif
	if (capped && !amt_budget_ok(total, READ_ONCE(amt_max_pending_pages))) {
		atomic_long_sub(pages, &amt_budget_cnt);
		return false;
	}
	amt_note_peak(atomic_long_add_return(pages, &amt_pending_pages_cnt));
	return true;
}

/**
 * amt_pending_uncharge() - return a charge taken by amt_pending_charge()
 * @pages: the charge
 */
void amt_pending_uncharge(unsigned long pages)
{
	long left = atomic_long_sub_return(pages, &amt_pending_pages_cnt);

	atomic_long_sub(pages, &amt_budget_cnt);
	AMT_CHECK(left >= 0);
}

/**
 * amt_entry_new() - an entry for the mm whose last reference current holds
 * @mm: the mm
 *
 * Return: the entry, not yet charged nor deferred; NULL without memory.
 */
struct amt_entry *amt_entry_new(struct mm_struct *mm)
{
	gfp_t gfp = GFP_NOWAIT | __GFP_NOWARN | __GFP_ZERO;
	struct mem_cgroup *old;
	struct amt_entry *e;

	/*
	 * Current's memcg holds the mm's pages; slab charges it only while
	 * current->mm is set, which exit_mm() has cleared.
	 */
	rcu_read_lock();
	old = set_active_memcg(mem_cgroup_from_task(current));
	if (amt_lru_on)
		e = kmem_cache_alloc_lru(amt_entry_cache, &amt_lru, gfp);
	else
		e = kmem_cache_alloc(amt_entry_cache, gfp);
	set_active_memcg(old);
	rcu_read_unlock();
	if (!e)
		return NULL;
	INIT_LIST_HEAD(&e->lru);
	e->mm = mm;
	e->charged = amt_mm_freeable(mm);
	e->seen_freeable = e->charged;
	e->pid = current->pid;
	e->nice0 = task_nice(current);
	return e;
}

/**
 * amt_entry_free() - free an entry that was never deferred
 * @e: from amt_entry_new()
 */
void amt_entry_free(struct amt_entry *e)
{
	kmem_cache_free(amt_entry_cache, e);
}

static void amt_unstash(struct amt_entry *e)
{
	hash_del(&e->stash);
	list_del(&e->stashed);
	atomic_dec(&amt_nr_stashed);
}

static void amt_enqueue(struct amt_entry *e)
{
	lockdep_assert_held(&amt_lock);
	e->state = AMT_QUEUED;
	list_add_tail(&e->queue, &amt_queue);
	atomic_long_inc(&amt_reaper_n);
	atomic_long_add(amt_nice_weight(e->nice0), &amt_reaper_w);
}

static void amt_stash_to_queue(struct amt_entry *e)
{
	amt_unstash(e);
	amt_enqueue(e);
}

/**
 * amt_defer() - enter a charged entry into the deferred set
 * @e: the entry; from now on it owns the mm reference
 * @task: stash it under this task (current or its leader); NULL: queue it
 */
void amt_defer(struct amt_entry *e, struct task_struct *task)
{
	AMT_CHECK(atomic_read(&e->mm->mm_users) > 0);
	/*
	 * Set before the entry is visible: the list_lru's lock publishes
	 * since and seen_at to amt_lru_sum(), amt_lock since to amt_handoff().
	 */
	e->since = jiffies;
	e->seen_at = e->since;
	if (amt_lru_on)
		amt_lru_add(&amt_lru, &e->lru);
	atomic_long_inc(&amt_pending_mms_cnt);
	if (task) {
		/* The entry may outlive the task (a second oops in exit). */
		get_task_struct(task);
		e->task = task;
	}
	spin_lock(&amt_lock);
	e->seq = ++amt_seq;
	list_add_tail(&e->deferred, &amt_deferred);
	if (task) {
		e->state = AMT_STASHED;
		hash_add(amt_stash_table, &e->stash, (unsigned long)task);
		list_add_tail(&e->stashed, &amt_stashes);
		atomic_inc(&amt_nr_stashed);
	} else {
		amt_enqueue(e);
	}
	spin_unlock(&amt_lock);
}

static struct amt_entry *amt_start(struct amt_entry *e)
{
	lockdep_assert_held(&amt_lock);
	/* Keep the struct (not the memory) for amt_progress() readers. */
	mmgrab(e->mm);
	e->freeable0 = amt_mm_freeable(e->mm);
	e->state = AMT_RUNNING;
	/* read by amt_lru_sum() under the list_lru's lock, not this one */
	WRITE_ONCE(e->started, jiffies ?: 1);
	return e;
}

/**
 * amt_stash_own() - has @tsk a stash of its own to tear down?
 * @tsk: current, after exit_notify()
 *
 * Return: true if @tsk's own stash (not one for the reaper) waits; a snapshot.
 */
bool amt_stash_own(struct task_struct *tsk)
{
	struct amt_entry *e;
	bool own = false;

	spin_lock(&amt_lock);
	hash_for_each_possible(amt_stash_table, e, stash, (unsigned long)tsk) {
		if (e->task == tsk && !e->to_reaper) {
			own = true;
			break;
		}
	}
	spin_unlock(&amt_lock);
	return own;
}

/**
 * amt_stash_take() - take back an entry stashed under @tsk, if still stashed
 * @tsk: current, after exit_notify()
 * @queued: set if @tsk's stashes for the reaper were queued (caller wakes it)
 *
 * Return: the entry, now RUNNING; NULL if none (or handed off meanwhile).
 */
struct amt_entry *amt_stash_take(struct task_struct *tsk, bool *queued)
{
	struct amt_entry *e, *found = NULL;
	struct hlist_node *tmp;

	spin_lock(&amt_lock);
	hash_for_each_possible_safe(amt_stash_table, e, tmp, stash,
				    (unsigned long)tsk) {
		if (e->task == tsk && (e->to_reaper || amt_suspending)) {
			amt_stash_to_queue(e);
			*queued = true;
		} else if (e->task == tsk) {
			amt_unstash(e);
			found = amt_start(e);
			atomic_inc(&amt_self_running);
			break;
		}
	}
	spin_unlock(&amt_lock);
	return found;
}

/**
 * amt_defer_to_leader() - stash a thread's entry under its group leader
 * @e: the entry, charged; with ->to_reaper the leader queues it
 * @leader: from amt_stash_leader(), unreleased while current is in its group
 *
 * Return: true if the leader has it (or took it meanwhile); else it is
 * current's again: stashed, or queued if ->to_reaper (caller owes a wake-up).
 */
bool amt_defer_to_leader(struct amt_entry *e, struct task_struct *leader)
{
	bool rekeyed = false, left = true;
	struct hlist_node *tmp;
	struct amt_entry *x;

#ifdef AMT_DEBUG
	if (READ_ONCE(amt_debug_leader_delay_ms))
		msleep(READ_ONCE(amt_debug_leader_delay_ms));
#endif
	amt_defer(e, leader);
	/*
	 * Pairs with the smp_mb() in amt_notify_ftrace() between the leader's
	 * exit_state and its read of amt_nr_stashed: it sees our stash or we
	 * its exit_state; under amt_lock exactly one of us takes the entry.
	 */
	smp_mb();
	if (!READ_ONCE(leader->exit_state))
		return true;
	spin_lock(&amt_lock);
	/* by key and pid (one drop per thread): @e may be freed */
	hash_for_each_possible_safe(amt_stash_table, x, tmp, stash,
				    (unsigned long)leader) {
		if (x->task != leader || x->pid != current->pid)
			continue;
		left = false;
		if (x->to_reaper) {
			/* its reference of the leader goes with it */
			amt_stash_to_queue(x);
			break;
		}
		hash_del(&x->stash);
		get_task_struct(current);
		x->task = current;
		hash_add(amt_stash_table, &x->stash, (unsigned long)current);
		rekeyed = true;
		break;
	}
	spin_unlock(&amt_lock);
	/* the reference it held: not the leader's last (above) */
	if (rekeyed)
		put_task_struct(leader);
	if (!left)
		amt_stat_inc(AMT_STAT_to_leader_back);
	return left;
}

/**
 * amt_queue_take() - take the oldest queued entry, for a reaper
 *
 * Return: the entry, now RUNNING; NULL if the queue is empty.
 */
struct amt_entry *amt_queue_take(void)
{
	struct amt_entry *e;

	spin_lock(&amt_lock);
	e = list_first_entry_or_null(&amt_queue, struct amt_entry, queue);
	if (e) {
		list_del(&e->queue);
		amt_start(e);
	}
	spin_unlock(&amt_lock);
	return e;
}

/**
 * amt_queue_empty() - is nothing waiting for the reaper?
 *
 * Return: true if no entry is QUEUED; a lockless snapshot.
 */
bool amt_queue_empty(void)
{
	return list_empty_careful(&amt_queue);
}

/**
 * amt_handoff() - give stashed entries to the reaper
 * @which: which stashes (enum amt_handoff_which)
 * @next: if not NULL, set to when the oldest stash left becomes late, or 0
 *
 * Return: how many were handed off; if any, the caller wakes the reaper.
 */
unsigned int amt_handoff(enum amt_handoff_which which, unsigned long *next)
{
	struct amt_entry *e, *tmp;
	unsigned int n = 0;

	if (next)
		*next = 0;
	if (!atomic_read(&amt_nr_stashed))
		return 0;
	spin_lock(&amt_lock);
	list_for_each_entry_safe(e, tmp, &amt_stashes, stashed) {
		/* stash order: the rest are younger still */
		if (which == AMT_HANDOFF_LATE &&
		    time_before(jiffies, e->since + AMT_STASH_MAX)) {
			if (next)
				*next = e->since + AMT_STASH_MAX;
			break;
		}
		/* the entry's task reference keeps ->exit_state readable */
		if (which == AMT_HANDOFF_STUCK && READ_ONCE(e->task->exit_state))
			continue;
		amt_stash_to_queue(e);
		n++;
	}
	spin_unlock(&amt_lock);
	if (n)
		amt_stat_add(AMT_STAT_handoffs, n);
	return n;
}

/* Freeable pages of @mm, exact (a lingering teardown ends at 0). */
static unsigned long amt_mm_freeable_exact(struct mm_struct *mm)
{
	return amt_mm_counter_exact(mm, MM_ANONPAGES) +
	       amt_mm_counter_exact(mm, MM_SWAPENTS);
}

static void amt_finish(struct amt_entry *e)
{
	struct mm_struct *mm = e->mm;
	unsigned long left;
	long mms;

	if (amt_lru_on)
		amt_lru_del(&amt_lru, &e->lru);
	left = amt_mm_freeable(mm);
	/* counted before unlisted: a drain returning must find it counted */
	amt_pending_uncharge(e->charged);
	if (e->by_self) {
		amt_stat_inc(AMT_STAT_reaped_by_self);
		amt_stat_add(AMT_STAT_self_ns_total, e->ns);
	} else {
		amt_stat_inc(AMT_STAT_reaped_by_reaper);
		amt_stat_teardown(e->ns);
	}
	amt_stat_add(AMT_STAT_reaped_pages, e->charged);
	trace_mm_reaper_reap(e->pid, e->charged, e->freeable0, numa_node_id(),
			     e->ns, e->by_self);
	mms = atomic_long_dec_return(&amt_pending_mms_cnt);
	AMT_CHECK(mms >= 0);

	spin_lock(&amt_lock);
	list_del(&e->deferred);
	amt_freed += e->freeable0 > left ? e->freeable0 - left : 0;
	spin_unlock(&amt_lock);
	mmdrop(mm);
	atomic_long_inc(&amt_ended);
	wake_up_all(&amt_ended_wq);
	if (e->task)
		put_task_struct(e->task);
	kmem_cache_free(amt_entry_cache, e);
}

/* Under amt_lock: entries whose mm a late user holds (amt_teardown()). */
static LIST_HEAD(amt_lingering);
#define AMT_LINGER_POLL	(HZ / 10 ?: 1)
static void amt_linger_fn(struct work_struct *w);
static DECLARE_DELAYED_WORK(amt_linger_work, amt_linger_fn);

static bool amt_linger_collect(struct list_head *done, bool all)
{
	struct amt_entry *e, *tmp;
	bool more;

	spin_lock(&amt_lock);
	list_for_each_entry_safe(e, tmp, &amt_lingering, linger)
		if (all || (!atomic_read(&e->mm->mm_users) &&
			    !amt_mm_freeable_exact(e->mm)))
			list_move_tail(&e->linger, done);
	more = !list_empty(&amt_lingering);
	spin_unlock(&amt_lock);
	return more;
}

static void amt_linger_fn(struct work_struct *w)
{
	struct amt_entry *e, *tmp;
	LIST_HEAD(done);
	bool more = amt_linger_collect(&done, false);

	list_for_each_entry_safe(e, tmp, &done, linger)
		amt_finish(e);
	if (more)
		schedule_delayed_work(&amt_linger_work, AMT_LINGER_POLL);
}

/**
 * amt_pending_linger_flush() - at unload: end every lingering entry now
 *
 * Entries hold only mm_count: a late user's mmput() still frees the memory.
 */
void amt_pending_linger_flush(void)
{
	struct amt_entry *e, *tmp;
	LIST_HEAD(done);

	cancel_delayed_work_sync(&amt_linger_work);
	amt_linger_collect(&done, true);
	list_for_each_entry_safe(e, tmp, &done, linger)
		amt_finish(e);
}

/**
 * amt_teardown() - tear a RUNNING entry's mm down, account it, free it
 * @e: from amt_stash_take() or amt_queue_take()
 * @by_self: the dying task itself runs it (else a reaper)
 *
 * If a late user (mmget_not_zero()) holds the mm, the entry stays deferred
 * and charged until the mm has no user nor freeable page (amt_linger_fn()).
 *
 * Context: process context, no locks held; sleeps as long as __mmput().
 */
void amt_teardown(struct amt_entry *e, bool by_self)
{
	struct mm_struct *mm = e->mm;
	u64 t0 = ktime_get_ns();
	bool late, held, pinned, helpers;

	AMT_CHECK(e->state == AMT_RUNNING);
	held = e->pinned && atomic_read(&mm->mm_users) > 1;
	/* pinned still: its private memory goes now, the rest with them */
	pinned = held && READ_ONCE(amt_zap_pinned);
	/*
	 * Helpers for the only teardown: others, stashed included, take CPUs;
	 * none for a held mm once zap_pinned=0 (its memory waits for them).
	 */
	helpers = (!held || pinned) &&
		atomic_read(&amt_self_running) + atomic_read(&amt_nr_stashed) +
		atomic_long_read(&amt_reaper_n) <= 1;
	pinned = amt_zap(mm, e->pid, pinned, helpers) && pinned;
	if (pinned)
		amt_stat_inc(AMT_STAT_pinned_zapped);
	/* The deferred reference, normally the last: __mmput() runs here. */
	mmput(mm);
	e->ns = ktime_get_ns() - t0;
	e->by_self = by_self;
	/* our part is done: a suspend and the catch-up stop counting it */
	if (by_self) {
		atomic_dec(&amt_self_running);
	} else {
		atomic_long_sub(amt_nice_weight(e->nice0), &amt_reaper_w);
		atomic_long_dec(&amt_reaper_n);
	}
	/* (a zapped pinned mm's holders keep what is left, as inline) */
	late = !pinned &&
	       (atomic_read(&mm->mm_users) || amt_mm_freeable_exact(mm));
	if (late) {
		amt_stat_inc(AMT_STAT_late_users);
		spin_lock(&amt_lock);
		list_add_tail(&e->linger, &amt_lingering);
		spin_unlock(&amt_lock);
		schedule_delayed_work(&amt_linger_work, AMT_LINGER_POLL);
		return;
	}
	amt_finish(e);
}

/**
 * amt_progress() - freeable pages given back by deferred teardowns so far
 *
 * Return: pages since load, of ended and running teardowns; only grows.
 */
unsigned long amt_progress(void)
{
	struct amt_entry *e;
	unsigned long sum, now;

	spin_lock(&amt_lock);
	sum = amt_freed;
	list_for_each_entry(e, &amt_deferred, deferred) {
		if (e->state != AMT_RUNNING)
			continue;
		now = amt_mm_freeable(e->mm);
		if (now < e->freeable0)
			sum += e->freeable0 - now;
	}
	spin_unlock(&amt_lock);
	return sum;
}

/**
 * amt_pending_suspend() - a suspend or hibernation begins or ends
 * @on: true from its preparation to its end: amt_stash_take() then queues
 */
void amt_pending_suspend(bool on)
{
	spin_lock(&amt_lock);
	amt_suspending = on;
	spin_unlock(&amt_lock);
}

/**
 * amt_pending_self_running() - self teardowns running now
 *
 * Return: how many tasks took their stash and are tearing it down.
 */
int amt_pending_self_running(void)
{
	return atomic_read(&amt_self_running);
}

/**
 * amt_pending_reaper_load() - the teardowns the reapers have to do
 * @weight: set to the sum of amt_nice_weight() of their tasks' nice
 *
 * Return: entries queued or with a reaper; lockless, @weight may lag by one.
 */
unsigned long amt_pending_reaper_load(unsigned long *weight)
{
	*weight = max_t(long, atomic_long_read(&amt_reaper_w), 0);
	return max_t(long, atomic_long_read(&amt_reaper_n), 0);
}

/**
 * amt_wait_ended() - wait until a deferred teardown ends, or @timeout passes
 * @timeout: the most to wait, in jiffies
 */
void amt_wait_ended(long timeout)
{
	long seen = atomic_long_read(&amt_ended);

	wait_event_timeout(amt_ended_wq,
			   atomic_long_read(&amt_ended) != seen ||
			   !amt_pending_mms(), timeout);
}

/**
 * amt_epoch() - the seq of the newest deferral so far
 *
 * Return: everything deferred before the call has a seq up to this.
 */
u64 amt_epoch(void)
{
	u64 seq;

	spin_lock(&amt_lock);
	seq = amt_seq;
	spin_unlock(&amt_lock);
	return seq;
}

static bool amt_epoch_done(u64 epoch)
{
	struct amt_entry *e;
	bool done;

	spin_lock(&amt_lock);
	e = list_first_entry_or_null(&amt_deferred, struct amt_entry,
				     deferred);
	done = !e || e->seq > epoch;
	spin_unlock(&amt_lock);
	return done;
}

/**
 * amt_wait_epoch() - wait until every deferral up to @epoch has ended
 * @epoch: from amt_epoch()
 * @timeout: the most to wait, in jiffies
 *
 * Return: time left (> 0) once done, 0 on timeout, < 0 on a fatal signal.
 */
long amt_wait_epoch(u64 epoch, long timeout)
{
	return wait_event_killable_timeout(amt_ended_wq, amt_epoch_done(epoch),
					   timeout);
}

/**
 * amt_pending_mms() - deferred mms whose teardown has not ended
 *
 * Return: their number.
 */
long amt_pending_mms(void)
{
	return atomic_long_read(&amt_pending_mms_cnt);
}

/**
 * amt_pending_pages() - freeable pages of the deferred mms
 *
 * Return: the sum of their charges (amt_pending_charge()).
 */
long amt_pending_pages(void)
{
	return atomic_long_read(&amt_pending_pages_cnt);
}

/**
 * amt_pending_pages_peak() - the highest amt_pending_pages()
 *
 * Return: the peak since load or the last change of max_pending_pages.
 */
long amt_pending_pages_peak(void)
{
	amt_peak_follow_cap();
	return atomic_long_read(&amt_pending_peak);
}

/**
 * amt_pending_empty() - at unload: nothing may be left
 *
 * Return: true if no entry is deferred.
 */
bool amt_pending_empty(void)
{
	bool empty;

	spin_lock(&amt_lock);
	empty = list_empty(&amt_deferred);
	spin_unlock(&amt_lock);
	return empty;
}

/**
 * amt_pending_init() - create the entry cache
 *
 * Return: 0 or -ENOMEM.
 */
int amt_pending_init(void)
{
	amt_entry_cache = KMEM_CACHE(amt_entry, SLAB_ACCOUNT);
	return amt_entry_cache ? 0 : -ENOMEM;
}

/**
 * amt_pending_lru_init() - make entries visible to memcg reclaim
 * @shrinker: memcg.c's memcg-aware shrinker, registered before v6.7 only
 *
 * Context: module init, before any deferral.
 * Return: 0, or a negative errno: memcg reclaim then cannot see entries.
 */
int amt_pending_lru_init(struct shrinker *shrinker)
{
	int ret = list_lru_init_memcg(&amt_lru, shrinker);

	/* pairs with the acquires below: the shrinker may run (before v6.7) */
	if (!ret)
		smp_store_release(&amt_lru_on, true);
	return ret;
}

/**
 * amt_pending_exit() - free the cache and amt_lru
 *
 * Context: module exit, after the last teardown has ended.
 */
void amt_pending_exit(void)
{
	AMT_CHECK(amt_pending_empty());
	if (amt_lru_on)
		list_lru_destroy(&amt_lru);
	amt_lru_on = false;
	kmem_cache_destroy(amt_entry_cache);
}

/**
 * amt_pending_memcg_visible() - does memcg reclaim see the entries?
 *
 * Return: true if amt_lru exists and slab objects are charged to memcgs
 * (not with cgroup.memory=nokmem, nor before a non-root memcg exists).
 */
bool amt_pending_memcg_visible(void)
{
	return amt_lru_on && amt_memcg_kmem_on();
}

/**
 * amt_pending_memcg_walk() - look at each entry deferred in one memcg
 * @sc: the shrinker's memcg and node
 * @fn: called under the list's lock per entry; its mm is alive while listed
 *	(the deferred reference, or amt_start()'s mmgrab())
 * @arg: for @fn
 */
void amt_pending_memcg_walk(struct shrink_control *sc, list_lru_walk_cb fn,
			    void *arg)
{
	unsigned long nr = ULONG_MAX;

	if (smp_load_acquire(&amt_lru_on))
		list_lru_walk_one(&amt_lru, sc->nid, sc->memcg, fn, arg, &nr);
}

/**
 * amt_pending_memcg_count() - entries deferred in one memcg
 * @sc: the shrinker's memcg and node
 *
 * Return: how many entries of @sc->memcg on @sc->nid have not ended.
 */
unsigned long amt_pending_memcg_count(struct shrink_control *sc)
{
	if (!smp_load_acquire(&amt_lru_on))
		return 0;
	return list_lru_shrink_count(&amt_lru, sc);
}
