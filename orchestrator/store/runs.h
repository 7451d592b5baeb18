/*
 * runs.h: reading the stored runs and their metrics (klab query, a job's
 * runs, a bisection step's boot values, the rows the reports draw) and the
 * boots of a job (the job runner's and the report's). The runs
 * are written by store/result.c; a comparison side's boot values are read
 * by store/side.c.
 */
#ifndef KLAB_STORE_RUNS_H
#define KLAB_STORE_RUNS_H

#include <stddef.h>
#include <stdint.h>

#include "store/db.h"

/* ---- klab query ---- */

/* Which runs and metrics: every field optional (0, NULL, NAN; limit -1 for none). Only runs with status ok. */
struct run_query {
	int64_t job;
	const char *side;		/* A or B */
	const char *tree;		/* of the run's job, or of its kernel */
	const char *kernel;		/* an id, a release, a variant or a side's label (store/side.h) */
	const char *machine;
	const char *workload;		/* a glob when it has * ? [ */
	const char *metric;		/* the same */
	double since, until;		/* COALESCE(started, created) in [since, until) */
	long limit;
};

/* One row: a run and one of its metrics. Strings are valid until the next runs_query_next(). */
struct run_metric_row {
	int64_t run;
	int64_t job, boot;		/* 0: none */
	const char *side, *kernel;	/* kernel: the run's label, else its kernel's release, variant or id */
	const char *machine, *workload;
	int seq;
	double time;			/* COALESCE(started, created) */
	const char *metric;
	double value;
	const char *unit;
};

struct run_query_iter;

/* Start the query: NULL on an error (logged). Rows come by run and metric name. */
struct run_query_iter *runs_query_open(struct db *db, const struct run_query *q);
/* The next row into ROW: 1, 0 at the end, -1 on an error (logged). */
int runs_query_next(struct run_query_iter *it, struct run_metric_row *row);
void runs_query_close(struct run_query_iter *it);

/* ---- a job's runs ---- */

/* How many runs job JOB_ID has stored. */
int64_t runs_count_of_job(struct db *db, int64_t job_id);

/* A run of a job as `klab job ID` lists it (strings NULL where the column is). */
struct job_run {
	int64_t id;
	const char *uid, *side, *workload;
	int64_t seq;
	int64_t boot_seq;		/* its boot's seq, -1 without a boot */
	const char *status, *machine, *profile;
	double headline;		/* its tps or tx_pps, NAN without either */
};

/* Call FN with the runs of job JOB_ID in id order; stops at FN's first nonzero, which it returns. 0, or -1. */
int runs_of_job_each(struct db *db, int64_t job_id, int (*fn)(const struct job_run *r, void *data), void *data);

/* Whether a run with UID is stored (job/job_steps.c: a result already in is not fetched again): 0 no, 1 with status ok, 2 with another (disturbed). */
int runs_uid_stored(struct db *db, const char *uid);

/*
 * A disturbed run (issue 34; docs/qemu-icount.md, "A run that did other
 * work"): on a one-CPU icount machine the runs of a boot share one path
 * length to ppm, so a run whose insn_per_op is above the lowest of its boot's
 * other measurement runs of the workload counted instructions that were not
 * the workload's. *PCT gets how far above (%), NAN when there is nothing to
 * compare (no insn_per_op: not icount; no other run; more than one CPU).
 * 0, or -1 (logged).
 */
int runs_icount_excess(struct db *db, int64_t run_id, double *pct);

/* Set the status of run RUN_ID ('ok', or RUN_DISTURBED: out of every comparison, kept for the page). */
#define RUN_DISTURBED "disturbed"
int runs_set_status(struct db *db, int64_t run_id, const char *status);

/* ---- a job's boots ---- */

/*
 * Boot SEQ of job JOB_ID begins: its row, made or made again with KERNEL_ID
 * (0: none), MACHINE, STARTED and CLOCK (the machine's clock). 0, or -1 (logged).
 */
int boots_start(struct db *db, int64_t job_id, int seq, const char *side, int64_t kernel_id, const char *machine,
		double started, const char *clock);

/* The columns of a boot that the job runner fills in as it verifies the boot. */
enum boot_field {
	BOOT_MACHINE_BOOT_ID,	/* the machine's boot id when it came up */
	BOOT_BUILD_ID,		/* the running kernel's build id */
	BOOT_RELEASE,		/* the running kernel's release */
	BOOT_SYSINFO,		/* klab-agent sysinfo's document */
	BOOT_MACHINE,		/* the dut it ran on (boots_start() sets it) */
};

/* Set FIELD of boot SEQ of job JOB_ID to VALUE. 0, or -1 (logged). */
int boots_set(struct db *db, int64_t job_id, int seq, enum boot_field field, const char *value);
/* FIELD of boot SEQ of job JOB_ID into *OUT (malloc'd; NULL without the row or value). 1, 0, -1 as db_get_str(). */
int boots_get(struct db *db, int64_t job_id, int seq, enum boot_field field, char **out);
/* The id of boot SEQ of job JOB_ID into *ID (untouched without the row). 1, 0, -1 as db_get_int(). */
int boots_id(struct db *db, int64_t job_id, int seq, int64_t *id);

