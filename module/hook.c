// SPDX-License-Identifier: GPL-2.0
/*
 * The mmput() hook: an IPMODIFY ftrace_ops on mmput() redirects an exiting
 * task's drops between exit_mm() and exit_notify() to targets that defer a
 * final drop's teardown when they can (docs/design.md, "The hook").
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#include <linux/file.h>
#include <linux/hashtable.h>
#include <linux/kallsyms.h>
#include <linux/kernel.h>
#include <linux/mmu_notifier.h>
#include <linux/module.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>
#include <linux/topology.h>
#include "amt_trace.h"
#include "hook.h"
#include "memcg.h"
#include "oom.h"
#include "params.h"
#include "pending.h"
#include "reaper.h"
#include "redirect.h"
#include "self.h"
#include "stash.h"
#include "stats.h"

AMT_DEFINE_REDIRECT(amt_mmput_redirect, amt_mmput_ftrace, NULL);

/*
 * Release the executable as __mmput()'s set_mm_exe_file(mm, NULL) would, so
 * that it is writable once waitpid() returns. No lock, for the reason
 * set_mm_exe_file() gives for __mmput(): we hold the last mm_users
 * reference, so nothing can write mm->exe_file; RCU readers cope with NULL.
 * The fput() runs as task work in exit_task_work(), before exit_notify().
 */
static void amt_release_exe(struct mm_struct *mm)
{
	struct file *exe = rcu_replace_pointer(mm->exe_file, NULL, true);

	if (!exe)
		return;
	amt_exe_allow_write(exe);
	fput(exe);
}

/* Stash @e (self), queue it, or leave it to the leader (amt_stash_leader()). */
static void amt_defer_exit(struct amt_entry *e, bool self)
{
	struct task_struct *leader = amt_stash_leader();

	/* the leader queues it from notify.c's hook, if that is in place */
	if (!self && leader && amt_reaper_wakes_late())
		e->to_reaper = true;
	if (!self && !e->to_reaper)
		amt_reaper_queue_exit(e);
	else if (!amt_stash(e, leader))
		amt_reaper_owe_wake();
}

/*
 * Holding the last mm_users reference (or, @pinned, one that only
 * non-task holders share): false to tear down inline (counted) or, pinned,
 * to drop it as mmput() would.
 */
static bool amt_try_defer(struct mm_struct *mm, bool pinned)
{
	struct amt_exit_facts facts = {
		.enabled = READ_ONCE(amt_enabled),
		.rss = get_mm_rss(mm),
		.thresh = READ_ONCE(amt_thresh_pages),
	};
	/*
	 * Every final drop forgets its mm in the OOM ring (oom.c); a pinned
	 * one is not final, and has no CLONE_VM sharer to catch.
	 */
	bool oom_ring = !pinned && amt_oom_ring_take(mm);
	struct amt_entry *e;
	enum amt_verdict v;
	bool self;

	/*
	 * Cheap gates first: most exits stop here. get_mm_rss() is approximate
	 * on 6.2+ (per-CPU counters), so near the threshold the exact sum
	 * decides.
	 */
	if (facts.enabled && facts.rss >= facts.thresh / 2) {
		facts.rss = amt_mm_rss_exact(mm);
		if (facts.rss >= facts.thresh) {
			facts.oom = amt_oom_involved(current, mm, oom_ring);
			facts.pressure = amt_under_pressure();
			facts.low_memory = amt_low_memory();
			amt_memcg_facts(mm, facts.rss, &facts);
			facts.aio = amt_mm_has_aio(mm);
		}
	}
	v = amt_decide(&facts);
	if (v != AMT_DEFER)
		goto sync;
	/* No waiting for memory on the exit path: fall back instead. */
	e = amt_entry_new(mm);
	if (!e) {
		v = AMT_REJECT_NOMEM;
		goto sync;
	}
	e->pinned = pinned;
	/* (a mempolicy, or notifiers on 6.1: the reaper takes it) */
	self = READ_ONCE(amt_mode) == AMT_MODE_SELF && amt_self_possible(mm);
	/* A stash is uncapped: its own task frees it, within AMT_STASH_MAX. */
	if (!amt_pending_charge(e->charged, !self)) {
		amt_entry_free(e);
		v = AMT_REJECT_BUDGET;
		goto sync;
	}
	/* No huge page collapse (allocations) for a process that is gone. */
	amt_mm_no_thp(mm);
	amt_release_exe(mm);
	/* Counted and traced before anyone can see it: defer precedes reap. */
	amt_stat_inc(AMT_DEFER);
	/* room for one: the replacement's charges will wait for it (memcg.c) */
	if (facts.memcg_full)
		amt_stat_inc(AMT_STAT_memcg_tight);
	trace_mm_reaper_queue(current, facts.rss, numa_node_id(), self);
	amt_defer_exit(e, self);
	return true;
sync:
	/* (a pinned drop is not final: no inline teardown to count) */
	if (!pinned)
		amt_stat_inc(v);
	return false;
}

