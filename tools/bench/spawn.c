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

double spawn_ratio[2][2][MAX_SAMPLES];	/* [loop][reaper, self][round] */
static double spawn_base[2][MAX_SAMPLES];
int spawn_n;

void bench_spawn(void)
{
	static const char *const loop_name[2] = { "fork+exec+wait", "fork+_exit+wait" };
	int n = quick ? 3 : 3 * rounds, iters = quick ? 50 : 200;
	int round, j, l, c;

	if (n > MAX_SAMPLES)
		n = MAX_SAMPLES;
	spawn_n = n;
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
			spawn_base[l][round] = rate[0][l];
			spawn_ratio[l][0][round] = rate[1][l] / rate[0][l];
			spawn_ratio[l][1][round] = rate[2][l] / rate[0][l];
		}
	}
	printf("\n3. small processes: loaded rate / not-loaded rate, mean [95%% CI] over %d interleaved rounds of %d, %d ms idle after each (un)load\n",
	       n, iters, spawn_settle_ms);
	json_array("spawn");
	for (l = 0; l < 2; l++) {
		struct ci base = ci_of(spawn_base[l], n);
		struct ci r = ci_of(spawn_ratio[l][0], n);
		struct ci s = ci_of(spawn_ratio[l][1], n);

		printf("%-16s not loaded %7.0f/s | reaper %.4f [%.4f, %.4f] | self %.4f [%.4f, %.4f]\n",
		       loop_name[l], base.mean, r.mean, r.lo, r.hi, s.mean,
		       s.lo, s.hi);
		json_item();
		fprintf(json, "\"loop\": \"%s\", \"rounds\": %d, \"iterations\": %d, "
			"\"settle_ms\": %d, \"unloaded_per_s\": %.1f, "
			"\"reaper_ratio\": {\"mean\": %.4f, \"ci95\": [%.4f, %.4f]}, "
			"\"self_ratio\": {\"mean\": %.4f, \"ci95\": [%.4f, %.4f]}}",
			loop_name[l], n, iters, spawn_settle_ms, base.mean,
			r.mean, r.lo, r.hi,
			s.mean, s.lo, s.hi);
	}
	fprintf(json, "]");
}
