/* orch-noise.c: the calibrated noise model on a real sqlite file: keys, learning (compare/noise.c, store/calib.c), a job's comparison with it, staleness. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "compare/compare.h"
#include "compare/compare_fmt.h"
#include "compare/noise.h"
#include "log.h"
#include "print.h"
#include "store/calib.h"
#include "store/db.h"
#include "store/result.h"
#include "tap.h"
#include "util.h"

#define SYSINFO(cpus)                                                                                          \
	"{\"cpu\": {\"model\": \"QEMU TCG CPU\", \"count\": " #cpus "}, \"kernel\": {\"cmdline\":"          \
	" \"console=ttyS0 klab.name=dut1 klab.mgmt=198.18.0.2 klab.cpus=" #cpus " maxcpus=" #cpus "\"}}"

/* Boot-to-boot and run-to-run effects (ppm) of the A/A job's 8 boots, 2 runs each. */
static const double boot_ppm[] = { 12, -25, 8, 30, -14, 0, -9, -2 };
static const double run_ppm[] = { 3, -3, -5, 5, 2, -2, 4, -4, -1, 1, 6, -6, 0, 0, -3, 3 };

static int64_t n_runs;

/* A boot of JOB with RUNS values VALUE (1 + ppm[i] 1e-6) of `instructions`. */
static int add_boot(struct db *db, int64_t job, int64_t boot, int seq, const char *side, int64_t kernel,
		    const char *sysinfo, const double *values, int runs)
{
	if (db_run(db, "INSERT INTO boots (id, job_id, seq, side, kernel_id, machine, clock, sysinfo, started)"
		       " VALUES (?, ?, ?, ?, ?, 'dut1', 'icount', ?, ?)", "iiisisd", boot, job, (int64_t)seq, side,
		   kernel, sysinfo, (double)boot))
		return -1;
	for (int r = 0; r < runs; r++) {
		char uid[32];

		n_runs++;
		snprintf(uid, sizeof(uid), "r%lld", (long long)n_runs);
		if (db_run(db, "INSERT INTO runs (id, uid, job_id, boot_id, side, kernel_id, workload, seq, machine,"
			       " clock, created) VALUES (?, ?, ?, ?, ?, ?, 'udp_rr', ?, 'dut1', 'icount', 0)", "isiisii",
			   n_runs, uid, job, boot, side, kernel, (int64_t)r) ||
		    db_run(db, "INSERT INTO metrics (run_id, name, value, unit, better) VALUES"
			       " (?1, 'instructions', ?2, 'insn', 'lower'), (?1, 'cpu_busy_pct', 50, '%', 'none')",
			   "id", n_runs, values[r]))
			return -1;
	}
	return 0;
}

static int add_job(struct db *db, int64_t id, const char *state)
{
	return db_run(db, "INSERT INTO jobs (id, name, state, spec, created) VALUES (?, 'j', ?,"
			  " '{\"runs\": 2, \"warmup_runs\": 0, \"workloads\": [{\"name\": \"udp_rr\", \"type\": \"udp_rr\","
			  " \"duration_s\": 1}]}', 0)", "is", id, state);
}

/*
 * Job 1: A/A, 8 boots of kernel 1. Job 2: kernel 1 against kernel 2 (+0.5%),
 * one boot a side. Job 3: as job 2 with 4 vCPUs (another instrument). Job 4:
 * 3 boots a side, one of them 300 ppm off. Job 5: running.
 */
static int fixture(struct db *db)
{
	double v[2];
	int64_t boot = 0;

	if (db_exec(db, "INSERT INTO kernels (id, key, variant, created) VALUES (1, 'k1', 'base', 0), (2, 'k2', 'patched', 0)"))
		return -1;
	if (add_job(db, 1, "done"))
		return -1;
	for (int b = 0; b < 8; b++) {
		for (int r = 0; r < 2; r++)
			v[r] = 1e9 * (1 + 1e-6 * (boot_ppm[b] + run_ppm[2 * b + r]));
		if (add_boot(db, 1, ++boot, b, b % 2 ? "B" : "A", 1, SYSINFO(2), v, 2))
			return -1;
	}
	if (add_job(db, 2, "done") || add_job(db, 3, "done") || add_job(db, 4, "done") || add_job(db, 5, "running"))
		return -1;
	for (int j = 2; j <= 3; j++) {
		v[0] = 1e9 * (1 + 10e-6), v[1] = 1e9 * (1 - 4e-6);
		if (add_boot(db, j, ++boot, 0, "A", 1, j == 2 ? SYSINFO(2) : SYSINFO(4), v, 2))
			return -1;
		v[0] = 1.005e9 * (1 + 3e-6), v[1] = 1.005e9 * (1 - 8e-6);
		if (add_boot(db, j, ++boot, 1, "B", 2, j == 2 ? SYSINFO(2) : SYSINFO(4), v, 2))
			return -1;
	}
	for (int b = 0; b < 6; b++) {
		double f = (b % 2 ? 1.005e9 : 1e9) * (1 + 1e-6 * boot_ppm[b] + (b == 4 ? 300e-6 : 0));

		v[0] = v[1] = f;
		if (add_boot(db, 4, ++boot, b, b % 2 ? "B" : "A", b % 2 ? 2 : 1, SYSINFO(2), v, 2))
			return -1;
	}
	return result_rebuild_summaries(db);
}

