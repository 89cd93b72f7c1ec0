// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of module/policy.c: the deferral decision, the budget
 * check and parameter validation, compiled without any kernel header.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "../../module/policy.h"

static int failed, passed;

#define CHECK(cond, name) do {						\
	if (cond) {							\
		passed++;						\
		printf("ok - %s\n", name);				\
	} else {							\
		failed++;						\
		printf("not ok - %s (%s:%d: %s)\n", name, __FILE__,	\
		       __LINE__, #cond);				\
	}								\
} while (0)

static struct amt_exit_facts big(void)
{
	struct amt_exit_facts f = {
		.enabled = true, .rss = 100000, .thresh = 16384,
	};
	return f;
}

int main(void)
{
	struct amt_exit_facts f;

	f = big();
	CHECK(amt_decide(&f) == AMT_DEFER, "large healthy exit is deferred");
	f.enabled = false;
	CHECK(amt_decide(&f) == AMT_SYNC_DISABLED, "disabled means inline");
	f = big();
	f.rss = f.thresh - 1;
	CHECK(amt_decide(&f) == AMT_SYNC_SMALL, "below threshold is inline");
	f.rss = f.thresh;
	CHECK(amt_decide(&f) == AMT_DEFER, "threshold is inclusive");
	f = big();
	f.oom = true;
	CHECK(amt_decide(&f) == AMT_REJECT_OOM, "OOM victim never deferred");
	f.aio = true;
	CHECK(amt_decide(&f) == AMT_REJECT_OOM, "OOM wins over AIO");
	f = big();
	f.aio = true;
	CHECK(amt_decide(&f) == AMT_REJECT_AIO, "AIO user stays inline");
	f = big();
	f.pressure = true;
	CHECK(amt_decide(&f) == AMT_REJECT_PRESSURE,
	      "no deferral right after an OOM or direct reclaim");
	f.oom = true;
	CHECK(amt_decide(&f) == AMT_REJECT_OOM, "OOM victim wins over pressure");
	f = big();
	f.low_memory = true;
	CHECK(amt_decide(&f) == AMT_REJECT_LOW_MEMORY,
	      "no deferral while MemAvailable is low");
	f.memcg_full = true;
	f.memcg_waits = true;
	CHECK(amt_decide(&f) == AMT_REJECT_LOW_MEMORY,
	      "a waiting memcg does not lift the low-memory gate");
	f.pressure = true;
	CHECK(amt_decide(&f) == AMT_REJECT_PRESSURE,
	      "pressure counted before low memory");
	f.oom = true;
	CHECK(amt_decide(&f) == AMT_REJECT_OOM,
	      "OOM victim wins over low memory");

	CHECK(amt_memory_low(100, 1000, 10), "low memory: at the share, low");
	CHECK(amt_memory_low(112, 1000, 10),
	      "low memory: within an eighth over the share, low");
	CHECK(!amt_memory_low(113, 1000, 10),
	      "low memory: past the eighth, not low");
	CHECK(amt_memory_low(0, 1000, 1), "low memory: none available, low");
	CHECK(!amt_memory_low(0, 1000, 0), "low memory: 0 disables the gate");
	CHECK(!amt_memory_low(1UL << 40, 1UL << 41, 44) &&
	      amt_memory_low(1UL << 40, 1UL << 41, 45),
	      "low memory: 8 PiB of 4 KiB pages, no overflow");
	f = big();
	f.memcg_full = true;
	CHECK(amt_decide(&f) == AMT_REJECT_MEMCG, "full memcg stays inline");
	f.aio = true;
	CHECK(amt_decide(&f) == AMT_REJECT_MEMCG, "memcg counted before AIO");
	f = big();
	f.memcg_full = true;
	f.memcg_waits = true;
	CHECK(amt_decide(&f) == AMT_DEFER,
	      "full memcg whose reclaim waits for the teardown: deferred");
	f.memcg_shmem_full = true;
	CHECK(amt_decide(&f) == AMT_REJECT_MEMCG,
	      "full memcg lacking room for the shmem it cannot wait for: inline");
	f = big();
	f.memcg_shmem_full = true;
	CHECK(amt_decide(&f) == AMT_REJECT_MEMCG,
	      "memcg with room for the RSS but not for the shmem files: inline");
	f = big();
	f.memcg_full = true;
	f.memcg_waits = true;
	f.pressure = true;
	CHECK(amt_decide(&f) == AMT_REJECT_PRESSURE,
	      "a waiting memcg does not lift the pressure gate");
	f = big();
	f.memcg_waits = true;
	f.aio = true;
	CHECK(amt_decide(&f) == AMT_REJECT_AIO,
	      "a waiting memcg does not lift the AIO gate");

	CHECK(amt_memcg_has_room(100, 1000, 900), "memcg: exact room admitted");
	CHECK(!amt_memcg_has_room(101, 1000, 900), "memcg: one short refused");
	CHECK(!amt_memcg_has_room(1200, 1000, 1),
	      "memcg: usage over max (after a limit cut) refused");
	CHECK(amt_memcg_has_room(5, ~0UL, ~0UL - 5),
	      "memcg: unlimited has room without overflow");
	f = big();
	f.rss = 1;
	f.oom = true;
	CHECK(amt_decide(&f) == AMT_SYNC_SMALL,
	      "small OOM victim counted as small, not rejected");
	f.enabled = false;
	CHECK(amt_decide(&f) == AMT_SYNC_DISABLED, "disabled wins over all");

	CHECK(amt_budget_ok(100, 100), "budget: total equal to cap admitted");
	CHECK(!amt_budget_ok(101, 100), "budget: over cap rejected");
	CHECK(amt_budget_ok(0, 1), "budget: empty admitted");

	CHECK(amt_check_thresh(0, 1000) == -EINVAL, "thresh 0 refused");
	CHECK(amt_check_thresh(1, 1000) == 0, "thresh 1 accepted");
	CHECK(amt_check_thresh(1000, 1000) == 0, "thresh = RAM accepted");
	CHECK(amt_check_thresh(1001, 1000) == -EINVAL, "thresh > RAM refused");
	CHECK(amt_check_max_pending(0, 1000) == -EINVAL, "cap 0 refused");
	CHECK(amt_check_max_pending(1000, 1000) == 0, "cap = RAM accepted");
	CHECK(amt_check_max_pending(1001, 1000) == -EINVAL,
	      "cap > RAM refused");
	CHECK(amt_default_max_pending(1000) == 250, "default cap is RAM/4");
	CHECK(amt_default_max_pending(3) == 1, "default cap at least 1");
	CHECK(amt_default_thresh(4096) == 16384, "default thresh 64 MiB");
	CHECK(amt_check_min_avail(0) == 0, "min_available_pct 0 accepted");
	CHECK(amt_check_min_avail(50) == 0, "min_available_pct 50 accepted");
	CHECK(amt_check_min_avail(51) == -EINVAL,
	      "min_available_pct over 50 refused");
	CHECK(amt_check_min_avail(~0UL) == -EINVAL,
	      "min_available_pct huge refused");
	CHECK(amt_check_reapers(0, 16) == -EINVAL, "0 reapers refused");
	CHECK(amt_check_reapers(1, 16) == 0, "1 reaper accepted");
	CHECK(amt_check_reapers(16, 16) == 0, "max reapers accepted");
	CHECK(amt_check_reapers(17, 16) == -EINVAL, "over max refused");
	CHECK(amt_default_reapers(1, 16) == 2,
	      "default reapers: two even on one CPU");
	CHECK(amt_default_reapers(4, 16) == 4, "default reapers: one per CPU");
	CHECK(amt_default_reapers(64, 16) == 8, "default reapers: at most 8");
	CHECK(amt_default_reapers(64, 4) == 4, "default reapers: within max");

	CHECK(amt_nice_weight(0) == 1024, "weight of nice 0");
	CHECK(amt_nice_weight(-20) == 88761 && amt_nice_weight(19) == 15,
	      "weights of the ends");
	CHECK(amt_nice_weight(-40) == 88761 && amt_nice_weight(40) == 15,
	      "weights clamped");
	CHECK(amt_catchup_nice(1024, 1) == 0,
	      "catch-up: one nice-0 death, one reaper: nice 0");
	CHECK(amt_catchup_nice(1024, 2) == 3,
	      "catch-up: one death over two reapers: at least half each");
	CHECK(amt_catchup_nice(16 * 1024, 2) == -10,
	      "catch-up: 16 nice-0 deaths, two reapers: 8 x 1024 each");
	CHECK(amt_catchup_nice(amt_nice_weight(10), 1) == 10,
	      "catch-up: one nice-10 death keeps nice 10");
	CHECK(amt_catchup_nice(15, 1) == 19 && amt_catchup_nice(1, 1) == 19,
	      "catch-up: never above nice 19");
	CHECK(amt_catchup_nice(~0UL, 1) == -20,
	      "catch-up: never below nice -20");
	CHECK(amt_catchup_nice(1024, 0) == 0, "catch-up: 0 threads as 1");

	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
