// SPDX-License-Identifier: GPL-2.0
/*
 * amtctl: administer the async_mm_teardown kernel module. The command
 * table, help, and what the commands share: sysfs and debugfs files, the
 * kernel log, the parameter checks.
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "amtctl.h"

#ifndef AMTCTL_VERSION
#define AMTCTL_VERSION "unknown"
#endif

bool amtctl_verbose;
const char *amtctl_cmd_name;

static int amtctl_help(int argc, char **argv);

static const struct amtctl_cmd amtctl_cmds[] = {
	{ "status", amtctl_status, "",
	  "is it loaded; its version, parameters and queue",
	  "Prints the module's state, version and every readable parameter,\n"
	  "and the first mm_reaper's pid and what is deferred now, from the\n"
	  "stats file.\n"
	  "Exit status 0 if the module is loaded, 3 if it is not.\n" },
	{ "load", amtctl_load, "[--path FILE.ko] [PARAM=VALUE...]",
	  "load the module, optionally with parameters",
	  "Loads async_mm_teardown as installed for the running kernel\n"
	  "(/lib/modules/$(uname -r), e.g. by DKMS), or the file given with\n"
	  "--path. PARAM is one of those of 'amtctl help set'; the kernel\n"
	  "checks the values, and its reason is printed if it refuses.\n"
	  "Without --path, as modprobe, the options of /etc/modprobe.d apply\n"
	  "first and PARAM=VALUE overrides them; with it, as insmod, only\n"
	  "PARAM=VALUE.\n"
	  "\n"
	  "  -p, --path FILE.ko   load this file instead of looking it up\n" },
	{ "unload", amtctl_unload, "",
	  "unload the module (queued teardowns finish)",
	  "Removes the module. It tears down everything still queued before\n"
	  "it goes; it refuses while a drain is in progress (try again).\n" },
	{ "set", amtctl_set, "PARAM=VALUE...",
	  "change parameters of the loaded module",
	  "Checks every value first, then writes them in order to\n"
	  "/sys/module/async_mm_teardown/parameters/PARAM.\n"
	  "  enabled=1|0|y|n            defer large exits (1) or not (0)\n"
	  "  thresh_pages=PAGES         defer only mms with this many resident\n"
	  "                             pages or more (1 .. RAM)\n"
	  "  max_pending_pages=PAGES    most freeable pages queued at once (1 .. RAM)\n"
	  "  mode=self|reaper           who tears deferred mms down: the\n"
	  "                             dying task after waking its parent\n"
	  "                             (default but on 6.1 and 7.0+), or\n"
	  "                             the mm_reaper threads\n"
	  "  parallel=1|0|y|n           free a large deferred mm on idle CPUs\n"
	  "                             too (1) or on one CPU (0)\n"
	  "  zap_pinned=1|0|y|n         free a dead process's memory while a\n"
	  "                             /proc reader or driver holds its mm\n"
	  "  oom_guard=1|0|y|n          keep queued memory from causing OOM\n"
	  "                             kills (1; 0 only to measure)\n"
	  "  min_available_pct=PCT      with oom_guard, defer nothing while\n"
	  "                             MemAvailable <= PCT % of RAM plus an\n"
	  "                             eighth (0 .. 50, default 10; 0: no\n"
	  "                             such gate)\n" },
	{ "stats", amtctl_stats, "[--json | --prometheus]",
	  "print the module's statistics",
	  "Without an option: an aligned table, pages also in MiB and\n"
	  "nanoseconds also in ms.\n"
	  "  -j, --json         one JSON object, stat name -> number\n"
	  "  -p, --prometheus   node_exporter textfile collector format\n" },
	{ "watch", amtctl_watch, "[-i SECONDS] [-n COUNT]",
	  "per-second rates of the statistics, like vmstat",
	  "Prints a header, then one line per interval: queued, sync,\n"
	  "rejected and reaped exits per second, and the current queue depth.\n"
	  "  -i, --interval SECONDS   interval (default 1, may be fractional)\n"
	  "  -n, --count COUNT        stop after COUNT lines (default: until\n"
	  "                           interrupted)\n" },
	{ "drain", amtctl_drain, "[--timeout SECONDS]",
	  "wait until every queued teardown is done",
	  "Blocks until every teardown queued before it started is done and\n"
	  "its memory and files are released. Exit status 4 if that took\n"
	  "longer than the timeout.\n"
	  "  -t, --timeout SECONDS    give up after this long (default 60,\n"
	  "                           at most 3600)\n" },
	{ "help", amtctl_help, "[COMMAND]",
	  "show this help, or a command's",
	  "Without COMMAND, lists the commands and the exit statuses.\n" },
};

#define AMTCTL_NR_CMDS ARRAY_SIZE(amtctl_cmds)

static const char amtctl_exit_codes[] =
	"exit status:\n"
	"  0  success (status: the module is loaded)\n"
	"  1  the operation failed (the reason is printed)\n"
	"  2  usage error: bad command, option or value\n"
	"  3  the module is not loaded\n"
	"  4  drain: timed out before the queue was empty\n";

static const struct amtctl_cmd *amtctl_find(const char *name)
{
	size_t i;

	for (i = 0; i < AMTCTL_NR_CMDS; i++)
		if (!strcmp(amtctl_cmds[i].name, name))
			return &amtctl_cmds[i];
	return NULL;
}

static void amtctl_print_usage(FILE *f)
{
	size_t i;
	char syn[80];

	fprintf(f, "usage: amtctl [-v] COMMAND [ARGS...]\n"
		"Administer the async_mm_teardown kernel module.\n\ncommands:\n");
	for (i = 0; i < AMTCTL_NR_CMDS; i++) {
		snprintf(syn, sizeof(syn), "%s %s", amtctl_cmds[i].name,
			 amtctl_cmds[i].args);
		if (strlen(syn) > 30)
			fprintf(f, "  %s\n  %-30s %s\n", syn, "",
				amtctl_cmds[i].summary);
		else
			fprintf(f, "  %-30s %s\n", syn, amtctl_cmds[i].summary);
	}
	fprintf(f, "\noptions:\n"
		"  -v, --verbose   show libkmod's own messages\n"
		"  --version       print amtctl's version\n"
		"\n%s\nSee 'amtctl help COMMAND' or amtctl(8).\n",
		amtctl_exit_codes);
}

static void amtctl_cmd_help(const struct amtctl_cmd *c)
{
	printf("usage: amtctl %s %s\n%s.\n\n%s\n%s", c->name, c->args,
	       c->summary, c->help, amtctl_exit_codes);
}

static int amtctl_help(int argc, char **argv)
{
	const struct amtctl_cmd *c;

	if (argc > 2)
		return amtctl_usage("too many arguments");
	if (argc < 2) {
		amtctl_print_usage(stdout);
		return AMTCTL_OK;
	}
	c = amtctl_find(argv[1]);
	if (!c)
		return amtctl_usage("no command '%s'", argv[1]);
	amtctl_cmd_help(c);
	return AMTCTL_OK;
}

/* "amtctl CMD: MESSAGE" on stderr, after what stdout holds */
static void amtctl_vmsg(const char *fmt, va_list ap)
{
	fflush(stdout);
	fprintf(stderr, "amtctl %s: ", amtctl_cmd_name);
	vfprintf(stderr, fmt, ap);
}

