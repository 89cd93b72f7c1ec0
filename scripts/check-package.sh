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

say() { echo "# $*" >&2; }
ok() { echo "ok - package: $1"; }
nok() {
	echo "not ok - package: $1${2:+ # $2}"
	fail=1
}

if [ "$(id -u)" != 0 ]; then
	nok "running as root" "dkms and apt-get need root"
	exit 1
fi

mkdir -p "$top/build/logs"
logf=$top/build/logs/check-package.log
: > "$logf"
why() { grep -v '^[[:space:]]*$' "$logf" | tail -n 2 | tr '\n' ' ' | cut -c1-200; }
run() { # CMD...: output to the log
	echo "\$ $*" >> "$logf"
	"$@" >> "$logf" 2>&1
}
t() { # NAME CMD...: one TAP line from CMD's status
	local n=$1
	shift
	if run "$@"; then ok "$n"; else nok "$n" "$(why)"; fi
}
installed() { # PKG: any dpkg state but not-installed
	local s
	s=$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null) || return 1
	[ -n "$s" ] && [ "$s" != not-installed ]
}
# shellcheck disable=SC2317 # called through run
aptget() {
	DEBIAN_FRONTEND=noninteractive apt-get -y -q -o DPkg::Lock::Timeout=300 "$@"
}

# dkms reads these from the environment too: never modprobe on install,
# and build for what the test says.
unset modprobe_on_install autoinstall_all_kernels
if grep -qsE '^[[:space:]]*modprobe_on_install=.*[^"[:space:]]' \
	/etc/dkms/framework.conf /etc/dkms/framework.conf.d/*.conf; then
	nok "dkms is not set to load modules" \
		"modprobe_on_install is set in /etc/dkms/framework.conf*: refusing to run"
	exit 1
fi

# 0. Dependencies, the bookworm kernel (headers + the guest's vmlinuz).
if ! run "$top/scripts/deps.sh" dh-dkms debhelper build-essential fakeroot; then
	nok "build dependencies installed" "$(why)"
	exit 1
fi
if ! kenv=$("$top/scripts/kernel.sh" bookworm 2>>"$logf"); then
	nok "bookworm kernel and headers available" "$(why)"
	exit 1
fi
eval "$kenv"
say "kernel $KVER, version $ver, log $logf"

# The host must not have this package or DKMS module already: the test would
# clobber it, and the cleanup would remove it.
busy=()
installed "$pkg" && busy+=("package $pkg is installed (apt-get purge $pkg)")
installed "$cli" && busy+=("package $cli is installed (apt-get purge $cli)")
[ -e "/var/lib/dkms/$name" ] && busy+=("DKMS has $name (dkms remove $name/$ver --all)")
[ -e "/usr/src/$name-$ver" ] && busy+=("/usr/src/$name-$ver exists")
if [ ${#busy[@]} -gt 0 ]; then
	nok "host has no $name yet" "${busy[*]}"
	exit 1
fi

work=$(mktemp -d "$top/build/package.XXXXXX")
ko=/lib/modules/$KVER/updates/dkms/$kmod.ko
mok_existed=0
[ -e /var/lib/dkms/mok.key ] && mok_existed=1
# Headers alone make /lib/modules/$KVER without depmod's files; dkms runs
# depmod there, so take its files away again if they were not there.
dep_existed=0
[ -e "/lib/modules/$KVER/modules.dep" ] && dep_existed=1

# shellcheck disable=SC2317 # the EXIT trap
cleanup() {
	local rc=$?
	set +e
	say "cleaning up"
	cp /var/lib/dkms/"$name"/*/build/make.log "$top/build/logs/check-package.make.log" 2>/dev/null
	installed "$cli" && run aptget purge "$cli"
	installed "$pkg" && run aptget purge "$pkg"
	if [ -e "/var/lib/dkms/$name" ]; then
		run dkms remove -m "$name" -v "$ver" --all
		rm -rf "/var/lib/dkms/$name"
	fi
	rm -rf "/usr/src/$name-$ver"
	if [ -e "$ko" ]; then
		rm -f "$ko"
		depmod -a "$KVER"
	fi
	rmdir "/lib/modules/$KVER/updates/dkms" "/lib/modules/$KVER/updates" 2>/dev/null
	[ "$dep_existed" = 1 ] || (cd "/lib/modules/$KVER" && rm -f modules.alias \
		modules.alias.bin modules.builtin.alias.bin modules.builtin.bin \
		modules.dep modules.dep.bin modules.devname modules.softdep \
		modules.symbols modules.symbols.bin modules.weakdep)
	# DKMS made a signing key on its first build: not ours to keep.
	[ "$mok_existed" = 1 ] || rm -f /var/lib/dkms/mok.key /var/lib/dkms/mok.pub
	if [ "$fail" = 0 ] && [ "$rc" = 0 ]; then
		rm -rf "$work"
	else
		say "kept $work"
	fi
	say "done in $((SECONDS - start))s"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

