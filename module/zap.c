// SPDX-License-Identifier: GPL-2.0
/*
 * Parallel zap: helpers on idle CPUs free a large dead mm's private memory
 * before its final mmput() (docs/design.md, "Parallel teardown").
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/mmu_notifier.h>
#include <linux/sched/isolation.h>
#include <linux/sched/stat.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include "amt_trace.h"
#include "params.h"
#include "stats.h"
#include "zap.h"

/* Chunks end on multiples, no huge page split; a helper's most on a busy CPU */
#define AMT_ZAP_CHUNK	SZ_8M
#define AMT_ZAP_HELPERS	8

struct amt_zap;

struct amt_zap_helper {
	struct work_struct work;
	struct amt_zap *zap;
	unsigned int chunks;
	u64 ns;			/* in its chunks */
};

struct amt_zap {
	struct mm_struct *mm;
	unsigned long next;	/* the first address not claimed (cmpxchg) */
	atomic_t chunks;
	unsigned int nr_helpers;
	struct amt_zap_helper helpers[];
};

static struct workqueue_struct *amt_zap_wq;

/* Private anonymous only (docs/design.md, "Parallel teardown") */
static bool amt_zap_vma_ok(struct vm_area_struct *vma)
{
	return vma_is_anonymous(vma) && vma->anon_vma &&
	       !(vma->vm_flags & (VM_HUGETLB | VM_PFNMAP | VM_SHARED));
}

/*
 * Under mmap_read_lock, as MADV_DONTNEED: no task runs on the mm, and a late
 * user needs the write lock to change VMAs. A lost claim retries at the cursor.
 */
static bool amt_zap_one(struct amt_zap *z)
{
	unsigned long from, start, end;
	struct vm_area_struct *vma;

	mmap_read_lock(z->mm);
	for (;;) {
		from = READ_ONCE(z->next);
		if (from == ULONG_MAX) {
			vma = NULL;
			break;
		}
		for (vma = find_vma(z->mm, from); vma && !amt_zap_vma_ok(vma);
		     vma = find_vma(z->mm, vma->vm_end))
			;
		start = vma ? max(from, vma->vm_start) : 0;
		end = vma ? min(vma->vm_end, ALIGN(start + 1, AMT_ZAP_CHUNK)) :
			    ULONG_MAX;
		if (cmpxchg(&z->next, from, end) == from)
			break;
	}
	if (vma)
		amt_zap_range(vma, start, end - start);
	mmap_read_unlock(z->mm);
	if (vma)
		atomic_inc(&z->chunks);
	return vma;
}

/* Bound to its CPU: zaps only while alone there, else naps (TASK_IDLE) */
#define AMT_ZAP_NAP_US		200
#define AMT_ZAP_NAP_MAX_US	2000
static void amt_zap_help(struct work_struct *w)
{
	struct amt_zap_helper *h = container_of(w, struct amt_zap_helper, work);
	unsigned int nap = AMT_ZAP_NAP_US;
	bool zapped;
	u64 t0;

	while (READ_ONCE(h->zap->next) != ULONG_MAX) {
		if (!single_task_running()) {
			usleep_range_state(nap, nap + nap / 2, TASK_IDLE);
			nap = min(2 * nap, AMT_ZAP_NAP_MAX_US);
			continue;
		}
		/* wall time: begun alone on its CPU, a chunk is its CPU time */
		t0 = ktime_get_ns();
		zapped = amt_zap_one(h->zap);
		h->ns += ktime_get_ns() - t0;
		if (!zapped)
			break;
		h->chunks++;
		nap = AMT_ZAP_NAP_US;
		cond_resched();
	}
}

/*
 * Another online housekeeping CPU (not nohz_full or isolated) on which the
 * tearing-down task may run: a dying task's cpuset and affinity in self
 * mode, the reapers' in reaper mode.
 */
static bool amt_zap_cpu_ok(unsigned int cpu, unsigned int self)
{
	return cpu != self && cpumask_test_cpu(cpu, current->cpus_ptr) &&
	       housekeeping_test_cpu(cpu, HK_TYPE_KTHREAD) &&
	       housekeeping_test_cpu(cpu, HK_TYPE_DOMAIN) &&
	       housekeeping_test_cpu(cpu, HK_TYPE_WQ);
}

