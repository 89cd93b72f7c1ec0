// SPDX-License-Identifier: GPL-2.0
/*
 * make demo: kill a large process with and without async_mm_teardown loaded
 * and print the two kill->waitpid() latencies side by side. Runs in the
 * guest; rounds alternate so both columns see the same conditions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include "../tests/guest/lib/amt_test.h"

#define ROUNDS 5

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	unsigned long mb = argc > 1 ? strtoul(argv[1], NULL, 0) : 1024;
	double off[ROUNDS], on[ROUNDS], so[ROUNDS], sn[ROUNDS];
	struct utsname u;
	int i, err;

	setvbuf(stdout, NULL, _IONBF, 0);
	uname(&u);
	printf("=== demo: async_mm_teardown on Linux %s\n", u.release);
	printf("A child maps and touches %lu MiB (anonymous, THP off), then is killed;\n"
	       "we time SIGKILL -> waitpid() return. %d rounds, alternating.\n\n",
	       mb, ROUNDS);
	printf("%-6s %22s %22s\n", "round", "module not loaded", "module loaded");
	for (i = 0; i < ROUNDS; i++) {
		pid_t pid;

		if (amt_loaded() && (err = amt_unload()))
			return fprintf(stderr, "rmmod: %s\n", strerror(err)), 1;
		pid = amt_hog(mb, AMT_HOG_ANON);
		off[i] = amt_kill_wait(pid) / 1e6;
		if ((err = amt_load(NULL)))
			return fprintf(stderr, "insmod: %s\n", strerror(err)), 1;
		pid = amt_hog(mb, AMT_HOG_ANON);
		on[i] = amt_kill_wait(pid) / 1e6;
		amt_drain(60000);
		printf("%-6d %19.1f ms %19.1f ms\n", i + 1, off[i], on[i]);
	}
	memcpy(so, off, sizeof(so));
	memcpy(sn, on, sizeof(sn));
	qsort(so, ROUNDS, sizeof(double), cmp);
	qsort(sn, ROUNDS, sizeof(double), cmp);
	printf("%-6s %19.1f ms %19.1f ms\n", "median", so[ROUNDS / 2],
	       sn[ROUNDS / 2]);
	printf("\nwaitpid() returned %.0fx sooner with the module (median).\n",
	       so[ROUNDS / 2] / sn[ROUNDS / 2]);
	printf("stats: queued %ld, reaped %ld, reaper CPU %.1f ms\n",
	       amt_stat("queued"), amt_stat("reaped"),
	       amt_stat("reaper_cpu_ns") / 1e6);
	printf("=== end\n");
	return 0;
}
