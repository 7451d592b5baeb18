/* orch-compare.c: the compare.h C API (compare_job, the loaders, compare_print, history_update_job) and the formatters of compare_fmt.h, on a real sqlite file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "compare/compare.h"
#include "compare/compare_fmt.h"
#include "print.h"
#include "store/db.h"
#include "store/result.h"
#include "tap.h"
#include "util.h"

/* One job, 4 boots per side, 2 measured runs per boot after one warm-up; B is +3%, cost -10%. */
static int make_job(struct db *db)
{
	static const double noise[] = { 0.001, -0.002, 0.0015, -0.0005, 0.002, -0.001, 0.0005, -0.0015 };
	int run = 0;

	if (db_exec(db, "INSERT INTO series (id, source, content_sha256, created) VALUES (1, 'x', 'h', 0);"
			"INSERT INTO expectations (series_id, metric, direction, lo_pct, hi_pct, text)"
			" VALUES (1, 'cpu_us_per_op', 'lower', 8, 12, 'saves 8-12% of cycles');"
			"INSERT INTO jobs (id, name, state, spec, series_id, created)"
			" VALUES (1, 'j', 'done', '{\"warmup_runs\": 1}', 1, 0);"
			"INSERT INTO job_sides (job_id, side, label) VALUES (1, 'A', 'xps-off'), (1, 'B', 'xps-on');"))
		return -1;
	for (int b = 0; b < 8; b++) {
		const char *side = b % 2 ? "B" : "A";

		if (db_run(db, "INSERT INTO boots (id, job_id, seq, side) VALUES (?1, 1, ?1, ?2)", "is",
			   (int64_t)b + 1, side))
			return -1;
		for (int seq = 0; seq < 3; seq++) {
			double f = (b % 2 ? 1.03 : 1.0) * (1 + noise[b] + 0.0003 * seq);
			double cost = (b % 2 ? 0.9 : 1.0) * (1 - noise[b]);

			char uid[32];

			run++;
			snprintf(uid, sizeof(uid), "r%d", run);
			if (db_run(db, "INSERT INTO runs (id, uid, job_id, boot_id, side, workload, seq, created)"
				       " VALUES (?1, ?2, 1, ?3, ?4, 'udp_rr_500', ?5, 0)", "isisi", (int64_t)run,
				   uid, (int64_t)b + 1, side, (int64_t)seq) ||
			    db_run(db, "INSERT INTO metrics (run_id, name, value, unit, better) VALUES"
				       " (?1, 'tps', ?2, '1/s', 'higher'), (?1, 'cpu_us_per_op', ?3, 'us', 'lower'),"
				       " (?1, 'cpu_busy_pct', ?4, '%', 'none')", "iddd", (int64_t)run,
				   seq ? 100000 * f : 1.0, seq ? 3.0 * cost : 99.0, b % 2 ? 55.0 : 50.0))
				return -1;
		}
	}
	return result_rebuild_summaries(db);	/* runs written by SQL: their per-boot summaries */
}

static const struct compare_row *row(const struct compare_result *r, const char *metric)
{
	for (size_t i = 0; i < r->n_rows; i++)
		if (!strcmp(r->rows[i].metric, metric))
			return &r->rows[i];
	return NULL;
}

