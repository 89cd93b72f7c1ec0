// SPDX-License-Identifier: GPL-2.0
/*
 * OOM and reclaim: queued memory must never cause an OOM kill.
 *
 * - OOM victims are never deferred: the victim's own thread group is marked
 *   by the kernel (TIF_MEMDIE, signal->oom_mm); its mm is also recorded here
 *   from the oom:mark_victim tracepoint, before any CLONE_VM sharer in
 *   another thread group is killed, so the sharer's final drop sees it.
 * - An OOM notifier gives the OOM killer the queue first: every queued mm is
 *   already dead, so draining it is progress with no victim to choose.
 * - A shrinker makes the queue visible to reclaim and hurries the reaper.
 * - memcg OOM has no notifier. A second shrinker, memcg-aware, is called by
 *   memcg reclaim for the memcgs that hold deferred mms (their entries are
 *   on a memcg-aware list_lru, pending.c): a charge at memory.max waits
 *   there, in short slices, for the teardowns that hold the memcg's pages,
 *   so that a replacement in a cgroup with room for one gets the memory
 *   of the process it replaces instead of a memcg OOM kill. Where memcg
 *   reclaim cannot see them, an mm is deferred only when its memcg and
 *   every ancestor have room to keep it charged while deferred.
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/oom.h>
#include <linux/sched/coredump.h>
#include <linux/sched/signal.h>
#include <linux/shrinker.h>
#include <linux/spinlock.h>
#include <linux/swap.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/tracepoint.h>
/* only for the prototype check of mark_victim: no symbol of it is used */
#include <trace/events/oom.h>
#include "amt_trace.h"
#include "oom.h"
#include "params.h"
#include "pending.h"
#include "reaper.h"
#include "stats.h"

/*
 * Longest the OOM notifier waits, in the allocating task under oom_lock, for
 * the reaper to finish one queued teardown. Long enough for a GiB-sized mm
 * on slow hardware; short enough that an OOM kill, if still needed, is only
 * this much late. Each OOM invocation waits again only while the queue
 * keeps yielding memory.
 */
#define AMT_OOM_WAIT_MS 1000
/* After an OOM or a direct reclaim scan, exits stay inline this long. */
#define AMT_PRESSURE_MS 1000
/*
 * Longest one memcg reclaim call waits for deferred teardowns, and how
 * often it looks whether the memcg has room again (docs/design.md, "memcg
 * reclaim"). A charge waits again in each reclaim call, but only for
 * teardowns that are freeing or about to start (pending.c,
 * AMT_MEMCG_STALL and AMT_MEMCG_START_MAX).
 */
#define AMT_MEMCG_SLICE_MS 20
#define AMT_MEMCG_POLL_MS 2

/*
 * Recently OOM-targeted mms. Written from the oom:mark_victim probe (under
 * the victim's task_lock, atomic context), read and cleared by every final
 * drop in exit_mm(), large or small: a victim's entry left in the ring
 * would match a later mm at the same address (the slab reuses it at once)
 * and keep that one inline. An entry whose final drop is not exit_mm()'s
 * (a /proc reader dropped last) stays until overwritten, and keeps a later
 * mm at its address inline once. amt_oom_ring_live counts the entries, so
 * that exits read the ring only after an OOM kill.
 */
#define AMT_OOM_RING 64
static struct mm_struct *amt_oom_ring[AMT_OOM_RING];
static unsigned int amt_oom_ring_next;
static int amt_oom_ring_live;
/* raw: the probe runs with preemption off, also on PREEMPT_RT */
static DEFINE_RAW_SPINLOCK(amt_oom_lock);

static unsigned long amt_pressure_until;

static void amt_note_pressure(void)
{
	WRITE_ONCE(amt_pressure_until,
		   jiffies + msecs_to_jiffies(AMT_PRESSURE_MS));
}

/**
 * amt_under_pressure() - did the OOM killer or direct reclaim just run?
 *
 * Return: true within AMT_PRESSURE_MS of either.
 */
bool amt_under_pressure(void)
{
	return READ_ONCE(amt_oom_guard) &&
	       time_before(jiffies, READ_ONCE(amt_pressure_until));
}

/**
 * amt_low_memory() - is MemAvailable at or under min_available_pct of RAM?
 *
 * si_mem_available() sums a few global counters and the zones' reserves:
 * lockless, cheap next to an exit of thresh_pages or more.
 *
 * Return: true if so and oom_guard is on.
 */
