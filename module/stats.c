// SPDX-License-Identifier: GPL-2.0
/*
 * Statistics: per-CPU event counters and the reapers' teardown times.
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#include <linux/atomic.h>
#include <linux/percpu.h>
#include "stats.h"

struct amt_pcpu_stats {
	unsigned long v[AMT_NR_STATS];
};

static DEFINE_PER_CPU(struct amt_pcpu_stats, amt_pcpu_stats);
/* Written by the reaper threads, possibly at once. */
static atomic64_t amt_teardown_ns_total = ATOMIC64_INIT(0);
static atomic64_t amt_teardown_ns_max = ATOMIC64_INIT(0);

/**
 * amt_stat_inc() - count one event
 * @stat: an enum amt_verdict or enum amt_stat value
 */
void amt_stat_inc(unsigned int stat)
{
	this_cpu_inc(amt_pcpu_stats.v[stat]);
}

/**
 * amt_stat_add() - count @n units of one statistic
 * @stat: an enum amt_stat value
 * @n: how many
 */
void amt_stat_add(unsigned int stat, unsigned long n)
{
	this_cpu_add(amt_pcpu_stats.v[stat], n);
}

/**
 * amt_stat_teardown() - account one teardown done by the reaper
 * @ns: its wall time
 */
void amt_stat_teardown(u64 ns)
{
	s64 max = atomic64_read(&amt_teardown_ns_max);

	atomic64_add(ns, &amt_teardown_ns_total);
	while ((s64)ns > max &&
	       !atomic64_try_cmpxchg(&amt_teardown_ns_max, &max, ns))
		;
}

/**
 * amt_stat_read() - a counter's total over all CPUs
 * @stat: an enum amt_verdict or enum amt_stat value
 *
 * Return: the sum.
 */
unsigned long amt_stat_read(unsigned int stat)
{
	unsigned long sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu(amt_pcpu_stats.v[stat], cpu);
	return sum;
}

/**
 * amt_stat_teardown_ns_total() - wall time of the reapers' teardowns
 *
 * Return: nanoseconds since load.
 */
s64 amt_stat_teardown_ns_total(void)
{
	return atomic64_read(&amt_teardown_ns_total);
}

/**
 * amt_stat_teardown_ns_max() - the longest teardown of a reaper
 *
 * Return: nanoseconds.
 */
s64 amt_stat_teardown_ns_max(void)
{
	return atomic64_read(&amt_teardown_ns_max);
}
