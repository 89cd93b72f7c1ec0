// SPDX-License-Identifier: GPL-2.0
/*
 * Closing the files of deferred teardowns (their last fput() is delayed)
 * before a drain returns (docs/design.md, "Drain by epoch").
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

	/* always delayed_fput_work, or NULL: flush_delayed_fput()'s own call */
	if (w && READ_ONCE(amt_fput_work) != w)
		WRITE_ONCE(amt_fput_work, w);
}

static struct amt_redirect amt_fput_watch = {
	.ops = {
		.func = amt_fput_seen,
		.flags = AMT_WATCH_FLAGS,
	},
	.name = "delayed_fput",
};

/**
 * amt_flush_fput() - close every file whose last fput() was delayed so far
 *
 * Also waits for a worker that took the list, which flush_delayed_fput()
 * does not on 6.1 and 6.12 (docs/design.md, "Drain by epoch").
 *
 * Context: process context, may sleep; not from a workqueue.
 */
void amt_flush_fput(void)
{
	struct work_struct *w;

	flush_delayed_fput();
	w = READ_ONCE(amt_fput_work);
	/* none seen since load: no worker holds a file of ours */
	if (w)
		flush_delayed_work(to_delayed_work(w));
}

/**
 * amt_fput_init() - start watching delayed_fput() (a failure is only warned)
 */
void amt_fput_init(void)
{
	if (amt_redirect_register(&amt_fput_watch)) {
		pr_warn("cannot trace delayed_fput(): a drain may return while the kernel's worker still closes the files of reaped mms\n");
		return;
	}
	amt_fput_watching = true;
}

/**
 * amt_fput_exit() - stop watching (waits for running callbacks)
 */
void amt_fput_exit(void)
{
	if (!amt_fput_watching)
		return;
	amt_redirect_unregister(&amt_fput_watch);
	amt_fput_watching = false;
}
