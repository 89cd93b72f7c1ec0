// SPDX-License-Identifier: GPL-2.0
/*
 * The read-only debugfs file async_mm_teardown/stats: every counter and
 * gauge, one "name value" per line.
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include "debugfs.h"
#include "hook.h"
#include "pending.h"
#include "reaper.h"
#include "stats.h"

static struct dentry *amt_debugfs_dir;

static int amt_stats_show(struct seq_file *m, void *unused)
{
	unsigned long v[AMT_NR_STATS], sync = 0, rejected = 0;
	struct task_struct *reaper = amt_reaper_task();
	unsigned int i;

	for (i = 0; i < AMT_NR_STATS; i++)
		v[i] = amt_stat_read(i);
	for (i = AMT_SYNC_DISABLED; i < AMT_NR_VERDICTS; i++) {
		sync += v[i];
		if (i >= AMT_REJECT_OOM)
			rejected += v[i];
	}

	seq_printf(m, "queued %lu\n", v[AMT_DEFER]);
	/* sync: every final exit drop torn down inline, for any reason */
	seq_printf(m, "sync %lu\n", sync);
	/* rejected: the part of sync that a safety gate sent back */
	seq_printf(m, "rejected %lu\n", rejected);
	for (i = AMT_SYNC_DISABLED; i < AMT_NR_VERDICTS; i++)
		seq_printf(m, "%s %lu\n", amt_verdict_name(i), v[i]);
	/* reaped: every deferred teardown that ended, whoever ran it */
	seq_printf(m, "reaped %lu\n",
		   v[AMT_STAT_REAPED_REAPER] + v[AMT_STAT_REAPED_SELF]);
	seq_printf(m, "reaped_by_reaper %lu\n", v[AMT_STAT_REAPED_REAPER]);
	seq_printf(m, "reaped_by_self %lu\n", v[AMT_STAT_REAPED_SELF]);
	seq_printf(m, "reaped_pages %lu\n", v[AMT_STAT_REAPED_PAGES]);
	seq_printf(m, "pending_mms %ld\n", amt_pending_mms());
	seq_printf(m, "pending_pages %ld\n", amt_pending_pages());
	seq_printf(m, "pending_pages_peak %ld\n", amt_pending_pages_peak());
	seq_printf(m, "handoffs %lu\n", v[AMT_STAT_HANDOFFS]);
	seq_printf(m, "drains %lu\n", v[AMT_STAT_DRAINS]);
	seq_printf(m, "drain_timeouts %lu\n", v[AMT_STAT_DRAIN_TIMEOUTS]);
	seq_printf(m, "oom_victims_marked %lu\n", v[AMT_STAT_OOM_MARKED]);
	seq_printf(m, "oom_sharer_caught %lu\n", v[AMT_STAT_OOM_SHARER]);
	seq_printf(m, "oom_drains %lu\n", v[AMT_STAT_OOM_DRAINS]);
	seq_printf(m, "oom_freed_pages %lu\n", v[AMT_STAT_OOM_FREED_PAGES]);
	seq_printf(m, "shrinker_scans %lu\n", v[AMT_STAT_SHRINKER_SCANS]);
	seq_printf(m, "self_ns_total %lu\n", v[AMT_STAT_SELF_NS]);
	seq_printf(m, "self_mempolicy %lu\n", v[AMT_STAT_SELF_MEMPOLICY]);
	seq_printf(m, "wake_fallback %lu\n", v[AMT_STAT_WAKE_FALLBACK]);
	seq_printf(m, "exit_not_last %lu\n", v[AMT_STAT_NOT_LAST]);
	seq_printf(m, "exit_preempted %lu\n", v[AMT_STAT_PREEMPTED]);
	seq_printf(m, "exit_late %lu\n", v[AMT_STAT_LATE]);
	seq_printf(m, "exit_site_known %d\n", amt_hook_site_known());
	seq_printf(m, "reaper_pid %d\n", reaper ? reaper->pid : 0);
	seq_printf(m, "reaper_threads %u\n", amt_reaper_count());
	seq_printf(m, "reaper_cpu_ns %llu\n",
		   (unsigned long long)amt_reaper_cpu_ns());
	seq_printf(m, "teardown_ns_total %lld\n",
		   (long long)amt_stat_teardown_ns_total());
	seq_printf(m, "teardown_ns_max %lld\n",
		   (long long)amt_stat_teardown_ns_max());
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(amt_stats);

/**
 * amt_debugfs_init() - create the debugfs directory and stats file
 *
 * A kernel without debugfs (or with it locked down) still runs the module;
 * only the file is missing.
 *
 * Return: 0.
 */
int amt_debugfs_init(void)
{
	amt_debugfs_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("stats", 0444, amt_debugfs_dir, NULL,
			    &amt_stats_fops);
	return 0;
}

/**
 * amt_debugfs_exit() - remove the debugfs files, waiting for readers
 */
void amt_debugfs_exit(void)
{
	debugfs_remove(amt_debugfs_dir);
}
