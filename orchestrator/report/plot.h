/* plot.h: gnuplot charts for the report pages, all of one report drawn by one gnuplot process. */
#ifndef KLAB_PLOT_H
#define KLAB_PLOT_H

#include <stddef.h>

#include "buf.h"
#include "strvec.h"

/*
 * A batch collects the script of every chart of one report run; one
 * gnuplot process draws them all at plot_batch_run(), reading the script
 * on its stdin (no shell, no temporary script file). Chart data travels
 * inline as gnuplot datablocks; every string from outside (labels,
 * titles) is quoted by one function and drawn with enhanced text off.
 *
 * Palette (readable in grey): side A dark blue #0072B2 with filled
 * circles and solid lines, side B orange #E69F00 with filled triangles
 * and dashed lines; the CPU categories go from dark to light ("other" hatched).
 */
enum plot_format { PLOT_SVG, PLOT_PNG };

struct plot_batch {
	char *dir;			/* gnuplot's working folder: chart files are relative to it */
	enum plot_format fmt;
	struct buf script;
	struct strvec files;		/* every chart file queued, relative to dir */
	int ran;			/* plot_batch_run() was called */
	int processes;			/* gnuplot processes started (0 or 1) */
};

/* Start an empty batch writing charts under DIR in format FMT. */
void plot_batch_init(struct plot_batch *pb, const char *dir, enum plot_format fmt);
void plot_batch_release(struct plot_batch *pb);
/* ".svg" or ".png". */
const char *plot_ext(const struct plot_batch *pb);

/*
 * The gnuplot program: $KLAB_GNUPLOT if set ("none" means no gnuplot),
 * else gnuplot from PATH. NULL when there is none. The result is cached
 * per value of $KLAB_GNUPLOT; the string is owned by plot.c.
 */
const char *plot_gnuplot(void);

/*
 * Run gnuplot once over the queued script (nothing happens for an empty
 * batch). Returns the number of charts queued whose file now exists, or
 * -1 when gnuplot is missing or could not be started. A chart gnuplot
 * failed to draw is simply missing: check with plot_exists(). gnuplot's
 * complaints are logged as warnings.
 */
int plot_batch_run(struct plot_batch *pb);
/* 1 when chart FILE (relative to the batch folder) exists. */
int plot_exists(const struct plot_batch *pb, const char *file);

/* One run's value in run order; boot changes draw reboot lines. */
struct plot_run {
	double value;
	char side;		/* 'A' or 'B' */
	long boot;		/* boot sequence number */
};

/* The 95% CI of B vs A in percent, and the practical threshold (0: none). */
struct plot_ci {
	int have;		/* 0: no comparison row */
	double change, lo, hi, threshold;
};

struct plot_cpu {
	char label[16];		/* "all", "cpu3" */
	double usr, sys, irq, soft, other, idle;	/* percent */
};

struct plot_bucket {
	char label[40];		/* "[1K, 2K)" */
	double a, b;		/* counts of each side */
};

struct plot_xy {
	double x, y;
};

struct plot_segment {
	double x0, x1, mean;
};

/*
 * Each chart function queues one chart into FILE (relative to the batch
 * folder, the extension included) and returns 0. With no data it queues a
 * chart that says "no data" and why (`why`, or a default), never nothing.
 */

/* Every run's value in run order, A and B in two colours, reboots as dotted lines. */
int plot_run_order(struct plot_batch *pb, const char *file, const char *title, const char *ylabel,
		   const struct plot_run *runs, size_t n, const char *label_a, const char *label_b);
/* Dots and a box per side; on the right the % change of B vs A with its CI bar. */
int plot_distribution(struct plot_batch *pb, const char *file, const char *title, const char *ylabel,
		      const double *a, size_t na, const double *b, size_t nb,
		      const char *label_a, const char *label_b, const struct plot_ci *ci);
/* Stacked usr/sys/irq/soft/other/idle bars per CPU, side A's group then side B's. */
int plot_cpu_breakdown(struct plot_batch *pb, const char *file, const char *title,
		       const struct plot_cpu *a, size_t na, const struct plot_cpu *b, size_t nb,
		       const char *label_a, const char *label_b);
/* Two histograms overlaid as share of samples per bucket. */
int plot_histogram(struct plot_batch *pb, const char *file, const char *title, const char *xlabel,
		   const struct plot_bucket *bk, size_t n, const char *label_a, const char *label_b);
/* A per-second series of each side. */
int plot_timeseries(struct plot_batch *pb, const char *file, const char *title, const char *ylabel,
		    const struct plot_xy *a, size_t na, const struct plot_xy *b, size_t nb,
		    const char *label_a, const char *label_b);
/*
 * A history: points in order, segment means as bars, change points as
 * dashed lines before x. `xlabels` (may be NULL) names each point on the
 * x axis, e.g. the job id, when there are few enough to read.
 */
int plot_history(struct plot_batch *pb, const char *file, const char *title, const char *ylabel,
		 const struct plot_xy *pts, size_t n, const struct plot_segment *seg, size_t nseg,
		 const double *cp_x, size_t ncp, const long long *xlabels);
/* One row of a forest plot: a change with its 95% CI and the practical threshold, in %. */
struct plot_forest_row {
	char label[96];		/* "udp_rr_500 tps" */
	double change, lo, hi, threshold;
	int direction;		/* +1 changed the better way (green), -1 the worse way (red), 0 neither (grey) */
};
/*
 * A forest plot: one line per row, top to bottom in the given order, the
 * change as a dot with its CI as a bar, each row's +-threshold shaded, a
 * line at 0. Rows without a change are left out.
 */
int plot_forest(struct plot_batch *pb, const char *file, const char *title, const struct plot_forest_row *rows,
		size_t n);
/* A chart that only says "no data" and why. */
int plot_empty(struct plot_batch *pb, const char *file, const char *title, const char *why);

#endif
