/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every kernel-version difference of async_mm_teardown lives here. The
 * AMT_HAVE_* macros come from feature probes in Kbuild, which grep the target
 * tree's headers: stable series backport API changes, so version numbers lie.
 * This header is force-included into every object of the module.
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#ifndef AMT_COMPAT_H
#define AMT_COMPAT_H

#ifndef AMT_KERNEL_SUPPORTED
#error "async_mm_teardown supports Linux 6.1 and later (Kbuild found an older tree)"
#endif

#ifndef CONFIG_DYNAMIC_FTRACE_WITH_REGS
#ifndef CONFIG_DYNAMIC_FTRACE_WITH_ARGS
#error "async_mm_teardown needs CONFIG_DYNAMIC_FTRACE_WITH_REGS or _WITH_ARGS"
#endif
#endif

#include <linux/ftrace.h>
#include <linux/fs.h>
#include <linux/mm.h>
#if defined(CONFIG_X86_KERNEL_IBT) || defined(CONFIG_ARM64_BTI_KERNEL)
#include <asm/cpufeature.h>
#endif

/*
 * v6.6: ftrace_regs accessors (ftrace_regs_get_argument(),
 * ftrace_regs_set_instruction_pointer()); v6.13 and late 6.12.y made
 * struct ftrace_regs opaque, so only the accessors work there.
 */
#ifdef AMT_HAVE_FTRACE_REGS_ACCESSORS
static __always_inline unsigned long amt_fregs_arg0(struct ftrace_regs *fregs)
{
	return ftrace_regs_get_argument(fregs, 0);
}

static __always_inline void amt_fregs_set_ip(struct ftrace_regs *fregs,
					     unsigned long ip)
{
	ftrace_regs_set_instruction_pointer(fregs, ip);
}
#else /* v6.1: struct ftrace_regs wraps a pt_regs */
static __always_inline unsigned long amt_fregs_arg0(struct ftrace_regs *fregs)
{
	return regs_get_kernel_argument(&fregs->regs, 0);
}

/*
 * Without WITH_ARGS (arm64 on 6.1) ftrace_instruction_pointer_set() is an
 * empty stub: the ops save the full pt_regs, whose PC ftrace_caller
 * returns to.
 */
static __always_inline void amt_fregs_set_ip(struct ftrace_regs *fregs,
					     unsigned long ip)
{
#ifdef CONFIG_HAVE_DYNAMIC_FTRACE_WITH_ARGS
	ftrace_instruction_pointer_set(fregs, ip);
#else
	instruction_pointer_set(&fregs->regs, ip);
#endif
}
#endif

/*
 * Like livepatch: the full pt_regs are needed for IPMODIFY only where the
 * architecture cannot pass arguments and IP through ftrace_regs.
 */
#ifdef CONFIG_HAVE_DYNAMIC_FTRACE_WITH_ARGS
#define AMT_FTRACE_OPS_SAVE_REGS 0
#else
#define AMT_FTRACE_OPS_SAVE_REGS FTRACE_OPS_FL_SAVE_REGS
#endif

/* v6.18: mm->flags became an opaque mm_flags_t with accessors. */
#ifdef AMT_HAVE_MM_FLAGS_TEST
#define amt_mm_flag(mm, bit) mm_flags_test(bit, mm)
#else
#define amt_mm_flag(mm, bit) test_bit(bit, &(mm)->flags)
#endif

/*
 * Keep khugepaged off a dead mm: it only skips mms with no mm_users, and
 * a deferred one keeps ours. v6.18 renamed the flag along with the
 * mm_flags_t change (MMF_DISABLE_THP_COMPLETELY); both are defines.
 */
#if defined(MMF_DISABLE_THP_COMPLETELY)
#define amt_mm_no_thp(mm) mm_flags_set(MMF_DISABLE_THP_COMPLETELY, mm)
#elif defined(AMT_HAVE_MM_FLAGS_TEST)
#define amt_mm_no_thp(mm) mm_flags_set(MMF_DISABLE_THP, mm)
#else
#define amt_mm_no_thp(mm) set_bit(MMF_DISABLE_THP, &(mm)->flags)
#endif

