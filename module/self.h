/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mode=self: the dying task tears its own mm down (self.c).
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#ifndef AMT_SELF_H
#define AMT_SELF_H

#include <linux/sched.h>
#include "pending.h"

void amt_self_allow_mempolicy(void);
bool amt_self_possible(struct mm_struct *mm);
void amt_self_stash(struct amt_entry *e, struct task_struct *leader);
struct task_struct *amt_self_leader(void);
void amt_self_teardown(struct task_struct *tsk);

#endif /* AMT_SELF_H */
