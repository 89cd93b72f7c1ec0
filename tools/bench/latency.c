// SPDX-License-Identifier: GPL-2.0
/*
 * exit_latency section 1, latency: kill->waitpid() of a child holding N MiB,
 * by size and kind, and kill -> memory back for the large ones.
 */
#include "bench.h"

static void one_exit(struct lat_row *r, enum cfg c, int i)
{
	bool back = r->mb >= 256;
	long base = back ? amt_mem_back_kb() : 0;
	pid_t pid = spawn(r->mb, r->kind);
	uint64_t t0;

	t0 = amt_now_ns();
	if (r->voluntary)
		amt_hog_exit(pid);
	else
		kill(pid, SIGKILL);
	amt_reap(pid);
	r->lat[c][i] = amt_now_ns() - t0;
	r->back[c][i] = back ? wait_mem_back(base, t0) : 0;
}

static void print_lat_header(void)
{
	printf("\n1. kill->waitpid() latency, ms: median (p90 / p99); memory back = kill until the memory is free again\n");
	printf("%-6s %6s %-4s | %-22s | %-22s | %-22s | %9s %9s\n", "kind",
	       "MiB", "exit", "sync", "reaper", "self", "sync/reap",
	       "sync/self");
}

static void report_lat(struct lat_row *r)
{
	struct dist d[NR_CFG], b[NR_CFG];
	int c;

	for (c = 0; c < NR_CFG; c++) {
		d[c] = dist_of(r->lat[c], r->n);
		b[c] = dist_of(r->back[c], r->back[c][0] ? r->n : 0);
	}
	printf("%-6s %6lu %-4s |", kind_name[r->kind], r->mb,
	       r->voluntary ? "exit" : "kill");
	for (c = 0; c < NR_CFG; c++)
		printf(" %7.1f (%5.1f / %5.1f) |", d[c].med, d[c].p90, d[c].p99);
	printf(" %8.0fx %8.0fx\n", d[SYNC].med / d[REAPER].med,
	       d[SYNC].med / d[SELF].med);
	if (b[SYNC].n)
		printf("%-17s | %7.1f               | %7.1f               | %7.1f               | %8.2fx %8.2fx\n",
		       "  memory back", b[SYNC].med, b[REAPER].med,
		       b[SELF].med, b[REAPER].med / b[SYNC].med,
		       b[SELF].med / b[SYNC].med);
	json_item();
	fprintf(json, "\"kind\": \"%s\", \"size_mb\": %lu, \"exit\": \"%s\"",
		kind_name[r->kind], r->mb, r->voluntary ? "exit" : "kill");
	for (c = 0; c < NR_CFG; c++) {
		fprintf(json, ",\n   \"%s\": {", cfg_name[c]);
		json_dist("latency", &d[c]);
		if (b[c].n) {
			fprintf(json, ", ");
			json_dist("memory_back", &b[c]);
		}
		fprintf(json, "}");
	}
	fprintf(json, "}");
}

struct lat_row *lat_rows;
int nr_lat_rows;

static void add_row(enum kind k, unsigned long mb, bool voluntary)
{
	struct lat_row *r;

	lat_rows = realloc(lat_rows, (nr_lat_rows + 1) * sizeof(*r));
	r = &lat_rows[nr_lat_rows++];
	memset(r, 0, sizeof(*r));
	r->kind = k;
	r->mb = mb;
	r->voluntary = voluntary;
	/* small sizes are quick: more samples for their tails */
	r->n = mb <= 64 ? 3 * rounds : rounds;
	if (r->n > MAX_SAMPLES)
		r->n = MAX_SAMPLES;
}

void bench_latency(void)
{
	static const unsigned long sizes[] = { 8, 64, 256, 1024, 2048, 4096 };
	unsigned long big = 0;
	int i, j, k, c, round;

	for (k = K_ANON; k <= K_THP; k++)
		for (i = 0; i < 6; i++) {
			/* leave room: the child, page tables, the guest */
			if (sizes[i] > mem_total_mb / 2 || (quick && sizes[i] > 256))
				continue;
			add_row(k, sizes[i], false);
			big = sizes[i];
		}
	add_row(K_ANON, big, true);
	add_row(K_SHMEM, quick ? 256 : 1024, false);
	add_row(K_FILE, quick ? 256 : 1024, false);

	warm_up();
	for (round = 0; round < 3 * rounds; round++) {
		fprintf(stderr, "# latency: round %d of %d\n", round + 1, 3 * rounds);
		for (j = 0; j < NR_CFG; j++) {
			c = (round + j) % NR_CFG;
			set_cfg(c);
			for (i = 0; i < nr_lat_rows; i++) {
				if (round >= lat_rows[i].n)
					continue;
				one_exit(&lat_rows[i], c, round);
				settle();
			}
		}
	}
	print_lat_header();
	json_array("latency");
	for (i = 0; i < nr_lat_rows; i++)
		report_lat(&lat_rows[i]);
	fprintf(json, "]");
}


/* gnuplot data: size, then the sync, reaper and self medians, p10, p90 */
void write_plot(const char *path)
{
	FILE *f = fopen(path, "w");
	int i, c;

	if (!f)
		die("%s: %s", path, strerror(errno));
	fprintf(f, "# size_mb sync(med p10 p90) reaper(med p10 p90) self(med p10 p90), ms\n");
	for (i = 0; i < nr_lat_rows; i++) {
		struct lat_row *r = &lat_rows[i];

		if (r->kind != K_ANON || r->voluntary)
			continue;
		fprintf(f, "%lu", r->mb);
		for (c = 0; c < NR_CFG; c++) {
			struct dist d = dist_of(r->lat[c], r->n);

			fprintf(f, " %.3f %.3f %.3f", d.med, d.p10, d.p90);
		}
		fprintf(f, "\n");
	}
	fclose(f);
}
