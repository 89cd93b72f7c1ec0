// SPDX-License-Identifier: GPL-2.0
/*
 * mode=self: the dying task tears its own mm down, but only after
 * exit_notify() has woken its parent. waitpid() returns at once, as with the
 * reaper, while the teardown stays on the task's own CPU, in parallel with
 * other exits, and charged to its own cgroup.
 *
 * At the final drop in exit_mm() the hook stashes the mm in the deferred
 * set (pending.c), keyed by the task. do_exit() runs exit_notify(), then
 * proc_exit_connector(), then mpol_put_task_policy(current) (6.1 to 7.2);
 * a second IPMODIFY ftrace_ops on mpol_put_task_policy() sends the tasks
 * with an exit_state (exit_notify() has run) and no mempolicy, while any
 * stash exists, to amt_self_teardown(), which takes the task's stash, if
 * it still has one, and drops the reference. With task->mempolicy == NULL,
 * which nobody else can change for an exiting task, the original function
 * would only have taken and dropped task_lock(), so skipping it changes
 * nothing else. A task with a mempolicy never stashes: __mpol_put() is not
 * exported, so the redirect could not replace the original; it takes the
 * reaper instead.
 *
 * A task that does not come for its stash within AMT_STASH_MAX (its close
 * blocks in exit_files(), say) loses it to the reaper (reaper.c), and so
 * does every stash at OOM, under reclaim, at a drain (if its task is still
 * before exit_notify()) and at unload: the memory is never held where
 * nothing can reach it.
 *
 * In reaper mode the same hook wakes the mm_reaper for exits queued since
 * the last wake-up (amt_reaper_wake_owed()), so that it does not compete
 * with the parent for a CPU before exit_notify().
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#include <linux/ftrace.h>
#include <linux/module.h>
#include <linux/string.h>
#include <linux/workqueue.h>
#include "amt.h"

static DEFINE_PER_CPU(long, amt_self_inflight);

/*
 * A self teardown starts at nice 19 (amt_stash_take()), so that the parent
 * and the siblings killed together with the task, still on their way to
 * exit_notify() (a fraction of a millisecond each), get the CPUs first;
 * then it gets its own nice back, so that on a busy machine its memory
 * does not wait behind every runnable task.
 */
#define AMT_SELF_YIELD		(HZ / 100 ?: 1)
static void amt_self_yield_fn(struct work_struct *w)
{
	amt_self_unrenice();
}

static DECLARE_DELAYED_WORK(amt_self_yield_work, amt_self_yield_fn);
static bool amt_self_ok;	/* the second hook is registered */

/**
 * amt_self_available() - can mode=self be used on this kernel?
 *
 * Return: true if the mpol_put_task_policy() hook is in place.
 */
bool amt_self_available(void)
{
	return READ_ONCE(amt_self_ok);
}

/**
 * amt_self_possible() - may the exiting task (current) tear its mm down?
 *
 * Return: false if it has a mempolicy (counted): its original
 * mpol_put_task_policy() must run, so the redirect cannot stand in.
 */
bool amt_self_possible(void)
{
	if (current->mempolicy) {
		amt_stat_inc(AMT_STAT_SELF_MEMPOLICY);
		return false;
	}
	return true;
}

/**
 * amt_self_stash() - keep an entry for the exiting task to tear down later
 * @e: the entry, charged; it owns the last reference of its mm
 */
void amt_self_stash(struct amt_entry *e)
{
	amt_defer(e, current);
	amt_reaper_watch_stash();
}

/* Replaces mpol_put_task_policy(current) for a task that may hold a stash. */
static void amt_self_teardown(struct task_struct *tsk)
{
	/* NULL if it never stashed, or lost its stash to the reaper */
	struct amt_entry *e = amt_stash_take(tsk);

	if (e) {
		if (e->reniced)
			schedule_delayed_work(&amt_self_yield_work,
					      AMT_SELF_YIELD);
		amt_teardown(e, true);
	}
	this_cpu_dec(amt_self_inflight);
}

static void notrace amt_mpol_ftrace(unsigned long ip, unsigned long parent_ip,
				    struct ftrace_ops *ops,
				    struct ftrace_regs *fregs)
{
	struct task_struct *tsk = current;
	int bit;

	/*
	 * do_exit()'s own call, after exit_notify(): exit_state is set. The
	 * parent has been woken, so now the reaper may be (reaper.c).
	 */
	if (!tsk->exit_state)
		return;
	/*
	 * Almost always: no wake-up owed and no task waiting to tear its mm
	 * down. Two reads say so without the recursion lock.
	 */
	if (!atomic_read(&amt_wake_owed) && !atomic_read(&amt_nr_stashed))
		return;
	bit = ftrace_test_recursion_trylock(ip, parent_ip);
	if (bit < 0)
		return;
	amt_reaper_wake_owed();
	/* With a mempolicy the original must run (we never stash then). */
	if (atomic_read(&amt_nr_stashed) && !tsk->mempolicy &&
	    (struct task_struct *)amt_fregs_arg0(fregs) == tsk) {
		this_cpu_inc(amt_self_inflight);
		amt_fregs_set_ip(fregs, (unsigned long)amt_self_teardown);
	}
	ftrace_test_recursion_unlock(bit);
}

static struct ftrace_ops amt_mpol_ops = {
	.func = amt_mpol_ftrace,
	.flags = FTRACE_OPS_FL_IPMODIFY | FTRACE_OPS_FL_PERMANENT |
		 AMT_FTRACE_OPS_SAVE_REGS,
};

/**
 * amt_self_init() - hook mpol_put_task_policy(); failure only disables
 * mode=self
 */
void amt_self_init(void)
{
	/* Not exported: filter by name (ftrace may write to the buffer). */
	static unsigned char name[] = "mpol_put_task_policy";

	if (ftrace_set_filter(&amt_mpol_ops, name, strlen(name), 1))
		goto fail;
	if (register_ftrace_function(&amt_mpol_ops)) {
		ftrace_free_filter(&amt_mpol_ops);
		goto fail;
	}
	WRITE_ONCE(amt_self_ok, true);
	return;
fail:
	pr_warn("cannot hook mpol_put_task_policy(): mode=self unavailable\n");
}

/**
 * amt_self_exit() - hand every stash to the reaper, then unhook
 *
 * Called after amt_hook_exit(), with the reaper still running: no stash
 * can be added any more, and those left are queued now, so unload never
 * waits for a task (its close may block for ever). A task redirected
 * later finds no stash; the in-flight count waits for those tearing down.
 */
void amt_self_exit(void)
{
	if (!amt_self_ok)
		return;
	amt_reaper_handoff(AMT_HANDOFF_ALL);
	unregister_ftrace_function(&amt_mpol_ops);
	ftrace_free_filter(&amt_mpol_ops);
	amt_wait_redirected(&amt_self_inflight);
	cancel_delayed_work_sync(&amt_self_yield_work);
	WRITE_ONCE(amt_self_ok, false);
}
