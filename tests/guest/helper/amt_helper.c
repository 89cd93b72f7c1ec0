// SPDX-License-Identifier: GPL-2.0
/*
 * amt_helper: a fixture for the guest tests, loaded only inside the test
 * guest. /dev/amt_block is a character device whose release() blocks while
 * the parameter "hold" is 1, the way a close can block on a hard-mounted
 * NFS file, a stalled FUSE daemon or a slow driver: an exiting task that
 * holds it stops in exit_files() (after exit_mm(), before exit_notify()).
 * "blocked" says how many releases are waiting.
 *
 * A write() to /dev/amt_block sleeps while "gate" is 1, not woken by
 * SIGKILL (a task in D state: a thread that reacts late to its process's
 * death), then fails with EAGAIN. "waiting" says how many sleep. Only the
 * release of a file opened read-only blocks (above): a writer's does not.
 *
 * Its ioctl AMT_IOC_STALL_MM attaches to the caller's mm an mmu_notifier
 * whose release() blocks while "stall" is 1, the way a driver's notifier
 * can wait for its device: whoever tears that mm down (exit_mmap() calls
 * the notifiers first) is stuck there. "stalled" says how many wait.
 *
 * Its ioctl AMT_IOC_FTRACE_CYCLE registers and unregisters an ftrace_ops,
 * which waits for RCU-tasks grace periods: what a dying task holds up.
 * AMT_IOC_GRAB_MM, _MMGET and _MMPUT make the file a late user of another
 * process's mm, as an open /proc/PID/smaps is.
 *
 * No wait lasts more than max_wait_s (60 s; the tests scale it with a slow
 * kernel's amt_slow), and each sleeps as TASK_IDLE, so that the guest's
 * hung-task watchdog does not take the fixture for a bug.
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#include <linux/atomic.h>
#include <linux/ftrace.h>
#include <linux/fs.h>
#include <linux/jiffies.h>
#include <linux/miscdevice.h>
#include <linux/mmu_notifier.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include "amt_helper.h"

/* The read-only parameters that count waiters: kp->arg is the atomic_t. */
static int amt_count_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read((atomic_t *)kp->arg));
}

static const struct kernel_param_ops amt_count_ops = {
	.get = amt_count_get,
};

static bool hold;
module_param(hold, bool, 0644);
MODULE_PARM_DESC(hold, "1: a release() of /dev/amt_block opened read-only waits until this is 0 again (max_wait_s at most)");

static atomic_t blocked = ATOMIC_INIT(0);
module_param_cb(blocked, &amt_count_ops, &blocked, 0444);
MODULE_PARM_DESC(blocked, "releases of /dev/amt_block waiting now");

static bool gate;
module_param(gate, bool, 0644);
MODULE_PARM_DESC(gate, "1: a write() to /dev/amt_block sleeps until this is 0 again (max_wait_s at most), then fails");

static atomic_t waiting = ATOMIC_INIT(0);
module_param_cb(waiting, &amt_count_ops, &waiting, 0444);
MODULE_PARM_DESC(waiting, "writes to /dev/amt_block sleeping at the gate now");

static bool stall;
module_param(stall, bool, 0644);
MODULE_PARM_DESC(stall, "1: the release() of an AMT_IOC_STALL_MM notifier waits until this is 0 again (max_wait_s at most)");

static atomic_t stalled = ATOMIC_INIT(0);
module_param_cb(stalled, &amt_count_ops, &stalled, 0444);
MODULE_PARM_DESC(stalled, "teardowns waiting in the stalling mmu_notifier now");

static unsigned int max_wait_s = 60;
module_param(max_wait_s, uint, 0644);
MODULE_PARM_DESC(max_wait_s, "the longest hold, gate and stall last, seconds");

/* Sleep while *flag, at most max_wait_s, without counting as a hung task. */
static void amt_helper_wait(bool *flag, atomic_t *count)
{
	unsigned long end = jiffies + READ_ONCE(max_wait_s) * HZ;

	atomic_inc(count);
	while (READ_ONCE(*flag) && time_before(jiffies, end))
		schedule_timeout_idle(msecs_to_jiffies(5));
	atomic_dec(count);
}

static void amt_stall_release(struct mmu_notifier *mn, struct mm_struct *mm)
{
	amt_helper_wait(&stall, &stalled);
	/* allowed from release(); the free comes later, asynchronously */
	mmu_notifier_put(mn);
}

static struct mmu_notifier *amt_stall_alloc(struct mm_struct *mm)
{
	struct mmu_notifier *mn = kzalloc(sizeof(*mn), GFP_KERNEL);

	if (!mn)
		return ERR_PTR(-ENOMEM);
	/* the ops are our text: no unload while a notifier exists */
	__module_get(THIS_MODULE);
	return mn;
}

static void amt_stall_free(struct mmu_notifier *mn)
{
	kfree(mn);
	module_put(THIS_MODULE);
}

