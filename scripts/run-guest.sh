#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Boot a Debian kernel under QEMU with the module and the guest programs,
# run something inside, and judge the run from the outside.
#
#   scripts/run-guest.sh [-k SUITE] [-r RUN] [-t GLOB] [-T SECS] [-m MEM]
#                        [-a 'extra cmdline'] [-x extra.ko] [-K module.ko]
#                        [-c CPUS] [-P] [-I]
#
# -t selects tests by file name (tests/guest/t/GLOB; may be repeated), -a adds
# to the kernel command line (may be repeated), -x adds a module to
# /amt/, -K boots a prebuilt async_mm_teardown.ko (e.g. the one DKMS built)
# instead of building one, -c sets the vCPU count (default 2), -P pins each
# vCPU thread to its own host CPU at raised priority (for benchmarks: an
# unpinned TCG vCPU migrating between host CPUs is the largest noise source
# here), -I runs the guest under TCG's -icount (guest time counts
# executed instructions, 1 ns each: host load cannot change a guest
# timing; one vCPU, see below). Dynamically linked guest programs
# (build/guest/dyn/*) and Debian's crun and earlyoom (scripts/guest-program.sh
# fetches them and the libraries they link) go to /usr/bin with what ldd
# names.
#
# RUN is suite (default), demo, bench, or a harness self-test mode. Prints
# unnumbered TAP lines ("ok - name", "not ok - name # why") on stdout: the
# guest's verdicts plus the harness's own judgement of the kernel log and
# the power-off. Logs go to build/logs/. Exit status 1 on any failure.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
suite=bookworm run=suite globs=() timeout=1500 mem=3G append='' extra=() ko=''
cpus=2 pin=0 icount=0
while getopts k:r:t:T:m:a:x:K:c:PI o; do
	case $o in
	k) suite=$OPTARG ;;
	r) run=$OPTARG ;;
	t) globs+=("$OPTARG") ;;
	T) timeout=$OPTARG ;;
	m) mem=$OPTARG ;;
	a) append+=" $OPTARG" ;;
	x) extra+=("$OPTARG") ;;
	K) ko=$OPTARG ;;
	c) cpus=$OPTARG ;;
	P) pin=1 ;;
	I) icount=1 ;;
	*) exit 2 ;;
	esac
done

"$top/scripts/deps.sh"
eval "$("$top/scripts/kernel.sh" "$suite")"
# KARCH: set by kernel.sh for a kernel of another architecture than the
# host's (arm64): cross-built guest programs, Debian's programs of that
# architecture, qemu-system-aarch64 (TCG)
karch=${KARCH:-}
guest=$top/build/guest${karch:+-$karch}
[ -n "$ko" ] || ko=$("$top/scripts/build-module.sh" "$suite")
# the tests' fixture module (tests/guest/helper/), loaded by tests that need it
helper=$("$top/scripts/build-helper.sh" "$suite")
AMT_GUEST_ARCH=$karch AMT_GUEST_CC=${KTRIPLET:+$KTRIPLET-}gcc \
	"$top/scripts/build-guest.sh" "$guest"
# Debian programs the guest tests run, unpacked from their packages
crun=$("$top/scripts/guest-program.sh" crun $karch)
earlyoom=$("$top/scripts/guest-program.sh" earlyoom $karch)

