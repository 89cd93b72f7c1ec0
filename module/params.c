// SPDX-License-Identifier: GPL-2.0
/*
 * The module's parameters: their values, what each write is checked
 * against (policy.c's pure checks, interface.h's descriptions), and the
 * mode's resolution at load. Read wherever they apply (params.h).
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include "interface.h"
#include "params.h"
#include "policy.h"

/* Set once the module is up, cleared first on unload: gates mode writes. */
static bool amt_live;

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
/* Counts the writes of max_pending_pages: pending.c restarts its peak. */
unsigned long amt_max_pending_gen;
bool amt_oom_guard = true;

static int amt_max_pending_set(const char *val, const struct kernel_param *kp)
{
	int ret = amt_ulong_set(val, kp, amt_check_max_pending);

	if (!ret)
		WRITE_ONCE(amt_max_pending_gen, amt_max_pending_gen + 1);
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
unsigned int amt_nr_reapers;

static int amt_reapers_set(const char *val, const struct kernel_param *kp)
{
	unsigned long v;

	if (kstrtoul(val, 0, &v) || amt_check_reapers(v, AMT_MAX_REAPERS)) {
		amt_param_reject(kp, val, NULL);
		return -EINVAL;
	}
	amt_nr_reapers = v;
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
module_param_cb(reapers, &amt_reapers_ops, &amt_nr_reapers, 0444);

/*
 * self by default (docs/benchmarks.md: the waitpid() latency of the
 * reaper, memory back as fast as inline when many die together, the CPU
 * in the dying task's cgroup). Where this kernel refuses self mode or
 * makes it costly, amt_params_mode_at_load() decides.
 */
int amt_mode = AMT_MODE_SELF;
static bool amt_mode_given;

/* Set at load (amt_params_mode_at_load()): see there. */
static const char *amt_self_refused_why;
static const char *amt_self_cost_why;

static const char *const amt_mode_names[] = {
	AMT_MODE_NAMES,
};
static_assert(ARRAY_SIZE(amt_mode_names) == AMT_NR_MODES);

static int amt_mode_set(const char *val, const struct kernel_param *kp)
{
	int m = sysfs_match_string(amt_mode_names, val);

	if (m < 0) {
		amt_param_reject(kp, val, NULL);
		return -EINVAL;
	}
	/* At load the kernel is not known yet: amt_params_mode_at_load(). */
	if (m == AMT_MODE_SELF && READ_ONCE(amt_live) && amt_self_refused_why) {
		pr_err("mode: invalid value 'self': %s; use reaper\n",
		       amt_self_refused_why);
		return -EINVAL;
	}
	if (m == AMT_MODE_SELF && READ_ONCE(amt_live) && amt_self_cost_why)
		pr_notice_once("mode=self as asked, although %s\n",
			       amt_self_cost_why);
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

/**
 * amt_params_defaults() - resolve the parameters left unset to this machine
 */
void amt_params_defaults(void)
{
	if (!amt_thresh_pages)
		amt_thresh_pages = amt_default_thresh(PAGE_SIZE);
	if (!amt_max_pending_pages)
		amt_max_pending_pages = amt_default_max_pending(totalram_pages());
	if (!amt_nr_reapers)
		amt_nr_reapers = amt_default_reapers(num_online_cpus(),
						     AMT_MAX_REAPERS);
}

/**
 * amt_params_mode_at_load() - settle the mode for this kernel
 * @refused: why mode=self cannot be had here, or NULL
 * @cost: what a self teardown would make others wait for here, or NULL
 *
 * Where either is set, a load that did not ask for a mode takes the
 * reaper (the log says why). Both are kept for later writes of mode.
 *
 * Return: 0; -EINVAL if mode=self was asked for and is refused.
 */
int amt_params_mode_at_load(const char *refused, const char *cost)
{
	amt_self_refused_why = refused;
	amt_self_cost_why = cost;
	if (amt_mode != AMT_MODE_SELF || (!refused && !cost))
		return 0;
	if (refused && amt_mode_given) {
		pr_err("mode=self refused: %s; use mode=reaper\n", refused);
		return -EINVAL;
	}
	if (!refused && amt_mode_given) {
		pr_notice("mode=self as asked, although %s\n", cost);
		return 0;
	}
	pr_info("%s: using mode=reaper\n", refused ?: cost);
	amt_mode = AMT_MODE_REAPER;
	return 0;
}

/**
 * amt_params_live() - the module is up, or going down
 * @on: true from the end of the load to the start of the unload
 */
void amt_params_live(bool on)
{
	WRITE_ONCE(amt_live, on);
}

/**
 * amt_params_report() - the load's line in the kernel log
 */
void amt_params_report(void)
{
	pr_info("loaded: enabled=%d mode=%s thresh_pages=%lu max_pending_pages=%lu reapers=%u\n",
		amt_enabled, amt_mode_names[amt_mode], amt_thresh_pages,
		amt_max_pending_pages, amt_nr_reapers);
}
