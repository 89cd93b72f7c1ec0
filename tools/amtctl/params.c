// SPDX-License-Identifier: GPL-2.0
/*
 * amtctl set and drain: writes to the module's parameters in sysfs, where
 * the kernel's verdict comes back as write()'s errno and its reason goes to
 * the kernel log.
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "amtctl.h"

static int amtctl_not_loaded(void)
{
	amtctl_err(AMT_NAME " is not loaded");
	return AMTCTL_NOT_LOADED;
}

static int amtctl_write_error(int err, const char *name, const char *val,
			      const char *allowed, struct amtctl_kmsg *kmsg)
{
	switch (err) {
	case EINVAL:
		amtctl_err("the kernel refused %s=%s:", name, val);
		if (!amtctl_kmsg_print_new(kmsg))
			amtctl_err("(its reason is in the kernel log, not readable here) %s must be %s",
				   name, allowed);
		return AMTCTL_ERR;
	case EACCES:
	case EPERM:
		amtctl_err("must be root to write %s (%s)", name,
			   strerror(err));
		return AMTCTL_ERR;
	case ENOENT:
		if (amtctl_loaded()) {
			amtctl_err("the loaded module has no parameter %s (an older version?)",
				   name);
			return AMTCTL_ERR;
		}
		return amtctl_not_loaded();
	case ENODEV:
		return amtctl_not_loaded();
	default:
		amtctl_err("writing %s=%s failed: %s", name, val, strerror(err));
		return AMTCTL_ERR;
	}
}

static void amtctl_chomp(char *s)
{
	s[strcspn(s, "\n")] = 0;
}

int amtctl_set(int argc, char **argv)
{
	const struct amtctl_param *p[64];
	struct amtctl_kmsg kmsg;
	char *val[64], path[256], old[64], now[64];
	int i, n = argc - 1, ret, err;

	if (n < 1)
		return amtctl_usage("give PARAM=VALUE (PARAM: %s)",
				    amtctl_param_names());
	if (n > 64)
		return amtctl_usage("too many arguments");
	/* Check everything before writing anything. */
	for (i = 0; i < n; i++) {
		if (argv[i + 1][0] == '-')
			return amtctl_usage("unknown option '%s'", argv[i + 1]);
		ret = amtctl_param_arg(argv[i + 1], &p[i], &val[i]);
		if (ret)
			return ret;
		if (!amtctl_param_value_ok(p[i], val[i]))
			return amtctl_usage("invalid value '%s' for %s: %s must be %s",
					    val[i], p[i]->name, p[i]->name,
					    p[i]->allowed);
	}
	if (!amtctl_loaded())
		return amtctl_not_loaded();

	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), AMT_PARAMS_DIR "/%s", p[i]->name);
		if (amtctl_read_file(path, old, sizeof(old)) < 0)
			snprintf(old, sizeof(old), "?");
		amtctl_kmsg_mark(&kmsg);
		err = amtctl_write_file(path, val[i]);
		if (err) {
			ret = amtctl_write_error(err, p[i]->name, val[i],
						 p[i]->allowed, &kmsg);
			amtctl_kmsg_close(&kmsg);
			return ret;
		}
		amtctl_kmsg_close(&kmsg);
		if (amtctl_read_file(path, now, sizeof(now)) < 0)
			snprintf(now, sizeof(now), "%s", val[i]);
		amtctl_chomp(old);
		amtctl_chomp(now);
		printf("%s: %s -> %s\n", p[i]->name, old, now);
	}
	return AMTCTL_OK;
}

static double amtctl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int amtctl_drain(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "timeout", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	const struct amtctl_stat *mms, *pages;
	struct amtctl_stats st;
	struct amtctl_kmsg kmsg;
	double timeout = 60, t0;
	char ms[32];
	int c, err;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":t:", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			if (amtctl_parse_seconds(optarg, 3600, &timeout))
				return amtctl_usage("invalid timeout '%s': give seconds, more than 0 and at most 3600",
						    optarg);
			break;
		default:
			return amtctl_bad_option(c, argv);
		}
	}
	if (optind < argc)
		return amtctl_usage("unexpected argument '%s'", argv[optind]);
	if (!amtctl_loaded())
		return amtctl_not_loaded();

	/* The kernel takes whole milliseconds, at least 1. */
	snprintf(ms, sizeof(ms), "%.0f", fmax(1, ceil(timeout * 1000)));
	t0 = amtctl_now();
	amtctl_kmsg_mark(&kmsg);
	err = amtctl_write_file(AMT_DRAIN_FILE, ms);
	if (!err) {
		amtctl_kmsg_close(&kmsg);
		printf("drained in %.3f s\n", amtctl_now() - t0);
		return AMTCTL_OK;
	}
	if (err == ETIMEDOUT) {
		amtctl_kmsg_close(&kmsg);
		if (amtctl_stats_read(&st))
			st.n = 0;
		mms = amtctl_stats_get(&st, "pending_mms");
		pages = amtctl_stats_get(&st, "pending_pages");
		if (mms && pages && pages->numeric)
			amtctl_err("timed out after %g s: %s mms (%.1f MiB) still queued",
				   timeout, mms->value,
				   amtctl_pages_mib(pages->num));
		else
			amtctl_err("timed out after %g s", timeout);
		return AMTCTL_TIMEOUT;
	}
	if (err == EINTR) {
		amtctl_kmsg_close(&kmsg);
		amtctl_err("interrupted before the queue was empty");
		return AMTCTL_ERR;
	}
	err = amtctl_write_error(err, "drain", ms,
				 "a timeout in milliseconds from " AMT_XSTR(AMT_DRAIN_MIN_MS) " to " AMT_XSTR(AMT_DRAIN_MAX_MS),
				 &kmsg);
	amtctl_kmsg_close(&kmsg);
	return err;
}