static void test_job(struct db *db)
{
	struct compare_opts o = COMPARE_OPTS_INIT;
	struct compare_result res, st;
	const struct compare_row *tps, *cost, *busy;
	int64_t n = 0;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	ok(compare_job(db, 1, &o, &res) == 0, "compare_job runs");
	tps = row(&res, "tps");
	cost = row(&res, "cpu_us_per_op");
	busy = row(&res, "cpu_busy_pct");
	ok(tps && cost && busy, "rows for tps, cpu_us_per_op, cpu_busy_pct");
	if (!tps || !cost || !busy)
		return;
	is_int(tps->st.n_a, 4, "4 boots on side A");
	is_str(stats_verdict_name(tps->st.verdict), "CHANGED", "tps CHANGED");
	ok(fabs(tps->st.change_pct - 3) < 0.3, "tps +%.2f%% near +3%%", tps->st.change_pct);
	ok(tps->headline && !isnan(tps->p_holm) && tps->p_holm >= tps->st.w.p, "tps is a headline metric with Holm p");
	is_str(cost->claim, "consistent", "claim -8..-12%% vs -10%%: CI [%.2f, %.2f] %s", cost->st.ci_lo,
	       cost->st.ci_hi, cost->claim ? cost->claim : "none");
	is_str(stats_verdict_name(busy->st.verdict), "DESCRIPTIVE", "a %% metric is DESCRIPTIVE");
	is_double(busy->st.change_pct, 5, 1e-9, "as a point difference (55 - 50)");
	ok(!isnan(tps->st.mde_pct) && tps->st.mde_pct > 0, "MDE %.2f%% computed", tps->st.mde_pct);
	is_str(res.label_a, "xps-off", "label A from job_sides");

	db_get_int(db, &n, "SELECT COUNT(*) FROM comparisons WHERE job_id = 1", "");
	is_int(n, (long long)res.n_rows, "every row stored");
	ok(compare_load_job(db, 1, &st) == 1, "compare_load_job finds them");
	is_int(st.n_rows, res.n_rows, "same number loaded");
	if (row(&st, "tps")) {
		is_double(row(&st, "tps")->st.ci_lo, tps->st.ci_lo, 1e-9, "CI round-trips");
		is_str(stats_verdict_name(row(&st, "tps")->st.verdict), "CHANGED", "verdict round-trips");
	}
	if (row(&st, "cpu_us_per_op")) {
		is_str(row(&st, "cpu_us_per_op")->claim, "consistent", "claim round-trips");
		is_double(row(&st, "cpu_us_per_op")->claim_pct, -10, 1e-9, "the claimed change is read again from the series");
	}
	if (row(&st, "cpu_busy_pct"))
		is_str(row(&st, "cpu_busy_pct")->unit, "pp", "a point difference has unit pp, computed or loaded");
	is_str(busy->unit, "pp", "the computed row too");
	f = open_memstream(&text, &len);
	print_begin(PRINT_FMT_TEXT, f);
	compare_print(&st);
	print_end();
	fclose(f);
	ok(strstr(text, "(claim -10.0%: consistent with the claim)") != NULL, "compare_print of the stored rows shows the claimed change");
	ok(!strstr(text, "nan"), "and no NaN anywhere");
	ok(strstr(text, "CHANGED (better)") != NULL, "the verdict says which way");
	free(text);
	f = open_memstream(&text, &len);
	print_begin(PRINT_FMT_TEXT, f);
	compare_print(&res);
	print_end();
	fclose(f);
	ok(strstr(text, "comparison of job 1: A = xps-off, B = xps-on") != NULL, "compare_print header");
	ok(strstr(text, "(claim -10.0%: consistent with the claim)") != NULL, "compare_print shows the claim");
	free(text);
	f = open_memstream(&text, &len);
	print_begin(PRINT_FMT_JSON, f);
	compare_print(&res);
	print_end();
	fclose(f);
	ok(strstr(text, "\"verdict\":\"CHANGED\"") || strstr(text, "\"verdict\": \"CHANGED\""), "JSON has the verdict");
	free(text);
	compare_result_free(&st);
	compare_result_free(&res);

	o.warmup_runs = 0;
	ok(compare_job(db, 1, &o, &res) == 0, "compare with the warm-up runs included");
	if (row(&res, "tps"))
		ok(row(&res, "tps")->st.mean_a < 80000, "the 1.0 warm-up values drag the mean (%.0f): the option works",
		   row(&res, "tps")->st.mean_a);
	compare_result_free(&res);
	ok(compare_job(db, 42, NULL, NULL) == -1, "no job 42: -1");
}

static const char *fmt(void (*f)(struct buf *, double), double v)
{
	static struct buf b = BUF_INIT;

	buf_reset(&b);
	f(&b, v);
	return b.buf;
}

static const char *fmt_row(void (*f)(struct buf *, const struct compare_row *), const struct compare_row *r)
{
	static struct buf b = BUF_INIT;

	buf_reset(&b);
	f(&b, r);
	return b.buf;
}

