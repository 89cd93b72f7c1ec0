/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What user space sees of async_mm_teardown, defined once: every line of
 * the debugfs stats file and every module parameter. Plain C macros only:
 * the module, amtctl (tools/amtctl) and the guest tests
 * (tools/lib/amt_guest.h) include it; tests/unit/test_interface.c checks it.
 *
 * The counters named after the upstream RFC (queued, reaped, pending_*)
 * keep its meaning in both modes (mode=self and mode=reaper), as its
 * tracepoints do (amt_trace.h): queued counts every deferral, reaped every
 * deferred teardown that ended, whoever ran it, pending_* what is deferred
 * and has not ended.
 *
 * AMT_STAT_LIST(X) expands X(name, kind, src, unit, metric, label, help)
 * once per stats line, in the order the module prints them:
 *   name    the key in the stats file
 *   kind    COUNTER (only grows while loaded) or GAUGE
 *   src     PERCPU: a per-CPU counter of the module, AMT_STAT_<name>, that
 *           one place increments (the module's enum amt_stat is generated
 *           from these lines); MODULE: a value debugfs.c computes
 *   unit    what one is: exits, calls, pages, mms, chunks, ns, pid,
 *           threads, bool
 *   metric  the Prometheus name after "async_mm_teardown_" (ns are
 *           exported in seconds, so their metric says seconds)
 *   label   the reason="..." of a labelled family, or "" for none
 *   help    one line for people and for # HELP
 *
 * AMT_PARAM_LIST(X) expands X(name, when, type, allowed, help) once per
 * parameter:
 *   when    RUNTIME (writable under /sys/module/.../parameters) or LOAD
 *           (modprobe only)
 *   type    BOOL, CHOICE (one of the names in allowed), NUMBER (a whole
 *           number from 1; the top is the module's to check: it may
 *           depend on the machine) or PERCENT (0 to AMT_PERCENT_MAX)
 *   allowed what a write may contain, as error messages say it
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#ifndef AMT_INTERFACE_H
#define AMT_INTERFACE_H

