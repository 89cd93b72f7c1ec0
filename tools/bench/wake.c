// SPDX-License-Identifier: GPL-2.0
/*
 * exit_latency section 6, wake: where the parent wakes from waitpid(), on
 * the child's CPU or another, and the wake latency in each case.
 */
#include "bench.h"

/*
 * exit_notify() wakes the parent (a sync wakeup, whose hint the scheduler
 * ignores for an exiting waker); in self mode the child then goes on
 * tearing its mm down, so a parent placed on the child's CPU competes with
 * the teardown. waitid(WNOWAIT) returns at that wake without reaping: the
 * zombie's stat still names the CPU it runs (or last ran) on, read right
 * after the wake (a zombie pulled away meanwhile counts as another CPU),
 * and sched_getcpu() names the parent's. Per mode: how often the two are
 * the same, and kill -> waitid in each case (in sync mode that includes
 * the whole teardown).
 */
void bench_wake(struct results *res)
{
	struct wake_result *w = &res->wake;
	const unsigned long mb = 256;
	int n = quick ? 4 : 3 * rounds, round, j, c;
	uint64_t lat[NR_CFG][2][MAX_SAMPLES];
	int cnt[NR_CFG][2] = { { 0 } };

	if (n > MAX_SAMPLES)
		n = MAX_SAMPLES;
	warm_up();	/* the section may run alone (--only) */
	fprintf(stderr, "# wake: %d rounds\n", n);
	for (round = 0; round < n; round++)
		for (j = 0; j < NR_CFG; j++) {
			pid_t pid;
			siginfo_t si;
			uint64_t t0, dt;
			int me, same;

			c = (round + j) % NR_CFG;
			set_cfg(c);
			pid = amt_hog(mb, AMT_HOG_ANON);
			t0 = amt_now_ns();
			kill(pid, SIGKILL);
			while (waitid(P_PID, pid, &si, WEXITED | WNOWAIT) < 0)
				if (errno != EINTR)
					die("waitid: %s", strerror(errno));
			me = sched_getcpu();
			dt = amt_now_ns() - t0;
			if (me < 0)
				die("sched_getcpu: %s", strerror(errno));
			same = task_cpu_of(pid) == me;
			amt_reap(pid);
			lat[c][same][cnt[c][same]++] = dt;
			settle();
		}
	w->mb = mb;
	w->n = n;
	for (c = 0; c < NR_CFG; c++) {
		struct wake_mode *m = &w->mode[c];

		m->same = cnt[c][1];
		m->other = cnt[c][0];
		m->lat_same = dist_of(lat[c][1], cnt[c][1]);
		m->lat_other = dist_of(lat[c][0], cnt[c][0]);
	}
}
