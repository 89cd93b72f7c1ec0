// SPDX-License-Identifier: GPL-2.0
/*
 * The mm_reaper: one freezable, nice-19 kthread that tears queued mms down,
 * fed through a lock-free llist so that parallel exits never serialise on a
 * lock. Also the pending-pages budget and the drain barrier.
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#include <linux/file.h>
#include <linux/freezer.h>
#include <linux/kref.h>
#include <linux/kthread.h>
#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/topology.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include "amt.h"
#include "amt_trace.h"

static LLIST_HEAD(amt_queue);
static DECLARE_WAIT_QUEUE_HEAD(amt_reaper_wq);
/*
 * Freeing progress, for the OOM notifier: pages actually freed by finished
 * teardowns plus what the teardown in flight has unmapped so far (its RSS
 * falls as exit_mmap() zaps). Under amt_progress_lock, so that the sum only
 * grows as a teardown finishes and its mm stays alive while read.
 */
static DECLARE_WAIT_QUEUE_HEAD(amt_progress_wq);
static DEFINE_SPINLOCK(amt_progress_lock);
static unsigned long amt_freed_pages;		/* finished teardowns */
static struct mm_struct *amt_cur_mm;		/* in flight, mmgrab()bed */
static unsigned long amt_cur_rss0;		/* its RSS when it started */
/* Reclaim or the OOM killer asked for the queue: run at normal priority. */
static bool amt_boosted;
static DEFINE_SPINLOCK(amt_boost_lock);

/* Unboost only if the queue is still empty: decided under the lock. */
static void amt_set_boost(struct task_struct *t, bool on)
{
	spin_lock(&amt_boost_lock);
	if (amt_boosted != on && (on || llist_empty(&amt_queue))) {
		amt_boosted = on;
		set_user_nice(t, on ? 0 : MAX_NICE);
	}
	spin_unlock(&amt_boost_lock);
}
static struct task_struct *amt_reaper;

/*
 * Exits queued without a wake-up. Woken at once, the reaper would take the
 * idle CPU while the dying task still runs towards exit_notify(), and the
 * parent, woken there, would queue behind one or the other. So an exit
 * queues quietly and the reaper is woken from self.c's hook, which every
 * exiting task reaches right after exit_notify(). The work item bounds the
 * delay for a task that stalls in between (closing files, say).
 */
atomic_t amt_wake_owed = ATOMIC_INIT(0);
#define AMT_WAKE_LATE_MAX	(HZ / 10)
static void amt_wake_late_fn(struct work_struct *w);
static DECLARE_DELAYED_WORK(amt_wake_late_work, amt_wake_late_fn);

static atomic_long_t amt_pending_pages_cnt = ATOMIC_LONG_INIT(0);
static atomic_long_t amt_pending_mms_cnt = ATOMIC_LONG_INIT(0);
static atomic_long_t amt_pending_peak = ATOMIC_LONG_INIT(0);

/*
 * A drain barrier rides the queue like an mm. The reaper takes entries in
 * llist_add() order, so when it reaches the barrier everything queued before
 * it has been torn down. Two references: the drainer's and the queue's, so a
 * drainer that gives up (timeout, fatal signal) never frees a queued entry.
 */
struct amt_barrier {
	struct amt_entry entry;	/* entry.mm == NULL */
	struct kref ref;
	struct completion done;
};

static void amt_barrier_free(struct kref *ref)
{
	kfree(container_of(ref, struct amt_barrier, ref));
}

static void amt_note_peak(long total)
{
	long peak = atomic_long_read(&amt_pending_peak);

	while (total > peak &&
	       !atomic_long_try_cmpxchg(&amt_pending_peak, &peak, total))
		;
}

/**
 * amt_reaper_charge() - reserve budget for a teardown about to be queued
 * @pages: the mm's RSS, memoised: it keeps shrinking after the last user
 *
 * Return: true if charged; false (nothing charged) if over the cap.
 */
bool amt_reaper_charge(unsigned long pages)
{
	long total = atomic_long_add_return(pages, &amt_pending_pages_cnt);

	if (!amt_budget_ok(total, READ_ONCE(amt_max_pending_pages))) {
		atomic_long_sub(pages, &amt_pending_pages_cnt);
		return false;
	}
	amt_note_peak(total);
	return true;
}

/**
 * amt_reaper_uncharge() - return a charge taken by amt_reaper_charge()
 * @pages: the charge
 */
void amt_reaper_uncharge(unsigned long pages)
{
	long left = atomic_long_sub_return(pages, &amt_pending_pages_cnt);

	AMT_CHECK(left >= 0);
}

static void amt_reaper_add(struct amt_entry *e)
{
	/* the queued reference is a live one (the task's last, normally) */
	AMT_CHECK(!e->mm || atomic_read(&e->mm->mm_users) > 0);
	if (e->mm)
		atomic_long_inc(&amt_pending_mms_cnt);
	/* llist_add() is a full barrier: the reaper sees a complete entry. */
	llist_add(&e->llnode, &amt_queue);
}

