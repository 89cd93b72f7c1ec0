// SPDX-License-Identifier: GPL-2.0
/*
 * A service manager's restart loop, modelled on systemd's Restart=always:
 * SIGKILL the service, reap it, wait for its cgroup to empty (cgroup.events
 * "populated 0", watched with poll() as systemd watches it with inotify),
 * start the next instance in the same cgroup under the same memory.max (it
 * joins cgroup.procs before it allocates) and wait until it has mapped and
 * touched its 1 GiB. Each round restarts once with the module off
 * (enabled=0), once in mode=reaper and once in mode=self, in an order that
 * rotates from round to round, in two settings:
 *
 * - memory.max 2.5 GiB, room for the old instance and the new: every exit
 *   of the module's modes is deferred (queued +1, the memcg gate lets it
 *   through);
 * - memory.max 1.5 GiB, room for one: every such exit is deferred as well
 *   (queued +1, memcg_tight +1, rejected_memcg +0): the new instance's
 *   charges at memory.max wait in memcg reclaim for the old instance's
 *   teardown (oom.c, "memcg reclaim"), so it starts at once and gets the
 *   old memory as it is freed, instead of a memcg OOM kill.
 *
 * Every restart must succeed: the new instance reaches fully allocated, the
 * cgroup empties within 10 s of the kill (a failure otherwise, not a
 * timing), and the cgroup's memory.events counts no OOM and no OOM kill.
 * After each restart the test drains the module, so that every restart
 * starts quiet. The timings (kill -> waitpid(), -> cgroup empty, -> new
 * instance forked, -> in its cgroup, -> fully allocated) are notes only
 * (per restart too, with when the supervisor's fork() returned, the CPUs
 * and the run-queue waits), medians per configuration with their ratio to
 * the module off: TCG is too noisy for a pass/fail bound, and the
 * configurations are interleaved in one boot for the comparison to mean
 * anything.
 *
 * mode=self on a kernel with cgroup_task_dead() (7.0+): the dying task
 * leaves its cgroup at its final context switch, after its self teardown
 * (docs/design.md, "mode=self and the cgroup"), so a supervisor waiting for
 * "populated 0" waits for the teardown, as without the module. The test
 * states that fact rather than a timing: there, with the exit deferred,
 * the teardown has been counted (reaped +1) by the time the cgroup reads
 * populated 0, unless a reaper took the stash over (handoffs +1, the task
 * was late), which then proves nothing either way and is only noted.
 * Before 7.0, and in reaper mode everywhere, the cgroup empties before the
 * parent is woken or at the task's final switch right after it, whatever
 * the teardown still does: nothing is asserted about the order there (it
 * is a race the teardown may win).
 *
 * Sizes: 1 GiB per instance, as the issue asks; two live at once take
 * 2 GiB of the 3 GiB guest (run-guest.sh's default), which leaves the
 * kernel and the suite ~0.8 GiB. The reaper's default cap,
 * max_pending_pages = RAM/4, is below one instance in that guest (it
 * would refuse every exit as rejected_budget and the reaper column would
 * measure nothing): the test raises it to RAM/2, as an administrator of a
 * host whose services are a third of its RAM would. Self mode has no cap.
 *
 * amt_restarts=N on the kernel command line sets the rounds (default 2,
 * about 50 s under TCG: a 1 GiB allocation takes ~3 s there; 1 on a
 * kernel whose timeouts are scaled, the debug kernel, where the test is
 * about correctness): scripts/check-workloads.sh runs 50.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "amt_guest.h"

#define SERVICE_MB 1024
#define MAX_ROUNDS 200
/* kill -> cgroup empty: a failure beyond this, not a measurement */
#define EMPTY_BOUND_NS (10 * 1000000000ULL)

enum { OFF, REAPER, SELF, NCONF };
static const char *const conf_name[NCONF] = { "off", "reaper", "self" };

enum { T_REAPED, T_EMPTY, T_FORKED, T_RUNNING, T_ALLOC, NT };
static const char *const t_name[NT] = {
	"kill->waitpid", "kill->cgroup empty", "kill->new forked",
	"kill->new running", "kill->new fully allocated",
};

struct instance {
	pid_t pid;
	int fd;		/* 'f' forked, 'r' in the cgroup, 'a' allocated */
	char cpu;	/* the CPU it was forked onto */
	/* diagnostics: when fork() returned in the supervisor, on which CPU */
	uint64_t forked_ns;
	int sup_cpu;
	/* run-queue wait (schedstat) of the supervisor across fork() */
	long long sup_wait_ns;
};

