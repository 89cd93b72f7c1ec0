#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Test the DKMS and Debian packaging on this host (root, Debian 12):
#   1. dkms add/build/install/uninstall/remove of a source checkout, against
#      the bookworm kernel's headers;
#   2. that DKMS-built .ko booted in the QEMU guest (tests 01-03);
#   3. dpkg-buildpackage -us -uc -b in a copy of the tree, the .debs' contents,
#      and that debian/rules clean leaves nothing behind;
#   4. apt-get install of the .deb(s): DKMS builds and installs the module,
#      then apt-get purge removes every trace.
#
#   scripts/check-package.sh          AMT_PKG_GUEST=0 skips step 2
#
# One file per stage in scripts/package/ (N-*.sh, sourced in order into
# this shell: they share its variables and its cleanup trap), on top of
# scripts/package/lib.sh.
#
# Prints unnumbered TAP lines ("ok - package: ...", "not ok - package: ...
# # why") on stdout, progress on stderr, command output in
# build/logs/check-package.log. Exit status 1 on any failure. Never loads a
# module into the host's kernel; removes what it installed, even on failure.
# Works in build/package.XXXXXX (git-ignored), kept only on failure.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
name=async-mm-teardown            # DKMS module name, /usr/src/$name-$ver
pkg=$name-dkms                    # the DKMS .deb
cli=amtctl                        # the CLI .deb
kmod=async_mm_teardown            # the kernel module
nocli=pkg.async-mm-teardown.nocli # build profile without the CLI
ver=$(cat "$top/VERSION")
start=$SECONDS
fail=0
# shellcheck source=package/lib.sh
. "$top/scripts/package/lib.sh"

for stage in "$top"/scripts/package/[0-9]-*.sh; do
	# shellcheck source=/dev/null
	. "$stage"
done

exit $fail
