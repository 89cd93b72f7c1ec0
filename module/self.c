// SPDX-License-Identifier: GPL-2.0
/*
 * mode=self: the dying task tears its own mm down, but only after
 * exit_notify() has woken its parent. waitpid() returns at once, as with the
 * reaper, while the teardown stays on the task's own CPU, in parallel with
 * other exits, and charged to its own cgroup.
 *
 * At the final drop in exit_mm() the hook keeps the mm_users reference in a
 * record keyed by the task. do_exit() runs exit_notify(), then
 * proc_exit_connector(), then mpol_put_task_policy(current) (6.1 to 7.2);
 * a second IPMODIFY ftrace_ops on mpol_put_task_policy() sends exactly
 * the tasks with a record, an exit_state (exit_notify() has run) and no
 * mempolicy to amt_self_teardown(), which takes the record and drops the
 * reference. With task->mempolicy == NULL, which nobody else can change
 * for an exiting task, the original function would only have taken and
 * dropped task_lock(), so skipping it changes nothing else. A task with a
 * mempolicy never gets a record: __mpol_put() is not exported, so the
 * redirect could not replace the original; it takes the reaper instead.
 *
 * In reaper mode the same hook wakes the mm_reaper for exits queued since
 * the last wake-up (amt_reaper_wake_owed()), so that it does not compete
 * with the parent for a CPU before exit_notify().
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#include <linux/ftrace.h>
#include <linux/hashtable.h>
#include <linux/module.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/topology.h>
#include "amt.h"
#include "amt_trace.h"

struct amt_self_rec {
	struct hlist_node node;
	struct task_struct *task;
	struct mm_struct *mm;
	unsigned long rss;
};

static DEFINE_HASHTABLE(amt_self_table, 8);
static DEFINE_SPINLOCK(amt_self_lock);
/* Records not yet consumed; read locklessly by the ftrace callback. */
static atomic_t amt_self_pending = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(amt_self_wq);
static DEFINE_PER_CPU(long, amt_self_inflight);
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
 * amt_self_stash() - keep @mm for the exiting task to tear down later
 * @mm: the mm, whose last reference the caller (current) holds
 * @rss: its RSS, for the statistics and the tracepoint
 *
 * Return: true if stashed (the record owns the reference); false if the
 * task cannot use self mode (a mempolicy) or no memory for the record.
 */
bool amt_self_stash(struct mm_struct *mm, unsigned long rss)
{
	struct amt_self_rec *r;

	if (current->mempolicy) {
		amt_stat_inc(AMT_STAT_SELF_MEMPOLICY);
		return false;
	}
	r = kmalloc(sizeof(*r), GFP_NOWAIT | __GFP_NOWARN);
	if (!r)
		return false;
	r->task = current;
	r->mm = mm;
	r->rss = rss;
	spin_lock(&amt_self_lock);
	hash_add(amt_self_table, &r->node, (unsigned long)current);
	atomic_inc(&amt_self_pending);
	spin_unlock(&amt_self_lock);
	return true;
}

static struct amt_self_rec *amt_self_take(struct task_struct *tsk)
{
	struct amt_self_rec *r;

	spin_lock(&amt_self_lock);
	hash_for_each_possible(amt_self_table, r, node, (unsigned long)tsk) {
		if (r->task == tsk) {
			hash_del(&r->node);
			spin_unlock(&amt_self_lock);
			return r;
		}
	}
	spin_unlock(&amt_self_lock);
	return NULL;
}

/* Replaces mpol_put_task_policy(current) for a task holding a record. */
static void amt_self_teardown(struct task_struct *tsk)
{
	struct amt_self_rec *r = amt_self_take(tsk);

	if (r) {
		unsigned long rss = get_mm_rss(r->mm);
		u64 t0 = ktime_get_ns(), ns;

		/* The last reference: __mmput() runs here, in the dying task. */
		mmput(r->mm);
		ns = ktime_get_ns() - t0;
		amt_stat_inc(AMT_STAT_SELF_DONE);
		amt_stat_add(AMT_STAT_SELF_NS, ns);
		trace_mm_reaper_reap(tsk->pid, r->rss, rss, numa_node_id(), ns);
		kfree(r);
		if (atomic_dec_and_test(&amt_self_pending))
			wake_up_all(&amt_self_wq);
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
	if (!atomic_read(&amt_wake_owed) && !atomic_read(&amt_self_pending))
		return;
	bit = ftrace_test_recursion_trylock(ip, parent_ip);
	if (bit < 0)
		return;
	amt_reaper_wake_owed();
	/* With a mempolicy the original must run (we never stash then). */
	if (atomic_read(&amt_self_pending) && !tsk->mempolicy &&
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
 * amt_self_wait() - wait until every stashed mm has been torn down
 * @ms: the most to wait
 *
 * Return: 0, or -ETIMEDOUT.
 */
int amt_self_wait(unsigned int ms)
{
	return wait_event_timeout(amt_self_wq, !atomic_read(&amt_self_pending),
				  msecs_to_jiffies(ms)) ? 0 : -ETIMEDOUT;
}

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
 * amt_self_exit() - let every stashed mm be torn down, then unhook
 *
 * Called after amt_hook_exit(): no record can be added any more. Each
 * record belongs to a task between exit_mm() and mpol_put_task_policy(),
 * which consumes it there; the hook must stay until then.
 */
void amt_self_exit(void)
{
	if (!amt_self_ok)
		return;
	while (amt_self_wait(10000))
		pr_warn("unload waits for %d exiting tasks to tear down their mm\n",
			atomic_read(&amt_self_pending));
	unregister_ftrace_function(&amt_mpol_ops);
	ftrace_free_filter(&amt_mpol_ops);
	amt_wait_redirected(&amt_self_inflight);
}
