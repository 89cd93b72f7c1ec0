#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Make a Debian kernel available for the guest, without installing it.
#
#   scripts/kernel.sh SUITE      SUITE: bookworm (default, 6.1), bookworm-rt
#                                (its PREEMPT_RT flavour), bookworm-arm64
#                                (its arm64 kernel), trixie, sid,
#                                trixie-arm64, sid-arm64, or debug (our
#                                KASAN/lockdep build of 6.1)
#
# Prints shell assignments on stdout: KVER, VMLINUZ, KDIR and CHROOT (empty
# for bookworm, whose kbuild runs on this host; trixie and sid headers need a
# newer glibc, so their module build runs in a cached debootstrap chroot);
# for an arm64 kernel also KARCH, KTRIPLET, KMAKE (the make variables of a
# cross build: ARCH and CROSS_COMPILE) and BUSYBOX.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cache=${AMT_CACHE:-$top/.cache}
suite=${1:-bookworm}

flavour=amd64
case "$suite" in
bookworm) ;;
bookworm-rt) flavour=rt-amd64 ;;
trixie|sid) exec "$top/scripts/suite-chroot.sh" "$suite" ;;
*-arm64)
	# every arm64 kernel: the host cross-builds the guest programs (and,
	# for bookworm, the module) and runs the emulator
	"$top/scripts/deps.sh" gcc-aarch64-linux-gnu libc6-dev-arm64-cross \
		qemu-system-arm >&2
	case $suite in
	bookworm-arm64) exec "$top/scripts/kernel-arm64.sh" ;;
	trixie-arm64|sid-arm64) exec "$top/scripts/suite-chroot.sh" "$suite" ;;
	esac ;;&
debug) exec "$top/scripts/debug-kernel.sh" ;;
*) echo "kernel.sh: unknown suite '$suite' (allowed: bookworm bookworm-rt bookworm-arm64 trixie sid trixie-arm64 sid-arm64 debug)" >&2
   exit 2 ;;
esac

"$top/scripts/deps.sh"
# linux-headers-$flavour depends on linux-headers-<current ABI>-$flavour.
hdr=$(apt-cache depends "linux-headers-$flavour" | awk '/Depends: linux-headers-/ {print $2; exit}')
kver=${hdr#linux-headers-}
[ -n "$kver" ] || { echo "kernel.sh: cannot resolve bookworm kernel" >&2; exit 1; }
if [ ! -e "/lib/modules/$kver/build/Makefile" ]; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$hdr" >&2
fi

dir=$cache/kernels/$kver
if [ ! -s "$dir/vmlinuz" ] || [ ! -d "$dir/kmod" ]; then
	dl=$cache/kernels/.$kver.debs
	rm -rf "$dl" "$dir" && mkdir -p "$dl"
	(cd "$dl" && apt-get download -q "linux-image-$kver-unsigned" >&2)
	"$top/scripts/kernel-unpack.sh" "$kver" "$dir" "$dl"/*.deb
	rm -rf "$dl"
fi
echo "KVER=$kver"
echo "VMLINUZ=$dir/vmlinuz"
echo "KDIR=/lib/modules/$kver/build"
echo "CHROOT="
