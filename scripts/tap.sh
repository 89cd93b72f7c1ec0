# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# TAP bookkeeping shared by check.sh and check-debug.sh (sourced).
#   emit         reads unnumbered "ok - x" / "not ok - x" lines from stdin,
#                numbers and records them, passes other lines through
#   tap_run WHAT CMD...
#                runs CMD and emits its verdicts; a CMD that fails without
#                a single "not ok" line (a build or setup failure) still
#                counts, as "not ok - WHAT ran". TAP_FILTER, if set, is a
#                sed -E script applied to CMD's output first.
#   tap_summary  prints "# N skipped" and "N passed, N failed"; status 0
#                only if nothing failed and something passed
# Skips ("ok ... # SKIP") count as neither passed nor failed.
tap=$(mktemp)
trap 'rm -f "$tap"' EXIT

emit() {
	local line
	while IFS= read -r line; do
		case "$line" in
		"ok "*|"not ok "*)
			echo "$line" >> "$tap"
			echo "${line/ok /ok $(wc -l < "$tap") }" ;;
		*) echo "$line" ;;
		esac
	done
}

tap_run() {
	local what=$1 out rc
	shift
	out=$("$@")
	rc=$?
	[ -z "${TAP_FILTER:-}" ] || out=$(echo "$out" | sed -E "$TAP_FILTER")
	echo "$out" | emit
	if [ $rc != 0 ] && ! echo "$out" | grep -q '^not ok '; then
		echo "not ok - $what ran # ${1##*/} failed with status $rc before any verdict (see above)" | emit
	fi
}

tap_summary() {
	local pass skip fail
	pass=$(grep -c '^ok ' "$tap" || true)
	skip=$(grep -c '^ok .*# SKIP' "$tap" || true)
	fail=$(grep -c '^not ok ' "$tap" || true)
	pass=$((pass - skip))
	echo "# $skip skipped"
	echo "$pass passed, $fail failed"
	[ "$fail" = 0 ] && [ "$pass" -gt 0 ]
}
