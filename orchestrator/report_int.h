/* report_int.h: what report.c shares with mailreport.c (not an API for other modules). */
#ifndef KLAB_REPORT_INT_H
#define KLAB_REPORT_INT_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "db.h"

/* One row of the comparisons table; NaN for NULL numbers. */
struct rep_cmp {
	int64_t id, job_id, n_a, n_b;
	char *label_a, *label_b, *workload, *metric, *unit, *better, *verdict, *claim;
	double mean_a, mean_b, cov_a, cov_b, change_pct, ci_lo, ci_hi;
	double p_welch, p_holm, p_mwu, hl_ratio, mde_pct, threshold_pct, created;
};

/* The latest comparison per (workload, metric) of a job, headline metrics first. 0 or -1. */
int rep_load_cmps(struct db *db, int64_t job_id, struct rep_cmp **out, size_t *n);
void rep_cmps_free(struct rep_cmp *c, size_t n);
/* +1 the change goes the better way, -1 the worse way, 0 unknown or none. */
int rep_direction(const struct rep_cmp *c);
/* "CHANGED (better)", "EQUIVALENT", ... */
const char *rep_verdict_text(const struct rep_cmp *c);
/* Words for a claim check ("consistent with the claim"), NULL for no claim. */
const char *rep_claim_text(const char *claim);
/* Headline metrics first (tps, tx_pps, ...), then cost, latency, the rest. */
int rep_metric_rank(const char *metric);

/* One symbol of a profile: mean share per side, Welch p when repeated profiles allow. */
struct rep_prof {
	char *symbol, *dso;
	double a, b, p;
};
int rep_load_profile(struct db *db, int64_t job, const char *wl, size_t limit,
		     struct rep_prof **out, size_t *n_out, int *runs_a, int *runs_b);
void rep_prof_free(struct rep_prof *p, size_t n);

char *rep_colstr(struct db_stmt *st, int i);
double rep_coldbl(struct db_stmt *st, int i);
/* 2.268M, 12.5k; "-" for NaN. */
void rep_fmt_si(struct buf *b, double v);
/* +4.91%; "-" for NaN. */
void rep_fmt_pct(struct buf *b, double v);
void rep_fmt_p(struct buf *b, double p);
/* UTC "YYYY-MM-DD HH:MM". */
void rep_fmt_time(struct buf *b, double t);
/* A file-name-safe form of any string (a hash suffix when it had to change). */
void rep_slug(struct buf *b, const char *s);

#endif