struct setting {
	const char *cg_name;
	unsigned long max_mb;
	bool room;	/* memory.max has room for the old and the new */
	/* per configuration, over the rounds */
	uint64_t t[NCONF][NT][MAX_ROUNDS];
	long cur_mb[NCONF][MAX_ROUNDS];
	long queued[NCONF], tight[NCONF], budget[NCONF], pressure[NCONF];
	long handoffs[NCONF], max_events[NCONF], waits[NCONF];
	double wait_ms[NCONF];	/* memcg_wait_ns, in ms */
	int self_unordered;	/* 7.x self: handed off, order not checked */
};

static struct setting settings[] = {
	{ .cg_name = "amt_restart_2560", .max_mb = 2560, .room = true },
	{ .cg_name = "amt_restart_1536", .max_mb = 1536, .room = false },
};

static bool self_ok;
/*
 * amt_self_holds_cgroup(), read once before the restarts: it scans
 * /proc/kallsyms, 100-300 ms under TCG, which must not fall between a
 * kill and the next start.
 */
static bool holds_cgroup;

/* time spent waiting on a run queue: /proc/PID/schedstat (0: self) */
static long long run_wait_ns(pid_t pid)
{
	char p[64], buf[128];
	long long run, wait;

	if (pid)
		snprintf(p, sizeof(p), "/proc/%d/schedstat", pid);
	else
		snprintf(p, sizeof(p), "/proc/self/schedstat");
	if (amt_read_file(p, buf, sizeof(buf)) <= 0 ||
	    sscanf(buf, "%lld %lld", &run, &wait) != 2)
		return -1;
	return wait;
}

/* The service: joins the cgroup, says so, allocates, says so, waits. */
static struct instance start(const char *cg)
{
	struct instance in;
	int p[2];
	char v[32];

	amt_assert(!pipe(p), "pipe: %s", strerror(errno));
	in.sup_wait_ns = -run_wait_ns(0);
	in.pid = fork();
	amt_assert_ge(in.pid, 0, "fork: %s", strerror(errno));
	if (in.pid) {
		in.forked_ns = amt_now_ns();
		in.sup_cpu = sched_getcpu();
		in.sup_wait_ns += run_wait_ns(0);
	}
	if (!in.pid) {
		close(p[0]);
		v[0] = 'f';
		v[1] = (char)sched_getcpu();
		if (write(p[1], v, 2) != 2)
			_exit(3);
		/* as systemd's child does before it execs the service */
		snprintf(v, sizeof(v), "%d", getpid());
		if (amt_cgroup_set(cg, "cgroup.procs", v))
			_exit(6);
		if (write(p[1], "r", 1) != 1)
			_exit(3);
		amt_map_anon(SERVICE_MB);
		if (write(p[1], "a", 1) != 1)
			_exit(3);
		for (;;)
			pause();
	}
	close(p[1]);
	in.fd = p[0];
	return in;
}

/* Wait for the instance's next word; its time, or a failure. */
static uint64_t await(struct instance *in, const char *cg, char want,
		      int round, const char *conf)
{
	char c = 0;
	int status = 0;

	if (read(in->fd, &c, 1) == 1 && c == want) {
		uint64_t t = amt_now_ns();

		/* after 'f': the CPU the new instance started on */
		if (want == 'f' && read(in->fd, &in->cpu, 1) != 1)
			in->cpu = -1;
		return t;
	}
	waitpid(in->pid, &status, 0);
	amt_fail("round %d (%s): the new instance died before '%c' (status 0x%x); the cgroup's oom_kill %ld, memory.current %ld MiB",
		 round, conf, want,
		 status, amt_cgroup_get(cg, "memory.events", "oom_kill"),
		 amt_cgroup_get(cg, "memory.current", NULL) / (long)MiB);
}

static long populated(int fd)
{
	char buf[256], *p;
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return -1;
	buf[n] = 0;
	p = strstr(buf, "populated ");
	return p ? strtol(p + 10, NULL, 10) : -1;
}

/*
 * Until cgroup.events says populated 0: kernfs wakes a poll() for POLLPRI
 * on each change (the 5 ms timeout is only a safety net). 0 on timeout.
 */
