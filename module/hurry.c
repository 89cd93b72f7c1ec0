// SPDX-License-Identifier: GPL-2.0
/*
 * Deferred memory wanted now (reclaim, OOM, a memcg charge, a suspend, a
 * drain): teardowns stop giving way and run at the waiter's priority.
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
 * Context: the task that waits for the memory, whose nice is taken.
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
 * Waits until AMT_PROGRESS_PAGES are freed, nothing is deferred, or @ms passed.
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
 * Return: 0 (delayed fputs flushed), -ETIMEDOUT, or -EINTR on a fatal signal.
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
