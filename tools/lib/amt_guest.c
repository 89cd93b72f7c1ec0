// SPDX-License-Identifier: GPL-2.0
/*
 * The guest library: see amt_guest.h.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "amt_guest.h"
#include "../../tests/guest/helper/amt_helper.h"

#define AMT_EXIT_SKIP 77
#define AMT_MEM_TOLERANCE_KB (48 * 1024)

static int amt_reason_fd = -1;	/* child -> parent: the reason text */

static void amt_verdict_text(const char *prefix, const char *fmt, va_list ap)
{
	char buf[512];
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);

	if (n < 0)
		return;
	if (amt_reason_fd >= 0)
		if (write(amt_reason_fd, buf, strlen(buf)) < 0)
			return;
	fprintf(stderr, "# %s%s\n", prefix, buf);
}

void amt_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	amt_verdict_text("FAIL: ", fmt, ap);
	va_end(ap);
	_exit(1);
}

void amt_fail_cmp(const char *a, const char *op, const char *b, long long va,
		  long long vb, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	amt_fail("%s: %s %s %s failed: %lld vs %lld", msg, a, op, b, va, vb);
}

void amt_skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	amt_verdict_text("SKIP: ", fmt, ap);
	va_end(ap);
	_exit(AMT_EXIT_SKIP);
}

void amt_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("# ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static int amt_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

uint64_t amt_median(uint64_t *v, int n)
{
	qsort(v, n, sizeof(*v), amt_cmp_u64);
	return v[n / 2];
}

void amt_map_anon(unsigned long mb)
{
	void *p = mmap(NULL, mb * MiB, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		_exit(2);
	madvise(p, mb * MiB, MADV_NOHUGEPAGE);
	amt_touch(p, mb * MiB);
}

void *amt_map_tmpfs(const char *path, unsigned long mb, bool unlink_it)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	char *p;

	if (fd < 0 || ftruncate(fd, mb * MiB))
		_exit(2);
	p = mmap(NULL, mb * MiB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		_exit(2);
	memset(p, 0x5a, mb * MiB);
	close(fd);
	if (unlink_it)
		unlink(path);
	return p;
}

uint64_t amt_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int amt_write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_TRUNC);
	int ret = 0;

	if (fd < 0)
		return errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = errno;
	close(fd);
	return ret;
}

int amt_read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n, total = 0;

	if (fd < 0)
		return -errno;
	while (total < (ssize_t)len - 1 &&
	       (n = read(fd, buf + total, len - 1 - total)) > 0)
		total += n;
	buf[total] = 0;
	close(fd);
	return total;
}

long amt_meminfo(const char *key)
{
	char buf[4096], *p;

	if (amt_read_file("/proc/meminfo", buf, sizeof(buf)) <= 0)
		return -1;
	p = strstr(buf, key);
	return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

long amt_mem_available_kb(void)
{
	return amt_meminfo("MemAvailable:");
}

/*
 * Free pages parked on the per-CPU page lists: free, but not in MemFree.
 * Since v6.7 those lists grow under bulk freeing (pcp auto-tuning) to tens
 * of MiB, so "memory came back" counts them.
 */
static long amt_pcp_free_kb(void)
{
	char buf[65536], *p;
	long pages = 0;

	if (amt_read_file("/proc/zoneinfo", buf, sizeof(buf)) <= 0)
		return 0;
	for (p = buf; (p = strstr(p, "\n              count: ")); p++)
		pages += strtol(p + 22, NULL, 10);
	return pages * 4;
}

/* What is free or freeable: MemAvailable plus the per-CPU free lists. */
long amt_mem_back_kb(void)
{
	return amt_mem_available_kb() + amt_pcp_free_kb();
}

uint64_t amt_mem_back_ns(long base_kb, long tol_kb, uint64_t t0,
			 unsigned int timeout_s)
{
	if (amt_loaded() && amt_drain(timeout_s * 1000))
		return 0;
	while (amt_mem_back_kb() < base_kb - tol_kb) {
		if (amt_now_ns() - t0 > timeout_s * 1000000000ULL)
			return 0;
		usleep(2000);
	}
	return amt_now_ns() - t0;
}

long amt_mem_total_kb(void)
{
	return amt_meminfo("MemTotal:");
}

/*
 * Page cache, dentries and inodes, then every slab cache's free objects
 * (SLUB's shrink file). On a KASAN kernel the shrink also empties the
 * quarantine of freed objects (up to 1/32 of RAM of unreclaimable slab),
 * which otherwise reads as memory that did not come back.
 */
void amt_drop_caches(void)
{
	struct dirent *d;
	char path[512];
	DIR *dir;

	sync();
	amt_write_file("/proc/sys/vm/drop_caches", "3");
	dir = opendir("/sys/kernel/slab");
	if (!dir)
		return;
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/slab/%s/shrink", d->d_name);
		amt_write_file(path, "1");
	}
	closedir(dir);
}

