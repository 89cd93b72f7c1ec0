#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the static guest programs: tests (tests/guest/t/*.c) and tools.
#   scripts/build-guest.sh OUTDIR
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/build/guest}
# AMT_GUEST_CC: a cross compiler (aarch64-linux-gnu-gcc for an arm64 guest)
cc=${AMT_GUEST_CC:-gcc}
mkdir -p "$out/tests" "$out/tools"
# the guest library the tests, the benchmark, the demo and the soak share
lib=$top/tools/lib/amt_guest.c
hdrs=("$top/tools/lib/amt_guest.h" "$top/module/interface.h")
cflags=(-static -O2 -g0 -Wall -Wextra -Wno-unused-parameter -Werror -D_GNU_SOURCE -pthread
	-I "$top/tools/lib")

build() { # src dst
	if [ ! -e "$2" ] || [ "$1" -nt "$2" ] || [ "$lib" -nt "$2" ] ||
	   [ "${hdrs[0]}" -nt "$2" ] || [ "${hdrs[1]}" -nt "$2" ]; then
		"$cc" "${cflags[@]}" -o "$2" "$1" "$lib" -lm
	fi
}
for src in "$top"/tests/guest/t/*.c; do
	build "$src" "$out/tests/$(basename "$src" .c)"
done
# a test whose source is gone (renamed, removed) must not run
for bin in "$out"/tests/*; do
	[ -e "$top/tests/guest/t/$(basename "$bin").c" ] || rm -f "$bin"
done
# tools, harness self-tests, and tests that need a boot of their own
for src in "$top"/tools/*.c "$top"/tests/harness/*_test.c \
	   "$top"/tests/guest/special/*.c; do
	[ -e "$src" ] || continue
	build "$src" "$out/tools/$(basename "$src" .c)"
done
# the benchmark: one program from tools/bench/ (one file per section)
bench=$out/tools/exit_latency
if [ ! -e "$bench" ] || [ -n "$(find "$top/tools/bench" "$lib" "${hdrs[@]}" \
	-newer "$bench" 2>/dev/null)" ]; then
	"$cc" "${cflags[@]}" -o "$bench" "$top"/tools/bench/*.c "$lib" -lm
fi
# amtctl is dynamically linked (libkmod): run-guest.sh ships its libraries
"$top/scripts/build-amtctl.sh" "$out" ${AMT_GUEST_ARCH:-}
