/* report_data.h: what the report pages and the mail report read from the database (no HTML, no text layout). */
#ifndef KLAB_REPORT_DATA_H
#define KLAB_REPORT_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "store/db.h"
#include "report/flamegraph.h"
#include "report/plot.h"
#include "strvec.h"

/*
 * The comparisons themselves come from compare.h (compare_load() and
 * compare_load_metric()); this module reads everything else a report
 * shows. Strings are owned by the structs and freed by the matching
 * _free(); a number that is NULL in the database is NaN. Loaders whose
 * failure only leaves a part of a page empty return what they found.
 */

/* A file-name-safe form of any string (a hash suffix when it had to change), for page and chart names. */
void rep_slug(struct buf *b, const char *s);

/* ---- a job ---- */

struct rep_side {
	char *label;		/* never NULL: "A" or "B" when job_sides has no row */
	char *profile, *tree, *commit, *variant, *release, *build_id, *compiler;
	int64_t kernel_id;
	int present;		/* the job has this side (a row in job_sides) */
};

struct rep_job {
	int64_t id, series_id, order_seed;
	int have_seed;
	char *name, *state, *tree, *schedule, *dut, *peer, *error;
	double created, started, finished;
	/* its series (all NULL / 0 without one) */
	char *s_source, *s_url, *s_subject, *s_author, *s_msgid;
	int64_t s_version, s_total;
	struct rep_side side[2];	/* A, B */
};

/* The one job loader of the pages and the mail. 0, or -1 (logged: "cannot report job 9: no such job"). */
int rep_job_load(struct db *db, int64_t id, struct rep_job *j);
void rep_job_free(struct rep_job *j);

/* The workloads the job has runs of, appended to OUT when not in it yet. */
void rep_job_workloads(struct db *db, int64_t job, struct strvec *out);

/* ---- the test machine, as its boots recorded it ---- */

struct rep_nic {
	char *name, *driver;	/* driver NULL when not recorded */
	int tx_queues, rx_queues;	/* -1 when not recorded */
};

struct rep_sysinfo {
	char *spec_nic;		/* the workload NIC the runs' spec names, NULL when none does */
	struct rep_nic *nics;	/* of the first DUT boot with a sysinfo: spec_nic only, or every NIC but lo */
	size_t n_nics;
	char *cmdline[2];	/* per side, from the boots (A: else the sysinfo's); NULL when not recorded */
	/*
	 * The DUT's PMU as its sysinfo recorded it (agents/sysinfo.c "pmu"):
	 * "cpu: counted", "cpu: not counted: REASON", "none: REASON"; NULL when
	 * not recorded (a sysinfo of an older agent).
	 */
	char *pmu;
};
void rep_sysinfo_load(struct db *db, const struct rep_job *j, struct rep_sysinfo *si);
void rep_sysinfo_free(struct rep_sysinfo *si);

/* Ok runs per workload and side, in that order: how many, and on how many boots. */
struct rep_count {
	char *workload;
	char side;		/* 'A' or 'B' */
	int64_t boots, runs;
};
void rep_counts_load(struct db *db, int64_t job, struct rep_count **out, size_t *n);
void rep_counts_free(struct rep_count *c, size_t n);

/* The performance claims of a series (`expectations`), in patch order. */
struct rep_claim {
	int64_t patch_seq;
	char *metric, *direction, *text;
	double lo, hi;		/* the claimed % range (NaN when not given) */
};
void rep_claims_load(struct db *db, int64_t series_id, struct rep_claim **out, size_t *n);
void rep_claims_free(struct rep_claim *c, size_t n);

/* ---- a workload's runs ---- */

/*
 * When a workload has no comparison yet (one kernel, or a running job):
 * the first of tps, tx_pps, rx_pps, tx_bps that its runs stored, and that
 * metric's unit. *metric NULL when none.
 */
void rep_own_headline(struct db *db, int64_t job, const char *wl, char **metric, char **unit);

/* METRIC of every ok run of the job's workload WL in run order (boot seq, run seq), with the run ids. */
void rep_runs_load(struct db *db, int64_t job, const char *wl, const char *metric,
		   struct plot_run **out, int64_t **run_ids, size_t *n);
/* The run of SIDE whose value is the median of its side (0: none). */
int64_t rep_median_run(const struct plot_run *v, const int64_t *ids, size_t n, char side);
/* A run's uid (NULL when unknown). */
char *rep_run_uid(struct db *db, int64_t run);
/* The per-second samples of METRIC of one run, in time order; their number. */
size_t rep_samples_load(struct db *db, int64_t run, const char *metric, struct plot_xy **out);

/*
 * Per-CPU averages of one side over its ok runs: the busiest
 * REP_MAX_CPUS in CPU order, "all" first. *total: the CPUs there were.
 */
#define REP_MAX_CPUS 16
size_t rep_cpus_load(struct db *db, int64_t job, const char *wl, char side, struct plot_cpu **out,
		     size_t *total);

/* The histograms (bpftrace or latency) of a workload, both sides summed per bucket, by name. */
struct rep_hist {
	char *name;
	struct plot_bucket *bk;	/* labelled as bpftrace prints them: "[1K, 2K)" */
	size_t n;
};
void rep_hists_load(struct db *db, int64_t job, const char *wl, struct rep_hist **out, size_t *n);
void rep_hists_free(struct rep_hist *h, size_t n);

