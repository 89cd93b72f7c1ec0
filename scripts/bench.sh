#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench: boot one guest, run tools/exit_latency in it (sync, reaper
# and self mode interleaved within that boot), keep the results.
#
#   scripts/bench.sh [SUITE]       SUITE: bookworm (default), trixie, sid
#
# Environment: AMT_BENCH_MEM (guest RAM, default 7G: room for 2 GiB children
# and for 16 x 256 MiB), AMT_BENCH_ROUNDS
# (default 7), AMT_BENCH_QUICK=1 (a smoke run of every section, minutes),
# AMT_BENCH_TRACE=1 (after the sections, one traced round of 8 x 256 MiB
# killed together per configuration, kept as <kernel><tag>.trace and
# summarised by scripts/trace-parallel.py: where the CPUs went until the
# parent had reaped them all), AMT_BENCH_ICOUNT=1 (make bench-icount: only the small-process loops, under
# QEMU's -icount, where guest time counts instructions: a cost of a fraction
# of a percent shows through, which host noise hides in a normal run),
# AMT_BENCH_ONLY=SECTION[,SECTION] (some of latency, parallel, spawn, cpu,
# wake, cpusplit, busy, prefork, zap, pinned: those sections alone; on a kernel that
# refuses mode=self, busy and prefork are the ones that run),
# AMT_BENCH_CMDLINE (added to the guest kernel's command line, e.g.
# preempt=full; results then carry it in their name), AMT_BENCH_SETTLE_MS (idle time
# after each insmod/rmmod of the small-process loops before they are timed;
# default 300, under -icount 12000: idle guest time is free there, and the
# first round after boot ran at half speed with 300, see docs/benchmarks.md).
# Writes bench/results/<kernel>.{txt,json,dat,svg} (-icount, AMT_BENCH_ONLY:
# <kernel>-icount.{txt,json}, <kernel>-<sections>.{txt,json}, no plot); the
# .svg needs gnuplot (installed here if missing). vCPU
# threads are pinned one per host CPU (-icount: one vCPU, not pinned).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
suite=${1:-bookworm}
mem=${AMT_BENCH_MEM:-7G}
rounds=${AMT_BENCH_ROUNDS:-7}
append="amt_rounds=$rounds"
[ "${AMT_BENCH_QUICK:-0}" = 0 ] || append+=" amt_quick=--quick"
icount=${AMT_BENCH_ICOUNT:-0} how=(-P) tag=''
only=${AMT_BENCH_ONLY:-}
accel=
settle=${AMT_BENCH_SETTLE_MS:-}
if [ "$icount" != 0 ]; then
	how=(-I) tag=-icount accel='TCG -icount (run-guest.sh -I)'
	only=${only:-spawn}
	settle=${settle:-12000}
fi
# exit_latency checks the same range, but only once the guest has booted
if [ -n "$settle" ] && ! { [[ $settle =~ ^[0-9]{1,5}$ ]] && ((10#$settle <= 60000)); }; then
	echo "bench: AMT_BENCH_SETTLE_MS='$settle': give milliseconds, 0 to 60000" >&2
	exit 2
fi
[ -z "$settle" ] || append+=" amt_settle=--spawn-settle=$settle"
if [ -n "${AMT_BENCH_ONLY:-}" ]; then
	# exit_latency's own list, so that a typo fails before the boot
	known=$(sed -n '/section_table\[\] = {/,/};/p' \
		"$top/tools/bench/main.c" | grep -o '^	{ "[a-z]*"' |
		grep -o '"[a-z]*"' | tr -d '"' | paste -sd,)
	IFS=, read -ra names <<< "$only,"
	for name in "${names[@]:-}"; do
		if ! [[ ,$known, == *,"$name",* ]] || [ -z "$name" ]; then
			echo "bench: AMT_BENCH_ONLY='$only': name sections from $known, separated by commas" >&2
			exit 2
		fi
	done
	tag+=-${only//,/-}
fi
[ -z "$only" ] || append+=" amt_only=--only=$only"
cmdline=${AMT_BENCH_CMDLINE:-}
if [ -n "$cmdline" ]; then
	if ! [[ $cmdline =~ ^[a-z0-9_.=,-]+( [a-z0-9_.=,-]+)*$ ]]; then
		echo "bench: AMT_BENCH_CMDLINE='$cmdline': kernel parameters (name or name=value), separated by spaces" >&2
		exit 2
	fi
	append+=" $cmdline"
	tag+=-${cmdline//[ =]/-}
fi
trace=${AMT_BENCH_TRACE:-0}
[ "$trace" = 0 ] || append+=" amt_trace=--trace=/tmp/trace.txt"

eval "$("$top/scripts/kernel.sh" "$suite")"
qemu=qemu-system-x86_64
[ "${KARCH:-}" != arm64 ] || qemu=qemu-system-aarch64
[ -n "$accel" ] || accel=$("$top/scripts/accel.sh" "$VMLINUZ" | tr a-z A-Z)
out=$top/bench/results
mkdir -p "$out"
rc=0
"$top/scripts/run-guest.sh" -k "$suite" -r bench -m "$mem" "${how[@]}" \
	-T 7200 -a "$append" || rc=$?
res=$top/build/logs/$KVER-bench.results
cut_section() { # from to
	tr -d '\r' < "$res" | sed -n "/^#$1\$/,/^#\($2\)\$/p" | sed '1d;$d'
}
if ! grep -q '^#ENDBENCH' "$res"; then
	echo "bench: no results from the guest (see build/logs/$KVER-bench.console.log)" >&2
	exit 1
fi
{
	echo "# make bench KERNEL=$suite ($(date -u +%Y-%m-%d), host: $(nproc) CPUs,"
	echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'),"
	echo "# QEMU $("$qemu" --version | head -1 | awk '{print $4}')" \
	     "$accel, guest $mem${cmdline:+, kernel command line + $cmdline})"
	cut_section TABLE JSON
} > "$out/$KVER$tag.txt"
cut_section JSON PLOT > "$out/$KVER$tag.json"
if [ "$trace" != 0 ]; then
	cut_section TRACE ENDTRACE > "$out/$KVER$tag.trace"
	python3 "$top/scripts/trace-parallel.py" "$out/$KVER$tag.trace" |
		tee "$out/$KVER$tag.trace.txt"
fi
if [ -n "$only" ]; then
	echo "bench: results in bench/results/$KVER$tag.{txt,json}" >&2
	cat "$out/$KVER$tag.txt"
	exit $rc
fi
cut_section PLOT 'ENDBENCH\|TRACE' > "$out/$KVER.dat"

if ! command -v gnuplot >/dev/null; then
	[ "$(id -u)" = 0 ] && DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq --no-install-recommends gnuplot-nox >&2 || true
fi
if command -v gnuplot >/dev/null; then
	gnuplot <<GP
set terminal svg size 720,440 dynamic font "sans,12"
set output "$out/$KVER.svg"
set title "kill -> waitpid() latency, Linux $KVER (QEMU, one boot; median, p10-p90)"
set logscale xy
set xlabel "memory of the killed process (MiB, anonymous, THP off)"
set ylabel "ms"
set key top left
set grid
plot "$out/$KVER.dat" using 1:2:3:4 with yerrorlines title "sync (module off)", \
     "" using 1:5:6:7 with yerrorlines title "mode=reaper", \
     "" using 1:8:9:10 with yerrorlines title "mode=self"
GP
fi
echo "bench: results in bench/results/$KVER.{txt,json,dat,svg}" >&2
cat "$out/$KVER.txt"
exit $rc
