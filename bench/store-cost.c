/*
 * bench/store-cost.c: what result_store() costs as a kernel's history grows
 * (bench/bench-store.sh builds and runs it; docs/query-scale.md).
 *
 *   store-cost DB BOOTS MODE
 *
 * DB: a new database (made here). Jobs of 5 boots, all on side A (so a
 * job's own summaries stay the size of a real job's). MODE "kernel": every boot is of kernel 1,
 * so each stored run also rewrites the per-kernel sample rows of its chunk
 * (ksample.c), the worst case: one kernel holds every key of the chunk.
 * MODE "label": the same boots without a kernel id (the job side found by its
 * label), so the store keeps the per-boot summaries and no kernel sample:
 * the peer. Each boot stores a warm-up run and a measured run of the agent
 * fixture tests/data/agent/result-rr-client.json (its metrics, counters,
 * perf counters, CPUs and profile), each with its own run id.
 *
 * Prints one line per MODE: the store time in ms (p50, p99, mean) of the
 * first and the last tenth of the boots, the runs stored, and the database's
 * size after a checkpoint.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "store/db.h"
#include "log.h"
#include "store/result.h"
#include "tap.h"
#include "util.h"

#define BOOTS_PER_JOB 5	/* a side of a job as the lab runs them */

static double mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void summary(const char *what, double *v, size_t n)
{
	double sum = 0;

	qsort(v, n, sizeof(*v), cmp_double);
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	printf(" %s p50 %.2f p99 %.2f mean %.2f ms;", what, v[n / 2], v[(n * 99) / 100], sum / (double)n);
}

/* The fixture with run id U and its "tps" value times F. */
static char *variant(const char *doc, long u, double f)
{
	const char *id = strstr(doc, "\"run_id\":\"cl1\""), *tps = strstr(doc, "\"value\":51977.0");
	struct buf b = BUF_INIT;

	if (!id || !tps || tps < id)
		die("store-cost: the fixture has no \"run_id\":\"cl1\" before \"value\":51977.0");
	buf_add(&b, doc, (size_t)(id - doc));
	buf_addf(&b, "\"run_id\":\"u%ld\"", u);
	id += strlen("\"run_id\":\"cl1\"");
	buf_add(&b, id, (size_t)(tps - id));
	buf_addf(&b, "\"value\":%.3f", 51977.0 * f);
	buf_addstr(&b, tps + strlen("\"value\":51977.0"));
	return buf_detach(&b, NULL);
}

int main(int argc, char **argv)
{
	char *path = xasprintf("%s/agent/result-rr-client.json", tap_data_dir());
	struct buf doc = BUF_INIT;
	struct db *db;
	long boots, tenth, u = 0;
	double *first, *last, t;
	size_t nf = 0, nl = 0;
	int64_t pages = 0, page = 0, samples = 0;
	int kernel;

	if (argc != 4 || (boots = strtol(argv[2], NULL, 10)) < 10 ||
	    (strcmp(argv[3], "kernel") && strcmp(argv[3], "label")))
		die("usage: store-cost NEW.db BOOTS(>= 10) kernel|label");
	kernel = !strcmp(argv[3], "kernel");
	log_init("store-cost", 0, LOG_ERR);
	if (buf_read_file(&doc, path))
		die("store-cost: cannot read %s", path);
	if (db_open(argv[1], &db) ||
	    db_exec(db, "INSERT INTO kernels (id, key, tree, variant, release, state, created) VALUES"
			" (1, 'a', 't', 'k1', '6.1.1', 'ok', 0)"))
		die("store-cost: cannot set up %s", argv[1]);
	tenth = boots / 10;
	first = xcalloc((size_t)tenth * 2, sizeof(*first));
	last = xcalloc((size_t)tenth * 2, sizeof(*last));
	for (long b = 1; b <= boots; b++) {
		int64_t job = (b - 1) / BOOTS_PER_JOB + 1;

		if ((b - 1) % BOOTS_PER_JOB == 0 &&
		    (db_run(db, "INSERT INTO jobs (id, name, state, spec, created) VALUES (?, 'j', 'done',"
				" '{\"warmup_runs\": 1}', 0)", "i", job) ||
		     (kernel ? db_run(db, "INSERT INTO job_sides (job_id, side, label, kernel_id) VALUES (?, 'A', 'k1', 1)", "i", job)
			     : db_run(db, "INSERT INTO job_sides (job_id, side, label) VALUES (?, 'A', 'k1')", "i", job))))
			die("store-cost: cannot add job %lld", (long long)job);
		if (kernel ? db_run(db, "INSERT INTO boots (id, job_id, seq, side, kernel_id) VALUES (?, ?, ?, 'A', 1)", "iii",
				    (int64_t)b, job, (int64_t)b)
			   : db_run(db, "INSERT INTO boots (id, job_id, seq, side) VALUES (?, ?, ?, 'A')", "iii", (int64_t)b, job,
				    (int64_t)b))
			die("store-cost: cannot add boot %ld", b);
		for (int seq = 0; seq < 2; seq++) {
			struct result_meta meta = { .job_id = job, .boot_id = b, .side = "A", .kernel_id = kernel ? 1 : 0,
						    .kernel_label = kernel ? NULL : "k1", .workload = "rr", .seq = seq };
			char *run = variant(doc.buf, ++u, 1 + 0.001 * (double)(b % 7) + 0.0001 * seq);
			int64_t id;

			t = mono_ms();
			if (result_store(db, run, strlen(run), &meta, &id))
				die("store-cost: run %ld of boot %ld was not stored", u, b);
			t = mono_ms() - t;
			free(run);
			if (b <= tenth)
				first[nf++] = t;
			else if (b > boots - tenth)
				last[nl++] = t;
		}
	}
	if (db_get_int(db, &pages, "SELECT page_count FROM pragma_page_count", "") != 1 ||
	    db_get_int(db, &page, "SELECT page_size FROM pragma_page_size", "") != 1 ||
	    db_get_int(db, &samples, "SELECT COALESCE(sum(length(data)), 0) FROM kernel_samples", "") != 1)
		die("store-cost: cannot read the database's size");
	printf("%-6s %ld boots, %ld runs:", argv[3], boots, u);
	summary("first tenth", first, nf);
	summary("last tenth", last, nl);
	printf(" %.1f MB (kernel_samples data %.1f MB)\n", (double)(pages * page) / 1048576.0, (double)samples / 1048576.0);
	db_close(db);
	free(first);
	free(last);
	free(path);
	buf_release(&doc);
	return 0;
}
