#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build (once) the validation kernel: Debian's linux-source-6.1 configured
# from allnoconfig plus tests/debug/kernel.config (a QEMU guest with
# KASAN, lockdep, DEBUG_VM, PAGE_TABLE_CHECK, kmemleak, ...).
#
#   scripts/debug-kernel.sh          build if needed; print KVER, VMLINUZ,
#                                    KDIR, CHROOT like scripts/kernel.sh
#
# Cached under .cache/debug/ (git-ignored), keyed by the source package's
# version and the configuration fragment: a second run builds nothing.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cache=${AMT_CACHE:-$top/.cache}/debug
frag=$top/tests/debug/kernel.config
jobs=${AMT_JOBS:-$(($(nproc) + 1))}

"$top/scripts/deps.sh" bison flex libelf-dev bc libssl-dev xz-utils

srcver=$(apt-cache policy linux-source-6.1 | awk '/Candidate:/ {print $2}')
[ -n "$srcver" ] && [ "$srcver" != "(none)" ] ||
	{ echo "debug-kernel: linux-source-6.1 not available from apt" >&2; exit 1; }
# bump when the way the kernel is built changes (a fresh build follows)
recipe=1
key=$(sha256sum < "$frag" | cut -c1-12)-r$recipe-$srcver
src=$cache/src-$srcver
obj=$cache/build
mkdir -p "$cache"

if [ ! -e "$src/.unpacked" ]; then
	echo "debug-kernel: unpacking linux-source-6.1 $srcver" >&2
	rm -rf "$src" "$cache/deb" && mkdir -p "$cache/deb" "$src"
	(cd "$cache/deb" && apt-get download -q linux-source-6.1 >&2)
	dpkg -x "$cache"/deb/linux-source-6.1_*.deb "$cache/deb/x"
	tar -xaf "$cache"/deb/x/usr/src/linux-source-6.1.tar.* -C "$src" \
		--strip-components=1
	rm -rf "$cache/deb"
	touch "$src/.unpacked"
fi

if [ "$(cat "$obj/.amt-key" 2>/dev/null)" != "$key" ]; then
	echo "debug-kernel: building (key $key, -j$jobs); ~$(date -d '+20 min' +%H:%M)" >&2
	start=$SECONDS
	rm -rf "$obj" && mkdir -p "$obj"
	# allnoconfig with the fragment's values forced; then check that
	# Kconfig kept every one (a dependency it dropped would leave a
	# debug net silently off).
	make -s -C "$src" O="$obj" ARCH=x86_64 KCONFIG_ALLCONFIG="$frag" \
		LOCALVERSION=-amt-debug allnoconfig >&2
	bad=0
	while IFS= read -r line; do
		case $line in CONFIG_*=*) ;; *) continue ;; esac
		grep -qxF "$line" "$obj/.config" || {
			echo "debug-kernel: Kconfig dropped '$line'" >&2; bad=1; }
	done < "$frag"
	[ $bad = 0 ] || exit 1
	make -s -C "$obj" ARCH=x86_64 LOCALVERSION=-amt-debug -j"$jobs" \
		bzImage modules_prepare >&2
	# Module.symvers (no modules are built: everything is built in)
	make -s -C "$obj" ARCH=x86_64 LOCALVERSION=-amt-debug -j"$jobs" \
		modules >&2
	echo "debug-kernel: built in $((SECONDS - start)) s" >&2
	echo "$key" > "$obj/.amt-key"
fi

echo "KVER=$(cat "$obj/include/config/kernel.release")"
echo "VMLINUZ=$obj/arch/x86/boot/bzImage"
echo "KDIR=$obj"
echo "CHROOT="
