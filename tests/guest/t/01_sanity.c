// SPDX-License-Identifier: GPL-2.0
/* A fresh load has its documented defaults, stats, tracepoints and reaper. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "amt_guest.h"

/*
 * The stats file and the parameters are exactly what module/interface.h
 * defines (amtctl is built from it too): same lines in the same order,
 * same parameters, load-only ones read-only.
 */
static void interface(void)
{
#define AMT_PARAM_NAME(n, w, t, a, h) { #n, !strcmp(#w, "LOAD") },
	static const struct {
		const char *name;
		bool load_only;
	} params[] = { AMT_PARAM_LIST(AMT_PARAM_NAME) };
	char buf[4096], *line, *save = NULL, path[320];
	unsigned int i = 0, n = 0;
	struct dirent *d;
	struct stat st;
	DIR *dir;

	amt_assert_gt(amt_read_file(AMT_STATS, buf, sizeof(buf)), 0,
		      "no stats");
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save), i++) {
		size_t len = strcspn(line, " ");

		amt_assert(amt_stat_names[i] &&
			   strlen(amt_stat_names[i]) == len &&
			   !strncmp(line, amt_stat_names[i], len),
			   "stats line %u is '%.*s', interface.h says '%s'", i,
			   (int)len, line,
			   amt_stat_names[i] ? amt_stat_names[i] : "(no more)");
	}
	amt_assert(!amt_stat_names[i], "stats file ends before '%s'",
		   amt_stat_names[i]);
	dir = opendir(AMT_PARAMS);
	amt_assert(dir, "no %s", AMT_PARAMS);
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		n++;
		for (i = 0; i < sizeof(params) / sizeof(params[0]); i++)
			if (!strcmp(params[i].name, d->d_name))
				break;
		amt_assert_lt(i, sizeof(params) / sizeof(params[0]),
			      "parameter %s is not in interface.h", d->d_name);
		snprintf(path, sizeof(path), AMT_PARAMS "%s", d->d_name);
		amt_assert(!stat(path, &st) &&
			   !!(st.st_mode & 0200) == !params[i].load_only,
			   "parameter %s is %s, interface.h says %s", d->d_name,
			   st.st_mode & 0200 ? "writable" : "read-only",
			   params[i].load_only ? "LOAD" : "RUNTIME");
	}
	closedir(dir);
	amt_assert_eq(n, sizeof(params) / sizeof(params[0]),
		      "parameters in sysfs vs interface.h");
}

static void run(void)
{
	const char *want;
	char path[64], buf[512];
	long total_pages = amt_mem_total_kb() / 4, pid;
	int nice = 99;

	amt_assert_eq(amt_unload(), 0, "unload failed");
	amt_assert_eq(amt_load(NULL), 0, "load without parameters failed");
	amt_assert_eq(amt_param_get("enabled"), 1, "enabled default");
	/*
	 * self, but reaper where self would keep the cgroup populated or
	 * RCU-tasks grace periods waiting
	 */
	want = amt_self_holds_cgroup() || amt_self_holds_tasks_rcu() ?
		"reaper\n" : "self\n";
	amt_assert(amt_read_file(AMT_PARAMS "mode", buf, sizeof(buf)) > 0 &&
		   !strcmp(buf, want), "mode default '%.20s', want %s", buf, want);
	/* refused where it would hold RCU-tasks longer than inline (RT) */
	if (amt_self_holds_tasks_rcu() && !access("/sys/kernel/realtime", F_OK)) {
		amt_assert_eq(amt_param_set("mode", "self"), EINVAL,
			      "mode=self accepted on 6.1-RT");
		amt_assert_eq(amt_unload(), 0, "unload failed");
		amt_assert_eq(amt_load("mode=self"), EINVAL,
			      "a load with mode=self succeeded on 6.1-RT");
		amt_assert_eq(amt_load(NULL), 0,
			      "load without parameters failed");
	}
	amt_assert_eq(amt_param_get("thresh_pages"), 16384,
		      "thresh_pages default, want 64 MiB");
	amt_assert_eq(amt_param_get("max_pending_pages"), total_pages / 4,
		      "max_pending_pages default, want RAM/4");
	amt_assert_eq(amt_param_get("min_available_pct"), 10,
		      "min_available_pct default");
	interface();
	amt_assert_ne(amt_write_file(AMT_STATS, "0"), 0,
		      "stats file is writable");

	pid = amt_stat("reaper_pid");
	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	amt_assert(amt_read_file(path, buf, sizeof(buf)) > 0 &&
		   !strcmp(buf, "mm_reaper\n"), "reaper pid %ld is not mm_reaper",
		   pid);
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	amt_assert_gt(amt_read_file(path, buf, sizeof(buf)), 0,
		      "no reaper stat");
	/* field 19 is nice; comm has no spaces here */
	sscanf(buf, "%*d %*s %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %d",
	       &nice);
	amt_assert_eq(nice, 19, "reaper nice");

	amt_assert_eq(access(AMT_TRACE "events/async_mm_teardown/mm_reaper_queue", 0), 0,
		      "mm_reaper_queue tracepoint missing");
	amt_assert_eq(access(AMT_TRACE "events/async_mm_teardown/mm_reaper_reap", 0), 0,
		      "mm_reaper_reap tracepoint missing");
}

AMT_TEST("sanity", "a fresh load shows its defaults, exactly the stats and parameters of interface.h, tracepoints and a nice-19 mm_reaper", 60, run)
