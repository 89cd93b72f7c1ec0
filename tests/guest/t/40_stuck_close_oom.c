// SPDX-License-Identifier: GPL-2.0
/*
 * Memory pressure inside the hand-off window does not kill anyone. A 1 GiB
 * process whose close blocks after exit_mm() (29_stuck_close's device) is
 * killed; its mm is deferred (a self-mode stash, or queued for a reaper
 * not yet woken: the wake-up is owed at exit_notify(), which the blocked
 * close delays), and either waits up to AMT_STASH_MAX (100 ms) for the
 * timer. Right then a second process that has filled the rest of RAM
 * (to 1 MiB above the high watermarks, see room_kb()) asks for 512 MiB
 * more (in transparent huge pages on the debug kernel, press()): without
 * the module the dead process's memory would already be free, so that
 * allocation must succeed with the module too, with no OOM kill, because
 * reclaim (the shrinker) and the OOM notifier see the deferred pages and
 * have them torn down. Reclaim must have met them (the shrinker or the
 * OOM notifier ran while they were deferred): that is what this test is
 * about. An attempt where it did not (the pressure reached the watermark
 * after the teardown, or reclaim passed them by) proves nothing either
 * way and is noted with the reclaim passes that ran; the test tries
 * again, up to ATTEMPTS times, and fails if none met them.
 * An OOM kill or a failed allocation fails at once.
 *
 * min_available_pct=0: the presser fills RAM before the kill, and the
 * low-memory gate would then keep the victim's exit inline (design.md,
 * "Low memory"), which is safe but tests nothing here. What is tested is
 * the case the gate cannot foresee: memory that becomes short after a
 * deferral, while the deferred pages are held.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "amt_guest.h"

#define MB 1024
#define MORE_MB 512
#define SLACK_MB 1
#define ATTEMPTS 3
/* the presser's CPU: its per-CPU free lists count as room */
#define PRESS_CPU 0

static void victim(void *unused)
{
	if (open(AMT_BLOCK_DEV, O_RDONLY) < 0)
		_exit(5);
	amt_map_anon(MB);
}

/* One zone's free pages above its high watermark and its reserve, in kB. */
static long zone_room_kb(long free, long high, long reserve)
{
	long room = free - high - reserve;

	return room > 0 ? room * (sysconf(_SC_PAGESIZE) / 1024) : 0;
}

/*
 * What an allocation of user memory on PRESS_CPU can take before kswapd
 * and direct reclaim start: in each zone, the free pages above its high
 * watermark and above the reserve it keeps from allocations that could use
 * a higher zone (lowmem_reserve, zoneinfo's "protection": the largest, as
 * user memory can come from the highest zone), plus the pages on
 * PRESS_CPU's per-CPU free lists, which an allocation there takes first
 * without lowering the zone's free count (on 7.2 those lists can hold tens
 * of MiB: uncounted, they let the pressure reach the watermark after the
 * hand-off window). MemFree counts the DMA zone's free pages, which that
 * reserve makes unusable (11 MiB of 18 free when a presser stopping on
 * MemFree was OOM-killed on 6.1-rt). Free CMA pages do not count: user
 * memory may take them, the presser's page tables may not (Debian's arm64
 * kernel reserves a CMA area: counted, the presser filled RAM until its
 * own page-table allocation was OOM-killed).
 */
static long room_kb(void)
{
	FILE *f = fopen("/proc/zoneinfo", "r");
	long free = 0, high = 0, reserve = 0, room = 0, n, cpu = -1, cma = 0;
	char line[256], *p, *end;

	amt_assert(f, "no /proc/zoneinfo");
	while (fgets(line, sizeof(line), f)) {
		p = strstr(line, "protection: (");
		if (!strncmp(line, "Node ", 5)) {	/* the next zone */
			room += zone_room_kb(free - cma, high, reserve);
			free = high = reserve = cma = 0;
			cpu = -1;
		} else if (sscanf(line, " nr_free_cma %ld", &n) == 1) {
			cma = n;
		} else if (sscanf(line, " cpu: %ld", &n) == 1) {
			cpu = n;
		} else if (cpu == PRESS_CPU &&
			   sscanf(line, " count: %ld", &n) == 1) {
			free += n;
		} else if (sscanf(line, " pages free %ld", &n) == 1) {
			free = n;
		} else if (sscanf(line, " high %ld", &n) == 1) {
			high = n;	/* the watermark, not a pageset's "high:" */
		} else if (p) {
			for (p += 13; (n = strtol(p, &end, 10)), end != p;
			     p = end + strspn(end, ", "))
				reserve = n > reserve ? n : reserve;
		}
	}
	fclose(f);
	return room + zone_room_kb(free - cma, high, reserve);
}

