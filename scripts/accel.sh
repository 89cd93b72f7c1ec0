#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Which QEMU accelerator the guests use: prints "kvm" or "tcg".
#   scripts/accel.sh VMLINUZ
# AMT_ACCEL=kvm|tcg decides. Otherwise KVM only where /dev/kvm is writable
# and a guest really runs under it: some hosts expose a /dev/kvm whose
# guests never execute (no VMX/SVM underneath: QEMU starts, the vCPU spins,
# the console stays empty), and every test would then wait out its time
# limit. The probe boots VMLINUZ with no initramfs, which panics at once
# ("VFS: Unable to mount root"); its first console line shows the vCPU
# runs. The verdict is kept for this host boot (build/accel.BOOT_ID).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
vmlinuz=$1
case ${AMT_ACCEL:-} in
kvm|tcg) echo "$AMT_ACCEL"; exit 0 ;;
'') ;;
*) echo "accel: AMT_ACCEL=$AMT_ACCEL: use kvm or tcg" >&2; exit 2 ;;
esac
if [ ! -w /dev/kvm ]; then
	echo tcg
	exit 0
fi
mkdir -p "$top/build"
cache=$top/build/accel.$(cat /proc/sys/kernel/random/boot_id)
if [ ! -s "$cache" ]; then
	log=$(mktemp)
	timeout 30 qemu-system-x86_64 -accel kvm -cpu max -smp 1 -m 256M \
		-kernel "$vmlinuz" -append "console=ttyS0 panic=-1" \
		-display none -monitor none -no-reboot -serial "file:$log" \
		>/dev/null 2>&1 || true
	if grep -aq 'Linux version' "$log"; then
		echo kvm > "$cache"
	else
		echo "accel: /dev/kvm is there but a guest does not run under it (no console output in 30 s): using TCG" >&2
		echo tcg > "$cache"
	fi
	rm -f "$log"
fi
cat "$cache"
