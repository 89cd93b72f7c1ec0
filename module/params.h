/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The module's tunables, read wherever they apply; defined and checked in
 * params.c (interface.h says what each means and allows).
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#ifndef AMT_PARAMS_H
#define AMT_PARAMS_H

#include <linux/types.h>

extern bool amt_enabled;
extern unsigned long amt_thresh_pages;
extern unsigned long amt_max_pending_pages;
extern unsigned long amt_max_pending_gen;
extern bool amt_oom_guard;
extern bool amt_parallel;
extern bool amt_zap_pinned;
extern unsigned int amt_min_avail_pct;
extern unsigned int amt_nr_reapers;

/* in the order of interface.h's AMT_MODE_NAMES */
enum amt_mode { AMT_MODE_REAPER, AMT_MODE_SELF, AMT_NR_MODES };
extern int amt_mode;

void amt_params_defaults(void);
int amt_params_mode_at_load(const char *refused, const char *cost);
void amt_params_live(bool on);
void amt_params_report(void);

#endif /* AMT_PARAMS_H */
