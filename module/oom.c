// SPDX-License-Identifier: GPL-2.0
/*
 * OOM and reclaim: OOM victims and their CLONE_VM sharers stay inline; the
 * OOM notifier waits for deferred memory, the shrinker hurries it.
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#include <linux/jiffies.h>
#include <linux/ktime.h>
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
#include "hurry.h"
#include "oom.h"
#include "params.h"
#include "pending.h"
#include "reaper.h"
#include "stash.h"
#include "stats.h"

/* The OOM notifier's longest wait, under oom_lock: a needed kill's delay */
#define AMT_OOM_WAIT_MS 1000
/* After an OOM or a direct reclaim scan, exits stay inline this long. */
#define AMT_PRESSURE_MS 1000
/*
 * OOM-targeted mms (oom:mark_victim, under the victim's task_lock). Each
 * final drop in exit_mm() takes its mm out, lest a later mm there stay inline.
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
	amt_stat_inc(AMT_STAT_oom_victims_marked);
}

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
	 * Pairs with the victim's fully ordered decrement of mm_users, seen by
	 * the caller's failed atomic_add_unless(): the ring insert came before
	 * it (docs/design.md, "OOM victims are never queued").
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
		amt_stat_inc(AMT_STAT_oom_sharer_caught);
	return ring || marked || amt_mm_flag(mm, MMF_OOM_SKIP);
}

static int amt_oom_notify(struct notifier_block *nb, unsigned long unused,
			  void *arg)
{
	unsigned long *freed = arg, got, before = amt_pending_pages();
	u64 t0;

	if (!READ_ONCE(amt_oom_guard))
		return NOTIFY_OK;
	amt_note_pressure();
	/* a teardown's allocation must not wait for itself: it only hurries */
	if (!amt_pending_mms())
		return NOTIFY_OK;
	if (amt_is_reaper(current) || current->exit_state) {
		amt_hurry();
		return NOTIFY_OK;
	}
	t0 = ktime_get_ns();
	got = amt_hurry_progress(AMT_OOM_WAIT_MS);
	amt_stat_inc(AMT_STAT_oom_drains);
	amt_stat_add(AMT_STAT_oom_freed_pages, got);
	trace_mm_reaper_oom_drain(before, got, ktime_get_ns() - t0);
	/* Pages back: out_of_memory() retries the allocation, kills no one. */
	*freed += got;
	return NOTIFY_OK;
}

static struct notifier_block amt_oom_nb = {
	.notifier_call = amt_oom_notify,
};

static unsigned long amt_shrink_count(struct shrinker *s,
				      struct shrink_control *sc)
{
	long pages = amt_pending_pages();

	return pages > 0 ? pages : SHRINK_EMPTY;
}

/* No teardown in the reclaiming task: a long __mmput() is its own stall. */
static unsigned long amt_shrink_scan(struct shrinker *s,
				     struct shrink_control *sc)
{
	u64 t0 = ktime_get_ns();

	amt_stat_inc(AMT_STAT_shrinker_scans);
	if (!READ_ONCE(amt_oom_guard))
		return SHRINK_STOP;
	if (!current_is_kswapd())
		amt_note_pressure();
	amt_stash_handoff(AMT_HANDOFF_STUCK);
	amt_hurry();
	amt_stat_add(AMT_STAT_shrinker_scan_ns, ktime_get_ns() - t0);
	return SHRINK_STOP;
}

#ifdef AMT_HAVE_SHRINKER_ALLOC
static struct shrinker *amt_shrinker;

static int amt_shrinker_register(void)
{
	amt_shrinker = shrinker_alloc(0, KBUILD_MODNAME);
	if (!amt_shrinker)
		return -ENOMEM;
	amt_shrinker->count_objects = amt_shrink_count;
	amt_shrinker->scan_objects = amt_shrink_scan;
	shrinker_register(amt_shrinker);
	return 0;
}

static void amt_shrinker_unregister(void)
{
	shrinker_free(amt_shrinker);
}
#else /* before v6.7 */
static struct shrinker amt_shrinker_s = {
	.count_objects = amt_shrink_count,
	.scan_objects = amt_shrink_scan,
	.seeks = DEFAULT_SEEKS,
};

static int amt_shrinker_register(void)
{
	return register_shrinker(&amt_shrinker_s, KBUILD_MODNAME);
}

static void amt_shrinker_unregister(void)
{
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
 * amt_oom_init() - attach to oom:mark_victim, the OOM notifiers and reclaim
 *
 * Return: 0 or a negative errno.
 */
int amt_oom_init(void)
{
	int ret;

	/* not exported to modules: found by name */
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
