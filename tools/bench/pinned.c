// SPDX-License-Identifier: GPL-2.0
/*
 * exit_latency section 11, pinned: one child of PIN_MB killed while the
 * fixture module (tests/guest/helper/) holds its mm_users, as a /proc
 * reader or a driver's get_task_mm() does. Is its memory back while the
 * pin is held (within PIN_WAIT_S), and what does the holder's final
 * mmput() cost afterwards: inline (enabled=0), zap_pinned=0, and
 * zap_pinned=1 in each mode (docs/design.md, "Pinned mms").
 */
#include <fcntl.h>
#include <sys/ioctl.h>
#include "bench.h"
#include "../../tests/guest/helper/amt_helper.h"

/* Far beyond a 1 GiB teardown under TCG: a round not back by then is held */
#define PIN_WAIT_S 5

static const enum cfg pin_cfg[NR_PIN_VAR] = { SYNC, REAPER, REAPER, SELF };

struct pin_sample {
	uint64_t back;		/* kill to memory back while held; 0: not */
	uint64_t mmput;		/* the holder's final mmput() */
};

static struct pin_sample pin_round(int v, long *zapped)
{
	struct pin_sample s;
	long base, z0 = amt_stat("pinned_zapped");
	uint64_t t0;
	pid_t pid;
	int fd;

	set_cfg(pin_cfg[v]);
	amt_param_set("zap_pinned", v == PV_NOZAP ? "0" : "1");
	base = amt_mem_back_kb();
	pid = amt_hog(PIN_MB, AMT_HOG_ANON);
	fd = open(AMT_BLOCK_DEV, O_RDONLY);
	if (fd < 0 || ioctl(fd, AMT_IOC_GRAB_MM, pid) ||
	    ioctl(fd, AMT_IOC_MMGET))
		die("cannot hold the child's mm: %s", strerror(errno));
	t0 = amt_now_ns();
	kill(pid, SIGKILL);
	amt_reap(pid);
	/* a drain (an entry ends after its zap), then MemAvailable */
	s.back = amt_mem_back_ns(base, MEM_TOL_KB, t0, PIN_WAIT_S);
	t0 = amt_now_ns();
	if (ioctl(fd, AMT_IOC_MMPUT))
		die("the holder's mmput(): %s", strerror(errno));
	s.mmput = amt_now_ns() - t0;
	close(fd);
	*zapped += amt_stat("pinned_zapped") - z0;
	if (!amt_mem_back_ns(base, MEM_TOL_KB, amt_now_ns(), 120))
		die("pinned: memory not back after the holder's mmput()");
	return s;
}

void bench_pinned(struct results *res)
{
	struct pin_result *r = &res->pinned;
	struct pin_sample smp[NR_PIN_VAR][MAX_SAMPLES];
	uint64_t back[MAX_SAMPLES], mmput[MAX_SAMPLES];
	int j, k, v, round, n = quick ? 2 : rounds;

	r->n = n;
	r->mb = PIN_MB;
	r->wait_s = PIN_WAIT_S;
	r->have_self = cfg_available(SELF);
	r->ran = PIN_MB + 1024 <= (unsigned long)amt_mem_back_kb() / 1024;
	if (!r->ran)
		return;
	amt_helper_load();
	for (round = 0; round < n; round++)
		for (j = 0; j < NR_PIN_VAR; j++) {
			v = (round + j) % NR_PIN_VAR;
			if (v == PV_SELF && !r->have_self)
				continue;
			smp[v][round] = pin_round(v, &r->zapped[v]);
		}
	amt_param_set("zap_pinned", "1");
	for (v = 0; v < NR_PIN_VAR; v++) {
		if (v == PV_SELF && !r->have_self)
			continue;
		for (round = 0, k = 0; round < n; round++) {
			mmput[round] = smp[v][round].mmput;
			if (smp[v][round].back)
				back[k++] = smp[v][round].back;
		}
		r->back_rounds[v] = k;
		r->back[v] = dist_of(back, k);
		r->mmput[v] = dist_of(mmput, n);
	}
	settle();
}
