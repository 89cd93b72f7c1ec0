// SPDX-License-Identifier: GPL-2.0
/*
 * mode=self: after exit_notify() has woken its parent, the dying task tears
 * down the mm its final drop stashed (stash.c, notify.c).
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#include <linux/mmu_notifier.h>
#include <linux/sched.h>
#include "giveway.h"
#include "pending.h"
#include "reaper.h"
#include "self.h"
#include "stash.h"
#include "stats.h"

static bool amt_self_holds_cgroup(void)
{
	return amt_cgroup_unlinked_at_death();
}

/* Do exiting tasks hold up RCU-tasks to their end (self teardown sleeps)? */
static bool amt_self_holds_tasks_rcu(void)
{
	return amt_exit_holds_tasks_rcu();
}

/**
 * amt_self_cost() - what a self teardown makes others wait for here
 *
 * Return: the reason, for the kernel log, or NULL.
 */
const char *amt_self_cost(void)
{
	if (amt_self_holds_cgroup())
		return "this kernel keeps a dying task's cgroup populated until it is dead: with mode=self the cgroup stays populated until the teardown ends";
	if (amt_self_holds_tasks_rcu())
		return "this kernel's exiting tasks hold up RCU-tasks grace periods after exit_notify(): with mode=self, synchronize_rcu_tasks() (ftrace, kprobes, BPF) waits for a self teardown that sleeps (on a lock, in a driver's close)";
	return NULL;
}

/**
 * amt_self_refusal() - why mode=self is refused here even when asked for
 * @hooked: the hook after exit_notify() is in place
 *
 * On PREEMPT_RT a lock wait (__schedule()'s SM_RTLOCK_WAIT) is quiescent
 * for RCU-tasks in exit_mm(), not where a self teardown runs.
 *
 * Return: the reason, for the kernel log and a refused write, or NULL.
 */
const char *amt_self_refusal(bool hooked)
{
	if (!hooked)
		return "self mode is unavailable on this kernel (no hook after exit_notify())";
	if (amt_self_holds_tasks_rcu() && IS_ENABLED(CONFIG_PREEMPT_RT))
		return "on this PREEMPT_RT kernel a self teardown would hold up RCU-tasks grace periods (ftrace, kprobes, BPF) longer than an inline one";
	return NULL;
}

/**
 * amt_self_possible() - may the exiting task (current) tear its mm down?
 * @mm: the mm, whose last reference current holds
 *
 * Return: false (counted) if current's mempolicy cannot be put after it, or
 * if the mm has mmu notifiers where exiting tasks hold up RCU-tasks.
 */
bool amt_self_possible(struct mm_struct *mm)
{
	if (current->mempolicy && !amt_stash_mempolicy_ok()) {
		amt_stat_inc(AMT_STAT_self_mempolicy);
		return false;
	}
	if (amt_self_holds_tasks_rcu() && mm_has_notifiers(mm)) {
		amt_stat_inc(AMT_STAT_self_notifier);
		return false;
	}
	return true;
}

static bool amt_self_waiting(void *tsk)
{
	return amt_stash_own(tsk);
}

/**
 * amt_self_teardown() - tear down what @tsk stashed, if it still has it
 * @tsk: current, after exit_notify()
 */
void amt_self_teardown(struct task_struct *tsk)
{
	bool queued = false;
	struct amt_entry *e;

	/* meanwhile its stash is still counted and can be handed off */
	amt_give_way(amt_self_waiting, tsk);
	/* several: a late drop's (hook.c), or threads' left to it (stash.c) */
	while ((e = amt_stash_take(tsk, &queued))) {
		/* those left for the reaper: the death is visible now */
		if (queued) {
			amt_reaper_wake();
			queued = false;
		}
		amt_teardown(e, true);
	}
	if (queued)
		amt_reaper_wake();
}
