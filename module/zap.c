// SPDX-License-Identifier: GPL-2.0
/*
 * Parallel zap: before the final mmput() of a large dead mm, its private
 * memory is freed in chunks by the task that tears it down and by helpers
 * on CPUs that have nothing else to run, so that exit_mmap() then finds
 * little left (docs/design.md, "Parallel teardown").
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#include <linux/cpumask.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/mmu_notifier.h>
#include <linux/sched/isolation.h>
#include <linux/sched/stat.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include "amt_trace.h"
#include "params.h"
#include "stats.h"
#include "zap.h"

/*
 * Address space per chunk: a few milliseconds of zapping, the longest a
 * helper keeps a CPU on which other work became runnable, and the longest
 * the teardown waits for a helper once nothing is left to claim.
 */
#define AMT_ZAP_CHUNK	SZ_8M
#define AMT_ZAP_HELPERS	8

struct amt_zap;

struct amt_zap_helper {
	struct work_struct work;
	struct amt_zap *zap;
};

struct amt_zap {
	struct mm_struct *mm;
	spinlock_t lock;
	unsigned long next;	/* under lock: the first address not claimed */
	atomic_t chunks;
	atomic_t helper_chunks;
	atomic_t helpers_idle;	/* helpers that found a CPU with nothing else */
	unsigned int nr_helpers;
	struct amt_zap_helper helpers[];
};

static struct workqueue_struct *amt_zap_wq;

/*
 * The OOM reaper's rule (__oom_reap_task_mm()): not hugetlb nor PFN maps,
 * and private; with an anon_vma, or there is nothing of its own to free.
 */
static bool amt_zap_vma_ok(struct vm_area_struct *vma)
{
	return !(vma->vm_flags & (VM_HUGETLB | VM_PFNMAP | VM_SHARED)) &&
	       vma->anon_vma;
}

/*
 * Claim and zap the next chunk, under mmap_read_lock like MADV_DONTNEED.
 * The VMAs do not change meanwhile: no task runs on the mm, and a late
 * mmget_not_zero() user that would change them needs the write lock.
 */
static bool amt_zap_one(struct amt_zap *z)
{
	struct vm_area_struct *vma;
	unsigned long start = 0, end = 0;

	mmap_read_lock(z->mm);
	spin_lock(&z->lock);
	for (vma = find_vma(z->mm, z->next); vma && !amt_zap_vma_ok(vma);
	     vma = find_vma(z->mm, vma->vm_end))
		;
	if (vma) {
		start = max(z->next, vma->vm_start);
		end = min(vma->vm_end, start + AMT_ZAP_CHUNK);
	}
	z->next = vma ? end : ULONG_MAX;
	spin_unlock(&z->lock);
	if (vma)
		amt_zap_range(vma, start, end - start);
	mmap_read_unlock(z->mm);
	if (vma)
		atomic_inc(&z->chunks);
	return vma;
}

/*
 * A helper, bound to its CPU: chunks only while it is alone there, so it
 * never takes the CPU from runnable work for more than one chunk.
 */
static void amt_zap_help(struct work_struct *w)
{
	struct amt_zap *z = container_of(w, struct amt_zap_helper, work)->zap;

	if (!single_task_running())
		return;
	atomic_inc(&z->helpers_idle);
	while (amt_zap_one(z)) {
		atomic_inc(&z->helper_chunks);
		if (!single_task_running())
			break;
	}
}

/* Ask up to AMT_ZAP_HELPERS other housekeeping CPUs for help. */
static void amt_zap_call_helpers(struct amt_zap *z, unsigned int max)
{
	unsigned int cpu, self = raw_smp_processor_id();
	struct amt_zap_helper *h;

	for_each_online_cpu(cpu) {
		if (z->nr_helpers == max)
			break;
		if (cpu == self ||
		    !housekeeping_test_cpu(cpu, HK_TYPE_KTHREAD) ||
		    !housekeeping_test_cpu(cpu, HK_TYPE_DOMAIN))
			continue;
		h = &z->helpers[z->nr_helpers++];
		h->zap = z;
		INIT_WORK(&h->work, amt_zap_help);
		queue_work_on(cpu, amt_zap_wq, &h->work);
	}
}

/**
 * amt_zap() - free a dead mm's private memory on idle CPUs too
 * @mm: an mm no task runs on any more; the caller holds an mm_users
 *	reference and calls mmput() after this
 * @pid: its task, for the tracepoint
 * @pinned: another holder keeps the mm (the caller's reference is not
 *	the last): zap even without helpers
 *
 * MMF_UNSTABLE first, as the OOM reaper does: a late reader that faults
 * on a zapped page gets an error, not a zero page. The caller zaps its
 * own share; a helper that has not started when nothing is left to claim
 * is cancelled, one that has finishes its chunk.
 *
 * Context: process context, no locks held; sleeps.
 *
 * Return: true if it zapped: with helpers (parallel=1, AMT_ZAP_MIN_PAGES
 * or more), or alone for a pinned mm.
 */
bool amt_zap(struct mm_struct *mm, pid_t pid, bool pinned)
{
	unsigned long before = amt_mm_freeable(mm), after;
	unsigned int i, max = 0;
	struct amt_zap *z;
	u64 t0;

	if (READ_ONCE(amt_parallel) && before >= AMT_ZAP_MIN_PAGES)
		max = min_t(unsigned int, num_online_cpus() - 1,
			    AMT_ZAP_HELPERS);
	/* a notifier's invalidate may wait for a device: exit_mmap() does it */
	if ((!max && !pinned) || mm_has_notifiers(mm))
		return false;
	z = kzalloc(struct_size(z, helpers, max), GFP_KERNEL | __GFP_NOWARN);
	if (!z)
		return false;
	t0 = ktime_get_ns();
	z->mm = mm;
	spin_lock_init(&z->lock);
	amt_mm_set_unstable(mm);
	amt_zap_call_helpers(z, max);
	while (amt_zap_one(z))
		;
	for (i = 0; i < z->nr_helpers; i++)
		cancel_work_sync(&z->helpers[i].work);
	after = amt_mm_freeable(mm);
	if (max)
		amt_stat_inc(AMT_STAT_zap_parallel);
	amt_stat_add(AMT_STAT_zap_chunks, atomic_read(&z->chunks));
	amt_stat_add(AMT_STAT_zap_helper_chunks, atomic_read(&z->helper_chunks));
	amt_stat_add(AMT_STAT_zap_helpers_busy,
		     z->nr_helpers - atomic_read(&z->helpers_idle));
	amt_stat_add(AMT_STAT_zap_pages, before > after ? before - after : 0);
	trace_mm_reaper_zap(pid, before > after ? before - after : 0,
			    atomic_read(&z->chunks),
			    atomic_read(&z->helper_chunks), z->nr_helpers,
			    ktime_get_ns() - t0, pinned);
	kfree(z);
	return true;
}

/**
 * amt_zap_init() - the helpers' workqueue (per-CPU, not freezable: a
 * helper runs only inside a teardown, which waits for it)
 *
 * Return: 0 or -ENOMEM.
 */
int amt_zap_init(void)
{
	amt_zap_wq = alloc_workqueue("amt_zap", 0, 0);
	return amt_zap_wq ? 0 : -ENOMEM;
}

/**
 * amt_zap_exit() - once no teardown runs any more
 */
void amt_zap_exit(void)
{
	destroy_workqueue(amt_zap_wq);
}