#define AMT_STAT_LIST(X)							\
	X(queued, COUNTER, MODULE, exits, "queued_total", "",			\
	  "Exits whose address-space teardown was deferred (to the dying task after exit_notify() or to an mm_reaper thread).") \
	X(sync, COUNTER, MODULE, exits, "sync_total", "",			\
	  "Final exit drops torn down inline on the exit path, for any reason.") \
	X(rejected, COUNTER, MODULE, exits, "rejected_all_total", "",		\
	  "Inline teardowns a safety gate sent back: the sum of async_mm_teardown_rejected_total over reason.") \
	X(sync_disabled, COUNTER, MODULE, exits, "sync_disabled_total", "",	\
	  "Inline teardowns because the module is disabled (enabled=0).") \
	X(sync_small, COUNTER, MODULE, exits, "sync_small_total", "",		\
	  "Inline teardowns because the resident set was below thresh_pages.") \
	X(rejected_oom_victim, COUNTER, MODULE, exits, "rejected_total", "oom_victim", \
	  "Inline teardowns a safety gate sent back, by reason.")	\
	X(rejected_pressure, COUNTER, MODULE, exits, "rejected_total", "pressure", \
	  "Inline teardowns a safety gate sent back, by reason.")	\
	X(rejected_low_memory, COUNTER, MODULE, exits, "rejected_total", "low_memory", \
	  "Inline teardowns a safety gate sent back, by reason.")	\
	X(rejected_memcg, COUNTER, MODULE, exits, "rejected_total", "memcg",	\
	  "Inline teardowns a safety gate sent back, by reason.")	\
	X(rejected_aio, COUNTER, MODULE, exits, "rejected_total", "aio",	\
	  "Inline teardowns a safety gate sent back, by reason.")	\
	X(rejected_budget, COUNTER, MODULE, exits, "rejected_total", "budget",	\
	  "Inline teardowns a safety gate sent back, by reason.")	\
	X(rejected_nomem, COUNTER, MODULE, exits, "rejected_total", "nomem",	\
	  "Inline teardowns a safety gate sent back, by reason.")	\
	X(reaped, COUNTER, MODULE, mms, "reaped_total", "",			\
	  "Deferred teardowns that ended, whoever ran them: queued = reaped + pending_mms whenever no exit is being counted (the lines are read one by one, not as one snapshot).") \
	X(reaped_by_reaper, COUNTER, PERCPU, mms, "reaped_by_reaper_total", "", \
	  "Deferred teardowns run by an mm_reaper thread.")		\
	X(reaped_by_self, COUNTER, PERCPU, mms, "reaped_by_self_total", "",	\
	  "Deferred teardowns run by the dying task itself (mode=self).") \
	X(reaped_pages, COUNTER, PERCPU, pages, "reaped_pages_total", "",	\
	  "Freeable (anonymous and swap) pages of the deferred address spaces torn down.") \
	X(pending_mms, GAUGE, MODULE, mms, "pending_mms", "",			\
	  "Address spaces deferred and not yet torn down (stashed, queued or running).") \
	X(pending_pages, GAUGE, MODULE, pages, "pending_pages", "",		\
	  "Freeable (anonymous and swap) pages of the deferred address spaces.") \
	X(pending_pages_peak, GAUGE, MODULE, pages, "pending_pages_peak", "",	\
	  "Highest pending_pages since load or the last max_pending_pages write.") \
	X(handoffs, COUNTER, PERCPU, mms, "handoffs_total", "",		\
	  "Self-mode stashes an mm_reaper took over: their task was late, stuck when OOM, reclaim or a drain needed the memory, or a suspend or unload was under way.") \
	X(drains, COUNTER, PERCPU, calls, "drains_total", "",			\
	  "Writes to the drain file.")					\
	X(drain_timeouts, COUNTER, PERCPU, calls, "drain_timeouts_total", "",	\
	  "Drains that ended before what was deferred before them was torn down (timeout or signal).") \
	X(oom_victims_marked, COUNTER, PERCPU, mms, "oom_victims_marked_total", "", \
	  "OOM victims' address spaces seen being marked by the OOM killer.") \
	X(oom_sharer_caught, COUNTER, PERCPU, exits, "oom_sharer_caught_total", "", \
	  "Final drops of an OOM victim's address space by a sharer, kept inline.") \
	X(oom_drains, COUNTER, PERCPU, calls, "oom_drains_total", "",		\
	  "OOM killer calls that waited for deferred memory to be freed.") \
	X(oom_freed_pages, COUNTER, PERCPU, pages, "oom_freed_pages_total", "",	\
	  "Pages reported freed to the OOM killer.")			\
	X(shrinker_scans, COUNTER, PERCPU, calls, "shrinker_scans_total", "",	\
	  "Calls of the module's shrinker under memory reclaim.")	\
	X(shrinker_scan_ns, COUNTER, PERCPU, ns, "shrinker_scan_seconds_total", "", \
	  "Time reclaim spent in the module's shrinker scans.")		\
	X(memcg_tight, COUNTER, PERCPU, exits, "memcg_tight_total", "",	\
	  "Exits deferred although their memcg lacked room to keep them charged next to a replacement: a charge at memory.max there waits for their teardown.") \
	X(memcg_waits, COUNTER, PERCPU, calls, "memcg_waits_total", "",	\
	  "memcg reclaim calls (a charge at memory.max) that waited for deferred teardowns of their memcg.") \
	X(memcg_wait_ns, COUNTER, PERCPU, ns, "memcg_wait_seconds_total", "", \
	  "Time charges at memory.max spent waiting for deferred teardowns.") \
	X(self_ns_total, COUNTER, PERCPU, ns, "self_seconds_total", "",	\
	  "Time the dying tasks spent tearing down their own address spaces (mode=self).") \
	X(self_mempolicy, COUNTER, PERCPU, exits, "self_mempolicy_total", "",	\
	  "Self-mode exits sent to an mm_reaper thread because the task had a NUMA mempolicy that could not be put after the teardown.") \
	X(self_notifier, COUNTER, PERCPU, exits, "self_notifier_total", "",	\
	  "Self-mode exits sent to an mm_reaper thread because the address space had mmu notifiers on a kernel whose exiting tasks hold up RCU-tasks grace periods after exit_notify() (6.1; not 6.12 and later): a notifier's release() may wait for a device.") \
	X(wake_fallback, COUNTER, PERCPU, calls, "wake_fallback_total", "",	\
	  "Reaper wake-ups made by the 100 ms bound instead of the exiting task.") \
	X(to_leader, COUNTER, PERCPU, mms, "to_leader_total", "",	\
	  "Final drops in a thread that died before its exiting group leader passed exit_notify(), left to the leader: it tears them down (mode=self) or queues them for the reaper (mode=reaper) after its own exit_notify().") \
	X(to_leader_back, COUNTER, PERCPU, mms, "to_leader_back_total", "",	\
	  "Final drops about to be left to the group leader that the thread took back, because the leader passed exit_notify() meanwhile: deferred as the thread's own.") \
	X(exit_not_last, COUNTER, PERCPU, exits, "exit_not_last_total", "",	\
	  "Exit drops that left the address space to another user (a thread, a temporary holder).") \
	X(exit_preempted, COUNTER, PERCPU, exits, "exit_preempted_total", "",	\
	  "exit_mm() drops recognised by their call site after a preemption had replaced the task's lazy mm.") \
	X(exit_late, COUNTER, PERCPU, calls, "exit_late_total", "",		\
	  "mmput() calls of exiting tasks after exit_mm(), not from its call site (a file's release, e.g. vhost-net's on 6.1); deferred like exit_mm()'s own when final and of the task's own mm.") \
	X(exit_late_foreign, COUNTER, PERCPU, exits, "exit_late_foreign_total", "", \
	  "Late final drops of another process's address space (a vhost fd that outlived its owner), torn down inline: its memcg is not the dying task's.") \
	X(late_users, COUNTER, PERCPU, mms, "late_users_total", "",		\
	  "Deferred teardowns whose memory went with the mmput() of a late user (a /proc reader, swapoff, a userfaultfd release that took the dead mm meanwhile): counted as pending until it did.") \
	X(pinned_zapped, COUNTER, PERCPU, mms, "pinned_zapped_total", "", \
	  "Deferred teardowns whose address space holders that are not tasks still kept (a /proc reader, a driver's get_task_mm()): the private memory was zapped, the rest left to the holders (zap_pinned=1).") \
	X(zap_parallel, COUNTER, PERCPU, mms, "zap_parallel_total", "", \
	  "Deferred teardowns whose private memory was freed in chunks, by the tearing-down task and helpers on idle CPUs, before the final mmput() (parallel=1, mms of 128 MiB freeable or more).") \
	X(zap_chunks, COUNTER, PERCPU, chunks, "zap_chunks_total", "",	\
	  "Chunks (up to 8 MiB of address space) zapped by parallel teardowns, by anyone.") \
	X(zap_helper_chunks, COUNTER, PERCPU, chunks, "zap_helper_chunks_total", "", \
	  "Chunks zapped by helpers on other CPUs, each started only while its CPU had nothing else to run.") \
	X(zap_helper_ns, COUNTER, PERCPU, ns, "zap_helper_seconds_total", "", \
	  "Time helpers spent in their chunks: CPU time of the module's workqueue workers (root cgroup), not charged to the dying task's cgroup; a helper works only while its CPU has nothing else to run.") \
	X(zap_helpers_busy, COUNTER, PERCPU, calls, "zap_helpers_busy_total", "", \
	  "Helpers asked for a parallel teardown that zapped nothing: their CPU had other work, or nothing was left when they started.") \
	X(zap_pages, COUNTER, PERCPU, pages, "zap_pages_total", "",	\
	  "Freeable (anonymous and swap) pages that parallel teardowns freed before the final mmput().") \
	X(exit_site_known, GAUGE, MODULE, bool, "exit_site_known", "",		\
	  "1 once exit_mm()'s call site has been learned (from the first exit after the load).") \
	X(reaper_pid, GAUGE, MODULE, pid, "reaper_pid", "",			\
	  "PID of the first mm_reaper kernel thread (0: none).")	\
	X(reaper_threads, GAUGE, MODULE, threads, "reaper_threads", "",	\
	  "Number of mm_reaper kernel threads (the reapers parameter).") \
	X(reaper_cpu_ns, COUNTER, MODULE, ns, "reaper_cpu_seconds_total", "",	\
	  "CPU time used by the mm_reaper threads.")			\
	X(teardown_ns_total, COUNTER, MODULE, ns, "teardown_seconds_total", "", \
	  "Time the mm_reaper threads spent tearing down address spaces.") \
	X(teardown_ns_max, GAUGE, MODULE, ns, "teardown_seconds_max", "",	\
	  "Longest single teardown by an mm_reaper thread.")