bool amt_low_memory(void)
{
	unsigned int pct = READ_ONCE(amt_min_avail_pct);

	if (!pct || !READ_ONCE(amt_oom_guard))
		return false;
	return amt_memory_low(si_mem_available(), totalram_pages(), pct);
}

/* The OOM killer holds task_lock(task): task->mm is stable. */
static void amt_note_victim(struct task_struct *task)
{
	struct mm_struct *mm = task->mm, **slot;
	unsigned long flags;

	if (!mm)
		return;
	raw_spin_lock_irqsave(&amt_oom_lock, flags);
	slot = &amt_oom_ring[amt_oom_ring_next++ % AMT_OOM_RING];
	if (!*slot)
		WRITE_ONCE(amt_oom_ring_live, amt_oom_ring_live + 1);
	*slot = mm;
	raw_spin_unlock_irqrestore(&amt_oom_lock, flags);
	amt_stat_inc(AMT_STAT_OOM_MARKED);
}

/*
 * The probe's prototype must be the tracepoint's: a mismatch would pass
 * garbage for the task. Kbuild reads the target's trace/events/oom.h, and
 * amt_oom_init() has the compiler check the probe against it.
 */
#ifdef AMT_MARK_VICTIM_PID
/* Older stable kernels: mark_victim(int pid), the victim's global pid. */
static void amt_mark_victim_probe(void *data, int pid)
{
	struct task_struct *task;

	rcu_read_lock();
	task = pid_task(find_pid_ns(pid, &init_pid_ns), PIDTYPE_PID);
	if (task)
		amt_note_victim(task);
	rcu_read_unlock();
}
#else
static void amt_mark_victim_probe(void *data, struct task_struct *task,
				  uid_t uid)
{
	amt_note_victim(task);
}
#endif

/**
 * amt_oom_ring_take() - was @mm targeted by the OOM killer? Forget it.
 * @mm: an mm at its final drop in exit_mm(), whatever its size
 *
 * Return: true if the ring held it.
 */
bool amt_oom_ring_take(struct mm_struct *mm)
{
	bool found = false;
	unsigned long flags;
	int i;

	/*
	 * Pairs with the victim's fully ordered decrement of mm_users, which
	 * the caller's failed atomic_add_unless() (a plain read) observed:
	 * the ring insert happened before that decrement (docs/design.md).
	 */
	smp_rmb();
	if (!READ_ONCE(amt_oom_ring_live))
		return false;
	raw_spin_lock_irqsave(&amt_oom_lock, flags);
	for (i = 0; i < AMT_OOM_RING; i++) {
		if (amt_oom_ring[i] == mm) {
			amt_oom_ring[i] = NULL;
			WRITE_ONCE(amt_oom_ring_live, amt_oom_ring_live - 1);
			found = true;
		}
	}
	raw_spin_unlock_irqrestore(&amt_oom_lock, flags);
	return found;
}

/**
 * amt_oom_involved() - is this final drop part of an OOM kill?
 * @tsk: the exiting task (current), holding the last reference of @mm
 * @mm: its mm
 * @ring: amt_oom_ring_take(@mm), taken by the caller at every final drop
 *
 * Return: true if the mm must be torn down inline.
 */
bool amt_oom_involved(struct task_struct *tsk, struct mm_struct *mm,
		      bool ring)
{
	bool marked = tsk_is_oom_victim(tsk) ||
		      test_tsk_thread_flag(tsk, TIF_MEMDIE);

	/* Only the ring knew: a CLONE_VM sharer of a victim drops last. */
	if (ring && !marked)
		amt_stat_inc(AMT_STAT_OOM_SHARER);
	return ring || marked || amt_mm_flag(mm, MMF_OOM_SKIP);
}

/**
 * amt_memcg_room() - the least room under memory.max on the exiting task's
 * memcg path
 * @tsk: the exiting task (current)
 *
 * The memcg is the exiting task's: exit_mm() has already cleared mm->owner
 * (mm_update_next_owner() with no other user), and the task is unlinked
 * from its cgroup only later, in cgroup_exit(). Its pages are charged there
 * unless the task moved between cgroups. One walk serves every room check
 * of an exit: keeping n pages charged would starve the memcg if n > room.
 *
 * Return: pages left under memory.max in the tightest memcg of the path
 * to the root; ULONG_MAX if none has a limit (or the guard is off).
 */
