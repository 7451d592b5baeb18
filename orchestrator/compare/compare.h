/* compare.h: A/B comparisons and nightly history from the database (the C API jobs and reports call). */
#ifndef KLAB_COMPARE_H
#define KLAB_COMPARE_H

#include <stdint.h>
#include <stdio.h>

#include "stats/changepoint.h"
#include "store/db.h"
#include "store/jobs.h"
#include "stats/stats.h"

/*
 * Data model (see docs/statistics.md):
 *
 * - The unit of replication is a boot. A boot's value for a metric is the
 *   mean of its measured runs: runs with status 'ok' and seq >= warmup_runs
 *   (runs.seq is the 0-based index of the run within its boot, so with
 *   warmup_runs = 1 the first run of every boot is discarded). A run without
 *   a boot (boot_id NULL, e.g. imported) counts as a boot of its own.
 * - One comparison per (workload, metric) present on both sides. Values are
 *   compared on logs (Welch, t distribution), checked with Mann-Whitney and
 *   Hodges-Lehmann, and given a verdict against the workload's threshold T.
 * - Metrics whose unit is "%" (cpu_busy_pct, ...) and the per-CPU
 *   usr/sys/irq/soft/idle shares of cpu_stats are percentages: they are
 *   compared as point differences, descriptively (verdict DESCRIPTIVE, and
 *   change_pct holds the difference in percentage points, unit "pp").
 *   Per-CPU rows are stored as metric "cpuN.FIELD" ("cpuall.FIELD" for -1).
 * - Holm's correction runs across the headline metrics of one comparison
 *   (the workload's `headline` plus the defaults tps, tx_pps, rx_pps,
 *   latency_p99_us, cycles_per_op, cpu_us_per_op, insn_per_op when present); a headline metric is
 *   CHANGED only when its Holm-adjusted p is also < 0.05 (< alpha: the
 *   level of compare_opts, smaller at the looks of a sequential job). Other metrics keep
 *   p_holm NULL.
 * - Claim check: when the job's series has rows in `expectations` for a
 *   metric, the claimed % change is checked against the 95% CI. A claim on
 *   CPU cost (COMPARE_COST_CLAIM: "saves 10% of cycles") is checked on one
 *   row per workload, the first of compare_cost_rank() the job measured.
 */

/* The metric the intake gives a claim on CPU cost (cycles, CPU time): intake/claims.c. */
#define COMPARE_COST_CLAIM "cpu_us_per_op"
/*
 * The cost metrics in the order a CPU-cost claim prefers them: 0
 * cycles_per_op (cycles a PMU counted per operation), 1 insn_per_op
 * (instructions per operation on the icount clock), 2 cpu_us_per_op (CPU
 * time per operation); -1 for any other metric.
 */
int compare_cost_rank(const char *metric);

/*
 * The clock that measured a comparison's runs: "real" (wall-clock rates,
 * per-CPU time: hardware and TCG guests) or "icount" (a QEMU guest whose
 * clock counts executed instructions: rates are path lengths). NULL means
 * real. The default practical threshold belongs to the clock
 * (docs/statistics.md, "Thresholds"): 1% in real time, 0.1% under icount.
 */
#define COMPARE_CLOCK_REAL "real"
#define COMPARE_CLOCK_ICOUNT "icount"
double compare_default_threshold(const char *clock);

struct compare_opts {
	double threshold_pct;	/* practical threshold T in % for every workload without its own (<= 0: the clock's default) */
	int warmup_runs;	/* runs per boot to discard; < 0: the job spec's "warmup_runs", else 1 */
	const char *workload;	/* only this workload (NULL: all) */
	const char *metric;	/* only this metric (NULL: all) */
	/*
	 * Per-workload thresholds and headline metrics: called with a workload
	 * name, returns T in % (<= 0: use threshold_pct) and sets *headline to
	 * the workload's headline metric or NULL. May be NULL. The CLI passes a
	 * function reading [workload "NAME"] threshold / headline from the config.
	 */
	double (*workload_info)(void *arg, const char *workload, const char **headline);
	void *workload_arg;
	/*
	 * The level of the verdicts (<= 0: 0.05). A look i of K of a job with a
	 * boots range passes stats_seq_alpha(K): CHANGED needs the 1 - alpha CI
	 * to exclude 0 and the Holm-adjusted p < alpha, EQUIVALENT the 1 - 2 alpha
	 * CI inside +-T (docs/statistics.md, "Looking more than once").
	 */
	double alpha;
	/* COMPARE_CLOCK_REAL or COMPARE_CLOCK_ICOUNT for the default threshold; NULL: the clock of the runs (runs.clock). */
	const char *clock;
	/*
	 * 1: judge a job by its own boots only, even on a calibrated instrument
	 * (`klab compare --no-calibration`). 0: a job's metric with a
	 * calibration of its instrument pools it (docs/statistics.md, "A
	 * calibrated instrument"); kernel comparisons never do.
	 */
	int no_calibration;
	/*
	 * NULL, or where compare_job() says why it failed (error_to(): not
	 * logged then; a database failure is logged by the database and its
	 * message put here too), for a caller that keeps the reason (a job's
	 * compare steps).
	 */
	struct buf *why;
};

