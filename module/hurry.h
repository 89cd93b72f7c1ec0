/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Deferred memory wanted now (hurry.c).
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#ifndef AMT_HURRY_H
#define AMT_HURRY_H

void amt_hurry(void);
unsigned long amt_hurry_progress(unsigned int ms);
int amt_drain(unsigned int timeout_ms);

#endif /* AMT_HURRY_H */