copy_tree() { # DEST: the work tree without build products, caches or git
	mkdir -p "$1"
	tar -C "$top" --exclude=./build --exclude=./.cache --exclude=./.git -cf - . |
		tar -C "$1" -xf -
}
copy_tree "$work/src"

# 0b. One version everywhere.
deb_ver=$(dpkg-parsechangelog -l "$top/debian/changelog" -SVersion)
up_ver=${deb_ver#*:}
up_ver=${up_ver%-*}
if [ "$up_ver" = "$ver" ]; then
	ok "debian/changelog's upstream version is VERSION ($ver)"
else
	nok "debian/changelog's upstream version is VERSION ($ver)" \
		"changelog says $deb_ver"
fi
conf_ver=$(cd / && bash -c '. "$1" && echo "$PACKAGE_NAME $PACKAGE_VERSION"' _ "$top/dkms.conf")
if [ "$conf_ver" = "$name $ver" ]; then
	ok "dkms.conf reads its version from VERSION"
else
	nok "dkms.conf reads its version from VERSION" "it says '$conf_ver'"
fi

# 1. Plain DKMS from a source checkout.
say "1. dkms add/build/install/uninstall/remove for $KVER"
dkms_st() { dkms status -m "$name" -v "$ver" -k "$KVER" 2>/dev/null; }
t "dkms add of a source checkout" dkms add "$work/src"
t "dkms copied the sources to /usr/src/$name-$ver" \
	test -e "/usr/src/$name-$ver/dkms.conf" -a -e "/usr/src/$name-$ver/module/main.c"
t "dkms build -k $KVER" dkms build -m "$name" -v "$ver" -k "$KVER"
t "dkms install -k $KVER" dkms install -m "$name" -v "$ver" -k "$KVER"
if [[ $(dkms_st) == *': installed'* ]] && [ -e "$ko" ]; then
	ok "dkms status says installed, $ko exists"
else
	nok "dkms status says installed, $ko exists" "status: $(dkms_st)"
fi
if [ -e "$ko" ]; then
	mkdir -p "$work/dkms"
	cp "$ko" "$work/dkms/$kmod.ko"   # run-guest.sh keeps the file name
	kv=$(modinfo -F version "$ko") vm=$(modinfo -F vermagic "$ko")
	if [ "$kv" = "$ver" ] && [ "${vm%% *}" = "$KVER" ]; then
		ok "the module is version $ver, built for $KVER"
	else
		nok "the module is version $ver, built for $KVER" "version '$kv', vermagic '$vm'"
	fi
	signer=$(modinfo -F signer "$ko")
	if [ -n "$signer" ]; then
		ok "DKMS signed the module (signer: $signer)"
	else
		nok "DKMS signed the module" "no signature"
	fi
	t "depmod lists it for $KVER" grep -q "updates/dkms/$kmod.ko:" "/lib/modules/$KVER/modules.dep"
fi
t "dkms uninstall -k $KVER" dkms uninstall -m "$name" -v "$ver" -k "$KVER"
t "the module file is gone after uninstall" test ! -e "$ko"
t "dkms remove --all" dkms remove -m "$name" -v "$ver" --all
if [ ! -e "/var/lib/dkms/$name" ] && [ -z "$(dkms status -m "$name")" ]; then
	ok "dkms no longer knows $name"
else
	nok "dkms no longer knows $name" "$(dkms status -m "$name")"
fi
rm -rf "/usr/src/$name-$ver"

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

# 3. dpkg-buildpackage in a copy of the tree.
say "3. dpkg-buildpackage"
src=$work/pkg/$name-$ver
copy_tree "$src"
bp=()
if [ ! -e "$src/tools/amtctl/Makefile" ]; then
	bp=(-P"$nocli")
	say "no tools/amtctl/Makefile: building without the $cli package"
fi
(cd "$src" && find . | sort) > "$work/tree.before"
# shellcheck disable=SC2016 # for the inner shell
t "dpkg-buildpackage -us -uc -b${bp[*]:+ ${bp[*]}}" \
	bash -c 'cd "$1" && shift && dpkg-buildpackage -us -uc -b "$@"' _ "$src" "${bp[@]}"
file_ver=${deb_ver#*:}
deb=$work/pkg/${pkg}_${file_ver}_all.deb
clideb=$(compgen -G "$work/pkg/${cli}_${file_ver}_*.deb" | grep -v dbgsym | head -1 || true)
if [ -e "$deb" ]; then
	ok "built ${deb##*/}"
	dpkg -c "$deb" | awk '{print $NF}' > "$work/deb.list"
	miss=()
	for f in dkms.conf Kbuild VERSION LICENSE "$top"/module/*; do
		f=${f#"$top"/}
		grep -qx "./usr/src/$name-$ver/$f" "$work/deb.list" || miss+=("$f")
	done
	if [ ${#miss[@]} = 0 ]; then
		ok "the .deb ships dkms.conf, Kbuild, VERSION, LICENSE, module/ in /usr/src/$name-$ver"
	else
		nok "the .deb ships the module sources in /usr/src/$name-$ver" "missing: ${miss[*]}"
	fi
	dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles > "$work/deb.conffiles" || true
	if grep -qx ./etc/modprobe.d/async_mm_teardown.conf "$work/deb.list" &&
	   grep -qx /etc/modprobe.d/async_mm_teardown.conf "$work/deb.conffiles"; then
		ok "the .deb ships /etc/modprobe.d/async_mm_teardown.conf as a conffile"
	else
		nok "the .deb ships /etc/modprobe.d/async_mm_teardown.conf as a conffile"
	fi
	dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/src/$name-$ver/dkms.conf" > "$work/deb.dkms.conf"
	if grep -qx "PACKAGE_VERSION=\"$ver\"" "$work/deb.dkms.conf"; then
		ok "the packaged dkms.conf says PACKAGE_VERSION=\"$ver\""
	else
		nok "the packaged dkms.conf says PACKAGE_VERSION=\"$ver\"" \
			"$(grep PACKAGE_VERSION "$work/deb.dkms.conf")"
	fi
	if [[ $(dpkg-deb -f "$deb" Depends) == *dkms* ]]; then
		ok "${pkg} depends on dkms"
	else
		nok "${pkg} depends on dkms"
	fi
else
	nok "built ${deb##*/}" "see $logf"
fi
if [ ${#bp[@]} = 0 ]; then
	if [ -n "$clideb" ]; then
		ok "built ${clideb##*/}"
		dpkg -c "$clideb" | awk '{print $NF}' > "$work/clideb.list"
		if grep -qx ./usr/sbin/amtctl "$work/clideb.list" &&
		   grep -qx ./usr/share/man/man8/amtctl.8.gz "$work/clideb.list"; then
			ok "the $cli .deb ships /usr/sbin/amtctl and amtctl(8)"
		else
			nok "the $cli .deb ships /usr/sbin/amtctl and amtctl(8)"
		fi
		d=$(dpkg-deb -f "$clideb" Depends)
		if [[ $d == *"$pkg (= $deb_ver)"* ]]; then
			ok "$cli depends on $pkg (= $deb_ver)"
		else
			nok "$cli depends on $pkg (= $deb_ver)" "Depends: $d"
		fi
	else
		nok "built the $cli .deb" "see $logf"
	fi
fi
# shellcheck disable=SC2016 # for the inner shell
run bash -c 'cd "$1" && debian/rules clean' _ "$src" || true
(cd "$src" && find . | sort) > "$work/tree.after"
if diff "$work/tree.before" "$work/tree.after" > "$work/tree.diff"; then
	ok "debian/rules clean leaves nothing behind"
else
	nok "debian/rules clean leaves nothing behind" \
		"$(grep '^[<>]' "$work/tree.diff" | head -3 | tr '\n' ' ')"
fi

# 4. Install the .deb(s) with apt. DKMS's postinst builds for the running
# kernel and the newest in /boot; this host may run a kernel of its own (no
# /lib/modules/$(uname -r): "belongs to a chroot's host", nothing built), so
# ask for every kernel in /lib/modules, as autoinstall_all_kernels does.
if [ -e "$deb" ]; then
	say "4. apt-get install ${deb##*/}${clideb:+ ${clideb##*/}}"
	debs=("$deb")
	[ ${#bp[@]} = 0 ] && [ -n "$clideb" ] && debs+=("$clideb")
	t "apt-get install ${debs[*]##*/}" \
		env autoinstall_all_kernels=1 DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -q -o DPkg::Lock::Timeout=300 --no-install-recommends "${debs[@]}"
	if [[ $(dkms_st) == *': installed'* ]] && [ -e "$ko" ]; then
		ok "DKMS built and installed the module for $KVER on install ($ko)"
	else
		nok "DKMS built and installed the module for $KVER on install" "status: '$(dkms_st)'"
	fi
	[ -e "$ko" ] && t "the installed module is version $ver" \
		test "$(modinfo -F version "$ko")" = "$ver"
	names=("$pkg")
	[ ${#debs[@]} = 2 ] && names+=("$cli")
	t "apt-get purge ${names[*]}" aptget purge "${names[@]}"
	still=()
	for p in "${names[@]}"; do installed "$p" && still+=("$p"); done
	if [ ${#still[@]} = 0 ]; then
		ok "dpkg no longer knows ${names[*]}"
	else
		nok "dpkg no longer knows ${names[*]}" "still there: ${still[*]}"
	fi
	left=()
	for f in "$ko" "/usr/src/$name-$ver" "/var/lib/dkms/$name" \
		 /etc/modprobe.d/async_mm_teardown.conf /usr/sbin/amtctl; do
		[ -e "$f" ] && left+=("$f")
	done
	grep -q "$kmod" "/lib/modules/$KVER/modules.dep" && left+=("modules.dep entry")
	if [ ${#left[@]} = 0 ]; then
		ok "nothing left after purge"
	else
		nok "nothing left after purge" "${left[*]}"
	fi
fi

exit $fail
