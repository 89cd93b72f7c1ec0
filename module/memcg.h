/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Deferred memory in a memory-limited cgroup (memcg.c).
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#ifndef AMT_MEMCG_H
#define AMT_MEMCG_H

#include <linux/mm_types.h>
#include "policy.h"

void amt_memcg_facts(struct mm_struct *mm, unsigned long rss,
		     struct amt_exit_facts *f);
int amt_memcg_init(void);
void amt_memcg_exit(void);

#endif /* AMT_MEMCG_H */