/**
 * amt_reaper_queue() - hand an entry (and its mm reference) to the reaper
 * @e: the entry; the reaper owns and frees it from now on
 */
void amt_reaper_queue(struct amt_entry *e)
{
	amt_reaper_add(e);
	wake_up(&amt_reaper_wq);
}

/**
 * amt_reaper_queue_exit() - queue the exiting task's mm, wake the reaper later
 * @e: the entry; the reaper owns and frees it from now on
 *
 * Called from exit_mm(). The wake-up comes after exit_notify() (see
 * amt_wake_owed), at once if self.c's hook is missing.
 */
void amt_reaper_queue_exit(struct amt_entry *e)
{
	if (!amt_self_available()) {
		amt_reaper_queue(e);
		return;
	}
	amt_reaper_add(e);
	/* After llist_add(): whoever takes this count sees the entry. */
	if (atomic_inc_return(&amt_wake_owed) == 1) {
		/*
		 * The bound runs from the first unpaid queueing, not from an
		 * earlier one whose debt was paid: re-arm a pending timer.
		 */
		cancel_delayed_work(&amt_wake_late_work);
		schedule_delayed_work(&amt_wake_late_work, AMT_WAKE_LATE_MAX);
	}
}

/**
 * amt_reaper_wake_owed() - wake the reaper for exits queued quietly
 *
 * Context: any, also an ftrace callback; never sleeps.
 *
 * Return: true if a wake-up was owed.
 */
bool amt_reaper_wake_owed(void)
{
	if (!atomic_read(&amt_wake_owed) || !atomic_xchg(&amt_wake_owed, 0))
		return false;
	wake_up(&amt_reaper_wq);
	return true;
}

static void amt_wake_late_fn(struct work_struct *w)
{
	if (amt_reaper_wake_owed())
		amt_stat_inc(AMT_STAT_WAKE_FALLBACK);
}

static unsigned long amt_progress(void)
{
	unsigned long sum, rss;

	spin_lock(&amt_progress_lock);
	sum = amt_freed_pages;
	if (amt_cur_mm) {
		rss = get_mm_rss(amt_cur_mm);
		if (rss < amt_cur_rss0)
			sum += amt_cur_rss0 - rss;
	}
	spin_unlock(&amt_progress_lock);
	return sum;
}

static void amt_reap_one(struct amt_entry *e)
{
	struct mm_struct *mm = e->mm;
	unsigned long rss = amt_mm_rss_exact(mm), left;
	long mms;
	u64 t0 = ktime_get_ns(), ns;

	AMT_CHECK(atomic_read(&mm->mm_users) > 0);
	/* Keep the struct (not the memory) for the progress readers. */
	mmgrab(mm);
	spin_lock(&amt_progress_lock);
	amt_cur_mm = mm;
	amt_cur_rss0 = rss;
	spin_unlock(&amt_progress_lock);

	/* Our mm_users reference, normally the last: __mmput() runs here. */
	mmput(mm);
	ns = ktime_get_ns() - t0;
	/*
	 * 0 after a real teardown; unchanged if a temporary mmget_not_zero()
	 * holder (khugepaged, /proc) made its own mmput() the last one.
	 */
	left = amt_mm_rss_exact(mm);

	spin_lock(&amt_progress_lock);
	amt_cur_mm = NULL;
	amt_freed_pages += rss > left ? rss - left : 0;
	spin_unlock(&amt_progress_lock);
	mmdrop(mm);

	amt_reaper_uncharge(e->charged);
	mms = atomic_long_dec_return(&amt_pending_mms_cnt);
	AMT_CHECK(mms >= 0);
	wake_up_all(&amt_progress_wq);
	amt_stat_teardown(ns);
	amt_stat_inc(AMT_STAT_REAPED);
	amt_stat_add(AMT_STAT_REAPED_PAGES, e->charged);
	trace_mm_reaper_reap(e->pid, e->charged, rss, numa_node_id(), ns);
	kfree(e);
}

static void amt_reap_batch(struct llist_node *batch)
{
	struct amt_entry *e, *tmp;

	/* llist_del_all() returns newest first: reap in queue order. */
	batch = llist_reverse_order(batch);
	llist_for_each_entry_safe(e, tmp, batch, llnode) {
		if (e->mm) {
			amt_reap_one(e);
		} else {
			struct amt_barrier *b =
				container_of(e, struct amt_barrier, entry);

			complete(&b->done);
			kref_put(&b->ref, amt_barrier_free);
		}
		/* Honour a freeze request between mms, not only per batch. */
		try_to_freeze();
		cond_resched();
	}
}

static int amt_reaper_fn(void *unused)
{
	set_freezable();
	for (;;) {
		struct llist_node *batch;

		wait_event_freezable(amt_reaper_wq, !llist_empty(&amt_queue) ||
				     kthread_should_stop());
		batch = llist_del_all(&amt_queue);
		if (batch)
			amt_reap_batch(batch);
		/* Back to background priority once the pressure is served. */
		if (READ_ONCE(amt_boosted) && llist_empty(&amt_queue))
			amt_set_boost(current, false);
		/*
		 * Stop only with an empty queue: amt_hook_exit() ran before
		 * kthread_stop(), so nothing can be queued after this check.
		 */
		else if (kthread_should_stop() && llist_empty(&amt_queue))
			break;
	}
	return 0;
}

