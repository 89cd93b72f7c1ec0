// SPDX-License-Identifier: GPL-2.0
/*
 * The memcg wait cannot wait for shmem, so a process whose shared memory
 * would not fit beside a replacement stays inline. Its shmem pages
 * (MAP_SHARED|MAP_ANONYMOUS: a database's shared buffers) are freed at the
 * last fput() of their file; a deferred teardown runs that fput() where
 * no task_work can (a reaper, or a task past exit_task_work()), so the
 * kernel's fput worker frees them a jiffy or more after the teardown, when
 * the memcg wait has already ended, and a replacement charging at
 * memory.max in between meets the memcg OOM killer. Without the module
 * the dying task's own task_work frees them before its parent learns of
 * the death. In a cgroup with room for one, the exit is therefore inline
 * (rejected_memcg), and the replacement gets its memory without an OOM
 * kill; an anonymous process of the same size in the same cgroup is
 * deferred (its wait can see it), as memcg_respawn shows. The same for a
 * memfd the process fills with write() and maps one page wide: neither
 * its RSS nor MM_SHMEMPAGES shows the file, the sizes of the shmem files
 * it maps do.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "amt_guest.h"

#define MB 256
#define LIMIT_MB (MB * 3 / 2)	/* room for one */
#define ANON_MB 128		/* the memfd case: over the threshold */
#define FILE_MB 192		/* ... and a memfd mapped one page */

/*
 * 128 MiB of anonymous memory and a 192 MiB memfd filled with write(),
 * mapped one page wide, its fd closed: the mapping holds the file's last
 * reference, MM_SHMEMPAGES counts one page and the RSS 128 MiB, so
 * neither tells the memcg gate of the 192 MiB that come back only at the
 * file's last fput().
 */
static void memfd_body(void *unused)
{
	static char buf[1 << 20];
	int fd = memfd_create("amt_memcg_shmem", 0), i;

	if (fd < 0)
		_exit(2);
	memset(buf, 1, sizeof(buf));
	for (i = 0; i < FILE_MB; i++)
		if (write(fd, buf, sizeof(buf)) != sizeof(buf))
			_exit(3);
	if (mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED)
		_exit(4);
	close(fd);
	amt_map_anon(ANON_MB);
}

/* A replacement of the same: maps and touches @mb MiB of shared memory. */
static void shared_body(void *arg)
{
	size_t len = (size_t)(unsigned long)arg << 20, i;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		_exit(2);
	for (i = 0; i < len; i += 4096)
		p[i] = 1;
}

/*
 * In a cgroup of @limit MiB, kill a process made by @fn, expect its exit
 * inline as rejected_memcg, then run @fn again there: it must get its
 * memory without a memcg OOM kill.
 */
static void phase(const char *name, const char *what,
		  void (*fn)(void *), void *arg, unsigned long limit)
{
	static const char * const why[] = {
		"sync", "sync_small", "rejected", "rejected_pressure",
		"rejected_nomem", "rejected_budget", "exit_not_last",
		"exit_late",
	};
	long q0, r0, t0, k0, w0[sizeof(why) / sizeof(why[0])];
	pid_t hog, pid;
	char cg[128];
	size_t i;

	amt_assert(!amt_cgroup_create(name, limit, cg,
				      sizeof(cg)), "cannot create a cgroup");
	/* out of the pressure window of the tests before (1 s) */
	sleep(2);
	amt_hog_cgroup = cg;
	amt_hog_oom_score_adj = "0";
	hog = amt_hog_fn(fn, arg);
	amt_hog_cgroup = NULL;
	amt_hog_oom_score_adj = NULL;
	q0 = amt_stat("queued");
	r0 = amt_stat("rejected_memcg");
	t0 = amt_stat("memcg_tight");
	k0 = amt_cgroup_get(cg, "memory.events", "oom_kill");
	for (i = 0; i < sizeof(why) / sizeof(why[0]); i++)
		w0[i] = amt_stat(why[i]);
	amt_kill_wait(hog);
	if (amt_stat("rejected_memcg") - r0 != 1)
		for (i = 0; i < sizeof(why) / sizeof(why[0]); i++)
			amt_note("%s +%ld", why[i], amt_stat(why[i]) - w0[i]);
	amt_note("%s in a %lu MiB cgroup: queued +%ld, rejected_memcg +%ld, memcg_tight +%ld",
		 what, limit, amt_stat("queued") - q0,
		 amt_stat("rejected_memcg") - r0, amt_stat("memcg_tight") - t0);
	amt_assert_eq(amt_stat("queued"), q0,
		      "%s: the exit was not kept inline", what);
	amt_assert_eq(amt_stat("rejected_memcg") - r0, 1,
		      "%s: the exit was not kept inline", what);

	/* the replacement, at once: it must fit */
	amt_hog_cgroup = cg;
	amt_hog_oom_score_adj = "0";
	pid = amt_hog_fn_try(fn, arg);
	amt_hog_cgroup = NULL;
	amt_hog_oom_score_adj = NULL;
	amt_assert_ne(pid, 0,
		      "%s: the replacement did not get its memory (died, memcg OOM kills +%ld)",
		      what,
		      amt_cgroup_get(cg, "memory.events", "oom_kill") - k0);
	amt_assert_eq(amt_cgroup_get(cg, "memory.events", "oom_kill"), k0,
		      "%s: the replacement did not get its memory (alive): memcg OOM kills",
		      what);
	amt_kill_wait(pid);
	rmdir(cg);
}

static void run(void)
{
	amt_write_file("/proc/self/oom_score_adj", "-1000");
	/* one cgroup each: on 7.x a reaped task may keep one populated */
	phase("amt_memcg_shmem", "256 MiB of shared anonymous memory",
	      shared_body,
	      (void *)(unsigned long)MB, LIMIT_MB);
	phase("amt_memcg_memfd",
	      "128 MiB anonymous and a 192 MiB memfd mapped one page wide",
	      memfd_body, NULL, (ANON_MB + FILE_MB) * 3 / 2);
}

AMT_TEST("memcg_shmem",
	 "a process whose shmem files would not fit beside a replacement in its memcg is torn down inline (the memcg wait cannot see shmem), mapped or not, and the replacement gets its memory",
	 120, run)