static void test_keys(void)
{
	char *k = calib_instrument_key("dut1", "icount", SYSINFO(2)), *k2;
	char w1[CALIB_WL_KEY_LEN + 1], w2[CALIB_WL_KEY_LEN + 1];
	struct job_spec_workload wl = { "udp_rr", "udp_rr", NULL, NULL, 1, 0, NULL, NULL, NULL, NULL, 0, NULL, 0, 0 };

	is_str(k, "dut1;icount;QEMU TCG CPU x2;klab.cpus=2 klab.mgmt klab.name maxcpus=2",
	       "the instrument key: machine, clock, CPU, the lab's words (instance values dropped, sorted)");
	free(k);
	k = calib_instrument_key("dut1", "icount",
				 "{\"cpu\": {\"model\": \"QEMU TCG CPU\", \"count\": 2}, \"kernel\": {\"cmdline\":"
				 " \"maxcpus=2 klab.mgmt=198.18.9.9 klab.cpus=2 quiet klab.name=other\"}}");
	k2 = calib_instrument_key("dut1", "icount", SYSINFO(2));
	is_str(k, k2, "another lab instance's addresses and names give the same key");
	free(k);
	k = calib_instrument_key("dut1", "icount", SYSINFO(4));
	ok(strcmp(k, k2) != 0, "4 vCPUs are another instrument (%s)", k);
	free(k);
	free(k2);
	/* the guests of an icount pool share a key; real-clock machines of a pool do not */
	{
		static const char *const si0 = "{\"cpu\": {\"model\": \"QEMU TCG CPU\", \"count\": 1}, \"kernel\":"
			" {\"cmdline\": \"klab.name=dut0 klab.pool=q klab.mgmt=198.19.128.2\"}}";
		static const char *const si1 = "{\"cpu\": {\"model\": \"QEMU TCG CPU\", \"count\": 1}, \"kernel\":"
			" {\"cmdline\": \"klab.name=dut1 klab.pool=q klab.mgmt=198.19.129.2\"}}";
		char *p0 = calib_instrument_key("dut0", "icount", si0), *p1 = calib_instrument_key("dut1", "icount", si1);

		is_str(p0, "pool:q;icount;QEMU TCG CPU x1;klab.mgmt klab.name klab.pool=q",
		       "an icount pool's guest: the pool names the instrument");
		is_str(p1, p0, "two guests of one icount pool are one instrument");
		free(p0);
		free(p1);
		p0 = calib_instrument_key("dut0", "real", si0);
		p1 = calib_instrument_key("dut1", "real", si1);
		ok(strcmp(p0, p1) != 0 && starts_with(p0, "dut0;real;"), "on the real clock each machine is its own (%s)", p0);
		free(p0);
		free(p1);
	}
	k = calib_instrument_key("dut1", NULL, "not json");
	is_str(k, "dut1;real;?;", "no sysinfo: the CPU part is '?'");
	free(k);

	calib_workload_key(&wl, w1);
	is_int((long long)strlen(w1), CALIB_WL_KEY_LEN, "the workload key is 12 hex digits");
	wl.duration_s = 2;
	calib_workload_key(&wl, w2);
	ok(strcmp(w1, w2) != 0, "a longer window is another workload key");
	calib_workload_key(NULL, w2);
	is_str(w2, "-", "no workload definition: '-'");
}

/* The variances of job 1 by hand: ln(boot mean) about its side's mean (df 3 + 3), ln(run) within boots (df 8). */
static void expected(double *boot_var, double *run_var)
{
	double bl[8], m[2] = { 0, 0 }, ss = 0, rss = 0;

	for (int b = 0; b < 8; b++) {
		double r0 = 1e9 * (1 + 1e-6 * (boot_ppm[b] + run_ppm[2 * b]));
		double r1 = 1e9 * (1 + 1e-6 * (boot_ppm[b] + run_ppm[2 * b + 1]));
		double rm = (log(r0) + log(r1)) / 2;

		bl[b] = log((r0 + r1) / 2);
		m[b % 2] += bl[b] / 4;
		rss += (log(r0) - rm) * (log(r0) - rm) + (log(r1) - rm) * (log(r1) - rm);
	}
	for (int b = 0; b < 8; b++)
		ss += (bl[b] - m[b % 2]) * (bl[b] - m[b % 2]);
	*boot_var = ss / 6;
	*run_var = rss / 8;
}

