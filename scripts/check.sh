#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check: host unit tests, the guest suite on one Debian kernel, and
# (on the default kernel) self-tests proving the harness catches failures.
#   scripts/check.sh [SUITE...]   SUITE: bookworm (default), bookworm-rt, trixie, sid
# Prints TAP lines and ends with "N passed, N failed"; skips ("ok ... #
# SKIP") count as neither and are reported on the line before.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
suites=${*:-bookworm}
. "$top/scripts/tap.sh"

# Where the time went, printed before the summary (CI shows the tail).
times=() t_last=$SECONDS
took() {
	times+=("$1 $((SECONDS - t_last))s")
	t_last=$SECONDS
}

if ! "$top/scripts/deps.sh"; then
	echo "not ok - host dependencies installed" | emit
	echo "0 passed, 1 failed"
	exit 1
fi
took deps

# 1. Host unit tests of the pure policy code.
mkdir -p "$top/build/unit"
if gcc -Wall -Wextra -Werror -O2 -o "$top/build/unit/test_policy" \
	"$top/tests/unit/test_policy.c" "$top/module/policy.c"; then
	"$top/build/unit/test_policy" | grep -E '^(ok|not ok) ' |
		sed 's/^\(ok\|not ok\) - /\1 - unit: /' | emit
else
	echo "not ok - unit: policy tests build" | emit
fi
# ... and of module/interface.h, the stats and parameters shared with
# amtctl and the guest tests.
if gcc -Wall -Wextra -Werror -O2 -o "$top/build/unit/test_interface" \
	"$top/tests/unit/test_interface.c"; then
	"$top/build/unit/test_interface" | grep -E '^(ok|not ok) ' |
		sed 's/^\(ok\|not ok\) - /\1 - unit: /' | emit
else
	echo "not ok - unit: interface tests build" | emit
fi

# 2. Kernel coding style of the module, and its files' uses without a cycle.
"$top/scripts/checkpatch.sh" | emit
"$top/scripts/check-includes.sh" | emit
# (watched, not judged: comment lines per code line, with and without
# kernel-doc)
"$top/scripts/comment-ratio.sh" | awk '$1 == "total" {
	printf "# comment ratio of module/*.c: %s (%s without kernel-doc)\n", $4, $5 }'
# The oom:mark_victim probe is type-checked against the target's header: a
# build that assumes the other prototype (int pid) must fail, not oops.
if out=$("$top/scripts/build-module.sh" bookworm KCFLAGS=-DAMT_MARK_VICTIM_PID 2>&1); then
	echo "not ok - build: a mark_victim probe of the wrong prototype is refused # it built"
elif echo "$out" | grep -q 'check_trace_callback_type_mark_victim'; then
	echo "ok - build: a mark_victim probe of the wrong prototype is refused"
else
	echo "not ok - build: a mark_victim probe of the wrong prototype is refused # failed otherwise: $(echo "$out" | grep -m1 -i error)"
fi | emit
took unit+style

