/*
 * orch-ksample.c: the per-kernel samples (ksample.h): the data encoding, the
 * rows result_store() keeps as runs come in (in and out of order, a boot
 * whose kernel changes) against those a rebuild makes, and kernel
 * comparisons from them against comparisons from the per-boot summaries.
 * On a real sqlite file, or PostgreSQL with KLAB_TEST_DB (t0011).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "compare/compare.h"
#include "store/db.h"
#include "store/ksample.h"
#include "log.h"
#include "store/result.h"
#include "tap.h"
#include "util.h"

static char *replace(const char *s, const char *from, const char *to)
{
	const char *p = strstr(s, from);
	struct buf b = BUF_INIT;

	if (!p)
		die("fixture: no '%s'", from);
	buf_add(&b, s, (size_t)(p - s));
	buf_addstr(&b, to);
	buf_addstr(&b, p + strlen(from));
	return buf_detach(&b, NULL);
}

static void test_encoding(void)
{
	static const int64_t keys[] = { -9000, -4097, -1, 0, 3, 4095, 4096, 1000000000000LL };
	struct ksample s, d;
	struct buf text = BUF_INIT;
	int same = 1;

	ksample_init(&s, 2);
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		ksample_push(&s, keys[i], (double[2]){ -1.5 * (double)i, i ? 1e300 / (double)i : 0.1 });
	ksample_encode(&s, &text);
	ksample_init(&d, 2);
	ok(!ksample_decode(&d, text.buf, text.len) && d.n == s.n, "8 entries of width 2 encode and decode (%s)", text.buf);
	for (size_t i = 0; i < d.n && i < s.n; i++)
		same &= d.key[i] == s.key[i] && d.v[2 * i] == s.v[2 * i] && d.v[2 * i + 1] == s.v[2 * i + 1];
	ok(same, "... to the same keys and the same bits of every value");
	ksample_free(&d);
	ksample_init(&d, 1);
	ok(ksample_decode(&d, text.buf, text.len) < 0 || d.n != s.n, "read as width 1 they are not the same sample");
	ksample_free(&d);
	ksample_init(&d, 1);
	ok(ksample_decode(&d, "!!!!", 4) < 0, "text that is not base64 is refused");
	ok(ksample_decode(&d, "AA==", 4) < 0, "a key without its value is refused");
	ok(!ksample_decode(&d, "", 0) && d.n == 0, "an empty text is an empty sample");
	ksample_free(&d);
	ksample_free(&s);
	buf_release(&text);
}

/* DOC with its i-th profile share times 1 + 0.05 i, so that the profiles of two kernels differ by distinct amounts. */
static char *skew_profile(const char *doc)
{
	struct buf b = BUF_INIT;
	const char *p = doc, *q;
	int i = 0;

	while ((q = strstr(p, "\"percent\":"))) {
		char *end;
		double v;

		q += strlen("\"percent\":");
		buf_add(&b, p, (size_t)(q - p));
		v = strtod(q, &end);
		buf_addf(&b, "%.4f", v * (1 + 0.05 * i++));
		p = end;
	}
	buf_addstr(&b, p);
	return buf_detach(&b, NULL);
}

/*
 * Store run SEQ of boot BOOT (0: none) of job JOB on SIDE with KERNEL (0:
 * none): the fixture with tps times F, its profile skewed for kernel 2.
 */
static int store(struct db *db, const char *doc, int job, int boot, const char *side, int kernel, int seq, double f)
{
	static int uid;
	struct result_meta meta = { 0 };
	char id[32], tps[64];
	char *a, *b;
	int64_t run;
	int ret;

	snprintf(id, sizeof(id), "\"run_id\":\"u%d\"", ++uid);
	snprintf(tps, sizeof(tps), "\"value\":%.6f", 51977.0 * f);
	a = kernel == 2 ? skew_profile(doc) : xstrdup(doc);
	b = replace(a, "\"run_id\":\"cl1\"", id);
	free(a);
	a = b;
	b = replace(a, "\"value\":51977.0", tps);
	meta.job_id = job;
	meta.boot_id = boot;
	meta.side = side;
	meta.kernel_id = kernel;
	meta.seq = seq;
	meta.workload = "rr";
	ret = result_store(db, b, strlen(b), &meta, &run);
	free(a);
	free(b);
	return ret;
}

