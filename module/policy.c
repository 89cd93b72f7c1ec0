// SPDX-License-Identifier: GPL-2.0
/*
 * Deferral policy and parameter rules: pure functions, no kernel state,
 * unit tested on the host (tests/unit/test_policy.c).
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#ifdef __KERNEL__
#include <linux/errno.h>
#else
#include <errno.h>
#include <stddef.h>
#endif
#include "interface.h"
#include "policy.h"

/**
 * amt_decide() - decide whether an exiting mm may be deferred
 * @f: what the exit hook read about the mm, holding its last reference
 *
 * The order only decides which reason is counted; the budget is the caller's.
 *
 * Return: AMT_DEFER, or the reason for tearing the mm down inline.
 */
enum amt_verdict amt_decide(const struct amt_exit_facts *f)
{
	if (!f->enabled)
		return AMT_SYNC_DISABLED;
	if (f->rss < f->thresh)
		return AMT_SYNC_SMALL;
	if (f->oom)
		return AMT_REJECT_OOM;
	if (f->pressure)
		return AMT_REJECT_PRESSURE;
	if (f->low_memory)
		return AMT_REJECT_LOW_MEMORY;
	/* shmem goes at its last fput(), after any memcg wait (memcg.c) */
	if ((f->memcg_full && !f->memcg_waits) || f->memcg_shmem_full)
		return AMT_REJECT_MEMCG;
	if (f->aio)
		return AMT_REJECT_AIO;
	return AMT_DEFER;
}

/**
 * amt_check_thresh() - validate a thresh_pages value
 * @val: proposed threshold in pages
 * @totalram: pages of RAM
 *
 * Return: 0 if 1 <= @val <= @totalram, else -EINVAL.
 */
int amt_check_thresh(unsigned long val, unsigned long totalram)
{
	return (val >= 1 && val <= totalram) ? 0 : -EINVAL;
}

/**
 * amt_check_max_pending() - validate a max_pending_pages value
 * @val: proposed cap in pages
 * @totalram: pages of RAM
 *
 * Return: 0 if 1 <= @val <= @totalram, else -EINVAL.
 */
int amt_check_max_pending(unsigned long val, unsigned long totalram)
{
	return (val >= 1 && val <= totalram) ? 0 : -EINVAL;
}

/**
 * amt_check_min_avail() - validate a min_available_pct value
 * @val: proposed percentage of RAM
 *
 * Return: 0 if @val <= AMT_PERCENT_MAX (50), else -EINVAL.
 */
int amt_check_min_avail(unsigned long val)
{
	return val <= AMT_PERCENT_MAX ? 0 : -EINVAL;
}

/**
 * amt_default_max_pending() - default max_pending_pages
 * @totalram: pages of RAM
 *
 * Return: RAM/4, the RFC's cap, at least 1.
 */
unsigned long amt_default_max_pending(unsigned long totalram)
{
	return totalram / 4 ? totalram / 4 : 1;
}

/**
 * amt_default_thresh() - default RSS threshold: 64 MiB worth of pages
 * @page_size: bytes per page
 *
 * Return: the threshold in pages.
 */
unsigned long amt_default_thresh(unsigned long page_size)
{
	return (64UL << 20) / page_size;
}

/**
 * amt_check_reapers() - validate a reapers value
 * @val: proposed number of reaper threads
 * @max: the most the module supports
 *
 * Return: 0 if 1 <= @val <= @max, else -EINVAL.
 */
int amt_check_reapers(unsigned long val, unsigned long max)
{
	return (val >= 1 && val <= max) ? 0 : -EINVAL;
}

/**
 * amt_default_reapers() - default number of reaper threads
 * @online_cpus: CPUs online at load
 * @max: the most the module supports
 *
 * Return: one per CPU, at least 2, at most 8 and @max.
 */
unsigned int amt_default_reapers(unsigned int online_cpus, unsigned int max)
{
	unsigned int n = online_cpus < 2 ? 2 : online_cpus;

	if (n > 8)
		n = 8;
	return n < max ? n : max;
}

/* kernel/sched/core.c's sched_prio_to_weight[], nice -20 to 19 */
static const unsigned long amt_prio_weight[40] = {
	88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916,
	9548, 7620, 6100, 4904, 3906, 3121, 2501, 1991, 1586, 1277,
	1024, 820, 655, 526, 423, 335, 272, 215, 172, 137,
	110, 87, 70, 56, 45, 36, 29, 23, 18, 15,
};

/**
 * amt_nice_weight() - the CFS/EEVDF load weight of a nice value
 * @nice: -20 to 19 (clamped)
 *
 * Return: the weight; 1024 at nice 0.
 */
unsigned long amt_nice_weight(int nice)
{
	if (nice < -20)
		nice = -20;
	if (nice > 19)
		nice = 19;
	return amt_prio_weight[nice + 20];
}

/**
 * amt_catchup_nice() - the nice that gives reapers the dead tasks' share
 * @weight: the summed amt_nice_weight() of the dying tasks the reapers serve
 * @threads: the reapers that share them, at least 1
 *
 * Return: the highest nice whose weight reaches @weight / @threads (at
 * least the inline share, at most 25 % more), -20 at most.
 */
int amt_catchup_nice(unsigned long weight, unsigned int threads)
{
	unsigned long each = weight / (threads ? threads : 1);
	int nice;

	for (nice = 19; nice > -20; nice--)
		if (amt_nice_weight(nice) >= each)
			break;
	return nice;
}
