/* orch-monitor-cost.c: the monitor-cost table from observation runs against the measurement runs of their boot. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare/monitor_cost.h"
#include "log.h"
#include "report/report_observe.h"
#include "store/db.h"
#include "tap.h"

#define M(side, boot, seq, rate, per_op) { side, boot, 0, NULL, seq, rate, per_op }
#define O(side, boot, what, rate, per_op) { side, boot, 1, what, 0, rate, per_op }

/*
 * The demo's case on the icount lab (issue 34): udp_tx_dummy with a bpftrace
 * probe on sock_wfree, which only the baseline calls. Measurement runs (edge
 * monitors) take 3081 instructions a packet on A and 3064 on B; with the
 * probe, 6654 and 6229. A warm-up run (seq 0) with a wild value must not
 * count; boot 3 of A has no observation run and must not count either.
 */
static void test_demo(void)
{
	const struct run_cost runs[] = {
		M('A', 1, 0, 1e6, 9999), M('A', 1, 1, 1e9 / 3081, 3081), M('A', 1, 2, 1e9 / 3081, 3081),
		O('A', 1, "bpftrace", 1e9 / 6654, 6654), O('A', 1, "bare", 1e9 / 3080.9, NAN),
		M('B', 2, 1, 1e9 / 3064, 3064), M('B', 2, 2, 1e9 / 3064, 3064),
		O('B', 2, "bpftrace", 1e9 / 6229, 6229), O('B', 2, "bare", 1e9 / 3063.95, NAN),
		M('A', 3, 1, 1e9 / 5000, 5000), M('A', 3, 2, 1e9 / 5000, 5000),
	};
	struct mc_row rows[4];
	size_t n = monitor_cost_table(runs, sizeof(runs) / sizeof(runs[0]), 1, 1, 0.1, rows, 4);

	is_int(n, 2, "two monitors: bpftrace and bare");
	is_str(rows[0].monitor, "bpftrace", "rows in order of appearance");
	is_double(rows[0].a.per_op, 6654 - 3081, 1e-9, "bpftrace costs A 3573 insn/op");
	is_double(rows[0].b.per_op, 6229 - 3064, 1e-9, "and B 3165");
	is_double(rows[0].a.per_op_pct, 3573.0 / 3081 * 100, 1e-9, "+116%% of A's path");
	is_double(rows[0].a.rate_pct, (6654.0 / 3081 - 1) * 100, 1e-9, "the rate tells the same on a CPU-bound run");
	is_int(rows[0].a.boots, 1, "one observation boot on A (boot 3 has none)");
	ok(rows[0].differs, "a probe that costs the sides differently is flagged");
	is_str(rows[1].monitor, "bare", "the bare run's row");
	is_double(rows[1].a.rate_pct, (3081 / 3080.9 - 1) * 100, 1e-9, "the edge monitors' cost on A, from the rate");
	ok(isnan(rows[1].a.per_op), "a bare run has no cost per op (no cpu monitor)");
	ok(!rows[1].differs, "edge monitors that cost both sides alike are not flagged");
	ok(rows[0].a.rate_ci >= 0 && rows[0].a.rate_ci < 1e-9, "two equal measured runs: an interval of nothing");
}

/* The interval of a cost from the measured runs' spread: t(.975, n - 1) CoV sqrt(1 + 1/n). */
static void test_interval(void)
{
	const struct run_cost runs[] = {
		M('A', 1, 1, 99, NAN), M('A', 1, 2, 101, NAN), M('A', 1, 3, 100, NAN), O('A', 1, "bpftrace", 90, NAN),
		M('B', 2, 1, 100, NAN), O('B', 2, "bpftrace", 90, NAN),
	};
	struct mc_row rows[1];
	size_t n = monitor_cost_table(runs, sizeof(runs) / sizeof(runs[0]), 1, 1, 0.1, rows, 1);

	is_int(n, 1, "one monitor");
	is_double(rows[0].a.rate_pct, (100.0 / 90 - 1) * 100, 1e-9, "A: 11.1%% more time per op");
	is_double(rows[0].a.rate_ci, 4.302652729749464 * 0.01 * sqrt(1 + 1.0 / 3) * 100, 1e-6,
		  "A's interval: t(.975, 2) x CoV 1%% x sqrt(4/3)");
	ok(isnan(rows[0].b.rate_ci), "one measured run on B: no interval");
}

