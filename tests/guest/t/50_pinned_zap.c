// SPDX-License-Identifier: GPL-2.0
/*
 * A killed process's memory is freed even while a holder that is not a
 * task keeps its mm (docs/design.md, "Pinned mms"): the fixture takes the
 * process's mm_users, as a /proc reader or a driver's get_task_mm() does,
 * before the kill. In one boot:
 *
 * - module off (inline) and zap_pinned=0: the memory stays held until the
 *   holder's mmput(), which then pays the whole teardown;
 * - zap_pinned=1: the memory is back while the holder still holds the mm
 *   (within 2 %), the teardown is counted as pinned_zapped, and the
 *   holder's final mmput() is cheap (under a third of inline's).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "amt_guest.h"
#include "../helper/amt_helper.h"

#define MB 1024
#define LIMIT_S 60

struct round {
	bool back;		/* memory back while the mm was still held */
	uint64_t mmput_ns;	/* the holder's final mmput() */
	long zapped, queued;
};

/* @mode: "off" (module disabled), "nozap" (zap_pinned=0), "zap" */
static struct round one(const char *mode)
{
	long z0 = amt_stat("pinned_zapped"), q0 = amt_stat("queued");
	long base, tol = MB * 1024L / 50;
	struct round r = { 0 };
	uint64_t t0;
	pid_t pid;
	int fd;

	amt_assert(!amt_param_set("enabled", strcmp(mode, "off") ? "1" : "0"),
		   "cannot set enabled");
	amt_assert(!amt_param_set("zap_pinned", strcmp(mode, "nozap") ? "1" : "0"),
		   "cannot set zap_pinned");
	base = amt_mem_back_kb();
	pid = amt_hog(MB, AMT_HOG_ANON);
	fd = open(AMT_BLOCK_DEV, O_RDONLY);
	amt_assert(fd >= 0 && !ioctl(fd, AMT_IOC_GRAB_MM, pid) &&
		   !ioctl(fd, AMT_IOC_MMGET), "cannot hold the hog's mm: %s",
		   strerror(errno));
	t0 = amt_now_ns();
	amt_kill_wait(pid);
	/* a drain first (nothing deferred: at once), then a look */
	r.back = amt_mem_back_ns(base, tol, t0, 2 * amt_teardown_slow()) != 0;
	r.zapped = amt_stat("pinned_zapped") - z0;
	r.queued = amt_stat("queued") - q0;
	t0 = amt_now_ns();
	amt_assert(!ioctl(fd, AMT_IOC_MMPUT), "mmput: %s", strerror(errno));
	r.mmput_ns = amt_now_ns() - t0;
	close(fd);
	amt_assert(amt_mem_back_ns(base, tol, amt_now_ns(),
				   LIMIT_S * amt_teardown_slow()),
		   "%s: memory not back after the holder's mmput()", mode);
	return r;
}

static void run(void)
{
	struct round off, nozap, zap;
	char cap[32];

	amt_helper_load();
	/* the default cap (RAM/4) would keep 1 GiB off the reapers' queue */
	snprintf(cap, sizeof(cap), "%ld", sysconf(_SC_PHYS_PAGES));
	amt_assert(!amt_param_set("max_pending_pages", cap), "cannot raise the cap");
	off = one("off");
	nozap = one("nozap");
	zap = one("zap");
	amt_note("1 GiB kill, mm held: back while held %d/%d/%d (off/nozap/zap); the holder's mmput() %.1f / %.1f / %.1f ms",
		 off.back, nozap.back, zap.back, off.mmput_ns / 1e6,
		 nozap.mmput_ns / 1e6, zap.mmput_ns / 1e6);
	amt_assert(!off.back, "inline, the memory came back while held (the fixture did not hold the mm)");
	amt_assert(!nozap.back, "zap_pinned=0, the memory came back while held");
	amt_assert_eq(nozap.zapped, 0, "pinned_zapped with zap_pinned=0");
	amt_assert_eq(zap.queued, 1, "pinned exit deferred");
	amt_assert_eq(zap.zapped, 1, "pinned_zapped");
	amt_assert(zap.back, "zap_pinned=1: the memory was not back while the mm was held");
	amt_assert_lt(zap.mmput_ns * 3, off.mmput_ns,
		      "the holder's mmput() (ns) after a zap, vs inline");
	amt_assert(!amt_param_set("zap_pinned", "1"), "cannot restore zap_pinned");
	amt_reset_defaults();
}

AMT_TEST_BOTH("pinned_zap", "a killed process's memory is freed while a holder that is not a task keeps its mm", 600, run)
