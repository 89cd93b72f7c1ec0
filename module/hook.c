// SPDX-License-Identifier: GPL-2.0
/*
 * The mmput() hook: an exiting task's drops before exit_notify() go to
 * targets that defer a final drop's teardown (docs/design.md, "The hook").
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
 * Lockless as __mmput()'s set_mm_exe_file(): the last mm_users holder alone
 * writes ->exe_file. fput() runs in exit_task_work(), before exit_notify().
 */
static void amt_release_exe(struct mm_struct *mm)
{
	struct file *exe = rcu_replace_pointer(mm->exe_file, NULL, true);

	if (!exe)
		return;
	amt_exe_allow_write(exe);
	fput(exe);
}

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
 * Holding the last mm_users reference (@pinned: one only non-task holders
 * share). False: the caller drops it as mmput() would (counted if final).
 */
static bool amt_try_defer(struct mm_struct *mm, bool pinned)
{
	struct amt_exit_facts facts = {
		.enabled = READ_ONCE(amt_enabled),
		.rss = get_mm_rss(mm),
		.thresh = READ_ONCE(amt_thresh_pages),
	};
	/* a pinned drop is not final: no CLONE_VM sharer to catch (oom.c) */
	bool oom_ring = !pinned && amt_oom_ring_take(mm);
	struct amt_entry *e;
	enum amt_verdict v;
	bool self;

	/* get_mm_rss() is per-CPU approximate on 6.2+: the exact sum decides */
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
	e = amt_entry_new(mm);
	if (!e) {
		v = AMT_REJECT_NOMEM;
		goto sync;
	}
	e->pinned = pinned;
	self = READ_ONCE(amt_mode) == AMT_MODE_SELF && amt_self_possible(mm);
	/* A stash is uncapped: its own task frees it, within AMT_STASH_MAX. */
	if (!amt_pending_charge(e->charged, !self)) {
		amt_entry_free(e);
		v = AMT_REJECT_BUDGET;
		goto sync;
	}
	amt_mm_no_thp(mm);
	amt_release_exe(mm);
	/* Counted and traced before anyone can see it: defer precedes reap. */
	amt_stat_inc(AMT_DEFER);
	if (facts.memcg_full)
		amt_stat_inc(AMT_STAT_memcg_tight);
	trace_mm_reaper_queue(current, facts.rss, numa_node_id(), self);
	amt_defer_exit(e, self);
	return true;
sync:
	if (!pinned)
		amt_stat_inc(v);
	return false;
}

/*
 * Does a non-task holder pin @mm (docs/design.md, "Pinned mms")? No task
 * but current may use it, and it must hold references beyond those of the
 * group's threads not yet exited: such a thread may still hold its own.
 */
static bool amt_only_pinned(struct mm_struct *mm)
{
	struct task_struct *p, *t;
	int maybe = 0;
	bool pinned = false;

	/* a CLONE_VM sharer's references could be in flight like a sibling's */
	if (!READ_ONCE(amt_zap_pinned) || !READ_ONCE(amt_enabled) ||
	    !amt_can_zap() || mm_has_notifiers(mm) ||
	    amt_mm_flag(mm, MMF_MULTIPROCESS))
		return false;
	rcu_read_lock();
	for_each_thread(current, t) {
		if (t == current)
			continue;
		if (READ_ONCE(t->mm) == mm)
			goto out;
		if (!READ_ONCE(t->exit_state))
			maybe++;
	}
	/* siblings may hold every other reference: no pin proven, no walk */
	if (atomic_read(&mm->mm_users) - 1 <= maybe)
		goto out;
	for_each_process_thread(p, t)
		if (t != current && READ_ONCE(t->mm) == mm)
			goto out;
	/* read again after the walk: a holder may have let go meanwhile */
	pinned = atomic_read(&mm->mm_users) - 1 > maybe;
out:
	rcu_read_unlock();
	return pinned;
}

/* exit_mm()'s large mms left to others (docs/design.md, "Late final drops") */
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

/* Before the caller's drop: whoever drops last, even at once, finds it. */
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
 * After atomic_add_unless() found the last reference. The smp_rmb() pairs
 * with the recorder's fully ordered atomic_add_unless(), after its record.
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

/* One pinned deferral per process and mm: claim it (@on) or release it. */
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
	if (large && atomic_read(&mm->mm_users) > 1)
		amt_late_record(mm);
	/* others only pin it: our reference goes with a zap (pinned) */
	if (large && atomic_read(&mm->mm_users) > 1 && amt_only_pinned(mm) &&
	    amt_late_claim_pinned(mm, true)) {
		if (amt_try_defer(mm, true))
			goto out;
		amt_late_claim_pinned(mm, false);
	}
	/* add_unless: "last" is exact between threads exiting at once */
	if (atomic_add_unless(&mm->mm_users, -1, 1)) {
		amt_stat_inc(AMT_STAT_exit_not_last);
		goto out;
	}
	if (large)
		amt_late_take(mm);
	if (!amt_try_defer(mm, false))
		mmput(mm); /* called from module text: not redirected */
out:
	amt_redirect_done(&amt_mmput_redirect);
}

/* Replaces mmput() for a late drop: only the process's own mm is deferred. */
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

/* [start, end) of exit_mm()'s mmput() caller; 0 until learned, then fixed */
static unsigned long amt_site_start, amt_site_end;
/* Candidate calls that were not from there, before it was learned. */
static atomic_t amt_site_misses = ATOMIC_INIT(0);
#define AMT_SITE_MAX_MISSES 1000

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

	if (likely(!(tsk->flags & PF_EXITING)))
		return;
	/* The reaper and the inline fallback must reach the real mmput(). */
	if (within_module(parent_ip, THIS_MODULE))
		return;
	/* ->mm cleared by exit_mm(); no kthread; not past exit_notify() */
	if (tsk->mm || (tsk->flags & PF_KTHREAD) || tsk->exit_state)
		return;
	bit = ftrace_test_recursion_trylock(ip, parent_ip);
	if (bit < 0)
		return;
	mm = (struct mm_struct *)amt_fregs_arg0(fregs);
	if (unlikely(!amt_hook_site_known()))
		amt_site_learn(parent_ip);
	/* exit_mm()'s site, else a late drop; unlearned, active_mm decides */
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
