#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the amtctl admin CLI (tools/amtctl, dynamically linked against
# libkmod) out of the source tree and stage it where run-guest.sh ships
# dynamically linked programs, with their libraries, to the guest's /usr/bin.
#   scripts/build-amtctl.sh [OUTDIR [ARCH]]   (default build/guest, the host's)
# ARCH arm64: cross-built against Debian's arm64 libkmod-dev, unpacked
# (scripts/guest-program.sh), whose tree run-guest.sh ships libraries from.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/arch.sh"
out=${1:-$top/build/guest}
arch=${2:-}
obj=$top/build/amtctl${arch:+-$arch}
mkdir -p "$obj" "$out/dyn"
case $arch in
'') make -s -C "$top/tools/amtctl" O="$obj" >&2 ;;
arm64)
	t=$(arch_triplet "$arch")
	tree=$("$top/scripts/guest-program.sh" libkmod-dev "$arch")/root
	lib=$tree/usr/lib/$t
	PKG_CONFIG_SYSROOT_DIR=$tree PKG_CONFIG_LIBDIR=$lib/pkgconfig \
	make -s -C "$top/tools/amtctl" O="$obj" CC="$t-gcc" \
		LDFLAGS="-Wl,-rpath-link,$lib -Wl,-rpath-link,$tree/lib/$t" >&2
	echo "$tree" > "$out/dyn/.tree" ;;
*) echo "build-amtctl: ARCH '$arch': the host's or arm64" >&2; exit 2 ;;
esac
install -m 0755 "$obj/amtctl" "$out/dyn/amtctl"