/*
 * Maps and touches @mb MiB, in transparent huge pages where it can on a
 * slow kernel (amt_slow > 1: the debug kernel). The pressure must pass the
 * low watermark (where kswapd is woken, a few MiB below the high one)
 * before the 100 ms hand-off window ends, while the pages are still
 * deferred. In 4 KiB faults the debug kernel (KASAN under TCG) took
 * 50-70 ms per MiB, so it got there only after the reaper had begun to
 * free the dead process's pages, faster than the presser took them: in
 * mode=self no reclaim ran at all, 3 attempts of 3 (mode=reaper passed,
 * its presser having started below the low watermark in the traced run).
 * A huge page takes 2 MiB in one fault (its zeroing is not instrumented),
 * and when no free 2 MiB block is left its allocation wakes kswapd and
 * reclaims at once (defrag "madvise", Debian's default). Where one fails,
 * the fault falls back to 4 KiB pages; a huge page's allocation never
 * OOM-kills. Elsewhere 4 KiB faults are fast enough, and huge pages are
 * not used: on 7.2, after the first mode's presser had freed its huge
 * pages, the second mode's presser was OOM-killed while filling RAM, with
 * 158 MiB on the per-CPU lists and the zone below its min watermark
 * (room_kb() counts those lists; an order-0 allocation cannot use the
 * huge pages there, the likely cause).
 */
