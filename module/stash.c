// SPDX-License-Identifier: GPL-2.0
/*
 * Stashes: deferred mms kept for a dying task until it is past exit_notify()
 * (notify.c): its own (mode=self), or a thread's left to its exiting leader.
 * The reaper takes one its task does not take within AMT_STASH_MAX.
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#include <linux/sched.h>
#include <linux/workqueue.h>
#include "pending.h"
#include "reaper.h"
#include "stash.h"
#include "stats.h"

/* notify.c can run mpol_put_task_policy() after a self teardown */
static bool amt_mpol_ok;

/**
 * amt_stash_allow_mempolicy() - tasks with a mempolicy may take stashes
 */
void amt_stash_allow_mempolicy(void)
{
	smp_store_release(&amt_mpol_ok, true);
}

/**
 * amt_stash_mempolicy_ok() - may a task with a mempolicy take a stash?
 */
bool amt_stash_mempolicy_ok(void)
{
	return smp_load_acquire(&amt_mpol_ok);
}

/**
 * amt_stash_leader() - the leader to leave the exiting thread's mm to
 *
 * Context: the final drop: current is still in its thread group, so its
 * leader cannot be released (delay_group_leader()).
 * Return: current's group leader if another task, exiting, not past
 * exit_notify() and able to take a stash; NULL otherwise.
 */
struct task_struct *amt_stash_leader(void)
{
	struct task_struct *leader = current->group_leader;

	if (leader == current || !(READ_ONCE(leader->flags) & PF_EXITING) ||
	    READ_ONCE(leader->exit_state))
		return NULL;
	if (READ_ONCE(leader->mempolicy) && !amt_stash_mempolicy_ok())
		return NULL;
	return leader;
}

static void amt_stash_late_fn(struct work_struct *w);
static DECLARE_DELAYED_WORK(amt_stash_late_work, amt_stash_late_fn);

static void amt_stash_late_fn(struct work_struct *w)
{
	unsigned long next;

	if (amt_handoff(AMT_HANDOFF_LATE, &next))
		amt_reaper_wake();
	if (next)
		schedule_delayed_work(&amt_stash_late_work,
				      max_t(long, (long)(next - jiffies), 1));
}

/**
 * amt_stash() - keep an entry for current, or for its group leader
 * @e: the entry, charged; with ->to_reaper the leader queues it
 * @leader: from amt_stash_leader(), or NULL: current keeps it
 *
 * Return: true if stashed; false if it went on the reaper's queue (the
 * leader passed exit_notify() meanwhile): the caller owes the wake-up.
 */
bool amt_stash(struct amt_entry *e, struct task_struct *leader)
{
	/* read now: once queued, a reaper may free @e */
	bool to_reaper = e->to_reaper;

	if (!leader)
		amt_defer(e, current);
	else if (amt_defer_to_leader(e, leader))
		amt_stat_inc(AMT_STAT_to_leader);
	else if (to_reaper)
		return false;
	/* an armed timer fires sooner, and re-arms for the stashes left */
	schedule_delayed_work(&amt_stash_late_work, AMT_STASH_MAX);
	return true;
}

/**
 * amt_stash_handoff() - give stashes to the reaper and wake it
 * @which: see amt_handoff()
 *
 * Return: how many were handed off.
 */
unsigned int amt_stash_handoff(enum amt_handoff_which which)
{
	unsigned int n = amt_handoff(which, NULL);

	if (n)
		amt_reaper_wake();
	return n;
}

/**
 * amt_stash_stop() - at unload, once no stash is left: stop the timer
 */
void amt_stash_stop(void)
{
	cancel_delayed_work_sync(&amt_stash_late_work);
}