void amtctl_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	amtctl_vmsg(fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int amtctl_usage(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	amtctl_vmsg(fmt, ap);
	va_end(ap);
	if (strcmp(amtctl_cmd_name, "help"))
		fprintf(stderr, "\nTry 'amtctl help %s'.\n", amtctl_cmd_name);
	else
		fprintf(stderr, "\nTry 'amtctl help'.\n");
	return AMTCTL_USAGE;
}

int amtctl_bad_option(int c, char **argv)
{
	if (c == ':')
		return amtctl_usage("option '%s' needs a value", argv[optind - 1]);
	if (optopt)
		return amtctl_usage("unknown option '-%c'", optopt);
	return amtctl_usage("unknown option '%s'", argv[optind - 1]);
}

/* ---- files ---- */

int amtctl_read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;
	size_t total = 0;

	if (fd < 0)
		return -errno;
	while (total < len - 1) {
		n = read(fd, buf + total, len - 1 - total);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			n = -errno;
			close(fd);
			return n;
		}
		if (!n)
			break;
		total += n;
	}
	buf[total] = 0;
	close(fd);
	return total;
}

/* A parameter write reports the kernel's verdict as write()'s errno. */
int amtctl_write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	size_t len = strlen(val);
	ssize_t n;
	int ret = 0;

	if (fd < 0)
		return errno;
	n = write(fd, val, len);
	if (n < 0)
		ret = errno;
	else if ((size_t)n != len)
		ret = EIO;
	close(fd);
	return ret;
}