unsigned long amt_memcg_room(struct task_struct *tsk)
{
	unsigned long room = ULONG_MAX;
#ifdef CONFIG_MEMCG
	struct mem_cgroup *m;
	unsigned long max;

	if (!READ_ONCE(amt_oom_guard) || mem_cgroup_disabled())
		return room;
	rcu_read_lock();
	for (m = mem_cgroup_from_task(tsk); m; m = parent_mem_cgroup(m)) {
		max = READ_ONCE(m->memory.max);
		if (max != PAGE_COUNTER_MAX)
			room = min(room, amt_memcg_room_of(page_counter_read(&m->memory),
							   max));
	}
	rcu_read_unlock();
#endif
	return room;
}

static int amt_oom_notify(struct notifier_block *nb, unsigned long unused,
			  void *arg)
{
	unsigned long *freed = arg, got, before = amt_pending_pages();
	u64 t0;

	if (!READ_ONCE(amt_oom_guard))
		return NOTIFY_OK;
	amt_note_pressure();
	/*
	 * A teardown out of memory must not wait for the progress it holds
	 * up: a reaper's, or a dying task's own after exit_notify() (a
	 * driver's release() that allocates). They are told to hurry only.
	 */
	if (!amt_pending_mms())
		return NOTIFY_OK;
	if (amt_is_reaper(current) || current->exit_state) {
		amt_reaper_boost();
		return NOTIFY_OK;
	}
	t0 = ktime_get_ns();
	got = amt_reaper_wait_progress(AMT_OOM_WAIT_MS);
	amt_stat_inc(AMT_STAT_OOM_DRAINS);
	amt_stat_add(AMT_STAT_OOM_FREED_PAGES, got);
	trace_mm_reaper_oom_drain(before, got, ktime_get_ns() - t0);
	/* Pages back: out_of_memory() retries the allocation, kills no one. */
	*freed += got;
	return NOTIFY_OK;
}

static struct notifier_block amt_oom_nb = {
	.notifier_call = amt_oom_notify,
};

/* Deferred anonymous and swap pages: what a teardown is sure to free. */
static unsigned long amt_shrink_count(struct shrinker *s,
				      struct shrink_control *sc)
{
	long pages = amt_pending_pages();

	return pages > 0 ? pages : SHRINK_EMPTY;
}

/*
 * Reclaim wants memory and deferred mms hold some. Tearing an mm down here,
 * in the reclaiming task, would trade one latency cliff for another; the
 * reaper does it, at normal priority until the queue is empty, and takes
 * over the stashes whose task is stuck before exit_notify().
 */
static unsigned long amt_shrink_scan(struct shrinker *s,
				     struct shrink_control *sc)
{
	u64 t0 = ktime_get_ns();

	amt_stat_inc(AMT_STAT_SHRINKER_SCANS);
	if (!READ_ONCE(amt_oom_guard))
		return SHRINK_STOP;
	if (!current_is_kswapd())
		amt_note_pressure();
	amt_reaper_handoff(AMT_HANDOFF_STUCK);
	amt_reaper_boost();
	amt_stat_add(AMT_STAT_SHRINKER_SCAN_NS, ktime_get_ns() - t0);
	return SHRINK_STOP;
}

/*
 * Is the reclaiming task charging a memcg about to fail its charge, on the
 * path from @scanned (a memcg with deferred mms) to the root: less than two
 * charge batches left under memory.max there, and the task's memcg (or the
 * one it charges for, set_active_memcg()) under it? Global reclaim passes
 * through every memcg, and tasks elsewhere must not wait for this one.
 */
static bool amt_memcg_charging_at_limit(struct mem_cgroup *scanned)
{
	struct mem_cgroup *m, *charging;
	bool at = false;

	rcu_read_lock();
	charging = current->active_memcg ?: mem_cgroup_from_task(current);
	for (m = scanned; m && !at; m = parent_mem_cgroup(m))
		at = !amt_memcg_has_room(page_counter_read(&m->memory),
					 READ_ONCE(m->memory.max),
					 2 * MEMCG_CHARGE_BATCH) &&
		     mem_cgroup_is_descendant(charging, m);
	rcu_read_unlock();
	return at;
}

