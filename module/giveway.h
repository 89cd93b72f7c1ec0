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
 * The give-way: a deferred teardown first sleeps while its CPU has other
 * tasks to run (amt_give_way()), for AMT_YIELD at most, so that the tasks
 * around it (the parent woken by exit_notify(), siblings killed together)
 * run first. Then it competes as the inline teardown would have: at the
 * dying task's nice (self.c), or the reapers at the catch-up nice
 * (amt_catchup_nice()). amt_give_way_end() ends it when reclaim, the OOM
 * notifier, a memcg charge or a drain wants the memory. Asleep, not at
 * nice 19: 6.1's CFS keeps the vruntime a task gained at nice 19 after a
 * renice, and it then waits that off behind its neighbours
 * (docs/design.md, "The give-way").
 */
#define AMT_YIELD	(HZ / 100 ?: 1)

void amt_give_way_init(void);
void amt_give_way(bool (*waiting)(void *), void *arg);
void amt_give_way_end(void);

#endif /* AMT_GIVEWAY_H */