bool amt_loaded(void)
{
	return access(AMT_SYSFS_DIR, F_OK) == 0;
}

static int amt_load_ko(const char *ko, const char *params)
{
	int fd = open(ko, O_RDONLY | O_CLOEXEC);
	int ret = 0;

	if (fd < 0)
		return errno;
	if (syscall(SYS_finit_module, fd, params ? params : "", 0))
		ret = errno;
	close(fd);
	return ret;
}

int amt_load(const char *params)
{
	return amt_load_ko(AMT_KO, params);
}

void amt_helper_load(void)
{
	char params[32];
	int err;

	if (access(AMT_HELPER, F_OK) == 0)
		return;
	/* a hold or stall outlasts the test's steps, scaled as its timeout */
	snprintf(params, sizeof(params), "max_wait_s=%u", 60 * amt_slow());
	err = amt_load_ko("/amt/amt_helper.ko", params);
	amt_assert(!err, "cannot load the fixture module: %s", strerror(err));
	amt_assert(access(AMT_BLOCK_DEV, F_OK) == 0, "no " AMT_BLOCK_DEV);
}

bool amt_helper_wait(const char *param, long want, int ms)
{
	int i;

	for (i = 0; i < ms && amt_helper_get(param) != want; i++)
		usleep(1000);
	return amt_helper_get(param) == want;
}

void amt_stalling_body(void *mb)
{
	int fd = open(AMT_BLOCK_DEV, O_RDONLY);

	if (fd < 0 || ioctl(fd, AMT_IOC_STALL_MM))
		_exit(5);
	close(fd);	/* the notifier stays with the mm */
	amt_map_anon((unsigned long)mb);
}

bool amt_kernel_has(const char *sym)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[256], name[128];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%*s %*s %127s", name) == 1 &&
			!strcmp(name, sym);
	fclose(f);
	return found;
}

bool amt_self_holds_cgroup(void)
{
	return amt_kernel_has("cgroup_task_dead");
}

bool amt_self_holds_tasks_rcu(void)
{
	/*
	 * exit_tasks_rcu_stop(): 6.1's SRCU scheme (an empty function there
	 * without CONFIG_TASKS_RCU, as on Debian's arm64 build);
	 * synchronize_rcu_tasks() exists only with CONFIG_TASKS_RCU.
	 */
	return amt_kernel_has("exit_tasks_rcu_stop") &&
	       amt_kernel_has("synchronize_rcu_tasks");
}

int amt_kmod_load(const char *name)
{
	char ko[128];
	int err;

	snprintf(ko, sizeof(ko), "/amt/kmod/%s.ko", name);
	if (access(ko, F_OK))
		return ENOENT;
	err = amt_load_ko(ko, NULL);
	return err == EEXIST ? 0 : err;
}

long amt_helper_get(const char *param)
{
	char path[128], b[32];

	snprintf(path, sizeof(path), AMT_HELPER "%s", param);
	return amt_read_file(path, b, sizeof(b)) > 0 ? strtol(b, NULL, 10) : -1;
}

int amt_unload(void)
{
	return syscall(SYS_delete_module, "async_mm_teardown", O_NONBLOCK) ?
	       errno : 0;
}

