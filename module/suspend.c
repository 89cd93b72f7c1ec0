// SPDX-License-Identifier: GPL-2.0
/*
 * Suspend and hibernation: no teardown runs unseen by the freezer
 * (docs/design.md, "Suspend").
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#include <linux/notifier.h>
#include <linux/suspend.h>
#include "hurry.h"
#include "pending.h"
#include "stash.h"
#include "suspend.h"

/* freeze_timeout_msecs' default: past it, refuse as the freezer would */
#define AMT_SUSPEND_WAIT	(20 * HZ)

static int amt_pm_notify(struct notifier_block *nb, unsigned long action,
			 void *unused)
{
	unsigned long end = jiffies + AMT_SUSPEND_WAIT;

	switch (action) {
	case PM_SUSPEND_PREPARE:
	case PM_HIBERNATION_PREPARE:
	case PM_RESTORE_PREPARE:
		/* the flag first: no stash is taken by its task after this */
		amt_pending_suspend(true);
		amt_stash_handoff(AMT_HANDOFF_ALL);
		/* (hurried: no self teardown naps meanwhile) */
		amt_hurry();
		while (amt_pending_self_running() && time_before(jiffies, end))
			amt_wait_ended(HZ / 10);
		if (!amt_pending_self_running())
			return NOTIFY_OK;
		pr_warn("a self-mode teardown still runs after %d s: refusing the suspend, as the freezer would\n",
			AMT_SUSPEND_WAIT / HZ);
		amt_pending_suspend(false);
		return notifier_from_errno(-EBUSY);
	case PM_POST_SUSPEND:
	case PM_POST_HIBERNATION:
	case PM_POST_RESTORE:
		amt_pending_suspend(false);
		break;
	}
	return NOTIFY_OK;
}

static struct notifier_block amt_pm_nb = {
	.notifier_call = amt_pm_notify,
};

/**
 * amt_suspend_init() - watch suspend and hibernation
 *
 * Return: 0 or a negative errno.
 */
int amt_suspend_init(void)
{
	return register_pm_notifier(&amt_pm_nb);
}

/**
 * amt_suspend_exit() - stop watching (waits for a notifier call)
 */
void amt_suspend_exit(void)
{
	unregister_pm_notifier(&amt_pm_nb);
	amt_pending_suspend(false);
}
