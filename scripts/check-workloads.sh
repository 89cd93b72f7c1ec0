#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check-workloads: the workload tests make check leaves out, the
# restart loop at its full length: tests/guest/t/38_restart_loop.c, a
# Restart=always loop of a 1 GiB service, 50 restarts per configuration
# (module off, mode=reaper, mode=self, interleaved) in each of its two
# memory.max settings, and crun_lifecycle, in one boot with its vCPUs
# pinned (as make bench); in the same boot respawn_stress, the longest
# stress, which make check leaves out too (scripts/check.sh's
# "workload_only").
#
#   scripts/check-workloads.sh [SUITE]    SUITE: bookworm (default), trixie, sid
#
# Environment: AMT_RESTARTS (rounds, default 50), AMT_WORKLOADS_MEM (guest
# RAM, default 3G, the size make check boots). Prints the verdicts (TAP) and
# the test's measurements, which it also keeps in
# bench/results/<kernel>-restart.txt; exit status 1 on any failure.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
suite=${1:-bookworm}
restarts=${AMT_RESTARTS:-50}
mem=${AMT_WORKLOADS_MEM:-3G}
if ! [[ $restarts =~ ^[0-9]{1,3}$ ]] || ((10#$restarts < 1 || 10#$restarts > 200)); then
	echo "check-workloads: AMT_RESTARTS='$restarts': give 1 to 200" >&2
	exit 2
fi
# the test's own alarm allows 10 s a restart (2 settings x 3 configurations)
per_test=$((60 + restarts * 60 + 60))
eval "$("$top/scripts/kernel.sh" "$suite")"
rc=0
"$top/scripts/run-guest.sh" -k "$suite" -r suite -t '20_*' -t '37_*' \
	-t '38_*' -m "$mem" -P \
	-T $((per_test + 600)) \
	-a "amt_restarts=$restarts amt_timeout=$per_test" || rc=$?
out=$top/bench/results
mkdir -p "$out"
{
	echo "# make check-workloads KERNEL=$suite ($(date -u +%Y-%m-%d), host: $(nproc) CPUs,"
	echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'),"
	echo "# QEMU $(qemu-system-x86_64 --version | head -1 | awk '{print $4}')," \
	     "guest $mem, amt_restarts=$restarts)"
	tr -d '\r' < "$top/build/logs/$KVER-suite.console.log" |
		sed -n '/^# restart_loop:/,/^\(ok\|not ok\) - restart_loop/p'
} > "$out/$KVER-restart.txt"
echo "check-workloads: measurements in bench/results/$KVER-restart.txt" >&2
cat "$out/$KVER-restart.txt"
exit $rc
