/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The module's tunables, read wherever they apply; defined and checked in
 * main.c (see MODULE_PARM_DESC there for their meaning).
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#ifndef AMT_PARAMS_H
#define AMT_PARAMS_H

#include <linux/types.h>

extern bool amt_enabled;
extern unsigned long amt_thresh_pages;
extern unsigned long amt_max_pending_pages;
extern bool amt_oom_guard;
extern unsigned int amt_min_avail_pct;

enum amt_mode { AMT_MODE_REAPER, AMT_MODE_SELF };
extern int amt_mode;

#endif /* AMT_PARAMS_H */
