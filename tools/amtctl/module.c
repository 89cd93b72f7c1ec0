// SPDX-License-Identifier: GPL-2.0
/*
 * amtctl status, load and unload: the module's life cycle through libkmod,
 * with the kernel's error numbers turned into what to do about them.
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <libkmod.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>
#include "amtctl.h"

#define AMTCTL_CAP_SYS_MODULE 16

static void amtctl_kmod_log(void *data AMTCTL_UNUSED,
			    int priority AMTCTL_UNUSED,
			    const char *file AMTCTL_UNUSED,
			    int line AMTCTL_UNUSED, const char *fn AMTCTL_UNUSED,
			    const char *fmt, va_list args)
{
	if (!amtctl_verbose)
		return;
	fputs("libkmod: ", stderr);
	vfprintf(stderr, fmt, args);
}

static struct kmod_ctx *amtctl_kmod(void)
{
	struct kmod_ctx *ctx = kmod_new(NULL, NULL);

	if (!ctx) {
		amtctl_err("cannot initialise libkmod");
		return NULL;
	}
	kmod_set_log_fn(ctx, amtctl_kmod_log, NULL);
	if (amtctl_verbose)
		kmod_set_log_priority(ctx, LOG_DEBUG);
	return ctx;
}

/* KMOD_MODULE_LIVE..., or -ENOENT when not loaded. */
static int amtctl_initstate(struct kmod_ctx *ctx)
{
	struct kmod_module *mod;
	int state;

	if (!ctx || kmod_module_new_from_name(ctx, AMT_NAME, &mod) < 0)
		return amtctl_loaded() ? KMOD_MODULE_LIVE : -ENOENT;
	state = kmod_module_get_initstate(mod);
	kmod_module_unref(mod);
	return state;
}

static const char *amtctl_state_name(int state)
{
	switch (state) {
	case KMOD_MODULE_BUILTIN:
		return "built in";
	case KMOD_MODULE_LIVE:
		return "loaded";
	case KMOD_MODULE_COMING:
		return "loading";
	case KMOD_MODULE_GOING:
		return "unloading";
	default:
		return "not loaded";
	}
}

static void amtctl_trim(char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == '\n' || s[n - 1] == ' '))
		s[--n] = 0;
}

static bool amtctl_is_pages(const char *name)
{
	size_t n = strlen(name);

	return n >= 5 && !strcmp(name + n - 5, "pages");
}

static void amtctl_status_line(const char *label, const char *val,
			       bool pages)
{
	char l[64];

	snprintf(l, sizeof(l), "%s:", label);
	if (pages && val[0] >= '0' && val[0] <= '9')
		printf("%-19s %s (%.1f MiB)\n", l, val,
		       amtctl_pages_mib(strtoull(val, NULL, 10)));
	else
		printf("%-19s %s\n", l, val);
}

static int amtctl_param_filter(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

/* Every parameter that can be read (drain is write-only). */
static void amtctl_status_params(void)
{
	char path[512], val[256];
	struct dirent **names;
	struct stat sb;
	int n, i;

	n = scandir(AMT_PARAMS_DIR, &names, amtctl_param_filter, alphasort);
	if (n < 0) {
		amtctl_status_line("parameters", strerror(errno), false);
		return;
	}
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), AMT_PARAMS_DIR "/%s",
			 names[i]->d_name);
		if (!stat(path, &sb) && (sb.st_mode & 0444)) {
			int r = amtctl_read_file(path, val, sizeof(val));

			if (r < 0)
				snprintf(val, sizeof(val), "(unreadable: %s)",
					 strerror(-r));
			amtctl_trim(val);
			amtctl_status_line(names[i]->d_name, val,
					   amtctl_is_pages(names[i]->d_name));
		}
		free(names[i]);
	}
	free(names);
}

int amtctl_status(int argc, char **argv AMTCTL_UNUSED)
{
	struct kmod_ctx *ctx;
	struct amtctl_stats st;
	const struct amtctl_stat *s;
	char buf[256];
	int state, err;

	if (argc > 1)
		return amtctl_usage("takes no arguments");
	ctx = amtctl_kmod();
	state = amtctl_initstate(ctx);
	if (ctx)
		kmod_unref(ctx);
	amtctl_status_line("module", AMT_NAME, false);
	amtctl_status_line("state", amtctl_state_name(state), false);
	if (state < 0)
		return AMTCTL_NOT_LOADED;

	if (amtctl_read_file(AMT_SYSFS_DIR "/version", buf, sizeof(buf)) < 0)
		snprintf(buf, sizeof(buf), "unknown");
	amtctl_trim(buf);
	amtctl_status_line("version", buf, false);
	if (amtctl_read_file(AMT_SYSFS_DIR "/refcnt", buf, sizeof(buf)) > 0) {
		amtctl_trim(buf);
		amtctl_status_line("refcount", buf, false);
	}
	amtctl_status_params();

	err = amtctl_stats_read(&st);
	if (err) {
		snprintf(buf, sizeof(buf), "unknown (%s: %s)", AMT_STATS_FILE,
			 strerror(err));
		amtctl_status_line("reaper pid", buf, false);
		return AMTCTL_OK;
	}
	s = amtctl_stats_get(&st, "reaper_pid");
	amtctl_status_line("reaper pid", s ? s->value : "unknown", false);
	s = amtctl_stats_get(&st, "pending_mms");
	amtctl_status_line("pending_mms", s ? s->value : "unknown", false);
	s = amtctl_stats_get(&st, "pending_pages");
	amtctl_status_line("pending_pages", s ? s->value : "unknown", true);
	return AMTCTL_OK;
}

