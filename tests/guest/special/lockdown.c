// SPDX-License-Identifier: GPL-2.0
/*
 * Under kernel lockdown (integrity), as with Secure Boot: an unsigned
 * module is refused and amtctl says why; a module loaded before the
 * lockdown stays fully controllable without writable debugfs files.
 * Runs in its own boot (amt_run=lockdown): lockdown cannot be lifted.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include "amt_guest.h"

#define LOCKDOWN "/sys/kernel/security/lockdown"

static char out[8192];

/* Run "amtctl @args" with stderr folded into out; its exit status. */
static int amtctl(const char *args)
{
	char cmd[256];
	size_t n = 0;
	FILE *p;
	int st;

	snprintf(cmd, sizeof(cmd), "/usr/bin/amtctl %s 2>&1", args);
	p = popen(cmd, "r");
	amt_assert(p, "popen: %s", strerror(errno));
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = 0;
	st = pclose(p);
	amt_note("amtctl %s -> %d: %.200s", args, WEXITSTATUS(st), out);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static void run(void)
{
	char buf[256];
	long q0;
	pid_t pid;
	int err;

	mount("none", "/sys/kernel/security", "securityfs", 0, NULL);
	if (amt_read_file(LOCKDOWN, buf, sizeof(buf)) <= 0)
		amt_skip("no lockdown LSM in this kernel");
	amt_assert(!amt_write_file(LOCKDOWN, "integrity"), "cannot lock down");
	amt_read_file(LOCKDOWN, buf, sizeof(buf));
	amt_assert(strstr(buf, "[integrity]"), "lockdown is '%s'", buf);

	/* Control of the loaded module: sysfs and read-only debugfs only. */
	amt_assert(!amtctl("status") && strstr(out, "loaded"),
		   "status under lockdown failed");
	amt_assert(!amtctl("set thresh_pages=8192") &&
		   amt_param_get("thresh_pages") == 8192,
		   "set under lockdown failed");
	amt_assert(!amtctl("set enabled=0") && !amtctl("set enabled=1"),
		   "enable/disable under lockdown failed");
	amt_assert(!amtctl("stats") && strstr(out, "queued"),
		   "stats under lockdown failed");
	q0 = amt_stat("queued");
	pid = amt_hog(256, AMT_HOG_ANON);
	amt_kill_wait(pid);
	amt_assert(amt_stat("queued") == q0 + 1,
		   "a large exit was not deferred under lockdown");
	amt_assert(!amtctl("drain"), "drain under lockdown failed");
	amt_assert(!amtctl("unload") && !amt_loaded(),
		   "unload under lockdown failed");

	/* The refusal: an unsigned module, explained. */
	err = amt_load(NULL);
	amt_assert(err == EPERM, "finit_module under lockdown: %s, want EPERM",
		   strerror(err));
	amt_assert(amtctl("load --path " AMT_KO) && strstr(out, "lockdown is on"),
		   "amtctl load under lockdown did not explain the refusal");
}

AMT_TEST("lockdown", "under lockdown=integrity the loaded module stays controllable (status, set, stats, drain, unload) and an unsigned load is refused with a message naming lockdown", 300, run)