/* The one set of formatters: every output prints p, changes, CIs and verdicts through these. */
static void test_formatters(void)
{
	struct compare_row r;

	is_str(fmt(compare_fmt_p, 1.1e-10), "<0.0001", "a tiny p");
	is_str(fmt(compare_fmt_p, 0.0001), "0.0001", "p at the edge");
	is_str(fmt(compare_fmt_p, 0.00216), "0.0022", "p below 0.01: four decimals");
	is_str(fmt(compare_fmt_p, 0.5566), "0.557", "p from 0.01: three");
	is_str(fmt(compare_fmt_p, NAN), "-", "no p");
	is_str(fmt(compare_fmt_num, 2379273.4), "2379273", "a large plain number");
	is_str(fmt(compare_fmt_num, 3.0844), "3.084", "4 significant digits");
	is_str(fmt(compare_fmt_num, 0.000123), "0.000123", "a small number is not printed as zero");
	is_str(fmt(compare_fmt_si, 2379273), "2.379M", "SI prefix");
	is_str(fmt(compare_fmt_si, 12500), "12.5k", "k from 10000");
	is_str(fmt(compare_fmt_pct, 4.666), "+4.67%", "signed percent");
	is_str(fmt(compare_fmt_mde, 0.789), "0.79%", "MDE");
	is_str(fmt(compare_fmt_mde, NAN), "-", "no MDE");

	memset(&r, 0, sizeof(r));
	r.better = (char *)"lower";
	r.st.change_pct = -14.84;
	r.st.ci_lo = -15.79;
	r.st.ci_hi = -13.88;
	r.st.w.p = 1e-10;
	r.st.verdict = VERDICT_CHANGED;
	is_str(fmt_row(compare_fmt_change_ci, &r), "-14.84% [-15.79%, -13.88%]", "change with CI");
	is_str(fmt_row(compare_fmt_verdict, &r), "CHANGED (better)", "lower is better");
	r.better = (char *)"higher";
	is_str(fmt_row(compare_fmt_verdict, &r), "CHANGED (worse)", "higher is better");
	r.st.verdict = VERDICT_INCONCLUSIVE;
	r.st.extra_boots = 31;
	is_str(fmt_row(compare_fmt_verdict, &r), "INCONCLUSIVE(+31)", "inconclusive, with the boots to add");
	r.st.extra_boots = -1;
	is_str(fmt_row(compare_fmt_verdict, &r), "INCONCLUSIVE(>100)", "more boots than the cap");
	r.unit = (char *)"pp";
	r.st.ci_lo = r.st.ci_hi = NAN;
	r.st.change_pct = -0.45;
	r.st.verdict = VERDICT_DESCRIPTIVE;
	is_str(fmt_row(compare_fmt_change_ci, &r), "-0.45 pp", "a point difference, no CI");
	is_str(fmt_row(compare_fmt_ci, &r), "", "no CI prints nothing");
	is_str(fmt_row(compare_fmt_verdict, &r), "DESCRIPTIVE", "descriptive");
	is_str(compare_claim_words("consistent"), "consistent with the claim", "claim words");
	ok(compare_claim_words(NULL) == NULL, "no claim, no words");
}

/* The loaders of the report pages: a job's rows without the profile, in reading order; A/A rows of a metric. */
static void test_loaders(struct db *db)
{
	struct compare_result res, *m;
	size_t n = 0;

	ok(compare_load(db, 1, 0, &res) == 1, "compare_load without the profile");
	is_int(res.n_prof, 0, "no profile read");
	compare_sort_rows(&res);
	ok(res.n_rows >= 3 && !strcmp(res.rows[0].metric, "tps") && !strcmp(res.rows[1].metric, "cpu_us_per_op"),
	   "reading order: throughput, then cost (%s, %s)", res.n_rows ? res.rows[0].metric : "-",
	   res.n_rows > 1 ? res.rows[1].metric : "-");
	if (res.n_rows)
		is_int(compare_direction(&res.rows[0]), 1, "tps went up: the better way");
	compare_result_free(&res);
	ok(compare_load(db, 42, 0, &res) == 0, "no rows: 0");
	compare_result_free(&res);

	ok(compare_load_metric(db, "udp_rr_500", "tps", 0, 10, &m, &n) == 0 && n == 1, "one stored tps comparison");
	if (n) {
		is_int(m[0].job_id, 1, "of job 1");
		is_str(m[0].label_a, "xps-off", "with its labels");
		is_int(m[0].n_rows, 1, "one row");
	}
	compare_results_free(m, n);
	ok(compare_load_metric(db, "udp_rr_500", "tps", COMPARE_LOAD_AA, 10, &m, &n) == 0 && n == 0,
	   "job 1 is not an A/A comparison");
	compare_results_free(m, n);
}