# initramfs: busybox, /init, the module, the selected tests, the tools
# Per-invocation names: several runs may share the tree.
id=$KVER-$run-$$
stage=$top/build/initramfs-$id
trap 'rm -rf "$stage" "$stage.cpio"' EXIT
rm -rf "$stage"
mkdir -p "$stage"/{bin,amt,tests,tools,proc,sys,dev,tmp}
cp "${BUSYBOX:-/bin/busybox}" "$stage/bin/busybox"
cp "$top/tests/guest/init" "$stage/init"
cp "$ko" "$stage/amt/async_mm_teardown.ko"
cp "$helper" "$stage/amt/amt_helper.ko"
[ ${#extra[@]} -eq 0 ] || cp "${extra[@]}" "$stage/amt/"
# modules of the guest's own kernel that tests load (scripts/kernel.sh's
# kmod/, or the unpacked linux-modules package of trixie and sid)
# (none for the debug kernel, which builds them in)
mkdir -p "$stage/amt/kmod"
kdir=${AMT_CACHE:-$top/.cache}/kernels/$KVER
# (arm64: virtio-mmio and its console carry the verdict port, hvc0)
for m in vhost vhost_net vhost_iotlb tun tap ${karch:+virtio_mmio virtio_console}; do
	[ -d "$kdir" ] || break
	f=$(find "$kdir/" \( -name "$m.ko" -o -name "$m.ko.xz" \) | head -n 1)
	case $f in
	*.xz) xz -dc "$f" > "$stage/amt/kmod/$m.ko" ;;
	?*) cp "$f" "$stage/amt/kmod/" ;;
	esac
