# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# scripts/check-package.sh's helpers (sourced): TAP lines, the command log
# (build/logs/check-package.log, emptied here), dpkg and apt wrappers.
say() { echo "# $*" >&2; }
ok() { echo "ok - package: $1"; }
nok() {
	echo "not ok - package: $1${2:+ # $2}"
	fail=1
}

mkdir -p "$top/build/logs"
logf=$top/build/logs/check-package.log
: > "$logf"
why() { grep -v '^[[:space:]]*$' "$logf" | tail -n 2 | tr '\n' ' ' | cut -c1-200; }
run() { # CMD...: output to the log
	echo "\$ $*" >> "$logf"
	"$@" >> "$logf" 2>&1
}
t() { # NAME CMD...: one TAP line from CMD's status
	local n=$1
	shift
	if run "$@"; then ok "$n"; else nok "$n" "$(why)"; fi
}
installed() { # PKG: any dpkg state but not-installed
	local s
	s=$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null) || return 1
	[ -n "$s" ] && [ "$s" != not-installed ]
}
# shellcheck disable=SC2317 # called through run
aptget() {
	DEBIAN_FRONTEND=noninteractive apt-get -y -q -o DPkg::Lock::Timeout=300 "$@"
}