/**
 * amt_reaper_drain() - wait until everything queued before the call is freed
 * @timeout_ms: give up after this long
 *
 * Also flushes the delayed fputs the teardowns left (a kthread's last fput()
 * goes through delayed_fput), so mapped files are closed on return.
 *
 * Return: 0; -ETIMEDOUT; -EINTR on a fatal signal; -ENOMEM.
 */
int amt_reaper_drain(unsigned int timeout_ms)
{
	struct amt_barrier *b = kzalloc(sizeof(*b), GFP_KERNEL);
	long left;

	if (!b)
		return -ENOMEM;
	kref_init(&b->ref);
	kref_get(&b->ref);
	init_completion(&b->done);
	amt_reaper_queue(&b->entry);

	left = wait_for_completion_killable_timeout(&b->done,
						    msecs_to_jiffies(timeout_ms));
	kref_put(&b->ref, amt_barrier_free);
	amt_stat_inc(AMT_STAT_DRAINS);
	if (left > 0) {
		amt_flush_fput();
		return 0;
	}
	amt_stat_inc(AMT_STAT_DRAIN_TIMEOUTS);
	return left ? -EINTR : -ETIMEDOUT;
}

/**
 * amt_reaper_boost() - make the reaper drain at normal priority, now
 *
 * For reclaim and the OOM killer: queued memory is the cheapest memory to
 * get back (its owners are dead), but not behind every runnable task.
 */
void amt_reaper_boost(void)
{
	if (!READ_ONCE(amt_boosted))
		amt_set_boost(amt_reaper, true);
	wake_up(&amt_reaper_wq);
}

/* Enough freed for an allocation retry to have a chance: 1 MiB. */
#define AMT_PROGRESS_PAGES (SZ_1M >> PAGE_SHIFT)

/**
 * amt_reaper_wait_progress() - wait for the reaper to free some memory
 * @ms: the most to wait
 *
 * Returns as soon as the reaper has freed AMT_PROGRESS_PAGES since the call
 * (finished teardowns, or the one in flight unmapping), when the queue is
 * empty, or after @ms. Only pages freed during the wait count: an OOM
 * invocation that sees no new progress gets 0 and may kill.
 *
 * Return: pages freed during the wait.
 */
unsigned long amt_reaper_wait_progress(unsigned int ms)
{
	unsigned long start = amt_progress(), got = 0;
	unsigned long end = jiffies + msecs_to_jiffies(ms);

	if (!amt_pending_mms())
		return 0;
	amt_reaper_boost();
	while (time_before(jiffies, end)) {
		/* woken when a teardown ends; polled for the one in flight */
		wait_event_timeout(amt_progress_wq, !amt_pending_mms(),
				   msecs_to_jiffies(10));
		got = amt_progress() - start;
		if (got >= AMT_PROGRESS_PAGES || !amt_pending_mms())
			break;
	}
	return got;
}

/**
 * amt_reaper_start() - create the mm_reaper kthread
 *
 * Return: 0 or a negative errno.
 */
int amt_reaper_start(void)
{
	struct task_struct *t;

	t = kthread_create(amt_reaper_fn, NULL, "mm_reaper");
	if (IS_ERR(t))
		return PTR_ERR(t);
	/* Background work: yield to everything that is not. */
	set_user_nice(t, MAX_NICE);
	/*
	 * No binding: kthread() itself gives every new kernel thread the
	 * housekeeping CPUs (HK_TYPE_KTHREAD; v7.x follows cpuset isolation
	 * too), and without PF_NO_SETAFFINITY admins can still re-affine it.
	 */
	amt_reaper = t;
	wake_up_process(t);
	return 0;
}

/**
 * amt_reaper_stop() - tear down everything queued, then stop the kthread
 *
 * Called after amt_hook_exit(): nothing new can be queued.
 */
void amt_reaper_stop(void)
{
	/* kthread_stop() wakes the reaper; the work item must not outlive us */
	cancel_delayed_work_sync(&amt_wake_late_work);
	kthread_stop(amt_reaper);
	amt_reaper = NULL;
	WARN_ON_ONCE(!llist_empty(&amt_queue));
	amt_flush_fput();
}

struct task_struct *amt_reaper_task(void)
{
	return amt_reaper;
}

long amt_pending_mms(void)
{
	return atomic_long_read(&amt_pending_mms_cnt);
}

long amt_pending_pages(void)
{
	return atomic_long_read(&amt_pending_pages_cnt);
}

long amt_pending_pages_peak(void)
{
	return atomic_long_read(&amt_pending_peak);
}

/**
 * amt_reaper_reset_peak() - restart the pending_pages high watermark
 *
 * Called when the cap changes, so the peak shows how the new cap held.
 */
void amt_reaper_reset_peak(void)
{
	atomic_long_set(&amt_pending_peak, amt_pending_pages());
}
