/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The mmput() hook (hook.c).
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#ifndef AMT_HOOK_H
#define AMT_HOOK_H

int amt_hook_init(void);
void amt_hook_exit(void);
bool amt_hook_site_known(void);

#endif /* AMT_HOOK_H */
