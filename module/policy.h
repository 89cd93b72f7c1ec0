/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Deferral policy: pure functions of plain inputs, shared by the module and
 * the host unit tests (tests/unit), so no kernel header may be included here.
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#ifndef AMT_POLICY_H
#define AMT_POLICY_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdbool.h>
#endif

/* Why an exiting mm was or was not deferred; one statistic per value. */
enum amt_verdict {
	AMT_DEFER = 0,		/* defer its teardown */
	AMT_SYNC_DISABLED,	/* enabled=0: teardown inline, as without us */
	AMT_SYNC_SMALL,		/* RSS below thresh_pages: not worth it */
	AMT_REJECT_OOM,		/* OOM victim or OOM-reaped: free it now */
	AMT_REJECT_PRESSURE,	/* OOM or direct reclaim just ran: free it now */
	AMT_REJECT_LOW_MEMORY,	/* MemAvailable <= min_available_pct of RAM */
	AMT_REJECT_MEMCG,	/* its memcg has no room, and cannot wait */
	AMT_REJECT_AIO,		/* has an AIO context: exit_aio() may block */
	AMT_REJECT_BUDGET,	/* would push pending pages over the cap */
	AMT_REJECT_NOMEM,	/* no memory for the queue entry */
	AMT_NR_VERDICTS,
};

/* What the exit hook knows about one mm when it holds the last reference. */
struct amt_exit_facts {
	bool enabled;		/* the runtime switch */
	unsigned long rss;	/* resident pages of the mm */
	unsigned long thresh;	/* thresh_pages */
	bool oom;		/* any OOM marking of the task or the mm */
	bool pressure;		/* global OOM or direct reclaim very recently */
	bool low_memory;	/* MemAvailable <= min_available_pct of RAM */
	bool memcg_full;	/* a memcg on the path lacks room for rss */
	bool memcg_waits;	/* its reclaim waits for deferred teardowns */
	bool memcg_shmem_full;	/* ... lacks room for its shmem files */
	bool aio;		/* mm->ioctx_table != NULL */
};

enum amt_verdict amt_decide(const struct amt_exit_facts *f);

/*
 * Add-then-check budget: @new_total is the pending-page total after this
 * mm's charge was added. Admit only if it stays within @cap; concurrent
 * chargers can then over-reject but never over-admit.
 */
static inline bool amt_budget_ok(unsigned long new_total, unsigned long cap)
{
	return new_total <= cap;
}

/*
 * memcg headroom: a deferred mm stays charged until its teardown ends, so
 * @pages more must fit under @max next to @usage.
 */
static inline unsigned long amt_memcg_room_of(unsigned long usage,
					      unsigned long max)
{
	return usage <= max ? max - usage : 0;
}

static inline bool amt_memcg_has_room(unsigned long usage, unsigned long max,
				      unsigned long pages)
{
	return amt_memcg_room_of(usage, max) >= pages;
}

/*
 * Low memory: MemAvailable (@avail pages) at or under @pct % of @totalram,
 * plus an eighth for the counters' drift between a userspace OOM killer's
 * reading and its victim's exit (docs/design.md, "Low memory"). No
 * overflow: @pct <= 50 and page counts are far below 2^53.
 */
static inline bool amt_memory_low(unsigned long avail, unsigned long totalram,
				  unsigned int pct)
{
	return pct && avail * 800 <= (unsigned long)pct * 9 * totalram;
}

/* Parameter validation; return 0 or a negative errno. */
int amt_check_thresh(unsigned long val, unsigned long totalram);
int amt_check_max_pending(unsigned long val, unsigned long totalram);
unsigned long amt_default_max_pending(unsigned long totalram);
unsigned long amt_default_thresh(unsigned long page_size);
int amt_check_min_avail(unsigned long val);
int amt_check_reapers(unsigned long val, unsigned long max);
unsigned int amt_default_reapers(unsigned int online_cpus,
				 unsigned int max);

unsigned long amt_nice_weight(int nice);
int amt_catchup_nice(unsigned long weight, unsigned int threads);


#endif /* AMT_POLICY_H */
