// SPDX-License-Identifier: GPL-2.0
/*
 * exit_latency: the one renderer. What the sections found (struct results)
 * goes to the text report on stdout and to the JSON file, each figure by
 * one call that names both its JSON key and its text format, so that the
 * two cannot drift apart. write_plot() writes the gnuplot data.
 */
#include "bench.h"

/*
 * The emitter. Each value is emitted once, with its JSON key and its text
 * format (NULL: JSON only; out_text(): text only). A format takes one
 * conversion of the value's type (%ld, %f, %s); out_dist()'s up to three
 * %f (median, p90, p99), out_ci()'s three (mean, low end, high end). A
 * NULL key: an array's element (or the outermost object). Objects and
 * arrays nest until out_end(); @indent >= 0: the one opened starts a new
 * line in JSON, indented so.
 */

static FILE *json;

#define MAX_DEPTH 8
static struct {
	char close;		/* '}' or ']' */
	int members;		/* written so far */
} level[MAX_DEPTH];
static int depth = -1;		/* the open object or array; -1: none */
static int next_indent = -1;	/* out_nl() */

void render_open(const char *json_path)
{
	json = fopen(json_path, "w");
	if (!json)
		die("%s: %s", json_path, strerror(errno));
	setvbuf(stdout, NULL, _IOLBF, 0);
}

static void out_close(void)
{
	fputc('\n', json);
	fclose(json);
}

static void __attribute__((format(printf, 1, 2)))
out_text(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}

/*
 * Before a value in the open object or array: the separator, the line
 * break and @indent if @indent >= 0 (or out_nl() asked for one), @key
 * (NULL: an array's element, or the outermost object).
 */
static void member(const char *key, int indent)
{
	bool first = depth < 0 || !level[depth].members++;

	if (next_indent >= 0) {
		indent = next_indent;
		next_indent = -1;
	}
	if (!first)
		fputc(',', json);
	if (indent >= 0)
		fprintf(json, "\n%*s", indent, "");
	else if (!first)
		fputc(' ', json);
	if (key)
		fprintf(json, "\"%s\": ", key);
}

static void open_level(const char *key, int indent, char open, char close)
{
	if (depth + 1 == MAX_DEPTH)
		die("JSON nested too deep");
	member(key, indent);
	fputc(open, json);
	depth++;
	level[depth].close = close;
	level[depth].members = 0;
}

static void out_obj(const char *key, int indent)
{
	open_level(key, indent, '{', '}');
}

static void out_arr(const char *key, int indent)
{
	open_level(key, indent, '[', ']');
}

/* An object in the open array, on a line of its own. */
static void out_item(void)
{
	out_obj(NULL, 2);
}

static void out_end(void)
{
	fputc(level[depth--].close, json);
}

/* The next value in JSON starts a new line, indented by @indent. */
static void out_nl(int indent)
{
	next_indent = indent;
}

static void out_int(const char *key, const char *fmt, long v)
{
	member(key, -1);
	fprintf(json, "%ld", v);
	if (fmt)
		printf(fmt, v);
}

/* @prec: the digits after the point in JSON */
static void out_num(const char *key, int prec, const char *fmt, double v)
{
	member(key, -1);
	fprintf(json, "%.*f", prec, v);
	if (fmt)
		printf(fmt, v);
}

static void out_str(const char *key, const char *fmt, const char *s)
{
	member(key, -1);
	fprintf(json, "\"%s\"", s);
	if (fmt)
		printf(fmt, s);
}

static void out_bool(const char *key, bool v)
{
	member(key, -1);
	fputs(v ? "true" : "false", json);
}

/* JSON: every figure of @d; text: @fmt of its median, p90, p99 */
static void out_dist(const char *key, const char *fmt, const struct dist *d)
{
	out_obj(key, -1);
	out_int("n", NULL, d->n);
	out_num("median_ms", 3, NULL, d->med);
	out_num("p10_ms", 3, NULL, d->p10);
	out_num("p90_ms", 3, NULL, d->p90);
	out_num("p99_ms", 3, NULL, d->p99);
	out_num("min_ms", 3, NULL, d->min);
	out_num("max_ms", 3, NULL, d->max);
	out_end();
	if (fmt)
		printf(fmt, d->med, d->p90, d->p99);
}

