// SPDX-License-Identifier: GPL-2.0
/*
 * OOM exclusion: an OOM victim's memory must come back at once, on the exit
 * path, not sit behind a nice-19 thread racing the oom_reaper.
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#include <linux/oom.h>
#include <linux/sched/coredump.h>
#include "amt.h"

/**
 * amt_oom_involved() - is this exit part of an OOM kill?
 * @tsk: the exiting task (current), holding the last reference of @mm
 * @mm: its mm
 *
 * mark_oom_victim() sets TIF_MEMDIE and signal->oom_mm on the victim thread
 * under its task_lock(), before the victim can reach exit_mm() (which takes
 * the same lock), so the victim's own final drop always sees it. The
 * oom_reaper sets MMF_OOM_SKIP once it has reaped the mm: then there is
 * little left to free, and nothing to gain by deferring.
 *
 * Return: true if the mm must be torn down inline.
 */
bool amt_oom_involved(struct task_struct *tsk, struct mm_struct *mm)
{
	return tsk_is_oom_victim(tsk) ||
	       test_tsk_thread_flag(tsk, TIF_MEMDIE) ||
	       amt_mm_flag(mm, MMF_OOM_SKIP);
}