/* kernel_samples as text: each row's key and its entries (values to 12 digits). */
static char *dump(struct db *db)
{
	struct db_stmt *st = db_prepare(db, "SELECT kernel_id, kind, workload, name, chunk, unit, better, n, data"
					" FROM kernel_samples ORDER BY kernel_id, kind, workload, name, chunk", "");
	struct buf b = BUF_INIT;

	while (st && db_step(st) == DB_ROW) {
		struct ksample s;
		const char *data = db_col_text(st, 8);

		ksample_init(&s, ksample_width(db_col_int(st, 1)));
		buf_addf(&b, "%lld %d %s %s %lld %s %s %lld:", (long long)db_col_int64(st, 0), db_col_int(st, 1),
			 db_col_text(st, 2), db_col_text(st, 3), (long long)db_col_int64(st, 4),
			 db_col_text(st, 5) ? db_col_text(st, 5) : "-", db_col_text(st, 6) ? db_col_text(st, 6) : "-",
			 (long long)db_col_int64(st, 7));
		if (!data || ksample_decode(&s, data, strlen(data)))
			buf_addstr(&b, " BAD");
		for (size_t i = 0; i < s.n; i++) {
			buf_addf(&b, " %lld=%.12g", (long long)s.key[i], s.v[i * (size_t)s.w]);
			if (s.w > 1)
				buf_addf(&b, "/%.12g", s.v[i * (size_t)s.w + 1]);
		}
		buf_addch(&b, '\n');
		ksample_free(&s);
	}
	db_finalize(st);
	return buf_detach(&b, NULL);
}

static int64_t count(struct db *db, const char *sql)
{
	int64_t n = -1;

	db_get_int(db, &n, sql, "");
	return n;
}

/* The two comparisons agree row for row (and profile row for row). */
static void same_result(const struct compare_result *x, const struct compare_result *y, const char *what)
{
	int same = x->n_rows == y->n_rows && x->n_prof == y->n_prof && !strcmp(x->clock, y->clock);
	size_t n = x->n_rows < y->n_rows ? x->n_rows : y->n_rows;

	for (size_t i = 0; i < n && same; i++) {
		const struct compare_row *a = &x->rows[i], *b = &y->rows[i];

		same &= !strcmp(a->workload, b->workload) && !strcmp(a->metric, b->metric) &&
			a->st.n_a == b->st.n_a && a->st.n_b == b->st.n_b && a->st.verdict == b->st.verdict &&
			a->st.mean_a == b->st.mean_a && a->st.mean_b == b->st.mean_b &&
			(a->st.w.p == b->st.w.p || (isnan(a->st.w.p) && isnan(b->st.w.p)));
		if (!same)
			diag("%s: row %zu %s/%s differs: n %zu/%zu %zu/%zu, mean %.17g/%.17g %.17g/%.17g", what, i,
			     a->workload, a->metric, a->st.n_a, b->st.n_a, a->st.n_b, b->st.n_b, a->st.mean_a, b->st.mean_a,
			     a->st.mean_b, b->st.mean_b);
	}
	/* the profile rows by symbol: their order is by difference, which is about 0 here */
	for (size_t i = 0; i < x->n_prof && same; i++) {
		const struct compare_prof *p = &x->prof[i], *q = NULL;

		for (size_t k = 0; k < y->n_prof && !q; k++)
			if (!strcmp(y->prof[k].workload, p->workload) && !strcmp(y->prof[k].symbol, p->symbol))
				q = &y->prof[k];
		same &= q && fabs(p->pct_a - q->pct_a) < 1e-9 && fabs(p->pct_b - q->pct_b) < 1e-9;
		if (!same)
			diag("%s: profile row %s differs: %g %g, %g %g", what, p->symbol, p->pct_a, q ? q->pct_a : NAN,
			     p->pct_b, q ? q->pct_b : NAN);
	}
	ok(same && n > 40, "%s: %zu rows, %zu profile rows, the same from the samples as from the boot summaries", what,
	   x->n_rows, x->n_prof);
}