/* ---- load ---- */

static bool amtctl_lockdown_on(void)
{
	char buf[256];

	if (amtctl_read_file("/sys/kernel/security/lockdown", buf,
			     sizeof(buf)) <= 0)
		return false;
	return strstr(buf, "[integrity]") || strstr(buf, "[confidentiality]");
}

static long amtctl_sysctl(const char *path)
{
	char buf[64];

	if (amtctl_read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	return strtol(buf, NULL, 10);
}

static void amtctl_already_loaded(void)
{
	amtctl_err(AMT_NAME " is already loaded (change parameters with 'amtctl set', or unload it first)");
}

static void amtctl_not_root(void)
{
	amtctl_err("must be root (CAP_SYS_MODULE)");
}

/* Explain a failed kmod_module_insert_module(); returns the exit status. */
static int amtctl_load_error(int err, const char *path, const char *opts,
			     struct amtctl_kmsg *kmsg)
{
	switch (err) {
	case EPERM:
		if (amtctl_sysctl("/proc/sys/kernel/modules_disabled") == 1)
			amtctl_err("module loading is disabled until reboot (kernel.modules_disabled=1)");
		else if (!amtctl_have_cap(AMTCTL_CAP_SYS_MODULE))
			amtctl_not_root();
		else if (amtctl_lockdown_on())
			amtctl_err("the kernel refused an unsigned module: Secure Boot/lockdown is on; sign it with the DKMS MOK key (see docs)");
		else
			amtctl_err("the kernel refused the module: %s",
				   strerror(err));
		break;
	case EKEYREJECTED:
	case EBADMSG:
	case ENOKEY:
		amtctl_err("the kernel refused an unsigned module: Secure Boot/lockdown is on; sign it with the DKMS MOK key (see docs) [%s]",
			   strerror(err));
		break;
	case EBUSY:
		if (amtctl_sysctl("/proc/sys/kernel/ftrace_enabled") == 0)
			amtctl_err("cannot hook mmput(): function tracing is off (kernel.ftrace_enabled=0); turn it on with 'sysctl kernel.ftrace_enabled=1'");
		else
			amtctl_err("mmput() is already hooked by another IPMODIFY user (livepatch, another hooking module) — see dmesg");
		break;
	case EEXIST:
		amtctl_already_loaded();
		break;
	case EINVAL:
		amtctl_err("the kernel refused the load (given: %s)",
			   *opts ? opts : "no parameters");
		break;
	case ENOEXEC:
		amtctl_err("%s is not a module for kernel %s (invalid module format): rebuild it for this kernel",
			   path, amtctl_kernel_release());
		break;
	case ENOENT:
		amtctl_err("%s: the kernel could not resolve the module's symbols (built for another kernel?)",
			   path);
		break;
	case EACCES:
		amtctl_err("cannot read %s: %s", path, strerror(err));
		break;
	default:
		amtctl_err("loading %s failed: %s", path, strerror(err));
		break;
	}
	if (!amtctl_kmsg_print_new(kmsg) && kmsg->fd < 0 &&
	    (err == EINVAL || err == EBUSY))
		amtctl_err("(the kernel log is not readable here: see dmesg)");
	return AMTCTL_ERR;
}

/* The installed module for the running kernel, or NULL with the reason. */
static struct kmod_module *amtctl_lookup(struct kmod_ctx *ctx)
{
	struct kmod_module *mod = NULL;
	struct kmod_list *list = NULL;
	int err;

	err = kmod_module_new_from_lookup(ctx, AMT_NAME, &list);
	if (!err && list) {
		mod = kmod_module_get_module(list);
		kmod_module_unref_list(list);
	}
	if (mod && !kmod_module_get_path(mod)) {
		kmod_module_unref(mod);
		mod = NULL;
	}
	if (!mod)
		amtctl_err(AMT_NAME " is not installed for kernel %s: install the async-mm-teardown-dkms package or run dkms install",
			   amtctl_kernel_release());
	return mod;
}

static struct kmod_module *amtctl_from_path(struct kmod_ctx *ctx,
					    const char *path)
{
	struct kmod_module *mod;
	int err;

	err = kmod_module_new_from_path(ctx, path, &mod);
	if (err < 0) {
		amtctl_err("%s: %s", path, strerror(-err));
		return NULL;
	}
	if (strcmp(kmod_module_get_name(mod), AMT_NAME)) {
		amtctl_err("%s is module '%s', not " AMT_NAME, path,
			   kmod_module_get_name(mod));
		kmod_module_unref(mod);
		return NULL;
	}
	return mod;
}

int amtctl_load(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "path", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	const struct amtctl_param *p;
	struct amtctl_kmsg kmsg;
	struct kmod_module *mod;
	struct kmod_ctx *ctx;
	const char *path = NULL, *cfg;
	char options[1024] = "", *val;
	size_t len = 0;
	int c, err, ret;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":p:", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			path = optarg;
			break;
		default:
			return amtctl_bad_option(c, argv);
		}
	}
	for (; optind < argc; optind++) {
		ret = amtctl_param_arg(argv[optind], &p, &val);
		if (ret)
			return ret;
		len += snprintf(options + len, sizeof(options) - len, "%s%s=%s",
				len ? " " : "", p->name, val);
		if (len >= sizeof(options))
			return amtctl_usage("too many parameters");
	}

	ctx = amtctl_kmod();
	if (!ctx)
		return AMTCTL_ERR;
	ret = AMTCTL_ERR;
	if (amtctl_initstate(ctx) >= 0) {
		amtctl_already_loaded();
		goto out_ctx;
	}
	mod = path ? amtctl_from_path(ctx, path) : amtctl_lookup(ctx);
	if (!mod)
		goto out_ctx;
	/*
	 * As modprobe: the "options" of /etc/modprobe.d first, so that those
	 * given here win. With --path, as insmod: only those given.
	 */
	cfg = path ? NULL : kmod_module_get_options(mod);
	if (cfg && *cfg) {
		char given[sizeof(options)];

		snprintf(given, sizeof(given), "%s", options);
		if ((size_t)snprintf(options, sizeof(options), "%s%s%s", cfg,
				     *given ? " " : "", given) >= sizeof(options)) {
			amtctl_err("the options from /etc/modprobe.d are too long");
			goto out_mod;
		}
	}
	path = kmod_module_get_path(mod);

	amtctl_kmsg_mark(&kmsg);
	err = kmod_module_insert_module(mod, 0, options);
	if (err < 0) {
		ret = amtctl_load_error(-err, path, options, &kmsg);
	} else {
		printf("loaded %s%s%s\n", path, *options ? " " : "", options);
		ret = AMTCTL_OK;
	}
	amtctl_kmsg_close(&kmsg);
