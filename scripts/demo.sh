#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make demo: boot the guest and show kill->waitpid() of a large process
# without and with the module, side by side.
#   scripts/demo.sh [SUITE] [MiB]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
suite=${1:-bookworm}
eval "$("$top/scripts/kernel.sh" "$suite")"
echo "Booting Debian's $KVER kernel under QEMU (a few minutes under TCG)..." >&2
mkdir -p "$top/build/logs"
rc=0
"$top/scripts/run-guest.sh" -k "$suite" -r demo -t none -T 900 \
	-a "amt_demo=${2:-1024}" > "$top/build/logs/demo.verdicts" 2>/dev/null || rc=$?
tr -d '\r' < "$top/build/logs/$KVER-demo.results" |
	sed -n '/^=== demo/,/^=== end/p'
if [ $rc != 0 ]; then
	echo "demo: the guest run failed:" >&2
	cat "$top/build/logs/demo.verdicts" >&2
fi
exit $rc