static const struct mmu_notifier_ops amt_stall_ops = {
	.release = amt_stall_release,
	.alloc_notifier = amt_stall_alloc,
	.free_notifier = amt_stall_free,
};

/* What the ftrace_ops of AMT_IOC_FTRACE_CYCLE traces: never called. */
static noinline int amt_helper_traced(int x)
{
	return x + 1;
}

static void notrace amt_cycle_fn(unsigned long ip, unsigned long parent_ip,
				 struct ftrace_ops *ops,
				 struct ftrace_regs *fregs)
{
}

static DEFINE_MUTEX(amt_cycle_lock);

/* A dynamic ftrace_ops on and off: the unregistration waits for RCU-tasks. */
static long amt_ftrace_cycle(void)
{
	static struct ftrace_ops ops = { .func = amt_cycle_fn };
	int ret;

	mutex_lock(&amt_cycle_lock);
	ret = ftrace_set_filter_ip(&ops, (unsigned long)amt_helper_traced,
				   0, 0);
	if (!ret) {
		ret = register_ftrace_function(&ops);
		if (!ret)
			ret = unregister_ftrace_function(&ops);
		ftrace_set_filter_ip(&ops, (unsigned long)amt_helper_traced,
				     1, 0);
	}
	mutex_unlock(&amt_cycle_lock);
	return ret;
}

/* A file's late use of an mm: mm_count from GRAB_MM, mm_users from MMGET. */
struct amt_late_use {
	struct mm_struct *mm;
	bool got;
};

static long amt_late_use(struct file *file, unsigned int cmd, pid_t nr)
{
	struct amt_late_use *u = file->private_data;
	struct task_struct *task;
	struct mm_struct *mm;
	struct pid *pid;

	switch (cmd) {
	case AMT_IOC_GRAB_MM:
		if (u->mm)
			return -EBUSY;
		pid = find_get_pid(nr);
		task = pid ? get_pid_task(pid, PIDTYPE_PID) : NULL;
		put_pid(pid);
		mm = task ? get_task_mm(task) : NULL;
		if (task)
			put_task_struct(task);
		if (!mm)
			return -ESRCH;
		mmgrab(mm);
		mmput(mm);
		u->mm = mm;
		return 0;
	case AMT_IOC_MMGET:
		if (!u->mm || u->got)
			return -EINVAL;
		if (!mmget_not_zero(u->mm))
			return -ESRCH;
		u->got = true;
		return 0;
	default:	/* AMT_IOC_MMPUT */
		if (!u->got)
			return -EINVAL;
		u->got = false;
		mmput(u->mm);
		return 0;
	}
}

static long amt_block_ioctl(struct file *file, unsigned int cmd,
			    unsigned long arg)
{
	struct mmu_notifier *mn;

	if (cmd == AMT_IOC_FTRACE_CYCLE)
		return amt_ftrace_cycle();
	if (cmd == AMT_IOC_GRAB_MM || cmd == AMT_IOC_MMGET ||
	    cmd == AMT_IOC_MMPUT)
		return amt_late_use(file, cmd, arg);
	if (cmd != AMT_IOC_STALL_MM)
		return -ENOTTY;
	if (!current->mm)
		return -EINVAL;
	mn = mmu_notifier_get(&amt_stall_ops, current->mm);
	return PTR_ERR_OR_ZERO(mn);
}

static int amt_block_open(struct inode *inode, struct file *file)
{
	file->private_data = kzalloc(sizeof(struct amt_late_use), GFP_KERNEL);
	return file->private_data ? 0 : -ENOMEM;
}

/* Not in open(): misc_open() holds a lock that every misc open takes. */
static ssize_t amt_block_write(struct file *file, const char __user *buf,
			       size_t len, loff_t *pos)
{
	amt_helper_wait(&gate, &waiting);
	return -EAGAIN;
}

static int amt_block_release(struct inode *inode, struct file *file)
{
	struct amt_late_use *u = file->private_data;

	if (!(file->f_mode & FMODE_WRITE))
		amt_helper_wait(&hold, &blocked);
	if (u->got)
		mmput(u->mm);
	if (u->mm)
		mmdrop(u->mm);
	kfree(u);
	return 0;
}

static const struct file_operations amt_block_fops = {
	.owner = THIS_MODULE,
	.open = amt_block_open,
	.write = amt_block_write,
	.release = amt_block_release,
	.unlocked_ioctl = amt_block_ioctl,
};

static struct miscdevice amt_block_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "amt_block",
	.fops = &amt_block_fops,
};

static int __init amt_helper_init(void)
{
	return misc_register(&amt_block_dev);
}

static void __exit amt_helper_exit(void)
{
	misc_deregister(&amt_block_dev);
	/* the asynchronous frees of put notifiers run our text */
	mmu_notifier_synchronize();
}

module_init(amt_helper_init);
module_exit(amt_helper_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("async_mm_teardown test fixture: a close that blocks, a teardown that stalls");