# 3. The guest suite, on each kernel asked for. At the end of the plain
#    boot of a non-RT kernel, control under lockdown=integrity (lockdown
#    cannot be lifted, so it comes last; on the RT flavour of the same 6.1
#    it adds nothing).
# The consumer tests (a real program, earlyoom, and the cgroup lifecycle
# of kills in each mode; 40-85 s each) run in the plain boots of the
# non-RT kernels (6.1 and sid in .ci/run); the preempt=full and RT boots
# run every other test, except the tests of policy and interface that take
# no exit path of their own (the same 6.1 code decides there as in the
# plain boot). The RT boot keeps those whose subject RT changes: the
# RCU-tasks grace periods a teardown may hold up (tasks_rcu), the give-way
# under CPU burners (busy_round), the shrinker's scan under RT's sleeping
# locks (shrinker_cost).
workloads=' 36_cgroup_rmdir 39_userspace_oom '
# (and the large-kill tests of parallel teardown and pinned zaps, 1-2 min
# each: what they exercise, the exported range zap, does not change with
# the preemption model; plain boots only)
workloads+='49_parallel_zap 50_pinned_zap '
policy=' 15_bad_params 19_oom_backlog 20_respawn_stress 21_memcg_respawn 22_amtctl 42_memcg_stuck 43_memcg_shmem 44_tasks_rcu 45_busy_round 48_shrinker_cost '
rt_policy=' 44_tasks_rcu 45_busy_round 48_shrinker_cost '
# The workloads' lifecycles (the container runtime's, the restart loop's:
# the cgroup and memcg paths that cgroup_rmdir, memcg_respawn and
# memcg_stuck cover on every kernel) and the longest stress, the module's
# global oom_guard under kill-and-respawn with burners (~150 s; the guard
# is also under memcg_respawn here), are left to make check-workloads,
# which runs all three on any kernel: make check stays within its time.
workload_only=' 20_respawn_stress 37_crun_lifecycle 38_restart_loop '
# An arm64 kernel (bookworm-arm64) runs the whole suite when it is the only
# kernel asked for (~20 min), and with others (.ci/run) the tests of what
# differs by architecture, ~90 s: the mmput() hook, its redirect and its
# call site (headline, threads, exit_stress), the hook after exit_notify()
# and the original called by pointer (self_mode, self_mempolicy), the
# redirects' unload (self_unload), OOM victim marking (oom_memcg_victim).
cross=' 01_sanity 02_headline 04_threads 17_oom_memcg_victim 23_self_mode 26_self_unload 33_exit_stress 34_self_mempolicy '
all_tests=() rt_tests=() preempt_tests=() cross_tests=()
for t in "$top"/tests/guest/t/*.c; do
	t=$(basename "$t" .c)
	case $workload_only in *" $t "*) continue ;; esac
	all_tests+=(-t "$t")
	case $cross in *" $t "*) cross_tests+=(-t "$t") ;; esac
	case $workloads in *" $t "*) continue ;; esac
	case $rt_policy in *" $t "*) rt_tests+=(-t "$t") ;; esac
	case $policy in *" $t "*) continue ;; esac
	rt_tests+=(-t "$t")
	preempt_tests+=(-t "$t")
done
# 6.1 boots once more with full preemption (its default is voluntary;
# Debian's kernels are PREEMPT_DYNAMIC): exits preempted anywhere in
# exit_mm(). That boot is left out when another kernel asked for is
# preemptible everywhere by default: an RT flavour, or sid's 7.x, whose
# default model is lazy (.ci/run has both; the boot took ~370 s there).
preemptible=
for suite in $suites; do
	[ "$suite" = bookworm ] && continue
	kenv=$("$top/scripts/kernel.sh" "$suite") || continue
	eval "$kenv"
	if grep -qE '^CONFIG_PREEMPT(_RT|_LAZY)?=y' "$(dirname "$VMLINUZ")/config"; then
		preemptible+=" $suite"
	fi
done
[ -n "$preemptible" ] && echo "# no preempt=full boot of 6.1: preemptible by default:$preemptible" | emit
# (an arm64 kernel with others: the tests of what differs by architecture)
first=
for suite in $suites; do
	[ -z "$first" ] && [ "${suite%-rt}" = "$suite" ] &&
		[ "${suite%-arm64}" = "$suite" ] && first=$suite
done
# (a lone arm64 kernel: its whole suite)
[ -n "$first" ] || first=${suites%% *}
for suite in $suites; do
	runs=suite
	[ "$suite" = bookworm ] && [ -z "$preemptible" ] && runs+=" preempt"
	for run in $runs; do
		if [ $run = preempt ]; then
			TAP_FILTER='s/^((not )?ok - [^:]*):/\1 preempt=full:/' \
				tap_run "$suite: guest preempt=full suite" \
				"$top/scripts/run-guest.sh" -k "$suite" -r suite \
				-a preempt=full "${preempt_tests[@]}"
		elif [ "${suite%-rt}" != "$suite" ]; then
			tap_run "$suite: guest $run" \
				"$top/scripts/run-guest.sh" -k "$suite" -r $run \
				"${rt_tests[@]}"
		elif [ "${suite%-arm64}" != "$suite" ] &&
		     [ "$suite" != "$first" ]; then
			tap_run "$suite: guest $run" \
				"$top/scripts/run-guest.sh" -k "$suite" -r $run \
				"${cross_tests[@]}"
		else
			tap_run "$suite: guest $run" \
				"$top/scripts/run-guest.sh" -k "$suite" -r $run \
				-a amt_lockdown=1 "${all_tests[@]}"
		fi
		took "$suite-$run"
	done
done
suite=bookworm

# 4. Packaging: DKMS on the host (build/install only), the DKMS-built module
#    in the guest, the Debian packages built and installed.
if [ "${AMT_PACKAGE:-1}" = 1 ]; then
	tap_run "package: checks" "$top/scripts/check-package.sh"
	took package
fi

# 5. The harness catches what it must (on bookworm only: this tests the
#    harness, not the kernel). First, on the host: the emulator-fault
#    detector behind run-guest.sh's one re-boot matches the recorded TCG
#    faults (tcg-*.log) and none of the real failures.
for log in "$top"/tests/harness/logs/*.log; do
	name=${log##*/}
	if "$top/scripts/tcg-fault.sh" "$log"; then got=yes; else got=no; fi
	case $name in tcg-*) want=yes ;; *) want=no ;; esac
	if [ $got = $want ]; then
		echo "ok - harness: tcg-fault.sh on $name: match=$got"
	else
		echo "not ok - harness: tcg-fault.sh on $name: match=$got, want $want"
	fi
	[ $got = yes ] || continue
	# where a resumed boot stops judging the first: before the fault's
	# report, and nothing of it
	n=$("$top/scripts/tcg-fault.sh" -n "$log")
	# (the excerpts open with "#" lines saying where they come from)
	if tr -d '\r' < "$log" | head -n $((n - 1)) | grep -v '^#' |
		grep -qE 'BUG:|WARNING:|Oops|Call Trace|int3|NMI backtrace|rcu: INFO'; then
		echo "not ok - harness: tcg-fault.sh -n on $name: the log before line $n has none of the fault's report # it has"
	else
		echo "ok - harness: tcg-fault.sh -n on $name: the log before line $n has none of the fault's report"
	fi
