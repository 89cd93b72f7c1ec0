// SPDX-License-Identifier: GPL-2.0
/*
 * What a container orchestrator does to replace a container, with a real
 * OCI runtime: Debian's crun (run-guest.sh ships it, scripts/
 * guest-program.sh fetches it). A container whose process maps and touches
 * 1 GiB runs in the cgroup /amt_crun/ctr (cgroupfs manager); then
 * "crun kill ctr KILL", waitpid() of the container's init (this test is a
 * child subreaper, so the init is reparented to it when crun exits),
 * "crun delete ctr", and "crun run -d ctr" of a replacement of the same
 * name in the same cgroup, which maps and touches 1 GiB again and says
 * "ready" on its stdout (a pipe to this test). In every round: delete
 * succeeds at the first try, the replacement is fully allocated, no memcg
 * OOM kill (memory.events of /amt_crun counts those of ctr: cgroup v2
 * events are hierarchical, and ctr itself is recreated in every round) and
 * none on the whole guest.
 *
 * Two cgroup sizes, each with three configurations interleaved, in an
 * order that rotates from round to round: the module off (enabled=0),
 * mode=reaper and mode=self.
 *
 * - "tight": memory.max 1.5 GiB, room for one instance but not two. At
 *   the kill the cgroup holds the whole 1 GiB and has under 0.5 GiB left,
 *   less than the dying mm's RSS. The kill is deferred all the same
 *   (queued +1, memcg_tight +1, rejected +0): a charge at memory.max in
 *   that memcg would wait for the teardown (oom.c, "memcg reclaim"). The
 *   runtime recreates ctr for the replacement, a new memcg with its own
 *   memory.max, so here the old charge never stands in its way: it only
 *   lingers in the removed cgroup, under /amt_crun, which has no limit.
 *   No gate may count the exit first: no OOM victim, no global reclaim
 *   (3 GiB guest), no AIO, and the budget is raised (below).
 * - "roomy": memory.max 2.5 GiB, room for two. The kill must be deferred
 *   (queued +1, memcg_tight +0, rejected +0).
 * In both, max_pending_pages is raised to 3/4 of RAM so that the reaper's
 * cap lets a 1 GiB mm in, so that delete and the replacement run while the
 * old address space is still being freed.
 *
 * Module off: no counter moves. Timings from the start of "crun kill"
 * (-> crun kill returned, -> waitpid, -> delete done, -> replacement
 * running, -> replacement fully allocated) are printed as medians with
 * ratios to "off", not asserted: TCG is noisy.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "amt_guest.h"

#define CRUN "/usr/bin/crun"
#define DIR "/tmp/amt_crun"
#define STATE DIR "/state"
#define BUNDLE DIR "/bundle"
#define ERRFILE DIR "/crun.err"
#define PIDFILE DIR "/ctr.pid"
#define PARENT "/sys/fs/cgroup/amt_crun"
#define CGROUP PARENT "/ctr"
#define ID "amt-ctr"
#define HOG_ENV "AMT_CRUN_HOG"
#define MB 1024
#define ROUNDS 2

/*
 * The container's process: this same static binary, copied into the
 * bundle's rootfs and started with AMT_CRUN_HOG=MiB in its environment.
 * It maps and touches that much (no huge pages), says "ready" on stdout,
 * and waits for its SIGKILL, as PID 1 of its PID namespace.
 */
__attribute__((constructor)) static void container_body(void)
{
	const char *mb = getenv(HOG_ENV);
	size_t len, i;
	char *p;

	if (!mb)
		return;
	len = strtoul(mb, NULL, 10) * MiB;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		_exit(1);
	madvise(p, len, MADV_NOHUGEPAGE);
	for (i = 0; i < len; i += 4096)
		p[i] = 1;
	if (write(1, "ready\n", 6) != 6)
		_exit(1);
	for (;;)
		pause();
}

