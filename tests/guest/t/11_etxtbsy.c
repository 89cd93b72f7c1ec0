// SPDX-License-Identifier: GPL-2.0
/* Kill, replace the binary, start: the write never fails with ETXTBSY. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "amt_guest.h"

#define BIN "/tmp/amt_etxtbsy_bin"

static void copy(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out;
	ssize_t n;

	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	amt_assert_ge(in, 0, "copy: %s", strerror(errno));
	amt_assert_ge(out, 0, "copy: %s", strerror(errno));
	while ((n = read(in, buf, sizeof(buf))) > 0)
		amt_assert_eq(write(out, buf, n), n, "copy: short write");
	close(in);
	close(out);
}

static void run(void)
{
	int round, ready[2];

	/* This test binary in hog mode: see main() below. */
	copy("/proc/self/exe", BIN);
	amt_trace_start();
	for (round = 0; round < 3; round++) {
		pid_t pid;
		char c;
		int fd;

		amt_assert(!pipe(ready), "pipe");
		pid = fork();
		if (!pid) {
			dup2(ready[1], 9);
			execl(BIN, BIN, "hog", NULL);
			_exit(127);
		}
		close(ready[1]);
		amt_assert_eq(read(ready[0], &c, 1), 1, "exec'd hog died");
		close(ready[0]);
		fd = open(BIN, O_WRONLY);
		amt_assert_lt(fd, 0,
			      "control: writing a running binary did not fail");
		amt_assert_eq(errno, ETXTBSY,
			      "control: writing a running binary did not fail with ETXTBSY");
		amt_kill_wait(pid);
		fd = open(BIN, O_WRONLY);
		amt_assert_ge(fd, 0,
			      "round %d: open for write right after waitpid(): %s",
			      round, strerror(errno));
		close(fd);
		amt_assert(!amt_drain(60000), "drain failed");
		amt_assert_eq(amt_trace_count("mm_reaper_queue", pid), 1,
			      "hog %d was not deferred", pid);
	}
	unlink(BIN);
}

static const struct amt_test t = {
	"etxtbsy", "the executable of a deferred process is writable as soon as waitpid() returns", 120, run, true
};

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "hog")) {
		size_t len = 128 * MiB;
		char *p = malloc(len);

		if (!p)
			return 2;
		amt_touch(p, len);
		if (write(9, "r", 1) != 1)
			return 3;
		for (;;)
			pause();
	}
	return amt_main(&t, argc, argv);
}