int amt_param_set(const char *name, const char *val)
{
	char path[256];

	snprintf(path, sizeof(path), AMT_PARAMS "%s", name);
	return amt_write_file(path, val);
}

long amt_param_get(const char *name)
{
	char path[256], buf[64];

	snprintf(path, sizeof(path), AMT_PARAMS "%s", name);
	if (amt_read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	if (buf[0] == 'Y')
		return 1;
	if (buf[0] == 'N')
		return 0;
	return strtol(buf, NULL, 0);
}

/* Scaled like the test timeouts (amt_slow), within the file's range. */
int amt_drain(unsigned int ms)
{
	unsigned long scaled = (unsigned long)ms * amt_slow();
	char v[32];

	snprintf(v, sizeof(v), "%lu",
		 scaled < AMT_DRAIN_MAX_MS ? scaled : AMT_DRAIN_MAX_MS);
	return amt_write_file(AMT_DRAIN, v);
}

/* The stats lines the module prints, from the header it builds with. */
#define AMT_STAT_NAME(n, k, s, u, m, l, h) #n,
const char *const amt_stat_names[] = { AMT_STAT_LIST(AMT_STAT_NAME) NULL };

long amt_stat(const char *name)
{
	char buf[4096], *line, *save = NULL;
	size_t n = strlen(name), i;

	/* a test may only ask for what the module defines */
	for (i = 0; amt_stat_names[i] && strcmp(amt_stat_names[i], name); i++)
		;
	if (!amt_stat_names[i])
		amt_fail("the test asks for stat '%s', not in module/interface.h",
			 name);

	if (amt_read_file(AMT_STATS, buf, sizeof(buf)) <= 0)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		if (!strncmp(line, name, n) && line[n] == ' ')
			return strtol(line + n + 1, NULL, 10);
	return -1;
}

const char *amt_mode = "reaper";

long amt_torn_down(void)
{
	return amt_stat(strcmp(amt_mode, "self") ? "reaped_by_reaper" :
			"reaped_by_self");
}

void amt_reset_defaults(void)
{
	char v[32];

	if (!amt_loaded() && amt_load(NULL))
		return;
	amt_param_set("enabled", "1");
	/*
	 * Not the module's default (self) but the mode under test: most
	 * tests state reaper-mode behaviour (the queue, its budget), the
	 * self_* tests set self themselves and AMT_TEST_BOTH ones run twice.
	 */
	amt_param_set("mode", amt_mode);
	amt_param_set("oom_guard", "1");
	amt_param_set("min_available_pct", "10");
	amt_param_set("thresh_pages", "16384");
	snprintf(v, sizeof(v), "%ld", amt_mem_total_kb() / 4 / 4);
	amt_param_set("max_pending_pages", v);
}

void amt_stats_note(void)
{
	char buf[4096], *line, *save = NULL;

	if (amt_read_file(AMT_STATS, buf, sizeof(buf)) <= 0)
		return;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		amt_note("stats: %s", line);
}

long amt_vmstat(const char *name)
{
	char buf[16384], key[96], *p;

	if (amt_read_file("/proc/vmstat", buf, sizeof(buf)) <= 0)
		return -1;
	snprintf(key, sizeof(key), "\n%s ", name);
	p = strstr(buf, key);
	return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

/* ---- cgroups (v2, mounted at /sys/fs/cgroup by the guest's init) ---- */

int amt_cgroup_create(const char *name, unsigned long max_mb, char *path,
		      size_t len)
{
	char v[32];
	int err;

	amt_write_file("/sys/fs/cgroup/cgroup.subtree_control", "+memory +cpu");
	snprintf(path, len, "/sys/fs/cgroup/%s", name);
	rmdir(path);
	if (mkdir(path, 0755))
		return errno;
	if (!max_mb)
		return 0;
	snprintf(v, sizeof(v), "%lu", max_mb * MiB);
	err = amt_cgroup_set(path, "memory.max", v);
	/* no swap in the guest; where there is, keep the limit about RAM */
	amt_cgroup_set(path, "memory.swap.max", "0");
	return err;
}

int amt_cgroup_set(const char *cg, const char *file, const char *val)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", cg, file);
	return amt_write_file(p, val);
}

int amt_cgroup_enter(const char *cg)
{
	char v[32];

	snprintf(v, sizeof(v), "%d", getpid());
	return amt_cgroup_set(cg, "cgroup.procs", v);
}

long amt_cgroup_get(const char *cg, const char *file, const char *key)
{
	char p[256], buf[4096], *s;

	snprintf(p, sizeof(p), "%s/%s", cg, file);
	if (amt_read_file(p, buf, sizeof(buf)) <= 0)
		return -1;
	if (!key)
		return strtol(buf, NULL, 10);
	for (s = buf; (s = strstr(s, key)); s++)
		if ((s == buf || s[-1] == '\n') && s[strlen(key)] == ' ')
			return strtol(s + strlen(key) + 1, NULL, 10);
	return -1;
}

/* ---- memory hogs ---- */

struct amt_child {
	pid_t pid;
	int go_fd;	/* write a byte: the child _exit()s */
};

static struct amt_child amt_children[64];
static int amt_ready_fd = -1, amt_go_fd = -1;
const char *amt_hog_cgroup;		/* hogs move here first, if set */
const char *amt_hog_oom_score_adj;	/* and write this, if set */

void amt_touch(void *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i += 4096)
		((volatile char *)p)[i] = 1;
}