enum { OFF, REAPER, SELF, NCONF };
static const char *const conf_name[NCONF] = { "off", "reaper", "self" };
enum { T_KILLED, T_GONE, T_DELETED, T_RUNNING, T_FULL, NT };
static const char *const t_name[NT] = {
	"kill -> crun kill returned", "kill -> waitpid", "kill -> delete done", "kill -> replacement running",
	"kill -> replacement allocated",
};

static pid_t ctr_pid;		/* the running container's init, or 0 */
static int ctr_out = -1;	/* read end of its stdout */

static void cleanup(void)
{
	char *const del[] = { CRUN, "--root=" STATE, "delete", "-f", ID, NULL };
	pid_t pid;

	if (ctr_pid > 0) {
		kill(ctr_pid, SIGKILL);
		waitpid(ctr_pid, NULL, 0);
		ctr_pid = 0;
	}
	pid = fork();
	if (!pid) {
		int fd = open("/dev/null", O_RDWR);

		dup2(fd, 1);
		dup2(fd, 2);
		execv(CRUN, del);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
	rmdir(CGROUP);
	rmdir(PARENT);
}

/* Fail, but not with a 1 GiB container left for the next test. */
#define check(cond, ...)					\
	do {							\
		if (!(cond)) {					\
			cleanup();				\
			amt_fail(__VA_ARGS__);			\
		}						\
	} while (0)

/* crun's stderr of the last call, on one line, for a failure message */
static const char *crun_err(void)
{
	static char buf[512];
	char *p;

	if (amt_read_file(ERRFILE, buf, sizeof(buf)) <= 0)
		return "(no output)";
	for (p = buf; *p; p++)
		if (*p == '\n')
			*p = ' ';
	return buf;
}

/* crun --root=STATE ARGS...: its exit status (-1: not exited); stdout to @out */
static int crun(int out, const char *a1, const char *a2, const char *a3,
		const char *a4, const char *a5, const char *a6)
{
	const char *argv[] = { CRUN, "--root=" STATE,
			       "--cgroup-manager=cgroupfs", a1, a2, a3, a4, a5,
			       a6, NULL };
	int status;
	pid_t pid;

	pid = fork();
	check(pid >= 0, "fork: %s", strerror(errno));
	if (!pid) {
		int null = open("/dev/null", O_RDWR);
		int err = open(ERRFILE, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		dup2(null, 0);
		dup2(out >= 0 ? out : null, 1);
		dup2(err, 2);
		execv(CRUN, (char **)argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		check(errno == EINTR, "waitpid(crun): %s", strerror(errno));
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void write_config(unsigned long max_mb)
{
	char json[2048];
	int n;

	n = snprintf(json, sizeof(json),
		"{\n"
		"  \"ociVersion\": \"1.0.2\",\n"
		"  \"process\": {\n"
		"    \"terminal\": false,\n"
		"    \"user\": { \"uid\": 0, \"gid\": 0 },\n"
		"    \"args\": [ \"/hog\" ],\n"
		"    \"env\": [ \"PATH=/\", \"" HOG_ENV "=%d\" ],\n"
		"    \"cwd\": \"/\",\n"
		"    \"noNewPrivileges\": true\n"
		"  },\n"
		"  \"root\": { \"path\": \"rootfs\" },\n"
		"  \"hostname\": \"amt\",\n"
		"  \"mounts\": [\n"
		"    { \"destination\": \"/proc\", \"type\": \"proc\", \"source\": \"proc\" },\n"
		"    { \"destination\": \"/dev\", \"type\": \"tmpfs\", \"source\": \"tmpfs\",\n"
		"      \"options\": [ \"nosuid\", \"strictatime\", \"mode=755\", \"size=65536k\" ] }\n"
		"  ],\n"
		"  \"linux\": {\n"
		"    \"cgroupsPath\": \"/amt_crun/ctr\",\n"
		"    \"resources\": { \"memory\": { \"limit\": %lu } },\n"
		"    \"namespaces\": [ { \"type\": \"pid\" }, { \"type\": \"mount\" },\n"
		"                    { \"type\": \"ipc\" }, { \"type\": \"uts\" } ]\n"
		"  }\n"
		"}\n", MB, max_mb * MiB);
	check(n < (int)sizeof(json), "config.json too long");
	close(open(BUNDLE "/config.json", O_WRONLY | O_CREAT, 0644));
	check(!amt_write_file(BUNDLE "/config.json", json),
	      "cannot write config.json: %s", strerror(errno));
}

static void copy_self(const char *dst)
{
	char buf[65536];
	int in = open("/proc/self/exe", O_RDONLY);
	int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	ssize_t n;

	check(in >= 0 && out >= 0, "cannot copy the test into the rootfs: %s",
	      strerror(errno));
	while ((n = read(in, buf, sizeof(buf))) > 0)
		check(write(out, buf, n) == n, "write %s: %s", dst,
		      strerror(errno));
	close(in);
	close(out);
}

/* crun run -d; returns when crun did (the container runs) */
static void start(int r, const char *what)
{
	char pidbuf[32];
	int p[2], rc;

	check(!pipe2(p, O_CLOEXEC), "pipe: %s", strerror(errno));
	rc = crun(p[1], "run", "-d", "--no-pivot", "--bundle=" BUNDLE,
		  "--pid-file=" PIDFILE, ID);
	close(p[1]);
	check(rc == 0, "round %d (%s): crun run -d failed, status %d: %s", r,
	      what, rc, crun_err());
	check(amt_read_file(PIDFILE, pidbuf, sizeof(pidbuf)) > 0,
	      "round %d (%s): no pid file", r, what);
	ctr_pid = atoi(pidbuf);
	ctr_out = p[0];
}

/* the container says "ready" once all of its memory is touched */
static void wait_ready(int r, const char *what)
{
	unsigned int timeout_ms = 120000 * amt_slow();
	struct pollfd pfd = { .fd = ctr_out, .events = POLLIN };
	char buf[16] = "", want[64], cg[256];
	ssize_t n = 0;

	if (poll(&pfd, 1, timeout_ms) == 1)
		n = read(ctr_out, buf, sizeof(buf) - 1);
	check(n == 6 && !strcmp(buf, "ready\n"),
	      "round %d (%s): the container never said ready (%s; memory.current %ld, oom_kill %ld)",
	      r, what, n ? "timeout" : "its stdout closed: it died",
	      amt_cgroup_get(CGROUP, "memory.current", NULL),
	      amt_cgroup_get(PARENT, "memory.events", "oom_kill"));
	/* in the cgroup we asked for, holding its gibibyte there */
	snprintf(want, sizeof(want), "/proc/%d/cgroup", ctr_pid);
	check(amt_read_file(want, cg, sizeof(cg)) > 0 &&
	      !strcmp(cg, "0::/amt_crun/ctr\n"),
	      "round %d (%s): the container's cgroup is %s", r, what, cg);
	check(amt_cgroup_get(CGROUP, "memory.current", NULL) >= (long)(MB * MiB),
	      "round %d (%s): memory.current %ld below %d MiB", r, what,
	      amt_cgroup_get(CGROUP, "memory.current", NULL), MB);
}

static void set_conf(int c)
{
	check(!amt_param_set("enabled", c == OFF ? "0" : "1"),
	      "cannot set enabled");
	if (c != OFF)
		check(!amt_param_set("mode", conf_name[c]),
		      "cannot set mode=%s", conf_name[c]);
}

/*
 * Kill the running container, reap it, delete it, run its replacement;
 * t[] gets the times from the kill.
 */
static void replace(int r, const char *what, int c, bool roomy, uint64_t *t)
{
	long q0, m0, rej0, k0, gk0, q, m, rej;
	long tight0, tight;
	uint64_t t0;
	int rc, st;
	pid_t w;

	/* every step alone: nothing deferred by the last one still runs */
	check(!amt_drain(60000), "drain failed");
	set_conf(c);
	q0 = amt_stat("queued");
	m0 = amt_stat("rejected_memcg");
	tight0 = amt_stat("memcg_tight");
	rej0 = amt_stat("rejected");
	k0 = amt_cgroup_get(PARENT, "memory.events", "oom_kill");
	gk0 = amt_vmstat("oom_kill");

	t0 = amt_now_ns();
	rc = crun(-1, "kill", ID, "KILL", NULL, NULL, NULL);
	check(rc == 0, "round %d (%s): crun kill failed, status %d: %s", r,
	      what, rc, crun_err());
	t[T_KILLED] = amt_now_ns() - t0;
	while ((w = waitpid(ctr_pid, &st, 0)) < 0 && errno == EINTR)
		;
	check(w == ctr_pid, "round %d (%s): waitpid(container %d): %s", r,
	      what, ctr_pid, strerror(errno));
	check(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
	      "round %d (%s): the container ended with status 0x%x, not SIGKILL",
	      r, what, st);
	t[T_GONE] = amt_now_ns() - t0;
	ctr_pid = 0;
	close(ctr_out);
	ctr_out = -1;

	rc = crun(-1, "delete", ID, NULL, NULL, NULL, NULL);
	t[T_DELETED] = amt_now_ns() - t0;
	check(rc == 0, "round %d (%s): crun delete right after waitpid() failed, status %d: %s (cgroup.events populated %ld)",
	      r, what, rc, crun_err(),
	      amt_cgroup_get(CGROUP, "cgroup.events", "populated"));

	start(r, what);
	t[T_RUNNING] = amt_now_ns() - t0;
	wait_ready(r, what);
	t[T_FULL] = amt_now_ns() - t0;

	q = amt_stat("queued") - q0;
	m = amt_stat("rejected_memcg") - m0;
	tight = amt_stat("memcg_tight") - tight0;
	rej = amt_stat("rejected") - rej0;
	check(amt_cgroup_get(PARENT, "memory.events", "oom_kill") == k0,
	      "round %d (%s): %ld memcg OOM kills", r, what,
	      amt_cgroup_get(PARENT, "memory.events", "oom_kill") - k0);
	check(amt_vmstat("oom_kill") == gk0, "round %d (%s): %ld OOM kills",
	      r, what, amt_vmstat("oom_kill") - gk0);
	if (c == OFF)
		check(q == 0 && rej == 0 && tight == 0,
		      "round %d (%s): module off, yet queued +%ld, rejected +%ld, memcg_tight +%ld",
		      r, what, q, rej, tight);
	else
		check(q == 1 && rej == 0 && tight == (roomy ? 0 : 1),
		      "round %d (%s): queued +%ld, rejected +%ld (rejected_memcg +%ld), memcg_tight +%ld; want the kill deferred, memcg_tight +%d",
		      r, what, q, rej, m, tight, roomy ? 0 : 1);
}

/* times[conf][what][round] of one cgroup size */
typedef uint64_t times_t[NCONF][NT][ROUNDS];

static void phase(bool roomy, bool have_self, times_t t)
{
	unsigned long max_mb = roomy ? 2 * MB + MB / 2 : MB + MB / 2;
	const char *pname = roomy ? "roomy" : "tight";
	uint64_t v[NT];
	char what[64];
	int r, i, c, k;

	write_config(max_mb);
	set_conf(REAPER);
	start(-1, pname);
	wait_ready(-1, pname);
	for (r = 0; r < ROUNDS; r++) {
		for (i = 0; i < NCONF; i++) {
			c = (r + i) % NCONF;
			if (c == SELF && !have_self)
				continue;
			snprintf(what, sizeof(what), "%s, %s", pname,
				 conf_name[c]);
			replace(r, what, c, roomy, v);
			for (k = 0; k < NT; k++)
				t[c][k][r] = v[k];
		}
	}
	/* the last replacement goes without being timed */
	check(!amt_drain(60000), "drain failed");
	check(crun(-1, "kill", ID, "KILL", NULL, NULL, NULL) == 0,
	      "crun kill: %s", crun_err());
	waitpid(ctr_pid, NULL, 0);
	ctr_pid = 0;
	close(ctr_out);
	ctr_out = -1;
	check(crun(-1, "delete", ID, NULL, NULL, NULL, NULL) == 0,
	      "crun delete: %s", crun_err());
}

static void report(const char *pname, bool have_self, times_t t)
{
	uint64_t med[NCONF][NT];
	int c, k;

	for (c = 0; c < NCONF; c++)
		for (k = 0; k < NT; k++)
			med[c][k] = (c == SELF && !have_self) ? 0 :
				    amt_median(t[c][k], ROUNDS);
	for (k = 0; k < NT; k++)
		amt_note("%s: %-30s ms, median of %d: off %8.1f | reaper %8.1f (%5.2fx off) | self %8.1f (%5.2fx off)",
			 pname, t_name[k], ROUNDS, med[OFF][k] / 1e6,
			 med[REAPER][k] / 1e6,
			 (double)med[REAPER][k] / med[OFF][k],
			 med[SELF][k] / 1e6,
			 (double)med[SELF][k] / med[OFF][k]);
}

static void run(void)
{
	static times_t tight, roomy;
	char v[32], cg[64];
	bool have_self;
	uint64_t t0 = amt_now_ns();

	check(!access(CRUN, X_OK),
	      "no %s in the guest: run-guest.sh ships it (scripts/guest-program.sh crun)",
	      CRUN);
	check(!prctl(PR_SET_CHILD_SUBREAPER, 1), "PR_SET_CHILD_SUBREAPER: %s",
	      strerror(errno));
	/* the bundle: config.json and a rootfs holding this program as /hog */
	mkdir(DIR, 0755);
	mkdir(STATE, 0700);
	mkdir(BUNDLE, 0755);
	mkdir(BUNDLE "/rootfs", 0755);
	mkdir(BUNDLE "/rootfs/proc", 0755);
	mkdir(BUNDLE "/rootfs/dev", 0755);
	copy_self(BUNDLE "/rootfs/hog");
	/* the parent stays: its memory.events outlive each ctr */
	check(!amt_cgroup_create("amt_crun", 0, cg, sizeof(cg)),
	      "cannot create %s", PARENT);
	amt_cgroup_set(PARENT, "cgroup.subtree_control", "+memory +cpu +pids");
	/* so that the reaper's cap lets a 1 GiB mm in: 3/4 of RAM */
	snprintf(v, sizeof(v), "%ld", amt_mem_total_kb() / 4 * 3 / 4);
	check(!amt_param_set("max_pending_pages", v),
	      "cannot set max_pending_pages");
	have_self = !amt_param_set("mode", "self");
	if (!have_self)
		amt_note("mode=self unavailable on this kernel: off and reaper only");

	phase(false, have_self, tight);
	phase(true, have_self, roomy);
	report("tight (memory.max 1.5 GiB)", have_self, tight);
	report("roomy (memory.max 2.5 GiB)", have_self, roomy);
	amt_note("%d rounds x %d configurations x 2 cgroup sizes of a %d MiB container in %.1f s",
		 ROUNDS, have_self ? 3 : 2, MB, (amt_now_ns() - t0) / 1e9);
	cleanup();
	check(!system("rm -rf " DIR), "cannot remove " DIR);
}

AMT_TEST("crun_lifecycle",
	 "crun kill, delete and run -d of a replacement 1 GiB container in the same cgroup: delete succeeds at the first try, the replacement is fully allocated and nothing is OOM-killed, with the module off, in reaper and in self mode; deferred when the cgroup has room for two, inline when it has room for one",
	 600, run)
