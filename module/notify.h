/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The hook after exit_notify() (notify.c).
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#ifndef AMT_NOTIFY_H
#define AMT_NOTIFY_H

#include <linux/types.h>

bool amt_notify_available(void);
void amt_notify_init(void);
void amt_notify_exit(void);

#endif /* AMT_NOTIFY_H */
