// SPDX-License-Identifier: GPL-2.0
/*
 * The mmput() hook: recognise an exiting task's final drop of an mm between
 * exit_mm() and exit_notify() (exit_mm()'s own, or a late one from a file's
 * release) and defer its teardown (to the task itself after exit_notify(),
 * or to the mm_reaper) instead of tearing it down on the exit path.
 *
 * An IPMODIFY ftrace_ops on mmput() (as livepatch does) redirects exactly
 * those calls to amt_mmput_exit(), which has mmput()'s prototype and returns
 * to the caller. Every other mmput() caller is left untouched.
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#include <linux/file.h>
#include <linux/hashtable.h>
#include <linux/kallsyms.h>
#include <linux/kernel.h>
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

/*
 * PERMANENT (in AMT_REDIRECT_FLAGS): kernel.ftrace_enabled=0 would
 * otherwise silently turn the hook off; with it, that sysctl write fails
 * while we are loaded.
 */
AMT_DEFINE_REDIRECT(amt_mmput_redirect, amt_mmput_ftrace, NULL);

/*
 * Release the executable as __mmput() would with set_mm_exe_file(mm, NULL),
 * so that the binary can be rewritten as soon as the parent's waitpid()
 * returns. No lock, for the reason set_mm_exe_file() gives for __mmput():
 * the caller holds the last mm_users reference, so no task uses the mm and
 * nothing can replace mm->exe_file concurrently (only exec, fork's copy and
 * prctl(PR_SET_MM) on a live mm write it); RCU readers (get_mm_exe_file())
 * cope with NULL exactly as after __mmput(). Taking mmap_lock here could
 * wait behind khugepaged or a /proc/pid/mem reader on the exit path. The
 * fput() is queued as task work of the exiting task and runs in
 * exit_task_work(), before exit_notify() wakes the parent.
 */
static void amt_release_exe(struct mm_struct *mm)
{
	struct file *exe = rcu_replace_pointer(mm->exe_file, NULL, true);

	if (!exe)
		return;
	amt_exe_allow_write(exe);
	fput(exe);
}

/*
 * Stash @e for current (self) or queue it for the reaper. A thread dying
 * before its exiting group leader leaves it to the leader instead, in
 * both modes (amt_stash_leader()).
 */
static void amt_defer_exit(struct amt_entry *e, bool self)
{
	struct task_struct *leader = amt_stash_leader();

	/* (only notify.c's hook would take it for the reaper) */
	if (!self && leader && amt_reaper_wakes_late())
		e->to_reaper = true;
	if (!self && !e->to_reaper)
		amt_reaper_queue_exit(e);
	else if (!amt_stash(e, leader))
		amt_reaper_owe_wake();
}

/*
 * Holding the last mm_users reference, try to defer the mm: stash it for
 * the task itself (mode=self) or queue it for the reaper. Returns false if
 * it must be torn down inline; the reason is counted.
 */
static bool amt_try_defer(struct mm_struct *mm)
{
	struct amt_exit_facts facts = {
		.enabled = READ_ONCE(amt_enabled),
		.rss = get_mm_rss(mm),
		.thresh = READ_ONCE(amt_thresh_pages),
	};
	/* every final drop forgets its mm in the OOM ring (oom.c) */
	bool oom_ring = amt_oom_ring_take(mm);
	struct amt_entry *e;
	enum amt_verdict v;
	bool self;

	/*
	 * The cheap gates first: most exits are small and stop here. The fast
	 * RSS read is approximate on 6.2+ (per-CPU counters), so near the
	 * threshold the exact sum decides.
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
	/* (a mempolicy, or notifiers on 6.1: the reaper takes it) */
	self = READ_ONCE(amt_mode) == AMT_MODE_SELF && amt_self_possible(mm);
	/*
	 * Add-then-check on the reaper's queue: may over-reject under
	 * concurrency, never over-admit. A stash is counted but not capped:
	 * its own task frees it in parallel with the others, and it waits
	 * AMT_STASH_MAX at most before the reaper (uncapped) takes it.
	 */
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
	/* room for one: the replacement's charges will wait for it (oom.c) */
	if (facts.memcg_full)
		amt_stat_inc(AMT_STAT_memcg_tight);
	trace_mm_reaper_queue(current, facts.rss, numa_node_id(), self);
	amt_defer_exit(e, self);
	return true;
sync:
	amt_stat_inc(v);
	return false;
}

/*
 * Which large mm a process left, in exit_mm(), to other holders (its other
 * threads, a vhost device): a late final drop (below) by a task of the
 * same process is then of its own mm, charged to its own memcg, which is
 * what amt_try_defer()'s memcg gate reads. Keyed by the thread group
 * (task->signal): on 6.4+ the vhost worker is a thread of the process and
 * its exit_mm() may come after the release in another thread. Recorded
 * once per process and mm, before the recording thread's reference goes
 * (so that a concurrent last drop sees it); taken by whichever drop is
 * last, exit_mm()'s or a late one. The pointers are only compared, never
 * followed, so no reference is held: a record whose last drop was by
 * someone else (a /proc reader) is dropped when AMT_LATE_AGE old, the next
 * time one is made, or at unload. All in process context (the hook's
 * redirect targets). Bounded: beyond AMT_LATE_MAX nothing is recorded, and
 * late drops stay inline.
 */
struct amt_late {
	struct hlist_node node;
	struct signal_struct *sig;	/* compared, never followed */
	struct mm_struct *mm;		/* compared, never followed */
	unsigned long since;		/* jiffies */
};

