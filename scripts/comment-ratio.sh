#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The module's comment ratio: comment-only lines / lines with code, per
# file and for module/*.c together (blank lines count as neither; a line
# with code and a trailing comment counts as code). Kernel-doc counts as
# comment. Prints one line per file, then the total.
#
#   scripts/comment-ratio.sh [FILES...]     (default module/*.c)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
[ $# -gt 0 ] || set -- "$top"/module/*.c
awk '
FNR == 1 { if (f) out(); f = FILENAME; c = k = 0; inc = 0 }
function out() {
	n = f; sub(/.*\//, "", n)
	printf "%-14s %5d comment %5d code  %.2f\n", n, c, k, k ? c / k : 0
	tc += c; tk += k
}
{
	line = $0
	if (inc) {
		c++
		if (index(line, "*/")) inc = 0
		next
	}
	if (line ~ /^[ \t]*$/) next
	if (line ~ /^[ \t]*\/\//) { c++; next }
	if (line ~ /^[ \t]*\/\*/) {
		c++
		if (!index(substr(line, index(line, "/*") + 2), "*/")) inc = 1
		next
	}
	k++
	# code followed by a comment that goes on
	if (index(line, "/*") && !index(substr(line, index(line, "/*") + 2), "*/"))
		inc = 1
}
END { if (f) out(); printf "%-14s %5d comment %5d code  %.2f\n", "total", tc, tk, tk ? tc / tk : 0 }
' "$@"