/*
 * Is @mm used by no task but current, and held by more than the threads
 * of its group that may still be on their way to their own drop? Then a
 * holder that is not a task (a /proc reader, a driver's get_task_mm())
 * pins it, and its private memory may go at once (docs/design.md, "Pinned
 * mms"). A thread before its exit_mm(), a CLONE_VM sharer or a kthread
 * that took it with kthread_use_mm() (vhost's worker on 6.1) keeps it
 * whole. A sibling with ->mm cleared and no exit_state may hold its
 * reference still: only references beyond those prove a pin. The own
 * thread group first: only its last thread walks every task.
 */
static bool amt_only_pinned(struct mm_struct *mm)
{
	struct task_struct *p, *t;
	int maybe = 0;
	bool used = false;

	/* a CLONE_VM sharer's references could be in flight like a sibling's */
	if (!READ_ONCE(amt_zap_pinned) || !READ_ONCE(amt_enabled) ||
	    !amt_can_zap() || mm_has_notifiers(mm) ||
	    amt_mm_flag(mm, MMF_MULTIPROCESS))
		return false;
	rcu_read_lock();
	for_each_thread(current, t) {
		if (t == current)
			continue;
		if (READ_ONCE(t->mm) == mm) {
			used = true;
			goto out;
		}
		if (!READ_ONCE(t->exit_state))
			maybe++;
	}
	/* siblings may hold every other reference: no pin proven, no walk */
	if (atomic_read(&mm->mm_users) - 1 <= maybe) {
		used = true;
		goto out;
	}
	for_each_process_thread(p, t)
		if (t != current && READ_ONCE(t->mm) == mm) {
			used = true;
			goto out;
		}
out:
	rcu_read_unlock();
	return !used && atomic_read(&mm->mm_users) - 1 > maybe;
}

/*
 * The large mm each process left in exit_mm() to other holders (threads, a
 * vhost device), so that a late final drop can tell the process's own mm,
 * charged to the memcg the gates read, from another's (docs/design.md,
 * "Late final drops (vhost-net)"). Keyed by task->signal: on 6.4+ the vhost
 * worker is a thread. No reference is held: the pointers are only
 * compared. Used in the redirect targets only (process context). A record
 * nobody took expires after AMT_LATE_AGE; beyond AMT_LATE_MAX, late drops
 * stay inline.
 */
struct amt_late {
	struct hlist_node node;
	struct signal_struct *sig;	/* compared, never followed */
	struct mm_struct *mm;		/* compared, never followed */
	unsigned long since;		/* jiffies */
	bool pinned;			/* a pinned deferral was decided */
};

#define AMT_LATE_MAX 256
/* a claimed record only stops siblings exiting at the same moment */
#define AMT_LATE_PINNED_AGE HZ
#define AMT_LATE_AGE (10 * HZ)
static DEFINE_HASHTABLE(amt_late_table, 6);
static DEFINE_SPINLOCK(amt_late_lock);
static unsigned int amt_nr_late;	/* under amt_late_lock */

/* Under amt_late_lock: remove @r from the table and free it. */
static void amt_late_del(struct amt_late *r)
{
	hash_del(&r->node);
	amt_nr_late--;
	kfree(r);
}

/* Under amt_late_lock: the record of @mm by @sig, or NULL. */
static struct amt_late *amt_late_find(struct signal_struct *sig,
				      struct mm_struct *mm)
{
	struct amt_late *r;

	hash_for_each_possible(amt_late_table, r, node, (unsigned long)sig)
		if (r->sig == sig && r->mm == mm)
			return r;
	return NULL;
}

/*
 * Record @mm for current's process before the caller drops its reference,
 * so that whoever drops last, even at once (6.4+'s vhost worker), finds it.
 * Failure only leaves a late drop inline.
 */