/* A per-CPU workqueue's flag, where the kernel has it (WQ_PERCPU). */
#ifdef AMT_HAVE_WQ_PERCPU
#define AMT_WQ_PERCPU	WQ_PERCPU
#else
#define AMT_WQ_PERCPU	0
#endif

/* Late readers of a zapped mm fault instead of reading zero pages. */
#if defined(AMT_HAVE_MM_FLAGS_TEST)
#define amt_mm_set_unstable(mm) mm_flags_set(MMF_UNSTABLE, mm)
#else
#define amt_mm_set_unstable(mm) set_bit(MMF_UNSTABLE, &(mm)->flags)
#endif

/*
 * Zap a range of one VMA under mmap_read_lock, as MADV_DONTNEED does, with
 * the exported function: zap_page_range() (6.1), zap_vma_range() (7.x).
 * Between them (6.3 to 6.x, 6.12 among them) none is exported
 * (zap_page_range_single() is not): no parallel teardown, no pinned zap.
 */
#if defined(AMT_HAVE_ZAP_VMA_RANGE)
#define amt_zap_range(vma, start, size) zap_vma_range(vma, start, size)
#define amt_can_zap() true
#elif defined(AMT_HAVE_ZAP_PAGE_RANGE)
#define amt_zap_range(vma, start, size) zap_page_range(vma, start, size)
#define amt_can_zap() true
#else
#define amt_zap_range(vma, start, size) do { } while (0)
#define amt_can_zap() false
#endif

/*
 * Drop the exe file's deny-write the way set_mm_exe_file(mm, NULL) does
 * (that function is not exported). v6.11 stopped denying writes to a running
 * executable; the revert (v6.13, backported to 6.11.11, 6.12.2 and 6.1.y)
 * came with exe_file_allow_write_access(), which also skips files the exec
 * path did not deny (fsnotify HSM). Without the helper: 6.11.0-6.11.10 and
 * 6.12.0-6.12.1 took no deny-write at all, older kernels a plain one.
 */
#if defined(AMT_HAVE_EXE_FILE_ALLOW_WRITE)
#define amt_exe_allow_write(file) exe_file_allow_write_access(file)
#elif defined(AMT_EXEC_NO_DENY_WRITE)
#define amt_exe_allow_write(file) do { } while (0)
#else
#define amt_exe_allow_write(file) allow_write_access(file)
#endif

/*
 * v6.2 made the RSS counters per-CPU: get_mm_rss() is then a cheap read
 * that can be off by nr_cpus * batch pages, more than thresh_pages on a big
 * machine. Good enough to skip small exits; candidates get the exact sum
 * (get_mm_counter_sum() since v6.16 and in stable series such as 6.12,
 * get_mm_rss_sum() in v7.x, else the per-CPU counters' own sum). v6.1 is
 * exact: exit_mm() has just called sync_mm_rss().
 */
static inline unsigned long amt_mm_rss_exact(struct mm_struct *mm)
{
#if defined(AMT_HAVE_GET_MM_RSS_SUM)
	return get_mm_rss_sum(mm);
#elif defined(AMT_HAVE_GET_MM_COUNTER_SUM)
	return get_mm_counter_sum(mm, MM_FILEPAGES) +
	       get_mm_counter_sum(mm, MM_ANONPAGES) +
	       get_mm_counter_sum(mm, MM_SHMEMPAGES);
#elif defined(AMT_HAVE_RSS_PERCPU)
	return percpu_counter_sum_positive(&mm->rss_stat[MM_FILEPAGES]) +
	       percpu_counter_sum_positive(&mm->rss_stat[MM_ANONPAGES]) +
	       percpu_counter_sum_positive(&mm->rss_stat[MM_SHMEMPAGES]);
#else
	return get_mm_rss(mm);
#endif
}

