/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Suspend and hibernation (suspend.c): no self teardown runs unseen by
 * the freezer.
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#ifndef AMT_SUSPEND_H
#define AMT_SUSPEND_H

int amt_suspend_init(void);
void amt_suspend_exit(void);

#endif /* AMT_SUSPEND_H */
