#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install what the test bed needs on a fresh Debian 12 host (root only),
# plus any packages named as arguments (scripts that need more).
#   scripts/deps.sh [PACKAGE...]
# Idempotent: does nothing when every package is already installed.
set -euo pipefail

pkgs=(gcc make libc6-dev pkg-config libkmod-dev kmod cpio busybox-static
      qemu-system-x86 debootstrap dkms file xz-utils)
# The headers of the bookworm kernel we boot (linux-headers-amd64 pulls the
# current ABI); DKMS tests build against them too.
pkgs+=(linux-headers-amd64 "$@")

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "deps: missing packages (${missing[*]}); run as root" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