/* a mean and its 95% confidence interval */
static void out_ci(const char *key, const char *fmt, const struct ci *c)
{
	out_obj(key, -1);
	out_num("mean", 4, NULL, c->mean);
	out_arr("ci95", -1);
	out_num(NULL, 4, NULL, c->lo);
	out_num(NULL, 4, NULL, c->hi);
	out_end();
	out_end();
	if (fmt)
		printf(fmt, c->mean, c->lo, c->hi);
}

/* The sections, in the order of main.c's table. */

void render_run(const struct results *r)
{
	const struct run_info *i = &r->run;

	out_obj(NULL, -1);
	out_str("kernel", "=== exit_latency on Linux %s", i->kernel);
	out_int("mem_mb", ", %ld MiB", i->mem_mb);
	out_int("cpus", ", %ld CPUs", i->cpus);
	out_str("module_params", "; module loaded with %s", i->module_params);
	out_int("rounds", "; %ld rounds", i->rounds);
	out_bool("quick", i->quick);
	out_str("sections", "; sections %s\n", i->sections);
}

void render_latency(const struct results *res)
{
	const struct lat_result *l = &res->latency;
	int i, c;

	out_text("\n1. kill->waitpid() latency, ms: median (p90 / p99); memory back = kill until the memory is free again\n");
	out_text("%-6s %6s %-4s | %-22s | %-22s | %-22s | %9s %9s\n", "kind",
		 "MiB", "exit", "sync", "reaper", "self", "sync/reap",
		 "sync/self");
	out_arr("latency", 0);
	for (i = 0; i < l->nr; i++) {
		const struct lat_row *r = &l->rows[i];
		const struct dist *d = r->d, *b = r->b;

		out_item();
		out_str("kind", "%-6s", kind_name[r->kind]);
		out_int("size_mb", " %6ld", r->mb);
		out_str("exit", " %-4s |", r->voluntary ? "exit" : "kill");
		for (c = 0; c < NR_CFG; c++) {
			out_obj(cfg_name[c], 3);
			out_dist("latency", " %7.1f (%5.1f / %5.1f) |", &d[c]);
			/* in the text, on a line of its own below */
			if (b[c].n)
				out_dist("memory_back", NULL, &b[c]);
			out_end();
		}
		out_text(" %8.0fx %8.0fx\n", d[SYNC].med / d[REAPER].med,
			 d[SYNC].med / d[SELF].med);
		if (b[SYNC].n)
			out_text("%-17s | %7.1f               | %7.1f               | %7.1f               | %8.2fx %8.2fx\n",
				 "  memory back", b[SYNC].med, b[REAPER].med,
				 b[SELF].med, b[REAPER].med / b[SYNC].med,
				 b[SELF].med / b[SYNC].med);
		out_end();
	}
	out_end();
}

