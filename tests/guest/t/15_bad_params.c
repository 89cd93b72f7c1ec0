// SPDX-License-Identifier: GPL-2.0
/* Bad parameter values are refused with EINVAL and the old value stays. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "amt_guest.h"

static const struct {
	const char *param, *val;
} bad[] = {
	{ "enabled", "2" }, { "enabled", "maybe" }, { "enabled", "-1" },
	{ "thresh_pages", "0" }, { "thresh_pages", "-1" },
	{ "thresh_pages", "12abc" }, { "thresh_pages", "99999999999999" },
	{ "max_pending_pages", "0" }, { "max_pending_pages", "lots" },
	{ "max_pending_pages", "18446744073709551616" },
	{ "mode", "kthread" }, { "oom_guard", "2" }, { "parallel", "-1" },
	{ "zap_pinned", "2" },
	{ "min_available_pct", "51" }, { "min_available_pct", "-1" },
	{ "min_available_pct", "ten" },
};

static void run(void)
{
	char kmsg[65536];
	unsigned int i;
	int err;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		long before = amt_param_get(bad[i].param);

		err = amt_param_set(bad[i].param, bad[i].val);
		amt_assert_eq(err, EINVAL, "%s='%s' gave %s", bad[i].param,
			      bad[i].val, strerror(err));
		amt_assert_eq(amt_param_get(bad[i].param), before,
			      "%s changed after a refused write", bad[i].param);
	}
	/* The refusal says what is allowed, in the kernel log. */
	{
		FILE *f = popen("dmesg | tail -40", "r");
		size_t n = f ? fread(kmsg, 1, sizeof(kmsg) - 1, f) : 0;

		kmsg[n] = 0;
		if (f)
			pclose(f);
	}
	amt_assert(strstr(kmsg, "thresh_pages: invalid value '0': use a number of pages from 1 to"),
		   "no 'allowed values' message for thresh_pages");
	amt_assert(strstr(kmsg, "enabled: invalid value 'maybe': use 1 or 0"),
		   "no 'allowed values' message for enabled");
	amt_assert(strstr(kmsg, "min_available_pct: invalid value '51': use a percentage of RAM from 0 to 50"),
		   "no 'allowed values' message for min_available_pct");

	/* Good values are taken. */
	amt_assert(!amt_param_set("thresh_pages", "4096"), "4096 refused");
	amt_assert_eq(amt_param_get("thresh_pages"), 4096, "4096 not stored");
	amt_assert(!amt_param_set("enabled", "n"), "n refused");
	amt_assert_eq(amt_param_get("enabled"), 0, "n not stored");
	amt_assert(!amt_param_set("min_available_pct", "0"), "0 %% refused");
	amt_assert_eq(amt_param_get("min_available_pct"), 0, "0 %% not stored");
	amt_assert(!amt_param_set("min_available_pct", "50"), "50 %% refused");
	amt_assert_eq(amt_param_get("min_available_pct"), 50,
		      "50 %% not stored");

	/* A bad value at load time makes the load fail cleanly. */
	amt_assert(!amt_unload(), "unload failed");
	err = amt_load("thresh_pages=0");
	amt_assert_eq(err, EINVAL, "load with thresh_pages=0: %s",
		      strerror(err));
	amt_assert(!amt_loaded(), "module loaded despite a bad parameter");
	err = amt_load("mode=sideways");
	amt_assert_eq(err, EINVAL, "load with mode=sideways: %s",
		      strerror(err));
	amt_assert(!amt_load("thresh_pages=2048 enabled=0"), "good load failed");
	amt_assert_eq(amt_param_get("thresh_pages"), 2048,
		      "load parameters not applied");
	amt_assert_eq(amt_param_get("enabled"), 0,
		      "load parameters not applied");
}

AMT_TEST("bad_params", "refused parameter values give EINVAL with a message saying what is allowed, and change nothing", 60, run)
