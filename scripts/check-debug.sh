#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check-debug: the guest suite and a soak on the validation kernel
# (scripts/debug-kernel.sh: 6.1 with KASAN, lockdep, DEBUG_VM,
# PAGE_TABLE_CHECK, kmemleak, ...) with the module's AMT_DEBUG build, then
# proof that this net catches a real bug: a copy of the module with an
# extra mmdrop() after each deferred teardown must fail.
#
#   scripts/check-debug.sh          AMT_SOAK=SECS (default 300)
#
# The first run builds the kernel (cached in .cache/debug/; see
# docs/testing.md for the time). Ends with "N passed, N failed".
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
soak=${AMT_SOAK:-300}
. "$top/scripts/tap.sh"
run() { # what, run-guest.sh args...
	local what=$1
	shift
	tap_run "debug: $what" "$top/scripts/run-guest.sh" -k debug "$@"
}

start=$SECONDS
if ! kenv=$("$top/scripts/debug-kernel.sh"); then
	echo "not ok - debug: kernel builds" | emit
	echo "0 passed, 1 failed"
	exit 1
fi
eval "$kenv"
echo "# debug kernel $KVER ready after $((SECONDS - start)) s"

# KASAN and lockdep under TCG: ~4x slower than the Debian kernel.
# A teardown itself is ~18x slower (docs/testing.md): amt_tslow scales
# the bounds that time teardowns.
# The suite in two boots (01-28 took 56 min, 29-43 about as long): each
# boot's time limit stays meaningful and a hang costs one half.
# Not respawn_stress: its burners at nice -10 on every vCPU starve
# teardowns this kernel makes ~18x slower, and one run did not end within
# the 40 min a test may take; its paths (the OOM notifier's drain, the
# shrinker) run here in oom_backlog and memcg_respawn. Nor the workloads
# make check leaves out (crun_lifecycle, restart_loop: make
# check-workloads); their cgroup and memcg paths run in cgroup_rmdir,
# memcg_respawn and memcg_stuck.
dbg_args="amt_slow=4 amt_tslow=20 amt_timeout=2400"
run "guest suite, tests 01-28" -r suite -T 5400 -a "$dbg_args" \
	-t '0*' -t '1[0-9]_*' -t '2[1-8]_*'
run "guest suite, tests 29 on" -r suite -T 7200 -a "$dbg_args" \
	-t '29_*' -t '3[0-6]_*' -t '39_*' -t '[4-9]*'
run "soak" -r soak -T $((soak + 1800)) -a "amt_soak=$soak"

# The net must catch a planted bug: an extra mmdrop() after each deferred
# teardown (amt_teardown(): a reference it does not own) is a
# use-after-free.
inj=$top/build/inject/module
rm -rf "$inj" && mkdir -p "$inj" && cp -p "$top"/module/* "$inj/"
sed -i 's/^\tmmdrop(mm);$/&\n\tmmdrop(mm);\t\/* injected bug *\//' "$inj/pending.c"
if ! grep -q 'injected bug' "$inj/pending.c"; then
	echo "not ok - harness: debug kernel catches an injected double mmdrop # the injection no longer applies to pending.c" | emit
elif ! ko=$(AMT_SRC=$inj "$top/scripts/build-module.sh" debug 2>/dev/null); then
	echo "not ok - harness: debug kernel catches an injected double mmdrop # the broken copy does not build" | emit
else
	out=$("$top/scripts/run-guest.sh" -k debug -r suite -K "$ko" \
		-t '02_*' -T 1800 -a "amt_slow=4" 2>/dev/null)
	if echo "$out" | grep -qE '^not ok - .*kernel log clean # .*(KASAN|BUG|WARNING|refcount|Kernel panic)'; then
		echo "ok - harness: debug kernel catches an injected double mmdrop"
	else
		echo "not ok - harness: debug kernel catches an injected double mmdrop # not caught"
	fi | emit
	echo "$out" | sed 's/^/# /'
fi

echo "# check-debug took $((SECONDS - start)) s"
tap_summary
