/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Parallel zap of a dead mm's private memory (zap.c).
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#ifndef AMT_ZAP_H
#define AMT_ZAP_H

#include <linux/mm.h>
#include <linux/mm_types.h>
#include <linux/sizes.h>
#include <linux/types.h>

/*
 * What a teardown surely gives back: anonymous pages and swap entries. File
 * pages stay cached, and shmem ones may have other users (docs/design.md,
 * "What counts as freed").
 */
static inline unsigned long amt_mm_freeable(struct mm_struct *mm)
{
	return get_mm_counter(mm, MM_ANONPAGES) +
	       get_mm_counter(mm, MM_SWAPENTS);
}

/* Only an mm with this much freeable memory is worth the helpers. */
#define AMT_ZAP_MIN_PAGES	(SZ_128M >> PAGE_SHIFT)

bool amt_zap(struct mm_struct *mm, pid_t pid, bool pinned, bool helpers);
int amt_zap_init(void);
void amt_zap_exit(void);

#endif /* AMT_ZAP_H */