static uint64_t wait_empty(int fd, uint64_t t0, uint64_t bound)
{
	struct pollfd pfd = { .fd = fd, .events = POLLPRI };
	long v;

	while ((v = populated(fd)) != 0) {
		amt_assert_eq(v, 1, "cannot read cgroup.events");
		if (amt_now_ns() - t0 > bound)
			return 0;
		poll(&pfd, 1, 5);
	}
	return amt_now_ns();
}

/* the CPU a task last ran on: field 39 of /proc/PID/stat */
static int task_cpu(pid_t pid)
{
	char p[64], buf[1024], *f;
	int i;

	snprintf(p, sizeof(p), "/proc/%d/stat", pid);
	if (amt_read_file(p, buf, sizeof(buf)) <= 0 || !(f = strrchr(buf, ')')))
		return -1;
	/* the space before field I, from field 3 on */
	for (i = 3; i <= 39 && f; i++)
		f = strchr(f + 1, ' ');
	return f ? atoi(f + 1) : -1;
}

static void set_conf(int c)
{
	amt_assert(!amt_param_set("enabled", c == OFF ? "0" : "1"),
		   "cannot set enabled");
	if (c != OFF)
		amt_assert(!amt_param_set("mode", conf_name[c]),
			   "cannot set mode=%s", conf_name[c]);
}

static void restart(struct setting *s, const char *cg, int ev_fd,
		    struct instance *cur, int c, int r, uint64_t bound)
{
	long q0 = amt_stat("queued"), m0 = amt_stat("rejected_memcg");
	long tt0 = amt_stat("memcg_tight"), w0 = amt_stat("memcg_waits");
	long wn0 = amt_stat("memcg_wait_ns");
	long b0 = amt_stat("rejected_budget");
	long p0 = amt_stat("rejected_pressure");
	long lm0 = amt_stat("rejected_low_memory");
	long nm0 = amt_stat("rejected_nomem"), sy0 = amt_stat("sync");
	long nl0 = amt_stat("exit_not_last");
	long rp0 = amt_stat("reaped"), h0 = amt_stat("handoffs");
	long oom0 = amt_cgroup_get(cg, "memory.events", "oom");
	long kill0 = amt_cgroup_get(cg, "memory.events", "oom_kill");
	long max0 = amt_cgroup_get(cg, "memory.events", "max");
	bool defer = c != OFF;
	long dq, dm, dt, drp, dh;
	long long child_wait;
	int dying_cpu;
	uint64_t t0, t;

	set_conf(c);
	dying_cpu = task_cpu(cur->pid);
	t0 = amt_now_ns();
	kill(cur->pid, SIGKILL);
	amt_reap(cur->pid);
	close(cur->fd);
	s->t[c][T_REAPED][r] = amt_now_ns() - t0;
	t = wait_empty(ev_fd, t0, bound);
	drp = amt_stat("reaped") - rp0;
	dh = amt_stat("handoffs") - h0;
	amt_assert(t, "round %d (%s): cgroup.events still says populated 1 %.0f s after the kill; memory.current %ld MiB, pending_mms %ld",
		   r, conf_name[c], bound / 1e9,
		   amt_cgroup_get(cg, "memory.current", NULL) / (long)MiB,
		   amt_stat("pending_mms"));
	s->t[c][T_EMPTY][r] = t - t0;

	/* The module decided at the exit, before waitpid() returned. */
	dq = amt_stat("queued") - q0;
	dm = amt_stat("rejected_memcg") - m0;
	amt_assert_eq(dq, defer ? 1 : 0,
		      "round %d (%s, memory.max %lu MiB): queued (rejected_memcg +%ld, rejected_budget +%ld, rejected_pressure +%ld, rejected_low_memory +%ld, rejected_nomem +%ld, sync +%ld, exit_not_last +%ld)",
		      r, conf_name[c], s->max_mb, dm,
		      amt_stat("rejected_budget") - b0,
		      amt_stat("rejected_pressure") - p0,
		      amt_stat("rejected_low_memory") - lm0,
		      amt_stat("rejected_nomem") - nm0,
		      amt_stat("sync") - sy0,
		      amt_stat("exit_not_last") - nl0);
	dt = amt_stat("memcg_tight") - tt0;
	amt_assert_eq(dm, 0,
		      "round %d (%s, memory.max %lu MiB): rejected_memcg",
		      r, conf_name[c], s->max_mb);
	amt_assert_eq(dt, defer && !s->room ? 1 : 0,
		      "round %d (%s, memory.max %lu MiB): memcg_tight",
		      r, conf_name[c], s->max_mb);
	/* the documented 7.x self-mode order, see the top */
	if (defer && c == SELF && holds_cgroup) {
		if (dh)
			s->self_unordered++;
		else
			amt_assert_eq(drp, 1,
				      "round %d (self): cgroup.events said populated 0 before the self teardown was counted (reaped), on a kernel whose dying task leaves its cgroup at its last switch",
				      r);
	}

