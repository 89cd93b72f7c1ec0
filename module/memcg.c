// SPDX-License-Identifier: GPL-2.0
/*
 * Deferred memory in a limited memcg, which has no OOM notifier: a charge
 * at memory.max waits for the memcg's teardowns in a shrinker, and an exit
 * reads the room left (docs/design.md, "memcg").
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/list_lru.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/shmem_fs.h>
#include <linux/shrinker.h>
#include <linux/swap.h>
#include "hurry.h"
#include "memcg.h"
#include "params.h"
#include "pending.h"
#include "reaper.h"
#include "stash.h"
#include "stats.h"

#define AMT_MEMCG_SLICE_MS	20
#define AMT_MEMCG_POLL_MS	2
#define AMT_MEMCG_STALL		(2 * HZ)
#define AMT_MEMCG_START_MAX	(2 * HZ)

/* Least room under memory.max, @tsk's memcg up (exit_mm() cleared ->owner) */
static unsigned long amt_memcg_room(struct task_struct *tsk)
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

/* Bound on the unlinked shmem @mm maps; its VMAs are fixed, so only trylock */
#define AMT_SHMEM_SEEN 4
static unsigned long amt_mm_shmem_bound(struct mm_struct *mm)
{
	struct address_space *seen[AMT_SHMEM_SEEN] = { NULL };
	struct address_space *m;
	struct vm_area_struct *vma;
	unsigned long pages = 0, n;
	unsigned int i, next = 0;
	VMA_ITERATOR(vmi, mm, 0);

	if (!mmap_read_trylock(mm))
		return ULONG_MAX;
	for_each_vma(vmi, vma) {
		if (!vma->vm_file || !shmem_file(vma->vm_file))
			continue;
		/* a file with a name keeps its pages after the last fput() */
		if (file_inode(vma->vm_file)->i_nlink)
			continue;
		m = vma->vm_file->f_mapping;
		for (i = 0; i < AMT_SHMEM_SEEN && seen[i] != m; i++)
			;
		if (i < AMT_SHMEM_SEEN)
			continue;
		seen[next++ % AMT_SHMEM_SEEN] = m;
		n = READ_ONCE(m->nrpages);
		pages = pages + n < pages ? ULONG_MAX : pages + n;
	}
	mmap_read_unlock(mm);
	return pages;
}

/* Would @room (amt_memcg_room()) lack space for the shmem no wait sees? */
static bool amt_memcg_shmem_full(struct mm_struct *mm, unsigned long room,
				 bool waits)
{
	unsigned long pages, anon;

	if (room == ULONG_MAX)
		return false;
	pages = amt_mm_shmem_bound(mm);
	if (!pages)
		return false;
	/* without the wait, the anonymous pages need room too */
	if (!waits) {
		anon = amt_mm_counter_exact(mm, MM_ANONPAGES);
		pages = pages > ULONG_MAX - anon ? ULONG_MAX : pages + anon;
	}
	return pages > room;
}

/**
 * amt_memcg_facts() - the memcg side of an exit's decision
 * @mm: the mm whose last reference current holds
 * @rss: its resident pages
 * @f: memcg_full, memcg_waits and memcg_shmem_full are set
 */
void amt_memcg_facts(struct mm_struct *mm, unsigned long rss,
		     struct amt_exit_facts *f)
{
	unsigned long room = amt_memcg_room(current);

	f->memcg_full = rss > room;
	f->memcg_waits = amt_pending_memcg_visible();
	f->memcg_shmem_full = amt_memcg_shmem_full(mm, room, f->memcg_waits);
}

/* Under the list's lock: one walker, the mm alive; seen_* ours once listed */
static enum lru_status amt_lru_sum(struct list_head *item,
				   struct list_lru_one *list,
				   AMT_LRU_CB_LOCK void *arg)
{
	struct amt_entry *e = list_entry(item, struct amt_entry, lru);
	unsigned long now = amt_mm_freeable(e->mm);
	unsigned long started = READ_ONCE(e->started), since;
	unsigned long *pages = arg;

	if (!started) {
		/* queued or stashed: boosted by the caller, it starts soon */
		if (time_before(jiffies, e->since + AMT_MEMCG_START_MAX))
			*pages += now;
		return LRU_SKIP;
	}
	/* (a fall counts from the walk that sees it) */
	if (now < e->seen_freeable) {
		e->seen_freeable = now;
		e->seen_at = jiffies;
	}
	since = time_after(e->seen_at, started) ? e->seen_at : started;
	if (time_before(jiffies, since + AMT_MEMCG_STALL))
		*pages += now;
	return LRU_SKIP;
}

