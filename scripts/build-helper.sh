#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the guest tests' fixture module (tests/guest/helper/) for a suite's
# kernel, out of the source tree. It is loaded only inside the test guest.
#
#   scripts/build-helper.sh SUITE
#
# Prints the .ko path on stdout.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
suite=${1:-bookworm}
eval "$("$top/scripts/kernel.sh" "$suite")"

out=$top/build/$KVER/helper-src
mkdir -p "$out"
# -p keeps timestamps, so kbuild rebuilds only what changed
cp -p "$top"/tests/guest/helper/* "$out/"
if [ -n "$CHROOT" ]; then
	"$top/scripts/suite-chroot.sh" "$suite" run \
		make -C "$KDIR" M="$out" ${KMAKE:-} modules >&2
else
	make -C "$KDIR" M="$out" ${KMAKE:-} modules >&2
fi
echo "$out/amt_helper.ko"
