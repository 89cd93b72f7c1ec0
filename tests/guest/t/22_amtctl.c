// SPDX-License-Identifier: GPL-2.0
/*
 * amtctl, the admin CLI, against the real module: every command, and the
 * kernel's refusals (bad values, not loaded, already loaded, busy, hook
 * taken, not root, not installed) turned into messages that say what to do.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include "amt_guest.h"

#define AMTCTL "/usr/bin/amtctl"
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define NOBODY 65534

struct out {
	char cmd[256];
	int status;		/* exit status; 128 + signal if killed */
	char out[16384];
	char err[8192];
};

static struct out o;

/* Diagnostics for the console log; the text is left as it was. */
static void note_lines(const char *prefix, const char *text)
{
	const char *line, *nl;

	for (line = text; *line; line = nl + 1) {
		nl = strchrnul(line, '\n');
		amt_note("%s%.*s", prefix, (int)(nl - line), line);
		if (!*nl)
			break;
	}
}

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void show_output(void)
{
	note_lines("  stdout: ", o.out);
}

/* Append what is readable on @fd to @buf; false at EOF. */
static bool drain_fd(int fd, char *buf, size_t len)
{
	size_t have = strlen(buf);
	char junk[4096];
	ssize_t n;

	if (have < len - 1)
		n = read(fd, buf + have, len - 1 - have);
	else
		n = read(fd, junk, sizeof(junk));	/* full: discard */
	if (n < 0 && errno == EINTR)
		return true;
	if (n <= 0)
		return false;
	if (have < len - 1)
		buf[have + n] = 0;
	return true;
}

/*
 * Run "amtctl @args" (split at spaces) as @uid, capture its stdout and
 * stderr into o, and return its exit status.
 */