static void test_history(struct db *db)
{
	int64_t n = -1, idx = -1;

	for (int j = 0; j < 12; j++) {
		double v = j >= 6 ? 110 : 100;

		db_run(db, "INSERT INTO jobs (id, name, state, spec, tree, schedule, dut, peer, created)"
			   " VALUES (?1, 'nightly', 'done', '{}', 't', 'nightly', 'd', 'p', ?1)", "i", (int64_t)100 + j);
		for (int b = 0; b < 2; b++) {
			int64_t id = 1000 + j * 10 + b;
			char uid[32];

			snprintf(uid, sizeof(uid), "n%lld", (long long)id);
			db_run(db, "INSERT INTO runs (id, uid, job_id, side, workload, seq, created)"
				   " VALUES (?1, ?2, ?3, 'B', 'w', 1, 0)", "isi", id, uid,
			       (int64_t)100 + j);
			db_run(db, "INSERT INTO metrics (run_id, name, value) VALUES (?1, 'tps', ?2)", "id", id,
			       v * (1 + 0.001 * (b ? 1 : -1) * (1 + j % 3)));
		}
	}
	result_rebuild_summaries(db);
	ok(history_update_job(db, 111, 1.0) == 0, "history_update_job after the last nightly");
	db_get_int(db, &n, "SELECT COUNT(*) FROM changepoints", "");
	db_get_int(db, &idx, "SELECT idx FROM changepoints WHERE workload = 'w' AND metric = 'tps'", "");
	is_int(n, 1, "one change point stored");
	is_int(idx, 6, "at night 6");
}

/* A "throughput" claim: tps when the series proposes nothing or udp_rr, not when it proposes only udp_tx. */
static void test_throughput_claim(struct db *db)
{
	struct compare_opts o = COMPARE_OPTS_INIT;
	struct compare_result res;
	const struct compare_row *tps;

	if (db_exec(db, "INSERT INTO expectations (series_id, metric, direction, lo_pct, hi_pct, text)"
			" VALUES (1, 'throughput', 'higher', 2, 4, '+2-4% throughput')")) {
		ok(0, "claim stored");
		return;
	}
	ok(compare_job(db, 1, &o, &res) == 0 && (tps = row(&res, "tps")) != NULL, "compare with a throughput claim");
	if ((tps = row(&res, "tps")))
		is_str(tps->claim, "consistent", "no proposal: throughput is checked against tps (%s)",
		       tps->claim ? tps->claim : "none");
	compare_result_free(&res);

	db_exec(db, "INSERT INTO proposals (series_id, patch_seq, type, params, command)"
		    " VALUES (1, 0, 'udp_tx', '{}', 'udpgso_bench_tx')");
	ok(compare_job(db, 1, &o, &res) == 0 && row(&res, "tps") != NULL, "compare again");
	if ((tps = row(&res, "tps")))
		ok(tps->claim == NULL, "a series proposing only udp_tx: its throughput claim is not about tps (%s)",
		   tps->claim ? tps->claim : "none");
	compare_result_free(&res);

	db_exec(db, "INSERT INTO proposals (series_id, patch_seq, type, params, command)"
		    " VALUES (1, 0, 'udp_rr', '{}', 'super_netperf 500 -t UDP_RR')");
	ok(compare_job(db, 1, &o, &res) == 0 && row(&res, "tps") != NULL, "compare with udp_rr proposed too");
	if ((tps = row(&res, "tps")))
		is_str(tps->claim, "consistent", "udp_rr proposed: checked against tps again");
	compare_result_free(&res);
	db_exec(db, "DELETE FROM proposals; DELETE FROM expectations WHERE metric = 'throughput'");
}

