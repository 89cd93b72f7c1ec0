/* SPDX-License-Identifier: GPL-2.0 */
/*
 * async_mm_teardown: what every file of the module shares: the invariant
 * checks. Each file has its own header for what it offers (hook.h for
 * hook.c); they include each other without a cycle
 * (scripts/check-includes.sh).
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#ifndef AMT_H
#define AMT_H

#include <linux/bug.h>

/*
 * An invariant of ours. The debug build (AMT_DEBUG=1, used on the KASAN and
 * lockdep kernel of make check-debug) checks it and WARNs; production
 * builds only type-check the expression, never evaluate it: no side
 * effects inside.
 */
#ifdef AMT_DEBUG
#define AMT_CHECK(cond) WARN_ON_ONCE(!(cond))
#else
#define AMT_CHECK(cond) BUILD_BUG_ON_INVALID(!(cond))
#endif

#endif /* AMT_H */
