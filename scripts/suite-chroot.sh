#!/usr/bin/env bash
# shellcheck disable=SC2016,SC2317  # (single-quoted sh -c scripts; code after the re-exec)
# suite-chroot.sh - cached Debian build chroot + matching bootable kernel.
#
# Usage:
#   scripts/suite-chroot.sh SUITE             # SUITE: trixie | sid
#   scripts/suite-chroot.sh SUITE run CMD...  # run CMD inside the chroot
#
# Setup mode creates (once) a debootstrap --variant=minbase chroot of SUITE
# at $AMT_CACHE/chroot/$SUITE with gcc, make, libc6-dev and
# linux-headers-amd64, downloads (never installs) the unsigned kernel image
# that matches those headers and unpacks it with scripts/kernel-unpack.sh
# (as scripts/kernel.sh does for bookworm) into $AMT_CACHE/kernels/$KVER/:
# vmlinuz, config and kmod/.  It then prints exactly these lines on stdout (everything else
# goes to stderr), suitable for `eval "$(scripts/suite-chroot.sh sid)"`:
#   KVER=<kernel version of the headers / image>
#   VMLINUZ=<absolute path of the bootable bzImage>
#   CHROOT=<absolute path of the chroot>
#   KDIR=/lib/modules/<kver>/build   (path INSIDE the chroot)
#
# Run mode bind-mounts the project root at the same absolute path inside the
# chroot, mounts /proc, runs CMD (cwd kept if it lies inside the project, else
# /) with KVER and KDIR exported, and unmounts everything afterwards.  Note
# that `uname -r` inside a chroot is the host's: always pass KDIR explicitly,
# e.g.  scripts/suite-chroot.sh sid run sh -c 'make -C "$KDIR" M=$PWD/module'
#
# Environment:
#   AMT_CACHE            cache root (default: <project root>/.cache)
#   AMT_MIRROR           Debian mirror (default: http://deb.debian.org/debian)
#   AMT_SECURITY_MIRROR  (default: http://deb.debian.org/debian-security)
#
# Everything is created atomically (built in a temp dir, then renamed, with a
# completion marker), so an interrupted run leaves no half-made cache entry;
# a second run does no network access.  There is no automatic refresh: to
# pick up newer packages / kernels delete the cache entries, e.g.
#   rm -rf --one-file-system .cache/chroot/sid .cache/kernels/*deb14*
# (make sure no `run` of this script is active at the time).
#
# Requires root (debootstrap, chroot, mount).  All mounts are made in a
# private mount namespace (unshare) when possible, so they can never leak.

set -euo pipefail