void render_parallel(const struct results *res)
{
	const struct par_result *p = &res->parallel;
	int i, c;

	out_text("\n2. M children of %lu MiB killed together, ms: all reaped; memory back (median of %d)\n",
		 p->mb, p->n);
	out_text("%-4s | %-19s | %-19s | %-19s | %-19s\n", "M", "sync",
		 "reaper", "self", "reaper/sync, self/sync");
	out_arr("parallel", 0);
	for (i = 0; i < p->nr; i++) {
		const struct par_row *w = &p->rows[i];
		const struct dist *t = w->tail, *b = w->back;

		if (w->skipped) {
			out_text("%-4d | skipped: %lu MiB does not fit this guest\n",
				 w->m, w->m * p->mb);
			continue;
		}
		out_item();
		out_int("m", "%-4ld |", w->m);
		out_int("size_mb", NULL, p->mb);
		for (c = 0; c < NR_CFG; c++) {
			out_obj(cfg_name[c], 3);
			out_dist("all_reaped", " %7.1f;", &t[c]);
			out_dist("memory_back", " %7.1f   |", &b[c]);
			out_end();
		}
		out_text(" back %.2fx, %.2fx; tail 1/%.0f, 1/%.0f\n",
			 b[REAPER].med / b[SYNC].med, b[SELF].med / b[SYNC].med,
			 t[SYNC].med / t[REAPER].med, t[SYNC].med / t[SELF].med);
		if (w->have_one) {
			out_text("     | parallel=0 (no zap helpers), memory back: reaper");
			out_dist("reaper_one_cpu_back", " %.1f", &w->back_one[0]);
			out_text(", self");
			out_dist("self_one_cpu_back", " %.1f", &w->back_one[1]);
			out_text("; parallel=1 / parallel=0: %.2fx, %.2fx\n",
				 b[REAPER].med / w->back_one[0].med,
				 b[SELF].med / w->back_one[1].med);
		}
		out_end();
	}
	out_end();
}

void render_spawn(const struct results *res)
{
	const struct spawn_result *s = &res->spawn;
	int l;

	out_text("\n3. small processes: loaded rate / not-loaded rate, mean [95%% CI] over %d interleaved rounds of %d, %d ms idle after each (un)load\n",
		 s->n, s->iters, s->settle_ms);
	out_arr("spawn", 0);
	for (l = 0; l < 2; l++) {
		const struct spawn_loop *p = &s->loop[l];

		out_item();
		out_str("loop", "%-16s", p->name);
		out_int("rounds", NULL, s->n);
		out_int("iterations", NULL, s->iters);
		out_int("settle_ms", NULL, s->settle_ms);
		out_num("unloaded_per_s", 1, " not loaded %7.0f/s", p->base.mean);
		out_ci("reaper_ratio", " | reaper %.4f [%.4f, %.4f]", &p->ratio[0]);
		out_ci("self_ratio", " | self %.4f [%.4f, %.4f]\n", &p->ratio[1]);
		out_end();
	}
	out_end();
}

/* A line of 4.: mode @c of @all, @how (in JSON, @key_how) */
static void render_cpu_res(const char *how, const char *key_how,
			   const struct cpu_res *all, enum cfg c)
{
	const struct cpu_res *r = &all[c];
	char key[32];

	snprintf(key, sizeof(key), "%s_%s", key_how, cfg_name[c]);
	out_obj(key, 2);
	out_text("%-12s %-6s", how, cfg_name[c]);
	out_num("child_ms", 3, " child %7.1f", r->child_ms);
	out_num("reaper_ms", 3, " + reaper %7.1f", r->reaper_ms);
	out_num("helper_ms", 3, " + helpers %6.1f", r->helper_ms);
	out_text(" = %7.1f  (%.3fx sync)",
		 r->child_ms + r->reaper_ms + r->helper_ms, cpu_ratio(all, c));
	/* the text: reaper mode only, how often it lost its CPU */
	out_num("reaper_preempted", 2,
		c == REAPER ? ", reaper preempted %.1fx" : NULL, r->preempted);
	out_num("reaper_migrated", 2,
		c == REAPER && r->migrated >= 0 ? ", migrated %.1fx" : NULL,
		r->migrated);
	out_text("%s\n", c == REAPER ? " per teardown" : "");
	out_end();
}

void render_cpu(const struct results *res)
{
	const struct cpu_result *r = &res->cpu;
	int c;

	out_text("\n4. CPU per %lu MiB teardown, ms (mean of %d x %d): exit path in the child's cgroup + mm_reaper\n",
		 r->mb, r->rounds, r->n);
	out_obj("cpu", 0);
	out_int("size_mb", NULL, r->mb);
	out_int("teardowns", NULL, r->n);
	out_int("rounds", NULL, r->rounds);
	for (c = 0; c < NR_CFG; c++)
		render_cpu_res("drained", "drained", r->drained, c);
	for (c = 0; c < 2; c++)
		render_cpu_res("back-to-back", "overlap", r->overlap, c);
	out_end();
}

