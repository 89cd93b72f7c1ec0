/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The interface of the guest tests' fixture module (amt_helper.c), shared
 * with the tests that use it.
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#ifndef AMT_HELPER_H
#define AMT_HELPER_H

#ifdef __KERNEL__
#include <linux/ioctl.h>
#else
#include <sys/ioctl.h>
#endif

/*
 * ioctl on /dev/amt_block: attach to the caller's mm an mmu_notifier whose
 * release() (run at the start of exit_mmap(), in whoever tears the mm down)
 * blocks while the parameter "stall" is 1, as a device driver waiting for
 * its hardware would.
 */
#define AMT_IOC_STALL_MM	_IO('a', 1)

/*
 * ioctl on /dev/amt_block: register and unregister a dynamic ftrace_ops
 * (on a function of the fixture), as every BPF trampoline, fprobe or
 * bpftrace probe does; the unregistration waits for RCU-tasks grace
 * periods (ftrace_shutdown()). The caller times the call.
 */
#define AMT_IOC_FTRACE_CYCLE	_IO('a', 2)

/*
 * ioctls on /dev/amt_block: a late user of a dead process's mm, as a
 * /proc/PID/smaps file is. GRAB_MM (arg: a pid) keeps that process's mm
 * (mm_count only, as an open /proc file does); MMGET takes mm_users with
 * mmget_not_zero(), which fails with ESRCH once the mm has no user; MMPUT
 * drops it (the teardown runs there if it is the last). One of each per
 * open file; the release drops what is left.
 */
#define AMT_IOC_GRAB_MM		_IO('a', 3)
#define AMT_IOC_MMGET		_IO('a', 4)
#define AMT_IOC_MMPUT		_IO('a', 5)

#endif /* AMT_HELPER_H */
