/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Files closed by the time a drain returns (fput.c).
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#ifndef AMT_FPUT_H
#define AMT_FPUT_H

void amt_flush_fput(void);
void amt_fput_init(void);
void amt_fput_exit(void);

#endif /* AMT_FPUT_H */
