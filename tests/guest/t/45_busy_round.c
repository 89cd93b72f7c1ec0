// SPDX-License-Identifier: GPL-2.0
/*
 * On a machine whose CPUs are all busy, deferred teardowns give way for a
 * bounded time only (docs/design.md, "The give-way"): 12 processes of
 * 64 MiB killed together, CPU burners on every vCPU, their memory must be
 * back no later than 3 times the inline round's (rounds interleaved in one
 * boot, medians), with the burners at nice 0 and at nice -5. A reaper that
 * stayed at nice 19 got ~1.5 % of a CPU against them: its teardowns had
 * not ended after 20 s.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "amt_guest.h"

#define N 12
#define MB 64
#define ROUNDS 3
#define TOL_KB (48 * 1024)
#define LIMIT_S 20
#define BOUND 3

/*
 * One round: N grown, then burners at @nice on every vCPU, then the N
 * killed at once; the time until their memory is back (0: not within
 * LIMIT_S).
 */
static uint64_t round_ns(bool deferred, int nice)
{
	long q0 = amt_stat("queued"), base;
	uint64_t t0, limit = LIMIT_S * 1000000000ULL * amt_teardown_slow();
	pid_t pids[N], b[AMT_BURNERS];
	int i;

	amt_assert(!amt_param_set("enabled", deferred ? "1" : "0"),
		   "cannot set enabled");
	base = amt_mem_back_kb();
	for (i = 0; i < N; i++)
		pids[i] = amt_hog(MB, AMT_HOG_ANON);
	amt_burners_start(b);
	amt_burners_nice(b, nice);
	t0 = amt_now_ns();
	amt_kill_reap(pids, N);
	/* no drain: it would end the give-way (amt_hurry()) */
	while (amt_mem_back_kb() < base - TOL_KB) {
		if (amt_now_ns() - t0 > limit) {
			amt_note("%s: %ld of %ld kB back after %d s; pending_mms %ld",
				 deferred ? "deferred" : "inline",
				 amt_mem_back_kb(), base, LIMIT_S,
				 amt_stat("pending_mms"));
			t0 = 0;
			break;
		}
		usleep(2000);
	}
	if (t0)
		t0 = amt_now_ns() - t0;
	amt_burners_stop(b);
	if (deferred)
		amt_assert_eq(amt_stat("queued") - q0, N, "queued");
	/* what is left (a round over the limit) goes before the next */
	amt_assert(!amt_drain(120000), "drain failed");
	return t0;
}

static void busy(int nice)
{
	uint64_t on[ROUNDS], off[ROUNDS], m_on, m_off;
	int i;

	for (i = 0; i < ROUNDS; i++) {
		off[i] = round_ns(false, nice);
		on[i] = round_ns(true, nice);
		amt_assert(off[i], "inline, the memory was not back in %d s",
			   LIMIT_S);
		amt_assert(on[i], "burners at nice %d: deferred teardowns held their memory over %d s (inline %.0f ms)",
			   nice, LIMIT_S, off[i] / 1e6);
	}
	m_off = amt_median(off, ROUNDS);
	m_on = amt_median(on, ROUNDS);
	amt_note("burners at nice %d: %d x %d MiB back in %.0f ms inline, %.0f ms deferred (%.2fx, medians of %d)",
		 nice, N, MB, m_off / 1e6, m_on / 1e6, (double)m_on / m_off,
		 ROUNDS);
	amt_assert_le(m_on, BOUND * m_off,
		      "burners at nice %d: memory back (ns) deferred, over %dx inline's",
		      nice, BOUND);
}

static void run(void)
{
	char cap[32];

	/* room for all of them on the reaper's queue */
	snprintf(cap, sizeof(cap), "%ld", amt_mem_total_kb() / 4 * 3 / 4);
	amt_assert(!amt_param_set("max_pending_pages", cap), "cannot set cap");
	busy(0);
	busy(-5);
	amt_assert(!amt_param_set("enabled", "1"), "cannot set enabled");
}

AMT_TEST_BOTH("busy_round", "with CPU burners on every vCPU (nice 0, then -5), the memory of 12 x 64 MiB killed together is back within 3x the inline round's time: a deferred teardown gives way for a bounded time only", 400, run)
