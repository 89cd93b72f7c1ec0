#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build async_mm_teardown.ko for a suite's kernel, out of the source tree.
#
#   scripts/build-module.sh SUITE [extra make args]
#
# AMT_SRC=DIR builds the sources in DIR instead of module/ (check-debug's
# bug-injection self-test builds a deliberately broken copy).
#
# The sources are copied to build/<kver>/module-src and built there, so
# several kernels can be built side by side. Prints the .ko path on stdout.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
suite=${1:-bookworm}
shift || true
eval "$("$top/scripts/kernel.sh" "$suite")"
# the validation kernel gets the module's own debug build (AMT_DEBUG checks)
[ "$suite" != debug ] || set -- AMT_DEBUG=1 "$@"

out=$top/build/$KVER/module-src${AMT_SRC:+-alt}
mkdir -p "$out"
# -p keeps timestamps, so kbuild rebuilds only what changed
rm -rf "$out/module.new" && cp -rp "${AMT_SRC:-$top/module}" "$out/module.new"
for f in "$out"/module/*; do
	[ -e "$out/module.new/${f##*/}" ] || rm -f "$f"
done
cp -rp "$out/module.new/." "$out/module/" && rm -rf "$out/module.new"
cp -p "$top/Kbuild" "$top/VERSION" "$out/"
if [ -n "$CHROOT" ]; then
	"$top/scripts/suite-chroot.sh" "$suite" run \
		make -C "$KDIR" M="$out" ${KMAKE:-} "$@" modules >&2
else
	make -C "$KDIR" M="$out" ${KMAKE:-} "$@" modules >&2
fi
echo "$out/async_mm_teardown.ko"
