// SPDX-License-Identifier: GPL-2.0
/* Harness self-test: a guest test that fails must fail the run. */
#include "amt_guest.h"

static void run(void)
{
	amt_fail("deliberate failure");
}

AMT_TEST("harness_deliberate_failure", "fails on purpose", 30, run)
