/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mode=self: the dying task tears its own mm down (self.c).
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#ifndef AMT_SELF_H
#define AMT_SELF_H

#include <linux/sched.h>

const char *amt_self_cost(void);
const char *amt_self_refusal(bool hooked);
bool amt_self_possible(struct mm_struct *mm);
void amt_self_teardown(struct task_struct *tsk);

#endif /* AMT_SELF_H */