void render_drain(const struct results *res)
{
	const struct drain_result *d = &res->drain;

	if (d->cpu_s <= 0)
		return;
	out_obj("drain", 0);
	out_num("gib", 3, "\n5. drain: %.2f GiB torn down", d->gib);
	out_num("cpu_s", 3, " in %.2f s of reaper and helper CPU", d->cpu_s);
	out_num("gib_per_cpu_s", 3, " = %.2f GiB/s\n", d->gib / d->cpu_s);
	out_end();
}

void render_wake(const struct results *res)
{
	const struct wake_result *w = &res->wake;
	int c;

	out_text("\n6. where the parent wakes from waitpid() (%d kills of %lu MiB per mode): on the child's CPU or another; wake latency, ms: median (p90)\n",
		 w->n, w->mb);
	out_arr("wake", 0);
	for (c = 0; c < NR_CFG; c++) {
		const struct wake_mode *m = &w->mode[c];

		out_item();
		out_str("mode", "%-6s", cfg_name[c]);
		out_int("size_mb", NULL, w->mb);
		out_int("n", NULL, w->n);
		out_int("same_cpu", " child's CPU %2ld", m->same);
		out_text(" of %2d:", w->n);
		out_dist("latency_same_cpu", " %6.1f (%6.1f)", &m->lat_same);
		out_text(" | other CPU %2d:", m->other);
		out_dist("latency_other_cpu", " %6.1f (%6.1f)\n", &m->lat_other);
		out_end();
	}
	out_end();
}

/* the JSON keys of struct split_result's s[] */
static const char *const split_name[NR_SPLIT] = {
	"alone", "next_child_allocating", "cpu_shared", "both"
};

void render_cpusplit(const struct results *res)
{
	const struct split_result *r = &res->cpusplit;
	const struct cpu_res *s = r->s;
	int c;

	out_text("\n7. reaper CPU per %lu MiB teardown, ms (mean of %d x %d); reaper pinned to CPU 0, parent and children to CPU 1\n",
		 r->mb, r->rounds, r->n);
	if (r->skipped) {
		out_text("skipped: needs 2 CPUs\n");
		return;
	}
	out_text("%-13s%-27s%s\n", "", "each teardown alone",
		 "next child allocating");
	out_obj("cpusplit", 0);
	out_int("size_mb", NULL, r->mb);
	out_int("teardowns", NULL, r->n);
	out_int("rounds", NULL, r->rounds);
	/* two to a line: the next child allocating or not */
	for (c = 0; c < NR_SPLIT; c++) {
		bool right = c & 1;

		if (!right)
			out_text("%-10s", c ? "CPU shared" : "own CPU");
		out_obj(split_name[c], 2);
		out_num("reaper_ms", 3, right ? "  %6.1f" : " %6.1f",
			s[c].reaper_ms);
		out_text(" (%.3fx,", s[c].reaper_ms / s[0].reaper_ms);
		out_num("reaper_preempted", 2,
			right ? " %4.1f pre)\n" : " %4.1f pre)", s[c].preempted);
		out_end();
	}
	out_text("(x: relative to the reaper alone on its own CPU; pre: preemptions per teardown; CPU shared: a nice 19 spinner on CPU 0)\n");
	out_end();
}

