// SPDX-License-Identifier: GPL-2.0
/*
 * The mm_reaper: a few freezable, nice-19 kthreads that tear down the mms
 * on the deferred set's queue (pending.c), one each at a time, so that one
 * teardown stuck in __mmput() (an mmu_notifier waiting on a device, say)
 * never holds up the others and parallel exits free memory in parallel.
 * Also when they are woken, the late hand-off of stashes whose task does
 * not come for them, and the drain.
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#include <linux/file.h>
#include <linux/freezer.h>
#include <linux/irq_work.h>
#include <linux/kthread.h>
#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/topology.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include "fput.h"
#include "pending.h"
#include "policy.h"
#include "reaper.h"
#include "stats.h"

static DECLARE_WAIT_QUEUE_HEAD(amt_reaper_wq);
/*
 * The threads; amt_nr_running of them started (at load), written under
 * amt_nice_lock at unload, so that a renice never sees a stopped one.
 */
static struct task_struct *amt_reapers[AMT_MAX_REAPERS];
static unsigned int amt_nr_running;

/* Reaper threads taking or tearing down an entry. */
static atomic_t amt_reapers_busy = ATOMIC_INIT(0);

static bool amt_reaper_work_left(void)
{
	return !amt_queue_empty() || atomic_read(&amt_reapers_busy);
}

/*
 * The reapers' nice, one for all of them: MAX_NICE while they have no
 * work; with work, the catch-up nice (amt_catchup_nice()), the CPU share
 * the dead tasks whose teardowns they have would have had inline; while
 * reclaim, the OOM notifier, a memcg charge or a drain waits for the
 * memory, at most the nice of whoever waits, and at most 0 (amt_press,
 * dropped when no work is left: AMT_NO_PRESS). Never nice 19 with work
 * (AMT_YIELD says why).
 */
#define AMT_NO_PRESS	(MAX_NICE + 1)
static DEFINE_SPINLOCK(amt_nice_lock);
static int amt_reaper_nice = MAX_NICE;
static int amt_press = AMT_NO_PRESS;

/* @press: the nice of a task waiting for the memory, or AMT_NO_PRESS */
static void amt_reaper_renice(int press)
{
	unsigned long n, weight;
	int nice = MAX_NICE;
	unsigned int i;

	spin_lock(&amt_nice_lock);
	if (press != AMT_NO_PRESS)
		amt_press = min(amt_press, min(press, 0));
	if (amt_reaper_work_left()) {
		n = amt_reaper_load(&weight);
		nice = amt_catchup_nice(weight, min_t(unsigned long, n,
						      amt_nr_running));
		nice = min(nice, amt_press);
	} else {
		amt_press = AMT_NO_PRESS;
	}
	if (nice != amt_reaper_nice) {
		amt_reaper_nice = nice;
		for (i = 0; i < amt_nr_running; i++)
			set_user_nice(amt_reapers[i], nice);
	}
	spin_unlock(&amt_nice_lock);
}

static bool amt_reaper_waiting(void *unused)
{
	return !amt_queue_empty();
}

/**
 * amt_reaper_wake() - wake the reapers for entries just queued
 *
 * At their catch-up nice first: a reaper woken at nice 19 on a busy
 * machine would wait long to run at all.
 *
 * Context: process context (amt_wake_irq_fn() wakes without the renice:
 * its entries were queued, and the reapers reniced, by
 * amt_reaper_queue_exit()).
 */
void amt_reaper_wake(void)
{
	amt_reaper_renice(AMT_NO_PRESS);
	wake_up(&amt_reaper_wq);
}

/*
 * Exits queued without a wake-up. Woken at once, the reaper would take the
 * idle CPU while the dying task still runs towards exit_notify(), and the
 * parent, woken there, would queue behind one or the other. So an exit
 * queues quietly and the reaper is woken from notify.c's hook, which every
 * exiting task reaches right after exit_notify(). The work item bounds the
 * delay for a task that stalls in between (closing files, say).
 */
atomic_t amt_wake_owed = ATOMIC_INIT(0);
#define AMT_WAKE_LATE_MAX	(HZ / 10)
static void amt_wake_late_fn(struct work_struct *w);
static DECLARE_DELAYED_WORK(amt_wake_late_work, amt_wake_late_fn);