/* A difference between the sides inside their combined interval is noise, not a flag. */
static void test_noise_not_flagged(void)
{
	const struct run_cost runs[] = {
		M('A', 1, 1, 99, NAN), M('A', 1, 2, 101, NAN), O('A', 1, "perf-stat", 98, NAN),
		M('B', 2, 1, 99, NAN), M('B', 2, 2, 101, NAN), O('B', 2, "perf-stat", 99, NAN),
		M('A', 3, 1, 100, NAN), M('A', 3, 2, 100.0001, NAN), O('A', 3, "bpftrace", 50, NAN),
		M('B', 4, 1, 100, NAN), M('B', 4, 2, 100.0001, NAN), O('B', 4, "bpftrace", 60, NAN),
	};
	struct mc_row rows[2];
	size_t n = monitor_cost_table(runs, sizeof(runs) / sizeof(runs[0]), 1, 1, 0.1, rows, 2);

	is_int(n, 2, "two monitors");
	ok(fabs(rows[0].a.rate_pct - rows[0].b.rate_pct) > 0.1, "perf-stat's sides are 1%% apart, over the threshold");
	ok(!rows[0].differs, "... but inside their interval (runs 2%% apart): not flagged");
	ok(rows[1].differs, "bpftrace's 100%% against 67%% with runs 1 ppm apart: flagged");
}

/* A sampler that costs both sides the same is not flagged; a lower-is-better rate turns round. */
static void test_alike(void)
{
	const struct run_cost runs[] = {
		M('A', 1, 0, 100, 10), M('A', 1, 1, 100, 10), O('A', 1, "perf-profile", 101, 10.1),
		M('B', 2, 0, 50, 5), M('B', 2, 1, 50, 5), O('B', 2, "perf-profile", 50.5, 5.05),
	};
	struct mc_row rows[2];
	size_t n = monitor_cost_table(runs, sizeof(runs) / sizeof(runs[0]), 0, 0, 0.1, rows, 2);

	is_int(n, 1, "one monitor");
	is_double(rows[0].a.rate_pct, 1.0, 1e-9, "latency-like rate: +1%% with the sampler");
	is_double(rows[0].b.per_op_pct, 1.0, 1e-9, "B's cost per op +1%%");
	ok(!rows[0].differs, "1%% on both sides is not flagged");
}

/* Observation runs without measurement runs in their boot, or of no side, give no row. */
static void test_no_reference(void)
{
	const struct run_cost runs[] = {
		O('A', 1, "bpftrace", 100, 10), M('B', 2, 0, 100, 10), O('B', 2, "bpftrace", 90, 11),
		O('X', 2, "bpftrace", 90, 11),
	};
	struct mc_row rows[2];
	size_t n = monitor_cost_table(runs, sizeof(runs) / sizeof(runs[0]), 1, 1, 0.1, rows, 2);

	is_int(n, 0, "the only measurement run is a warm-up: no reference, no row");
	n = monitor_cost_table(runs, sizeof(runs) / sizeof(runs[0]), 0, 1, 0.1, rows, 2);
	is_int(n, 1, "with no warm-up B's boot has a reference");
	is_int(rows[0].a.boots, 0, "A measured nothing");
	ok(isnan(rows[0].a.rate_pct), "and its cost is unknown");
	ok(!rows[0].differs, "an unknown side is not flagged");
}

