# SPDX-License-Identifier: GPL-2.0
# Sourced: what the scripts know of a guest kernel's architecture, in one
# place (kernel-unpack.sh, kernel-arm64.sh, suite-chroot.sh,
# build-amtctl.sh).

# kimage_ok FILE: FILE is a kernel image QEMU boots directly: the x86 boot
# protocol's "HdrS" at offset 0x202, or the arm64 Image header's "ARM\x64"
# at offset 0x38.
kimage_ok() {
	[ -f "$1" ] || return 1
	[ "$(dd if="$1" bs=1 skip=514 count=4 2>/dev/null)" = HdrS ] ||
		[ "$(dd if="$1" bs=1 skip=56 count=4 2>/dev/null | od -An -tx1 | tr -d ' ')" = 41524d64 ]
}

# arch_triplet ARCH: the GNU triplet of a Debian architecture other than
# the host's (its cross compiler's prefix, its multiarch directory).
arch_triplet() {
	case $1 in
	arm64) echo aarch64-linux-gnu ;;
	*) echo "arch.sh: architecture '$1': only arm64 besides the host's" >&2
	   return 1 ;;
	esac
}

# arch_env ARCH: the lines kernel.sh prints for a kernel of ARCH built on
# this host: KARCH, KTRIPLET, KMAKE (the make variables of a cross build).
arch_env() {
	local t
	t=$(arch_triplet "$1") || return 1
	printf '%s\n' "KARCH=$1" "KTRIPLET=$t" "KMAKE='ARCH=$1 CROSS_COMPILE=$t-'"
}