/* The helpers to ask for, at most @max (a migration since is harmless) */
static unsigned int amt_zap_nr_cpus(unsigned int max)
{
	unsigned int cpu, self = raw_smp_processor_id(), n = 0;

	for_each_online_cpu(cpu)
		if (n < max && amt_zap_cpu_ok(cpu, self))
			n++;
	return n;
}

static void amt_zap_call_helpers(struct amt_zap *z, unsigned int max)
{
	unsigned int cpu, self = raw_smp_processor_id();
	struct amt_zap_helper *h;

	for_each_online_cpu(cpu) {
		if (z->nr_helpers == max)
			break;
		if (!amt_zap_cpu_ok(cpu, self))
			continue;
		h = &z->helpers[z->nr_helpers++];
		h->zap = z;
		INIT_WORK(&h->work, amt_zap_help);
		queue_work_on(cpu, amt_zap_wq, &h->work);
	}
}

/**
 * amt_zap() - free a dead mm's private memory on idle CPUs too
 * @mm: no task runs on it; the caller holds an mm_users reference to mmput()
 * @pid: its task, for the tracepoint
 * @pinned: non-task holders keep the mm: zap even without helpers
 * @helpers: it may ask for helpers (no other deferred teardown in flight:
 *	zapping one mm from several CPUs costs more CPU in all than one CPU,
 *	which pays only where the CPUs would otherwise idle)
 *
 * A late reader of a zapped page faults (MMF_UNSTABLE); no helper outlives it.
 *
 * Context: process context, no locks held; sleeps.
 * Return: true if it zapped: with helpers, or alone for a pinned mm.
 */
bool amt_zap(struct mm_struct *mm, pid_t pid, bool pinned, bool helpers)
{
	unsigned long before = amt_mm_freeable(mm), after, freed;
	unsigned int i, helped = 0, max = 0;
	u64 helper_ns = 0;
	struct amt_zap alone = { .mm = mm }, *z = &alone;
	u64 t0;

	if (!amt_can_zap() || mm_has_notifiers(mm))
		return false;
	if (helpers && READ_ONCE(amt_parallel) && before >= AMT_ZAP_MIN_PAGES)
		max = amt_zap_nr_cpus(AMT_ZAP_HELPERS);
	/* no reclaim on the way to freeing memory: alone then */
	if (max)
		z = kzalloc(struct_size(z, helpers, max),
			    GFP_NOWAIT | __GFP_NOWARN);
	if (!z) {
		z = &alone;
		max = 0;
	}
	if (!max && !pinned)
		return false;
	t0 = ktime_get_ns();
	z->mm = mm;
	amt_mm_set_unstable(mm);
	amt_zap_call_helpers(z, max);
	/* (whether a kernel's range zap reschedules inside is its business) */
	while (amt_zap_one(z))
		cond_resched();
	for (i = 0; i < z->nr_helpers; i++) {
		cancel_work_sync(&z->helpers[i].work);
		helped += z->helpers[i].chunks;
		helper_ns += z->helpers[i].ns;
		if (!z->helpers[i].chunks)
			amt_stat_inc(AMT_STAT_zap_helpers_busy);
	}
	after = amt_mm_freeable(mm);
	freed = before > after ? before - after : 0;
	if (z->nr_helpers)
		amt_stat_inc(AMT_STAT_zap_parallel);
	amt_stat_add(AMT_STAT_zap_chunks, atomic_read(&z->chunks));
	amt_stat_add(AMT_STAT_zap_helper_chunks, helped);
	amt_stat_add(AMT_STAT_zap_helper_ns, helper_ns);
	amt_stat_add(AMT_STAT_zap_pages, freed);
	trace_mm_reaper_zap(pid, freed,
			    atomic_read(&z->chunks), helped, z->nr_helpers,
			    ktime_get_ns() - t0, helper_ns, pinned);
	if (z != &alone)
		kfree(z);
	return true;
}

/**
 * amt_zap_init() - the helpers' workqueue (not freezable: teardowns wait)
 *
 * Return: 0 or -ENOMEM.
 */
int amt_zap_init(void)
{
	amt_zap_wq = alloc_workqueue("amt_zap", AMT_WQ_PERCPU | WQ_CPU_INTENSIVE,
				     0);
	return amt_zap_wq ? 0 : -ENOMEM;
}

/**
 * amt_zap_exit() - once no teardown runs any more
 */
void amt_zap_exit(void)
{
	destroy_workqueue(amt_zap_wq);
}