#define COMPARE_OPTS_INIT { 0, -1, NULL, NULL, NULL, NULL, 0, NULL, 0, NULL }

/*
 * One comparison row: what a row of `comparisons` stores, and what every
 * output (klab compare, the report pages, the mail report) prints through
 * the formatters of compare_fmt.h. The strings are owned by the row.
 */
struct compare_row {
	char *workload;
	char *metric;
	char *unit;		/* may be NULL; "pp" for a percentage compared as a point difference */
	char *better;		/* higher | lower | none | NULL */
	int headline;		/* 1: in the Holm family (a loaded row: p_holm is stored) */
	struct stats_cmp st;	/* the statistics (st.verdict etc.) */
	double p_holm;		/* NaN when not a headline metric */
	char *claim;		/* stats_claim_check(): consistent | smaller | larger | opposite | untestable | NULL */
	char *claim_on;		/* the metric of the series' claim checked here ("throughput", COMPARE_COST_CLAIM), or NULL */
	double claim_pct;	/* the claimed % change (NaN without a claim) */
	const char *clock;	/* "real" or "icount": what timed its runs (compare_clock_of_runs), static */
	/*
	 * The calibration the row was judged with, when st.cal is not
	 * STATS_CAL_NONE (compare/noise.c; not stored in `comparisons`, so a
	 * loaded row has none): the boots it learnt from (of them A/A), when it
	 * last learnt, the jobs.
	 */
	struct compare_noise {
		int64_t boots, aa_boots;
		double date;
		char *jobs;
		int self;	/* 1: the calibration had learnt from this job: its boots were taken out */
	} noise;
};

/* A profile symbol whose share of samples differs between the sides. */
struct compare_prof {
	char *workload;
	char *symbol;
	char *dso;
	double pct_a, pct_b;	/* mean share over the measured runs of each side, in % */
};

/* The result of one comparison (a job, or two kernels). */
struct compare_result {
	int64_t job_id;		/* 0 for a kernel-vs-kernel comparison */
	char *label_a, *label_b;
	char *cache_model;	/* the model's sizes and latencies when a row is modeled (model_*), else NULL */
	struct compare_row *rows;
	size_t n_rows;
	struct compare_prof *prof;	/* sorted by |pct_b - pct_a|, largest first */
	size_t n_prof;
	const char *clock;	/* "real" or "icount", the clock of every run compared (static) */
};

/*
 * The clock of the measured runs of job JOB_ID (runs.clock, migration
 * 0008): *clock = "real" or "icount" (static strings; "real" when the job
 * has no runs). 0, or -1 when its runs mix clocks: the error names both
 * and where each was measured. compare_job() and compare_kernels() refuse
 * such a mix the same way (a path length and a wall-clock rate are not
 * one quantity), and every row of a result carries the clock.
 */
int compare_clock_of_runs(struct db *db, int64_t job_id, const char **clock);

/*
 * Compute the comparisons of a job (side A = baseline, side B = test) from
 * its runs and metrics, and store them in `comparisons`, replacing the
 * job's old rows (one transaction). When `res` is not NULL it receives the
 * result (free with compare_result_free()). 0, or -1 (logged, e.g. "job 12
 * has no runs on side B"; in opts->why when set).
 */
int compare_job(struct db *db, int64_t job_id, const struct compare_opts *opts,
		struct compare_result *res);

/*
 * Compute (not store) a comparison of the runs of kernel A against those
 * of kernel B, across all jobs. A kernel is named by its id ("7"), its
 * release (uname -r), its label in job_sides, its kernels.variant, or a
 * runs.kernel_label. 0, or -1 (logged, e.g. "no runs of kernel 'x'").
 */
int compare_kernels(struct db *db, const char *kernel_a, const char *kernel_b,
		    const struct compare_opts *opts, struct compare_result *res);

/*
 * The one loader of a job's stored comparisons: the latest row per
 * (workload, metric), in the order they were stored. The statistics are
 * not recomputed; what `comparisons` does not store is read again: the
 * claimed % change (claim_pct) from the series' expectations and, with
 * COMPARE_LOAD_PROFILE, the profile differences from the job's runs.
 * 1 found, 0 none, -1 error. compare_load_job() is
 * compare_load(db, job_id, COMPARE_LOAD_PROFILE, res).
 */
#define COMPARE_LOAD_PROFILE 1u
int compare_load(struct db *db, int64_t job_id, unsigned flags, struct compare_result *res);
int compare_load_job(struct db *db, int64_t job_id, struct compare_result *res);

