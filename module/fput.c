// SPDX-License-Identifier: GPL-2.0
/*
 * Closing the files of deferred teardowns before a drain returns.
 *
 * A deferred teardown drops the last reference of the files its mm maps
 * where fput() cannot use task_work: in the reaper (a kthread) or in a task
 * that has already run exit_task_work() (mode=self). fput() then puts the
 * file on delayed_fput_list and schedules delayed_fput_work. On 6.1 and 6.12
 * flush_delayed_fput() only empties that list: if the worker has just
 * taken it, flush_delayed_fput() returns while the worker is still closing
 * the files (an unlinked tmpfs file keeps its space, an executable stays
 * ETXTBSY). 7.2 also flushes the work; neither the work nor
 * delayed_fput() is exported.
 *
 * So we watch delayed_fput() (a non-modifying ftrace_ops, any kernel) and
 * remember the work item it runs for, which is &delayed_fput_work.work;
 * amt_flush_fput() then flushes that work after flush_delayed_fput().
 * Ordering: the worker enters delayed_fput() (our callback stores the
 * pointer) before its llist_del_all() of the list; if our own
 * llist_del_all() in flush_delayed_fput() found the list already taken,
 * the two xchg()s order the worker's store before our load.
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#include <linux/file.h>
#include <linux/ftrace.h>
#include <linux/workqueue.h>
#include "fput.h"
#include "redirect.h"

static struct work_struct *amt_fput_work;
static bool amt_fput_watching;

static void notrace amt_fput_seen(unsigned long ip, unsigned long parent_ip,
				  struct ftrace_ops *ops,
				  struct ftrace_regs *fregs)
{
	struct work_struct *w = (struct work_struct *)amt_fregs_arg0(fregs);

	/*
	 * Always the same static work item: a plain store is enough. On 6.1
	 * and 6.12 flush_delayed_fput() calls delayed_fput(NULL): not it.
	 */
	if (w && READ_ONCE(amt_fput_work) != w)
		WRITE_ONCE(amt_fput_work, w);
}

static struct amt_redirect amt_fput_watch = {
	.ops = {
		.func = amt_fput_seen,
		.flags = AMT_WATCH_FLAGS,
	},
	/* not exported: by name */
	.name = "delayed_fput",
};

/**
 * amt_flush_fput() - close every file whose last fput() was delayed so far
 *
 * Context: process context, may sleep; not from a workqueue.
 */
void amt_flush_fput(void)
{
	struct work_struct *w;

	flush_delayed_fput();
	w = READ_ONCE(amt_fput_work);
	/* (no worker seen since load: none can hold a file of ours) */
	if (w)
		flush_delayed_work(to_delayed_work(w));
}

/**
 * amt_fput_init() - start watching delayed_fput(); failure only leaves
 * drains without the wait for a running worker (a warning says so)
 */
void amt_fput_init(void)
{
	if (amt_redirect_register(&amt_fput_watch)) {
		pr_warn("cannot trace delayed_fput(): a drain may return while the kernel's worker still closes the files of reaped mms\n");
		return;
	}
	amt_fput_watching = true;
}

/** amt_fput_exit() - stop watching (waits for running callbacks) */
void amt_fput_exit(void)
{
	if (!amt_fput_watching)
		return;
	amt_redirect_unregister(&amt_fput_watch);
	amt_fput_watching = false;
}
