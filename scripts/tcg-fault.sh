#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# scripts/tcg-fault.sh CONSOLE_LOG: exit 0 if the guest's kernel log shows
# the emulator fault below, 1 if not (2 on a usage error).
#
# Multi-threaded TCG (QEMU 7.2, bookworm's) now and then lets one vCPU run
# stale translated code while, or after, another vCPU patches kernel text
# with text_poke_bp()'s int3 protocol (ftrace, static keys and static calls,
# and so enabling a trace event or loading a module). Seen here as:
#   - an int3 trap nobody claimed ("int3: 0000 [#1]"; "Oops: int3" on 6.9+)
#     at an instruction whose bytes are no longer int3, once in early boot
#     of sid's kernel with no module loaded;
#   - a vCPU caught inside the int3 handler entry (RIP exc_int3 or
#     asm_exc_int3 in an NMI backtrace), its clock stopped, while the
#     patching CPU waits in text_poke_bp for it to take the sync IPI;
#   - that waiting CPU's soft lockup report (the panic can come before the
#     stall report that would show the other vCPU).
# No code of the module runs in an int3 handler or patches text outside
# ftrace registration. scripts/run-guest.sh boots again once on a match,
# keeping the first log; tests/harness/logs/ holds what must and must not
# match, checked by make check.
#
# -n: on a match, print the number of the line (the log without \r) where
# the fault's report begins: the first report of a stall, a lockup or an
# int3 trap in the log (what comes before it is judged as any log is).
set -euo pipefail
where=0
[ "${1:-}" != -n ] || { where=1; shift; }
[ $# = 1 ] && [ -r "$1" ] || { echo "usage: $0 [-n] CONSOLE_LOG" >&2; exit 2; }

tr -d '\r' < "$1" | awk -v where=$where '
	!start && /int3: [0-9a-f]+ \[#|Oops: int3|BUG: soft lockup|rcu: INFO: |NMI backtrace for cpu|RIP: 0010:(asm_)?exc_int3\+/ {
		start = NR
	}
	/int3: [0-9a-f]+ \[#[0-9]+\]/ { hit = 1 }
	/RIP: 0010:(asm_)?exc_int3\+/ { hit = 1 }
	# a soft lockup report, up to the end of its call trace
	/BUG: soft lockup/ { lockup = 1 }
	lockup && /(text_poke_bp_batch|smp_text_poke_batch_finish)\+/ { hit = 1 }
	lockup && /<\/TASK>/ { lockup = 0 }
	END { if (hit && where) print start; exit !hit }'
