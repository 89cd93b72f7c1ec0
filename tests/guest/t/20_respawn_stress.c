// SPDX-License-Identifier: GPL-2.0
/*
 * Kill-and-respawn faster than the reaper drains, with the cap at 3/4 of
 * RAM: no OOM kill with oom_guard on; the same loop with it off shows the
 * stress is real (OOM kills or a queue far beyond the live set).
 */
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
#include "amt_guest.h"

#define SLOTS 2
#define ROUNDS 2

struct result {
	long kills, peak_mb, died;
};

static struct result stress(unsigned long mb)
{
	long k0 = amt_vmstat("oom_kill");
	struct result r = { 0 };
	pid_t slot[SLOTS] = { 0 }, spin[AMT_BURNERS];
	int i, s;

	/*
	 * A busy machine, with work of higher priority than the processes
	 * that die (amt_starve_start()): the reapers get little CPU.
	 */
	amt_starve_start(spin);
	amt_hog_oom_score_adj = "1000";
	for (i = 0; i < ROUNDS; i++) {
		for (s = 0; s < SLOTS; s++) {
			if (slot[s])
				amt_kill_wait(slot[s]);
			slot[s] = amt_hog_try(mb, AMT_HOG_ANON);
			if (!slot[s])
				r.died++;
			amt_hog_demote(slot[s]);
		}
	}
	for (s = 0; s < SLOTS; s++)
		if (slot[s])
			amt_kill_wait(slot[s]);
	amt_hog_oom_score_adj = NULL;
	r.peak_mb = amt_stat("pending_pages_peak") / 256;
	/*
	 * The burners' work is done: left running, they would hold the
	 * reapers at ~1 % of a CPU for the whole drain (minutes on the
	 * debug kernel), which tests nothing more.
	 */
	amt_starve_stop(spin);
	amt_assert(!amt_drain(60000), "drain failed");
	r.kills = amt_vmstat("oom_kill") - k0;
	return r;
}

static void run(void)
{
	unsigned long mb = amt_mem_total_kb() / 1024 * 3 / 10;
	struct result off, on;
	char cap[32];

	snprintf(cap, sizeof(cap), "%ld", amt_mem_total_kb() / 4 * 3 / 4);
	amt_write_file("/proc/self/oom_score_adj", "-1000");

	amt_assert(!amt_param_set("oom_guard", "0"), "cannot set oom_guard");
	amt_assert(!amt_param_set("max_pending_pages", cap), "cannot set cap");
	off = stress(mb);
	amt_assert(!amt_param_set("oom_guard", "1"), "cannot set oom_guard");
	amt_assert(!amt_param_set("max_pending_pages", cap), "cannot set cap");
	on = stress(mb);
	amt_stats_note();
	amt_note("%d x %d respawns of %lu MiB: guard off: %ld OOM kills, queue peak %ld MiB; guard on: %ld OOM kills, queue peak %ld MiB",
		 SLOTS, ROUNDS, mb, off.kills, off.peak_mb, on.kills, on.peak_mb);
	amt_assert(off.kills > 0 || off.peak_mb >= (long)mb * 2,
		   "the stress is not real: without the guard, no OOM kill and the queue peaked at %ld MiB",
		   off.peak_mb);
	amt_assert_eq(on.kills, 0, "OOM kills with oom_guard on");
}

AMT_TEST("respawn_stress", "kill-and-respawn faster than the reaper drains causes no OOM kill with oom_guard on (control: with it off, the stress does cause kills or queue growth)", 600, run)