void amt_hog_ready(void)
{
	char c = 1;
	ssize_t n;

	if (write(amt_ready_fd, &c, 1) != 1)
		_exit(3);
	/* Wait for amt_hog_exit() or a kill. */
	n = read(amt_go_fd, &c, 1);
	_exit(n == 1 ? 0 : 4);
}

static pid_t amt_hog_spawn(void (*fn)(void *), void *arg, bool may_die)
{
	int ready[2], go[2], i;
	pid_t pid;
	char c;

	if (pipe(ready) || pipe(go))
		amt_fail("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		amt_fail("fork: %s", strerror(errno));
	if (!pid) {
		close(ready[0]);
		close(go[1]);
		if (amt_reason_fd >= 0)
			close(amt_reason_fd);
		amt_reason_fd = -1;
		amt_ready_fd = ready[1];
		amt_go_fd = go[0];
		if (amt_hog_cgroup && amt_cgroup_enter(amt_hog_cgroup))
			_exit(6);
		if (amt_hog_oom_score_adj)
			amt_write_file("/proc/self/oom_score_adj",
				       amt_hog_oom_score_adj);
		fn(arg);
		amt_hog_ready();
	}
	close(ready[1]);
	close(go[0]);
	if (read(ready[0], &c, 1) != 1) {
		if (!may_die)
			amt_fail("hog %d died before it was ready", pid);
		close(ready[0]);
		close(go[1]);
		waitpid(pid, NULL, 0);
		return 0;
	}
	close(ready[0]);
	for (i = 0; i < 64; i++)
		if (!amt_children[i].pid) {
			amt_children[i].pid = pid;
			amt_children[i].go_fd = go[1];
			return pid;
		}
	amt_fail("too many hogs");
}

pid_t amt_hog_fn(void (*fn)(void *), void *arg)
{
	return amt_hog_spawn(fn, arg, false);
}

pid_t amt_hog_fn_try(void (*fn)(void *), void *arg)
{
	return amt_hog_spawn(fn, arg, true);
}

static void amt_hog_body(void *arg)
{
	unsigned long spec = (unsigned long)arg;
	size_t len = (spec >> 4) * MiB;
	int kind = spec & 15;
	void *p;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 (kind == AMT_HOG_SHMEM ? MAP_SHARED : MAP_PRIVATE) |
		 MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		_exit(2);
	if (kind == AMT_HOG_ANON)
		madvise(p, len, MADV_NOHUGEPAGE);
	else if (kind == AMT_HOG_THP)
		madvise(p, len, MADV_HUGEPAGE);
	amt_touch(p, len);
}

pid_t amt_hog(unsigned long mb, enum amt_hog_kind kind)
{
	return amt_hog_fn(amt_hog_body, (void *)((mb << 4) | kind));
}

pid_t amt_hog_try(unsigned long mb, enum amt_hog_kind kind)
{
	return amt_hog_spawn(amt_hog_body, (void *)((mb << 4) | kind), true);
}

/* A CPU burner at nice 0 (oom_score_adj -1000): contention for the reaper. */
static pid_t amt_spinner(void)
{
	pid_t pid = fork();

	/* -1 must never reach the caller's kill(): kill(-1) hits everyone */
	if (pid < 0)
		amt_fail("fork: %s", strerror(errno));
	if (!pid) {
		amt_write_file("/proc/self/oom_score_adj", "-1000");
		for (;;)
			;
	}
	return pid;
}

void amt_burners_start(pid_t b[AMT_BURNERS])
{
	int i;

	for (i = 0; i < AMT_BURNERS; i++)
		b[i] = amt_spinner();
}

void amt_burners_nice(pid_t b[AMT_BURNERS], int nice)
{
	int i;

	for (i = 0; i < AMT_BURNERS; i++)
		if (setpriority(PRIO_PROCESS, b[i], nice))
			amt_fail("cannot renice burner %d: %s", b[i],
				 strerror(errno));
}

void amt_starve_start(pid_t b[AMT_BURNERS])
{
	if (setpriority(PRIO_PROCESS, 0, -10))
		amt_fail("cannot go to nice -10: %s", strerror(errno));
	amt_burners_start(b);
}

void amt_starve_stop(pid_t b[AMT_BURNERS])
{
	amt_burners_stop(b);
	if (setpriority(PRIO_PROCESS, 0, 0))
		amt_fail("cannot go back to nice 0: %s", strerror(errno));
}

void amt_hog_demote(pid_t pid)
{
	if (pid > 0 && setpriority(PRIO_PROCESS, pid, 10))
		amt_fail("cannot renice hog %d: %s", pid, strerror(errno));
}

/*
 * Stop them and wait, so that what follows has the CPUs back. The test
 * runner kills the test's process group anyway; this is for the phases
 * that must not run under contention (a drain would only take longer).
 */
void amt_burners_stop(pid_t b[AMT_BURNERS])
{
	int i;

	for (i = 0; i < AMT_BURNERS; i++) {
		if (b[i] <= 0)	/* never kill(0) or kill(-1) */
			continue;
		kill(b[i], SIGKILL);
		waitpid(b[i], NULL, 0);
		b[i] = 0;
	}
}

static struct amt_child *amt_child(pid_t pid)
{
	int i;

	for (i = 0; i < 64; i++)
		if (amt_children[i].pid == pid)
			return &amt_children[i];
	return NULL;
}

int amt_reap(pid_t pid)
{
	struct amt_child *c = amt_child(pid);
	int status = 0;

	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (c) {
		close(c->go_fd);
		c->pid = 0;
	}
	return status;
}

void amt_kill_reap(const pid_t *pids, int n)
{
	int i;

	for (i = 0; i < n; i++)
		kill(pids[i], SIGKILL);
	for (i = 0; i < n; i++)
		amt_reap(pids[i]);
}

void amt_hog_exit(pid_t pid)
{
	struct amt_child *c = amt_child(pid);
	char b = 1;

	if (!c || write(c->go_fd, &b, 1) != 1)
		amt_fail("cannot tell hog %d to exit", pid);
}

uint64_t amt_kill_wait(pid_t pid)
{
	uint64_t t0 = amt_now_ns();

	kill(pid, SIGKILL);
	amt_reap(pid);
	return amt_now_ns() - t0;
}

/* ---- tracepoints ---- */

/*
 * Enabling an event patches kernel text (a static key), and under TCG a
 * vCPU was twice seen stuck on a stale int3 after such patching: so the
 * events are switched on once and left on; tests only start, stop and
 * clear the buffer (a flag, no patching).
 */
void amt_trace_start(void)
{
	char on[8] = "";

	amt_write_file(AMT_TRACE "tracing_on", "0");
	amt_write_file(AMT_TRACE "trace", "");
	amt_read_file(AMT_TRACE "events/async_mm_teardown/enable", on,
		      sizeof(on));
	if (on[0] != '1') {
		/*
		 * Without record-cmd, enabling an event does not also hook
		 * sched_switch and sched_wakeup: fewer kernel text patches,
		 * on the hottest code, for TCG to get wrong (see
		 * scripts/tcg-fault.sh). The tests match events by pid.
		 */
		amt_write_file(AMT_TRACE "options/record-cmd", "0");
		amt_write_file(AMT_TRACE "buffer_size_kb", "1024");
		amt_write_file(AMT_TRACE "events/async_mm_teardown/enable", "1");
	}
	amt_write_file(AMT_TRACE "tracing_on", "1");
}

void amt_trace_stop(void)
{
	amt_write_file(AMT_TRACE "tracing_on", "0");
}

/*
 * Each line of the module's @event for @pid (0: any) in the trace, to @fn;
 * the count of them, -1 without a trace.
 */
static int amt_trace_each(const char *event, pid_t pid,
			  void (*fn)(const char *line, void *arg), void *arg)
{
	FILE *f = fopen(AMT_TRACE "trace", "r");
	char line[512], ev[80], pidstr[32];
	int n = 0;

	if (!f)
		return -1;
	snprintf(ev, sizeof(ev), " %s: ", event);
	snprintf(pidstr, sizeof(pidstr), "pid=%d ", pid);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, ev) && (!pid || strstr(line, pidstr))) {
			if (fn)
				fn(line, arg);
			n++;
		}
	fclose(f);
	return n;
}

