/* report_site.h: one run of the report pages: the pages and charts it writes, the links between them, the HTML pieces every page uses. */
#ifndef KLAB_REPORT_SITE_H
#define KLAB_REPORT_SITE_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "compare/compare.h"
#include "store/db.h"
#include "report/html.h"
#include "report/plot.h"
#include "report/report.h"
#include "util.h"

/*
 * Pages are built in memory while their charts are queued into one
 * gnuplot batch; rep_finish() runs gnuplot once, then writes every page
 * with each chart marker replaced by the chart or, when it is missing, a
 * note saying why. So a page never links to a chart that does not exist.
 */
struct rep_chart {
	char *file;		/* relative to the output folder: charts/NAME.svg */
	char *title;
};

struct rep_page {
	char *name;		/* file name in the output folder */
	struct buf html;
};

struct rep {
	struct db *db;
	char *outdir;
	struct plot_batch pb;
	struct rep_chart *charts;
	size_t n_charts, a_charts;
	struct rep_page *pages;
	size_t n_pages, a_pages;
	struct rep_page *files;	/* other files klab drew itself (flame graphs), written before the pages */
	size_t n_files, a_files;
	int64_t *jobs;		/* jobs whose pages this run writes */
	size_t n_jobs;
	int64_t *pages_on_disk;	/* jobs with a page in outdir when the run started, sorted */
	size_t n_pages_on_disk;
	int no_charts;
	int max_jobs;
	struct buf *why;	/* report_opts.why: the run's first failure (rep_keep()) */
	char generated[32];	/* UTC time of the run, on every page */
};

/*
 * Keep a failure of the run that was logged already as its first one in
 * r->why (report_opts.why), unless there is none or one is kept already.
 */
void rep_keep(struct rep *r, const char *fmt, ...) KLAB_PRINTF(2, 3);
/* Start a run writing under OUTDIR with options O (NULL: defaults). */
void rep_init(struct rep *r, struct db *db, const char *outdir, const struct report_opts *o);
void rep_release(struct rep *r);
/* Draw the charts (one gnuplot process), then write style.css and every page. 0 or -1; ST may be NULL. */
int rep_finish(struct rep *r, struct report_stats *st);

/* "charts/" + the formatted name + the batch's extension (caller frees). */
char *rep_chart_file(struct rep *r, const char *fmt, ...) KLAB_PRINTF(2, 3);
/* Put into HTML the marker of chart FILE (queued with a plot_* function); rep_finish() resolves it. */
void rep_chart_add(struct rep *r, struct buf *html, const char *file, const char *title);
/* Page NAME with TITLE: CONTENT filled into web-static/page.tmpl. 0 or -1. */
int rep_add_page(struct rep *r, const char *name, const char *title, const struct buf *content);
/* File NAME (relative to the output folder) with CONTENT, which the run takes over (CONTENT is left empty). */
void rep_add_file(struct rep *r, const char *name, struct buf *content);
/* Fill web-static/NAME with VARS into OUT. 0 or -1. */
int rep_fill_static(struct buf *out, const char *name, const struct html_var *vars, size_t n);

/* A link to job ID's page when this run writes it or it exists in the folder, else "job ID". */
void rep_job_link(const struct rep *r, struct buf *h, int64_t id);
/* The verdict of a row as a coloured badge (better, worse, changed, equivalent, inconclusive). */
void rep_verdict_badge(struct buf *h, const struct compare_row *c);
/* "tps (1/s)": a metric and its unit, for chart axes (not escaped: gnuplot quotes it). */
void rep_metric_label(struct buf *b, const char *metric, const char *unit);
/* UTC "YYYY-MM-DD HH:MM"; "-" when unknown. */
void rep_fmt_time(struct buf *b, double t);

#endif
