// SPDX-License-Identifier: GPL-2.0
/*
 * The module's parameters: their values, the checks of each write
 * (policy.c's rules, interface.h's wording), and the mode chosen at load.
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

static const char *amt_param_allowed(const struct kernel_param *kp)
{
#define AMT_PARAM_ALLOWED(p, when, type, allowed, help) \
	if (!strcmp(kp->name, #p)) \
		return allowed;
	AMT_PARAM_LIST(AMT_PARAM_ALLOWED)
#undef AMT_PARAM_ALLOWED
	return "see modinfo";
}

/* Log a rejected value and what is allowed (@detail: this machine's limit) */
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

module_param_cb(enabled, &amt_enabled_ops, &amt_enabled, 0644);

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

module_param_cb(max_pending_pages, &amt_max_pending_ops,
		&amt_max_pending_pages, 0644);

/* OOM victims stay inline either way (oom.c). */
module_param_cb(oom_guard, &amt_enabled_ops, &amt_oom_guard, 0644);

bool amt_parallel = true;
module_param_cb(parallel, &amt_enabled_ops, &amt_parallel, 0644);

bool amt_zap_pinned = true;
module_param_cb(zap_pinned, &amt_enabled_ops, &amt_zap_pinned, 0644);

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

module_param_cb(min_available_pct, &amt_min_avail_ops, &amt_min_avail_pct,
		0644);

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

module_param_cb(reapers, &amt_reapers_ops, &amt_nr_reapers, 0444);

/* self, unless amt_params_mode_at_load() finds it refused or costly */
int amt_mode = AMT_MODE_SELF;
static bool amt_mode_given;

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

module_param_cb(mode, &amt_mode_ops, &amt_mode, 0644);

/* From interface.h: a parameter listed there but not defined does not build */
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
 * Return: 0 (mode=reaper, logged, if either is set and no mode was asked);
 * -EINVAL if mode=self was asked for and is refused.
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
