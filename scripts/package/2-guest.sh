# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Stage 2 of scripts/check-package.sh (sourced).
# 2. The DKMS-built module in the guest. Run from the work copy (the kernel
# cache shared), so a concurrent `make check` keeps its own build/ files.
if [ "${AMT_PKG_GUEST:-1}" = 0 ]; then
	ok "dkms-built module: guest tests 01-03 # SKIP AMT_PKG_GUEST=0"
elif [ ! -e "$work/dkms/$kmod.ko" ]; then
	nok "dkms-built module: guest tests 01-03" "DKMS built no module"
else
	say "2. booting the DKMS-built module (tests 0[1-3]_*)"
	mkdir -p "$work/src/build"
	[ -d "$top/build/guest" ] && cp -rp "$top/build/guest" "$work/src/build/"
	out=$work/guest.tap
	grc=0
	(cd "$work/src" && AMT_CACHE=$top/.cache scripts/run-guest.sh -k bookworm \
		-K "$work/dkms/$kmod.ko" -t '0[1-3]_*') > "$out" 2>>"$logf" || grc=$?
	sed -nE 's/^(ok|not ok) - /\1 - package: dkms-built module: /p; /booting again$/p' "$out"
	if [ $grc != 0 ] || grep -q '^not ok' "$out" || ! grep -q '^ok' "$out"; then
		fail=1
		rm -rf "$top/build/logs/check-package.guest"
		cp -r "$work/src/build/logs" "$top/build/logs/check-package.guest" 2>/dev/null || true
		[ $grc = 0 ] || nok "dkms-built module: run-guest.sh succeeded" \
			"exit status $grc; see build/logs/check-package.guest/"
	fi
fi