static void amt_late_record(struct mm_struct *mm)
{
	struct signal_struct *sig = current->signal;
	struct hlist_node *tmp;
	struct amt_late *r, *n;
	unsigned int bkt;

	spin_lock(&amt_late_lock);
	r = amt_late_find(sig, mm);
	spin_unlock(&amt_late_lock);
	if (r)
		return;
	n = kmalloc(sizeof(*n), GFP_NOWAIT | __GFP_NOWARN);
	if (!n)
		return;
	n->sig = sig;
	n->mm = mm;
	n->since = jiffies;
	spin_lock(&amt_late_lock);
	hash_for_each_safe(amt_late_table, bkt, tmp, r, node)
		if (time_after(jiffies, r->since +
				       (r->pinned ? AMT_LATE_PINNED_AGE : AMT_LATE_AGE)))
			amt_late_del(r);
	/* another thread of the process may have recorded it meanwhile */
	if (amt_nr_late < AMT_LATE_MAX && !amt_late_find(sig, mm)) {
		hash_add(amt_late_table, &n->node, (unsigned long)sig);
		amt_nr_late++;
		n = NULL;
	}
	spin_unlock(&amt_late_lock);
	kfree(n);
}

/*
 * Once current's atomic_add_unless() found the last reference: take its
 * process's record of @mm, if any. The smp_rmb() pairs with the recorder's
 * fully ordered atomic_add_unless(), which followed its record.
 */
static bool amt_late_take(struct mm_struct *mm)
{
	struct amt_late *r;

	smp_rmb();
	spin_lock(&amt_late_lock);
	r = amt_late_find(current->signal, mm);
	if (r)
		amt_late_del(r);
	spin_unlock(&amt_late_lock);
	return r;
}

/*
 * Once per process and mm (its record), the pinned deferral: threads that
 * exit together all find the others' ->mm cleared, and one deferral of
 * theirs is enough. Claim it (@on) or, refused, release the claim. Without
 * a record (a full table), no claim.
 */
static bool amt_late_claim_pinned(struct mm_struct *mm, bool on)
{
	bool changed = false;
	struct amt_late *r;

	spin_lock(&amt_late_lock);
	r = amt_late_find(current->signal, mm);
	if (r && r->pinned != on) {
		r->pinned = on;
		changed = true;
	}
	spin_unlock(&amt_late_lock);
	return changed;
}

/* Replaces exit_mm()'s mmput(): same prototype and context (may sleep). */
static void amt_mmput_exit(struct mm_struct *mm)
{
	bool large = get_mm_rss(mm) >= READ_ONCE(amt_thresh_pages) / 2;

	might_sleep();
	/* others hold it (threads, vhost): record it for our late drop */
	if (large && atomic_read(&mm->mm_users) > 1)
		amt_late_record(mm);
	/*
	 * Not the last: drop ours as mmput() would; the last holder tears
	 * down. add_unless makes "last" exact between threads exiting at once.
	 */
	/* others only pin it: our reference goes with a zap (pinned) */
	if (large && atomic_read(&mm->mm_users) > 1 && amt_only_pinned(mm) &&
	    amt_late_claim_pinned(mm, true)) {
		if (amt_try_defer(mm, true))
			goto out;
		amt_late_claim_pinned(mm, false);
	}
	if (atomic_add_unless(&mm->mm_users, -1, 1)) {
		amt_stat_inc(AMT_STAT_exit_not_last);
		goto out;
	}
	/* The last reference, exit_mm()'s: the process's record is done. */
	if (large)
		amt_late_take(mm);
	if (!amt_try_defer(mm, false))
		mmput(mm); /* called from module text: not redirected */
out:
	amt_redirect_done(&amt_mmput_redirect);
}

/*
 * Replaces mmput() for a late drop (a file's release before exit_notify()).
 * Deferred only if the mm is the one this process left in exit_mm():
 * another process's is charged to a memcg the gates cannot see.
 */
static void amt_mmput_late(struct mm_struct *mm)
{
	might_sleep();
	if (atomic_add_unless(&mm->mm_users, -1, 1)) {
		amt_stat_inc(AMT_STAT_exit_not_last);
	} else if (!amt_late_take(mm)) {
		amt_stat_inc(AMT_STAT_exit_late_foreign);
		mmput(mm);
	} else if (!amt_try_defer(mm, false)) {
		mmput(mm);
	}
	amt_redirect_done(&amt_mmput_redirect);
}

/*
 * The function that calls exit_mm()'s mmput() (do_exit(), or exit_mm() if
 * not inlined), as [start, end); start == 0 until learned. Written once (a
 * later learner writes the same values).
 */
static unsigned long amt_site_start, amt_site_end;
/* Candidate calls that were not from there, before it was learned. */
static atomic_t amt_site_misses = ATOMIC_INIT(0);
#define AMT_SITE_MAX_MISSES 1000

