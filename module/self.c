// SPDX-License-Identifier: GPL-2.0
/*
 * mode=self: the dying task tears its own mm down, but only after
 * exit_notify() has woken its parent. waitpid() returns at once, as with the
 * reaper, while the teardown stays on the task's own CPU, in parallel with
 * other exits, and charged to its own cgroup.
 *
 * At the final drop in exit_mm() the hook stashes the mm in the deferred
 * set (pending.c), keyed by the task; the hook after exit_notify()
 * (notify.c) sends the task to amt_self_teardown(), which takes its stash
 * back, if it still has one, and drops the reference. A task that does not
 * come for its stash within AMT_STASH_MAX (its close blocks in
 * exit_files(), say) loses it to the reaper (reaper.c), and so does every
 * stash at OOM, under reclaim, at a drain (if its task is still before
 * exit_notify()) and at unload: the memory is never held where nothing can
 * reach it.
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#include <linux/mmu_notifier.h>
#include <linux/sched.h>
#include "pending.h"
#include "reaper.h"
#include "self.h"
#include "stats.h"

/* Has @tsk (current) a stash of its own still to tear down? */
static bool amt_self_waiting(void *tsk)
{
	return amt_stash_own(tsk);
}

/* notify.c can run mpol_put_task_policy() after a self teardown */
static bool amt_self_mpol_ok;

/**
 * amt_self_allow_mempolicy() - tasks with a mempolicy may stash from now on
 *
 * Called once the hook after exit_notify() has found that it can call the
 * original mpol_put_task_policy() after the teardown.
 */
void amt_self_allow_mempolicy(void)
{
	smp_store_release(&amt_self_mpol_ok, true);
}

/**
 * amt_self_possible() - may the exiting task (current) tear its mm down?
 * @mm: the mm, whose last reference current holds
 *
 * Return: false, counted, if it has a mempolicy and the hook after
 * exit_notify() cannot run the original mpol_put_task_policy() after the
 * teardown (not learned yet, or unsafe to call here: see notify.c); or if
 * the mm has mmu notifiers and this kernel's exiting tasks hold up
 * RCU-tasks grace periods after exit_notify(): a notifier's release()
 * may wait for a device there, and every synchronize_rcu_tasks() with it.
 */
bool amt_self_possible(struct mm_struct *mm)
{
	if (current->mempolicy && !smp_load_acquire(&amt_self_mpol_ok)) {
		amt_stat_inc(AMT_STAT_SELF_MEMPOLICY);
		return false;
	}
	if (amt_self_holds_tasks_rcu() && mm_has_notifiers(mm)) {
		amt_stat_inc(AMT_STAT_SELF_NOTIFIER);
		return false;
	}
	return true;
}

/**
 * amt_self_leader() - the leader to leave the exiting thread's mm to
 *
 * The parent's waitpid() waits for the thread group leader: a thread that
 * dies before its exiting leader has passed exit_notify() (a vhost worker
 * on 6.4+, which finishes vhost_task_stop()'s wait before its own
 * do_exit()) does not end that wait, and a teardown started, or a reaper
 * woken, after its own exit_notify() only competes with the leader on its
 * way there: the vhost release's synchronize_rcu() ended only with such a
 * teardown (docs/design.md, "Late final drops"). Such a thread leaves its
 * deferred mm to the leader (amt_defer_to_leader()).
 *
 * Context: the final drop, before exit_notify(): current is still in its
 * thread group, so its leader cannot be released (delay_group_leader()).
 *
 * Return: current's group leader if it is another task, exiting, not past
 * exit_notify(), and able to take a stash; NULL otherwise.
 */
struct task_struct *amt_self_leader(void)
{
	struct task_struct *leader = current->group_leader;

	if (leader == current || !(READ_ONCE(leader->flags) & PF_EXITING) ||
	    READ_ONCE(leader->exit_state))
		return NULL;
	/* what notify.c cannot redirect for the leader, it cannot take */
	if (READ_ONCE(leader->mempolicy) && !smp_load_acquire(&amt_self_mpol_ok))
		return NULL;
	return leader;
}

/**
 * amt_self_stash() - keep an entry for the exiting task to tear down later
 * @e: the entry, charged; it owns the last reference of its mm
 * @leader: from amt_self_leader(): the task to leave it to, or NULL
 */
void amt_self_stash(struct amt_entry *e, struct task_struct *leader)
{
	if (!leader)
		amt_defer(e, current);
	else if (amt_defer_to_leader(e, leader))
		amt_stat_inc(AMT_STAT_TO_LEADER);
	amt_reaper_watch_stash();
}

/**
 * amt_self_teardown() - tear down the mm @tsk stashed, if it still has it
 * @tsk: current, after exit_notify()
 */
void amt_self_teardown(struct task_struct *tsk)
{
	bool queued = false;
	struct amt_entry *e;

	/*
	 * Only a task that owns a stash gives way, until the stash is gone
	 * (handed off): meanwhile it is still counted and reachable by the
	 * hand-off, OOM, reclaim and unload.
	 */
	amt_give_way(amt_self_waiting, tsk);
	/*
	 * NULL if it never stashed, or lost its stash to the reaper. More
	 * than one if a late final drop (hook.c) stashed another mm, or
	 * threads that died before it left theirs (amt_self_leader()).
	 */
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
