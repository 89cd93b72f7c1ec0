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
#include <linux/delay.h>
#include <linux/mmu_notifier.h>
#include <linux/sched.h>
#include <linux/sched/stat.h>
#include <linux/workqueue.h>
#include "pending.h"
#include "reaper.h"
#include "self.h"
#include "stats.h"

/*
 * A self teardown gives way to the parent and the siblings killed
 * together with the task, still on their way to exit_notify() (a fraction
 * of a millisecond each), so that they get the CPUs first; then it runs
 * at its own nice, so that on a busy machine its memory does not wait
 * behind every runnable task. Reclaim, the OOM notifier and a drain end
 * that at once (amt_self_hurried()).
 *
 * First, the task sleeps in short naps while its CPU has other tasks to
 * run (amt_self_wait_turn()), until AMT_SELF_YIELD after the current
 * tick's end at most, plus the nap it is in: at nice 19 a teardown would
 * still keep the CPU until the next tick or wake-up before them, and with
 * 8 killed together on 2 CPUs the last waitpid() then came a tick or more
 * late (docs/benchmarks.md, "Self mode's tail"). Asleep it takes nothing
 * from them. Its stash stays in the deferred set meanwhile: counted (in
 * pending_pages, by the shrinker and the OOM notifier), hurried by
 * reclaim, the OOM notifier and a drain, and taken by the 100 ms hand-off
 * or unload. Then the teardown runs at nice 19 for as long again
 * (amt_stash_take()). One work item gives the nice back to all: armed for
 * the earliest deadline, it gives back what is due and re-arms for the
 * next. If a new teardown armed it meanwhile (for its later deadline), an
 * older one waits for that: at most about 2 * AMT_SELF_YIELD at nice 19.
 */
#define AMT_SELF_NAP_MIN_US	100
#define AMT_SELF_NAP_MAX_US	200

static void amt_self_yield_fn(struct work_struct *w);
static DECLARE_DELAYED_WORK(amt_self_yield_work, amt_self_yield_fn);

static void amt_self_yield_fn(struct work_struct *w)
{
	unsigned long next = amt_self_unrenice_due(AMT_SELF_YIELD);

	if (next)
		schedule_delayed_work(&amt_self_yield_work, next);
}

/* Sleeps while others can run here, for AMT_SELF_YIELD or until hurried. */
static void amt_self_wait_turn(struct task_struct *tsk)
{
	/* +1: the current tick is already partly gone */
	unsigned long end = jiffies + AMT_SELF_YIELD + 1;

	/* an idle CPU: one read, no lock */
	if (single_task_running() || amt_self_hurried())
		return;
	/* only a task with a teardown of its own (the lock: once a nap) */
	while (amt_stash_own(tsk)) {
		/*
		 * TASK_IDLE: a dying task, not load, and its pending SIGKILL
		 * does not end the nap (6.1's usleep_idle_range() is 7.x's
		 * usleep_range_idle(): both call this).
		 */
		usleep_range_state(AMT_SELF_NAP_MIN_US, AMT_SELF_NAP_MAX_US,
				   TASK_IDLE);
		if (single_task_running() || !time_before(jiffies, end) ||
		    amt_self_hurried())
			break;
	}
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
	 * Then each teardown has a nice-19 period of its own, from its own
	 * start (amt_stash_take()): those it waited for may not be done (a
	 * sibling can still be on its way to exit_notify()), and at its own
	 * nice it would hold the CPU against them until the next tick (with
	 * the wait's period shared, 8 killed together were all reaped in
	 * 1/12 of inline time in a quick run, no better than without it).
	 */
	amt_self_wait_turn(tsk);
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
		/* (cleared under amt_lock by the work: a stale true re-arms it) */
		if (READ_ONCE(e->reniced))
			schedule_delayed_work(&amt_self_yield_work,
					      AMT_SELF_YIELD);
		amt_teardown(e, true);
	}
	if (queued)
		amt_reaper_wake();
}

/**
 * amt_self_exit() - at unload, once no task can run amt_self_teardown()
 */
void amt_self_exit(void)
{
	cancel_delayed_work_sync(&amt_self_yield_work);
}