	*cur = start(cg);
	s->t[c][T_FORKED][r] = await(cur, cg, 'f', r, conf_name[c]) - t0;
	child_wait = run_wait_ns(cur->pid);
	s->t[c][T_RUNNING][r] = await(cur, cg, 'r', r, conf_name[c]) - t0;
	s->t[c][T_ALLOC][r] = await(cur, cg, 'a', r, conf_name[c]) - t0;
	s->cur_mb[c][r] = amt_cgroup_get(cg, "memory.current", NULL) /
			  (long)MiB;
	amt_note("memory.max %lu MiB, round %d, %s: ms waitpid %.1f, empty %.1f, fork() returned %.1f, forked %.1f, running %.1f, allocated %.1f; CPU of the old instance %d, of the new %d, of the supervisor %d; run-queue wait ms: supervisor in fork() %.1f, new instance until forked %.1f",
		 s->max_mb, r, conf_name[c], s->t[c][T_REAPED][r] / 1e6,
		 s->t[c][T_EMPTY][r] / 1e6, (cur->forked_ns - t0) / 1e6,
		 s->t[c][T_FORKED][r] / 1e6,
		 s->t[c][T_RUNNING][r] / 1e6, s->t[c][T_ALLOC][r] / 1e6,
		 dying_cpu, cur->cpu, cur->sup_cpu, cur->sup_wait_ns / 1e6,
		 child_wait / 1e6);

	amt_assert_eq(amt_cgroup_get(cg, "memory.events", "oom_kill"), kill0,
		      "round %d (%s, memory.max %lu MiB): memcg OOM kill across the restart",
		      r, conf_name[c], s->max_mb);
	amt_assert_eq(amt_cgroup_get(cg, "memory.events", "oom"), oom0,
		      "round %d (%s, memory.max %lu MiB): memcg OOM across the restart",
		      r, conf_name[c], s->max_mb);
	s->queued[c] += dq;
	s->tight[c] += dt;
	s->waits[c] += amt_stat("memcg_waits") - w0;
	s->wait_ms[c] += (amt_stat("memcg_wait_ns") - wn0) / 1e6;
	s->budget[c] += amt_stat("rejected_budget") - b0;
	s->pressure[c] += amt_stat("rejected_pressure") - p0;
	s->handoffs[c] += dh;
	s->max_events[c] += amt_cgroup_get(cg, "memory.events", "max") - max0;
	/* the next restart starts quiet: the old teardown has ended */
	amt_assert(!amt_drain(60000), "drain failed");
}

static void report(struct setting *s, int rounds)
{
	uint64_t med[NCONF][NT];
	uint64_t cur[MAX_ROUNDS];
	int c, k, r;

	for (c = 0; c < NCONF; c++) {
		if (c == SELF && !self_ok)
			continue;
		for (k = 0; k < NT; k++)
			med[c][k] = amt_median(s->t[c][k], rounds);
		for (r = 0; r < rounds; r++)
			cur[r] = s->cur_mb[c][r];
		amt_note("memory.max %lu MiB, %s: ms median of %d: waitpid %.1f, cgroup empty %.1f, new forked %.1f, new running (in the cgroup) %.1f, new fully allocated %.1f; memory.current when allocated %lu MiB; queued %ld, memcg_tight %ld, rejected_budget %ld, rejected_pressure %ld, handoffs %ld, memory.events max %ld, memcg_waits %ld (%.1f ms)",
			 s->max_mb, conf_name[c], rounds,
			 med[c][T_REAPED] / 1e6, med[c][T_EMPTY] / 1e6,
			 med[c][T_FORKED] / 1e6, med[c][T_RUNNING] / 1e6, med[c][T_ALLOC] / 1e6,
			 (unsigned long)amt_median(cur, rounds), s->queued[c],
			 s->tight[c], s->budget[c], s->pressure[c],
			 s->handoffs[c], s->max_events[c], s->waits[c],
			 s->wait_ms[c]);
	}
	for (c = REAPER; c < NCONF; c++) {
		if (c == SELF && !self_ok)
			continue;
		for (k = T_EMPTY; k < NT; k++)
			amt_note("memory.max %lu MiB, %s / off: %s %.2f",
				 s->max_mb, conf_name[c], t_name[k],
				 (double)med[c][k] / med[OFF][k]);
	}
	if (s->self_unordered)
		amt_note("memory.max %lu MiB: %d self-mode stashes handed off to a reaper: their populated-0 order not checked",
			 s->max_mb, s->self_unordered);
}