done | emit
# A step that dies before printing a verdict (a build failure) must count.
if out=$(bash -c '. "$1"; tap_run "probe" false' sh "$top/scripts/tap.sh") &&
	echo "$out" | grep -q '^not ok 1 - probe ran # false failed with status 1'; then
	echo "ok - harness: a step that fails before any verdict counts as failed"
else
	echo "not ok - harness: a step that fails before any verdict counts as failed # got: $out"
fi | emit
if [ "${AMT_SELFTEST:-1}" = 1 ]; then
	# (name, regex the failure must match) pairs of one failed boot
	expect_fail() { # out rc name regex [name regex]...
		local out=$1 rc=$2
		shift 2
		while [ $# -gt 0 ]; do
			if [ "$rc" = 0 ]; then
				echo "not ok - harness: $1 # the run passed"
			elif ! echo "$out" | grep -qE "^not ok - .*$2"; then
				echo "not ok - harness: $1 # failed, but not with '$2'"
			else
				echo "ok - harness: $1"
			fi
			shift 2
		done
		echo "$out" | sed 's/^/# /'
	}
	# One boot: a deliberately failing test, with a module that WARNs.
	eval "$("$top/scripts/kernel.sh" "$suite")"
	hdir=$top/build/$KVER/harness-src
	mkdir -p "$hdir" && cp -p "$top"/tests/harness/{Kbuild,amt_warn.c} "$hdir/"
	if make -C "$KDIR" M="$hdir" modules > "$hdir/build.log" 2>&1; then
		rc=0
		out=$("$top/scripts/run-guest.sh" -k "$suite" -r harness-fail \
			-x "$hdir/amt_warn.ko" -t none 2>/dev/null) || rc=$?
		expect_fail "$out" "$rc" \
			"a failing guest test fails the run" \
			"harness_deliberate_failure # deliberate failure" \
			"a module that WARNs fails the run" \
			"kernel log clean # .*(WARNING|Kernel panic)" | emit
	else
		echo "not ok - harness: warn module builds" | emit
	fi
	rc=0
	out=$("$top/scripts/run-guest.sh" -k "$suite" -r harness-hang -t none \
		-T 20 2>/dev/null) || rc=$?
	expect_fail "$out" "$rc" "a hung guest is killed and fails the run" \
		"powered off in time # killed" | emit
	# Both boots simulate the fault in the second of two steps: the
	# first is booted again, resuming at that step, the second is judged
	# as it is (the simulated line is no splat).
	out=$("$top/scripts/run-guest.sh" -k "$suite" -r harness-tcg-fault -t none 2>/dev/null)
	rc=$?
	n=$(echo "$out" | grep -c 'tcg-fault in the first boot.*booting again, resuming at two')
	steps=$(echo "$out" | sed -n 's/^ok - .*: step \(.*\)/\1/p' | tr '\n' ,)
	if [ $rc = 0 ] && [ "$n" = 1 ] && [ "$steps" = "one in boot 1,two in boot 2," ]; then
		echo "ok - harness: a TCG fault boots the guest again, once, resuming at the test it hit"
	else
		echo "not ok - harness: a TCG fault boots the guest again, once, resuming at the test it hit # status $rc, $n re-boots, steps: $steps"
	fi | emit
	echo "$out" | sed 's/^/# /'
	took harness
fi

echo "# time: ${times[*]}; total ${SECONDS}s"
tap_summary