/* From the callback: learn the site from @ret if it is in do_exit/exit_mm. */
static noinline __cold void amt_site_learn(unsigned long ret)
{
	static const char *const names[] = { "do_exit", "exit_mm", NULL };
	unsigned long start, end;
	char sym[KSYM_SYMBOL_LEN];

	if (atomic_read(&amt_site_misses) >= AMT_SITE_MAX_MISSES)
		return;
	if (!amt_symbol_bounds(ret, names, true, &start, &end, sym)) {
		if (atomic_inc_return(&amt_site_misses) == AMT_SITE_MAX_MISSES)
			pr_warn("exit_mm()'s call site not found in %d exiting tasks' mmput() calls (the last from %s): exits are recognised by active_mm\n",
				AMT_SITE_MAX_MISSES, sym);
		return;
	}
	WRITE_ONCE(amt_site_end, end);
	/* pairs with amt_at_site(): a reader that sees start sees end */
	smp_store_release(&amt_site_start, start);
}

static bool amt_at_site(unsigned long ret)
{
	unsigned long start = smp_load_acquire(&amt_site_start);

	return start && ret >= start && ret < READ_ONCE(amt_site_end);
}

/**
 * amt_hook_site_known() - has exit_mm()'s call site been learned?
 *
 * Return: true once it has (from the first exit after the load).
 */
bool amt_hook_site_known(void)
{
	return smp_load_acquire(&amt_site_start) != 0;
}

/* Runs on every mmput() in the system: keep it tiny. */
static void notrace amt_mmput_ftrace(unsigned long ip, unsigned long parent_ip,
				     struct ftrace_ops *ops,
				     struct ftrace_regs *fregs)
{
	void (*target)(struct mm_struct *mm) = amt_mmput_exit;
	struct task_struct *tsk = current;
	struct mm_struct *mm;
	int bit;

	/* exit_mm() runs only in a task that is exiting. */
	if (likely(!(tsk->flags & PF_EXITING)))
		return;
	/* The reaper and the inline fallback must reach the real mmput(). */
	if (within_module(parent_ip, THIS_MODULE))
		return;
	/*
	 * exit_mm() has cleared tsk->mm before its mmput(); kernel threads
	 * have no mm of their own to drop; after exit_notify() the parent
	 * has been woken already (and no exit path drops an mm there).
	 */
	if (tsk->mm || (tsk->flags & PF_KTHREAD) || tsk->exit_state)
		return;
	bit = ftrace_test_recursion_trylock(ip, parent_ip);
	if (bit < 0)
		return;
	mm = (struct mm_struct *)amt_fregs_arg0(fregs);
	if (unlikely(!amt_hook_site_known()))
		amt_site_learn(parent_ip);
	/*
	 * From exit_mm()'s site: its drop; the lazy active_mm differs only if
	 * the task was preempted after clearing ->mm (counted). From anywhere
	 * else: a late drop, from a file's release in exit_files() or
	 * exit_task_work(). Until the site is learned, active_mm decides, and
	 * any other drop runs inline, uncounted.
	 */
	if (amt_at_site(parent_ip)) {
		if (tsk->active_mm != mm)
			amt_stat_inc(AMT_STAT_exit_preempted);
	} else if (amt_hook_site_known()) {
		amt_stat_inc(AMT_STAT_exit_late);
		target = amt_mmput_late;
	} else if (tsk->active_mm != mm) {
		goto out;
	}
	amt_redirect_to(&amt_mmput_redirect, fregs, target);
out:
	ftrace_test_recursion_unlock(bit);
}

/**
 * amt_hook_init() - start redirecting exit_mm()'s final mmput()
 *
 * Return: 0, or a negative errno with the reason logged.
 */
int amt_hook_init(void)
{
	int ret;

	amt_mmput_redirect.ip = (unsigned long)mmput;
	ret = amt_redirect_register(&amt_mmput_redirect);
	if (ret == -EBUSY)
		pr_err("cannot hook mmput(): another IPMODIFY user (a livepatch, a kprobe or another hooking module) owns it, or kernel.ftrace_enabled is 0\n");
	else if (ret)
		pr_err("cannot hook mmput() (error %d): this kernel's ftrace cannot trace it\n",
		       ret);
	return ret;
}

/**
 * amt_hook_exit() - stop redirecting and wait until no task runs hook code
 *
 * Every mm the hook deferred is in the deferred set then.
 */
void amt_hook_exit(void)
{
	struct hlist_node *tmp;
	struct amt_late *r;
	unsigned int bkt;

	amt_redirect_unregister(&amt_mmput_redirect);
	/* No task in hook code, no new record: drop the rest. */
	spin_lock(&amt_late_lock);
	hash_for_each_safe(amt_late_table, bkt, tmp, r, node)
		amt_late_del(r);
	spin_unlock(&amt_late_lock);
}