/*
 * Stashes whose task has not come for them within AMT_STASH_MAX (a close
 * blocked before exit_notify(), a second oops in exit) are handed to the
 * reaper by this work item, armed at each stash and re-armed for the
 * oldest stash left behind.
 */
static void amt_handoff_fn(struct work_struct *w);
static DECLARE_DELAYED_WORK(amt_handoff_work, amt_handoff_fn);

/* The hook after exit_notify() is there to pay amt_wake_owed (notify.c). */
static bool amt_wake_late_on;

/**
 * amt_reaper_wake_late() - wake the reaper after exit_notify() or at once?
 * @on: true once the hook after exit_notify() is in place
 */
void amt_reaper_wake_late(bool on)
{
	WRITE_ONCE(amt_wake_late_on, on);
}

/**
 * amt_reaper_queue_exit() - queue the exiting task's mm, wake the reaper later
 * @e: the entry, charged; the reaper owns and frees it from now on
 * @leader: from amt_self_leader(): the task to leave it to, or NULL
 *
 * Called from exit_mm(). The wake-up comes after exit_notify() (see
 * amt_wake_owed), at once if notify.c's hook is missing. A thread dying
 * before its group leader stashes the entry under the leader instead,
 * which queues it after its own exit_notify() (self.c), or the hand-off
 * does after AMT_STASH_MAX.
 */
void amt_reaper_queue_exit(struct amt_entry *e, struct task_struct *leader)
{
	if (!READ_ONCE(amt_wake_late_on)) {
		amt_defer(e, NULL);
		amt_reaper_wake();
		return;
	}
	if (leader) {
		e->to_reaper = true;
		if (amt_defer_to_leader(e, leader)) {
			amt_stat_inc(AMT_STAT_TO_LEADER);
			amt_reaper_watch_stash();
			return;
		}
		/*
		 * The leader passed exit_notify() meanwhile: queued, and
		 * owed as if never left to it (the thread's own
		 * exit_notify() pays).
		 */
	} else {
		amt_defer(e, NULL);
	}
	/* not woken yet (the give-way), but at the right nice when it is */
	amt_reaper_renice(AMT_NO_PRESS);
	/* After amt_defer(): whoever takes this count sees the entry. */
	if (atomic_inc_return(&amt_wake_owed) == 1) {
		/*
		 * The bound runs from the first unpaid queueing, not from an
		 * earlier one whose debt was paid: re-arm a pending timer.
		 */
		cancel_delayed_work(&amt_wake_late_work);
		schedule_delayed_work(&amt_wake_late_work, AMT_WAKE_LATE_MAX);
	}
}

/*
 * The wake-up owed is paid from notify.c's ftrace callback, which runs with
 * preemption disabled: on PREEMPT_RT a waitqueue's lock is a sleeping lock
 * and must not be taken there. An irq_work runs wake_up() where it may
 * (hard interrupt context normally, the irq_work thread on PREEMPT_RT).
 */
static void amt_wake_irq_fn(struct irq_work *w)
{
	wake_up(&amt_reaper_wq);
}

static struct irq_work amt_wake_irq_work;

/**
 * amt_reaper_wake_owed() - wake the reaper for exits queued quietly
 *
 * Context: any, also an ftrace callback with preemption disabled; never
 * sleeps, takes no sleeping lock (also on PREEMPT_RT).
 *
 * Return: true if a wake-up was owed.
 */
bool amt_reaper_wake_owed(void)
{
	if (!atomic_read(&amt_wake_owed) || !atomic_xchg(&amt_wake_owed, 0))
		return false;
	irq_work_queue(&amt_wake_irq_work);
	return true;
}

static void amt_wake_late_fn(struct work_struct *w)
{
	if (amt_reaper_wake_owed())
		amt_stat_inc(AMT_STAT_WAKE_FALLBACK);
}

/**
 * amt_reaper_handoff() - give stashes to the reaper and wake it
 * @which: see amt_handoff()
 *
 * Return: how many were handed off.
 */
unsigned int amt_reaper_handoff(enum amt_handoff_which which)
{
	unsigned int n = amt_handoff(which, NULL);

	if (n)
		amt_reaper_wake();
	return n;
}

static void amt_handoff_fn(struct work_struct *w)
{
	unsigned long next;

	if (amt_handoff(AMT_HANDOFF_LATE, &next))
		amt_reaper_wake();
	if (next)
		schedule_delayed_work(&amt_handoff_work,
				      max_t(long, (long)(next - jiffies), 1));
}

