// SPDX-License-Identifier: GPL-2.0
/*
 * The hook after exit_notify(): do_exit() runs exit_notify(), then
 * proc_exit_connector(), then mpol_put_task_policy(current), in that order
 * on 6.1, 6.12 and 7.2, and it is that function's only caller. By then the
 * parent has been woken, so an IPMODIFY ftrace_ops on it is where
 *
 * - the mm_reaper is woken for exits queued quietly since the last
 *   wake-up (reaper.c, amt_wake_owed): woken earlier, it would compete
 *   with the parent for a CPU;
 * - a task that stashed its mm in exit_mm() (mode=self) takes it back and
 *   tears it down (self.c), and a group leader takes what its threads
 *   that died before it left to it (to tear down, or to queue for the
 *   reaper): the redirect target replaces the original,
 *   which with task->mempolicy == NULL (nobody else can change it for an
 *   exiting task) would only have taken and dropped task_lock(). For a
 *   task with a mempolicy the target tears down, then calls the original
 *   (__mpol_put() is not exported: nothing else can drop the policy), at
 *   the address ftrace reports, checked by name; the callback lets that
 *   call from our text through. Where such a call is not safe (IBT
 *   enforced and the function sealed, see compat.h) those tasks are left
 *   to the reaper, counted as self_mempolicy.
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#include <linux/kallsyms.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/pid.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/uaccess.h>
#include "notify.h"
#include "pending.h"
#include "reaper.h"
#include "redirect.h"
#include "self.h"
#include "stash.h"

static DEFINE_PER_CPU(long, amt_notify_inflight);
static bool amt_notify_ok;	/* the hook is registered */
/*
 * mpol_put_task_policy() itself, for tasks with a mempolicy; NULL until
 * learned from the first exit, and for good if it cannot be called.
 */
static void (*amt_mpol_put)(struct task_struct *tsk);
static atomic_t amt_mpol_state = ATOMIC_INIT(0); /* 0: to learn, 1: done */

/*
 * Is @tsk, after its exit_notify(), a thread whose group leader is exiting
 * but not yet past its own exit_notify()? The thread has been released
 * (release_task() at the end of exit_notify()), so its leader may have
 * been reaped and freed since: current->group_leader must not be followed
 * (design.md, "Late final drops"). The leader is found through the
 * thread group's pid instead, under RCU: a released leader is no longer
 * attached to it, and a task found there is freed only after a grace
 * period.
 */
static bool amt_leader_still_exiting(struct task_struct *tsk)
{
	struct task_struct *leader;
	bool ret;

	if (thread_group_leader(tsk))
		return false;
	rcu_read_lock();
	leader = pid_task(task_tgid(tsk), PIDTYPE_TGID);
	ret = leader &&
	      (READ_ONCE(leader->flags) & PF_EXITING) &&
	      !READ_ONCE(leader->exit_state);
	rcu_read_unlock();
	return ret;
}

static void notrace amt_notify_ftrace(unsigned long ip,
				      unsigned long parent_ip,
				      struct ftrace_ops *ops,
				      struct ftrace_regs *fregs);

static struct amt_redirect amt_notify_redirect = {
	.ops = {
		.func = amt_notify_ftrace,
		.flags = AMT_REDIRECT_FLAGS,
	},
	.name = "mpol_put_task_policy",
	.inflight = &amt_notify_inflight,
};

/* Replaces mpol_put_task_policy(current) for a task that may hold a stash. */
static void amt_notify_self(struct task_struct *tsk)
{
	amt_self_teardown(tsk);
	amt_redirect_done(&amt_notify_redirect);
}

/* The same for a task with a mempolicy: tear down, then the original. */
static void amt_notify_self_mpol(struct task_struct *tsk)
{
	amt_self_teardown(tsk);
	/* the policy is put after the teardown, as after an inline exit_mm() */
	amt_mpol_put(tsk);
	amt_redirect_done(&amt_notify_redirect);
}

/*
 * May a function whose fentry call ftrace reports at @off bytes past its
 * symbol, starting with @insn (its first 4 bytes), be called through a
 * pointer? x86 builds with IBT (7.x in Debian) start every function with
 * endbr64 and "seal" those whose address is never taken at boot (the endbr
 * becomes a 4-byte nop, which version's nop varies): an indirect call to a
 * sealed function faults where the CPU enforces IBT. With kCFI the call
 * would be checked against a type hash we cannot vouch for.
 */
#define AMT_ENDBR64		0xfa1e0ff3U	/* f3 0f 1e fa */
#define AMT_ENDBR_SEALED_61	0x001f0f66U	/* osp nopl (%rax), v6.1 */
#define AMT_ENDBR_SEALED	0xd6401f0fU	/* nopl -42(%rax), v6.2+ */
static bool amt_indirect_callable(unsigned long off, u32 insn)
{
	if (amt_kcfi())
		return false;
	if (!off)
		return true;
	if (off != 4)
		return false;
	if (insn == AMT_ENDBR64)
		return true;
	if (insn != AMT_ENDBR_SEALED_61 && insn != AMT_ENDBR_SEALED)
		return false;
	return !amt_ibt_enforced();
}

