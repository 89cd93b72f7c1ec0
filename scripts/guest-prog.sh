#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Ship a program from a Debian package into the test guest: fetch the
# package with apt-get download (the host's suite, bookworm; never
# installed), take one binary out of it and stage it where run-guest.sh
# ships dynamically linked programs, with the libraries ldd names, to the
# guest's /usr/bin.
#
#   scripts/guest-prog.sh PKG BINARY [OUTDIR]
#
# BINARY is the path inside the package (usr/bin/earlyoom); OUTDIR defaults
# to build/guest. The .deb is cached in ${AMT_CACHE:-.cache}/debs/, keyed by
# the candidate version, so a second run needs no network. Prints nothing.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cache=${AMT_CACHE:-$top/.cache}
pkg=${1:?usage: guest-prog.sh PKG BINARY [OUTDIR]}
bin=${2:?usage: guest-prog.sh PKG BINARY [OUTDIR]}
out=${3:-$top/build/guest}
bin=${bin#/}

ver=$(apt-cache policy "$pkg" 2>/dev/null | awk '/Candidate:/ {print $2; exit}')
if [ -z "$ver" ] || [ "$ver" = "(none)" ]; then
	echo "guest-prog: no candidate for '$pkg' (apt-get update?)" >&2
	exit 1
fi
# the file name apt-get download uses: an epoch's ':' becomes '%3a'
deb=$cache/debs/${pkg}_${ver//:/%3a}_$(dpkg --print-architecture).deb
if [ ! -s "$deb" ]; then
	mkdir -p "$cache/debs"
	tmp=$(mktemp -d "$cache/debs/.dl.XXXXXX")
	(cd "$tmp" && apt-get download -q "$pkg=$ver" >&2)
	mv "$tmp"/*.deb "$deb"
	rm -rf "$tmp"
fi
dst=$out/dyn/$(basename "$bin")
if [ ! -e "$dst" ] || [ "$deb" -nt "$dst" ]; then
	x=$(mktemp -d)
	trap 'rm -rf "$x"' EXIT
	dpkg-deb -x "$deb" "$x"
	[ -f "$x/$bin" ] || { echo "guest-prog: $pkg has no /$bin" >&2; exit 1; }
	mkdir -p "$out/dyn"
	install -m 0755 "$x/$bin" "$dst"
fi