/* Where user space finds the module. */
#define AMT_NAME		"async_mm_teardown"
#define AMT_SYSFS_DIR		"/sys/module/" AMT_NAME
#define AMT_PARAMS_DIR		AMT_SYSFS_DIR "/parameters"
#define AMT_STATS_FILE		"/sys/kernel/debug/" AMT_NAME "/stats"
#define AMT_DRAIN_FILE		"/sys/kernel/" AMT_NAME "/drain"
/* The drain file takes a timeout in milliseconds in this range. */
#define AMT_DRAIN_MIN_MS	1
#define AMT_DRAIN_MAX_MS	3600000
/* The values of the mode parameter, in the order of enum amt_mode. */
#define AMT_MODE_NAMES		"reaper", "self"

/* the top of a PERCENT parameter */
#define AMT_PERCENT_MAX 50
/* the most mm_reaper threads (the reapers parameter) */
#define AMT_MAX_REAPERS 16
#define AMT_STR(x) #x
#define AMT_XSTR(x) AMT_STR(x)

#define AMT_PARAM_LIST(X)							\
	X(enabled, RUNTIME, BOOL, "1 or 0 (y/n)",				\
	  "Defer large exits (1) or tear every mm down inline, as without the module (0). Default 1.") \
	X(mode, RUNTIME, CHOICE, "reaper or self",				\
	  "self: the dying task tears its deferred mm down, after waking its parent; reaper: the mm_reaper threads do. Default self; reaper where self is unavailable, on 6.1 (an exiting task holds up RCU-tasks grace periods after exit_notify(): a self teardown that sleeps would hold them up too) and on 7.0+ (a dying task's cgroup stays populated until it is dead); self is refused on 6.1's PREEMPT_RT flavour.") \
	X(thresh_pages, RUNTIME, NUMBER,				\
	  "a number of pages from 1 to all RAM",			\
	  "Defer only mms with at least this many resident pages. Default 64 MiB worth.") \
	X(max_pending_pages, RUNTIME, NUMBER,				\
	  "a number of pages from 1 to all RAM",			\
	  "Most freeable (anonymous and swap) pages queued for the mm_reaper threads at once; exits beyond it are torn down inline. Default RAM/4.") \
	X(oom_guard, RUNTIME, BOOL, "1 or 0 (y/n)",				\
	  "Keep deferred memory from causing OOM kills: free it at OOM, boost its teardown under reclaim, make a charge at memory.max wait for it (1). Default 1.") \
	X(min_available_pct, RUNTIME, PERCENT,				\
	  "a percentage of RAM from 0 to 50",				\
	  "With oom_guard=1, keep every exit inline while MemAvailable is at or under this share of RAM plus an eighth of it: memory is short, and a userspace OOM killer (earlyoom) reads it right after its victim died. 0: never. Default 10.") \
	X(parallel, RUNTIME, BOOL, "1 or 0 (y/n)",				\
	  "Free the private memory of a large deferred teardown in chunks, on idle CPUs too, before its final mmput() (1), or on one CPU (0). Default 1.") \
	X(zap_pinned, RUNTIME, BOOL, "1 or 0 (y/n)",				\
	  "When a dying process's address space is kept only by holders that are not tasks (a /proc reader, a driver), free its private memory at once instead of when the last holder lets go (1). Default 1.") \
	X(reapers, LOAD, NUMBER,					\
	  "a number of threads from 1 to " AMT_XSTR(AMT_MAX_REAPERS),	\
	  "Number of mm_reaper threads, set at load. Default: one per online CPU, at least 2, at most 8.")

#endif /* AMT_INTERFACE_H */
