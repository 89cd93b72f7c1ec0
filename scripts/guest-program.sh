#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Fetch a Debian program and the shared libraries it links, for the guest,
# without installing anything on the host:
#
#   scripts/guest-program.sh PACKAGE [ARCH]
#
# Downloads PACKAGE (the host's suite, bookworm) and, transitively, the
# packages it depends on (the first of each set of alternatives; never
# libc6, nor what only libc6 pulls in: the guest runs the host's C library
# and loader, as amtctl does, and a libc must match its loader exactly),
# unpacks them with dpkg -x into ${AMT_CACHE:-.cache}/guest-programs/
# PACKAGE_VERSION/root and prints that directory. run-guest.sh resolves the
# program's libraries with ldd, this tree's library directories first.
# Cached: a second call with the same candidate version only prints.
# ARCH (arm64) fetches that architecture's packages (scripts/apt-arch.sh),
# libc6 included: an arm64 guest has no host C library to run; then the
# directory is PACKAGE_VERSION_ARCH, and run-guest.sh resolves libraries
# from the tree alone (ELF NEEDED entries).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cache=${AMT_CACHE:-$top/.cache}
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: $0 PACKAGE [ARCH]" >&2; exit 2; }
pkg=$1 arch=${2:-}
if [ -n "$arch" ]; then
	acache() { "$top/scripts/apt-arch.sh" "$arch" cache "$@"; }
	aget() { "$top/scripts/apt-arch.sh" "$arch" "$@"; }
else
	acache() { apt-cache "$@"; }
	aget() { apt-get -q "$@"; }
fi

candidate() { acache policy "$1" | awk '/Candidate:/ { print $2; exit }'; }
ver=$(candidate "$pkg")
if [ -z "$ver" ] || [ "$ver" = "(none)" ]; then
	# a fresh machine may not have read the package lists yet
	if [ -n "$arch" ]; then aget update; else apt-get update -qq >&2; fi
	ver=$(candidate "$pkg")
fi
if [ -z "$ver" ] || [ "$ver" = "(none)" ]; then
	echo "guest-program: no candidate for package '$pkg'" >&2
	exit 1
fi
dir=$cache/guest-programs/${pkg}_$ver${arch:+_$arch}
if [ -d "$dir/root" ]; then
	echo "$dir"
	exit 0
fi

# The dependency closure: "Depends:" and "PreDepends:" lines of
# apt-cache depends; a line after "|Depends:" is a further alternative and
# virtual names (<name>) have no package of their own.
todo=("$pkg") seen=" ${arch:+-}libc6 " pkgs=()
while [ ${#todo[@]} -gt 0 ]; do
	p=${todo[0]}
	todo=("${todo[@]:1}")
	case $seen in *" $p "*) continue ;; esac
	seen+="$p "
	pkgs+=("$p")
	alt=0
	while read -r kind name; do
		case $kind in
		'|Depends:'|'|PreDepends:')
			[ "$alt" = 1 ] || todo+=("$name"); alt=1 ;;
		Depends:|PreDepends:)
			[ "$alt" = 1 ] || todo+=("$name"); alt=0 ;;
		esac	# (the other lines: packages providing a virtual name)
	done < <(acache depends --no-recommends --no-suggests --no-conflicts \
		 --no-breaks --no-replaces --no-enhances "$p" | tail -n +2 |
		 grep -v '<')
done

tmp=$dir.fetch.$$
trap 'rm -rf "$tmp"' EXIT
rm -rf "$tmp"
mkdir -p "$tmp/debs" "$tmp/root"
echo "guest-program: $pkg $ver: downloading ${pkgs[*]}" >&2
(cd "$tmp/debs" && aget download "${pkgs[@]}" >&2)
for deb in "$tmp"/debs/*.deb; do
	dpkg -x "$deb" "$tmp/root"
done
rm -rf "$tmp/debs"
mkdir -p "$(dirname "$dir")"
mv -T "$tmp" "$dir"
trap - EXIT
echo "$dir"