out_mod:
	kmod_module_unref(mod);
out_ctx:
	kmod_unref(ctx);
	return ret;
}

/* ---- unload ---- */

int amtctl_unload(int argc, char **argv AMTCTL_UNUSED)
{
	struct kmod_module *mod;
	struct kmod_ctx *ctx;
	int err, ret = AMTCTL_ERR;
	char refcnt[32] = "?";

	if (argc > 1)
		return amtctl_usage("takes no arguments");
	ctx = amtctl_kmod();
	if (!ctx)
		return AMTCTL_ERR;
	err = kmod_module_new_from_name(ctx, AMT_NAME, &mod);
	if (err < 0) {
		amtctl_err("libkmod: %s", strerror(-err));
		goto out_ctx;
	}
	err = kmod_module_remove_module(mod, 0);
	switch (-err) {
	case 0:
		printf("unloaded " AMT_NAME "\n");
		ret = AMTCTL_OK;
		break;
	case ENOENT:
		amtctl_err(AMT_NAME " is not loaded");
		ret = AMTCTL_NOT_LOADED;
		break;
	case EAGAIN:
		if (amtctl_read_file(AMT_SYSFS_DIR "/refcnt", refcnt,
				     sizeof(refcnt)) > 0)
			amtctl_trim(refcnt);
		amtctl_err("module busy (a drain is in progress? refcount %s) — try again",
			   refcnt);
		break;
	case EBUSY:
		amtctl_err("module busy: it is still loading or already unloading — try again");
		break;
	case EPERM:
		amtctl_not_root();
		break;
	default:
		amtctl_err("unloading failed: %s", strerror(-err));
		break;
	}
	kmod_module_unref(mod);
out_ctx:
	kmod_unref(ctx);
	return ret;
}
