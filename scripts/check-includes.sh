#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The module's files use each other without a cycle: a file and its header
# (hook.c and hook.h) are one node, each #include "x.h" an edge, and the
# graph must sort topologically (main at the top, the redirect helper, the
# counters and the pure policy at the bottom). Prints one TAP line; exit
# status 1 on a cycle.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top/module" || exit 1
edges=$(for f in *.c *.h; do
	from=${f%.*}
	[ "$from" = amt_trace ] && from=trace
	sed -n 's/^#include "\(.*\)\.h".*/\1/p' "$f" | while read -r to; do
		[ "$to" = amt_trace ] && to=trace
		# compat.h is force-included everywhere; amt.h holds only checks
		case $to in compat|amt|"$from") continue ;; esac
		echo "$from $to"
	done
done | sort -u)
if loop=$(echo "$edges" | tsort 2>&1 >/dev/null) && [ -z "$loop" ]; then
	echo "ok - includes: the module's files use each other without a cycle ($(echo "$edges" | wc -l) edges)"
else
	echo "not ok - includes: the module's files use each other without a cycle # $(echo "$loop" | tr '\n' ' ' | cut -c1-200)"
	exit 1
fi
