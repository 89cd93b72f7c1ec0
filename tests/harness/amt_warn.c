// SPDX-License-Identifier: GPL-2.0
/* Harness self-test: a module that WARNs must fail the run. */
#include <linux/bug.h>
#include <linux/module.h>

static int __init amt_warn_init(void)
{
	WARN(1, "amt_warn: deliberate warning for the harness self-test\n");
	return 0;
}

static void __exit amt_warn_exit(void)
{
}

module_init(amt_warn_init);
module_exit(amt_warn_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Deliberately WARNs: proves the test harness catches it");
