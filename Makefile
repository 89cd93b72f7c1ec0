# SPDX-License-Identifier: GPL-2.0
#
# async_mm_teardown: developer entry points. The kernel build itself is
# driven by ./Kbuild (this file is not read by kbuild).
#
#   make [module]          build the module for KERNEL (default bookworm)
#   make check             unit tests + the guest suite + harness self-tests
#                          + the packaging tests (check-package)
#   make check-package     DKMS and Debian packaging only
#   make demo              boot a guest, kill a large process with and without
#   make bench             the benchmarks (docs/benchmarks.md), ~40 min under TCG
#   make bench-icount      the small-process cost alone, under QEMU -icount
#   make check-debug       the guest suite and a soak on a KASAN/lockdep kernel
#   make check-workloads   the workload tests at full length (a 1 GiB service
#                          restarted 50 times per mode) and the tests make
#                          check runs on its first kernel only, ~20 min
#   make unit              the host unit tests alone (no root, no QEMU)
#   make clean
#
# KERNEL selects the Debian kernel booted in the guest: bookworm (Debian 12,
# 6.1, the default), bookworm-rt (its PREEMPT_RT flavour), trixie (Debian
# 13, 6.12) or sid (newest), or the arm64 kernel of one of them
# (bookworm-arm64, trixie-arm64, sid-arm64: a cross build, a TCG guest).
# Everything is
# fetched and cached under .cache/ (git-ignored); nothing is installed into
# or loaded into the host's kernel.

KERNEL ?= bookworm

.PHONY: all module check check-package check-debug check-workloads demo \
	bench bench-icount unit clean

all: module

module:
	scripts/build-module.sh $(KERNEL)

check:
	scripts/check.sh $(KERNEL)


# DKMS add/build/install/remove on the host (never loaded here), the
# DKMS-built module booted in the guest, the .debs built and installed.
check-package:
	scripts/check-package.sh

demo:
	scripts/demo.sh $(KERNEL)

bench:
	scripts/bench.sh $(KERNEL)

bench-icount:
	AMT_BENCH_ICOUNT=1 scripts/bench.sh $(KERNEL)

check-debug:
	scripts/check-debug.sh

check-workloads:
	scripts/check-workloads.sh $(KERNEL)

unit:
	mkdir -p build/unit
	gcc -Wall -Wextra -Werror -O2 -o build/unit/test_policy \
		tests/unit/test_policy.c module/policy.c
	build/unit/test_policy
	gcc -Wall -Wextra -Werror -O2 -o build/unit/test_interface \
		tests/unit/test_interface.c
	build/unit/test_interface

clean:
	rm -rf build