/*
 * The same from the database, as the job page and the mail read it
 * (rep_monitor_costs()): a job with warmup_runs 1 whose boots' first run is
 * slow (tps 50, 20 CPU us/op against 100 and 10 after it). A probe that
 * halves A's rate costs it +100% and +10 us/op against the boot's measured
 * runs; were the warm-up in the reference, +66.7% and +6.7.
 */
static void test_from_db(void)
{
	static const struct {
		char side;
		int boot, seq;
		const char *kind, *observes;
		double tps, us;
	} r[] = {
		{ 'A', 1, 0, "measure", NULL, 50, 20 }, { 'A', 1, 1, "measure", NULL, 100, 10 },
		{ 'A', 1, 2, "measure", NULL, 100, 10 }, { 'A', 1, 0, "observe", "bpftrace", 50, 20 },
		{ 'A', 1, 0, "observe", "bare", 100, -1 }, { 'B', 2, 0, "measure", NULL, 50, 20 },
		{ 'B', 2, 1, "measure", NULL, 100, 10 }, { 'B', 2, 2, "measure", NULL, 100, 10 },
		{ 'B', 2, 0, "observe", "bpftrace", 100, 10 }, { 'B', 2, 0, "observe", "bare", 100, -1 },
	};
	struct mc_row rows[4];
	const char *per_op = NULL;
	char *path = tap_db_path("cost.db");
	struct db *db;
	size_t n;

	if (!ok(!db_open(path, &db), "database opens")) {
		free(path);
		return;
	}
	db_exec(db, "INSERT INTO jobs (id, name, state, spec, created) VALUES (1, 'j', 'done', '{\"warmup_runs\": 1}', 0)");
	db_exec(db, "INSERT INTO boots (id, job_id, seq, side) VALUES (1, 1, 1, 'A'), (2, 1, 2, 'B')");
	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
		char side[2] = { r[i].side, 0 }, uid[16];

		snprintf(uid, sizeof(uid), "r%zu", i + 1);
		db_run(db, "INSERT INTO runs (id, uid, job_id, boot_id, side, workload, seq, status, created, kind, observes) "
		       "VALUES (?, ?, 1, ?, ?, 'rr', ?, 'ok', 0, ?, ?)", "isisiss", (int64_t)i + 1, uid, (int64_t)r[i].boot,
		       side, (int64_t)r[i].seq, r[i].kind, r[i].observes);
		db_run(db, "INSERT INTO metrics (run_id, name, value, unit, better) VALUES (?, 'tps', ?, '1/s', 'higher')",
		       "id", (int64_t)i + 1, r[i].tps);
		if (r[i].us > 0)
			db_run(db, "INSERT INTO metrics (run_id, name, value, unit, better) "
			       "VALUES (?, 'cpu_us_per_op', ?, 'us', 'lower')", "id", (int64_t)i + 1, r[i].us);
	}
	n = rep_monitor_costs(db, 1, "rr", NULL, rows, 4, &per_op);
	is_int(n, 2, "two monitors: bpftrace and bare");
	is_str(per_op, "cpu_us_per_op", "a real-clock job's cost per op is CPU time");
	if (n == 2) {
		is_double(rows[0].a.rate_pct, 100, 1e-9, "bpftrace: +100%% time per op on A, the warm-up left out");
		is_double(rows[0].a.per_op, 10, 1e-9, "and +10 us/op");
		is_double(rows[0].b.rate_pct, 0, 1e-9, "nothing on B");
		ok(rows[0].differs, "flagged");
		is_double(rows[1].a.rate_pct, 0, 1e-9, "the bare run: the edge monitors cost nothing");
	}
	db_close(db);
	free(path);
}

int main(void)
{
	log_init("orch-monitor-cost", 0, LOG_ERR);
	test_from_db();
	test_demo();
	test_alike();
	test_no_reference();
	test_interval();
	test_noise_not_flagged();
	return done_testing();
}
