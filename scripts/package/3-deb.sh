# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Stage 3 of scripts/check-package.sh (sourced).
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