/* ---- a bisection's steps ---- */

/*
 * The per-boot values (mean of the measured runs of each boot) of METRIC
 * in WORKLOAD's runs of side SIDE of the jobs of step SEQ of bisection ID,
 * in boot order, into *OUT (malloc'd, *N of them). 0, or -1.
 */
int runs_bisect_step_values(struct db *db, int64_t id, int seq, const char *side, const char *workload,
			    const char *metric, double **out, size_t *n);

/* How many runs of WORKLOAD are stored (*RUNS), and how many of their metric rows are METRIC (*HAS). */
void runs_workload_metric_count(struct db *db, const char *workload, const char *metric, int64_t *runs, int64_t *has);

/* ---- a run's and a job's rows for the reports (report/report_data.c) ---- */

/* Call FN with each sample (T, VALUE) of METRIC in run RUN, by t. 0, or -1 (FN not called). */
int samples_each(struct db *db, int64_t run, const char *metric, void (*fn)(double t, double value, void *data),
		 void *data);

/* A bucket of a histogram of a job's workload, its counts summed over the runs of each side. */
struct hist_bucket_row {
	const char *name;		/* NULL where the column is */
	double lo, hi;
	double a, b;			/* the counts of sides A and B */
};

/*
 * Call FN with the buckets of the histograms of WORKLOAD's ok runs of job
 * JOB (the measurement runs', and bpftrace's @maps of any run), by name
 * and lo. 0, or -1 (FN not called).
 */
int histograms_of_job_each(struct db *db, int64_t job, const char *workload,
			   void (*fn)(const struct hist_bucket_row *h, void *data), void *data);

/* A row of job_metrics: a job side's value of a metric (name NULL where the column is). */
struct job_metric_row {
	const char *name;
	int64_t job_id;
	const char *side;
	double value;
	int64_t n;
};

/*
 * Call FN with the job_metrics rows of WORKLOAD of every job, by name,
 * job and side. 0 once all are read, -1 (an error in the middle: FN was
 * called with the rows before it).
 */
int job_metrics_of_workload_each(struct db *db, const char *workload,
				 void (*fn)(const struct job_metric_row *m, void *data), void *data);

/* Call FN with each workload of job JOB's runs, by name (NULL where the column is). 0, or -1 (FN not called). */
int runs_workloads_of_job_each(struct db *db, int64_t job, void (*fn)(const char *workload, void *data), void *data);

/* A boot of a job as the report's machine section reads it (strings NULL where the column is). */
struct boot_info_row {
	const char *side, *cmdline, *sysinfo, *machine;
};

/* Call FN with the boots of job JOB by seq. 0, or -1 (FN not called). */
int boots_of_job_each(struct db *db, int64_t job, void (*fn)(const struct boot_info_row *b, void *data), void *data);

/* The workload NIC the spec of a run of job JOB names (malloc'd, NULL without one) into *NIC. 1, 0, -1 as db_get_str(). */
int runs_spec_nic(struct db *db, int64_t job, char **nic);

/* The measured ok runs of a workload's side in a job: how many boots and runs (workload NULL where the column is). */
struct run_count_row {
	const char *workload, *side;
	int64_t boots, runs;
};

/* Call FN with job JOB's counts by workload and side. 0, or -1 (FN not called). */
int runs_counts_of_job_each(struct db *db, int64_t job, void (*fn)(const struct run_count_row *c, void *data),
			    void *data);

/*
 * The headline metric of WORKLOAD's runs in job JOB (tps, tx_pps, rx_pps,
 * tx_bps, the first there is) into *METRIC (malloc'd, untouched without
 * one). 1, 0, -1 as db_get_str().
 */
int runs_job_headline(struct db *db, int64_t job, const char *workload, char **metric);

/* The unit of METRIC in WORKLOAD's runs of job JOB into *UNIT (as runs_job_headline()). */
int runs_job_metric_unit(struct db *db, int64_t job, const char *workload, const char *metric, char **unit);

/* A measured run's value of a metric, with its side and its boot's seq (0 without a boot). */
struct run_value_row {
	const char *side;		/* NULL where the column is */
	int64_t boot_seq;
	double value;			/* as db_col_num() */
	int64_t run;
};

/*
 * Call FN with METRIC of each measured ok run of WORKLOAD in job JOB, by
 * boot seq, run seq and id. 0, or -1 (FN not called).
 */
int runs_metric_values_each(struct db *db, int64_t job, const char *workload, const char *metric,
			    void (*fn)(const struct run_value_row *v, void *data), void *data);

/* The uid of run RUN into *UID (malloc'd). 1, 0, -1 as db_get_str(). */
int runs_uid(struct db *db, int64_t run, char **uid);

