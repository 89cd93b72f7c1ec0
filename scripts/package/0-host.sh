# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Stage 0 of scripts/check-package.sh (sourced): a clean root host with the
# build dependencies and the bookworm kernel; the cleanup trap; one version
# everywhere.
if [ "$(id -u)" != 0 ]; then
	nok "running as root" "dkms and apt-get need root"
	exit 1
fi

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
