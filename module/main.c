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
#include <linux/kobject.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include "debugfs.h"
#include "fput.h"
#include "hook.h"
#include "interface.h"
#include "notify.h"
#include "oom.h"
#include "params.h"
#include "pending.h"
#include "policy.h"
#include "reaper.h"
#include "self.h"
#include "suspend.h"

/* Set once everything is up, cleared first on unload: gates runtime actions. */
static bool amt_running;

/* What interface.h says a parameter allows. */
static const char *amt_param_allowed(const struct kernel_param *kp)
{
#define AMT_PARAM_ALLOWED(p, when, type, allowed, help) \
	if (!strcmp(kp->name, #p)) \
		return allowed;
	AMT_PARAM_LIST(AMT_PARAM_ALLOWED)
#undef AMT_PARAM_ALLOWED
	return "see modinfo";
}

/*
 * Print a rejected value without its trailing newline, and what is
 * allowed (@detail: the limit of this machine, or why now).
 */
static void amt_param_reject(const struct kernel_param *kp, const char *val,
			     const char *detail)
{
	pr_err("%s: invalid value '%.*s': use %s%s\n", kp->name,
	       (int)min_t(size_t, strcspn(val, "\n"), 40), val,
	       amt_param_allowed(kp), detail ? detail : "");
}

bool amt_enabled = true;

static int amt_enabled_set(const char *val, const struct kernel_param *kp)
{
	int ret = param_set_bool(val, kp);

	if (ret)
		amt_param_reject(kp, val, NULL);
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

/* Validate an unsigned long parameter against a pure policy check. */
static int amt_ulong_set(const char *val, const struct kernel_param *kp,
			 int (*check)(unsigned long, unsigned long))
{
	unsigned long v, ram = totalram_pages();
	char detail[48];

	if (kstrtoul(val, 0, &v) || check(v, ram)) {
		snprintf(detail, sizeof(detail), " (%lu pages here)", ram);
		amt_param_reject(kp, val, detail);
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

unsigned long amt_max_pending_pages;
bool amt_oom_guard = true;

static int amt_max_pending_set(const char *val, const struct kernel_param *kp)
{
	int ret = amt_ulong_set(val, kp, amt_check_max_pending);

	if (!ret)
		amt_pending_reset_peak();
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

/*
 * The OOM-time drain, the shrinker's priority boost, the pressure window,
 * the low-memory gate and the memcg headroom check. OOM victims stay
 * excluded either way. Turning this off is for measuring what it prevents
 * (tests, benchmarks), not for production.
 */
module_param_cb(oom_guard, &amt_enabled_ops, &amt_oom_guard, 0644);

unsigned int amt_min_avail_pct = 10;

static int amt_min_avail_set(const char *val, const struct kernel_param *kp)
{
	unsigned long v;

	if (kstrtoul(val, 0, &v) || amt_check_min_avail(v)) {
		amt_param_reject(kp, val, NULL);
		return -EINVAL;
	}
	WRITE_ONCE(amt_min_avail_pct, v);
	return 0;
}

static const struct kernel_param_ops amt_min_avail_ops = {
	.set = amt_min_avail_set,
	.get = param_get_uint,
};

/*
 * Part of oom_guard: while MemAvailable is at or under this share of RAM,
 * exits stay inline. A userspace OOM killer (earlyoom: 10 % by default)
 * reads MemAvailable right after its victim became a zombie, and a
 * deferred teardown still held then makes it kill again (docs/design.md,
 * "Low memory").
 */
module_param_cb(min_available_pct, &amt_min_avail_ops, &amt_min_avail_pct,
		0644);

/* 0 until set, then resolved to the default at load; fixed after it. */
static unsigned int amt_reapers;

static int amt_reapers_set(const char *val, const struct kernel_param *kp)
{
	unsigned long v;

	/* (interface.h says 1 to 16: AMT_MAX_REAPERS) */
	if (kstrtoul(val, 0, &v) || amt_check_reapers(v, AMT_MAX_REAPERS)) {
		amt_param_reject(kp, val, NULL);
		return -EINVAL;
	}
	amt_reapers = v;
	return 0;
}

static const struct kernel_param_ops amt_reapers_ops = {
	.set = amt_reapers_set,
	.get = param_get_uint,
};

/*
 * Several reaper threads, so that one teardown stuck in __mmput() (an
 * mmu_notifier waiting on a device) never holds up the others, and exits
 * that die together are torn down in parallel. Set at load only
 * (/etc/modprobe.d): read-only at run time.
 */
module_param_cb(reapers, &amt_reapers_ops, &amt_reapers, 0444);

/*
 * self by default (make bench: the same waitpid() latency as the reaper,
 * memory back as fast as inline when many die together where one reaper is
 * ~2x slower, and the CPU stays in the dying task's cgroup; docs/benchmarks.md).
 * Where self mode cannot work, or would make others wait longer than an
 * inline teardown does (amt_self_refusal()), a load that did not ask for
 * it takes the reaper instead, and an explicit mode=self fails; where it
 * would make others wait for as long as the teardown (amt_self_cost()),
 * such a load takes the reaper too.
 */
int amt_mode = AMT_MODE_SELF;
static bool amt_mode_given;

/*
 * What a self teardown makes others wait for on this kernel, or NULL
 * (docs/design.md, "mode=self and the rest of the kernel"). There the
 * default is the reaper; mode=self is there for the asking.
 */
static const char *amt_self_cost(void)
{
	if (amt_self_holds_cgroup())
		return "this kernel keeps a dying task's cgroup populated until it is dead: with mode=self the cgroup stays populated until the teardown ends";
	if (amt_self_holds_tasks_rcu())
		return "this kernel's exiting tasks hold up RCU-tasks grace periods after exit_notify(): with mode=self, synchronize_rcu_tasks() (ftrace, kprobes, BPF) waits for a self teardown that sleeps (on a lock, in a driver's close)";
	return NULL;
}

/*
 * Why mode=self is refused on this kernel even when asked for, or NULL.
 * On PREEMPT_RT a sleeping-lock wait is a voluntary switch (__schedule()'s
 * SM_RTLOCK_WAIT), so an exit_mm() teardown is quiescent for RCU-tasks at
 * each one, while a self teardown inside the exit section holds every
 * grace period until it ends (amt_self_cost()): worse than inline.
 * Meaningful once amt_notify_init() ran.
 */
static const char *amt_self_refusal(void)
{
	if (!amt_notify_available())
		return "self mode is unavailable on this kernel (no hook after exit_notify())";
	if (amt_self_holds_tasks_rcu() && IS_ENABLED(CONFIG_PREEMPT_RT))
		return "on this PREEMPT_RT kernel a self teardown would hold up RCU-tasks grace periods (ftrace, kprobes, BPF) longer than an inline one";
	return NULL;
}

static const char *const amt_mode_names[] = {
	[AMT_MODE_REAPER] = "reaper",
	[AMT_MODE_SELF] = "self",
};

static int amt_mode_set(const char *val, const struct kernel_param *kp)
{
	int m = sysfs_match_string(amt_mode_names, val);

	if (m < 0) {
		amt_param_reject(kp, val, NULL);
		return -EINVAL;
	}
	/* At load the hook is not set up yet: amt_init() checks then. */
	if (m == AMT_MODE_SELF && READ_ONCE(amt_running) &&
	    amt_self_refusal()) {
		pr_err("mode: invalid value 'self': %s; use reaper\n",
		       amt_self_refusal());
		return -EINVAL;
	}
	if (m == AMT_MODE_SELF && READ_ONCE(amt_running) && amt_self_cost())
		pr_notice_once("mode=self as asked, although %s\n",
			       amt_self_cost());
	WRITE_ONCE(amt_mode, m);
	amt_mode_given = true;
	return 0;
}

static int amt_mode_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", amt_mode_names[READ_ONCE(amt_mode)]);
}

static const struct kernel_param_ops amt_mode_ops = {
	.set = amt_mode_set,
	.get = amt_mode_get,
};

/*
 * Who tears a deferred mm down: the mm_reaper kthread (the upstream RFC's
 * design), or the dying task itself right after exit_notify() has woken its
 * parent, so the CPU stays charged to its own cgroup (docs/design.md).
 */
module_param_cb(mode, &amt_mode_ops, &amt_mode, 0644);

/*
 * Every parameter's description comes from interface.h, shared with
 * amtctl; a parameter listed there and not defined above does not build.
 */
#define AMT_PARAM_DESC(name, when, type, allowed, help) \
	MODULE_PARM_DESC(name, help " Allowed: " allowed ".");
AMT_PARAM_LIST(AMT_PARAM_DESC)
#undef AMT_PARAM_DESC

#define AMT_PARAM_DEFINED(name, when, type, allowed, help) (void)&__param_##name;
static void __maybe_unused amt_params_defined(void)
{
	AMT_PARAM_LIST(AMT_PARAM_DEFINED)
}

/*
 * /sys/kernel/async_mm_teardown/drain: writing a timeout in ms blocks until
 * every teardown deferred before the write has finished (and its files are
 * closed), in either mode, however many exits follow: for tools that need "all resources freed when waitpid()
 * returns". Fails with ETIMEDOUT or EINTR. Not a module parameter: a
 * parameter's store runs under the module's parameter mutex, which would
 * block every other parameter for the duration of the wait.
 */
static ssize_t drain_store(struct kobject *kobj, struct kobj_attribute *attr,
			   const char *buf, size_t count)
{
	unsigned int ms;
	int ret;

	if (kstrtouint(buf, 0, &ms) || ms < 1 || ms > 3600000) {
		pr_err("drain: invalid value '%.*s': write a timeout in milliseconds from 1 to 3600000\n",
		       (int)min_t(size_t, strcspn(buf, "\n"), 40), buf);
		return -EINVAL;
	}
	/* Pins the module: rmmod cannot stop the reaper under a drainer. */
	if (!try_module_get(THIS_MODULE))
		return -ENODEV;
	ret = amt_reaper_drain(ms);
	module_put(THIS_MODULE);
	return ret ? ret : count;
}

static struct kobj_attribute amt_drain_attr = __ATTR_WO(drain);
static struct kobject *amt_kobj;

static int __init amt_init(void)
{
	int ret;

	if (!amt_thresh_pages)
		amt_thresh_pages = amt_default_thresh(PAGE_SIZE);
	if (!amt_max_pending_pages)
		amt_max_pending_pages = amt_default_max_pending(totalram_pages());

	ret = amt_pending_init();
	if (ret)
		return ret;
	/* Before the first teardown whose files a drain must see closed. */
	amt_fput_init();
	if (!amt_reapers)
		amt_reapers = amt_default_reapers(num_online_cpus(),
						  AMT_MAX_REAPERS);
	ret = amt_reaper_start(amt_reapers);
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
	ret = amt_suspend_init();
	if (ret)
		goto err_suspend;
	amt_notify_init();
	amt_reaper_wake_late(amt_notify_available());
	if (amt_mode == AMT_MODE_SELF && amt_self_refusal()) {
		if (amt_mode_given) {
			pr_err("mode=self refused: %s; use mode=reaper\n",
			       amt_self_refusal());
			ret = -EINVAL;
			goto err_hook;
		}
		pr_info("%s: using mode=reaper\n", amt_self_refusal());
		amt_mode = AMT_MODE_REAPER;
	}
	if (amt_mode == AMT_MODE_SELF && amt_self_cost()) {
		if (amt_mode_given) {
			pr_notice("mode=self as asked, although %s\n",
				  amt_self_cost());
		} else {
			pr_info("%s: using mode=reaper\n", amt_self_cost());
			amt_mode = AMT_MODE_REAPER;
		}
	}
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
	WRITE_ONCE(amt_running, true);
	pr_info("loaded: enabled=%d mode=%s thresh_pages=%lu max_pending_pages=%lu reapers=%u\n",
		amt_enabled, amt_mode_names[amt_mode], amt_thresh_pages,
		amt_max_pending_pages, amt_reapers);
	return 0;

err_drain:
	kobject_put(amt_kobj);
err_kobj:
	amt_hook_exit();
err_hook:
	amt_reaper_handoff(AMT_HANDOFF_ALL);
	amt_notify_exit();
	amt_suspend_exit();
err_suspend:
	amt_oom_exit();
err_oom:
	amt_debugfs_exit();
err_debugfs:
	amt_reaper_stop();
err_reaper:
	amt_fput_exit();
	amt_pending_exit();
	return ret;
}

static void __exit amt_exit(void)
{
	WRITE_ONCE(amt_running, false);
	/* Waits for a drain in progress (none: a drainer pins the module). */
	kobject_put(amt_kobj);
	/* No new deferrals, and no task left in hook code. */
	amt_hook_exit();
	/* Stashes left go to the reaper: no waiting for their tasks. */
	amt_reaper_handoff(AMT_HANDOFF_ALL);
	/* Then the hook after exit_notify() (redirected tasks find none). */
	amt_notify_exit();
	amt_suspend_exit();
	amt_oom_exit();
	amt_debugfs_exit();
	/* Tears down the backlog before the thread stops. */
	amt_reaper_stop();
	amt_fput_exit();
	amt_pending_exit();
	pr_info("unloaded\n");
}

module_init(amt_init);
module_exit(amt_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Take a large exiting process's address-space teardown off its exit path: the dying task does it after waking its parent, or a reaper thread");
MODULE_AUTHOR("The async_mm_teardown authors");
MODULE_VERSION(AMT_VERSION);
