/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The mm_reaper threads (reaper.c).
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#ifndef AMT_REAPER_H
#define AMT_REAPER_H

#include <linux/atomic.h>
#include <linux/sched.h>
#include "interface.h"
#include "pending.h"

int amt_reaper_start(unsigned int n);
void amt_reaper_stop(void);
void amt_reaper_wake_late(bool on);
bool amt_reaper_wakes_late(void);
void amt_reaper_queue_exit(struct amt_entry *e);
void amt_reaper_owe_wake(void);
void amt_reaper_wake(void);
bool amt_reaper_wake_owed(void);
extern atomic_t amt_wake_owed;
void amt_reaper_press(int nice);
bool amt_is_reaper(struct task_struct *t);
struct task_struct *amt_reaper_task(void);
u64 amt_reaper_cpu_ns(void);
unsigned int amt_reaper_count(void);

#endif /* AMT_REAPER_H */