bool amtctl_loaded(void)
{
	return access(AMT_SYSFS_DIR "/initstate", F_OK) == 0 ||
	       access(AMT_PARAMS_DIR, F_OK) == 0;
}

/* Whether the effective capability set holds @cap (CAP_SYS_MODULE...). */
bool amtctl_have_cap(int cap)
{
	char buf[4096], *p;
	unsigned long long eff;

	if (amtctl_read_file("/proc/self/status", buf, sizeof(buf)) <= 0)
		return geteuid() == 0;
	p = strstr(buf, "\nCapEff:");
	if (!p || sscanf(p + 8, "%llx", &eff) != 1)
		return geteuid() == 0;
	return eff & (1ULL << cap);
}

const char *amtctl_kernel_release(void)
{
	static struct utsname u;

	if (!u.release[0] && uname(&u))
		return "(unknown)";
	return u.release;
}

long amtctl_page_size(void)
{
	long ps = sysconf(_SC_PAGESIZE);

	return ps > 0 ? ps : 4096;
}

double amtctl_pages_mib(unsigned long long pages)
{
	return (double)pages * amtctl_page_size() / (1024.0 * 1024.0);
}

int amtctl_parse_seconds(const char *s, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v <= 0 || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* ---- kernel log ---- */

/*
 * Open /dev/kmsg positioned after its last record, before an operation that
 * may make the kernel log a reason. Unreadable (no CAP_SYSLOG, a container):
 * fd -1, and the caller says what was given instead.
 */
void amtctl_kmsg_mark(struct amtctl_kmsg *k)
{
	k->fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (k->fd >= 0 && lseek(k->fd, 0, SEEK_END) < 0) {
		close(k->fd);
		k->fd = -1;
	}
}

/*
 * Print the module's lines logged since amtctl_kmsg_mark(), indented, and
 * return how many. Each read() of /dev/kmsg returns one record:
 * "prio,seq,usec,flags;text\n" followed by " KEY=value" lines.
 */
int amtctl_kmsg_print_new(struct amtctl_kmsg *k)
{
	static const char prefix[] = AMT_NAME ": ";
	char rec[8192], *text, *nl;
	int printed = 0;
	ssize_t n;

	if (k->fd < 0)
		return 0;
	for (;;) {
		n = read(k->fd, rec, sizeof(rec) - 1);
		if (n < 0 && (errno == EINTR || errno == EPIPE))
			continue;	/* EPIPE: overwritten records, go on */
		if (n <= 0)
			break;
		rec[n] = 0;
		text = strchr(rec, ';');
		if (!text)
			continue;
		text++;
		nl = strchr(text, '\n');
		if (nl)
			*nl = 0;
		if (strncmp(text, prefix, sizeof(prefix) - 1))
			continue;
		fprintf(stderr, "  kernel: %s\n", text);
		printed++;
	}
	return printed;
}

void amtctl_kmsg_close(struct amtctl_kmsg *k)
{
	if (k->fd >= 0)
		close(k->fd);
	k->fd = -1;
}

/* ---- parameters ---- */

static const char *const amtctl_modes[] = { AMT_MODE_NAMES, NULL };

/* The module's parameters, from the header the module builds with. */
#define AMTCTL_BOOL_BOOL	true
#define AMTCTL_BOOL_CHOICE	false
#define AMTCTL_BOOL_NUMBER	false
#define AMTCTL_BOOL_PERCENT	false
#define AMTCTL_MIN_BOOL		0
#define AMTCTL_MIN_CHOICE	0
#define AMTCTL_MIN_NUMBER	1
#define AMTCTL_MIN_PERCENT	0
#define AMTCTL_MAX_BOOL		1
#define AMTCTL_MAX_CHOICE	0
#define AMTCTL_MAX_NUMBER	ULONG_MAX
#define AMTCTL_MAX_PERCENT	AMT_PERCENT_MAX
#define AMTCTL_LOAD_LOAD	true
#define AMTCTL_LOAD_RUNTIME	false
/* (mode is the only CHOICE) */
#define AMTCTL_CHOICES_BOOL	NULL
#define AMTCTL_CHOICES_CHOICE	amtctl_modes
#define AMTCTL_CHOICES_NUMBER	NULL
#define AMTCTL_CHOICES_PERCENT	NULL
#define AMTCTL_PARAM(n, w, t, a, h) \
	{ #n, AMTCTL_BOOL_##t, AMTCTL_LOAD_##w, AMTCTL_MIN_##t, \
	  AMTCTL_MAX_##t, a, AMTCTL_CHOICES_##t },
static const struct amtctl_param amtctl_params[] = { AMT_PARAM_LIST(AMTCTL_PARAM) };

#define AMTCTL_NR_PARAMS ARRAY_SIZE(amtctl_params)

const struct amtctl_param *amtctl_param_find(const char *name)
{
	size_t i;

	for (i = 0; i < AMTCTL_NR_PARAMS; i++)
		if (!strcmp(amtctl_params[i].name, name))
			return &amtctl_params[i];
	return NULL;
}

/* The parameters "amtctl set" can write: "enabled, mode, ..." */
const char *amtctl_param_names(void)
{
	static char names[256];
	size_t i;

	if (names[0])
		return names;
	for (i = 0; i < AMTCTL_NR_PARAMS; i++) {
		if (amtctl_params[i].load_only)
			continue;
		if (names[0])
			strncat(names, ", ", sizeof(names) - strlen(names) - 1);
		strncat(names, amtctl_params[i].name,
			sizeof(names) - strlen(names) - 1);
	}
	return names;
}

int amtctl_param_arg(char *arg, const struct amtctl_param **p, char **val)
{
	char *eq = strchr(arg, '=');

	if (!eq || eq == arg)
		return amtctl_usage("'%s' is not PARAM=VALUE (PARAM: %s)", arg,
				    amtctl_param_names());
	*eq = 0;
	*val = eq + 1;
	if (!strcmp(arg, "drain")) {
		*eq = '=';
		return amtctl_usage("'%s': drain is not a setting, use 'amtctl drain [--timeout SECONDS]'; allowed parameters: %s",
				    arg, amtctl_param_names());
	}
	*p = amtctl_param_find(arg);
	if (!*p)
		return amtctl_usage("unknown parameter '%s'; allowed parameters: %s",
				    arg, amtctl_param_names());
	if ((*p)->load_only) {
		*eq = '=';
		return amtctl_usage("'%s': %s is set at load only (modprobe " AMT_NAME " %s, or a line in /etc/modprobe.d/); allowed parameters: %s",
				    arg, (*p)->name, arg, amtctl_param_names());
	}
	if (!**val || strpbrk(*val, " \t\n\"'")) {
		*eq = '=';
		return amtctl_usage("'%s': the value must be %s", arg,
				    (*p)->allowed);
	}
	return 0;
}

/* As the kernel would take it, minus the range only it knows (RAM). */
bool amtctl_param_value_ok(const struct amtctl_param *p, const char *val)
{
	static const char *const bools[] = { "0", "1", "y", "n", "Y", "N" };
	unsigned long long v;
	char *end;
	size_t i;

	if (p->choices) {
		for (i = 0; p->choices[i]; i++)
			if (!strcmp(val, p->choices[i]))
				return true;
		return false;
	}
	if (p->is_bool) {
		for (i = 0; i < ARRAY_SIZE(bools); i++)
			if (!strcmp(val, bools[i]))
				return true;
		return false;
	}
	/* the rest are whole numbers (the kernel knows a NUMBER's top) */
	if (val[0] < '0' || val[0] > '9')
		return false;
	errno = 0;
	v = strtoull(val, &end, 0);
	return !errno && !*end && v >= p->min && v <= p->max;
}

/* ---- the stats file ---- */

static bool amtctl_is_integer(const char *s)
{
	if (*s == '-')
		s++;
	if (*s < '0' || *s > '9' || (s[0] == '0' && s[1]))
		return false;
	while (*s >= '0' && *s <= '9')
		s++;
	return !*s;
}

int amtctl_stats_read(struct amtctl_stats *st)
{
	char buf[16384], *line, *save = NULL, *name, *val, *end;
	struct amtctl_stat *s;
	int n = amtctl_read_file(AMT_STATS_FILE, buf, sizeof(buf));

	st->n = 0;
	if (n < 0)
		return -n;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		name = line + strspn(line, " \t");
		val = name + strcspn(name, " \t");
		if (!*val || val == name)
			continue;	/* not "name value": skip, not fail */
		*val++ = 0;
		val += strspn(val, " \t");
		end = val + strcspn(val, " \t");
		*end = 0;
		if (!*val || st->n >= (int)ARRAY_SIZE(st->s))
			continue;
		s = &st->s[st->n++];
		snprintf(s->name, sizeof(s->name), "%s", name);
		snprintf(s->value, sizeof(s->value), "%s", val);
		s->numeric = amtctl_is_integer(s->value);
		s->num = s->numeric ? strtod(s->value, NULL) : 0;
	}
	return 0;
}

const struct amtctl_stat *amtctl_stats_get(const struct amtctl_stats *st,
					   const char *name)
{
	int i;

	for (i = 0; i < st->n; i++)
		if (!strcmp(st->s[i].name, name))
			return &st->s[i];
	return NULL;
}

int amtctl_stats_error(int err)
{
	if (err == ENOENT && !amtctl_loaded()) {
		amtctl_err(AMT_NAME " is not loaded");
		return AMTCTL_NOT_LOADED;
	}
	if (err == ENOENT)
		amtctl_err("no %s: is debugfs mounted? (mount -t debugfs none /sys/kernel/debug)",
			   AMT_STATS_FILE);
	else if (err == EACCES || err == EPERM)
		amtctl_err("cannot read %s: %s (debugfs is for root)",
			   AMT_STATS_FILE, strerror(err));
	else
		amtctl_err("cannot read %s: %s", AMT_STATS_FILE, strerror(err));
	return AMTCTL_ERR;
}

/* ---- main ---- */

static bool amtctl_wants_help(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	const struct amtctl_cmd *c;
	int i = 1;

	amtctl_cmd_name = "";
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose")) {
			amtctl_verbose = true;
			continue;
		}
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			amtctl_print_usage(stdout);
			return AMTCTL_OK;
		}
		if (!strcmp(argv[i], "--version")) {
			printf("amtctl %s\n", AMTCTL_VERSION);
			return AMTCTL_OK;
		}
		fprintf(stderr, "amtctl: unknown option '%s'\nTry 'amtctl help'.\n",
			argv[i]);
		return AMTCTL_USAGE;
	}
	if (i >= argc) {
		fprintf(stderr, "amtctl: no command given\n\n");
		amtctl_print_usage(stderr);
		return AMTCTL_USAGE;
	}
	c = amtctl_find(argv[i]);
	if (!c) {
		fprintf(stderr, "amtctl: unknown command '%s'\nTry 'amtctl help'.\n",
			argv[i]);
		return AMTCTL_USAGE;
	}
	amtctl_cmd_name = c->name;
	if (amtctl_wants_help(argc - i, argv + i)) {
		amtctl_cmd_help(c);
		return AMTCTL_OK;
	}
	/* Commands see argv[0] = their name, as getopt() expects. */
	return c->fn(argc - i, argv + i);
}
