/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The debugfs statistics file (debugfs.c).
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#ifndef AMT_DEBUGFS_H
#define AMT_DEBUGFS_H

int amt_debugfs_init(void);
void amt_debugfs_exit(void);

#endif /* AMT_DEBUGFS_H */