static void run_setting(struct setting *s, int rounds, uint64_t bound)
{
	struct instance cur;
	char cg[128], p[160];
	int ev_fd, r, i;

	amt_assert(!amt_cgroup_create(s->cg_name, s->max_mb, cg, sizeof(cg)),
		   "cannot create a cgroup");
	snprintf(p, sizeof(p), "%s/cgroup.events", cg);
	ev_fd = open(p, O_RDONLY);
	amt_assert_ge(ev_fd, 0, "%s: %s", p, strerror(errno));
	cur = start(cg);
	await(&cur, cg, 'f', -1, "first");
	await(&cur, cg, 'r', -1, "first");
	await(&cur, cg, 'a', -1, "first");
	for (r = 0; r < rounds; r++)
		for (i = 0; i < NCONF; i++) {
			int c = (r + i) % NCONF;

			if (c == SELF && !self_ok)
				continue;
			restart(s, cg, ev_fd, &cur, c, r, bound);
		}
	kill(cur.pid, SIGKILL);
	amt_reap(cur.pid);
	close(cur.fd);
	amt_assert(wait_empty(ev_fd, amt_now_ns(), bound), "the cgroup did not empty at the end");
	close(ev_fd);
	amt_assert(!amt_drain(60000), "drain failed");
	report(s, rounds);
	amt_assert(!rmdir(cg), "rmdir %s: %s", cg, strerror(errno));
}

static void run(void)
{
	unsigned int rounds = amt_cmdline_uint("amt_restarts=",
					       amt_slow() > 1 ? 1 : 2);
	uint64_t bound = EMPTY_BOUND_NS * amt_teardown_slow();
	long total_kb = amt_mem_total_kb();
	char v[32];
	unsigned int i;

	amt_assert_ge(rounds, 1, "amt_restarts=: 1 to %d", MAX_ROUNDS);
	amt_assert_le(rounds, MAX_ROUNDS, "amt_restarts=: 1 to %d",
		      MAX_ROUNDS);
	/* two instances, the supervisor and the kernel */
	amt_assert_gt(total_kb, (2 * SERVICE_MB + 512) * 1024L,
		      "MemTotal (kB): too small a guest for two %d MiB instances",
		      SERVICE_MB);
	/* longer runs (amt_restarts=): ~10 s a restart at most under TCG */
	if (rounds > 3)
		alarm(amt_slow() * (60 + rounds * NCONF * 2 * 10));
	snprintf(v, sizeof(v), "%ld", total_kb / 4 / 2);
	amt_assert(!amt_param_set("max_pending_pages", v),
		   "cannot set max_pending_pages");
	self_ok = !amt_param_set("mode", "self");
	holds_cgroup = amt_self_holds_cgroup();
	amt_note("%u rounds of (off, reaper, self%s) per setting, %d MiB service, MemTotal %ld MiB, max_pending_pages %s, %s",
		 rounds, self_ok ? "" : ": unavailable", SERVICE_MB,
		 total_kb / 1024, v,
		 holds_cgroup ?
		 "the dying task leaves its cgroup at its last switch (7.0+)" :
		 "the dying task leaves its cgroup in cgroup_exit()");
	for (i = 0; i < sizeof(settings) / sizeof(settings[0]); i++)
		run_setting(&settings[i], rounds, bound);
}

AMT_TEST("restart_loop",
	 "a Restart=always loop (kill, cgroup.events populated 0, start in the same cgroup) of a 1 GiB service, module off, reaper and self interleaved: every restart allocates fully with no memcg OOM; memory.max 2.5 GiB and 1.5 GiB (room for one: the new instance's charges wait for the old teardown) defer each exit",
	 300, run)