/* The claim check in words: one wording for klab compare, the pages and the mail; never "nan". */
static void test_claim_words(void)
{
	struct compare_row r[2];
	struct compare_result res = { 0 };
	struct buf b = BUF_INIT;

	memset(r, 0, sizeof(r));
	r[0].workload = r[1].workload = "udp_rr_500";
	r[0].metric = "tps";
	r[0].claim = "untestable";
	r[0].claim_pct = 5;
	r[0].st.ci_lo = -35;
	r[0].st.ci_hi = 97;
	r[1].metric = "cpu_us_per_op";
	r[1].claim = "smaller";
	r[1].claim_pct = NAN;
	r[1].st.ci_lo = -3;
	r[1].st.ci_hi = -1;
	res.rows = r;
	res.n_rows = 2;
	ok(compare_fmt_claim(&b, &r[0]) == 1, "an untestable claim is worded");
	is_str(b.buf, "not testable at this precision (95% CI +-66.00%)", "with the CI half-width");
	buf_reset(&b);
	is_int(compare_fmt_claims(&b, &res, &r[0]), 2, "two claims on the workload");
	is_str(b.buf, "claim on tps (+5.0%): not testable at this precision (95% CI +-66.00%); "
		      "claim on cpu_us_per_op (no figure): smaller than claimed", "the claims line, no nan");
	buf_reset(&b);
	r[0].claim = "larger";
	compare_fmt_claim(&b, &r[0]);
	is_str(b.buf, "larger than claimed", "larger");
	r[0].claim = NULL;
	buf_reset(&b);
	ok(compare_fmt_claim(&b, &r[0]) == 0 && b.len == 0, "no claim: nothing");
	buf_release(&b);
}

/* Job 9: +0.7% measured to +-0.01%: EQUIVALENT at the real-time default, CHANGED once its runs are on the icount clock. */
static void test_clock_threshold(struct db *db)
{
	static const double noise[] = { 2e-5, -1e-5, 0, 1e-5, -2e-5, 1.5e-5, -0.5e-5, 0.5e-5 };
	struct compare_opts o = COMPARE_OPTS_INIT;
	struct compare_result res;
	const struct compare_row *r;
	int bad = 0;

	ok(compare_default_threshold(NULL) == 1.0 && compare_default_threshold("real") == 1.0,
	   "real time (and unknown): T = 1%%");
	is_double(compare_default_threshold("icount"), 0.1, 0, "icount: T = 0.1%%");
	bad |= db_exec(db, "INSERT INTO jobs (id, name, state, spec, created) VALUES (9, 'ic', 'done', '{\"warmup_runs\": 0}', 0);"
			   "INSERT INTO job_sides (job_id, side, label) VALUES (9, 'A', 'base'), (9, 'B', 'patched');");
	for (int b = 0; b < 8; b++) {
		const char *side = b % 2 ? "B" : "A";
		char uid[32];

		snprintf(uid, sizeof(uid), "ic%d", b);
		bad |= db_run(db, "INSERT INTO boots (id, job_id, seq, side) VALUES (?1, 9, ?2, ?3)", "iis",
			      (int64_t)900 + b, (int64_t)b + 1, side);
		bad |= db_run(db, "INSERT INTO runs (id, uid, job_id, boot_id, side, workload, seq, created)"
				  " VALUES (?1, ?2, 9, ?1, ?3, 'udp_tx_icount', 0, 0)", "iss", (int64_t)900 + b, uid, side);
		bad |= db_run(db, "INSERT INTO metrics (run_id, name, value, unit, better) VALUES"
				  " (?1, 'tx_pps', ?2, '1/s', 'higher')", "id", (int64_t)900 + b,
			      328288.0 * (b % 2 ? 1.007 : 1.0) * (1 + noise[b]));
	}
	bad |= result_rebuild_summaries(db);
	ok(!bad, "job 9 stored");
	ok(compare_job(db, 9, &o, &res) == 0 && (r = row(&res, "tx_pps")), "compare job 9 (real, the default)");
	if ((r = row(&res, "tx_pps"))) {
		is_str(res.clock, "real", "the result knows its clock: real");
		ok(r->st.ci_hi - r->st.ci_lo < 0.05, "+%.3f%% measured to +-%.4f%%", r->st.change_pct,
		   (r->st.ci_hi - r->st.ci_lo) / 2);
		is_str(stats_verdict_name(r->st.verdict), "EQUIVALENT", "real-time T = 1%%: +0.7%% is EQUIVALENT");
	}
	compare_result_free(&res);
	ok(db_exec(db, "UPDATE runs SET clock = 'icount' WHERE job_id = 9") == 0, "job 9's runs on the icount clock");
	ok(compare_job(db, 9, &o, &res) == 0, "compare job 9 as an icount measurement");
	if ((r = row(&res, "tx_pps"))) {
		is_str(res.clock, "icount", "the result knows its clock: icount");
		is_double(r->st.threshold_pct, 0.1, 0, "T = 0.1%%");
		is_str(stats_verdict_name(r->st.verdict), "CHANGED", "icount T = 0.1%%: +0.7%% is CHANGED");
	}
	compare_result_free(&res);
	o.threshold_pct = 1;
	ok(compare_job(db, 9, &o, &res) == 0 && (r = row(&res, "tx_pps")) &&
	   r->st.verdict == VERDICT_EQUIVALENT, "an explicit T = 1%% still wins over the clock's default");
	compare_result_free(&res);
}


