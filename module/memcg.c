// SPDX-License-Identifier: GPL-2.0
/*
 * Deferred memory in a memory-limited cgroup: a deferred mm stays charged
 * until its teardown ends, and memcg OOM has no notifier. A memcg-aware
 * shrinker makes a charge at memory.max wait, in short slices, for the
 * teardowns of its memcg (listed on pending.c's list_lru); the exit's
 * decision reads the room left on the memcg path.
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

/*
 * One reclaim call waits AMT_MEMCG_SLICE_MS at most, looking every
 * AMT_MEMCG_POLL_MS. The bound is per teardown: none is waited for once it
 * has freed nothing for AMT_MEMCG_STALL, or not begun AMT_MEMCG_START_MAX
 * after its deferral (docs/design.md, "memcg").
 */
#define AMT_MEMCG_SLICE_MS	20
#define AMT_MEMCG_POLL_MS	2
#define AMT_MEMCG_STALL		(2 * HZ)
#define AMT_MEMCG_START_MAX	(2 * HZ)

/*
 * Pages left under memory.max in the tightest memcg from @tsk's (current,
 * exiting) to the root; ULONG_MAX if none is limited or the guard is off.
 * @tsk's memcg: exit_mm() has cleared mm->owner (mm_update_next_owner()),
 * and the task leaves its cgroup only later.
 */
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

/*
 * At most the shmem pages whose last reference @mm's mappings may hold:
 * the resident pages of the unlinked shmem files it maps (memfd, shared
 * anonymous, SysV, a deleted tmpfs file), freed at their last fput(). A
 * file is counted once if its mappings follow each other or it is among
 * the last AMT_SHMEM_SEEN seen, else again: too much only keeps an exit
 * inline. The caller holds the last mm_users reference, so nothing maps
 * or unmaps; the lock is only tried (khugepaged, a /proc reader): without
 * it, ULONG_MAX.
 */
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

/*
 * Would the exiting task's memcg path (@room: amt_memcg_room()) lack room
 * for what the memcg wait cannot see (shmem, amt_decide())?
 */
static bool amt_memcg_shmem_full(struct mm_struct *mm, unsigned long room,
				 bool waits)
{
	unsigned long pages, anon;

	if (room == ULONG_MAX)
		return false;
	pages = amt_mm_shmem_bound(mm);
	if (!pages)
		return false;
	/*
	 * Without the wait, room for the anonymous pages too (not the RSS: it
	 * counts mapped shmem again, and file pages no teardown frees).
	 */
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

/*
 * Under the list's lock, so one walker at a time; the mm is alive while
 * listed (amt_pending_memcg_walk()). seen_* are written only here and
 * before the entry is listed.
 */
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

/* Freeable pages still coming back in sc->memcg on sc->nid. */
static unsigned long amt_memcg_coming(struct shrink_control *sc)
{
	unsigned long pages = 0;

	amt_pending_memcg_walk(sc, amt_lru_sum, &pages);
	return pages;
}

/*
 * Is some memcg from @scanned to the root under two charge batches from
 * memory.max, with the memcg current charges (set_active_memcg(), or its
 * own) below it? Global reclaim passes every memcg: others must not wait.
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

/*
 * A charge at memory.max waits here, one slice at most, for the memcg's
 * deferred teardowns to give it room, rather than a memcg OOM kill.
 */
static unsigned long amt_memcg_scan(struct shrinker *s,
				    struct shrink_control *sc)
{
	bool waited = false;
	unsigned long end;
	u64 t0;

	/*
	 * Never waits: kswapd; a reaper or an exiting task (the teardowns
	 * themselves); a killed task; a GFP_NOFS charge, which may hold fs
	 * locks the teardown's final fput()s need; a task not charging at a
	 * limit on this path.
	 */
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

/* Without it, the memcg headroom gate keeps exits out of full memcgs. */
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
	 * Registered, it has the id the list_lru copies; until the list_lru
	 * is ready its callbacks find nothing. (register_shrinker() clears
	 * the flag where memcgs are off.)
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
