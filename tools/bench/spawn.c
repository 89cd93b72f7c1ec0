// SPDX-License-Identifier: GPL-2.0
/*
 * exit_latency section 3, spawn: fork+exec+wait and fork+_exit+wait rates
 * with the module not loaded, and loaded in each mode.
 */
#include "bench.h"

/* Iterations of @loop per second. */
static double spawn_rate(bool exec_it, int iters)
{
	uint64_t t0 = amt_now_ns();
	int i;

	for (i = 0; i < iters; i++) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork: %s", strerror(errno));
		if (!pid) {
			if (exec_it)
				execl("/proc/self/exe", "exit_latency",
				      "--exit0", (char *)NULL);
			_exit(0);
		}
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	return iters / ((amt_now_ns() - t0) / 1e9);
}

/*
 * Configurations for the spawn loops: the module not loaded, loaded in
 * reaper mode, loaded in self mode (self mode hooks a second function).
 */
static const char *const spawn_cfg_name[3] = { "not loaded", "reaper", "self" };

static int set_spawn_cfg(int c)
{
	if (c == 0) {
		settle();
		return amt_loaded() ? amt_unload() : 0;
	}
	set_cfg(c == 1 ? REAPER : SELF);
	return 0;
}

void bench_spawn(struct results *res)
{
	static const char *const loop_name[2] = { "fork+exec+wait", "fork+_exit+wait" };
	double base[2][MAX_SAMPLES], ratio[2][2][MAX_SAMPLES];
	struct spawn_result *s = &res->spawn;
	int n = quick ? 3 : 3 * rounds, iters = quick ? 50 : 200;
	int round, j, l, c;

	if (n > MAX_SAMPLES)
		n = MAX_SAMPLES;
	fprintf(stderr, "# spawn: %d rounds\n", n);
	for (round = 0; round < n; round++) {
		double rate[3][2];

		for (j = 0; j < 3; j++) {
			c = (round + j) % 3;
			if (set_spawn_cfg(c))
				die("rmmod failed");
			/*
			 * Let the work an insmod or rmmod leaves behind
			 * (RCU callbacks, freeing the module, ftrace's
			 * trampoline) finish before the loop is timed.
			 */
			usleep(spawn_settle_ms * 1000);
			for (l = 0; l < 2; l++)
				rate[c][l] = spawn_rate(l == 0, iters);
		}
		/* per round, on the console log: where a spread comes from */
		fprintf(stderr, "# spawn round %d (first: %s): exec %.0f %.0f %.0f, _exit %.0f %.0f %.0f /s (not loaded, reaper, self)\n",
			round, spawn_cfg_name[round % 3],
			rate[0][0], rate[1][0], rate[2][0],
			rate[0][1], rate[1][1], rate[2][1]);
		for (l = 0; l < 2; l++) {
			base[l][round] = rate[0][l];
			ratio[l][0][round] = rate[1][l] / rate[0][l];
			ratio[l][1][round] = rate[2][l] / rate[0][l];
		}
	}
	s->n = n;
	s->iters = iters;
	s->settle_ms = spawn_settle_ms;
	for (l = 0; l < 2; l++) {
		s->loop[l].name = loop_name[l];
		s->loop[l].base = ci_of(base[l], n);
		s->loop[l].ratio[0] = ci_of(ratio[l][0], n);
		s->loop[l].ratio[1] = ci_of(ratio[l][1], n);
	}
}
