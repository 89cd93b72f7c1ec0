// SPDX-License-Identifier: GPL-2.0
/* A fresh load has its documented defaults, stats, tracepoints and reaper. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../lib/amt_test.h"

static const char *const keys[] = {
	"queued", "sync", "rejected", "sync_disabled", "sync_small",
	"rejected_oom_victim", "rejected_aio", "rejected_budget",
	"rejected_nomem", "reaped", "reaped_by_reaper", "reaped_by_self",
	"handoffs", "pending_mms", "pending_pages",
	"reaper_cpu_ns", "teardown_ns_max", "reaper_pid",
};

static void run(void)
{
	char path[64], buf[512];
	long total_pages = amt_mem_total_kb() / 4, pid;
	unsigned int i;
	int nice = 99;

	amt_assert(amt_unload() == 0, "unload failed");
	amt_assert(amt_load(NULL) == 0, "load without parameters failed");
	amt_assert(amt_param_get("enabled") == 1, "enabled is not on by default");
	amt_assert(amt_read_file(AMT_PARAMS "mode", buf, sizeof(buf)) > 0 &&
		   !strcmp(buf, "self\n"), "mode default '%.20s', want self", buf);
	amt_assert(amt_param_get("thresh_pages") == 16384,
		   "thresh_pages default %ld, want 64 MiB = 16384",
		   amt_param_get("thresh_pages"));
	amt_assert(amt_param_get("max_pending_pages") == total_pages / 4,
		   "max_pending_pages default %ld, want RAM/4 = %ld",
		   amt_param_get("max_pending_pages"), total_pages / 4);
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		amt_assert(amt_stat(keys[i]) >= 0, "stat '%s' missing", keys[i]);
	amt_assert(amt_write_file(AMT_STATS, "0") != 0,
		   "stats file is writable");

	pid = amt_stat("reaper_pid");
	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	amt_assert(amt_read_file(path, buf, sizeof(buf)) > 0 &&
		   !strcmp(buf, "mm_reaper\n"), "reaper pid %ld is not mm_reaper",
		   pid);
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	amt_assert(amt_read_file(path, buf, sizeof(buf)) > 0, "no reaper stat");
	/* field 19 is nice; comm has no spaces here */
	sscanf(buf, "%*d %*s %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %d",
	       &nice);
	amt_assert(nice == 19, "reaper nice %d, want 19", nice);

	amt_assert(access(AMT_TRACE "events/async_mm_teardown/mm_reaper_queue", 0) == 0,
		   "mm_reaper_queue tracepoint missing");
	amt_assert(access(AMT_TRACE "events/async_mm_teardown/mm_reaper_reap", 0) == 0,
		   "mm_reaper_reap tracepoint missing");
}

AMT_TEST("sanity", "a fresh load shows its defaults, stats, tracepoints and a nice-19 mm_reaper", 60, run)
