#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Cached Debian build chroot + matching bootable kernel, for trixie and sid,
# of this host's architecture or (SUITE-arm64) of arm64, cross-built.
#
# Usage:
#   scripts/suite-chroot.sh SUITE             # SUITE: trixie | sid |
#                                             #   trixie-arm64 | sid-arm64
#   scripts/suite-chroot.sh SUITE run CMD...  # run CMD inside the chroot
#
# Setup mode creates (once) a debootstrap --variant=minbase chroot of SUITE
# at $AMT_CACHE/chroot/SUITE with gcc, make, libc6-dev and
# linux-headers-amd64, downloads (never installs) the unsigned kernel image
# that matches those headers and unpacks it with scripts/kernel-unpack.sh
# (as scripts/kernel.sh does for bookworm) into $AMT_CACHE/kernels/KVER/:
# vmlinuz, config and kmod/. It then prints exactly these lines on stdout
# (everything else goes to stderr), for `eval "$(scripts/suite-chroot.sh sid)"`:
#   KVER=<kernel version of the headers / image>
#   VMLINUZ=<absolute path of the bootable bzImage>
#   CHROOT=<absolute path of the chroot>
#   KDIR=/lib/modules/<kver>/build   (path INSIDE the chroot)
# SUITE-arm64: the chroot is still amd64, with arm64 added as a dpkg
# architecture and linux-headers-arm64:arm64 installed (Debian's headers
# pull the cross compiler, gcc-N-for-host:arm64, and the amd64 kbuild
# tools, Multi-Arch: foreign); the image is the arm64 one, and busybox-static
# of arm64 lands in the kernel's directory. It prints, in addition, what
# scripts/kernel-arm64.sh prints: KARCH, KTRIPLET, KMAKE and BUSYBOX.
#
# Run mode bind-mounts the project root at the same absolute path inside the
# chroot, mounts /proc, runs CMD (cwd kept if it lies inside the project, else
# /) with KVER and KDIR exported, and unmounts everything afterwards. Note
# that `uname -r` inside a chroot is the host's: always pass KDIR explicitly,
# e.g.  scripts/suite-chroot.sh sid run sh -c 'make -C "$KDIR" M=$PWD modules'
#
# Environment:
#   AMT_CACHE            cache root (default: <project root>/.cache)
#   AMT_MIRROR           Debian mirror (default: http://deb.debian.org/debian)
#   AMT_SECURITY_MIRROR  (default: http://deb.debian.org/debian-security)
#
# Everything is created atomically (built in a temp dir, then renamed, with a
# completion marker), so an interrupted run leaves no half-made cache entry;
# a second run does no network access. There is no automatic refresh: to
# pick up newer packages / kernels delete the cache entries, e.g.
#   rm -rf --one-file-system .cache/chroot/sid .cache/kernels/*deb14*
# (make sure no `run` of this script is active at the time).
#
# Requires root (debootstrap, chroot, mount). All mounts are made in a
# private mount namespace (unshare) when possible, so they can never leak.
# shellcheck disable=SC2317 # 0.9 takes the code after the re-exec for unreachable
set -euo pipefail
self=$(readlink -f "${BASH_SOURCE[0]}")
top=$(cd "$(dirname "$self")/.." && pwd -P)
. "$top/scripts/arch.sh"
mirror=${AMT_MIRROR:-http://deb.debian.org/debian}
security_mirror=${AMT_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
apt_opts=(-o Acquire::Check-Valid-Until=false -o Acquire::Languages=none
	-o APT::Install-Recommends=false -o Dpkg::Use-Pty=false -q)
marker=.amt-suite-chroot-complete
chroot_pkgs=(gcc make libc6-dev linux-headers-amd64)

usage() {
	sed -n '5,7p' "$self" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

log() { printf '[suite-chroot] %s\n' "$*" >&2; }
die() {
	printf '[suite-chroot] ERROR: %s\n' "$*" >&2
	exit 1
}

[ $# -ge 1 ] || usage
args=("$@")
suite=$1
shift
case $suite in
trixie|sid|trixie-arm64|sid-arm64) ;;
-h|--help) usage ;;
*) die "unsupported suite '$suite' (use trixie, sid, trixie-arm64 or sid-arm64)" ;;
esac
# the Debian release, and the architecture of its kernel (":arm64" names
# that architecture's packages in the amd64 chroot)
release=${suite%-arm64} karch='' ka=''
if [ "$release" != "$suite" ]; then
	karch=arm64 ka=:arm64
fi
headers=linux-headers-${karch:-amd64}$ka
[ -z "$karch" ] || chroot_pkgs=(make "$headers")
mode=setup
if [ $# -gt 0 ]; then
	[ "$1" = run ] || usage
	shift
	[ $# -gt 0 ] || die "run: no command given"
	mode=run
fi
[ "$EUID" -eq 0 ] || die "must run as root (debootstrap/chroot/mount)"

# Re-exec in a private mount namespace: every mount made below (debootstrap's,
# apt's /proc, run mode's binds) then disappears with the process even if it
# is killed with SIGKILL. The traps still unmount explicitly.
if [ -z "${AMT_SUITE_CHROOT_NS:-}" ] && command -v unshare >/dev/null &&
	unshare --mount --propagation private true 2>/dev/null; then
	export AMT_SUITE_CHROOT_NS=1
	exec unshare --mount --propagation private -- \
		bash "$self" "${args[@]}"
fi

# stdout is reserved for the result lines (setup) / CMD output (run).
exec 3>&1 1>&2

cache=${AMT_CACHE:-$top/.cache}
mkdir -p "$cache/chroot" "$cache/kernels"
cache=$(cd "$cache" && pwd -P)
chroot_dir=$cache/chroot/$suite

# Helpers: mounts, atomic cache entries, commands inside a chroot.

mounts_below() { # DIR: mount points at or below DIR, deepest first
	local p=${1%/}
	awk -v p="$p" '$5 == p || index($5, p "/") == 1 { print $5 }' \
		/proc/self/mountinfo | sort -r
}

umount_below() { # DIR
	local m
	while read -r m; do
		[ -n "$m" ] || continue
		umount "$m" 2>/dev/null || umount -l "$m" || true
	done < <(mounts_below "$1")
}

safe_rm() { # DIR: rm -rf that refuses to descend into anything still mounted
	local d=$1
	if [ ! -e "$d" ] && [ ! -L "$d" ]; then
		return 0
	fi
	umount_below "$d"
	if [ -n "$(mounts_below "$d")" ]; then
		die "refusing to delete $d: still has mounts below it"
	fi
	rm -rf --one-file-system -- "$d"
}

cleanup_dirs=()
cleanup_mounts=()
cleanup() {
	local rc=$? i
	for ((i = ${#cleanup_mounts[@]} - 1; i >= 0; i--)); do
		umount_below "${cleanup_mounts[i]}"
	done
	for i in "${cleanup_dirs[@]}"; do
		[ -n "$i" ] || continue
		log "cleaning up incomplete $i"
		safe_rm "$i" || true
	done
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

in_chroot() { # ROOT CMD...
	local root=$1
	shift
	chroot "$root" /usr/bin/env -i \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive \
		DEBCONF_NONINTERACTIVE_SEEN=true "$@"
}

mount_proc() { # ROOT
	mkdir -p "$1/proc"
	mountpoint -q "$1/proc" && return 0
	cleanup_mounts+=("$1/proc")
	mount -t proc proc "$1/proc"
}

with_lock() { # NAME CMD...: serialise creation between runs
	local name=$1
	shift
	exec {lockfd}>"$cache/.$name.lock"
	flock "$lockfd"
	"$@"
	exec {lockfd}>&-
}

sources_for() { # SUITE: its Debian release list, one-line format
	local opt='[check-valid-until=no]'
	case $1 in
	trixie)
		echo "deb $opt $mirror trixie main"
		echo "deb $opt $mirror trixie-updates main"
		echo "deb $opt $security_mirror trixie-security main"
		;;
	sid)
		echo "deb $opt $mirror sid main"
		;;
	esac
}

# The chroot.

ensure_debootstrap() {
	command -v debootstrap >/dev/null && return 0
	log "installing debootstrap on the host"
	apt-get install -y --no-install-recommends debootstrap ||
		{ apt-get update && apt-get install -y --no-install-recommends debootstrap; }
}

create_chroot() {
	[ -f "$chroot_dir/$marker" ] && return 0
	ensure_debootstrap
	local stale
	for stale in "$cache/chroot/.$suite.tmp."*; do
		[ -e "$stale" ] && { log "removing stale $stale"; safe_rm "$stale"; }
	done
	if [ -e "$chroot_dir" ]; then
		log "removing incomplete chroot $chroot_dir"
		safe_rm "$chroot_dir"
	fi
	local tmp=$cache/chroot/.$suite.tmp.$$ t0=$SECONDS
	cleanup_dirs+=("$tmp")
	mkdir -p "$tmp"
	log "debootstrap --variant=minbase $release -> $tmp"
	debootstrap --variant=minbase --arch=amd64 "$release" "$tmp" "$mirror" >&2

	sources_for "$release" > "$tmp/etc/apt/sources.list"
	cat > "$tmp/etc/apt/apt.conf.d/99amt" <<'EOF'
// written by scripts/suite-chroot.sh: the mirror is a dated snapshot
Acquire::Check-Valid-Until "false";
Acquire::Languages "none";
APT::Install-Recommends "false";
APT::Install-Suggests "false";
EOF
	printf '#!/bin/sh\nexit 101\n' > "$tmp/usr/sbin/policy-rc.d"
	chmod 755 "$tmp/usr/sbin/policy-rc.d"
	cp -L /etc/resolv.conf "$tmp/etc/resolv.conf" 2>/dev/null || true

	mount_proc "$tmp"
	[ -z "$karch" ] || in_chroot "$tmp" dpkg --add-architecture "$karch"
	in_chroot "$tmp" apt-get "${apt_opts[@]}" update >&2
	in_chroot "$tmp" apt-get "${apt_opts[@]}" -y dist-upgrade >&2
	local extra=()
	stub_needed=0 cross_pkgs=()
	make_image_stub "$tmp"	# (not in an `if`: that would disable set -e)
	[ "$stub_needed" = 1 ] && extra=("$stub_deb" "${cross_pkgs[@]}")
	log "installing ${chroot_pkgs[*]} ${extra[*]} in $suite chroot"
	in_chroot "$tmp" apt-get "${apt_opts[@]}" -y install --no-install-recommends \
		"${chroot_pkgs[@]}" "${extra[@]}" >&2
	in_chroot "$tmp" apt-get clean
	umount_below "$tmp/proc"

	local kver
	kver=$(headers_kver "$tmp")
	[ -d "$tmp/lib/modules/$kver/build/" ] ||
		die "linux-headers for $kver installed but /lib/modules/$kver/build missing"
	{
		echo "suite=$suite"
		echo "kver=$kver"
		echo "created=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
		echo "seconds=$((SECONDS - t0))"
	} > "$tmp/$marker"
	mv -T "$tmp" "$chroot_dir"
	cleanup_dirs=()
	log "chroot $suite ready in $((SECONDS - t0))s (kernel headers $kver)"
}

# Debian <= 13: linux-headers-$KVER Depends on "linux-image-$KVER (= v) |
# linux-image-$KVER-unsigned (= v)", which would drag a kernel, initramfs-tools,
# systemd and udev into the build chroot. Satisfy it with a local stub package
# that merely Provides the unsigned image (the real image is fetched
# separately and never installed). Sets stub_needed=1 when it built one (sid
# 7.x headers only depend on linux-base-$KVER: no stub).
stub_deb=/var/cache/amt-stub/amt-kernel-image-stub.deb
make_image_stub() { # ROOT
	local root=$1 hdr deps item prov='' a
	hdr=$(in_chroot "$root" apt-cache show --no-all-versions "$headers" |
		sed -n 's/^Depends: //p' | grep -oE 'linux-headers-[^ ,(:]+' | head -n1)
	[ -n "$hdr" ] || die "cannot resolve $headers in $suite"
	deps=$(in_chroot "$root" apt-cache show --no-all-versions "$hdr$ka" |
		sed -n 's/^Depends: //p')
	local -a items alts
	IFS=, read -ra items <<<"$deps"
	for item in "${items[@]}"; do
		# (arm64 on 6.x: the headers want the native gcc-N of their
		# architecture, whose aarch64-linux-gnu-gcc-N is an arm64
		# program: the stub stands in for it, the cross compiler
		# of the same N does the work; 7.x names gcc-N-for-host)
		a=$(xargs <<<"$item")
		if [ -n "$karch" ] && [[ $a =~ ^gcc-[0-9]+$ ]]; then
			cross_pkgs+=("$a-aarch64-linux-gnu")
			prov+=${prov:+, }$a
			continue
		fi
		[[ $item == *linux-image-* ]] || continue
		IFS='|' read -ra alts <<<"$item"
		local img=''
		for a in "${alts[@]}"; do
			a=$(xargs <<<"$a")	# trim
			[[ -z $img || $a == *-unsigned* ]] && img=$a
		done
		prov+=${prov:+, }$img
	done
	[ -n "$prov" ] || return 0
	log "$hdr wants a kernel image or a native compiler; installing a stub providing: $prov"
	local d=$root/var/cache/amt-stub/pkg
	mkdir -p "$d/DEBIAN"
	cat > "$d/DEBIAN/control" <<EOF
Package: amt-kernel-image-stub
Version: 1.0
Architecture: all
Multi-Arch: foreign
Maintainer: suite-chroot.sh <root@localhost>
Provides: $prov
Description: build-chroot stub standing in for the kernel image (and compiler)
 Written by scripts/suite-chroot.sh so that linux-headers can be installed
 without a kernel, initramfs-tools and systemd in a module build chroot.
EOF
	in_chroot "$root" dpkg-deb --root-owner-group -b /var/cache/amt-stub/pkg \
		"$stub_deb" >&2
	stub_needed=1
}

headers_kver() { # ROOT: the kernel version of linux-headers-amd64 (or arm64)
	local root=$1 dep kver
	# shellcheck disable=SC2016 # a dpkg-query format
	dep=$(in_chroot "$root" dpkg-query -W -f '${Depends}' "$headers")
	kver=$(grep -oE 'linux-headers-[^ ,(:]+' <<<"$dep" | head -n1)
	kver=${kver#linux-headers-}
	[ -n "$kver" ] || die "cannot parse $headers Depends: '$dep'"
	echo "$kver"
}

pkg_exists() { # NAME: a candidate version is known to apt
	local cand
	cand=$(in_chroot "$chroot_dir" apt-cache policy "$1" 2>/dev/null |
		awk '/Candidate:/ { print $2 }')
	[ -n "$cand" ] && [ "$cand" != "(none)" ]
}

# Names of the packages that together hold the unsigned bootable image,
# config and System.map for KVER.
image_pkgs() { # KVER
	local kver=$1 p
	# Up to Debian 13 / linux 6.x: a single linux-image-$KVER-unsigned.
	if pkg_exists "linux-image-$kver-unsigned$ka"; then
		echo "linux-image-$kver-unsigned$ka"
		return 0
	fi
	# Debian 14 / linux 7.x split: linux-binary-unsigned-$KVER has
	# usr/lib/modules/$KVER/vmlinuz.unsigned, linux-base-$KVER the config,
	# System.map and modules.builtin*, linux-modules-$KVER the modules (the
	# trixie image package carries its modules too, so fetch them for parity:
	# 9p and virtio-blk/net are =m).
	local found=()
	for p in "linux-binary-unsigned-$kver" "linux-base-$kver" \
		"linux-modules-$kver"; do
		pkg_exists "$p$ka" && found+=("$p$ka")
	done
	if [ ${#found[@]} -eq 0 ]; then
		log "no known unsigned image package for $kver; packages mentioning it:"
		in_chroot "$chroot_dir" apt-cache search --names-only -- \
			"${kver//[.+]/\\&}" >&2 || true
		die "cannot find the unsigned kernel image package for $kver"
	fi
	printf '%s\n' "${found[@]}"
}

# The kernel: downloaded with the chroot's apt, unpacked by the
# kernel-unpack.sh that scripts/kernel.sh uses too.
fetch_kernel() { # KVER
	local kver=$1 dir=$cache/kernels/$1
	[ -f "$dir/$marker" ] && kimage_ok "$dir/vmlinuz" && return 0
	local stale
	for stale in "$cache/kernels/.$kver.tmp."*; do
		[ -e "$stale" ] && { log "removing stale $stale"; safe_rm "$stale"; }
	done
	[ -e "$dir" ] && { log "removing incomplete $dir"; safe_rm "$dir"; }

	local tmp=$cache/kernels/.$kver.tmp.$$ dl=/var/cache/amt-kernel-debs
	cleanup_dirs+=("$tmp" "$chroot_dir$dl")
	mkdir -p "$chroot_dir$dl"
	in_chroot "$chroot_dir" chown _apt "$dl" 2>/dev/null || true	# apt sandbox user
	cp -L /etc/resolv.conf "$chroot_dir/etc/resolv.conf" 2>/dev/null || true

	local pkgs list
	list=$(image_pkgs "$kver")	# not <(...): its failure must abort
	mapfile -t pkgs <<<"$list"
	[ -z "$karch" ] || pkgs+=("busybox-static$ka")
	log "downloading ${pkgs[*]}"
	# shellcheck disable=SC2016 # for the inner shell
	if ! in_chroot "$chroot_dir" sh -c 'cd "$1" && shift && apt-get "$@"' sh "$dl" \
		"${apt_opts[@]}" download "${pkgs[@]}" >&2; then
		log "download failed; refreshing the chroot's package lists and retrying"
		in_chroot "$chroot_dir" apt-get "${apt_opts[@]}" update >&2
		in_chroot "$chroot_dir" sh -c 'cd "$1" && shift && apt-get "$@"' sh "$dl" \
			"${apt_opts[@]}" download "${pkgs[@]}" >&2 ||
			die "cannot download ${pkgs[*]} (mirror moved on? delete $chroot_dir and retry)"
	fi

	# vmlinuz, config and kmod/, as for every suite
	log "unpacking ${pkgs[*]}"
	local debs=("$chroot_dir$dl"/linux-*.deb)
	"$top/scripts/kernel-unpack.sh" "$kver" "$tmp" "${debs[@]}" ||
		die "cannot unpack ${pkgs[*]}"
	if [ -n "$karch" ]; then
		dpkg -x "$chroot_dir$dl"/busybox-static_*.deb "$tmp/bb"
		mv "$(ls "$tmp"/bb/{usr/,}bin/busybox 2>/dev/null | head -n 1)" \
			"$tmp/busybox"
		rm -rf "$tmp/bb"
	fi
	[ -f "$tmp/config" ] ||
		cp "$chroot_dir/usr/src/linux-headers-$kver/.config" "$tmp/config" 2>/dev/null ||
		log "warning: no kernel config found for $kver"
	safe_rm "$chroot_dir$dl"
	printf 'kver=%s\npackages=%s\n' "$kver" "${pkgs[*]}" > "$tmp/$marker"
	mv -T "$tmp" "$dir"
	cleanup_dirs=()
	log "kernel $kver unpacked in $dir"
}

# Setup: the chroot and the kernel, then the four lines.
with_lock "chroot-$suite" create_chroot
kver=$(headers_kver "$chroot_dir")
kdir=/lib/modules/$kver/build
[ -d "$chroot_dir$kdir/" ] || die "$kdir does not exist inside $chroot_dir"

if [ "$mode" = setup ]; then
	with_lock "kernel-$kver" fetch_kernel "$kver"
	vmlinuz=$cache/kernels/$kver/vmlinuz
	kimage_ok "$vmlinuz" || die "$vmlinuz is not a bootable kernel image"
	printf 'KVER=%s\nVMLINUZ=%s\nCHROOT=%s\nKDIR=%s\n' \
		"$kver" "$vmlinuz" "$chroot_dir" "$kdir" >&3
	[ -z "$karch" ] ||
		{ arch_env "$karch" && echo "BUSYBOX=$cache/kernels/$kver/busybox"; } >&3
	exit 0
fi

# Run: CMD in the chroot, with the project at its own path.
mkdir -p "$chroot_dir$top"
cleanup_mounts+=("$chroot_dir$top")
mount --bind "$top" "$chroot_dir$top"
mount_proc "$chroot_dir"
if [ ! -c "$chroot_dir/dev/null" ]; then	# debootstrap could not mknod
	cleanup_mounts+=("$chroot_dir/dev")
	mount --rbind /dev "$chroot_dir/dev"
fi
cwd=/
case $PWD/ in "$top"/*) cwd=$PWD ;; esac
set +e
# shellcheck disable=SC2016 # for the inner shell
chroot "$chroot_dir" /usr/bin/env -i \
	PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	HOME=/root LC_ALL=C.UTF-8 TERM="${TERM:-dumb}" KVER="$kver" KDIR="$kdir" \
	sh -c 'cd "$1" && shift && exec "$@"' sh "$cwd" "$@" 1>&3 3>&-
rc=$?
set -e
exit "$rc"