static void press(unsigned long mb)
{
	size_t len = mb << 20, huge = 2UL << 20;
	char *p;

	if (amt_slow() <= 1) {
		amt_map_anon(mb);
		return;
	}
	p = mmap(NULL, len + huge, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		_exit(2);
	/* aligned: 6.1 does not align large anonymous mappings itself */
	p = (char *)(((unsigned long)p + huge - 1) & ~(huge - 1));
	madvise(p, len, MADV_HUGEPAGE);
	amt_touch(p, len);
}

/*
 * Fills RAM until room_kb() is SLACK_MB or less (at most @max MiB), says
 * 'r'; on 'g' asks for MORE_MB more, says 'd'. So close to the watermark,
 * the pressure meets reclaim within a few MiB, inside the hand-off window
 * (stopping 8 MiB earlier, kswapd came too late for it on 6.1). Free
 * pages, not MemAvailable: on 7.2 the per-CPU free lists held over 100 MiB
 * that neither shows and that an allocation on another CPU could not use
 * (an estimate that counted them OOM-killed the presser).
 */
static pid_t presser(unsigned long max, int *to, int *from)
{
	unsigned long mb, step;
	cpu_set_t cpus;
	int a[2], b[2];
	long room;
	pid_t pid;
	char c;

	amt_assert(!pipe(a) && !pipe(b), "pipe: %s", strerror(errno));
	pid = fork();
	amt_assert_ge(pid, 0, "fork: %s", strerror(errno));
	if (!pid) {
		close(a[1]);
		close(b[0]);
		/* the OOM killer's choice, if it had to choose */
		amt_write_file("/proc/self/oom_score_adj", "0");
		CPU_ZERO(&cpus);
		CPU_SET(PRESS_CPU, &cpus);
		if (sched_setaffinity(0, sizeof(cpus), &cpus))
			_exit(6);
		/* 1 MiB steps at the end, to stop at the watermark */
		for (mb = 0; mb < max && (room = room_kb()) > SLACK_MB * 1024;
		     mb += step) {
			step = room > 16 * 1024 ? 4 : 1;
			amt_map_anon(step);
		}
		if (write(b[1], "r", 1) != 1 || read(a[0], &c, 1) != 1)
			_exit(3);
		press(MORE_MB);
		if (write(b[1], "d", 1) != 1)
			_exit(4);
		for (;;)
			pause();
	}
	close(a[0]);
	close(b[1]);
	*to = a[1];
	*from = b[0];
	return pid;
}

/* One byte from @fd within @ms, or 0. */
static char get(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c = 0;

	if (poll(&p, 1, ms) == 1 && read(fd, &c, 1) != 1)
		c = 0;
	return c;
}

/* Reclaim passes so far: kswapd's runs and direct reclaim stalls. */
static long reclaim_runs(void)
{
	static const char * const ev[] = {
		"pageoutrun", "allocstall_dma", "allocstall_dma32",
		"allocstall_normal", "allocstall_movable", "allocstall_device",
	};
	long sum = 0, n;
	size_t i;

	for (i = 0; i < sizeof(ev) / sizeof(ev[0]); i++) {
		n = amt_vmstat(ev[i]);
		sum += n > 0 ? n : 0;
	}
	return sum;
}

/* Waits until no close of the fixture is blocked. */
static void unblocked(void)
{
	amt_assert(amt_helper_wait("blocked", 0, 10000),
		   "a close is still blocked");
}

/* One kill under pressure; 1 if reclaim met the deferred pages. */
static int attempt(int n)
{
	long oom0, q0, s0, d0, h0, r0, avail, met, room_go, room_late;
	long pending_late;
	int to, from, i, status;
	uint64_t t0, t_go;
	pid_t v, p;

	amt_assert(!amt_write_file(AMT_HELPER "hold", "1"), "cannot hold");
	v = amt_hog_fn(victim, NULL);
	avail = amt_mem_available_kb() / 1024;
	amt_assert_gt(avail, MORE_MB + SLACK_MB + 256,
		      "MiB available next to the 1 GiB victim");
	oom0 = amt_vmstat("oom_kill");
	p = presser(avail + 256, &to, &from);
	if (get(from, 120000) != 'r') {
		status = -1;
		waitpid(p, &status, WNOHANG);
		amt_fail("the presser did not fill RAM (status %#x, oom_kill +%ld, room now %ld kB)",
			 status, amt_vmstat("oom_kill") - oom0, room_kb());
	}
	q0 = amt_stat("queued");
	s0 = amt_stat("shrinker_scans");
	d0 = amt_stat("oom_drains");
	h0 = amt_stat("handoffs");
	r0 = reclaim_runs();
	t0 = amt_now_ns();
	kill(v, SIGKILL);
	/*
	 * Its exit is past exit_mm() (deferred) once the close blocks; polled
	 * every 0.5 ms, to start the pressure early in the window.
	 */
	for (i = 0; i < 10000 && amt_helper_get("blocked") < 1; i++)
		usleep(500);
	t_go = amt_now_ns();
	room_go = room_kb();
	amt_assert_eq(write(to, "g", 1), 1, "cannot start the presser");
	amt_assert_eq(amt_helper_get("blocked"), 1, "the close never blocked");
	/* where the pressure stands as the hand-off window ends */
	usleep(90 * 1000);
	room_late = room_kb();
	pending_late = amt_stat("pending_pages");
	amt_assert_eq(get(from, 60000), 'd',
		      "the presser's %d MiB did not come (oom_kill +%ld)",
		      MORE_MB, amt_vmstat("oom_kill") - oom0);
	met = amt_stat("shrinker_scans") - s0 + amt_stat("oom_drains") - d0;
	amt_note("attempt %d: room above the high watermark %ld kB at go, %ld kB 90 ms later (pending_pages %ld then)",
		 n, room_go, room_late, pending_late);
	amt_note("attempt %d: kill->go %.1f ms, kill->512 MiB more %.0f ms; queued +%ld, shrinker_scans +%ld, oom_drains +%ld, handoffs +%ld, reclaim passes +%ld",
		 n, (t_go - t0) / 1e6, (amt_now_ns() - t0) / 1e6,
		 amt_stat("queued") - q0, amt_stat("shrinker_scans") - s0,
		 amt_stat("oom_drains") - d0, amt_stat("handoffs") - h0,
		 reclaim_runs() - r0);
	amt_assert_eq(waitpid(p, &status, WNOHANG), 0, "the presser died");
	amt_assert_eq(amt_vmstat("oom_kill"), oom0, "OOM kills");
	amt_assert_eq(amt_stat("queued") - q0, 1,
		      "the victim was not deferred");
	if (!met)
		amt_note("attempt %d: neither the shrinker nor the OOM notifier ran while the pages were deferred (reclaim passes +%ld)",
			 n, reclaim_runs() - r0);
	kill(p, SIGKILL);
	amt_reap(p);
	amt_write_file(AMT_HELPER "hold", "0");
	amt_reap(v);
	unblocked();
	return met > 0;
}

static void run(void)
{
	char cap[32];
	int n;

	amt_helper_load();
	amt_write_file(AMT_HELPER "hold", "0");
	unblocked();
	snprintf(cap, sizeof(cap), "%ld", amt_mem_total_kb() / 4 * 3 / 4);
	amt_assert(!amt_param_set("max_pending_pages", cap), "cannot set cap");
	amt_assert(!amt_param_set("min_available_pct", "0"),
		   "cannot set min_available_pct");
	amt_write_file("/proc/self/oom_score_adj", "-1000");
	for (n = 1; n <= ATTEMPTS; n++) {
		if (attempt(n))
			return;
	}
	amt_fail("in %d attempts, no reclaim met the deferred pages", ATTEMPTS);
}

AMT_TEST_BOTH("stuck_close_oom", "memory pressure while a dead 1 GiB process's close blocks (inside the 100 ms hand-off window) is served by tearing it down: no OOM kill, the allocation succeeds", 300, run)
