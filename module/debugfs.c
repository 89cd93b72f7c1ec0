// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs async_mm_teardown/stats: every line of interface.h's
 * AMT_STAT_LIST(), as "name value", in its order.
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include "debugfs.h"
#include "hook.h"
#include "interface.h"
#include "pending.h"
#include "reaper.h"
#include "stats.h"

static struct dentry *amt_debugfs_dir;

/* Each AMT_STAT_LIST() MODULE line's value: a line without one won't build */
#define AMT_V_queued			v[AMT_DEFER]
#define AMT_V_sync			sync
#define AMT_V_rejected			rejected
#define AMT_V_sync_disabled		v[AMT_SYNC_DISABLED]
#define AMT_V_sync_small		v[AMT_SYNC_SMALL]
#define AMT_V_rejected_oom_victim	v[AMT_REJECT_OOM]
#define AMT_V_rejected_pressure		v[AMT_REJECT_PRESSURE]
#define AMT_V_rejected_low_memory	v[AMT_REJECT_LOW_MEMORY]
#define AMT_V_rejected_memcg		v[AMT_REJECT_MEMCG]
#define AMT_V_rejected_aio		v[AMT_REJECT_AIO]
#define AMT_V_rejected_budget		v[AMT_REJECT_BUDGET]
#define AMT_V_rejected_nomem		v[AMT_REJECT_NOMEM]
#define AMT_V_reaped		(v[AMT_STAT_reaped_by_reaper] + v[AMT_STAT_reaped_by_self])
#define AMT_V_pending_mms		amt_pending_mms()
#define AMT_V_pending_pages		amt_pending_pages()
#define AMT_V_pending_pages_peak	amt_pending_pages_peak()
#define AMT_V_exit_site_known		amt_hook_site_known()
#define AMT_V_reaper_pid		(reaper ? reaper->pid : 0)
#define AMT_V_reaper_threads		amt_reaper_count()
#define AMT_V_reaper_cpu_ns		amt_reaper_cpu_ns()
#define AMT_V_teardown_ns_total		amt_stat_teardown_ns_total()
#define AMT_V_teardown_ns_max		amt_stat_teardown_ns_max()

#define AMT_V_PERCPU(name)	v[AMT_STAT_##name]
#define AMT_V_MODULE(name)	AMT_V_##name
#define AMT_STAT_LINE(name, kind, src, unit, metric, label, help) \
	seq_printf(m, #name " %lld\n", (long long)(AMT_V_##src(name)));

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
	AMT_STAT_LIST(AMT_STAT_LINE)
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(amt_stats);

/**
 * amt_debugfs_init() - create the debugfs directory and stats file
 *
 * Return: 0; without debugfs (or locked down) only the files are missing.
 */
int amt_debugfs_init(void)
{
	amt_debugfs_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("stats", 0444, amt_debugfs_dir, NULL,
			    &amt_stats_fops);
#ifdef AMT_DEBUG
	debugfs_create_u32("debug_leader_delay_ms", 0600, amt_debugfs_dir,
			   &amt_debug_leader_delay_ms);
	debugfs_create_u32("debug_charge_delay_ms", 0600, amt_debugfs_dir,
			   &amt_debug_charge_delay_ms);
#endif
	return 0;
}

/**
 * amt_debugfs_exit() - remove the debugfs files, waiting for readers
 */
void amt_debugfs_exit(void)
{
	debugfs_remove(amt_debugfs_dir);
}
