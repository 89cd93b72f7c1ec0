#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Boot a Debian kernel under QEMU with the module and the guest programs,
# run something inside, and judge the run from the outside.
#
#   scripts/run-guest.sh [-k SUITE] [-r RUN] [-t GLOB] [-T SECS] [-m MEM]
#                        [-a 'extra cmdline'] [-x extra.ko]
#
# RUN is suite (default), demo, bench, or a harness self-test mode. Prints
# unnumbered TAP lines ("ok - name", "not ok - name # why") on stdout: the
# guest's verdicts plus the harness's own judgement of the kernel log and
# the power-off. Logs go to build/logs/. Exit status 1 on any failure.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
suite=bookworm run=suite glob='*' timeout=1500 mem=3G append='' extra=()
while getopts k:r:t:T:m:a:x: o; do
	case $o in
	k) suite=$OPTARG ;;
	r) run=$OPTARG ;;
	t) glob=$OPTARG ;;
	T) timeout=$OPTARG ;;
	m) mem=$OPTARG ;;
	a) append=$OPTARG ;;
	x) extra+=("$OPTARG") ;;
	*) exit 2 ;;
	esac
done

"$top/scripts/deps.sh"
eval "$("$top/scripts/kernel.sh" "$suite")"
ko=$("$top/scripts/build-module.sh" "$suite")
"$top/scripts/build-guest.sh" "$top/build/guest"

# initramfs: busybox, /init, the module, the selected tests, the tools
stage=$top/build/initramfs-$KVER-$run
rm -rf "$stage"
mkdir -p "$stage"/{bin,amt,tests,tools,proc,sys,dev,tmp}
cp /bin/busybox "$stage/bin/busybox"
cp "$top/tests/guest/init" "$stage/init"
cp "$ko" "${extra[@]}" "$stage/amt/"
for t in "$top"/build/guest/tests/$glob; do
	[ -e "$t" ] && cp "$t" "$stage/tests/"
done
cp "$top"/build/guest/tools/* "$stage/tools/" 2>/dev/null || true
initrd=$top/build/initramfs-$KVER-$run.cpio
(cd "$stage" && find . | cpio -o -H newc --quiet) > "$initrd"

logs=$top/build/logs
mkdir -p "$logs"
console=$logs/$KVER-$run.console.log
results=$logs/$KVER-$run.results
: > "$console"
: > "$results"

accel=tcg
[ -w /dev/kvm ] && accel=kvm
cmdline="console=ttyS0 panic=-1 oops=panic panic_on_warn=1 softlockup_panic=1"
cmdline+=" hung_task_panic=1 nmi_watchdog=0 mitigations=off rdinit=/init"
cmdline+=" amt_run=$run $append"
echo "# booting $KVER ($accel, $mem) for '$run'; log: $console" >&2
qemu-system-x86_64 -accel "$accel" -cpu max -smp 2 -m "$mem" \
	-name "amt-guest,debug-threads=on" \
	-kernel "$VMLINUZ" -initrd "$initrd" -append "$cmdline" \
	-display none -monitor none -no-reboot \
	-serial "file:$console" -serial "file:$results" &
qpid=$!
start=$SECONDS
while kill -0 "$qpid" 2>/dev/null; do
	if [ $((SECONDS - start)) -ge "$timeout" ]; then
		kill -9 "$qpid" 2>/dev/null || true
		break
	fi
	sleep 1
done
wait "$qpid" 2>/dev/null && qrc=0 || qrc=$?
elapsed=$((SECONDS - start))

fail=0
tr -d '\r' < "$results" | grep -E '^(ok|not ok) ' |
	sed -E "s/^(ok|not ok) - /\1 - $KVER: /" || true
grep -q '^not ok ' "$results" && fail=1

# The harness's own verdicts.
if [ "$elapsed" -ge "$timeout" ]; then
	echo "not ok - $KVER: $run: guest powered off in time # killed after ${timeout}s"
	fail=1
elif ! grep -q '^#DONE' "$results"; then
	echo "not ok - $KVER: $run: guest ran to the end # no end marker, qemu status $qrc; see $console"
	fail=1
else
	echo "ok - $KVER: $run: guest ran to the end and powered off (${elapsed}s)"
fi
bad='BUG:|WARNING:|Oops|Call Trace|bad rss-counter|KASAN|lockdep|possible circular locking|blocked for more than|soft lockup|Kernel panic|kmemleak|general protection'
if grep -av 'ommand line:' "$console" | grep -aEn "$bad" > "$logs/$KVER-$run.splats"; then
	echo "not ok - $KVER: $run: kernel log clean # $(head -1 "$logs/$KVER-$run.splats" | cut -c1-150)"
	fail=1
else
	echo "ok - $KVER: $run: kernel log clean (no warning, oops, hang or bad rss-counter)"
fi
exit $fail
