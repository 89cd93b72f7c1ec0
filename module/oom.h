/* SPDX-License-Identifier: GPL-2.0 */
/*
 * OOM exclusion, OOM-time drain, reclaim visibility (oom.c).
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#ifndef AMT_OOM_H
#define AMT_OOM_H

#include <linux/mm_types.h>
#include <linux/sched.h>

bool amt_oom_ring_take(struct mm_struct *mm);
bool amt_oom_involved(struct task_struct *tsk, struct mm_struct *mm,
		      bool ring);
bool amt_under_pressure(void);
bool amt_low_memory(void);
int amt_oom_init(void);
void amt_oom_exit(void);

#endif /* AMT_OOM_H */