/**
 * amt_reaper_watch_stash() - a stash was made: bound its wait
 *
 * A timer already armed fires no later than AMT_STASH_MAX from now, and
 * re-arms itself for the stashes that are not late yet.
 */
void amt_reaper_watch_stash(void)
{
	schedule_delayed_work(&amt_handoff_work, AMT_STASH_MAX);
}

static int amt_reaper_fn(void *unused)
{
	struct amt_entry *e;

	set_freezable();
	for (;;) {
		wait_event_freezable(amt_reaper_wq, !amt_queue_empty() ||
				     kthread_should_stop());
		/* woken for work: the give-way, then the catch-up nice */
		amt_give_way(amt_reaper_waiting, NULL);
		for (;;) {
			/* busy before the take: a renice never misses it */
			atomic_inc(&amt_reapers_busy);
			e = amt_queue_take();
			if (!e) {
				atomic_dec(&amt_reapers_busy);
				break;
			}
			/* (at each take: the catch-up follows the work left) */
			amt_reaper_renice(AMT_NO_PRESS);
			amt_teardown(e, false);
			atomic_dec(&amt_reapers_busy);
			/* Honour a freeze request between mms. */
			try_to_freeze();
			cond_resched();
		}
		/* back to MAX_NICE once no work is left */
		amt_reaper_renice(AMT_NO_PRESS);
		/*
		 * Stop only with an empty queue: the hooks are gone and the
		 * stashes handed off before kthread_stop(), so nothing can be
		 * queued after this check.
		 */
		if (kthread_should_stop() && amt_queue_empty())
			break;
	}
	return 0;
}

/**
 * amt_reaper_drain() - wait until everything deferred before the call ended
 * @timeout_ms: give up after this long
 *
 * An epoch, not a quiet moment: exits deferred after the call do not hold
 * it up. Stashes whose task is stuck before exit_notify() are handed to
 * the reaper; the others are torn down by their tasks, which the boost
 * below hurries (and by the reaper after AMT_STASH_MAX at the latest).
 * Also flushes the delayed fputs the teardowns left (a last fput() after
 * exit_task_work() or in a kthread goes through delayed_fput), so mapped
 * files are closed on return.
 *
 * Return: 0; -ETIMEDOUT; -EINTR on a fatal signal.
 */
int amt_reaper_drain(unsigned int timeout_ms)
{
	u64 epoch = amt_epoch();
	long left;

	amt_reaper_handoff(AMT_HANDOFF_STUCK);
	/*
	 * Someone waits for the queue now: the reapers run at the drainer's
	 * priority (0 at least) until it is empty, and are woken also for
	 * exits queued quietly whose task is still on its way to (or stuck
	 * before) exit_notify().
	 */
	amt_reaper_wake_owed();
	amt_reaper_boost();
	left = amt_wait_epoch(epoch, msecs_to_jiffies(timeout_ms));
	amt_stat_inc(AMT_STAT_DRAINS);
	if (left > 0) {
		amt_flush_fput();
		return 0;
	}
	amt_stat_inc(AMT_STAT_DRAIN_TIMEOUTS);
	return left ? -EINTR : -ETIMEDOUT;
}

/**
 * amt_reaper_boost() - make the reapers drain at the waiter's priority, now
 *
 * For reclaim, the OOM killer, a memcg charge and a drain, in the task
 * that waits for the memory: queued memory is the cheapest memory to get
 * back (its owners are dead), but not behind every runnable task, nor
 * behind work of the waiter's priority. At nice 0 or better, until the
 * reapers' work is done.
 */
void amt_reaper_boost(void)
{
	/* no give-way now, for the reapers and the self teardowns alike */
	amt_hurry();
	amt_reaper_renice(task_nice(current));
	wake_up(&amt_reaper_wq);
}

/* Enough freed for an allocation retry to have a chance: 1 MiB. */
#define AMT_PROGRESS_PAGES (SZ_1M >> PAGE_SHIFT)

