#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Unpack downloaded Debian kernel packages into what a guest boot needs,
# the same way for every suite (scripts/kernel.sh for bookworm,
# scripts/suite-chroot.sh for trixie and sid; never installed):
#
#   scripts/kernel-unpack.sh KVER DEST DEB...
#
# DEST/vmlinuz   the bootable image (linux-image-KVER-unsigned up to
#                Debian 13, linux-binary-unsigned-KVER from 14 on)
# DEST/config    its configuration
# DEST/kmod/     the kernel's modules that guest tests load (vhost-net and
#                what it needs), uncompressed
# DEST must not exist; it is made in one step (a sibling temporary first).
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 KVER DEST DEB..." >&2; exit 2; }
kver=$1 dest=$2
shift 2
. "$(dirname "$0")/arch.sh"
# modules of the guest's kernel that tests load
kmods="vhost vhost_net vhost_iotlb tun tap virtio_mmio virtio_console"

[ ! -e "$dest" ] || { echo "kernel-unpack: $dest exists" >&2; exit 1; }
tmp=$dest.unpack.$$
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/root" "$tmp/kmod"
for deb in "$@"; do
	dpkg -x "$deb" "$tmp/root"
done

img=''
for f in "$tmp/root/boot/vmlinuz-$kver" \
	 "$tmp/root/usr/lib/modules/$kver/vmlinuz.unsigned" \
	 "$tmp/root/usr/lib/modules/$kver/vmlinuz" \
	 "$tmp/root/lib/modules/$kver/vmlinuz"; do
	if kimage_ok "$f"; then img=$f; break; fi
done
[ -n "$img" ] || { echo "kernel-unpack: no bootable kernel image (bzImage, arm64 Image) for $kver in $*" >&2; exit 1; }
cp "$img" "$tmp/vmlinuz"
for f in "$tmp/root/boot/config-$kver" "$tmp/root/usr/lib/modules/$kver/config" \
	 "$tmp/root/lib/modules/$kver/config"; do
	if [ -f "$f" ]; then cp "$f" "$tmp/config"; break; fi
done
[ -f "$tmp/config" ] || echo "kernel-unpack: warning: no config for $kver" >&2
for m in $kmods; do
	f=$(find "$tmp/root" \( -name "$m.ko" -o -name "$m.ko.xz" \) -print -quit)
	case $f in
	*.xz) xz -dc "$f" > "$tmp/kmod/$m.ko" ;;
	?*) cp "$f" "$tmp/kmod/" ;;
	esac
done
rm -rf "$tmp/root"
mv -T "$tmp" "$dest"
trap - EXIT
