/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of async_mm_teardown: events/async_mm_teardown/ in tracefs.
 * The mm_reaper_* names are the upstream RFC's and keep its meaning in both
 * modes (mode=self and mode=reaper): mm_reaper_queue is emitted for every
 * deferral, mm_reaper_reap for every deferred teardown that ends, whoever
 * ran it.
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM async_mm_teardown

#if !defined(_AMT_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _AMT_TRACE_H

#include <linux/sched.h>
#include <linux/tracepoint.h>

/*
 * An exiting task's teardown was deferred: mode=self, for the dying task
 * (or its exiting group leader) to run; mode=reaper, for the mm_reaper.
 */
TRACE_EVENT(mm_reaper_queue,
	TP_PROTO(struct task_struct *tsk, unsigned long rss, int node,
		 bool self),
	TP_ARGS(tsk, rss, node, self),
	TP_STRUCT__entry(
		__field(pid_t, pid)
		__array(char, comm, TASK_COMM_LEN)
		__field(unsigned long, rss)
		__field(int, node)
		__field(bool, self)
	),
	TP_fast_assign(
		__entry->pid = tsk->pid;
		memcpy(__entry->comm, tsk->comm, TASK_COMM_LEN);
		__entry->rss = rss;
		__entry->node = node;
		__entry->self = self;
	),
	TP_printk("pid=%d comm=%s rss=%lu node=%d mode=%s", __entry->pid,
		  __entry->comm, __entry->rss, __entry->node,
		  __entry->self ? "self" : "reaper")
);

/*
 * A deferred teardown ended: by=self, run by its own task; by=reaper, by an
 * mm_reaper thread (also a stash handed off). charged and freeable: the
 * freeable pages at the deferral and when the teardown began (the
 * difference is what reclaim took meanwhile).
 */
TRACE_EVENT(mm_reaper_reap,
	TP_PROTO(pid_t pid, unsigned long charged, unsigned long freeable,
		 int node, u64 ns, bool self),
	TP_ARGS(pid, charged, freeable, node, ns, self),
	TP_STRUCT__entry(
		__field(pid_t, pid)
		__field(unsigned long, charged)
		__field(unsigned long, freeable)
		__field(int, node)
		__field(u64, ns)
		__field(bool, self)
	),
	TP_fast_assign(
		__entry->pid = pid;
		__entry->charged = charged;
		__entry->freeable = freeable;
		__entry->node = node;
		__entry->ns = ns;
		__entry->self = self;
	),
	TP_printk("pid=%d charged=%lu freeable=%lu node=%d ns=%llu by=%s",
		  __entry->pid, __entry->charged, __entry->freeable,
		  __entry->node, (unsigned long long)__entry->ns,
		  __entry->self ? "self" : "reaper")
);

/*
 * A deferred teardown's private memory was zapped in chunks before its
 * final mmput(): pages freed, chunks in all and by helpers, helpers asked.
 */
TRACE_EVENT(mm_reaper_zap,
	TP_PROTO(pid_t pid, unsigned long pages, unsigned int chunks,
		 unsigned int helper_chunks, unsigned int helpers, u64 ns,
		 u64 helper_ns, bool pinned),
	TP_ARGS(pid, pages, chunks, helper_chunks, helpers, ns, helper_ns,
		pinned),
	TP_STRUCT__entry(
		__field(pid_t, pid)
		__field(unsigned long, pages)
		__field(unsigned int, chunks)
		__field(unsigned int, helper_chunks)
		__field(unsigned int, helpers)
		__field(u64, ns)
		__field(u64, helper_ns)
		__field(bool, pinned)
	),
	TP_fast_assign(
		__entry->pid = pid;
		__entry->pages = pages;
		__entry->chunks = chunks;
		__entry->helper_chunks = helper_chunks;
		__entry->helpers = helpers;
		__entry->ns = ns;
		__entry->helper_ns = helper_ns;
		__entry->pinned = pinned;
	),
	TP_printk("pid=%d pages=%lu chunks=%u helper_chunks=%u helpers=%u ns=%llu helper_ns=%llu pinned=%d",
		  __entry->pid, __entry->pages, __entry->chunks,
		  __entry->helper_chunks, __entry->helpers,
		  (unsigned long long)__entry->ns,
		  (unsigned long long)__entry->helper_ns, __entry->pinned)
);

/* The OOM notifier waited for deferred teardowns; freed: pages reported. */
TRACE_EVENT(mm_reaper_oom_drain,
	TP_PROTO(long pending, unsigned long freed, u64 ns),
	TP_ARGS(pending, freed, ns),
	TP_STRUCT__entry(
		__field(long, pending)
		__field(unsigned long, freed)
		__field(u64, ns)
	),
	TP_fast_assign(
		__entry->pending = pending;
		__entry->freed = freed;
		__entry->ns = ns;
	),
	TP_printk("pending=%ld freed=%lu ns=%llu", __entry->pending,
		  __entry->freed, (unsigned long long)__entry->ns)
);

#endif /* _AMT_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE amt_trace
#include <trace/define_trace.h>