void render_busy(const struct results *res)
{
	const struct busy_result *r = &res->busy;
	int i, c;

	out_text("\n8. %d children of %lu MiB killed together, a CPU burner on every CPU: memory back, ms, median (p90 / p99) of %d\n",
		 BUSY_N, BUSY_MB, r->n);
	out_text("%-10s | %-22s | %-22s | %-22s | %s\n", "burners",
		 "sync", "reaper", "self", "reaper/sync, self/sync");
	out_arr("busy", 0);
	for (i = 0; i < NR_BUSY; i++) {
		out_item();
		out_int("burner_nice", "nice %-5ld |", r->nice[i]);
		out_int("children", NULL, BUSY_N);
		out_int("size_mb", NULL, BUSY_MB);
		for (c = 0; c < NR_CFG; c++) {
			if (!r->have[c]) {
				out_text(" %-22s |", "refused here");
				continue;
			}
			out_dist(cfg_name[c], " %7.1f (%5.1f / %5.1f) |",
				 &r->back[i][c]);
		}
		for (c = REAPER; c < NR_CFG; c++)
			if (r->have[c])
				out_text(" %.2fx", r->back[i][c].med /
					 r->back[i][SYNC].med);
			else
				out_text(" -");
		out_text("\n");
		out_end();
	}
	out_end();
}

void render_prefork(const struct results *res)
{
	const struct prefork_result *r = &res->prefork;
	int c;

	out_text("\n9. prefork server (%lu MiB of its own), %d workers of %lu MiB: fork() right after a worker was killed and reaped, a CPU burner on every CPU; ms over %d rounds of %d\n",
		 r->base_mb, r->workers, PREFORK_MB, r->n, r->forks);
	out_text("%-7s | %-26s | %-9s | %-8s | %s\n", "",
		 "fork(): p50, p99, max", "deferred", "p99/sync",
		 "respawn (kill to forked): p50, p99");
	out_obj("prefork", 0);
	out_int("workers", NULL, r->workers);
	out_int("worker_mb", NULL, PREFORK_MB);
	out_int("server_mb", NULL, r->base_mb);
	for (c = 0; c < NR_CFG; c++) {
		const struct dist *d = &r->fork[c];

		if (!r->have[c]) {
			out_text("%-7s | refused on this kernel\n", cfg_name[c]);
			continue;
		}
		out_text("%-7s |", cfg_name[c]);
		out_obj(cfg_name[c], 2);
		out_dist("fork", NULL, d);
		out_dist("respawn", NULL, &r->respawn[c]);
		out_int("deferred", NULL, r->queued[c]);
		out_end();
		out_text(" %8.2f %8.2f %8.2f | %4ld/%-4d | %7.2fx | %8.2f %8.2f\n",
			 d->med, d->p99, d->max, r->queued[c], d->n,
			 d->p99 / r->fork[SYNC].p99, r->respawn[c].med,
			 r->respawn[c].p99);
	}
	out_end();
}

void render_targets(const struct results *res)
{
	const struct target_result *t = &res->targets;
	int i;

	if (t->heading)
		out_text("\nTargets (issues 5 and 31), per mode:\n");
	out_arr("targets", 0);
	for (i = 0; i < t->nr; i++) {
		const struct target *x = &t->t[i];

		out_item();
		out_str("target", "%-62s", x->what);
		out_num("value", 4, " %9.4f", x->value);
		out_str("op", " %s", x->op);
		out_num("limit", 4, " %-8.4f", x->limit);
		out_bool("met", x->met);
		out_text(" %s\n", x->met ? "met" : "MISSED");
		out_end();
	}
	out_end();
}

/*
 * The ends: the JSON's (the time so far; the file is closed), the text's
 * (the time after the module's unload, later).
 */
void render_json_end(double elapsed_s)
{
	out_nl(0);
	out_num("elapsed_s", 0, NULL, elapsed_s);
	out_end();
	out_close();
}

void render_text_end(double elapsed_s)
{
	out_text("=== end (%.0f s)\n", elapsed_s);
}

