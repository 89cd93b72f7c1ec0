/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Statistics (stats.c): every counter has exactly one place that
 * increments it.
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#ifndef AMT_STATS_H
#define AMT_STATS_H

#include <linux/types.h>
#include "policy.h"

enum amt_stat {
	/* 0 .. AMT_NR_VERDICTS - 1: one counter per enum amt_verdict */
	AMT_STAT_REAPED_REAPER = AMT_NR_VERDICTS, /* torn down by the reaper */
	AMT_STAT_REAPED_SELF,		/* torn down by their own task */
	AMT_STAT_REAPED_PAGES,		/* charged pages of reaped mms */
	AMT_STAT_HANDOFFS,		/* stashes the reaper took over */
	AMT_STAT_DRAINS,
	AMT_STAT_DRAIN_TIMEOUTS,
	AMT_STAT_OOM_MARKED,		/* victim mms seen by oom:mark_victim */
	AMT_STAT_OOM_SHARER,		/* final drops caught only by that mark */
	AMT_STAT_OOM_DRAINS,		/* OOM notifier calls with a backlog */
	AMT_STAT_OOM_FREED_PAGES,	/* pages reported freed to the OOM killer */
	AMT_STAT_SHRINKER_SCANS,
	AMT_STAT_SHRINKER_SCAN_NS,	/* the time reclaim spent in them */
	AMT_STAT_MEMCG_TIGHT,		/* deferred into a memcg without room */
	AMT_STAT_MEMCG_WAITS,		/* memcg reclaim calls that waited */
	AMT_STAT_MEMCG_WAIT_NS,		/* the time they waited */
	AMT_STAT_SELF_NS,		/* the time self teardowns took */
	AMT_STAT_SELF_MEMPOLICY,	/* self mode impossible: a mempolicy */
	AMT_STAT_SELF_NOTIFIER,		/* ... mmu notifiers, in RCU-tasks' way */
	AMT_STAT_WAKE_FALLBACK,		/* reaper woken by the bound, not the exit */
	AMT_STAT_TO_LEADER,		/* drops a thread left to its leader */
	AMT_STAT_TO_LEADER_BACK,	/* ... taken back: the leader was past */
	AMT_STAT_NOT_LAST,		/* exit drops that left another mm user */
	AMT_STAT_PREEMPTED,		/* exit_mm() drops known by their site only */
	AMT_STAT_LATE,			/* exiting mmput()s after exit_mm(), elsewhere */
	AMT_STAT_LATE_FOREIGN,		/* late final drops of another's mm: inline */
	AMT_STAT_LATE_USERS,		/* teardowns a late mmget_not_zero() ended */
	AMT_NR_STATS,
};

void amt_stat_inc(unsigned int stat);
void amt_stat_add(unsigned int stat, unsigned long n);
void amt_stat_teardown(u64 ns);
unsigned long amt_stat_read(unsigned int stat);
s64 amt_stat_teardown_ns_total(void);
s64 amt_stat_teardown_ns_max(void);

#endif /* AMT_STATS_H */
