/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Statistics (stats.c); each counter is incremented in exactly one place.
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#ifndef AMT_STATS_H
#define AMT_STATS_H

#include <linux/types.h>
#include "interface.h"
#include "policy.h"

#define AMT_STAT_ENUM_PERCPU(name)	AMT_STAT_##name,
#define AMT_STAT_ENUM_MODULE(name)
#define AMT_STAT_ENUM(name, kind, src, unit, metric, label, help) \
	AMT_STAT_ENUM_##src(name)

/*
 * The per-CPU counters: one per enum amt_verdict, then one per PERCPU line
 * of interface.h's AMT_STAT_LIST(), named after it.
 */
enum amt_stat {
	AMT_STAT_VERDICTS_END = AMT_NR_VERDICTS - 1,
	AMT_STAT_LIST(AMT_STAT_ENUM)
	AMT_NR_STATS,
};

void amt_stat_inc(unsigned int stat);
void amt_stat_add(unsigned int stat, unsigned long n);
void amt_stat_teardown(u64 ns);
unsigned long amt_stat_read(unsigned int stat);
s64 amt_stat_teardown_ns_total(void);
s64 amt_stat_teardown_ns_max(void);

#endif /* AMT_STATS_H */
