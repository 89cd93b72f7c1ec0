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

static void add_row(struct lat_result *l, enum kind k, unsigned long mb,
		    bool voluntary)
{
	struct lat_row *r;

	l->rows = realloc(l->rows, (l->nr + 1) * sizeof(*r));
	r = &l->rows[l->nr++];
	memset(r, 0, sizeof(*r));
	r->kind = k;
	r->mb = mb;
	r->voluntary = voluntary;
	/* small sizes are quick: more samples for their tails */
	r->n = mb <= 64 ? 3 * rounds : rounds;
	if (r->n > MAX_SAMPLES)
		r->n = MAX_SAMPLES;
}

void bench_latency(struct results *res)
{
	static const unsigned long sizes[] = { 8, 64, 256, 1024, 2048, 4096 };
	struct lat_result *l = &res->latency;
	unsigned long big = 0;
	int i, j, k, c, round;

	for (k = K_ANON; k <= K_THP; k++)
		for (i = 0; i < 6; i++) {
			/* leave room: the child, page tables, the guest */
			if (sizes[i] > mem_total_mb / 2 || (quick && sizes[i] > 256))
				continue;
			add_row(l, k, sizes[i], false);
			big = sizes[i];
		}
	add_row(l, K_ANON, big, true);
	add_row(l, K_SHMEM, quick ? 256 : 1024, false);
	add_row(l, K_FILE, quick ? 256 : 1024, false);

	warm_up();
	for (round = 0; round < 3 * rounds; round++) {
		fprintf(stderr, "# latency: round %d of %d\n", round + 1, 3 * rounds);
		for (j = 0; j < NR_CFG; j++) {
			c = (round + j) % NR_CFG;
			set_cfg(c);
			for (i = 0; i < l->nr; i++) {
				if (round >= l->rows[i].n)
					continue;
				one_exit(&l->rows[i], c, round);
				settle();
			}
		}
	}
	for (i = 0; i < l->nr; i++) {
		struct lat_row *r = &l->rows[i];

		/* memory back: only for the large sizes (one_exit()) */
		for (c = 0; c < NR_CFG; c++) {
			r->d[c] = dist_of(r->lat[c], r->n);
			r->b[c] = dist_of(r->back[c], r->back[c][0] ? r->n : 0);
		}
	}
}