/* One symbol of a profile: mean share per side, Welch p when repeated profiles allow. */
struct rep_prof {
	char *symbol, *dso;
	double a, b, p;
};
/*
 * The CPU list the perf profiles of WORKLOAD in job JOB sampled (the
 * workload's profile_cpus, in the runs' documents), malloc'd; NULL when
 * they sampled every CPU. Several lists are joined with " / ".
 */
char *rep_profile_cpus(struct db *db, int64_t job, const char *workload);

/*
 * The profile of each side for WL: per symbol (summed over comms) the mean
 * share over the profiled runs of the side, a run without the symbol
 * counting as 0; with at least 3 profiled runs per side, Welch's t on the
 * per-run shares gives p. Sorted by the larger share, the top LIMIT.
 * *runs_a, *runs_b: the profiled runs per side. 0 or -1.
 */
int rep_load_profile(struct db *db, int64_t job, const char *wl, size_t limit,
		     struct rep_prof **out, size_t *n_out, int *runs_a, int *runs_b);
void rep_prof_free(struct rep_prof *p, size_t n);

/* ---- monitor gaps: runs whose monitor was not "ok" ---- */

struct rep_gap {
	char side;		/* 'A' or 'B' */
	char *monitor;		/* cpu, perf-stat, perf-profile, bpftrace, nic */
	char *status;		/* unavailable | failed */
	char *reason;		/* the agent's words; NULL when it gave none */
	int64_t runs;		/* ok runs of the side with this monitor, status and reason */
};

struct rep_gaps {
	struct rep_gap *v;	/* by side, monitor, most runs first */
	size_t n;
	int64_t runs[2];	/* ok runs of the workload per side (A, B) */
	int64_t recorded[2];	/* of those, runs whose monitors' statuses were stored (run_monitors) */
};
/* The gaps of workload WL of JOB (run_monitors rows that are not ok). */
void rep_gaps_load(struct db *db, int64_t job, const char *wl, struct rep_gaps *g);
void rep_gaps_free(struct rep_gaps *g);

/* ---- call stacks ---- */

/*
 * The folded stacks of WL per side: each stack's share of a run's samples,
 * averaged over the side's profiled runs (a run without the stack counts
 * 0), both sides merged into one entry per stack, sorted by stack.
 * *runs_a, *runs_b: the runs with stacks per side. 0 or -1.
 */
int rep_stacks_load(struct db *db, int64_t job, const char *wl, struct flame_stack **out, size_t *n,
		    int *runs_a, int *runs_b);
void rep_stacks_free(struct flame_stack *v, size_t n);

/* ---- the index ---- */

struct rep_job_row {
	int64_t id;
	char *name, *state, *dut, *peer, *label_a, *label_b, *subject;
	double created;
	int scheduled;		/* fired by a schedule */
};
/* The MAX most recent jobs, newest first. 0 or -1. */
int rep_job_rows_load(struct db *db, int max, struct rep_job_row **out, size_t *n);
void rep_job_rows_free(struct rep_job_row *v, size_t n);

struct rep_machine {
	char *name, *host, *role, *state, *reason, *last_kernel;
	double last_seen;
	int64_t lease_job;
	int leased;
};
/* Every machine with its lease, by name. 0 or -1. */
int rep_machines_load(struct db *db, struct rep_machine **out, size_t *n);
void rep_machines_free(struct rep_machine *v, size_t n);

/* ---- nightly history ---- */

/* The (workload, metric) pairs with a history page (compared, or with change points), pushed pairwise. 0 or -1. */
int rep_history_keys(struct db *db, struct strvec *out);
/* The unit of WL/METRIC: of its latest comparison, else of any run; NULL when none. */
char *rep_metric_unit(struct db *db, const char *wl, const char *metric);

/*
 * Per scheduled job, the mean of METRIC over the measured runs of its
 * newest side that has it (B, else A), oldest first.
 */
struct rep_hpoint {
	int64_t job;
	double created, value;
	int64_t n;		/* runs */
};
/*
 * Every metric's nightly points of one workload, read in one statement (a
 * history page per metric read them a metric at a time: 50 statements of
 * 18 ms for one report on gen-db's 100M database, against one of 200 ms),
 * and the scheduled jobs, read once.
 */
struct rep_nightly {
	char *wl;
	struct rep_nightly_metric {
		char *name;
		struct rep_hpoint *p;
		size_t n, alloc;
	} *m;
	size_t n, alloc;
	struct rep_night {
		int64_t job;
		double created;
	} *night;		/* by job id */
	size_t n_night;
	int nights_read;
};
/*
 * The points of WL/METRIC, oldest first (none: *n = 0), out of NW, which
 * reads WL's when it holds another workload's (zeroed to start). *out
 * belongs to NW.
 */
int rep_nightly_load(struct db *db, struct rep_nightly *nw, const char *wl, const char *metric,
		     const struct rep_hpoint **out, size_t *n);
void rep_nightly_free(struct rep_nightly *nw);

/* The stored change points of WL/METRIC, oldest first. */
struct rep_cp {
	int64_t job;		/* the first job after the change */
	char *tree, *machines;
	double mean_before, mean_after, change_pct, p, created;
};
int rep_changepoints_load(struct db *db, const char *wl, const char *metric, struct rep_cp **out, size_t *n);
void rep_changepoints_free(struct rep_cp *c, size_t n);

#endif
