/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stashes (stash.c): deferred mms kept for a dying task until it is past
 * exit_notify(), in both modes.
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#ifndef AMT_STASH_H
#define AMT_STASH_H

#include <linux/sched.h>
#include "pending.h"

void amt_stash_allow_mempolicy(void);
bool amt_stash_mempolicy_ok(void);
struct task_struct *amt_stash_leader(void);
bool amt_stash(struct amt_entry *e, struct task_struct *leader);
unsigned int amt_stash_handoff(enum amt_handoff_which which);
void amt_stash_stop(void);

#endif /* AMT_STASH_H */