/* Runs of the icount clock: one clock per comparison, the rows say so, a mix is refused naming both. */
static void test_clock(struct db *db)
{
	struct compare_result res;
	const char *clock = NULL;
	struct buf b = BUF_INIT;

	ok(compare_clock_of_runs(db, 1, &clock) == 0 && clock && !strcmp(clock, "real"), "job 1 ran in real time");
	ok(compare_job(db, 1, NULL, &res) == 0 && res.clock && !strcmp(res.clock, "real") && res.n_rows &&
	   res.rows[0].clock && !strcmp(res.rows[0].clock, "real"), "a real-time comparison says so");
	compare_fmt_measured_by(&b, &res.rows[0]);
	is_str(b.buf, "measured in real time (wall-clock rates, per-CPU time)", "measured in real time");
	buf_reset(&b);
	is_int(compare_fmt_clock_note(&b, &res), 0, "no clock note in real time");
	compare_result_free(&res);

	db_exec(db, "UPDATE runs SET clock = 'icount' WHERE job_id = 1 AND side = 'B'");
	ok(compare_clock_of_runs(db, 1, &clock) == -1, "job 1 now mixes clocks");
	ok(compare_job(db, 1, NULL, NULL) == -1, "compare_job refuses a mix of clocks");
	ok(compare_kernels(db, "xps-off", "xps-on", NULL, &res) == -1, "compare_kernels refuses it too");

	db_exec(db, "UPDATE runs SET clock = 'icount' WHERE job_id = 1");
	ok(compare_job(db, 1, NULL, &res) == 0 && res.clock && !strcmp(res.clock, "icount"), "an icount comparison");
	buf_reset(&b);
	if (res.n_rows)
		compare_fmt_measured_by(&b, &res.rows[0]);
	is_str(b.buf, "measured by instruction count (icount clock: path length, not hardware throughput)",
	       "measured by instruction count");
	buf_reset(&b);
	ok(compare_fmt_clock_note(&b, &res) == 1 && strstr(b.buf, "not hardware throughput") &&
	   strstr(b.buf, "insn_per_op is instructions per operation"), "the note says what an icount figure is");
	compare_result_free(&res);
	ok(compare_load(db, 1, 0, &res) == 1 && res.n_rows && res.rows[0].clock &&
	   !strcmp(res.rows[0].clock, "icount"), "loaded rows carry the clock of their runs");
	compare_result_free(&res);
	db_exec(db, "UPDATE runs SET clock = 'real'");
	compare_job(db, 1, NULL, NULL);
	buf_release(&b);
}

/*
 * A claim on cycles ("saves 8-12% of cycles", stored as cpu_us_per_op) on
 * runs that counted cycles: checked on cycles_per_op, not on CPU time too,
 * and the words say so; computed and loaded alike.
 */