done
[ ${#globs[@]} -gt 0 ] || globs=('*')
for glob in "${globs[@]}"; do
	for t in "$guest"/tests/$glob; do
		[ -e "$t" ] && cp "$t" "$stage/tests/"
	done
done
cp "$guest"/tools/* "$stage/tools/" 2>/dev/null || true
# PROG to the guest's /usr/bin with the libraries ldd names; those found
# in TREE (an unpacked Debian package tree) go to the same path in the guest
ship() { # PROG [TREE]
	[ -z "$karch" ] || { ship_tree "$@"; return; }
	local prog=$1 tree=${2:-} libpath='' lib dst out
	[ -z "$tree" ] ||
		libpath=$tree/lib/x86_64-linux-gnu:$tree/usr/lib/x86_64-linux-gnu
	out=$(LD_LIBRARY_PATH=$libpath ldd "$prog")
	if grep -q 'not found' <<< "$out"; then
		echo "run-guest: $prog: $(grep 'not found' <<< "$out" | tr -s '\t\n' '  ')" >&2
		exit 1
	fi
	mkdir -p "$stage/usr/bin"
	cp "$prog" "$stage/usr/bin/"
	for lib in $(grep -o '/[^ ]*' <<< "$out"); do
		dst=$lib
		[ -z "$tree" ] || dst=${lib#"$tree"}
		mkdir -p "$stage$(dirname "$dst")"
		cp -L "$lib" "$stage$dst"
	done
}
# Another architecture: no ldd; the ELF interpreter and the NEEDED
# libraries, recursively, from TREE (an unpacked Debian tree of that
# architecture, libc6 included) to the same paths in the guest.
ship_tree() { # PROG TREE
	local prog=$1 tree=$2 todo=("$1") f lib d found interp
	mkdir -p "$stage/usr/bin"
	cp "$prog" "$stage/usr/bin/"
	interp=$(readelf -l "$prog" | sed -n 's/.*interpreter: \(.*\)]/\1/p')
	if [ -n "$interp" ]; then
		mkdir -p "$stage$(dirname "$interp")"
		cp -L "$tree$interp" "$stage$interp"
	fi
	while [ ${#todo[@]} -gt 0 ]; do
		f=${todo[0]}
		todo=("${todo[@]:1}")
		for lib in $(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
			found=''
			for d in /lib/$KTRIPLET /usr/lib/$KTRIPLET; do
				[ -e "$tree$d/$lib" ] || continue
				found=$d/$lib
				break
			done
			[ -n "$found" ] || {
				echo "run-guest: $prog: $lib not found in $tree" >&2
				exit 1
			}
			[ -e "$stage$found" ] && continue
			mkdir -p "$stage$(dirname "$found")"
			cp -L "$tree$found" "$stage$found"
			todo+=("$tree$found")
		done
	done
}
for prog in "$guest"/dyn/*; do
	[ -x "$prog" ] && ship "$prog" $(cat "$guest/dyn/.tree" 2>/dev/null)
done
# Debian's crun, an OCI runtime, with its libraries (crun_lifecycle)
ship "$crun/root/usr/bin/crun" "$crun/root"
# Debian's earlyoom, a userspace OOM killer (userspace_oom)
ship "$earlyoom/root/usr/bin/earlyoom" "$earlyoom/root"
initrd=$stage.cpio
(cd "$stage" && find . | cpio -o -H newc --quiet) > "$initrd"

logs=$top/build/logs
mkdir -p "$logs"
console=$logs/$id.console.log
results=$logs/$id.results
: > "$console"
: > "$results"
# the latest run of each kind, for people and for scripts/demo.sh
ln -sfn "$id.console.log" "$logs/$KVER-$run.console.log"
ln -sfn "$id.results" "$logs/$KVER-$run.results"

qemu_extra=()
accel=tcg
[ -n "$karch" ] || accel=$("$top/scripts/accel.sh" "$VMLINUZ")
if [ "$icount" = 1 ]; then
	# deterministic virtual time exists only for single-threaded TCG;
	# sleep=off: idle time jumps to the next timer instead of passing.
	# One vCPU: QEMU 7.2 (bookworm) stalls in "Booting SMP
	# configuration" under -icount with -smp 2.
	accel=tcg,thread=single
	qemu_extra=(-icount shift=0,sleep=off,align=off)
	pin=0 cpus=1
fi
if [ -n "$karch" ]; then
	cmdline="console=ttyAMA0 amt_port=hvc0"
else
	cmdline="console=ttyS0"
fi
cmdline+=" panic=-1 oops=panic panic_on_warn=1 softlockup_panic=1"
cmdline+=" hung_task_panic=1 nmi_watchdog=0 mitigations=off rdinit=/init"
cmdline+=" amt_run=$run $append"
# "TID N" for each vCPU thread ("CPU N/TCG" or "CPU N/KVM") of QEMU $1.
vcpu_threads() {
	grep -H '^CPU [0-9]*/' /proc/"$1"/task/*/comm 2>/dev/null |
		sed -E 's|^/proc/[0-9]+/task/([0-9]+)/comm:CPU ([0-9]+)/.*|\1 \2|'
}
# Pin vCPU thread N to host CPU N (mod the host's count), QEMU at nice -10.
pin_vcpus() {
	local i tid n
	for i in $(seq 100); do
		[ "$(vcpu_threads "$1" | wc -l)" -lt "$cpus" ] || break
		sleep 0.1
	done
	renice -n -10 -p $(ls /proc/"$1"/task) >/dev/null 2>&1 || true
	vcpu_threads "$1" | while read -r tid n; do
		taskset -pc $((n % $(nproc))) "$tid" >/dev/null
	done
	echo "# pinned $cpus vCPU threads of qemu $1" >&2
}
boot() {
	echo "# booting $KVER ($accel, $mem) for '$run'; log: $console" >&2
	if [ -n "$karch" ]; then
		# pauth-impdef: TCG's fast pointer-authentication algorithm
		# (QARMA, the architected one, costs much of the guest's time);
		# the verdicts on a virtio console, virt having one UART
		qemu-system-aarch64 -machine virt -accel "$accel" \
			-cpu max,pauth-impdef=on -smp "$cpus" -m "$mem" \
			"${qemu_extra[@]}" -name "amt-guest,debug-threads=on" \
			-kernel "$VMLINUZ" -initrd "$initrd" -append "$cmdline" \
			-display none -monitor none -no-reboot \
			-serial "file:$console" \
			-device virtio-serial-device \
			-chardev "file,id=amtres,path=$results" \
			-device virtconsole,chardev=amtres &
	else
		qemu-system-x86_64 -accel "$accel" -cpu max -smp "$cpus" -m "$mem" \
			"${qemu_extra[@]}" -name "amt-guest,debug-threads=on" \
			-kernel "$VMLINUZ" -initrd "$initrd" -append "$cmdline" \
			-display none -monitor none -no-reboot \
			-serial "file:$console" -serial "file:$results" &
	fi
	qpid=$!
	[ "$pin" = 0 ] || pin_vcpus "$qpid" &
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
}
boot
# Boot once more, keeping the first log and saying so on stdout, when the
# first boot failed for a reason not ours: the kernel died before /init
# ran, or TCG ran stale code around a kernel text patch (scripts/tcg-fault.sh
# says what that looks like and why it is the emulator's). Never more than
# once: a second failure counts.
again=''
if ! grep -aq '^amt: kernel ' "$console" && [ ! -s "$results" ]; then
	again=boot-failure
elif [ "$accel" != kvm ] && "$top/scripts/tcg-fault.sh" "$console"; then
	again=tcg-fault
fi
# After a TCG fault in a test (the init marks each test "#test NAME" on the
# verdict port), the second boot resumes at that test: the verdicts before
# it stand, and so must the first boot's kernel log up to the fault's
# report. (The end-of-boot unload and kmemleak checks cover the second
# boot's tests only.)
from='' before=''
if [ -n "$again" ]; then
	mv "$console" "$console.$again"
	mv "$results" "$results.$again"
	[ "$again" = tcg-fault ] &&
		from=$(tr -d '\r' < "$results.$again" |
			sed -n 's/^#test \([^ ]*\)$/\1/p' | tail -n 1)
	if [ -n "$from" ]; then
		cmdline+=" amt_from=$from"
		before=$logs/$id.before-$from
		tr -d '\r' < "$results.$again" | sed "/^#test $from\$/,\$d" \
			> "$before.results"
		n=$("$top/scripts/tcg-fault.sh" -n "$console.$again")
		tr -d '\r' < "$console.$again" | head -n $((n - 1)) \
			> "$before.console.log"
	fi
	echo "# $KVER: $run: $again in the first boot (log kept: $console.$again); booting again${from:+, resuming at $from}"
	boot
fi

fail=0
for r in ${before:+"$before.results"} "$results"; do
	tr -d '\r' < "$r" | grep -E '^(ok|not ok) ' |
		sed -E "s/^(ok|not ok) - /\1 - $KVER: /" || true
	grep -q '^not ok ' "$r" && fail=1
done

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
# where a suite's time went (the init's "amt: took" lines), for a log
# that keeps only this output
tr -d '\r' < "$console" | awk '/^amt: running / { t = $3 " " $4 }
	/^amt: took / && t != "" { print $3, t; t = "" }' | sort -rn | head -n 5 |
	awk '{ s = s sep $2 " [" $3 "] " $1 " s"; sep = ", " }
	     END { if (s != "") print "# '"$KVER: $run"': slowest: " s }'
# (lockdep, KASAN and UBSAN reports all carry a BUG: or WARNING: header;
# the debug kernel's boot banners name lockdep and kmemleak harmlessly)
bad='BUG:|WARNING:|Oops|Call Trace|bad rss-counter|KASAN:|possible circular locking|inconsistent lock state|blocked for more than|soft lockup|Kernel panic|suspected memory leak|general protection'
judge_log() { # LOG SPLATS LABEL
	# The OOM killer dumps a stack by design ("invoked oom-killer" ...
	# "Killed process"): only its Call Trace lines are excused.
	if grep -av 'ommand line:' "$1" |
		awk '/invoked oom-killer:/ { oom = 1 } /Killed process|oom_reaper:/ { oom = 0 }
		     !(oom && /Call Trace/)' |
		grep -aEn "$bad" > "$2"; then
		# the failure names the check without its parenthesis: check.sh
		# and check-debug.sh match "kernel log clean # REPORT"
		echo "not ok - $KVER: $run: ${3% (*} # $(head -1 "$2" | cut -c1-150)"
		# the first report itself (RIP, call trace), for a log CI
		# does not keep
		local n
		n=$(head -1 "$2" | cut -d: -f1)
		grep -av 'ommand line:' "$1" | tr -d '\r' |
			sed -n "$((n > 5 ? n - 5 : 1)),$((n + 45))p" | sed 's/^/#   /'
		return 1
	fi
	echo "ok - $KVER: $run: $3"
}
if [ -n "$before" ]; then
	judge_log "$before.console.log" "$before.splats" \
		"kernel log clean (first boot, up to its TCG fault)" || fail=1
fi
judge_log "$console" "$logs/$id.splats" \
	"kernel log clean (no warning, oops, hang or bad rss-counter)" || fail=1
exit $fail