static unsigned long amt_memcg_coming(struct shrink_control *sc)
{
	unsigned long pages = 0;

	amt_pending_memcg_walk(sc, amt_lru_sum, &pages);
	return pages;
}

/* Is current charging under a memcg, from @scanned up, near memory.max? */
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
 * 2: the least for which do_shrink_slab() calls the scan (freeable / 2 >=
 * batch); SHRINK_EMPTY, which clears the memcg's bit, only if none listed.
 */
static unsigned long amt_memcg_count(struct shrinker *s,
				     struct shrink_control *sc)
{
	if (!sc->memcg || !amt_pending_memcg_count(sc))
		return SHRINK_EMPTY;
	return 2;
}

static unsigned long amt_memcg_scan(struct shrinker *s,
				    struct shrink_control *sc)
{
	bool waited = false;
	unsigned long end;
	u64 t0;

	/* no teardown waits for itself, nor GFP_NOFS for fs locks it needs */
	if (!READ_ONCE(amt_oom_guard) || current_is_kswapd() ||
	    amt_is_reaper(current) || (current->flags & PF_EXITING) ||
	    fatal_signal_pending(current) || !(sc->gfp_mask & __GFP_FS) ||
	    !amt_memcg_charging_at_limit(sc->memcg))
		return SHRINK_STOP;
	if (!amt_memcg_coming(sc))
		return SHRINK_STOP;
	/* memcg reclaim calls no other shrinker of ours: hurry here */
	amt_stash_handoff(AMT_HANDOFF_STUCK);
	amt_hurry();
	t0 = ktime_get_ns();
	end = jiffies + msecs_to_jiffies(AMT_MEMCG_SLICE_MS);
	while (amt_memcg_coming(sc) &&
	       amt_memcg_charging_at_limit(sc->memcg) &&
	       !fatal_signal_pending(current) && time_before(jiffies, end)) {
		amt_wait_ended(msecs_to_jiffies(AMT_MEMCG_POLL_MS));
		waited = true;
	}
	if (waited) {
		amt_stat_inc(AMT_STAT_memcg_waits);
		amt_stat_add(AMT_STAT_memcg_wait_ns, ktime_get_ns() - t0);
	}
	/* the charge path finds the room itself (mem_cgroup_margin()) */
	return SHRINK_STOP;
}

static void amt_memcg_lru_init(struct shrinker *s)
{
	int ret = amt_pending_lru_init(s);

	if (ret)
		pr_warn("memcg reclaim cannot see deferred memory (error %d): exits stay inline where their memcg lacks room\n",
			ret);
}

#ifdef AMT_HAVE_SHRINKER_ALLOC
static struct shrinker *amt_memcg_shrinker;

/**
 * amt_memcg_init() - register the memcg-aware shrinker
 *
 * Return: 0 or a negative errno.
 */
int amt_memcg_init(void)
{
	amt_memcg_shrinker = shrinker_alloc(SHRINKER_MEMCG_AWARE |
					    SHRINKER_NUMA_AWARE,
					    "%s-memcg", KBUILD_MODNAME);
	if (!amt_memcg_shrinker)
		return -ENOMEM;
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

/**
 * amt_memcg_exit() - unregister; no callback runs once this returns
 */
void amt_memcg_exit(void)
{
	shrinker_free(amt_memcg_shrinker);
}
#else /* before v6.7 */
static struct shrinker amt_memcg_shrinker_s = {
	.count_objects = amt_memcg_count,
	.scan_objects = amt_memcg_scan,
	.seeks = 0,
	.batch = 1,
	.flags = SHRINKER_MEMCG_AWARE | SHRINKER_NUMA_AWARE,
};

int amt_memcg_init(void)
{
	int ret = register_shrinker(&amt_memcg_shrinker_s, "%s-memcg",
				    KBUILD_MODNAME);

	/*
	 * The list_lru takes the registered shrinker's id; the callbacks find
	 * nothing before it is ready. (The flag is off where memcgs are off.)
	 */
	if (!ret && (amt_memcg_shrinker_s.flags & SHRINKER_MEMCG_AWARE))
		amt_memcg_lru_init(&amt_memcg_shrinker_s);
	return ret;
}

void amt_memcg_exit(void)
{
	unregister_shrinker(&amt_memcg_shrinker_s);
}
#endif
