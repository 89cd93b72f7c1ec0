#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Summarise exit_latency --trace output: 8 children killed together.

    scripts/trace-parallel.py FILE

FILE is what `AMT_BENCH_TRACE=1 make bench` keeps next to the results
(bench/results/<kernel>-<sections>.trace): per configuration (sync, reaper,
self) one round of ftrace events between the markers "kill", "reaped" (the
parent's last waitpid() returned) and "back" (memory back). For each
configuration this prints where the CPUs went from "kill" to "reaped":
children before their sched_process_exit (signal delivery, exit_mm() and,
inline, the teardown), children after it (the rest of do_exit(), and in
self mode the teardown after exit_notify()), reapers, the parent, idle,
anything else; then each child's timeline (ms after "kill"): woken by the
kill, first on a CPU, sched_process_exit, the parent woken by it, its
teardown's start and end (from mm_reaper_reap), and at which priorities it
ran (120 is nice 0, 139 nice 19); then the parent's own timeline: each
time it left a CPU (its state: S asleep in waitpid(), R preempted) and
came back, who woke it, and the totals of time asleep, runnable but not
on a CPU, and running. A diagnostic: tracing costs time itself.
"""
import re
import sys
from collections import defaultdict

LINE = re.compile(r'^\s*(?P<comm>.+?)-(?P<pid>\d+)\s+\[(?P<cpu>\d+)\]\s+\S+\s+'
                  r'(?P<ts>\d+\.\d+):\s+(?P<ev>[\w]+):\s*(?P<rest>.*)$')
KV = re.compile(r'(\w+)=(\S+)')


def fields(rest):
    return dict(KV.findall(rest))


def parse(path):
    blocks, cur = [], None
    with open(path, errors='replace') as f:
        for line in f:
            if line.startswith('# config '):
                w = line.split()
                cur = {'cfg': w[2], 'parent': int(w[4]),
                       'children': [int(x) for x in w[6:]], 'ev': [],
                       'sched': []}
                blocks.append(cur)
                continue
            if line.startswith('# sched ') and cur is not None:
                cur['sched'].append(line[2:].rstrip())
                continue
            m = LINE.match(line)
            if m and cur is not None:
                cur['ev'].append((float(m['ts']), int(m['cpu']), int(m['pid']),
                                  m['comm'], m['ev'], m['rest']))
    return blocks


def summarise(b):
    ev = sorted(b['ev'])
    marks = {}
    for ts, cpu, pid, comm, name, rest in ev:
        if name == 'tracing_mark_write':
            w = rest.split()
            if len(w) >= 2 and w[0] == 'amt_bench:':
                marks[w[1]] = ts
    if 'kill' not in marks or 'reaped' not in marks:
        print(f"== {b['cfg']}: markers missing ({sorted(marks)})")
        return
    t0, t1 = marks['kill'], marks['reaped']
    kids, parent = set(b['children']), b['parent']
    exited = {}
    kid = defaultdict(dict)
    prios = defaultdict(set)
    for ts, cpu, pid, comm, name, rest in ev:
        f = fields(rest)
        if name == 'sched_process_exit' and int(f.get('pid', -1)) in kids:
            exited.setdefault(int(f['pid']), ts)
            kid[int(f['pid'])]['exit'] = ts
        elif name == 'sched_wakeup':
            p = int(f.get('pid', -1))
            if p in kids and ts >= t0 and 'woken' not in kid[p]:
                kid[p]['woken'] = ts
                kid[p]['woken_cpu'] = int(f.get('target_cpu', cpu))
            if p == parent and pid in kids:
                kid[pid].setdefault('parent_woken', ts)
        elif name == 'sched_switch':
            n = int(f.get('next_pid', -1))
            if n in kids and ts >= t0:
                kid[n].setdefault('first_run', ts)
        elif name == 'mm_reaper_reap':
            p = int(f.get('pid', -1))
            if p in kids:
                kid[p]['td_end'] = ts
                kid[p]['td_start'] = ts - int(f.get('ns', 0)) / 1e9
                kid[p]['by'] = f.get('by', '?')
    # CPU time by category, [t0, t1], from sched_switch
    running = {}
    use = defaultdict(float)

    def cat(pid, comm, ts):
        if pid == 0:
            return 'idle'
        if pid == parent:
            return 'parent'
        if pid in kids:
            return 'child, after exit' if pid in exited and ts >= exited[pid] \
                else 'child, before exit'
        if comm.startswith('mm_reaper'):
            return 'reaper'
        return 'other (' + re.sub(r'[\d/:]+$', '', comm) + ')'

    def account(cpu, upto):
        if cpu not in running:
            return
        pid, comm, since = running[cpu]
        a, z = max(since, t0), min(upto, t1)
        # split a child's slice at its sched_process_exit
        if pid in exited and a < exited[pid] < z:
            use[cat(pid, comm, a)] += exited[pid] - a
            a = exited[pid]
        if z > a:
            use[cat(pid, comm, a)] += z - a

    for ts, cpu, pid, comm, name, rest in ev:
        if name != 'sched_switch':
            continue
        f = fields(rest)
        if cpu not in running:
            running[cpu] = (int(f.get('prev_pid', 0)), f.get('prev_comm', '?'),
                            ev[0][0])
        account(cpu, ts)
        n = int(f.get('next_pid', 0))
        running[cpu] = (n, f.get('next_comm', '?'), ts)
        pp = int(f.get('prev_pid', 0))
        if pp in kids and t0 <= ts <= t1:
            prios[pp].add(int(f.get('prev_prio', -1)))
        if n in kids and t0 <= ts <= t1:
            prios[n].add(int(f.get('next_prio', -1)))
    for cpu in list(running):
        account(cpu, t1)
    span = (t1 - t0) * 1e3
    print(f"== {b['cfg']}: kill -> all reaped {span:.2f} ms;"
          f" memory back {((marks.get('back', t1) - t0) * 1e3):.1f} ms")
    total = sum(use.values()) * 1e3
    for k, v in sorted(use.items(), key=lambda kv: -kv[1]):
        print(f"   {k:28s} {v * 1e3:8.2f} ms CPU  ({100 * v * 1e3 / total:5.1f} %)")

    def rel(x):
        return f"{(x - t0) * 1e3:8.2f}" if x is not None else '       -'
    print("   child   woken  on-cpu  p.exit  parent-woken  teardown start..end  prio")
    for p in b['children']:
        k = kid[p]
        print(f"   {p:6d} {rel(k.get('woken'))} {rel(k.get('first_run'))}"
              f" {rel(k.get('exit'))} {rel(k.get('parent_woken'))}     "
              f"{rel(k.get('td_start'))}..{rel(k.get('td_end'))} {k.get('by', '')}"
              f"  {','.join(str(x) for x in sorted(prios[p]))}")
    parent_timeline(b, ev, t0, t1)
    placement(b, ev, t0, t1, kid)


def placement(b, ev, t0, t1, kid):
    """Where CFS put the children: the snapshots taken before and right
    after the kills (vruntime in ms; min_vruntime of each CPU's root
    cfs_rq; the runnable tasks with their tree-key), then, for the child
    that first ran last, the vruntime of whatever ran on its CPU while it
    waited (sched_stat_runtime, where the kernel reports it)."""
    if not b['sched']:
        return
    print("   placement (ms of vruntime):")
    for x in b['sched']:
        print("     " + x)
    late = [p for p in b['children'] if 'first_run' in kid[p]]
    if not late:
        return
    last = max(late, key=lambda p: kid[p]['first_run'])
    woken, ran = kid[last].get('woken', t0), kid[last]['first_run']
    cpu = kid[last].get('woken_cpu')
    print(f"   child {last} waited {(ran - woken) * 1e3:.2f} ms (woken for"
          f" cpu{cpu}); vruntime of what ran there meanwhile:")
    seen = {}
    for ts, c, pid, comm, name, rest in ev:
        if name != 'sched_stat_runtime' or c != cpu or not woken <= ts <= ran:
            continue
        f = fields(rest)
        vr = f.get('vruntime')
        if vr is None:
            continue
        seen.setdefault(pid, []).append((ts, int(vr) / 1e6, comm))
    for pid, v in seen.items():
        print(f"     {v[0][2]}-{pid}: {v[0][1]:.3f} at"
              f" {(v[0][0] - t0) * 1e3:.2f} .. {v[-1][1]:.3f} at"
              f" {(v[-1][0] - t0) * 1e3:.2f}")


def parent_timeline(b, ev, t0, t1):
    """The parent from kill to reaped: running, runnable-waiting, asleep."""
    parent = b['parent']
    state, since = 'running?', t0
    tot = defaultdict(float)
    lines = []
    for ts, cpu, pid, comm, name, rest in ev:
        if ts < t0 or ts > t1:
            continue
        f = fields(rest)
        if name == 'sched_switch' and int(f.get('prev_pid', -1)) == parent:
            tot['running'] += ts - since
            st = f.get('prev_state', '?')
            state = 'asleep' if st.startswith(('S', 'D')) else 'runnable'
            nxt = f"{f.get('next_comm', '?')}-{f.get('next_pid', '?')}"
            lines.append(f"   {(ts - t0) * 1e3:8.2f} off cpu{cpu} ({st}), next {nxt}")
            since = ts
        elif name == 'sched_switch' and int(f.get('next_pid', -1)) == parent:
            if state != 'running?':
                tot[state if state != 'woken' else 'runnable'] += ts - since
            lines.append(f"   {(ts - t0) * 1e3:8.2f} on  cpu{cpu}"
                         f" after {(ts - since) * 1e3:.2f} ms {state}")
            state, since = 'running', ts
        elif name == 'sched_wakeup' and int(f.get('pid', -1)) == parent:
            if state == 'asleep':
                tot['asleep'] += ts - since
                state, since = 'woken', ts
            lines.append(f"   {(ts - t0) * 1e3:8.2f} woken by {comm}-{pid}"
                         f" on cpu{cpu} for cpu{f.get('target_cpu', '?')}")
    if state == 'running':
        tot['running'] += t1 - since
    elif state in ('asleep', 'runnable', 'woken'):
        tot['asleep' if state == 'asleep' else 'runnable'] += t1 - since
    print(f"   parent {parent}: running {tot['running'] * 1e3:.2f} ms,"
          f" runnable but off a CPU {tot['runnable'] * 1e3:.2f} ms,"
          f" asleep {tot['asleep'] * 1e3:.2f} ms")
    for x in lines:
        print(x)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    for b in parse(sys.argv[1]):
        summarise(b)


if __name__ == '__main__':
    main()