int amt_trace_count(const char *event, pid_t pid)
{
	return amt_trace_each(event, pid, NULL, NULL);
}

struct amt_trace_key {
	char key[40];
	uint64_t v;
};

static void amt_trace_key_of(const char *line, void *arg)
{
	struct amt_trace_key *k = arg;
	const char *p = strstr(line, k->key);

	if (p)
		k->v = strtoull(p + strlen(k->key), NULL, 10);
}

uint64_t amt_trace_value(const char *event, pid_t pid, const char *key)
{
	struct amt_trace_key k = { .v = 0 };

	snprintf(k.key, sizeof(k.key), " %s=", key);
	amt_trace_each(event, pid, amt_trace_key_of, &k);
	return k.v;
}

void amt_ftrace_start(const char *fn)
{
	amt_write_file(AMT_TRACE "tracing_on", "0");
	amt_assert(!amt_write_file(AMT_TRACE "set_ftrace_filter", fn),
		   "cannot filter the function tracer on %s", fn);
	amt_assert(!amt_write_file(AMT_TRACE "current_tracer", "function"),
		   "no function tracer");
	amt_write_file(AMT_TRACE "trace", "");
	amt_write_file(AMT_TRACE "tracing_on", "1");
}

void amt_ftrace_stop(void)
{
	char cur[32] = "";

	amt_read_file(AMT_TRACE "current_tracer", cur, sizeof(cur));
	if (strncmp(cur, "function", 8))
		return;
	amt_write_file(AMT_TRACE "current_tracer", "nop");
	amt_write_file(AMT_TRACE "set_ftrace_filter", "");
}

