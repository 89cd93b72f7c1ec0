# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Stage 1 of scripts/check-package.sh (sourced).
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
