# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Stage 4 of scripts/check-package.sh (sourced).
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