/*
 * The stored comparisons of WORKLOAD/METRIC across jobs, newest first, at
 * most LIMIT; with COMPARE_LOAD_AA only A/A ones (label_a = label_b). *out
 * is an array of *n results of one row each (job, labels, the row); free
 * it with compare_results_free(). 0 or -1.
 */
#define COMPARE_LOAD_AA 2u
int compare_load_metric(struct db *db, const char *workload, const char *metric, unsigned flags,
			size_t limit, struct compare_result **out, size_t *n);

/*
 * Adaptive boots (docs/statistics.md, "Looking more than once"). The plan
 * of a job spec: its looks K (boots_min..boots by ABBA rounds of 2 boots
 * per side), 0 for a plain boot count; *min and *max get the range.
 * compare_spec_alpha() is the level of the job's verdicts: 0.05 / K, 0.05
 * without a range; compare_job() uses it when compare_opts.alpha is not set,
 * so `klab compare JOB` decides as the job did.
 */
#define COMPARE_LOOK_STEP 2
int compare_spec_looks(const struct job_spec *spec, int *min, int *max);
double compare_spec_alpha(const struct job_spec *spec);
/*
 * 1 when RES has headline rows and every one is CHANGED or EQUIVALENT; a row
 * with one boot on a side counts only when it was judged with a calibration
 * (st.cal == STATS_CAL_USED): without one, one boot a side says nothing of
 * the noise, and a look at 1 boot a side (boots = 1..N) goes on to the next.
 */
int compare_decided(const struct compare_result *res);

/* One look of a job, as stored in `looks`: one row per headline metric. */
struct compare_look {
	int look, looks, boots;
	double alpha;
	int decided;
	char *workload, *metric;
	int n_a, n_b;
	enum stats_verdict verdict;
	double change_pct, ci_lo, ci_hi, p_holm;
};
/* Store look LOOK of K at BOOTS per side from RES's headline rows (replacing that look's rows). 0 or -1. */
int compare_store_look(struct db *db, int64_t job_id, int look, int looks, int boots, double alpha,
		       const struct compare_result *res);
/* The looks of a job in order (look, workload, metric): *out of *n (compare_looks_free()). 0 or -1. */
int compare_load_looks(struct db *db, int64_t job_id, struct compare_look **out, size_t *n);
void compare_looks_free(struct compare_look *l, size_t n);

void compare_result_free(struct compare_result *res);
void compare_results_free(struct compare_result *res, size_t n);

/* +1: the row changed the better way (its `better`), -1: the worse way, 0: unknown or none. */
int compare_direction(const struct compare_row *r);
/* Reading order of metrics: throughput (tps, tx_pps, rx_pps, tx_bps), then cost, latency, busy, the rest. */
int compare_metric_rank(const char *metric);
/* Sort the rows by workload, then compare_metric_rank(), then name: the order of the report pages and mail. */
void compare_sort_rows(struct compare_result *res);

/*
 * Print a result through lib/print.h, between the caller's print_begin()
 * and print_end(). As text, the LKP/mmtests-like table: the answer per
 * workload, then per workload one line per metric (base mean ±CoV, %
 * change [95% CI], test mean ±CoV, p, MWU p, verdict, MDE, metric), the
 * per-CPU point differences and the top profile differences. As JSON, one
 * document: job_id, label_a, label_b, clock, "comparisons" (every row with
 * its statistics) and "profile". Used by `klab compare` and by a job's
 * final output; it lives in compare_fmt.c, beside the formatters it uses.
 */
void compare_print(const struct compare_result *res);

/*
 * Nightly history: the series per (tree, machine pair "dut+peer",
 * workload, metric) from jobs fired by a schedule (jobs.schedule NOT NULL,
 * state 'done'), one point per job = the mean of its side-B boot values
 * (side A when the job has no side B), in job order.
 */
struct history_point {
	int64_t job_id;
	double time;		/* jobs.created */
	double value;
	int n_boots;
	int changepoint;	/* 1 when a change point starts at this point */
};

struct history_series {
	char *tree;		/* NULL when the jobs have no tree */
	char *machines;		/* "dut+peer" */
	char *workload;
	char *metric;
	struct history_point *pts;
	size_t n, alloc;
	struct cp_result cps;	/* change points found (changepoint.h) */
};

/*
 * Load every series of WORKLOAD/METRIC (optionally only tree TREE and/or
 * machines "dut+peer"), run the change-point detection on each with
 * threshold T (%) and store the change points in `changepoints` (replacing
 * the old ones of that series). *out is an array of *n series (free with
 * history_free()). 0 or -1.
 */
int history_analyse(struct db *db, const char *workload, const char *metric,
		    const char *tree, const char *machines, double threshold_pct,
		    struct history_series **out, size_t *n);
void history_free(struct history_series *s, size_t n);

/*
 * After a scheduled job finished: analyse every (workload, metric) series
 * the job contributes to and store its change points. 0 or -1.
 */
int history_update_job(struct db *db, int64_t job_id, double threshold_pct);

#endif
