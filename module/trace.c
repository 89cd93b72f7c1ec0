// SPDX-License-Identifier: GPL-2.0
/*
 * Instantiates the tracepoints declared in amt_trace.h.
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#define CREATE_TRACE_POINTS
#include "amt_trace.h"