/**
 * amt_reaper_wait_progress() - wait for the reaper to free some memory
 * @ms: the most to wait
 *
 * Returns as soon as deferred teardowns have freed AMT_PROGRESS_PAGES
 * since the call (ended teardowns, or those in flight unmapping), when
 * nothing is deferred, or after @ms. Only pages freed during the wait
 * count, and only pages that really leave (amt_progress()): an OOM
 * invocation that sees no new progress gets 0 and may kill. Stashes whose
 * task is stuck are handed to the reaper first.
 *
 * Return: pages freed during the wait.
 */
unsigned long amt_reaper_wait_progress(unsigned int ms)
{
	unsigned long start = amt_progress(), got = 0;
	unsigned long end = jiffies + msecs_to_jiffies(ms);

	if (!amt_pending_mms())
		return 0;
	amt_handoff(AMT_HANDOFF_STUCK, NULL);
	amt_reaper_boost();
	while (time_before(jiffies, end)) {
		/* woken when a teardown ends; polled for those in flight */
		amt_wait_ended(msecs_to_jiffies(10));
		got = amt_progress() - start;
		if (got >= AMT_PROGRESS_PAGES || !amt_pending_mms())
			break;
	}
	return got;
}

/**
 * amt_reaper_start() - create the mm_reaper threads
 * @n: how many, 1 to AMT_MAX_REAPERS
 *
 * Return: 0 or a negative errno (none is left running then).
 */
int amt_reaper_start(unsigned int n)
{
	struct task_struct *t;

	init_irq_work(&amt_wake_irq_work, amt_wake_irq_fn);
	while (amt_nr_running < n) {
		t = kthread_create(amt_reaper_fn, NULL, "mm_reaper");
		if (IS_ERR(t)) {
			amt_reaper_stop();
			return PTR_ERR(t);
		}
		/* Background work: yield to everything that is not. */
		set_user_nice(t, MAX_NICE);
		/*
		 * No binding: kthread() itself gives every new kernel thread
		 * the housekeeping CPUs (HK_TYPE_KTHREAD; v7.x follows cpuset
		 * isolation too), and without PF_NO_SETAFFINITY admins can
		 * still re-affine them.
		 */
		amt_reapers[amt_nr_running++] = t;
		wake_up_process(t);
	}
	return 0;
}

/**
 * amt_reaper_stop() - tear down everything queued, then stop the threads
 *
 * Called after amt_hook_exit() and amt_notify_exit(): nothing new can be
 * deferred, every stash has been handed off or taken, and no task runs
 * its own teardown any more.
 */
void amt_reaper_stop(void)
{
	struct task_struct *t;

	/* kthread_stop() wakes a reaper; work items must not outlive us */
	cancel_delayed_work_sync(&amt_wake_late_work);
	cancel_delayed_work_sync(&amt_handoff_work);
	/* (nothing queues it any more: the hooks are gone) */
	irq_work_sync(&amt_wake_irq_work);
	/* each stops only with the queue empty: the last one empties it */
	while (amt_nr_running) {
		spin_lock(&amt_nice_lock);
		t = amt_reapers[--amt_nr_running];
		spin_unlock(&amt_nice_lock);
		kthread_stop(t);
	}
	/* (no teardown left to start: late users keep what they hold) */
	amt_pending_linger_flush();
	WARN_ON_ONCE(!amt_pending_empty());
	amt_flush_fput();
}

/**
 * amt_is_reaper() - is @t one of the mm_reaper threads?
 * @t: a task
 *
 * Return: true if so.
 */
bool amt_is_reaper(struct task_struct *t)
{
	unsigned int i;

	for (i = 0; i < amt_nr_running; i++)
		if (amt_reapers[i] == t)
			return true;
	return false;
}

/**
 * amt_reaper_task() - the first mm_reaper thread, for statistics
 *
 * Return: the task, or NULL before the start.
 */
struct task_struct *amt_reaper_task(void)
{
	return amt_nr_running ? amt_reapers[0] : NULL;
}

/**
 * amt_reaper_cpu_ns() - CPU time of all mm_reaper threads since load
 *
 * Return: nanoseconds.
 */
u64 amt_reaper_cpu_ns(void)
{
	u64 sum = 0;
	unsigned int i;

	for (i = 0; i < amt_nr_running; i++)
		sum += READ_ONCE(amt_reapers[i]->se.sum_exec_runtime);
	return sum;
}

/**
 * amt_reaper_count() - how many mm_reaper threads run
 *
 * Return: the count.
 */
unsigned int amt_reaper_count(void)
{
	return amt_nr_running;
}
