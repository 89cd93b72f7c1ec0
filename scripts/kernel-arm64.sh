#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Debian 12's arm64 kernel, for a module built on this x86_64 host and a
# guest booted under qemu-system-aarch64 (TCG); nothing is installed but
# the cross compiler and the emulator (scripts/kernel.sh's deps.sh call).
#
#   scripts/kernel-arm64.sh      (kernel.sh bookworm-arm64 calls it)
#
# The arm64 headers, image and busybox come from scripts/apt-arch.sh; the
# headers tree is unpacked under the cache with its kbuild tools taken from
# linux-kbuild-6.1 of the host's architecture and the same version (host
# programs: fixdep, modpost). Prints what kernel.sh prints, plus KARCH,
# KTRIPLET (the GNU triplet: compiler prefix, multiarch directory), KMAKE
# (the make variables of a cross build) and BUSYBOX.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/arch.sh"
cache=${AMT_CACHE:-$top/.cache}

hdr=$("$top/scripts/apt-arch.sh" arm64 cache depends linux-headers-arm64 |
	awk '/Depends: linux-headers-/ {print $2; exit}')
kver=${hdr#linux-headers-}
[ -n "$kver" ] || { echo "kernel-arm64: cannot resolve bookworm's arm64 kernel" >&2; exit 1; }
abi=${kver%-arm64}

dir=$cache/kernels/$kver
if [ ! -s "$dir/vmlinuz" ] || [ ! -e "$dir/kmod/virtio_console.ko" ] ||
   [ ! -f "$dir/headers/usr/src/linux-headers-$kver/Makefile" ] ||
   [ ! -x "$dir/busybox" ]; then
	dl=$cache/kernels/.$kver.debs
	rm -rf "$dl" "$dir" && mkdir -p "$dl/host"
	(cd "$dl" && "$top/scripts/apt-arch.sh" arm64 download \
		"linux-image-$kver-unsigned" "linux-headers-$kver" \
		"linux-headers-$abi-common" busybox-static)
	"$top/scripts/kernel-unpack.sh" "$kver" "$dir" \
		"$dl"/linux-image-*.deb
	h=$dir/headers
	for deb in "$dl"/linux-headers-*.deb; do
		dpkg -x "$deb" "$h"
	done
	# the same kbuild version, built for this host
	kb=$(dpkg-deb -f "$dl"/linux-headers-"$kver"_*.deb Depends |
	     tr ',' '\n' | sed -n 's/^ *\(linux-kbuild-[0-9.]*\).*/\1/p')
	kbver=$(dpkg-deb -f "$dl"/linux-headers-"$kver"_*.deb Version)
	(cd "$dl/host" && apt-get download -q "$kb=$kbver" >&2)
	dpkg -x "$dl"/host/"$kb"_*.deb "$h"
	# the arm64 tree names the common tree and kbuild by absolute paths
	sed -i "s|/usr/src/linux-headers-$abi-common|$h/usr/src/linux-headers-$abi-common|" \
		"$h/usr/src/linux-headers-$kver/Makefile"
	for l in scripts tools; do
		ln -sfn "$h/usr/lib/$kb/$l" "$h/usr/src/linux-headers-$kver/$l"
		[ -e "$h/usr/src/linux-headers-$abi-common/$l" ] ||
			ln -sfn "$h/usr/lib/$kb/$l" \
				"$h/usr/src/linux-headers-$abi-common/$l"
	done
	dpkg -x "$dl"/busybox-static_*.deb "$dl/bb"
	cp "$dl/bb/bin/busybox" "$dir/busybox"
	rm -rf "$dl"
fi
echo "KVER=$kver"
echo "VMLINUZ=$dir/vmlinuz"
echo "KDIR=$dir/headers/usr/src/linux-headers-$kver"
echo "CHROOT="
arch_env arm64
echo "BUSYBOX=$dir/busybox"