#define AMT_LATE_MAX 256
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
 * Record @mm for current's process, once (its threads share the record),
 * before the caller drops its reference: whoever drops last, possibly
 * concurrently (on 6.4+ the vhost worker thread completes its stop before
 * its own exit_mm(), so the release in another thread races with it),
 * finds the record. A failed allocation or a full table only means a late
 * drop stays inline.
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
		if (time_after(jiffies, r->since + AMT_LATE_AGE))
			amt_late_del(r);
	/* (another thread of the process may have recorded it meanwhile) */
	if (amt_nr_late < AMT_LATE_MAX && !amt_late_find(sig, mm)) {
		hash_add(amt_late_table, &n->node, (unsigned long)sig);
		amt_nr_late++;
		n = NULL;
	}
	spin_unlock(&amt_late_lock);
	kfree(n);
}

/*
 * Take the record of @mm by current's process, after current's
 * atomic_add_unless() found it held the last reference; true if there was
 * one. The read barrier pairs with the full barrier of the recorder's
 * successful add_unless (its record was inserted before its reference
 * went): the count we read as 1 was written after the record.
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
 * Replaces mmput() for exit_mm()'s own drop: same prototype, same context
 * (may sleep; mmput() does), returns to do_exit().
 */
static void amt_mmput_exit(struct mm_struct *mm)
{
	bool large = get_mm_rss(mm) >= READ_ONCE(amt_thresh_pages) / 2;

	might_sleep();
	/*
	 * A large mm that another thread or a device (vhost) still holds:
	 * record it before our reference goes, for a late drop by this
	 * process (amt_mmput_late()).
	 */
	if (large && atomic_read(&mm->mm_users) > 1)
		amt_late_record(mm);
	/*
	 * Other threads of the process, or a temporary holder (a /proc
	 * reader, MGLRU's aging walk), still use the mm: drop our
	 * reference as mmput() would, and the last holder tears down.
	 * Deciding with add_unless makes "last" exact between threads that
	 * exit concurrently; a later mmget_not_zero() by khugepaged, ksm or
	 * swapoff only means that whoever drops last tears down.
	 */
	if (atomic_add_unless(&mm->mm_users, -1, 1)) {
		amt_stat_inc(AMT_STAT_exit_not_last);
		goto out;
	}
	/* The last reference, exit_mm()'s: the process's record is done. */
	if (large)
		amt_late_take(mm);
	/* Defer, or the real mmput(). */
	if (!amt_try_defer(mm))
		mmput(mm); /* called from module text: not redirected */
out:
	amt_redirect_done(&amt_mmput_redirect);
}

/*
 * Replaces mmput() for a late drop: after exit_mm(), before exit_notify(),
 * from a file's release (vhost-net's on 6.1), not from exit_mm()'s site.
 * Deferred only if the mm is the one this task left in exit_mm(); another
 * process's mm (a vhost fd that outlived its owner in a child) is charged
 * to a memcg the gates cannot see, so it stays inline, counted.
 */
static void amt_mmput_late(struct mm_struct *mm)
{
	might_sleep();
	if (atomic_add_unless(&mm->mm_users, -1, 1)) {
		amt_stat_inc(AMT_STAT_exit_not_last);
	} else if (!amt_late_take(mm)) {
		amt_stat_inc(AMT_STAT_exit_late_foreign);
		mmput(mm);
	} else if (!amt_try_defer(mm)) {
		mmput(mm);
	}
	amt_redirect_done(&amt_mmput_redirect);
}

/*
 * Where exit_mm()'s mmput() is called from: the function that contains the
 * call (do_exit(), into which exit_mm() is inlined; exit_mm() where it is
 * not), as [start, end). Learned from the return address of the first
 * candidate call, checked by name with sprint_symbol(); start == 0 until
 * then. Written once (a later learner writes the same values).
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
	/* a reader that sees start sees end */
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

/*
 * The ftrace callback, on every mmput() in the system: keep it tiny. It
 * redirects the final drops of an exiting task between exit_mm() and
 * exit_notify(): exit_mm()'s own, and the late ones (below).
 */
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
	 * From exit_mm()'s call site: its own drop, whatever happened to the
	 * scheduler's state. The lazy-TLB active_mm is that mm unless the
	 * task was preempted between clearing ->mm and mmput() (the switch
	 * replaced it): a cross-check, counted.
	 *
	 * From anywhere else: a late drop, in exit_files() or
	 * exit_task_work() (a file's release: vhost-net's on 6.1 holds the
	 * process's mm until then, and its own mm_users reference drops last
	 * after a sleep, so active_mm proves nothing). Its teardown is on the
	 * exit path before exit_notify(), so on the parent's waitpid() path,
	 * exactly as exit_mm()'s would be; counted, and deferred if the mm is
	 * the task's own (amt_mmput_late()).
	 *
	 * Until the site is learned (never, on a kernel where the name check
	 * fails), the lazy active_mm is the test, as before the call site:
	 * the mm the task left in exit_mm() unless it was switched out and
	 * in again since; a drop of any other mm runs inline, uncounted.
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
 * After this returns no task executes amt_mmput_ftrace() or
 * amt_mmput_exit(), and every mm they deferred is in the deferred set.
 */
void amt_hook_exit(void)
{
	struct hlist_node *tmp;
	struct amt_late *r;
	unsigned int bkt;

	/* Redirected tasks may sleep in amt_mmput_exit() (the inline mmput). */
	amt_redirect_unregister(&amt_mmput_redirect);
	/* No task in hook code, no new record: drop the rest. */
	spin_lock(&amt_late_lock);
	hash_for_each_safe(amt_late_table, bkt, tmp, r, node)
		amt_late_del(r);
	spin_unlock(&amt_late_lock);
}
