// SPDX-License-Identifier: GPL-2.0
/*
 * Deferred memory wanted now, by reclaim, the OOM notifier, a memcg charge
 * at its limit, a suspend or a drain: every deferred teardown, the
 * reapers' and the self ones alike, stops giving way and runs at the
 * priority of whoever waits.
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#include <linux/jiffies.h>
#include <linux/sched.h>
#include <linux/sizes.h>
#include "fput.h"
#include "giveway.h"
#include "hurry.h"
#include "pending.h"
#include "reaper.h"
#include "stash.h"
#include "stats.h"

/**
 * amt_hurry() - every deferred teardown at the waiter's priority, now
 *
 * In the task that waits for the memory: queued memory is the cheapest
 * to get back (its owners are dead), but not behind every runnable task,
 * nor behind work of the waiter's priority. The give-way ends (both
 * modes), and the reapers run at the caller's nice, 0 at least, until
 * their work is done.
 */
void amt_hurry(void)
{
	amt_give_way_end();
	amt_reaper_press(task_nice(current));
}

/* Enough freed for an allocation retry to have a chance: 1 MiB. */
#define AMT_PROGRESS_PAGES (SZ_1M >> PAGE_SHIFT)

/**
 * amt_hurry_progress() - hurry, and wait for some memory to come back
 * @ms: the most to wait
 *
 * Returns as soon as deferred teardowns have freed AMT_PROGRESS_PAGES
 * since the call (ended teardowns, or those in flight unmapping), when
 * nothing is deferred, or after @ms. Only pages freed during the wait
 * count, and only pages that really leave (amt_progress()): an OOM
 * invocation that sees no new progress gets 0 and may kill.
 *
 * Return: pages freed during the wait.
 */
unsigned long amt_hurry_progress(unsigned int ms)
{
	unsigned long start = amt_progress(), got = 0;
	unsigned long end = jiffies + msecs_to_jiffies(ms);

	if (!amt_pending_mms())
		return 0;
	amt_handoff(AMT_HANDOFF_STUCK, NULL);
	amt_hurry();
	while (time_before(jiffies, end)) {
		/* woken when a teardown ends; polled for those in flight */
		amt_wait_ended(msecs_to_jiffies(10));
		got = amt_progress() - start;
		if (got >= AMT_PROGRESS_PAGES || !amt_pending_mms())
			break;
	}
	return got;
}

/**
 * amt_drain() - wait until everything deferred before the call has ended
 * @timeout_ms: give up after this long
 *
 * An epoch, not a quiet moment: exits deferred after the call do not hold
 * it up. Stashes whose task is stuck before exit_notify() go to the
 * reaper, the rest are hurried. Then the delayed fputs the teardowns left
 * are flushed, so mapped files are closed on return.
 *
 * Return: 0; -ETIMEDOUT; -EINTR on a fatal signal.
 */
int amt_drain(unsigned int timeout_ms)
{
	u64 epoch = amt_epoch();
	long left;

	amt_stash_handoff(AMT_HANDOFF_STUCK);
	/* also for exits queued quietly whose task is not past exit_notify() */
	amt_reaper_wake_owed();
	amt_hurry();
	left = amt_wait_epoch(epoch, msecs_to_jiffies(timeout_ms));
	amt_stat_inc(AMT_STAT_drains);
	if (left > 0) {
		amt_flush_fput();
		return 0;
	}
	amt_stat_inc(AMT_STAT_drain_timeouts);
	return left ? -EINTR : -ETIMEDOUT;
}
