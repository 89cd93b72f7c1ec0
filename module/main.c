// SPDX-License-Identifier: GPL-2.0
/*
 * async_mm_teardown: a large exiting process's address-space teardown off
 * its exit path. Load, unload, and the drain file.
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#include <linux/kernel.h>
#include <linux/kobject.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include "compat.h"
#include "debugfs.h"
#include "fput.h"
#include "hook.h"
#include "hurry.h"
#include "interface.h"
#include "memcg.h"
#include "notify.h"
#include "oom.h"
#include "params.h"
#include "pending.h"
#include "reaper.h"
#include "self.h"
#include "stash.h"
#include "suspend.h"
#include "zap.h"

/* The drain file: not a parameter, whose store holds the parameter mutex */
static ssize_t drain_store(struct kobject *kobj, struct kobj_attribute *attr,
			   const char *buf, size_t count)
{
	unsigned int ms;
	int ret;

	if (kstrtouint(buf, 0, &ms) || ms < AMT_DRAIN_MIN_MS ||
	    ms > AMT_DRAIN_MAX_MS) {
		pr_err("drain: invalid value '%.*s': write a timeout in milliseconds from "
		       AMT_XSTR(AMT_DRAIN_MIN_MS) " to " AMT_XSTR(AMT_DRAIN_MAX_MS) "\n",
		       (int)min_t(size_t, strcspn(buf, "\n"), 40), buf);
		return -EINVAL;
	}
	/* Pins the module: rmmod cannot stop the reaper under a drainer. */
	if (!try_module_get(THIS_MODULE))
		return -ENODEV;
	ret = amt_drain(ms);
	module_put(THIS_MODULE);
	return ret ? ret : count;
}

static struct kobj_attribute amt_drain_attr = __ATTR_WO(drain);
static struct kobject *amt_kobj;

static int __init amt_init(void)
{
	int ret;

	amt_params_defaults();
	ret = amt_pending_init();
	if (ret)
		return ret;
	ret = amt_zap_init();
	if (ret)
		goto err_zap;
	/* Before the first teardown whose files a drain must see closed. */
	amt_fput_init();
	ret = amt_reaper_start(amt_nr_reapers);
	if (ret) {
		pr_err("cannot start the mm_reaper thread (error %d)\n", ret);
		goto err_reaper;
	}
	ret = amt_debugfs_init();
	if (ret)
		goto err_debugfs;
	ret = amt_oom_init();
	if (ret)
		goto err_oom;
	ret = amt_memcg_init();
	if (ret) {
		pr_err("cannot register the memcg shrinker (error %d)\n", ret);
		goto err_memcg;
	}
	ret = amt_suspend_init();
	if (ret)
		goto err_suspend;
	amt_notify_init();
	amt_reaper_wake_late(amt_notify_available());
	ret = amt_params_mode_at_load(amt_self_refusal(amt_notify_available()),
				      amt_self_cost());
	if (ret)
		goto err_hook;
	ret = amt_hook_init();
	if (ret)
		goto err_hook;
	amt_kobj = kobject_create_and_add(KBUILD_MODNAME, kernel_kobj);
	if (!amt_kobj) {
		ret = -ENOMEM;
		goto err_kobj;
	}
	ret = sysfs_create_file(amt_kobj, &amt_drain_attr.attr);
	if (ret)
		goto err_drain;
	amt_params_live(true);
	amt_params_report();
	return 0;

err_drain:
	kobject_put(amt_kobj);
err_kobj:
	amt_hook_exit();
err_hook:
	amt_stash_handoff(AMT_HANDOFF_ALL);
	amt_notify_exit();
	amt_suspend_exit();
err_suspend:
	amt_memcg_exit();
err_memcg:
	amt_oom_exit();
err_oom:
	amt_debugfs_exit();
err_debugfs:
	amt_stash_stop();
	amt_reaper_stop();
err_reaper:
	amt_fput_exit();
	amt_zap_exit();
err_zap:
	amt_pending_exit();
	return ret;
}

static void __exit amt_exit(void)
{
	/* the order: docs/design.md, "Unload" */
	amt_params_live(false);
	kobject_put(amt_kobj);
	amt_hook_exit();
	amt_stash_handoff(AMT_HANDOFF_ALL);
	amt_notify_exit();
	amt_suspend_exit();
	amt_memcg_exit();
	amt_oom_exit();
	amt_debugfs_exit();
	amt_stash_stop();
	amt_reaper_stop();
	amt_fput_exit();
	/* no teardown runs any more: no helper either */
	amt_zap_exit();
	amt_pending_exit();
	pr_info("unloaded\n");
}

module_init(amt_init);
module_exit(amt_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Take a large exiting process's address-space teardown off its exit path: the dying task does it after waking its parent, or a reaper thread");
MODULE_AUTHOR("The async_mm_teardown authors");
MODULE_VERSION(AMT_VERSION);
