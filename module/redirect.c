// SPDX-License-Identifier: GPL-2.0
/*
 * Redirects and watches of kernel functions with ftrace (see redirect.h).
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#include <linux/delay.h>
#include <linux/kallsyms.h>
#include <linux/string.h>
#include "redirect.h"

/**
 * amt_redirect_register() - start calling @r's callback on its function
 * @r: the redirect (or watch), with ops.func, ops.flags and name or ip set
 *
 * Return: 0, or a negative errno (nothing stays registered then).
 */
int amt_redirect_register(struct amt_redirect *r)
{
	/* ftrace may write to the buffer it parses */
	char name[KSYM_NAME_LEN];
	int ret;

	if (r->name) {
		strscpy(name, r->name, sizeof(name));
		ret = ftrace_set_filter(&r->ops, (unsigned char *)name,
					strlen(name), 1);
	} else {
		ret = ftrace_set_filter_ip(&r->ops, r->ip, 0, 0);
	}
	if (ret)
		return ret;
	ret = register_ftrace_function(&r->ops);
	if (ret)
		ftrace_free_filter(&r->ops);
	return ret;
}

/**
 * amt_redirect_unregister() - stop, and wait until no task runs our code
 * @r: a registered redirect (or watch)
 *
 * Waits for callbacks in flight, for the in-flight sum to reach zero (a task
 * asleep in a target is RCU-tasks quiescent), then synchronize_rcu_tasks().
 */
void amt_redirect_unregister(struct amt_redirect *r)
{
	long sum;
	int cpu;

	unregister_ftrace_function(&r->ops);
	ftrace_free_filter(&r->ops);
	if (!r->inflight)
		return;
	for (;;) {
		sum = 0;
		for_each_possible_cpu(cpu)
			sum += *per_cpu_ptr(r->inflight, cpu);
		if (!sum)
			break;
		msleep(20);
	}
	synchronize_rcu_tasks();
}

/**
 * amt_symbol_bounds() - the bounds of the function around @addr, by name
 * @addr: a kernel text address
 * @names: the functions it may be in, NULL-terminated
 * @clones: also GCC's clones of them ("exit_mm.isra.0", ".cold")
 * @start: set to the function's start
 * @end: set to its end
 * @sym: KSYM_SYMBOL_LEN bytes, set to sprint_symbol()'s "name+off/size"
 *
 * Return: true if @addr is in one of @names; @start and @end are set then.
 */
bool amt_symbol_bounds(unsigned long addr, const char *const names[],
		       bool clones, unsigned long *start, unsigned long *end,
		       char *sym)
{
	unsigned long off, size;
	const char *plus;
	size_t n;

	sprint_symbol(sym, addr);
	plus = strchr(sym, '+');
	if (!plus || sscanf(plus, "+%lx/%lx", &off, &size) != 2 ||
	    off >= size)
		return false;
	for (; *names; names++) {
		n = strlen(*names);
		if (!strncmp(sym, *names, n) &&
		    (sym + n == plus || (clones && sym[n] == '.'))) {
			*start = addr - off;
			*end = addr - off + size;
			return true;
		}
	}
	return false;
}