/* gnuplot data: size, then the sync, reaper and self medians, p10, p90 */
void write_plot(const char *path, const struct lat_result *l)
{
	FILE *f = fopen(path, "w");
	int i, c;

	if (!f)
		die("%s: %s", path, strerror(errno));
	fprintf(f, "# size_mb sync(med p10 p90) reaper(med p10 p90) self(med p10 p90), ms\n");
	for (i = 0; i < l->nr; i++) {
		const struct lat_row *r = &l->rows[i];

		if (r->kind != K_ANON || r->voluntary)
			continue;
		fprintf(f, "%lu", r->mb);
		for (c = 0; c < NR_CFG; c++)
			fprintf(f, " %.3f %.3f %.3f", r->d[c].med, r->d[c].p10,
				r->d[c].p90);
		fprintf(f, "\n");
	}
	fclose(f);
}

/* One size's variants, sync first, in the zap section's columns */
static void out_zap_variants(const struct zap_result *r,
			     const struct dist d[NR_ZAP_VAR])
{
	static const char *const var[NR_ZAP_VAR] = {
		"sync", "reaper_one_cpu", "reaper_parallel", "self_one_cpu",
		"self_parallel",
	};
	int v;

	for (v = 0; v < NR_ZAP_VAR; v++) {
		if (v >= ZV_SELF_ONE && !r->have_self)
			out_text(" %-20s |", "refused here");
		else
			out_dist(var[v], " %6.1f (%5.1f / %5.1f) |", &d[v]);
	}
}

/*
 * One mode's split: its one-CPU teardown; the parallel one's, its zap phase
 * and the rest (the final mmput()); the zap phase's speed-up over the same
 * work on one CPU, taken as the one-CPU teardown less the rest.
 */
static void out_zap_split(const char *key, const struct zap_result *r, int i,
			  int one, int par)
{
	double work = r->teardown[i][one].med - r->rest[i][par].med;

	out_obj(key, -1);
	out_num("one_cpu_ms", 3, " %9.1f", r->teardown[i][one].med);
	out_num("parallel_ms", 3, " %9.1f", r->teardown[i][par].med);
	out_int("zapped_rounds", NULL, r->zapped[i][par].n);
	if (r->zapped[i][par].n) {
		out_num("zap_ms", 3, " %8.1f", r->zapped[i][par].med);
		out_num("rest_ms", 3, " %8.1f", r->rest[i][par].med);
		out_num("zap_speedup", 2, " %6.2fx |",
			work / r->zapped[i][par].med);
	} else {
		/* below AMT_ZAP_MIN_PAGES, or no CPU was idle */
		out_text(" %8s %8s %7s |", "-", "-", "-");
	}
	out_end();
}

/* Where a parallel teardown's time goes, from the module's own events */
static void render_zap_split(const struct zap_result *r)
{
	int i;

	out_text("the deferred teardown, ms, median of %d (the module's mm_reaper_reap and mm_reaper_zap events): on one CPU; parallel = zap + rest (the final mmput(): page tables, VMAs, what no chunk took); zap speedup = (one CPU - rest) / zap; - where no round zapped\n",
		 r->n);
	out_text("%-6s | %-45s | %s\n", "MiB",
		 "reaper: one CPU, parallel, zap, rest, speedup",
		 "self: one CPU, parallel, zap, rest, speedup");
	out_arr("zap_split", 0);
	for (i = 0; i < NR_ZAP_SIZES; i++) {
		if (!r->ran[i])
			continue;
		out_item();
		out_int("size_mb", "%-6ld |", r->mb[i]);
		out_zap_split("reaper", r, i, ZV_REAPER_ONE, ZV_REAPER_PAR);
		if (r->have_self)
			out_zap_split("self", r, i, ZV_SELF_ONE, ZV_SELF_PAR);
		out_text("\n");
		out_end();
	}
	out_end();
}

