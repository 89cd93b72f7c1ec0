// SPDX-License-Identifier: GPL-2.0
/*
 * The hook on mpol_put_task_policy(), which only do_exit() calls, right
 * after exit_notify(): the owed wake-up is paid, and a task tears down its
 * stashes (self.c; docs/design.md, "mode=self").
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
/* The original, for tasks with a mempolicy; NULL until learned, or never. */
static void (*amt_mpol_put)(struct task_struct *tsk);
static atomic_t amt_mpol_state = ATOMIC_INIT(0); /* 0: to learn, 1: done */

/*
 * Is @tsk (past exit_notify()) a thread whose leader exits, not past its own?
 * ->group_leader may be freed: by tgid under RCU (a released one is detached).
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

/* No mempolicy (none is set on an exiting task): the original only locks */
static void amt_notify_self(struct task_struct *tsk)
{
	amt_self_teardown(tsk);
	amt_redirect_done(&amt_notify_redirect);
}

/* With a mempolicy: tear down, then the original (__mpol_put() unexported). */
static void amt_notify_self_mpol(struct task_struct *tsk)
{
	amt_self_teardown(tsk);
	/* the policy is put after the teardown, as after an inline exit_mm() */
	amt_mpol_put(tsk);
	amt_redirect_done(&amt_notify_redirect);
}

/*
 * May a function whose ftrace site is @off bytes in, starting with @insn,
 * be called through a pointer? Never under kCFI. x86: the site is at 0, or
 * at 4 after an endbr64, sealed to a nop if the address is never taken
 * (then only without IBT enforced). arm64: at 4, or at 8 after a bti c or
 * bti jc landing pad (without one, only without BTI enforced).
 */
#if defined(CONFIG_X86)
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
#elif defined(CONFIG_ARM64)
#define AMT_BTI_C		0xd503245fU
#define AMT_BTI_JC		0xd50324dfU
static bool amt_indirect_callable(unsigned long off, u32 insn)
{
	if (amt_kcfi())
		return false;
	if (off == 8)
		return insn == AMT_BTI_C || insn == AMT_BTI_JC;
	return off == 4 && !amt_ibt_enforced();
}
#else
static bool amt_indirect_callable(unsigned long off, u32 insn)
{
	return false;
}
#endif

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
	/* before the permission, which amt_stash_mempolicy_ok() acquires */
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
	 * Pairs with amt_defer_to_leader()'s: a thread that stashed under us
	 * is seen in amt_nr_stashed, or sees our exit_state and takes it back.
	 */
	smp_mb();
	/* most exits: nothing owed or stashed; spare the recursion lock */
	if (!atomic_read(&amt_wake_owed) && !atomic_read(&amt_nr_stashed))
		return;
	bit = ftrace_test_recursion_trylock(ip, parent_ip);
	if (bit < 0)
		return;
	/* the exiting leader pays: waitpid() waits for it, a reaper competes */
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
 * Return: true if so; without it, no mode=self and the reaper is woken at once.
 */
bool amt_notify_available(void)
{
	return READ_ONCE(amt_notify_ok);
}

/**
 * amt_notify_init() - hook mpol_put_task_policy() (a failure is only warned)
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
 * Context: every stash handed off: a task redirected meanwhile finds none.
 */
void amt_notify_exit(void)
{
	if (!amt_notify_ok)
		return;
	amt_redirect_unregister(&amt_notify_redirect);
	WRITE_ONCE(amt_notify_ok, false);
}