/* A unit of METRIC in any run of WORKLOAD into *UNIT (malloc'd, untouched without one). 1, 0, -1 as db_get_str(). */
int runs_metric_unit(struct db *db, const char *workload, const char *metric, char **unit);

/* The distinct profile_cpus of WORKLOAD's runs in job JOB, joined by " / ", into *OUT. 1, 0, -1 as db_get_str(). */
int runs_profile_cpus(struct db *db, int64_t job, const char *workload, char **out);

/*
 * The cache model of job JOB's runs (a run's "cache_model.model": sizes,
 * ways, line and latencies, docs/cache-model.md), the distinct texts joined
 * by " / ", into *OUT. 1, 0 (no run of the job ran on the model), -1.
 */
int runs_cache_model(struct db *db, int64_t job, char **out);

/* A CPU's mean shares (in %) over a job side's measured runs of a workload; cpu -1 is the machine's total. */
struct cpu_avg_row {
	int cpu;
	double usr, sys, irq, soft, other, idle;	/* other: nice + iowait + steal */
};

/* Call FN with each CPU of side SIDE's measured runs of WORKLOAD in job JOB, by cpu. 0, or -1 (FN not called). */
int cpu_stats_avg_each(struct db *db, int64_t job, const char *workload, const char *side,
		       void (*fn)(const struct cpu_avg_row *c, void *data), void *data);

/*
 * Call FN with each side (its text, NULL where the column is) of the ok
 * runs of WORKLOAD in job JOB: how many runs, and how many of them
 * recorded their monitors. 0, or -1 (FN not called).
 */
int run_monitors_recorded_each(struct db *db, int64_t job, const char *workload,
			       void (*fn)(const char *side, int64_t runs, int64_t recorded, void *data), void *data);

/* A monitor that did not work in some of a job side's runs (strings NULL where the column is). */
struct monitor_gap_row {
	const char *side, *monitor, *status, *reason;
	int64_t runs;
};

/*
 * Call FN with the monitors whose status is not ok in the ok runs of
 * WORKLOAD in job JOB, by side, monitor, runs (most first) and reason.
 * 0, or -1 (FN not called).
 */
int run_monitors_gaps_each(struct db *db, int64_t job, const char *workload,
			   void (*fn)(const struct monitor_gap_row *g, void *data), void *data);

/* How many of side SIDE's ok runs of WORKLOAD in job JOB have stacks, into *N. 1, 0, -1 as db_get_int(). */
int profile_stacks_runs(struct db *db, int64_t job, const char *workload, const char *side, int64_t *n);

/*
 * Call FN with each stack of side SIDE's ok runs of WORKLOAD in job JOB
 * and the sum over the runs of its share of the run's samples (STACK
 * NULL where the column is). 0, or -1 (FN not called).
 */
int profile_stacks_shares_each(struct db *db, int64_t job, const char *workload, const char *side,
			       void (*fn)(const char *stack, double share_sum, void *data), void *data);

/*
 * Call FN with each side (its text, NULL where the column is) of the ok
 * runs of WORKLOAD in job JOB that have a profile, and how many. 0, or -1
 * (FN not called).
 */
int profile_rows_runs_each(struct db *db, int64_t job, const char *workload,
			   void (*fn)(const char *side, int64_t runs, void *data), void *data);

/* A symbol's share in one profiled run (strings NULL where the column is; dso "" when none). */
struct profile_sum_row {
	const char *side;
	int64_t run;
	const char *symbol, *dso;
	double percent;
};

/* Call FN with each symbol of each ok profiled run of WORKLOAD in job JOB. 0, or -1 (FN not called). */
int profile_rows_each(struct db *db, int64_t job, const char *workload,
		      void (*fn)(const struct profile_sum_row *p, void *data), void *data);

/* ---- the nightly history ---- */

/* A boot value of a nightly job (boot_metrics, in job, side and boot order). Strings valid until the next call. */
struct nightly_boot {
	const char *tree, *machines;	/* machines: dut+peer */
	int64_t job_id;
	double created;			/* the job's */
	const char *side;
	double value;
};

struct nightly_boot_iter;

/*
 * The boot values of WORKLOAD's METRIC in the nightly jobs that are done,
 * of TREE and MACHINES (NULL: any). NULL on an error (logged).
 */
struct nightly_boot_iter *nightly_boots_open(struct db *db, const char *workload, const char *metric,
					     const char *tree, const char *machines);
/* The next boot value: 1, 0 at the end, -1 on an error (not logged: db_errmsg() has it). */
int nightly_boots_next(struct nightly_boot_iter *it, struct nightly_boot *b);
void nightly_boots_close(struct nightly_boot_iter *it);

/*
 * Call FN with each (workload, metric) job JOB_ID measured, in that order,
 * with its job's tree and machines (dut+peer). 0, or -1 (logged).
 */
int job_metric_keys_each(struct db *db, int64_t job_id,
			 void (*fn)(const char *workload, const char *metric, const char *tree, const char *machines,
				    void *data), void *data);

#endif
