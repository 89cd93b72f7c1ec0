// SPDX-License-Identifier: GPL-2.0
/*
 * async_mm_teardown: take the teardown of a large exiting process's address
 * space off its exit path, so that whoever waits for the death (a
 * supervisor, a shell's waitpid(), an orchestrator) does not wait for the
 * memory to be freed. Module parameters, load and unload.
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/string.h>
#include "amt.h"

/* Set once everything is up, cleared first on unload: gates runtime actions. */
static bool amt_running;

/* Print a rejected value without its trailing newline. */
static void amt_param_reject(const struct kernel_param *kp, const char *val,
			     const char *allowed)
{
	pr_err("%s: invalid value '%.*s': %s\n", kp->name,
	       (int)min_t(size_t, strcspn(val, "\n"), 40), val, allowed);
}

bool amt_enabled = true;

static int amt_enabled_set(const char *val, const struct kernel_param *kp)
{
	int ret = param_set_bool(val, kp);

	if (ret)
		amt_param_reject(kp, val, "use 1 or 0 (y/n)");
	return ret;
}

static const struct kernel_param_ops amt_enabled_ops = {
	.set = amt_enabled_set,
	.get = param_get_bool,
};

/*
 * The runtime switch. Loading the module is the opt-in, so it starts on;
 * turning it off sends new exits down the inline path while the queue keeps
 * draining.
 */
module_param_cb(enabled, &amt_enabled_ops, &amt_enabled, 0644);
MODULE_PARM_DESC(enabled, "Defer large exits to the mm_reaper (1) or tear down inline as without the module (0). Default 1.");

/* Validate an unsigned long parameter against a pure policy check. */
static int amt_ulong_set(const char *val, const struct kernel_param *kp,
			 int (*check)(unsigned long, unsigned long))
{
	unsigned long v, ram = totalram_pages();
	char allowed[96];

	if (kstrtoul(val, 0, &v) || check(v, ram)) {
		snprintf(allowed, sizeof(allowed),
			 "use a number of pages from 1 to %lu (all RAM)", ram);
		amt_param_reject(kp, val, allowed);
		return -EINVAL;
	}
	WRITE_ONCE(*(unsigned long *)kp->arg, v);
	return 0;
}

/* 0 until set, then resolved to the default at load. */
unsigned long amt_thresh_pages;

static int amt_thresh_set(const char *val, const struct kernel_param *kp)
{
	return amt_ulong_set(val, kp, amt_check_thresh);
}

static const struct kernel_param_ops amt_thresh_ops = {
	.set = amt_thresh_set,
	.get = param_get_ulong,
};

/*
 * Smaller mms are torn down inline: below a few tens of MiB the teardown
 * costs about as much as the hand-off, and small exits are the common case.
 */
module_param_cb(thresh_pages, &amt_thresh_ops, &amt_thresh_pages, 0644);
MODULE_PARM_DESC(thresh_pages, "Defer only mms with at least this many resident pages. Default 64 MiB worth.");

unsigned long amt_max_pending_pages;
bool amt_oom_guard = true;

static int amt_max_pending_set(const char *val, const struct kernel_param *kp)
{
	int ret = amt_ulong_set(val, kp, amt_check_max_pending);

	if (!ret)
		amt_reaper_reset_peak();
	return ret;
}

static const struct kernel_param_ops amt_max_pending_ops = {
	.set = amt_max_pending_set,
	.get = param_get_ulong,
};

/*
 * Queued pages are invisible to reclaim until the reaper frees them: the
 * cap bounds that exposure. Default RAM/4 (see docs/admin-guide.md).
 */
module_param_cb(max_pending_pages, &amt_max_pending_ops,
		&amt_max_pending_pages, 0644);
MODULE_PARM_DESC(max_pending_pages, "Most resident pages queued for teardown at once; exits beyond it are torn down inline. Default RAM/4.");

/*
 * The OOM-time drain, the shrinker's priority boost, the pressure window and
 * the memcg headroom check. OOM victims stay excluded either way. Turning
 * this off is for measuring what it prevents (tests, benchmarks), not for
 * production.
 */
module_param_cb(oom_guard, &amt_enabled_ops, &amt_oom_guard, 0644);
MODULE_PARM_DESC(oom_guard, "Keep queued memory from causing OOM kills: drain at OOM, boost under reclaim, respect memcg limits (1). Default 1.");

static int amt_drain_set(const char *val, const struct kernel_param *kp)
{
	unsigned int ms;
	int ret;

	if (kstrtouint(val, 0, &ms) || ms < 1 || ms > 3600000) {
		amt_param_reject(kp, val,
				 "write a timeout in milliseconds from 1 to 3600000");
		return -EINVAL;
	}
	/* Pins the module: rmmod cannot stop the reaper under a drainer. */
	if (!try_module_get(THIS_MODULE))
		return -ENODEV;
	if (READ_ONCE(amt_running)) {
		ret = amt_reaper_drain(ms);
	} else {
		pr_err("drain: only at runtime, not as a load parameter\n");
		ret = -EINVAL;
	}
	module_put(THIS_MODULE);
	return ret;
}

static const struct kernel_param_ops amt_drain_ops = {
	.set = amt_drain_set,
};

/*
 * Writing a timeout blocks until every teardown queued before the write has
 * finished (and its files are closed): for tools that need "all resources
 * freed when waitpid() returns". Fails with ETIMEDOUT or EINTR.
 */
module_param_cb(drain, &amt_drain_ops, NULL, 0200);
MODULE_PARM_DESC(drain, "Write a timeout in ms: block until all teardowns queued before the write are done.");

static int __init amt_init(void)
{
	int ret;

	if (!amt_thresh_pages)
		amt_thresh_pages = amt_default_thresh(PAGE_SIZE);
	if (!amt_max_pending_pages)
		amt_max_pending_pages = amt_default_max_pending(totalram_pages());

	ret = amt_reaper_start();
	if (ret) {
		pr_err("cannot start the mm_reaper thread (error %d)\n", ret);
		goto err_reaper;
	}
	ret = amt_stats_init();
	if (ret)
		goto err_stats;
	ret = amt_oom_init();
	if (ret)
		goto err_oom;
	ret = amt_hook_init();
	if (ret)
		goto err_hook;
	WRITE_ONCE(amt_running, true);
	pr_info("loaded: enabled=%d thresh_pages=%lu max_pending_pages=%lu\n",
		amt_enabled, amt_thresh_pages, amt_max_pending_pages);
	return 0;

err_hook:
	amt_oom_exit();
err_oom:
	amt_stats_exit();
err_stats:
	amt_reaper_stop();
err_reaper:
	return ret;
}

static void __exit amt_exit(void)
{
	WRITE_ONCE(amt_running, false);
	/* No new deferrals, and no task left in hook code. */
	amt_hook_exit();
	amt_oom_exit();
	amt_stats_exit();
	/* Tears down the backlog before the thread stops. */
	amt_reaper_stop();
	pr_info("unloaded\n");
}

module_init(amt_init);
module_exit(amt_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Defer the exiting task's address-space teardown to a kernel thread");
MODULE_AUTHOR("The async_mm_teardown authors");
MODULE_VERSION(AMT_VERSION);
