// SPDX-License-Identifier: GPL-2.0
/*
 * The give-way of a deferred teardown, in both modes (AMT_YIELD).
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#include <linux/delay.h>
#include <linux/sched/stat.h>
#include "giveway.h"

/* jiffies of the last amt_give_way_end(); set at init to long ago */
static unsigned long amt_end_at;

/**
 * amt_give_way_init() - no give-way has been ended yet
 */
void amt_give_way_init(void)
{
	amt_end_at = jiffies - AMT_YIELD - 2;
}

/* Within AMT_YIELD of the last end (+1: its tick was partly gone). */
static bool amt_give_way_ended(void)
{
	return time_before(jiffies, READ_ONCE(amt_end_at) + AMT_YIELD + 1);
}

/**
 * amt_give_way_end() - end every give-way now: the memory is wanted
 *
 * For AMT_YIELD from now none starts; those under way end after their nap.
 */
void amt_give_way_end(void)
{
	WRITE_ONCE(amt_end_at, jiffies);
}

/**
 * amt_give_way() - let the tasks around a teardown have the CPU first
 * @waiting: true while the caller still has a teardown to start
 * @arg: for @waiting
 *
 * Naps in TASK_IDLE: no load, and a dying task's SIGKILL does not end one.
 */
void amt_give_way(bool (*waiting)(void *), void *arg)
{
	unsigned long end = jiffies + AMT_YIELD + 1;

	if (single_task_running() || amt_give_way_ended())
		return;
	while (waiting(arg)) {
		usleep_range_state(100, 200, TASK_IDLE);
		if (single_task_running() || !time_before(jiffies, end) ||
		    amt_give_way_ended())
			break;
	}
}