SCRIPT_PATH=$(readlink -f "${BASH_SOURCE[0]}")
PROJECT_ROOT=$(cd "$(dirname "$SCRIPT_PATH")/.." && pwd -P)
AMT_MIRROR=${AMT_MIRROR:-http://deb.debian.org/debian}
AMT_SECURITY_MIRROR=${AMT_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
APT_OPTS=(-o Acquire::Check-Valid-Until=false -o Acquire::Languages=none
          -o APT::Install-Recommends=false -o Dpkg::Use-Pty=false -q)
MARKER=.amt-suite-chroot-complete
CHROOT_PKGS=(gcc make libc6-dev linux-headers-amd64)

usage() {
    sed -n '5,7p' "$SCRIPT_PATH" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

log() { printf '[suite-chroot] %s\n' "$*" >&2; }
die() { printf '[suite-chroot] ERROR: %s\n' "$*" >&2; exit 1; }

[[ $# -ge 1 ]] || usage
ORIG_ARGS=("$@")
SUITE=$1; shift
case $SUITE in
    trixie|sid) ;;
    -h|--help) usage ;;
    *) die "unsupported suite '$SUITE' (use trixie or sid)" ;;
esac
MODE=setup
if [[ $# -gt 0 ]]; then
    [[ $1 == run ]] || usage
    shift
    [[ $# -gt 0 ]] || die "run: no command given"
    MODE=run
fi
[[ $EUID -eq 0 ]] || die "must run as root (debootstrap/chroot/mount)"

# Re-exec in a private mount namespace: every mount made below (debootstrap's,
# apt's /proc, run mode's binds) then disappears with the process even if it
# is killed with SIGKILL.  The traps still unmount explicitly.
if [[ -z ${AMT_SUITE_CHROOT_NS:-} ]] && command -v unshare >/dev/null &&
   unshare --mount --propagation private true 2>/dev/null; then
    export AMT_SUITE_CHROOT_NS=1
    exec unshare --mount --propagation private -- \
        bash "$SCRIPT_PATH" "${ORIG_ARGS[@]}"
fi

# stdout is reserved for the result lines (setup) / CMD output (run).
exec 3>&1 1>&2

AMT_CACHE=${AMT_CACHE:-$PROJECT_ROOT/.cache}
mkdir -p "$AMT_CACHE/chroot" "$AMT_CACHE/kernels"
AMT_CACHE=$(cd "$AMT_CACHE" && pwd -P)
CHROOT=$AMT_CACHE/chroot/$SUITE

# ---------------------------------------------------------------- helpers --

# Mount points at or below $1, deepest first.
mounts_below() {
    local p=${1%/}
    awk -v p="$p" '$5 == p || index($5, p "/") == 1 { print $5 }' \
        /proc/self/mountinfo | sort -r
}

umount_below() {
    local m
    while read -r m; do
        [[ -n $m ]] || continue
        umount "$m" 2>/dev/null || umount -l "$m" || true
    done < <(mounts_below "$1")
}

# rm -rf that refuses to descend into anything still mounted.
safe_rm() {
    local d=$1
    [[ -e $d || -L $d ]] || return 0
    umount_below "$d"
    if [[ -n $(mounts_below "$d") ]]; then
        die "refusing to delete $d: still has mounts below it"
    fi
    rm -rf --one-file-system -- "$d"
}

CLEANUP_DIRS=()
CLEANUP_MOUNTS=()
cleanup() {
    local rc=$? i
    for ((i = ${#CLEANUP_MOUNTS[@]} - 1; i >= 0; i--)); do
        umount_below "${CLEANUP_MOUNTS[i]}"
    done
    for i in "${CLEANUP_DIRS[@]}"; do
        [[ -n $i ]] || continue
        log "cleaning up incomplete $i"
        safe_rm "$i" || true
    done
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

in_chroot() {  # in_chroot ROOT CMD...
    local root=$1; shift
    chroot "$root" /usr/bin/env -i \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        HOME=/root LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive \
        DEBCONF_NONINTERACTIVE_SEEN=true "$@"
}

mount_proc() {  # mount_proc ROOT
    mkdir -p "$1/proc"
    mountpoint -q "$1/proc" && return 0
    CLEANUP_MOUNTS+=("$1/proc")
    mount -t proc proc "$1/proc"
}

with_lock() {  # with_lock NAME CMD... (serialise creation between runs)
    local name=$1; shift
    exec {lockfd}>"$AMT_CACHE/.$name.lock"
    flock "$lockfd"
    "$@"
    exec {lockfd}>&-
}

# Debian release list for SUITE, one-line format.
sources_for() {
    local opt='[check-valid-until=no]'
    case $1 in
        trixie)
            echo "deb $opt $AMT_MIRROR trixie main"
            echo "deb $opt $AMT_MIRROR trixie-updates main"
            echo "deb $opt $AMT_SECURITY_MIRROR trixie-security main"
            ;;
        sid)
            echo "deb $opt $AMT_MIRROR sid main"
            ;;
    esac
}

# ---------------------------------------------------------------- chroot ---

ensure_debootstrap() {
    command -v debootstrap >/dev/null && return 0
    log "installing debootstrap on the host"
    apt-get install -y --no-install-recommends debootstrap ||
        { apt-get update && apt-get install -y --no-install-recommends debootstrap; }
}

create_chroot() {
    [[ -f $CHROOT/$MARKER ]] && return 0
    ensure_debootstrap
    local stale
    for stale in "$AMT_CACHE/chroot/.$SUITE.tmp."*; do
        [[ -e $stale ]] && { log "removing stale $stale"; safe_rm "$stale"; }
    done
    if [[ -e $CHROOT ]]; then
        log "removing incomplete chroot $CHROOT"
        safe_rm "$CHROOT"
    fi
    local tmp=$AMT_CACHE/chroot/.$SUITE.tmp.$$ t0=$SECONDS
    CLEANUP_DIRS+=("$tmp")
    mkdir -p "$tmp"
    log "debootstrap --variant=minbase $SUITE -> $tmp"
    debootstrap --variant=minbase --arch=amd64 "$SUITE" "$tmp" "$AMT_MIRROR" >&2

    sources_for "$SUITE" > "$tmp/etc/apt/sources.list"
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
    in_chroot "$tmp" apt-get "${APT_OPTS[@]}" update >&2
    in_chroot "$tmp" apt-get "${APT_OPTS[@]}" -y dist-upgrade >&2
    local extra=()
    STUB_NEEDED=0
    make_image_stub "$tmp"    # (not in an `if`: that would disable set -e)
    [[ $STUB_NEEDED == 1 ]] && extra=("$STUB_DEB")
    log "installing ${CHROOT_PKGS[*]} ${extra[*]} in $SUITE chroot"
    in_chroot "$tmp" apt-get "${APT_OPTS[@]}" -y install --no-install-recommends \
        "${CHROOT_PKGS[@]}" "${extra[@]}" >&2
    in_chroot "$tmp" apt-get clean
    umount_below "$tmp/proc"

    local kver
    kver=$(headers_kver "$tmp")
    [[ -d $tmp/lib/modules/$kver/build/ ]] ||
        die "linux-headers for $kver installed but /lib/modules/$kver/build missing"
    {
        echo "suite=$SUITE"
        echo "kver=$kver"
        echo "created=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
        echo "seconds=$((SECONDS - t0))"
    } > "$tmp/$MARKER"
    mv -T "$tmp" "$CHROOT"
    CLEANUP_DIRS=()
    log "chroot $SUITE ready in $((SECONDS - t0))s (kernel headers $kver)"
}

# Debian <= 13: linux-headers-$KVER Depends on "linux-image-$KVER (= v) |
# linux-image-$KVER-unsigned (= v)", which would drag a kernel, initramfs-tools,
# systemd and udev into the build chroot.  Satisfy it with a local stub package
# that merely Provides the unsigned image (the real image is fetched
# separately and never installed).  Sets STUB_NEEDED=1 when it built one (sid
# 7.x headers only depend on linux-base-$KVER: no stub).
STUB_DEB=/var/cache/amt-stub/amt-kernel-image-stub.deb
make_image_stub() {
    local root=$1 hdr deps item prov='' a
    hdr=$(in_chroot "$root" apt-cache show --no-all-versions linux-headers-amd64 |
          sed -n 's/^Depends: //p' | grep -oE 'linux-headers-[^ ,(]+' | head -n1)
    [[ -n $hdr ]] || die "cannot resolve linux-headers-amd64 in $SUITE"
    deps=$(in_chroot "$root" apt-cache show --no-all-versions "$hdr" |
           sed -n 's/^Depends: //p')
    local -a items alts
    IFS=, read -ra items <<<"$deps"
    for item in "${items[@]}"; do
        [[ $item == *linux-image-* ]] || continue
        IFS='|' read -ra alts <<<"$item"
        for a in "${alts[@]}"; do
            a=$(xargs <<<"$a")          # trim
            [[ -z $prov || $a == *-unsigned* ]] && prov=$a
        done
    done
    [[ -n $prov ]] || return 0
    log "$hdr wants a kernel image; installing a stub providing: $prov"
    local d=$root/var/cache/amt-stub/pkg
    mkdir -p "$d/DEBIAN"
    cat > "$d/DEBIAN/control" <<EOF
Package: amt-kernel-image-stub
Version: 1.0
Architecture: all
Maintainer: suite-chroot.sh <root@localhost>
Provides: $prov
Description: build-chroot stub standing in for the kernel image
 Written by scripts/suite-chroot.sh so that linux-headers can be installed
 without a kernel, initramfs-tools and systemd in a module build chroot.
EOF
    in_chroot "$root" dpkg-deb --root-owner-group -b /var/cache/amt-stub/pkg \
        "$STUB_DEB" >&2
    STUB_NEEDED=1
}

# Kernel version whose headers linux-headers-amd64 pulled in.
headers_kver() {
    local root=$1 dep kver
    dep=$(in_chroot "$root" dpkg-query -W -f '${Depends}' linux-headers-amd64)
    kver=$(grep -oE 'linux-headers-[^ ,(]+' <<<"$dep" | head -n1)
    kver=${kver#linux-headers-}
    [[ -n $kver ]] || die "cannot parse linux-headers-amd64 Depends: '$dep'"
    echo "$kver"
}

# ---------------------------------------------------------------- kernel ---

is_bzimage() {  # x86 boot protocol: "HdrS" at offset 0x202
    [[ -f $1 ]] && [[ $(dd if="$1" bs=1 skip=514 count=4 2>/dev/null) == HdrS ]]
}

pkg_exists() {  # pkg_exists NAME: a candidate version is known to apt
    local cand
    cand=$(in_chroot "$CHROOT" apt-cache policy "$1" 2>/dev/null |
           awk '/Candidate:/ { print $2 }')
    [[ -n $cand && $cand != "(none)" ]]
}

# Names of the packages that together hold the unsigned bootable image,
# config and System.map for KVER.
image_pkgs() {
    local kver=$1 p
    # Up to Debian 13 / linux 6.x: a single linux-image-$KVER-unsigned.
    if pkg_exists "linux-image-$kver-unsigned"; then
        echo "linux-image-$kver-unsigned"
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
        pkg_exists "$p" && found+=("$p")
    done
    if [[ ${#found[@]} -eq 0 ]]; then
        log "no known unsigned image package for $kver; packages mentioning it:"
        in_chroot "$CHROOT" apt-cache search --names-only -- \
            "${kver//[.+]/\\&}" >&2 || true
        die "cannot find the unsigned kernel image package for $kver"
    fi
    printf '%s\n' "${found[@]}"
}

fetch_kernel() {
    local kver=$1 kdir=$AMT_CACHE/kernels/$1
    [[ -f $kdir/$MARKER ]] && is_bzimage "$kdir/vmlinuz" && return 0
    local stale
    for stale in "$AMT_CACHE/kernels/.$kver.tmp."*; do
        [[ -e $stale ]] && { log "removing stale $stale"; safe_rm "$stale"; }
    done
    [[ -e $kdir ]] && { log "removing incomplete $kdir"; safe_rm "$kdir"; }

    local tmp=$AMT_CACHE/kernels/.$kver.tmp.$$ dl=/var/cache/amt-kernel-debs
    CLEANUP_DIRS+=("$tmp" "$CHROOT$dl")
    mkdir -p "$CHROOT$dl"
    in_chroot "$CHROOT" chown _apt "$dl" 2>/dev/null || true  # apt sandbox user
    cp -L /etc/resolv.conf "$CHROOT/etc/resolv.conf" 2>/dev/null || true

    local pkgs list
    list=$(image_pkgs "$kver")   # not <(...): its failure must abort
    mapfile -t pkgs <<<"$list"
    log "downloading ${pkgs[*]}"
    if ! in_chroot "$CHROOT" sh -c 'cd "$1" && shift && apt-get "$@"' sh "$dl" \
            "${APT_OPTS[@]}" download "${pkgs[@]}" >&2; then
        log "download failed; refreshing the chroot's package lists and retrying"
        in_chroot "$CHROOT" apt-get "${APT_OPTS[@]}" update >&2
        in_chroot "$CHROOT" sh -c 'cd "$1" && shift && apt-get "$@"' sh "$dl" \
            "${APT_OPTS[@]}" download "${pkgs[@]}" >&2 ||
            die "cannot download ${pkgs[*]} (mirror moved on? delete $CHROOT and retry)"
    fi

    # vmlinuz, config and kmod/, as for every suite
    log "unpacking ${pkgs[*]}"
    "$PROJECT_ROOT/scripts/kernel-unpack.sh" "$kver" "$tmp" "$CHROOT$dl"/*.deb ||
        die "cannot unpack ${pkgs[*]}"
    [[ -f $tmp/config ]] ||
        cp "$CHROOT/usr/src/linux-headers-$kver/.config" "$tmp/config" 2>/dev/null ||
        log "warning: no kernel config found for $kver"
    safe_rm "$CHROOT$dl"
    printf 'kver=%s\npackages=%s\n' "$kver" "${pkgs[*]}" > "$tmp/$MARKER"
    mv -T "$tmp" "$kdir"
    CLEANUP_DIRS=()
    log "kernel $kver unpacked in $kdir"
}

# ------------------------------------------------------------------ main ---

with_lock "chroot-$SUITE" create_chroot
KVER=$(headers_kver "$CHROOT")
KDIR=/lib/modules/$KVER/build
[[ -d $CHROOT$KDIR/ ]] || die "$KDIR does not exist inside $CHROOT"

if [[ $MODE == setup ]]; then
    with_lock "kernel-$KVER" fetch_kernel "$KVER"
    VMLINUZ=$AMT_CACHE/kernels/$KVER/vmlinuz
    is_bzimage "$VMLINUZ" || die "$VMLINUZ is not a bzImage"
    printf 'KVER=%s\nVMLINUZ=%s\nCHROOT=%s\nKDIR=%s\n' \
        "$KVER" "$VMLINUZ" "$CHROOT" "$KDIR" >&3
    exit 0
fi

# run mode
mkdir -p "$CHROOT$PROJECT_ROOT"
CLEANUP_MOUNTS+=("$CHROOT$PROJECT_ROOT")
mount --bind "$PROJECT_ROOT" "$CHROOT$PROJECT_ROOT"
mount_proc "$CHROOT"
if [[ ! -c $CHROOT/dev/null ]]; then   # debootstrap could not mknod
    CLEANUP_MOUNTS+=("$CHROOT/dev")
    mount --rbind /dev "$CHROOT/dev"
fi
cwd=/
case $PWD/ in "$PROJECT_ROOT"/*) cwd=$PWD ;; esac
set +e
chroot "$CHROOT" /usr/bin/env -i \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root LC_ALL=C.UTF-8 TERM="${TERM:-dumb}" KVER="$KVER" KDIR="$KDIR" \
    sh -c 'cd "$1" && shift && exec "$@"' sh "$cwd" "$@" 1>&3 3>&-
rc=$?
set -e
exit "$rc"