static const struct compare_row *row(const struct compare_result *r, const char *metric)
{
	for (size_t i = 0; i < r->n_rows; i++)
		if (!strcmp(r->rows[i].metric, metric))
			return &r->rows[i];
	return NULL;
}

static void test_learn(struct db *db)
{
	struct noise_learnt *l = NULL;
	size_t n = 0;
	int64_t jobs[] = { 1, 1 }, bad[] = { 5 }, none[] = { 42 };
	double bv, rv;
	struct calib_row *rows = NULL;
	size_t nrows = 0;
	char *why = NULL;

	expected(&bv, &rv);
	ok(noise_learn(db, jobs, 2, 0, &l, &n) == 0, "noise_learn from the A/A job (named twice)");
	is_int((long long)n, 1, "one calibration: instructions (cpu_busy_pct is a percentage)");
	if (n == 1) {
		is_str(l[0].row.metric, "instructions", "of instructions");
		is_double(l[0].row.boot_var, bv, 1e-20, "boot variance %.3g (sd %.1f ppm) as by hand", bv, 1e6 * sqrt(bv));
		is_double(l[0].row.boot_df, 6, 0, "6 df: 4 boots a side");
		is_double(l[0].row.run_var, rv, 1e-20, "run variance %.3g as by hand", rv);
		is_double(l[0].row.run_df, 8, 0, "8 df: 8 boots of 2 runs");
		is_int(l[0].row.boots, 8, "8 boots");
		is_int(l[0].row.aa_boots, 8, "all A/A");
		is_str(l[0].row.jobs, "1", "from job 1, counted once");
		ok(l[0].is_new, "a new calibration");
	}
	noise_learnt_free(l, n);
	ok(noise_learn(db, jobs, 1, 0, &l, &n) == 0 && n == 1, "learning job 1 again");
	if (n == 1) {
		is_str(l[0].added, "", "adds nothing: the calibration lists it");
		is_double(l[0].row.boot_df, 6, 0, "its df stay 6");
	}
	noise_learnt_free(l, n);
	ok(noise_learn(db, bad, 1, 0, &l, &n) == -1 && n == 0, "a running job is refused");
	ok(noise_learn(db, none, 1, 0, &l, &n) == -1, "a job that does not exist is refused");
	ok(calib_list(db, &rows, &nrows) == 0 && nrows == 1, "calib_list: one row");
	if (nrows == 1) {
		ok(noise_stale(db, &rows[0], &why) == 0 && !why, "not stale while the newest boot of dut1 is on its key");
		free(why);
	}
	calib_rows_free(rows, nrows);
}

static char *printed(const struct compare_result *res, enum print_format fmt)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	print_begin(fmt, f);
	compare_print(res);
	print_end();
	fclose(f);
	return text;
}

static void test_compare(struct db *db)
{
	struct compare_opts o = COMPARE_OPTS_INIT;
	struct compare_result res;
	const struct compare_row *r;
	struct buf b = BUF_INIT;
	char *text;

	ok(compare_job(db, 2, &o, &res) == 0, "compare job 2 (one boot a side)");
	r = row(&res, "instructions");
	ok(r != NULL, "an instructions row");
	if (r) {
		is_int(r->st.cal, STATS_CAL_USED, "judged with the calibration");
		is_str(stats_verdict_name(r->st.verdict), "CHANGED", "+0.5%% with 1 boot a side: CHANGED (CI %.3f..%.3f)",
		       r->st.ci_lo, r->st.ci_hi);
		is_double(r->st.w.df, 6, 0, "df = the calibration's 6 (no own df with one boot a side)");
		is_int(r->noise.aa_boots, 8, "the row names the 8 A/A boots");
		compare_fmt_noise(&b, r);
		ok(starts_with(b.buf, "noise from 8 A/A boots, 20") && strstr(b.buf, " df)"), "the row says so: '%s'",
		   b.buf);
		buf_reset(&b);
	}
	text = printed(&res, PRINT_FMT_TEXT);
	ok(strstr(text, "noise from 8 A/A boots") != NULL, "compare_print's text names the calibration");
	free(text);
	text = printed(&res, PRINT_FMT_JSON);
	ok(strstr(text, "\"source\":\"calibration\"") || strstr(text, "\"source\": \"calibration\""),
	   "the JSON row has a noise object");
	free(text);
	compare_result_free(&res);

	o.no_calibration = 1;
	ok(compare_job(db, 2, &o, &res) == 0, "compare job 2 with no_calibration");
	r = row(&res, "instructions");
	if (r) {
		is_int(r->st.cal, STATS_CAL_NONE, "no calibration");
		is_str(stats_verdict_name(r->st.verdict), "INCONCLUSIVE", "one boot a side is no test, as before");
	}
	compare_result_free(&res);
	o.no_calibration = 0;

	ok(compare_job(db, 1, &o, &res) == 0, "compare job 1, the A/A job the calibration learnt from");
	r = row(&res, "instructions");
	if (r)
		is_int(r->st.cal, STATS_CAL_NONE, "a calibration of this job alone is not pooled with it again");
	compare_result_free(&res);

	ok(compare_job(db, 3, &o, &res) == 0, "compare job 3 (4 vCPUs)");
	r = row(&res, "instructions");
	if (r)
		is_int(r->st.cal, STATS_CAL_NONE, "another instrument key: the calibration does not apply");
	compare_result_free(&res);

	ok(compare_job(db, 4, &o, &res) == 0, "compare job 4 (a boot 300 ppm off)");
	r = row(&res, "instructions");
	if (r) {
		is_int(r->st.cal, STATS_CAL_REJECTED, "the outlying boot rejects the calibration (z %.1f)", r->st.cal_z);
		compare_fmt_noise(&b, r);
		ok(strstr(b.buf, "not used: a boot lies") && strstr(b.buf, "noise from the job's own boots"),
		   "and the row says why: '%s'", b.buf);
	}
	compare_result_free(&res);
	buf_release(&b);
}

