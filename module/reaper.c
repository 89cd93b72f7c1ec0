// SPDX-License-Identifier: GPL-2.0
/*
 * The mm_reaper threads: freezable kthreads tearing down the deferred set's
 * queue, one mm at a time each; when they are woken, and at what nice.
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#include <linux/file.h>
#include <linux/freezer.h>
#include <linux/irq_work.h>
#include <linux/kthread.h>
#include <linux/spinlock.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/topology.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include "fput.h"
#include "giveway.h"
#include "pending.h"
#include "policy.h"
#include "reaper.h"
#include "stats.h"

static DECLARE_WAIT_QUEUE_HEAD(amt_reaper_wq);
/* amt_nr_running falls under amt_nice_lock: no renice of a stopped thread */
static struct task_struct *amt_reapers[AMT_MAX_REAPERS];
static unsigned int amt_nr_running;

/* Reaper threads taking or tearing down an entry. */
static atomic_t amt_reapers_busy = ATOMIC_INIT(0);

static bool amt_reaper_work_left(void)
{
	return !amt_queue_empty() || atomic_read(&amt_reapers_busy);
}

/*
 * The reapers' nice, under amt_nice_lock: MAX_NICE without work, else the
 * catch-up nice, at most amt_press until done (docs/design.md, "The give-way").
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
		n = amt_pending_reaper_load(&weight);
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
 * amt_reaper_wake() - renice, then wake the reapers for entries just queued
 *
 * Context: process context.
 */
void amt_reaper_wake(void)
{
	amt_reaper_renice(AMT_NO_PRESS);
	wake_up(&amt_reaper_wq);
}

/* Wake-ups owed (docs/design.md, "When the reaper is woken"): notify.c pays */
atomic_t amt_wake_owed = ATOMIC_INIT(0);
#define AMT_WAKE_LATE_MAX	(HZ / 10)
static void amt_wake_late_fn(struct work_struct *w);
static DECLARE_DELAYED_WORK(amt_wake_late_work, amt_wake_late_fn);

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
 * amt_reaper_wakes_late() - is the reaper woken after exit_notify()?
 */
bool amt_reaper_wakes_late(void)
{
	return READ_ONCE(amt_wake_late_on);
}

/**
 * amt_reaper_owe_wake() - an exit was queued: wake the reaper later
 *
 * Context: after amt_defer() queued the entry: whoever takes the count (a
 * fully ordered atomic_xchg()) and wakes the reaper makes it see the entry.
 */
void amt_reaper_owe_wake(void)
{
	/* at the catch-up nice before it is woken */
	amt_reaper_renice(AMT_NO_PRESS);
	if (atomic_inc_return(&amt_wake_owed) == 1) {
		/* re-armed: a timer left from a paid debt must not fire early */
		cancel_delayed_work(&amt_wake_late_work);
		schedule_delayed_work(&amt_wake_late_work, AMT_WAKE_LATE_MAX);
	}
}

/**
 * amt_reaper_queue_exit() - queue the exiting task's mm for the reaper
 * @e: the entry, charged; the reaper owns and frees it from now on
 */
void amt_reaper_queue_exit(struct amt_entry *e)
{
	amt_defer(e, NULL);
	if (amt_reaper_wakes_late())
		amt_reaper_owe_wake();
	else
		amt_reaper_wake();
}

/* notify.c pays with preemption off, where RT's waitqueue lock would sleep */
static void amt_wake_irq_fn(struct irq_work *w)
{
	wake_up(&amt_reaper_wq);
}

static struct irq_work amt_wake_irq_work;

/**
 * amt_reaper_wake_owed() - wake the reaper for exits queued quietly
 *
 * Context: any; takes no sleeping lock, also on PREEMPT_RT.
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
		amt_stat_inc(AMT_STAT_wake_fallback);
}

static int amt_reaper_fn(void *unused)
{
	struct amt_entry *e;

	set_freezable();
	for (;;) {
		wait_event_freezable(amt_reaper_wq, !amt_queue_empty() ||
				     kthread_should_stop());
		amt_give_way(amt_reaper_waiting, NULL);
		for (;;) {
			/* busy before the take: a renice never misses it */
			atomic_inc(&amt_reapers_busy);
			e = amt_queue_take();
			if (!e) {
				atomic_dec(&amt_reapers_busy);
				break;
			}
			amt_reaper_renice(AMT_NO_PRESS);
			amt_teardown(e, false);
			atomic_dec(&amt_reapers_busy);
			/* freeze between mms (suspend.c relies on it) */
			try_to_freeze();
			cond_resched();
		}
		amt_reaper_renice(AMT_NO_PRESS);
		/* hooks and stashes are gone before kthread_stop() */
		if (kthread_should_stop() && amt_queue_empty())
			break;
	}
	return 0;
}

/**
 * amt_reaper_press() - someone waits for the memory: run at their nice
 * @nice: the waiter's nice; kept (0 at least) until the work is done
 */
void amt_reaper_press(int nice)
{
	amt_reaper_renice(nice);
	wake_up(&amt_reaper_wq);
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
		set_user_nice(t, MAX_NICE);
		/* not bound: kthread() keeps it to HK_TYPE_KTHREAD CPUs */
		amt_reapers[amt_nr_running++] = t;
		wake_up_process(t);
	}
	return 0;
}

/**
 * amt_reaper_stop() - tear down everything queued, then stop the threads
 *
 * Context: after amt_hook_exit() and amt_notify_exit(): nothing new comes.
 */
void amt_reaper_stop(void)
{
	struct task_struct *t;

	/* its function is module text; kthread_stop() wakes the reapers */
	cancel_delayed_work_sync(&amt_wake_late_work);
	/* nothing queues it any more: the hooks are gone */
	irq_work_sync(&amt_wake_irq_work);
	while (amt_nr_running) {
		spin_lock(&amt_nice_lock);
		t = amt_reapers[--amt_nr_running];
		spin_unlock(&amt_nice_lock);
		kthread_stop(t);
	}
	/* no teardown left to start; late users keep what they hold */
	amt_pending_linger_flush();
	WARN_ON_ONCE(!amt_pending_empty());
	amt_flush_fput();
}

/**
 * amt_is_reaper() - is @t one of the mm_reaper threads?
 * @t: a task
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
 * amt_reaper_task() - the first mm_reaper thread (NULL before the start)
 */
struct task_struct *amt_reaper_task(void)
{
	return amt_nr_running ? amt_reapers[0] : NULL;
}

/**
 * amt_reaper_cpu_ns() - CPU time of all mm_reaper threads since load, in ns
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
 */
unsigned int amt_reaper_count(void)
{
	return amt_nr_running;
}