/*
 * memcg reclaim: is anything deferred in sc->memcg on sc->nid? The scan
 * frees nothing itself, so no count means more than "call the scan": 2,
 * the least for which do_shrink_slab() does (freeable / 2 >= batch = 1).
 * Empty only if nothing is listed: that clears the memcg's bit.
 */
static unsigned long amt_memcg_count(struct shrinker *s,
				     struct shrink_control *sc)
{
	if (!sc->memcg || !amt_pending_memcg_count(sc))
		return SHRINK_EMPTY;
	return 2;
}

/*
 * memcg reclaim of a memcg that holds deferred mms. A charge at memory.max
 * waits here, one slice at most, for their teardowns to give it room:
 * without the module, that memory would have been freed before the
 * process's parent learnt of its death, so the replacement would never
 * have met it. Waiting beats a memcg OOM kill (there is no OOM notifier
 * for memcgs), and slows the reclaim of the memcg's live pages, which
 * shrink_node_memcgs() scans before the shrinkers.
 */
static unsigned long amt_memcg_scan(struct shrinker *s,
				    struct shrink_control *sc)
{
	bool waited = false;
	unsigned long end;
	u64 t0;

	/*
	 * Who never waits: anyone with the guard off; kswapd; the teardowns
	 * themselves (a reaper, or a dying task tearing its own mm down); a
	 * task being killed; a charge that may hold filesystem locks
	 * (GFP_NOFS: a journal handle, say) that the teardown's final
	 * fput()s could need; and a task not charging a memcg at its limit
	 * on this memcg's path (global reclaim passing by).
	 */
	if (!READ_ONCE(amt_oom_guard) || current_is_kswapd() ||
	    amt_is_reaper(current) || (current->flags & PF_EXITING) ||
	    fatal_signal_pending(current) || !(sc->gfp_mask & __GFP_FS) ||
	    !amt_memcg_charging_at_limit(sc->memcg))
		return SHRINK_STOP;
	/* nothing coming: all ended, or stalled (amt_lru_sum()) */
	if (!amt_pending_memcg_pages(sc))
		return SHRINK_STOP;
	/*
	 * Its teardowns start or go on at normal priority now: memcg reclaim
	 * calls no other shrinker of ours. A stash whose task is stuck before
	 * exit_notify() goes to the reapers.
	 */
	amt_reaper_handoff(AMT_HANDOFF_STUCK);
	amt_reaper_boost();
	t0 = ktime_get_ns();
	end = jiffies + msecs_to_jiffies(AMT_MEMCG_SLICE_MS);
	while (amt_pending_memcg_pages(sc) &&
	       amt_memcg_charging_at_limit(sc->memcg) &&
	       !fatal_signal_pending(current) && time_before(jiffies, end)) {
		amt_wait_ended(msecs_to_jiffies(AMT_MEMCG_POLL_MS));
		waited = true;
	}
	if (waited) {
		amt_stat_inc(AMT_STAT_MEMCG_WAITS);
		amt_stat_add(AMT_STAT_MEMCG_WAIT_NS, ktime_get_ns() - t0);
	}
	/* The charge finds the room itself: nothing freed here to report. */
	return SHRINK_STOP;
}

/* Without it, the memcg headroom gate keeps exits out of full memcgs. */
static void amt_memcg_lru_init(struct shrinker *s)
{
	int ret = amt_pending_lru_init(s);

	if (ret)
		pr_warn("memcg reclaim cannot see deferred memory (error %d): exits stay inline where their memcg lacks room\n",
			ret);
}

#ifdef AMT_HAVE_SHRINKER_ALLOC
static struct shrinker *amt_shrinker, *amt_memcg_shrinker;

