#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# apt-get for another architecture of Debian 12, with a private state
# directory: the host's dpkg architectures and sources are never changed.
#
#   scripts/apt-arch.sh ARCH update
#   scripts/apt-arch.sh ARCH download PACKAGE...   (into the current directory)
#   scripts/apt-arch.sh ARCH cache ARGS...         (apt-cache ARGS)
#
# The package lists are those of the host's own sources (deb822 or one-line,
# bookworm, bookworm-updates, bookworm-security), cached under
# $AMT_CACHE/apt-ARCH and refreshed by "update" or when a day old.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cache=${AMT_CACHE:-$top/.cache}
arch=${1:?usage: apt-arch.sh ARCH update|download PKG...|cache ARGS...}
cmd=${2:?usage: apt-arch.sh ARCH update|download PKG...|cache ARGS...}
shift 2
case $arch in
arm64) ;;
*) echo "apt-arch: ARCH '$arch': only arm64" >&2; exit 2 ;;
esac

d=$cache/apt-$arch
mkdir -p "$d/lists/partial" "$d/archives/partial" "$d/etc"
: >> "$d/status"
opts=(-o "APT::Architecture=$arch" -o "APT::Architectures=$arch"
      -o "Dir::State=$d" -o "Dir::State::Lists=$d/lists"
      -o "Dir::State::status=$d/status" -o "Dir::Cache=$d"
      -o "Dir::Cache::archives=$d/archives"
      -o "Dir::Etc::SourceList=$d/etc/sources.list"
      -o "Dir::Etc::SourceParts=$d/etc/sources.list.d"
      -o "Dir::Etc::Preferences=/dev/null"
      -o "Dir::Etc::PreferencesParts=$d/etc/preferences.d")
mkdir -p "$d/etc/sources.list.d" "$d/etc/preferences.d"
# The host's Debian sources, whatever their format, for this architecture.
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
	 /etc/apt/sources.list.d/*.sources; do
	[ -f "$f" ] || continue
	grep -qs 'debian' "$f" || continue
	cp "$f" "$d/etc/sources.list.d/host-$(basename "$f")"
done
# (one-line files are read from sources.list.d too: SourceList stays empty)
: > "$d/etc/sources.list"
# only Debian's archive or a mirror of it: a third-party source may not
# carry ARCH
for f in "$d"/etc/sources.list.d/*; do
	case $f in *.sources)
		awk 'BEGIN { RS = ""; ORS = "\n\n" } /URIs: *[^ \n]*debian/' \
			"$f" > "$f.tmp" && mv "$f.tmp" "$f" ;;
	*)
		grep -E '^deb +(\[[^]]*\] +)?[^ ]*debian' "$f" > "$f.tmp" || true
		mv "$f.tmp" "$f" ;;
	esac
done

stale=$(find "$d/lists" -maxdepth 1 -name '*Packages*' -mmin -1440 | head -1)
if [ "$cmd" = update ] || [ -z "$stale" ]; then
	apt-get -qq "${opts[@]}" update >&2
fi
case $cmd in
update) ;;
download) apt-get -q "${opts[@]}" download "$@" >&2 ;;
cache) apt-cache "${opts[@]}" "$@" ;;
*) echo "apt-arch: unknown command '$cmd' (update, download, cache)" >&2
   exit 2 ;;
esac