/* Was LINE recorded in task PID? "<...>-PID [CPU] flags TS: event: ..." */
static bool amt_trace_by(const char *line, pid_t pid)
{
	const char *br = strstr(line, " ["), *p;

	if (line[0] == '#' || !br)
		return false;
	for (p = br; p > line && p[-1] != '-'; p--)
		;
	return p > line && atoi(p) == pid;
}

int amt_trace_lines(pid_t pid, const char *needle, const char *after)
{
	FILE *f = fopen(AMT_TRACE "trace", "r");
	char line[512], ev[80], pidstr[32];
	bool seen = !after;
	int n = 0;

	if (!f)
		return -1;
	snprintf(ev, sizeof(ev), " %s: ", after ? after : "");
	snprintf(pidstr, sizeof(pidstr), "pid=%d ", pid);
	while (fgets(line, sizeof(line), f)) {
		if (!seen && strstr(line, ev) && strstr(line, pidstr))
			seen = true;
		else if (seen && strstr(line, needle) &&
			 amt_trace_by(line, pid))
			n++;
	}
	fclose(f);
	return n;
}

void amt_trace_mark(const char *what)
{
	amt_write_file(AMT_TRACE "trace_marker", what);
}

uint64_t amt_trace_ts(const char *needle)
{
	FILE *f = fopen(AMT_TRACE "trace", "r");
	char line[512], *br, *end;
	uint64_t ns = 0;
	double s;

	if (!f)
		return 0;
	while (!ns && fgets(line, sizeof(line), f)) {
		/* "<comm>-<pid> [<cpu>] <flags> <seconds>: <event>: ..." */
		br = strstr(line, "] ");
		if (line[0] == '#' || !strstr(line, needle) || !br)
			continue;
		br = strchr(br + 2, ' ');	/* past the flags */
		if (!br)
			continue;
		s = strtod(br, &end);
		if (end != br && *end == ':')
			ns = (uint64_t)(s * 1e9);
	}
	fclose(f);
	return ns;
}