static void test_cycles_claim(struct db *db)
{
	struct compare_opts o = COMPARE_OPTS_INIT;
	struct compare_result res;
	const struct compare_row *cyc, *cpu;
	struct buf b = BUF_INIT;

	/* the PMU's cycles fall 8% where CPU time falls 10% (frequency, stalls): a figure of its own */
	ok(db_exec(db, "INSERT INTO metrics (run_id, name, value, unit, better) SELECT run_id, 'cycles_per_op', "
		       "value * (CASE WHEN r.side = 'B' THEN 2760.0 / 0.9 ELSE 3000 END), 'cycle', 'lower' "
		       "FROM metrics JOIN runs r ON r.id = run_id WHERE name = 'cpu_us_per_op'") == 0 &&
	   result_rebuild_summaries(db) == 0, "cycles_per_op beside cpu_us_per_op");
	ok(compare_job(db, 1, &o, &res) == 0, "compare with cycles counted");
	cyc = row(&res, "cycles_per_op");
	cpu = row(&res, "cpu_us_per_op");
	ok(cyc && cpu && cyc->headline, "a cycles_per_op row, a headline metric");
	if (cyc && cpu) {
		/* CPU time alone said "consistent" (test_job): the verdict here is the cycles' own */
		is_str(cyc->claim, "smaller", "the claim on cycles checked on cycles_per_op: %+.2f%% [%+.2f, %+.2f] "
		       "is smaller than -8..-12%%", cyc->st.change_pct, cyc->st.ci_lo, cyc->st.ci_hi);
		ok(cpu->claim == NULL && cpu->claim_on == NULL, "and not on cpu_us_per_op as well");
		is_int(compare_metric_rank("cycles_per_op"), compare_metric_rank("cpu_us_per_op"), "read as a cost");
		compare_fmt_claims(&b, &res, cyc);
		is_str(b.buf, "claim on cycles_per_op (-10.0%, cycles the PMU counted): smaller than claimed",
		       "the words say what stood for cycles");
	}
	compare_result_free(&res);
	ok(compare_load(db, 1, 0, &res) == 1 && (cyc = row(&res, "cycles_per_op")) && cyc->claim_on &&
	   !strcmp(cyc->claim_on, "cpu_us_per_op") && !row(&res, "cpu_us_per_op")->claim_on,
	   "loaded rows: the claim's metric is found on the same row again");
	buf_reset(&b);
	compare_fmt_claim_basis(&b, cyc);
	is_str(b.buf, "cycles the PMU counted", "its basis");
	compare_result_free(&res);
	db_exec(db, "DELETE FROM metrics WHERE name = 'cycles_per_op'");
	result_rebuild_summaries(db);
	compare_job(db, 1, NULL, NULL);
	buf_release(&b);
}

/* compare_decided(): one boot a side decides only with a calibration (a look of boots = 1..N). */
static void test_decided(void)
{
	struct compare_row rows[2];
	struct compare_result res = { 0 };

	memset(rows, 0, sizeof(rows));
	res.rows = rows;
	res.n_rows = 2;
	rows[0].headline = rows[1].headline = 1;
	rows[0].st.verdict = VERDICT_CHANGED;
	rows[1].st.verdict = VERDICT_EQUIVALENT;
	rows[0].st.n_a = rows[0].st.n_b = rows[1].st.n_a = rows[1].st.n_b = 2;
	is_int(compare_decided(&res), 1, "2 boots a side, CHANGED and EQUIVALENT: decided");
	rows[1].st.verdict = VERDICT_INCONCLUSIVE;
	is_int(compare_decided(&res), 0, "an INCONCLUSIVE headline: not decided");
	rows[1].headline = 0;
	is_int(compare_decided(&res), 1, "a row that is no headline does not count");
	rows[1].headline = 1;
	rows[1].st.verdict = VERDICT_CHANGED;
	rows[0].st.n_a = rows[0].st.n_b = rows[1].st.n_a = rows[1].st.n_b = 1;
	rows[0].st.cal = STATS_CAL_USED;
	is_int(compare_decided(&res), 0, "1 boot a side, one headline without a calibration: not decided");
	rows[1].st.cal = STATS_CAL_REJECTED;
	is_int(compare_decided(&res), 0, "nor with its calibration rejected");
	rows[1].st.cal = STATS_CAL_USED;
	is_int(compare_decided(&res), 1, "1 boot a side, every headline calibrated: decided");
	rows[1].st.n_b = 2;
	rows[1].st.cal = STATS_CAL_NONE;
	is_int(compare_decided(&res), 0, "1 boot on one side only: still needs the calibration");
}

int main(void)
{
	test_decided();
	test_claim_words();
	char *path = tap_db_path("klab.db");
	struct db *db = NULL;

	if (db_open(path, &db)) {
		ok(0, "open %s", path);
		return done_testing();
	}
	ok(make_job(db) == 0, "fixture job stored");
	test_job(db);
	test_formatters();
	test_loaders(db);
	test_throughput_claim(db);
	test_cycles_claim(db);
	test_clock(db);
	test_history(db);
	test_clock_threshold(db);
	db_close(db);
	free(path);
	return done_testing();
}