static int amtctl_as(uid_t uid, const char *args)
{
	char buf[256], *argv[32], *tok, *save = NULL;
	int op[2], ep[2], n = 0, status = 0;
	struct pollfd pfd[2];
	bool open_out = true, open_err = true;
	uint64_t deadline = amt_now_ns() + 120ULL * 1000000000ULL;
	pid_t pid;

	snprintf(o.cmd, sizeof(o.cmd), "amtctl %s", args);
	o.out[0] = o.err[0] = 0;
	snprintf(buf, sizeof(buf), "%s", args);
	argv[n++] = "amtctl";
	for (tok = strtok_r(buf, " ", &save); tok && n < 31;
	     tok = strtok_r(NULL, " ", &save))
		argv[n++] = tok;
	argv[n] = NULL;

	if (pipe2(op, O_CLOEXEC) || pipe2(ep, O_CLOEXEC))
		amt_fail("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		amt_fail("fork: %s", strerror(errno));
	if (!pid) {
		dup2(op[1], 1);
		dup2(ep[1], 2);
		if (uid && (setgroups(0, NULL) || setgid(uid) || setuid(uid)))
			_exit(125);
		execv(AMTCTL, argv);
		_exit(126);
	}
	close(op[1]);
	close(ep[1]);
	while (open_out || open_err) {
		pfd[0] = (struct pollfd){ open_out ? op[0] : -1, POLLIN, 0 };
		pfd[1] = (struct pollfd){ open_err ? ep[0] : -1, POLLIN, 0 };
		if (amt_now_ns() > deadline) {
			kill(pid, SIGKILL);
			break;
		}
		if (poll(pfd, 2, 1000) <= 0)
			continue;
		if (pfd[0].revents && !drain_fd(op[0], o.out, sizeof(o.out)))
			open_out = false;
		if (pfd[1].revents && !drain_fd(ep[0], o.err, sizeof(o.err)))
			open_err = false;
	}
	close(op[0]);
	close(ep[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	o.status = WIFEXITED(status) ? WEXITSTATUS(status) :
		   128 + WTERMSIG(status);
	amt_note("%s%s -> exit %d", uid ? "(uid 65534) " : "", o.cmd,
		 o.status);
	if (count_lines(o.out) <= 12)
		show_output();	/* short ones: status, set, watch, drain */
	note_lines("  stderr: ", o.err);
	return o.status;
}

static bool has(const char *needle)
{
	return strstr(o.out, needle) || strstr(o.err, needle);
}

/* "amtctl @args" as @uid must exit @want and print @needle (if given). */
static void check_as(uid_t uid, int want, const char *needle,
		     const char *args)
{
	amtctl_as(uid, args);
	if (o.status == 126)
		amt_fail("cannot exec " AMTCTL " (scripts/build-amtctl.sh not run?)");
	if (o.status != want) {
		const char *first = o.err[0] ? o.err : o.out;
		int len = strcspn(first, "\n");

		show_output();
		amt_fail("'%s' exited %d, want %d: %.*s", o.cmd, o.status, want,
			 len > 160 ? 160 : len, first);
	}
	if (needle && !has(needle)) {
		show_output();
		amt_fail("'%s' did not say \"%s\"", o.cmd, needle);
	}
}

static void check(int want, const char *needle, const char *args)
{
	check_as(0, want, needle, args);
}

static void want_also(const char *needle)
{
	if (!has(needle)) {
		show_output();
		amt_fail("'%s' did not say \"%s\"", o.cmd, needle);
	}
}

/* The value after "label:" in status output. */
static long status_value(const char *label)
{
	char key[64], *p;

	snprintf(key, sizeof(key), "\n%s:", label);
	p = strstr(o.out, key);
	return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

static const char *const params[] = {
	"enabled", "thresh_pages", "max_pending_pages", "min_available_pct",
};

static void snapshot(long *v)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(params); i++)
		v[i] = amt_param_get(params[i]);
}

static void unchanged(const long *before)
{
	long now[ARRAY_SIZE(params)];
	unsigned int i;

	snapshot(now);
	for (i = 0; i < ARRAY_SIZE(params); i++)
		amt_assert_eq(now[i], before[i], "'%s' changed %s", o.cmd,
			      params[i]);
}

static const struct {
	const char *args, *says;
} refused[] = {
	{ "set thresh_pages=0", "thresh_pages must be a number of pages from 1 to all RAM" },
	{ "set max_pending_pages=lots", "max_pending_pages must be a number of pages from 1" },
	{ "set enabled=2", "enabled must be 1 or 0 (y/n)" },
	{ "set unknown=1", "unknown parameter 'unknown'; allowed parameters: enabled, mode, thresh_pages, max_pending_pages" },
	{ "set drain=5", "use 'amtctl drain [--timeout SECONDS]'; allowed parameters: enabled, mode, thresh_pages" },
	{ "set reapers=4", "reapers is set at load only (modprobe async_mm_teardown reapers=4" },
	/* one bad value: nothing at all is written */
	{ "set thresh_pages=2048 enabled=maybe", "enabled must be 1 or 0" },
	{ "set thresh_pages=2048 min_available_pct=51", "min_available_pct must be a percentage of RAM from 0 to 50" },
	{ "set min_available_pct=-1", "min_available_pct must be a percentage of RAM from 0 to 50" },
	{ "set", "give PARAM=VALUE" },
	{ "set thresh_pages", "is not PARAM=VALUE" },
};

static void commands_loaded(void)
{
	long before[ARRAY_SIZE(params)];
	unsigned int i;
	pid_t pid;
	int fd;

	/* Help and usage errors. */
	check(0, "exit status:", "help");
	want_also("4  drain: timed out");
	check(0, "usage: amtctl load [--path FILE.ko]", "load --help");
	check(0, "usage: amtctl drain", "help drain");
	check(2, "unknown command 'frobnicate'", "frobnicate");
	check(2, "takes no arguments", "status extra");
	check(2, "no command given", "");

	/* Status of the loaded module. */
	check(0, "state:              loaded", "status");
	want_also("\nenabled:");
	want_also("\nthresh_pages:       16384 (64.0 MiB)");
	want_also("\nmax_pending_pages:");
	want_also("\nversion:");
	amt_assert(!strstr(o.out, "drain"), "status shows the write-only drain");
	amt_assert_gt(status_value("reaper pid"), 0,
		      "status shows no reaper pid");
	amt_assert_eq(status_value("reaper pid"), amt_stat("reaper_pid"),
		      "reaper pid: status vs stats");

	/* Good values are written and read back. */
	check(0, "thresh_pages: 16384 -> 4096",
	      "set thresh_pages=4096 enabled=n max_pending_pages=8192");
	amt_assert_eq(amt_param_get("thresh_pages"), 4096, "set");
	amt_assert_eq(amt_param_get("enabled"), 0, "set");
	amt_assert_eq(amt_param_get("max_pending_pages"), 8192, "set");
	check(0, "enabled: N -> Y", "set enabled=y");
	amt_assert_eq(amt_param_get("enabled"), 1, "enabled=y not stored");
	/* a number that may be 0 */
	check(0, "min_available_pct: 10 -> 0", "set min_available_pct=0");
	amt_assert_eq(amt_param_get("min_available_pct"), 0,
		      "min_available_pct=0 not stored");

	/* Bad values: refused before anything is written. */
	for (i = 0; i < ARRAY_SIZE(refused); i++) {
		snapshot(before);
		check(2, refused[i].says, refused[i].args);
		unchanged(before);
	}
	/* Past RAM: only the kernel knows; its own reason is shown. */
	snapshot(before);
	check(1, "the kernel refused thresh_pages=99999999999999",
	      "set thresh_pages=99999999999999");
	want_also("kernel: async_mm_teardown: thresh_pages: invalid value '99999999999999': use a number of pages from 1 to");
	unchanged(before);
	amt_reset_defaults();

	/* Statistics in three formats. */
	check(0, "pending_pages_peak", "stats");
	want_also(" MiB)\n");
	want_also(" ms)\n");
	check(0, "\"queued\": ", "stats --json");
	amt_assert(o.out[0] == '{' && strstr(o.out, "}\n") &&
		   strstr(o.out, "\"reaper_pid\": ") &&
		   strstr(o.out, "\"reaper_pid\": ")[14] >= '1' &&
		   strstr(o.out, "\"reaper_pid\": ")[14] <= '9',
		   "stats --json is not one object of numbers: %.80s", o.out);
	check(0, "# TYPE async_mm_teardown_queued_total counter",
	      "stats --prometheus");
	want_also("# TYPE async_mm_teardown_pending_pages gauge");
	want_also("# TYPE async_mm_teardown_reaper_pid gauge");
	want_also("# TYPE async_mm_teardown_teardown_seconds_max gauge");
	want_also("\nasync_mm_teardown_rejected_total{reason=\"aio\"} ");
	/* every line the module prints is one amtctl knows, with its type */
	{
		const char *u = strstr(o.out, "not known to this amtctl");

		amt_assert(!u, "amtctl does not know a stat the module prints: %.160s",
			   u - o.out > 120 ? u - 120 : o.out);
	}
	want_also("# TYPE async_mm_teardown_reaped_by_self_total counter");
	want_also("# TYPE async_mm_teardown_handoffs_total counter");
	want_also("# TYPE async_mm_teardown_self_seconds_total counter");
	check(2, "not both", "stats --json --prometheus");

	/* Drain after a real deferred exit. */
	pid = amt_hog(128, AMT_HOG_ANON);
	amt_kill_wait(pid);
	check(0, "drained in", "drain --timeout 60");
	amt_assert_eq(amt_stat("pending_mms"), 0, "mms queued after the drain");
	check(2, "invalid timeout '0'", "drain --timeout 0");
	check(2, "needs a value", "drain --timeout");
	/* A 1 ms drain behind a large teardown times out: exit 4. */
	pid = amt_hog(512, AMT_HOG_ANON);
	amt_kill_wait(pid);
	amtctl_as(0, "drain --timeout 0.001");
	if (o.status == 0) {
		amt_note("the reaper beat a 1 ms drain: timeout path not exercised");
	} else {
		amt_assert(o.status == 4 && has("timed out after 0.001 s"),
			   "1 ms drain behind 512 MiB: exit %d, '%.100s'",
			   o.status, o.err);
	}
	check(0, "drained in", "drain");

	/* Live rates: a header and COUNT lines. */
	check(0, "queued/s", "watch -i 1 -n 2");
	amt_assert_eq(count_lines(o.out), 3, "lines watch -n 2 printed");
	check(2, "invalid count '0'", "watch -n 0");

	/* Not root: refused with the reason, nothing changed. */
	check_as(NOBODY, 1, "must be root", "set enabled=0");
	amt_assert_eq(amt_param_get("enabled"), 1,
		      "a non-root set changed enabled");
	check_as(NOBODY, 1, "must be root (CAP_SYS_MODULE)", "unload");
	amt_assert(amt_loaded(), "a non-root unload unloaded");
	check_as(NOBODY, 1, "debugfs is for root", "stats");

	/* Unload while busy: an open stats file pins the module. */
	fd = open(AMT_STATS, O_RDONLY);
	if (fd < 0)
		amt_fail("open %s: %s", AMT_STATS, strerror(errno));
	amtctl_as(0, "unload");
	close(fd);
	if (o.status == 0)
		amt_fail("unload succeeded while the stats file was open");
	amt_assert(o.status == 1 && has("module busy (a drain is in progress?"),
		   "busy unload: exit %d, '%.100s'", o.status, o.err);
	amt_assert(amt_loaded(), "module gone after a refused unload");
}

static void commands_unloaded(void)
{
	char needle[256];
	struct utsname u;

	check(0, "unloaded async_mm_teardown", "unload");
	amt_assert(!amt_loaded(), "module still there after unload");
	check(3, "async_mm_teardown is not loaded", "unload");
	check(3, "state:              not loaded", "status");
	check(3, "not loaded", "stats");
	check(3, "not loaded", "set enabled=1");
	check(3, "not loaded", "drain");
	check(3, "not loaded", "watch -n 1");

	/*
	 * Hook taken: with function tracing off, registering the module's
	 * PERMANENT ftrace_ops fails with EBUSY, as when a livepatch owns
	 * mmput().
	 */
	if (amt_write_file("/proc/sys/kernel/ftrace_enabled", "0")) {
		amt_note("cannot turn ftrace_enabled off: hook-busy path not exercised");
	} else {
		amtctl_as(0, "load --path " AMT_KO);
		amt_write_file("/proc/sys/kernel/ftrace_enabled", "1");
		amt_assert(o.status == 1 &&
			   has("cannot hook mmput(): function tracing is off (kernel.ftrace_enabled=0)"),
			   "load with ftrace off: exit %d, '%.120s'", o.status,
			   o.err);
		amt_assert(!amt_loaded(), "loaded with function tracing off");
	}

	/* The kernel refuses a parameter: its own reason is printed. */
	check(1, "the kernel refused the load (given: thresh_pages=0)",
	      "load --path " AMT_KO " thresh_pages=0");
	want_also("kernel: async_mm_teardown: thresh_pages: invalid value '0': use a number of pages from 1 to");
	amt_assert(!amt_loaded(), "loaded despite thresh_pages=0");
	check(2, "drain is not a setting", "load --path " AMT_KO " drain=100");
	check(2, "unknown parameter 'bogus'", "load --path " AMT_KO " bogus=1");
	check(1, "/amt/nope.ko: No such file", "load --path /amt/nope.ko");

	/* No /lib/modules in the guest: not installed for this kernel. */
	uname(&u);
	snprintf(needle, sizeof(needle),
		 "async_mm_teardown is not installed for kernel %s: install the async-mm-teardown-dkms package or run dkms install",
		 u.release);
	check(1, needle, "load");
	amt_assert(!amt_loaded(), "loaded without a module file");

	check(0, "loaded " AMT_KO, "load --path " AMT_KO);
	amt_assert(amt_loaded(), "module not there after load");
	amt_assert_eq(amt_param_get("thresh_pages"), 16384,
		      "load without parameters");
	amt_assert_eq(amt_param_get("enabled"), 1, "load without parameters");
	check(1, "async_mm_teardown is already loaded", "load --path " AMT_KO);
	check(1, "already loaded", "load");
	check(0, "state:              loaded", "status");
}

static void run(void)
{
	if (access(AMTCTL, X_OK))
		amt_fail("no " AMTCTL " in the guest (scripts/build-amtctl.sh not run?)");
	commands_loaded();
	commands_unloaded();
	/* Left loaded, with the defaults it loaded with. */
}

AMT_TEST("amtctl", "amtctl drives the module (status, set, stats, watch, drain, load, unload) and explains every refusal", 300, run)
