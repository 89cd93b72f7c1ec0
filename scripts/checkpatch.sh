#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Kernel coding style of the module sources, with the checkpatch.pl of
# Debian's linux-source-6.1 (only three files of it are kept, in .cache/).
# Prints one TAP line; exit status 1 on any warning or error.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${AMT_CACHE:-$top/.cache}/checkpatch
if [ ! -s "$dir/scripts/checkpatch.pl" ]; then
	rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
	( cd "$dir.tmp" && apt-get download -q linux-source-6.1 >&2 &&
	  dpkg --fsys-tarfile linux-source-6.1_*.deb |
		tar -xO --wildcards './usr/src/linux-source-6.1.tar.*' |
		tar -xJ --strip-components=1 linux-source-6.1/scripts/checkpatch.pl \
			linux-source-6.1/scripts/spelling.txt \
			linux-source-6.1/scripts/const_structs.checkpatch &&
	  rm -f linux-source-6.1_*.deb ) || {
		echo "not ok - checkpatch: could not fetch checkpatch.pl"; exit 1; }
	rm -rf "$dir" && mv "$dir.tmp" "$dir"
fi
cd "$top"
files=(module/*.c module/*.h tests/harness/amt_warn.c tests/guest/helper/*.c
	tests/guest/helper/*.h)
if out=$(perl "$dir/scripts/checkpatch.pl" --no-tree --terse --show-types \
	--ignore FILE_PATH_CHANGES -f "${files[@]}" 2>&1 |
	grep -E ': (WARNING|ERROR):'); then
	echo "not ok - checkpatch: module sources are kernel style # $(echo "$out" | head -1)"
	echo "$out" | sed 's/^/    # /' >&2
	exit 1
fi
echo "ok - checkpatch: module sources are kernel style (${#files[@]} files)"