/* ---- the runner ---- */

static int amt_settle(long base_kb, long *now_kb)
{
	int i, err = 0;

	/*
	 * Everything queued is torn down and every file closed: a drain
	 * that times out is tried twice more (a fixture the test stalled may
	 * still be letting go), then the memory check below judges.
	 */
	for (i = 0; i < 3 && amt_loaded() && (err = amt_drain(30000)); i++)
		;
	if (err)
		amt_note("after the test, %d drains failed: %s", i,
			 strerror(err));
	/* ...then memory comes back (RCU-freed pages, pcp lists) shortly. */
	for (i = 0; i < 100; i++) {
		amt_drop_caches();
		*now_kb = amt_mem_back_kb();
		if (*now_kb >= base_kb - AMT_MEM_TOLERANCE_KB)
			return 0;
		usleep(100000);
	}
	return -1;
}

static const char *const amt_meminfo_keys[AMT_NR_MEMINFO] = {
	"MemFree:", "AnonPages:", "Shmem:", "Slab:", "SUnreclaim:",
	"PageTables:", "KernelStack:", "Percpu:", "Cached:",
};

void amt_meminfo_snap(long *v)
{
	unsigned int i;

	for (i = 0; i < AMT_NR_MEMINFO; i++)
		v[i] = amt_meminfo(amt_meminfo_keys[i]);
}

void amt_meminfo_diff(const long *base)
{
	long now[AMT_NR_MEMINFO];
	unsigned int i;

	amt_meminfo_snap(now);
	for (i = 0; i < AMT_NR_MEMINFO; i++)
		if (labs(now[i] - base[i]) >= 4096)
			amt_note("%s %ld kB -> %ld kB", amt_meminfo_keys[i],
				 base[i], now[i]);
}

unsigned int amt_cmdline_uint(const char *key, unsigned int def)
{
	char buf[1024], *p;
	unsigned int v = def;

	if (amt_read_file("/proc/cmdline", buf, sizeof(buf)) > 0 &&
	    (p = strstr(buf, key)))
		v = strtoul(p + strlen(key), NULL, 10);
	return v;
}

/* KEY=N on the kernel command line, 1 if absent or 0. */
static unsigned int amt_cmdline_factor(const char *key)
{
	return amt_cmdline_uint(key, 1) ?: 1;
}

unsigned int amt_slow(void)
{
	static unsigned int slow;

	if (!slow)
		slow = amt_cmdline_factor("amt_slow=");
	return slow;
}

unsigned int amt_teardown_slow(void)
{
	static unsigned int slow;

	if (!slow)
		slow = amt_cmdline_factor("amt_tslow=");
	return slow;
}