static void compare_both_ways(struct db *db, const char *ka, const char *kb)
{
	struct compare_result fast, slow;
	char *what = xasprintf("compare %s %s", ka, kb);

	ok(ksample_ready(db) == 1, "%s: the samples are whole", what);
	ok(!compare_kernels(db, ka, kb, NULL, &fast), "%s from the samples", what);
	db_exec(db, "UPDATE summary_state SET ready = 0 WHERE name = 'kernel_samples'");
	ok(!compare_kernels(db, ka, kb, NULL, &slow), "%s from the boot summaries", what);
	db_exec(db, "UPDATE summary_state SET ready = 1 WHERE name = 'kernel_samples'");
	same_result(&fast, &slow, what);
	compare_result_free(&fast);
	compare_result_free(&slow);
	free(what);
}

int main(void)
{
	char *path = xasprintf("%s/agent/result-rr-client.json", tap_data_dir());
	char *dbp = tap_db_path("klab.db");
	struct buf doc = BUF_INIT;
	struct compare_result res;
	char *kept, *again;
	struct db *db;
	int bad = 0;

	log_init("orch-ksample", 0, LOG_CRIT);
	test_encoding();
	if (buf_read_file(&doc, path) || db_open(dbp, &db))
		die("cannot set up");
	ok(ksample_ready(db) == 1, "a new database has whole (empty) kernel samples");
	if (db_exec(db, "INSERT INTO kernels (id, key, tree, variant, release, state, created) VALUES"
			" (1, 'a', 't', 'k1', '6.1.1', 'ok', 0), (2, 'b', 't', 'k2', '6.1.2', 'ok', 0),"
			" (3, 'c', 't', 'k3', '6.1.3', 'ok', 0);"
			"INSERT INTO jobs (id, name, state, spec, created) VALUES"
			" (1, 'j1', 'done', '{\"warmup_runs\": 1}', 0), (2, 'j2', 'done', '{\"warmup_runs\": 1}', 0),"
			" (3, 'j3', 'done', '{\"warmup\": 2}', 0);"
			"INSERT INTO job_sides (job_id, side, label, kernel_id) VALUES (1, 'A', 'k1', 1), (1, 'B', 'k2', 2),"
			" (2, 'A', 'k1', 1), (2, 'B', 'k2', 2), (3, 'A', 'plain', NULL), (3, 'B', 'k2', 2);"))
		die("cannot set up");
	/* job 1: boots 1-4 (chunk 0); job 2: boots 5000, 5001 (chunk 4) and 9000, 9001 (chunk 8), the later stored first */
	for (int b = 0; b < 8; b++) {
		static const int ids[] = { 1, 2, 3, 4, 9000, 9001, 5000, 5001 };
		int id = ids[b], job = b < 4 ? 1 : 2;
		const char *side = b % 2 ? "B" : "A";

		bad |= db_run(db, "INSERT INTO boots (id, job_id, seq, side, kernel_id) VALUES (?, ?, ?, ?, ?)", "iiisi",
			      (int64_t)id, (int64_t)job, (int64_t)b, side, (int64_t)(b % 2 ? 2 : 1));
		for (int seq = 0; seq < 3; seq++)
			bad |= store(db, doc.buf, job, id, side, b % 2 ? 2 : 1, seq,
				     (b % 2 ? 1.05 : 1.0) * (1 + 0.001 * b + 0.0002 * seq));
	}
	/* job 3: side A without a kernel id (found by its label), runs without boots (each its own group), warm-up 2 */
	for (int r = 0; r < 6; r++)
		bad |= store(db, doc.buf, 3, 0, r % 2 ? "B" : "A", r % 2 ? 2 : 0, r / 2, 1 + 0.003 * r);
	/* a resumed boot stored again out of order: boot 3's third run again (same uid: nothing) and a late fourth */
	bad |= store(db, doc.buf, 1, 3, "A", 1, 3, 1.002);
	ok(!bad, "27 runs stored");
	is_int(count(db, "SELECT count(*) FROM kernel_samples WHERE kernel_id = 1 AND kind = 0 AND name = 'tps'"), 3,
	       "kernel 1's tps is in 3 rows: chunks 0, 4 and 8");
	is_int(count(db, "SELECT SUM(n) FROM kernel_samples WHERE kernel_id = 2 AND kind = 0 AND name = 'tps'"), 5,
	       "kernel 2's tps has its 4 boots and job 3's measured run of B without a boot");
	is_int(count(db, "SELECT SUM(n) FROM kernel_samples WHERE kernel_id = 1 AND kind = 3"), 4,
	       "kernel 1's clock rows count its 4 boots");
	kept = dump(db);
	ok(strstr(kept, " 0 rr tps 0 1/s higher 2: 1=") != NULL, "a row of two boots, unit and better of the first");
	bad = db_begin(db) || ksample_rebuild(db) || db_commit(db);
	again = dump(db);
	ok(!bad, "a rebuild makes them again");
	is_str(again, kept, "the rows kept as each run was stored are those a rebuild makes");
	free(again);
	free(kept);

	compare_both_ways(db, "k1", "k2");
	compare_both_ways(db, "6.1.2", "1");
	compare_both_ways(db, "plain", "k2");

	/* boot 4's kernel changes with a later run: kernel 2's rows lose it, kernel 3's get it */
	bad = store(db, doc.buf, 1, 4, "B", 3, 4, 1.2);
	is_int(count(db, "SELECT SUM(n) FROM kernel_samples WHERE kernel_id = 2 AND kind = 0 AND name = 'tps'"), 4,
	       "kernel 2 has 3 boots and the run left");
	is_int(count(db, "SELECT SUM(n) FROM kernel_samples WHERE kernel_id = 3 AND kind = 0 AND name = 'tps'"), 1,
	       "kernel 3 has boot 4");
	kept = dump(db);
	bad |= db_begin(db) || ksample_rebuild(db) || db_commit(db);
	again = dump(db);
	ok(!bad, "stored and made again");
	is_str(again, kept, "after the move the kept rows are still those a rebuild makes");
	free(again);
	free(kept);

	/* a damaged row is named, not read as numbers */
	db_exec(db, "UPDATE kernel_samples SET data = '!!' WHERE kernel_id = 1 AND kind = 0 AND name = 'tps' AND chunk = 0");
	ok(compare_kernels(db, "k1", "k2", NULL, &res) == -1, "a damaged sample fails the comparison");
	ok(store(db, doc.buf, 1, 1, "A", 1, 5, 1.0) == 0, "a run of its boot is stored all the same");
	is_int(count(db, "SELECT count(*) FROM runs WHERE job_id = 1 AND boot_id = 1"), 4, "... with its boot's runs");
	is_int(ksample_ready(db), 0, "... and the samples are marked not whole");
	ok(compare_kernels(db, "k1", "k2", NULL, &res) == 0, "so the comparison reads the boot summaries");
	compare_result_free(&res);
	bad = db_begin(db) || ksample_rebuild(db) || db_commit(db);
	ok(!bad && ksample_ready(db) == 1, "a rebuild makes them whole again");
	compare_both_ways(db, "k1", "k2");

	db_close(db);
	free(dbp);
	free(path);
	buf_release(&doc);
	return done_testing();
}