static int amt_shrinker_register(void)
{
	amt_shrinker = shrinker_alloc(0, KBUILD_MODNAME);
	if (!amt_shrinker)
		return -ENOMEM;
	amt_shrinker->count_objects = amt_shrink_count;
	amt_shrinker->scan_objects = amt_shrink_scan;
	shrinker_register(amt_shrinker);

	amt_memcg_shrinker = shrinker_alloc(SHRINKER_MEMCG_AWARE |
					    SHRINKER_NUMA_AWARE,
					    "%s-memcg", KBUILD_MODNAME);
	if (!amt_memcg_shrinker) {
		shrinker_free(amt_shrinker);
		return -ENOMEM;
	}
	amt_memcg_shrinker->count_objects = amt_memcg_count;
	amt_memcg_shrinker->scan_objects = amt_memcg_scan;
	/* called at every priority: a charge at its limit waits at once */
	amt_memcg_shrinker->seeks = 0;
	amt_memcg_shrinker->batch = 1;
	/* (shrinker_alloc() clears the flag where memcgs are off) */
	if (amt_memcg_shrinker->flags & SHRINKER_MEMCG_AWARE)
		amt_memcg_lru_init(amt_memcg_shrinker);
	shrinker_register(amt_memcg_shrinker);
	return 0;
}

static void amt_shrinker_unregister(void)
{
	shrinker_free(amt_memcg_shrinker);
	shrinker_free(amt_shrinker);
}
#else /* before v6.7 */
static struct shrinker amt_shrinker_s = {
	.count_objects = amt_shrink_count,
	.scan_objects = amt_shrink_scan,
	.seeks = DEFAULT_SEEKS,
};

static struct shrinker amt_memcg_shrinker_s = {
	.count_objects = amt_memcg_count,
	.scan_objects = amt_memcg_scan,
	/* called at every priority: a charge at its limit waits at once */
	.seeks = 0,
	.batch = 1,
	.flags = SHRINKER_MEMCG_AWARE | SHRINKER_NUMA_AWARE,
};

static int amt_shrinker_register(void)
{
	int ret = register_shrinker(&amt_shrinker_s, KBUILD_MODNAME);

	if (ret)
		return ret;
	ret = register_shrinker(&amt_memcg_shrinker_s, "%s-memcg",
				KBUILD_MODNAME);
	if (ret) {
		unregister_shrinker(&amt_shrinker_s);
		return ret;
	}
	/*
	 * Registered, it has its id, which the list_lru copies; until the
	 * list_lru is ready its callbacks find nothing deferred.
	 * (register_shrinker() clears the flag where memcgs are off.)
	 */
	if (amt_memcg_shrinker_s.flags & SHRINKER_MEMCG_AWARE)
		amt_memcg_lru_init(&amt_memcg_shrinker_s);
	return 0;
}

static void amt_shrinker_unregister(void)
{
	unregister_shrinker(&amt_memcg_shrinker_s);
	unregister_shrinker(&amt_shrinker_s);
}
#endif

static struct tracepoint *amt_tp_mark_victim;

static void amt_find_tp(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "mark_victim"))
		amt_tp_mark_victim = tp;
}

/**
 * amt_oom_init() - attach to oom:mark_victim, the OOM notifier chain and
 * reclaim
 *
 * oom:mark_victim is not exported for modules' trace_* helpers, so it is
 * found by name and attached with tracepoint_probe_register().
 *
 * Return: 0 or a negative errno.
 */
int amt_oom_init(void)
{
	int ret;

	for_each_kernel_tracepoint(amt_find_tp, NULL);
	if (!amt_tp_mark_victim) {
		pr_err("no oom:mark_victim tracepoint: cannot keep OOM victims off the queue\n");
		return -ENOENT;
	}
	/* a build against another prototype fails here, never oopses */
	check_trace_callback_type_mark_victim(amt_mark_victim_probe);
	ret = tracepoint_probe_register(amt_tp_mark_victim,
					amt_mark_victim_probe, NULL);
	if (ret)
		goto err_tp;
	ret = register_oom_notifier(&amt_oom_nb);
	if (ret)
		goto err_notifier;
	ret = amt_shrinker_register();
	if (ret)
		goto err_shrinker;
	return 0;

err_shrinker:
	unregister_oom_notifier(&amt_oom_nb);
err_notifier:
	tracepoint_probe_unregister(amt_tp_mark_victim, amt_mark_victim_probe,
				    NULL);
	tracepoint_synchronize_unregister();
err_tp:
	pr_err("cannot attach to the OOM killer (error %d)\n", ret);
	return ret;
}

/**
 * amt_oom_exit() - detach; no callback runs once this returns
 */
void amt_oom_exit(void)
{
	amt_shrinker_unregister();
	unregister_oom_notifier(&amt_oom_nb);
	tracepoint_probe_unregister(amt_tp_mark_victim, amt_mark_victim_probe,
				    NULL);
	tracepoint_synchronize_unregister();
}