static void test_stale(struct db *db)
{
	struct calib_row *rows = NULL;
	size_t n = 0;
	char *why = NULL;
	int64_t jobs[] = { 2 };
	struct noise_learnt *l = NULL;
	size_t nl = 0;

	/* a newer boot of dut1 with 4 vCPUs: the 2-vCPU calibration is stale */
	ok(!db_run(db, "INSERT INTO boots (id, job_id, seq, side, kernel_id, machine, clock, sysinfo)"
		   " VALUES (100, 5, 0, 'A', 1, 'dut1', 'icount', ?)", "s", SYSINFO(4)), "a boot of job 5 on 4 vCPUs");
	ok(calib_list(db, &rows, &n) == 0 && n == 1, "one calibration");
	if (n == 1) {
		is_int(noise_stale(db, &rows[0], &why), 1, "stale once dut1's newest boot has another key");
		ok(why && strstr(why, "x4"), "why: %s", why ? why : "(null)");
	}
	free(why);
	calib_rows_free(rows, n);

	ok(noise_learn(db, jobs, 1, 0, &l, &nl) == 0 && nl == 1, "learning job 2 (an ordinary job)");
	if (nl == 1) {
		is_str(l[0].row.jobs, "1,2", "now from jobs 1 and 2");
		is_double(l[0].row.boot_df, 6, 0, "one boot a side adds no boot df");
		is_int(l[0].row.boots, 10, "10 boots");
		is_double(l[0].row.run_df, 10, 0, "its 2 boots add 2 run df");
		is_int(l[0].row.aa_boots, 8, "still 8 A/A boots");
	}
	noise_learnt_free(l, nl);
	{
		struct compare_opts o = COMPARE_OPTS_INIT;
		struct compare_result res;
		const struct compare_row *r;
		struct buf b = BUF_INIT;

		ok(compare_job(db, 2, &o, &res) == 0, "compare job 2, now in the calibration");
		r = row(&res, "instructions");
		if (r) {
			ok(r->st.cal == STATS_CAL_USED && r->noise.self, "the calibration is used, less job 2's boots");
			is_double(r->st.w.df, 6, 0, "df 6: job 2 is not counted twice");
			compare_fmt_noise(&b, r);
			ok(strstr(b.buf, " less this job's own (sd ") != NULL, "the row says so: '%s'", b.buf);
		}
		buf_release(&b);
		compare_result_free(&res);
	}
	ok(noise_learn(db, jobs, 1, 1, &l, &nl) == 0, "learning job 2 alone (reset)");
	is_int((long long)nl, 0, "has no boot df: nothing stored");
	noise_learnt_free(l, nl);
}

int main(void)
{
	char *path = tap_db_path("klab.db");
	struct db *db = NULL;

	log_init("orch-noise", 0, LOG_ERR);
	test_keys();
	if (db_open(path, &db)) {
		ok(0, "open %s", path);
		return done_testing();
	}
	ok(fixture(db) == 0, "fixture jobs stored");
	test_learn(db);
	test_compare(db);
	test_stale(db);
	db_close(db);
	free(path);
	return done_testing();
}