/*
 * One counter of an mm, exact as amt_mm_rss_exact(): for candidates, and
 * for a lingering entry, which ends only when its mm's freeable count is 0
 * (the approximate read can stay above 0 for ever once nothing faults).
 */
static inline unsigned long amt_mm_counter_exact(struct mm_struct *mm,
						 int member)
{
#if defined(AMT_HAVE_GET_MM_COUNTER_SUM)
	return get_mm_counter_sum(mm, member);
#elif defined(AMT_HAVE_RSS_PERCPU)
	return percpu_counter_sum_positive(&mm->rss_stat[member]);
#else
	return get_mm_counter(mm, member);
#endif
}

/*
 * v7.0: a dying task leaves its cgroup only at its final context switch
 * (cgroup_task_dead()); up to v6.x, in cgroup_exit() before exit_notify().
 */
static inline bool amt_cgroup_unlinked_at_death(void)
{
#ifdef AMT_HAVE_CGROUP_TASK_DEAD
	return IS_ENABLED(CONFIG_CGROUPS);
#else
	return false;
#endif
}

/*
 * 6.1's RCU-tasks exit scheme: do_exit() takes tasks_rcu_exit_srcu for
 * reading in exit_tasks_rcu_start(), before exit_notify(), until
 * exit_tasks_rcu_finish() at its end, and synchronize_rcu_tasks() does
 * synchronize_srcu() on it. 6.12 and later keep exiting tasks on per-CPU
 * lists instead; exit_tasks_rcu_stop() is declared only in the SRCU scheme.
 */
static inline bool amt_exit_holds_tasks_rcu(void)
{
#ifdef AMT_HAVE_EXIT_TASKS_RCU_STOP
	return IS_ENABLED(CONFIG_TASKS_RCU);
#else
	return false;
#endif
}

/* Only under CONFIG_AIO does an mm carry AIO contexts. */
static inline bool amt_mm_has_aio(struct mm_struct *mm)
{
#ifdef CONFIG_AIO
	return !!rcu_access_pointer(mm->ioctx_table);
#else
	return false;
#endif
}

/* Does the kernel check indirect calls against a type hash (kCFI)? */
#define amt_kcfi()	(IS_ENABLED(CONFIG_CFI_CLANG) || IS_ENABLED(CONFIG_CFI))

/*
 * Does the CPU check the target of an indirect call in kernel text: IBT
 * (x86, 6.2+ builds with it: an endbr64 first) or BTI (arm64 kernels built
 * with CONFIG_ARM64_BTI_KERNEL: a bti c first)?
 */
static inline bool amt_ibt_enforced(void)
{
#if defined(CONFIG_X86_KERNEL_IBT)
	return cpu_feature_enabled(X86_FEATURE_IBT);
#elif defined(CONFIG_ARM64_BTI_KERNEL)
	return system_supports_bti();
#else
	return false;
#endif
}

/*
 * v6.8: list_lru_add()/_del() take the node and memcg; the _obj variants
 * find them from the slab object, as the plain ones did before.
 */
#ifdef AMT_HAVE_LIST_LRU_ADD_OBJ
#define amt_lru_add(lru, item)	list_lru_add_obj(lru, item)
#define amt_lru_del(lru, item)	list_lru_del_obj(lru, item)
#else
#define amt_lru_add(lru, item)	list_lru_add(lru, item)
#define amt_lru_del(lru, item)	list_lru_del(lru, item)
#endif

/* Before v6.13 a list_lru walk callback also got the list's lock. */
#ifdef AMT_HAVE_LRU_CB_LOCK
#define AMT_LRU_CB_LOCK	spinlock_t *lock,
#else
#define AMT_LRU_CB_LOCK
#endif

/* v6.3 renamed it; true once slab objects are charged to memcgs. */
#ifdef AMT_HAVE_MEMCG_KMEM_ONLINE
#define amt_memcg_kmem_on()	memcg_kmem_online()
#else
#define amt_memcg_kmem_on()	memcg_kmem_enabled()
#endif

#endif /* AMT_COMPAT_H */
