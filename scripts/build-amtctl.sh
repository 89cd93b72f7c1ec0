#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the amtctl admin CLI (tools/amtctl, dynamically linked against
# libkmod) out of the source tree and stage it where run-guest.sh ships
# dynamically linked programs, with their libraries, to the guest's /usr/bin.
#   scripts/build-amtctl.sh [OUTDIR]     (default build/guest)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/build/guest}
obj=$top/build/amtctl
mkdir -p "$obj" "$out/dyn"
make -s -C "$top/tools/amtctl" O="$obj" >&2
install -m 0755 "$obj/amtctl" "$out/dyn/amtctl"