void render_zap(const struct results *res)
{
	const struct zap_result *r = &res->zap;
	int i, v;

	out_text("\n10. one child killed, the second CPU idle: memory back, ms, median (p90 / p99) of %d; parallel/one CPU\n",
		 r->n);
	out_text("%-6s | %-20s | %-20s | %-20s | %-20s | %-20s | %s\n", "MiB",
		 "sync", "reaper, one CPU", "reaper, parallel", "self, one CPU",
		 "self, parallel", "reaper, self; helper chunks");
	out_arr("zap", 0);
	for (i = 0; i < NR_ZAP_SIZES; i++) {
		out_item();
		out_int("size_mb", "%-6ld |", r->mb[i]);
		out_bool("ran", r->ran[i]);
		if (!r->ran[i]) {
			out_text(" no room in this guest (AMT_BENCH_MEM)\n");
			out_end();
			continue;
		}
		out_zap_variants(r, r->back[i]);
		out_text(" %.2fx", r->back[i][ZV_REAPER_PAR].med /
			 r->back[i][ZV_REAPER_ONE].med);
		if (r->have_self)
			out_text(" %.2fx", r->back[i][ZV_SELF_PAR].med /
				 r->back[i][ZV_SELF_ONE].med);
		out_int("helper_chunks", "; %ld", r->helper_chunks[i]);
		out_text("\n");
		out_end();
	}
	out_end();
	out_text("kill->waitpid(), ms, median (p90 / p99); sync/deferred, slowest deferred\n");
	out_arr("zap_reap", 0);
	for (i = 0; i < NR_ZAP_SIZES; i++) {
		double worst = 0;

		if (!r->ran[i])
			continue;
		out_item();
		out_int("size_mb", "%-6ld |", r->mb[i]);
		out_zap_variants(r, r->reap[i]);
		for (v = ZV_REAPER_ONE; v < NR_ZAP_VAR; v++)
			if ((v < ZV_SELF_ONE || r->have_self) &&
			    r->reap[i][v].med > worst)
				worst = r->reap[i][v].med;
		if (worst > 0)
			out_num("sync_over_deferred", 0, " %.0fx",
				r->reap[i][ZV_SYNC].med / worst);
		out_text("\n");
		out_end();
	}
	out_end();
	render_zap_split(r);
}

void render_pinned(const struct results *res)
{
	static const char *const var[NR_PIN_VAR] = {
		"sync", "reaper_zap_pinned_0", "reaper", "self",
	};
	static const char *const label[NR_PIN_VAR] = {
		"sync (inline)", "reaper, zap_pinned=0", "reaper, zap_pinned=1",
		"self, zap_pinned=1",
	};
	const struct pin_result *r = &res->pinned;
	int v;

	out_text("\n11. one child of %lu MiB killed while the fixture holds its mm: rounds whose memory was back while held (within %d s) and their kill to memory back, ms, median (p90 / p99); the holder's final mmput(), ms, median (p90 / p99) of %d\n",
		 r->mb, r->wait_s, r->n);
	out_obj("pinned", 0);
	out_int("size_mb", NULL, r->mb);
	out_int("wait_s", NULL, r->wait_s);
	out_bool("ran", r->ran);
	if (!r->ran) {
		out_text("no room in this guest (AMT_BENCH_MEM)\n");
		out_end();
		return;
	}
	out_text("%-22s | %-30s | %-22s | %s\n", "", "back while held",
		 "the holder's mmput()", "pinned_zapped");
	out_arr("variants", 2);
	for (v = 0; v < NR_PIN_VAR; v++) {
		if (v == PV_SELF && !r->have_self) {
			out_text("%-22s | refused here\n", label[v]);
			continue;
		}
		out_item();
		out_str("variant", NULL, var[v]);
		out_text("%-22s |", label[v]);
		out_text(" %d/%d", r->back_rounds[v], r->n);
		out_int("back_rounds", NULL, r->back_rounds[v]);
		if (r->back_rounds[v])
			out_dist("back", " %6.1f (%6.1f / %6.1f) |", &r->back[v]);
		else
			out_text(" %-25s |", "held");
		out_dist("mmput", " %6.1f (%5.1f / %5.1f) |", &r->mmput[v]);
		out_int("pinned_zapped", " %ld\n", r->zapped[v]);
		out_end();
	}
	out_end();
	out_end();
}