int amt_main(const struct amt_test *t, int argc, char **argv)
{
	unsigned int timeout_s = t->timeout_s * amt_slow();
	long base_info[AMT_NR_MEMINFO];
	int reason[2], status = 0, code;
	char why[512] = "", name[128];
	long base_kb, now_kb;
	ssize_t n;
	pid_t pid;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc > 1 && !strcmp(argv[1], "--modes")) {
		printf("reaper%s\n", t->self_too ? " self" : "");
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "self") && t->self_too)
		amt_mode = "self";
	else if (argc > 1 && strcmp(argv[1], "reaper")) {
		fprintf(stderr, "usage: %s [--modes | reaper%s]\n", argv[0],
			t->self_too ? " | self" : "");
		return 2;
	}
	/* Verdicts name the mode when the test runs in both. */
	snprintf(name, sizeof(name), t->self_too ? "%s [%s]" : "%s", t->name,
		 amt_mode);
	fprintf(stderr, "# %s: %s\n", name, t->behaviour);
	amt_reset_defaults();
	if (!amt_loaded()) {
		printf("not ok - %s # module not loaded\n", name);
		return 1;
	}
	/* (reset set it already; asking again tells whether it took) */
	if (amt_param_set("mode", amt_mode)) {
		printf("ok - %s # SKIP mode=%s unavailable on this kernel\n",
		       name, amt_mode);
		return 0;
	}
	amt_settle(0, &base_kb);
	base_kb = amt_mem_back_kb();
	amt_meminfo_snap(base_info);

	if (pipe(reason))
		return 1;
	pid = fork();
	if (!pid) {
		close(reason[0]);
		amt_reason_fd = reason[1];
		signal(SIGALRM, SIG_DFL);
		alarm(timeout_s);
		setpgid(0, 0);
		t->fn();
		_exit(0);
	}
	close(reason[1]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	/* Whatever the test left running goes with it... */
	kill(-pid, SIGKILL);
	/*
	 * ...and the fixture lets go of what it holds for it (no file if not
	 * loaded): a test that failed while a close or a teardown was held
	 * would leave its killed processes blocked, and the next test
	 * failing for it (thread_first after stuck_close_oom, 7.2).
	 */
	amt_write_file(AMT_HELPER "hold", "0");
	amt_write_file(AMT_HELPER "gate", "0");
	amt_write_file(AMT_HELPER "stall", "0");
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	fcntl(reason[0], F_SETFL, O_NONBLOCK);
	n = read(reason[0], why, sizeof(why) - 1);
	why[n > 0 ? n : 0] = 0;
	close(reason[0]);

	amt_trace_stop();
	amt_ftrace_stop();
	amt_reset_defaults();
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
		printf("not ok - %s # timeout after %us\n", name,
		       timeout_s);
		return 1;
	}
	if (WIFSIGNALED(status)) {
		printf("not ok - %s # died of signal %d\n", name,
		       WTERMSIG(status));
		return 1;
	}
	code = WEXITSTATUS(status);
	if (code == AMT_EXIT_SKIP) {
		printf("ok - %s # SKIP %s\n", name, why);
		return 0;
	}
	if (code) {
		printf("not ok - %s # %s\n", name, why[0] ? why : "failed");
		return 1;
	}
	if (amt_settle(base_kb, &now_kb)) {
		amt_meminfo_diff(base_info);
		amt_stats_note();
		printf("not ok - %s # memory not returned: MemAvailable + per-CPU free lists %ld kB, baseline %ld kB\n",
		       name, now_kb, base_kb);
		return 1;
	}
	if (amt_loaded()) {
		/* Every deferral ends as one teardown, whoever ran it. */
		long q = amt_stat("queued"), r = amt_stat("reaped");
		long p = amt_stat("pending_mms");

		if (q != r + p) {
			amt_stats_note();
			printf("not ok - %s # counters do not add up: queued %ld != reaped %ld + pending_mms %ld\n",
			       name, q, r, p);
			return 1;
		}
	}
	printf("ok - %s\n", name);
	return 0;
}
