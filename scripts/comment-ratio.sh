#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The module's comment ratio: comment-only lines / lines with code, per
# file and for module/*.c together (blank lines count as neither; a line
# with code and a trailing comment counts as code), and the same without
# kernel-doc blocks (/** ... */), which every non-static function keeps.
#
#   scripts/comment-ratio.sh [FILES...]     (default module/*.c)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
[ $# -gt 0 ] || set -- "$top"/module/*.c
printf "%-14s %8s %8s %6s %13s\n" file comment code ratio "w/o kernel-doc"
awk '
FNR == 1 { if (f) out(); f = FILENAME; c = d = k = 0; inc = 0 }
function out() {
	n = f; sub(/.*\//, "", n)
	printf "%-14s %8d %8d %6.2f %13.2f\n", n, c, k, k ? c / k : 0,
	       k ? (c - d) / k : 0
	tc += c; td += d; tk += k
}
{
	line = $0
	if (inc) {
		c++; d += doc
		if (index(line, "*/")) inc = 0
		next
	}
	if (line ~ /^[ \t]*$/) next
	if (line ~ /^[ \t]*\/\//) { c++; next }
	if (line ~ /^[ \t]*\/\*/) {
		c++
		doc = line ~ /^[ \t]*\/\*\*([ \t]|$)/
		d += doc
		if (!index(substr(line, index(line, "/*") + 2), "*/")) inc = 1
		next
	}
	k++
	# code followed by a comment that goes on
	if (index(line, "/*") && !index(substr(line, index(line, "/*") + 2), "*/")) {
		inc = 1; doc = 0
	}
}
END {
	if (f) out()
	printf "%-14s %8d %8d %6.2f %13.2f\n", "total", tc, tk, tk ? tc / tk : 0,
	       tk ? (tc - td) / tk : 0
}
' "$@"
