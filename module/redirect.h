/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Redirecting a kernel function to one of ours with an IPMODIFY ftrace_ops,
 * as livepatch's klp_patch_func() does, and watching one with a plain one.
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#ifndef AMT_REDIRECT_H
#define AMT_REDIRECT_H

#include <linux/ftrace.h>
#include <linux/percpu.h>

struct amt_redirect {
	struct ftrace_ops ops;
	/* the function: by name (not exported) or by address */
	const char *name;
	unsigned long ip;
	/*
	 * Tasks between amt_redirect_to() and amt_redirect_done(); NULL for
	 * a watch. Per-CPU, only the sum means anything (a task may count up
	 * on one CPU and down on another).
	 */
	long __percpu *inflight;
};

/*
 * May change the IP, as livepatch's ops (SAVE_REGS: compat.h). PERMANENT:
 * kernel.ftrace_enabled=0 fails while loaded instead of unhooking us.
 */
#define AMT_REDIRECT_FLAGS (FTRACE_OPS_FL_IPMODIFY | FTRACE_OPS_FL_PERMANENT | \
			    AMT_FTRACE_OPS_SAVE_REGS)
/* A watch: reads the arguments, changes nothing. */
#define AMT_WATCH_FLAGS (FTRACE_OPS_FL_RECURSION | AMT_FTRACE_OPS_SAVE_REGS)

/* Define @var, a redirect of @fname (NULL: set .ip) by @callback. */
#define AMT_DEFINE_REDIRECT(var, callback, fname)				\
	static DEFINE_PER_CPU(long, var##_inflight);				\
	static void notrace callback(unsigned long ip, unsigned long parent_ip, \
				     struct ftrace_ops *ops,			\
				     struct ftrace_regs *fregs);		\
	static struct amt_redirect var = {					\
		.ops = { .func = callback, .flags = AMT_REDIRECT_FLAGS },	\
		.name = fname,							\
		.inflight = &var##_inflight,					\
	}

int amt_redirect_register(struct amt_redirect *r);
void amt_redirect_unregister(struct amt_redirect *r);
bool amt_symbol_bounds(unsigned long addr, const char *const names[],
		       bool clones, unsigned long *start, unsigned long *end,
		       char *sym);

/**
 * amt_redirect_to() - from the callback: run @target instead, same arguments
 * @r: the redirect
 * @fregs: the callback's registers
 * @target: a function with the hooked function's prototype, which must
 *	call amt_redirect_done() as its last step
 */
static __always_inline void amt_redirect_to(struct amt_redirect *r,
					    struct ftrace_regs *fregs,
					    void *target)
{
	this_cpu_inc(*r->inflight);
	amt_fregs_set_ip(fregs, (unsigned long)target);
}

/**
 * amt_redirect_done() - from the target, last: it no longer runs our text
 * @r: the redirect
 */
static __always_inline void amt_redirect_done(struct amt_redirect *r)
{
	this_cpu_dec(*r->inflight);
}

#endif /* AMT_REDIRECT_H */
