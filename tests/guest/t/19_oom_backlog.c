// SPDX-License-Identifier: GPL-2.0
/*
 * The global OOM killer with a backlog queued: the queue goes first.
 *
 * The eater that drives the system into OOM has grown most of the way
 * before the kills, leaving a seventh of RAM available: enough that the
 * kills are deferred (over min_available_pct, 11.25 % with its margin),
 * little enough that the eater reaches reclaim a few seconds after the
 * kills, while the starved reapers still hold the backlog; and it runs at
 * nice -20, as the burners that starve the reapers (at the dead
 * processes' share), so that they do not slow it down too. Grown from nothing after the kills, it took 24 s on
 * the RT kernel, time enough for the starved reaper (~1 % of the CPUs) to
 * drain the whole backlog first; leaving a fifth of RAM at nice 0, it
 * still lost that race once there (no shrinker scan, no OOM drain, the
 * OOM kill 50 s after the test's start).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "amt_guest.h"

#define N 3

/*
 * Map @map_mb (more than RAM), touch @pre_mb, say so on @ready, wait for
 * @go, touch the rest. oom_score_adj 1000: the OOM killer's victim.
 */
static void eater_body(unsigned long map_mb, unsigned long pre_mb,
		       int ready, int go)
{
	size_t len = map_mb * MiB, pre = pre_mb * MiB;
	char c = 1;
	void *p;

	amt_write_file("/proc/self/oom_score_adj", "1000");
	if (setpriority(PRIO_PROCESS, 0, -20))
		_exit(4);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		_exit(2);
	madvise(p, len, MADV_NOHUGEPAGE);
	amt_touch(p, pre);
	if (write(ready, &c, 1) != 1 || read(go, &c, 1) != 1)
		_exit(3);
	amt_touch((char *)p + pre, len - pre);
	_exit(0);
}

static pid_t eater_start(unsigned long map_mb, unsigned long pre_mb,
			 int *go_fd)
{
	int ready[2], go[2];
	pid_t pid;
	char c;

	amt_assert(!pipe(ready) && !pipe(go), "pipe");
	pid = fork();
	amt_assert_ge(pid, 0, "fork");
	if (!pid) {
		close(ready[0]);
		close(go[1]);
		eater_body(map_mb, pre_mb, ready[1], go[0]);
	}
	close(ready[1]);
	close(go[0]);
	amt_assert_eq(read(ready[0], &c, 1), 1,
		      "the eater died before it had touched %lu MiB", pre_mb);
	close(ready[0]);
	*go_fd = go[1];
	return pid;
}

static void run(void)
{
	long total_mb = amt_mem_total_kb() / 1024, d0, f0, k0, s0;
	pid_t pids[N], spin[AMT_BURNERS], eater;
	long pre_mb;
	char v[32], c = 1;
	int i, st, go;

	snprintf(v, sizeof(v), "%ld", amt_mem_total_kb() / 4 * 3 / 4);
	amt_assert(!amt_param_set("max_pending_pages", v), "cannot set cap");
	amt_write_file("/proc/self/oom_score_adj", "-1000");
	for (i = 0; i < N; i++)
		pids[i] = amt_hog(total_mb / 6, AMT_HOG_ANON);
	/* More than RAM even after the drain: the OOM killer must kill. */
	pre_mb = amt_mem_available_kb() / 1024 - total_mb / 7;
	if (pre_mb < 0)
		pre_mb = 0;
	amt_write_file("/proc/sys/vm/overcommit_memory", "1");
	eater = eater_start(total_mb + 256, pre_mb, &go);
	amt_note("eater grown to %ld MiB; MemAvailable %ld MiB of %ld",
		 pre_mb, amt_mem_available_kb() / 1024, total_mb);
	/*
	 * Starve the reapers so the backlog is still there: work of higher
	 * priority than the dead processes (the reapers take their share).
	 */
	amt_burners_start(spin);
	amt_burners_nice(spin, -20);
	amt_kill_reap(pids, N);
	amt_note("backlog: %ld mms, %ld pages", amt_stat("pending_mms"),
		 amt_stat("pending_pages"));
	if (amt_stat("pending_mms") == 0) {
		kill(eater, SIGKILL);
		waitpid(eater, NULL, 0);
		amt_write_file("/proc/sys/vm/overcommit_memory", "0");
		amt_skip("the reaper drained before the OOM could start");
	}
	d0 = amt_stat("oom_drains");
	s0 = amt_stat("shrinker_scans");
	f0 = amt_stat("oom_freed_pages");
	k0 = amt_vmstat("oom_kill");
	amt_assert_eq(write(go, &c, 1), 1, "cannot start the eater");
	close(go);
	amt_assert_eq(waitpid(eater, &st, 0), eater, "waitpid of the eater");
	amt_write_file("/proc/sys/vm/overcommit_memory", "0");
	amt_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
		   "the eater survived (status %#x)", st);
	amt_assert_gt(amt_vmstat("oom_kill"), k0,
		      "the OOM killer did not fire");
	amt_burners_stop(spin);
	amt_assert(!amt_drain(60000), "drain failed");
	amt_stats_note();
	/*
	 * Reclaim reaches the shrinker before the OOM killer: its boost often
	 * empties the queue first. Either way the queue must have been served.
	 */
	amt_note("served by: shrinker scans +%ld, OOM drains +%ld (%ld pages)",
		 amt_stat("shrinker_scans") - s0, amt_stat("oom_drains") - d0,
		 amt_stat("oom_freed_pages") - f0);
	amt_assert(amt_stat("oom_drains") > d0 || amt_stat("shrinker_scans") > s0,
		   "neither reclaim nor the OOM notifier asked for the backlog");
	amt_assert(amt_stat("oom_drains") == d0 || amt_stat("oom_freed_pages") > f0,
		   "the OOM notifier drained but reported nothing freed");
	amt_assert_eq(amt_stat("pending_mms"), 0, "backlog left behind");
}

AMT_TEST("oom_backlog", "a global OOM with a backlog queued: reclaim or the OOM notifier drains the queue, the OOM killer still kills the real hog, no splat", 240, run)
