/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The give-way of both modes (giveway.c).
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#ifndef AMT_GIVEWAY_H
#define AMT_GIVEWAY_H

#include <linux/jiffies.h>

/*
 * The give-way: how long a deferred teardown lets the tasks around it (the
 * parent woken by exit_notify(), siblings killed together on their way
 * there) have the CPU first, asleep while its CPU has others to run
 * (amt_give_way()); then it competes as the inline teardown would have:
 * at the dying task's nice (self.c), or the reapers at the catch-up nice
 * of the teardowns they have (reaper.c, amt_catchup_nice()). Ended at once
 * when reclaim, the OOM notifier or a drain asks for the memory
 * (amt_give_way_end()). Asleep, not at nice 19: on 6.1's CFS a task
 * reniced after a nice-19 period keeps the vruntime it gained there and
 * waits it off behind its neighbours (docs/design.md, "The give-way").
 */
#define AMT_YIELD	(HZ / 100 ?: 1)

void amt_give_way_init(void);
void amt_give_way(bool (*waiting)(void *), void *arg);
void amt_give_way_end(void);

#endif /* AMT_GIVEWAY_H */