/*
 * From the callback, once: find mpol_put_task_policy()'s start from the
 * fentry address @ip and decide whether we may call it.
 */
static noinline __cold void amt_notify_learn(unsigned long ip)
{
	static const char *const names[] = { "mpol_put_task_policy", NULL };
	unsigned long start, end;
	char sym[KSYM_SYMBOL_LEN];
	u32 insn = 0;

	if (atomic_cmpxchg(&amt_mpol_state, 0, 1))
		return;
	/* no clone: its calling convention may differ */
	if (!amt_symbol_bounds(ip, names, false, &start, &end, sym) ||
	    (start != ip && copy_from_kernel_nofault(&insn, (void *)start,
						     sizeof(insn))) ||
	    !amt_indirect_callable(ip - start, insn)) {
		pr_info("mode=self: tasks with a NUMA mempolicy go to the mm_reaper (%s cannot be called here)\n",
			sym);
		return;
	}
	/* a task that sees the permission (acquire) sees the function */
	smp_store_release(&amt_mpol_put,
			  (void (*)(struct task_struct *))start);
	amt_stash_allow_mempolicy();
}

static void notrace amt_notify_ftrace(unsigned long ip,
				      unsigned long parent_ip,
				      struct ftrace_ops *ops,
				      struct ftrace_regs *fregs)
{
	struct task_struct *tsk = current;
	int bit;

	/* do_exit()'s own call, after exit_notify(): exit_state is set. */
	if (!tsk->exit_state)
		return;
	if (unlikely(!atomic_read(&amt_mpol_state)))
		amt_notify_learn(ip);
	/* amt_notify_self_mpol()'s call of the original: let it run. */
	if (tsk->mempolicy && within_module(parent_ip, THIS_MODULE))
		return;
	/*
	 * Pairs with amt_defer_to_leader()'s: a thread that stashed under
	 * us after reading our exit_state as 0 is seen in amt_nr_stashed,
	 * or it sees our exit_state and takes its stash back.
	 */
	smp_mb();
	/*
	 * Almost always: no wake-up owed and no task waiting to tear its mm
	 * down. Two reads say so without the recursion lock.
	 */
	if (!atomic_read(&amt_wake_owed) && !atomic_read(&amt_nr_stashed))
		return;
	bit = ftrace_test_recursion_trylock(ip, parent_ip);
	if (bit < 0)
		return;
	/*
	 * A thread whose group leader is still on its way to exit_notify()
	 * leaves the wake-up to others: the parent's waitpid() waits for
	 * the whole group, and a reaper woken now competes with it (on
	 * 6.4+ vhost's worker thread passes here while the leader waits
	 * in the device's release for an RCU grace period, which the
	 * teardown then delays). The leader passes here too, and pays.
	 */
	if (!amt_leader_still_exiting(tsk))
		amt_reaper_wake_owed();
	if (atomic_read(&amt_nr_stashed) &&
	    (struct task_struct *)amt_fregs_arg0(fregs) == tsk) {
		if (!tsk->mempolicy)
			amt_redirect_to(&amt_notify_redirect, fregs,
					amt_notify_self);
		/* (without amt_mpol_put such a task never stashes) */
		else if (READ_ONCE(amt_mpol_put))
			amt_redirect_to(&amt_notify_redirect, fregs,
					amt_notify_self_mpol);
	}
	ftrace_test_recursion_unlock(bit);
}

/**
 * amt_notify_available() - is the hook after exit_notify() in place?
 *
 * Without it there is no mode=self, and the reaper is woken at once.
 *
 * Return: true if it is.
 */
bool amt_notify_available(void)
{
	return READ_ONCE(amt_notify_ok);
}

/**
 * amt_notify_init() - hook mpol_put_task_policy(); failure only disables
 * mode=self and the late wake-up of the reaper
 */
void amt_notify_init(void)
{
	if (amt_redirect_register(&amt_notify_redirect)) {
		pr_warn("cannot hook mpol_put_task_policy(): mode=self unavailable\n");
		return;
	}
	WRITE_ONCE(amt_notify_ok, true);
}

/**
 * amt_notify_exit() - unhook, and wait for tasks tearing down in our text
 *
 * Called once no stash is left (every one handed to the reaper): a task
 * redirected meanwhile finds none.
 */
void amt_notify_exit(void)
{
	if (!amt_notify_ok)
		return;
	amt_redirect_unregister(&amt_notify_redirect);
	WRITE_ONCE(amt_notify_ok, false);
}
