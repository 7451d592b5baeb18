/* plot.c: gnuplot charts for the report pages, all of one report drawn by one gnuplot process. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "report/plot.h"
#include "run.h"

#define COL_A "#0072B2"
#define COL_B "#E69F00"
#define COL_GRID "#dddddd"
#define COL_MUTED "#888888"

/* dark to light, so that the stack stays readable in grey */
static const char *const cpu_cols[] = { "#08306B", "#2171B5", "#CC79A7", "#FDAE6B", "#777777", "#F0F0F0" };
/* "other" is hatched: its grey would sit between soft and idle */
static const char *const cpu_fill[] = { "", "", "", "", " fs pattern 2", "" };
static const char *const cpu_names[] = { "usr", "sys", "irq", "soft", "other", "idle" };

void plot_batch_init(struct plot_batch *pb, const char *dir, enum plot_format fmt)
{
	memset(pb, 0, sizeof(*pb));
	pb->dir = xstrdup(dir);
	pb->fmt = fmt;
	buf_init(&pb->script, 4096);
	strvec_init(&pb->files);
}

void plot_batch_release(struct plot_batch *pb)
{
	free(pb->dir);
	pb->dir = NULL;
	buf_release(&pb->script);
	strvec_clear(&pb->files);
}

const char *plot_ext(const struct plot_batch *pb)
{
	return pb->fmt == PLOT_PNG ? ".png" : ".svg";
}

const char *plot_gnuplot(void)
{
	static char *cached, *cached_env;
	static int looked;
	const char *env = getenv("KLAB_GNUPLOT");

	if (looked && ((!env && !cached_env) || (env && cached_env && !strcmp(env, cached_env))))
		return cached;
	free(cached);
	free(cached_env);
	cached = NULL;
	cached_env = env ? xstrdup(env) : NULL;
	looked = 1;
	if (env && !strcmp(env, "none"))
		return NULL;
	cached = run_which(env && *env ? env : "gnuplot");
	return cached;
}

/* A gnuplot single-quoted string: '' for ', control characters as spaces, bounded length. */
static void gp_str(struct buf *b, const char *s)
{
	size_t n = 0;

	buf_addch(b, '\'');
	for (; s && *s && n < 200; s++, n++) {
		unsigned char c = (unsigned char)*s;

		if (c == '\'')
			buf_addstr(b, "''");
		else if (c < 0x20 || c == 0x7f)
			buf_addch(b, ' ');
		else
			buf_addch(b, c);
	}
	buf_addch(b, '\'');
}

/* "A: label" as a gnuplot string. */
static void gp_side(struct buf *b, char side, const char *label)
{
	struct buf t = BUF_INIT;

	buf_addf(&t, "%c: %s", side, label ? label : "");
	gp_str(b, t.buf);
	buf_release(&t);
}

static void gp_num(struct buf *b, double v)
{
	if (isfinite(v))
		buf_addf(b, "%.10g", v);
	else
		buf_addstr(b, "NaN");
}

/*
 * Where gnuplot writes chart FILE: a name of this process beside it, renamed
 * over FILE once drawn. Two jobs whose reports share a chart (a workload's
 * history, drawn by every job of it) then never see each other's half-written
 * or just-unlinked file: 64 jobs at once lost 124 history charts that way.
 */
static char *chart_tmp(const char *dir, const char *file)
{
	return dir ? xasprintf("%s/%s.tmp-%ld", dir, file, (long)getpid())
		   : xasprintf("%s.tmp-%ld", file, (long)getpid());
}

/* reset, terminal, output and title: the start of every chart. */
static void chart_begin(struct plot_batch *pb, const char *file, const char *title, int w, int h)
{
	struct buf *s = &pb->script;
	char *tmp = chart_tmp(NULL, file);	/* gnuplot runs in pb->dir */

	strvec_push(&pb->files, file);
	buf_addstr(s, "\nreset\n");
	if (pb->fmt == PLOT_PNG)
		buf_addf(s, "set terminal pngcairo size %d,%d noenhanced font 'sans,10' background rgb 'white'\n", w, h);
	else
		buf_addf(s, "set terminal svg size %d,%d fixed noenhanced font 'sans,11' background rgb 'white'\n", w, h);
	buf_addstr(s, "set output ");
	gp_str(s, tmp);
	free(tmp);
	buf_addstr(s, "\nset title ");
	gp_str(s, title);
	buf_addstr(s, "\nset grid ytics lc rgb '" COL_GRID "'\nset border 3 lc rgb '#444444'\n"
		   "set tics nomirror\nset key outside bottom center horizontal\n");
}

/* SI prefixes (226.0k, 2.38M) for large values, with enough decimals for the range. */
static void gp_yformat(struct buf *s, double lo, double hi)
{
	double m = fmax(fabs(lo), fabs(hi)), scale, step;
	int d;

	if (!isfinite(m) || m < 1e4)
		return;
	scale = m >= 1e9 ? 1e9 : m >= 1e6 ? 1e6 : 1e3;
	step = (hi - lo) / 5 / scale;
	d = step > 0 ? (int)ceil(-log10(step)) : 1;
	if (d < 0)
		d = 0;
	if (d > 4)
		d = 4;
	buf_addf(s, "set format y '%%.%ds%%c'\n", d);
}

static void xy_range(const struct plot_xy *p, size_t n, double *lo, double *hi)
{
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(p[i].y))
			continue;
		if (p[i].y < *lo)
			*lo = p[i].y;
		if (p[i].y > *hi)
			*hi = p[i].y;
	}
}

static void chart_end(struct plot_batch *pb)
{
	buf_addstr(&pb->script, "unset multiplot\nunset output\n");
}

static void gp_label(struct buf *s, const char *axis, const char *text)
{
	buf_addf(s, "set %slabel ", axis);
	gp_str(s, text);
	buf_addch(s, '\n');
}

int plot_empty(struct plot_batch *pb, const char *file, const char *title, const char *why)
{
	struct buf *s = &pb->script;
	struct buf t = BUF_INIT;

	chart_begin(pb, file, title, 720, 200);
	buf_addf(&t, "no data: %s", why && *why ? why : "nothing was recorded for this chart");
	buf_addstr(s, "unset border\nunset tics\nunset key\nunset grid\n"
		   "set xrange [0:1]\nset yrange [0:1]\nset label 1 ");
	gp_str(s, t.buf);
	buf_addstr(s, " at graph 0.5, graph 0.5 center tc rgb '" COL_MUTED "'\nplot 2 notitle\n");
	chart_end(pb);
	buf_release(&t);
	return 0;
}

int plot_run_order(struct plot_batch *pb, const char *file, const char *title, const char *ylabel,
		   const struct plot_run *runs, size_t n, const char *label_a, const char *label_b)
{
	struct buf *s = &pb->script;
	size_t i, na = 0, nb = 0;

	for (i = 0; i < n; i++) {
		if (!isfinite(runs[i].value))
			continue;
		if (runs[i].side == 'A')
			na++;
		else
			nb++;
	}
	if (!na && !nb)
		return plot_empty(pb, file, title, "no run stored a value for this metric");
	chart_begin(pb, file, title, 720, 320);
	gp_label(s, "x", "run, in the order run (dotted lines: reboots)");
	gp_label(s, "y", ylabel);
	{
		double lo = INFINITY, hi = -INFINITY;

		for (i = 0; i < n; i++)
			if (isfinite(runs[i].value)) {
				lo = fmin(lo, runs[i].value);
				hi = fmax(hi, runs[i].value);
			}
		gp_yformat(s, lo, hi);
	}
	buf_addf(s, "set xrange [0.5:%zu.5]\n", n);
	if (n <= 40)
		buf_addstr(s, "set xtics 1\n");
	for (i = 1; i < n; i++)
		if (runs[i].boot != runs[i - 1].boot)
			buf_addf(s, "set arrow from %zu.5, graph 0 to %zu.5, graph 1 nohead dt 3 lc rgb '"
				 COL_MUTED "'\n", i, i);
	for (int side = 'A'; side <= 'B'; side++) {
		buf_addf(s, "$%c << EOD\n", side);
		for (i = 0; i < n; i++) {
			if (runs[i].side != side || !isfinite(runs[i].value))
				continue;
			buf_addf(s, "%zu ", i + 1);
			gp_num(s, runs[i].value);
			buf_addch(s, '\n');
		}
		buf_addstr(s, "EOD\n");
	}
	buf_addstr(s, "plot ");
	if (na) {
		buf_addstr(s, "$A using 1:2 with points pt 7 ps 0.9 lc rgb '" COL_A "' title ");
		gp_side(s, 'A', label_a);
	}
	if (nb) {
		buf_addstr(s, na ? ", " : "");
		buf_addstr(s, "$B using 1:2 with points pt 9 ps 1.1 lc rgb '" COL_B "' title ");
		gp_side(s, 'B', label_b);
	}
	buf_addch(s, '\n');
	chart_end(pb);
	return 0;
}

static void minmax(const double *v, size_t n, double *lo, double *hi)
{
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(v[i]))
			continue;
		if (v[i] < *lo)
			*lo = v[i];
		if (v[i] > *hi)
			*hi = v[i];
	}
}

int plot_distribution(struct plot_batch *pb, const char *file, const char *title, const char *ylabel,
		      const double *a, size_t na, const double *b, size_t nb,
		      const char *label_a, const char *label_b, const struct plot_ci *ci)
{
	struct buf *s = &pb->script;
	double lo = INFINITY, hi = -INFINITY, pad;
	size_t i;

	minmax(a, na, &lo, &hi);
	minmax(b, nb, &lo, &hi);
	if (!isfinite(lo))
		return plot_empty(pb, file, title, "no run stored a value for this metric");
	chart_begin(pb, file, title, 720, 320);
	pad = (hi - lo) * 0.08;
	if (pad <= 0)
		pad = fabs(hi) * 0.01 + 1e-9;
	buf_addstr(s, "unset title\nset label 100 ");
	gp_str(s, title);
	buf_addstr(s, " at screen 0.37, screen 0.95 center\n"
		   "set multiplot\nset lmargin at screen 0.12\nset rmargin at screen 0.62\n"
		   "set bmargin at screen 0.14\nset tmargin at screen 0.88\nunset key\n"
		   "set style boxplot nooutliers\nset style fill empty\nset boxwidth 0.35\n"
		   "set xrange [0.4:2.6]\n");
	gp_yformat(s, lo, hi);
	buf_addstr(s, "set yrange [");
	gp_num(s, lo - pad);
	buf_addch(s, ':');
	gp_num(s, hi + pad);
	buf_addstr(s, "]\nset xtics (");
	gp_side(s, 'A', label_a);
	buf_addstr(s, " 1, ");
	gp_side(s, 'B', label_b);
	buf_addstr(s, " 2)\n");
	gp_label(s, "y", ylabel);
	for (int side = 'A'; side <= 'B'; side++) {
		const double *v = side == 'A' ? a : b;
		size_t nv = side == 'A' ? na : nb;

		buf_addf(s, "$%c << EOD\n", side);
		for (i = 0; i < nv; i++) {
			if (!isfinite(v[i]))
				continue;
			/* a fixed jitter so that equal values stay visible */
			buf_addf(s, "%.3f ", (side == 'A' ? 1.0 : 2.0) + 0.05 * (double)((int)(i % 7) - 3));
			gp_num(s, v[i]);
			buf_addch(s, '\n');
		}
		buf_addstr(s, "EOD\n");
	}
	buf_addstr(s, "plot ");
	if (na)
		buf_addstr(s, "$A using (1):2 with boxplot lc rgb '" COL_A "' lw 1.5 notitle, "
			   "$A using 1:2 with points pt 7 ps 0.8 lc rgb '" COL_A "' notitle");
	if (nb)
		buf_addf(s, "%s$B using (2):2 with boxplot lc rgb '" COL_B "' lw 1.5 notitle, "
			 "$B using 1:2 with points pt 9 ps 0.9 lc rgb '" COL_B "' notitle", na ? ", " : "");
	buf_addch(s, '\n');

	/* right panel: the % change of B vs A and its CI */
	buf_addstr(s, "unset arrow\nunset object\nunset label\nset lmargin at screen 0.74\n"
		   "set rmargin at screen 0.97\nset xrange [0.5:1.5]\nset xtics ('B vs A' 1)\n"
		   "set format y '%g'\nset title 'change, 95% CI'\n");
	gp_label(s, "y", "% change (shaded: threshold)");
	if (ci && ci->have && isfinite(ci->change)) {
		double l = ci->change, h = ci->change, t = fabs(ci->threshold), p;

		if (isfinite(ci->lo) && ci->lo < l)
			l = ci->lo;
		if (isfinite(ci->hi) && ci->hi > h)
			h = ci->hi;
		if (l > -t)
			l = -t;
		if (h < t)
			h = t;
		if (l > 0)
			l = 0;
		if (h < 0)
			h = 0;
		p = (h - l) * 0.15 + 0.1;
		buf_addstr(s, "set yrange [");
		gp_num(s, l - p);
		buf_addch(s, ':');
		gp_num(s, h + p);
		buf_addstr(s, "]\n");
		if (t > 0) {
			buf_addstr(s, "set object 1 rect from graph 0, first ");
			gp_num(s, -t);
			buf_addstr(s, " to graph 1, first ");
			gp_num(s, t);
			buf_addstr(s, " fc rgb '#eeeeee' fs solid 1.0 noborder behind\n");
		}
		buf_addstr(s, "set arrow 1 from graph 0, first 0 to graph 1, first 0 nohead lc rgb '#444444'\n"
			   "$C << EOD\n1 ");
		gp_num(s, ci->change);
		buf_addch(s, ' ');
		gp_num(s, isfinite(ci->lo) ? ci->lo : ci->change);
		buf_addch(s, ' ');
		gp_num(s, isfinite(ci->hi) ? ci->hi : ci->change);
		buf_addstr(s, "\nEOD\nplot $C using 1:2:3:4 with yerrorbars pt 7 ps 1.2 lw 2 lc rgb '#222222' notitle\n");
	} else {
		buf_addstr(s, "set yrange [-1:1]\nset label 2 'no comparison' at graph 0.5, graph 0.5 center tc rgb '"
			   COL_MUTED "'\nplot 2 notitle\n");
	}
	chart_end(pb);
	return 0;
}

static void cpu_block(struct buf *s, char name, const struct plot_cpu *c, size_t n)
{
	size_t i;

	buf_addf(s, "$%c << EOD\n", name);
	for (i = 0; i < n; i++) {
		const double v[6] = { c[i].usr, c[i].sys, c[i].irq, c[i].soft, c[i].other, c[i].idle };

		buf_addf(s, "\"%s\"", c[i].label[0] ? c[i].label : "?");
		for (int k = 0; k < 6; k++) {
			buf_addch(s, ' ');
			gp_num(s, isfinite(v[k]) ? v[k] : 0);
		}
		buf_addch(s, '\n');
	}
	buf_addstr(s, "EOD\n");
}

int plot_cpu_breakdown(struct plot_batch *pb, const char *file, const char *title,
		       const struct plot_cpu *a, size_t na, const struct plot_cpu *b, size_t nb,
		       const char *label_a, const char *label_b)
{
	struct buf *s = &pb->script;
	size_t total = na + nb;
	int w;

	if (!total)
		return plot_empty(pb, file, title, "no per-CPU statistics were recorded (cpu monitor)");
	w = 240 + 34 * (int)total;
	if (w < 720)
		w = 720;
	if (w > 1400)
		w = 1400;
	chart_begin(pb, file, title, w, 340);
	gp_label(s, "y", "CPU time (%)");
	buf_addstr(s, "set yrange [0:100]\nset style data histograms\n"
		   "set style histogram rowstacked title offset 0,-0.6\n"
		   "set style fill solid 1.0 border rgb '#444444'\nset boxwidth 0.75\n"
		   "set key outside right top vertical\nset xtics rotate by -45 font ',9'\n"
		   "set bmargin 6\n");
	cpu_block(s, 'A', a, na);
	cpu_block(s, 'B', b, nb);
	buf_addstr(s, "plot ");
	for (int side = 0; side < 2; side++) {
		size_t n = side ? nb : na;

		if (!n)
			continue;
		if (side && na)
			buf_addstr(s, ", ");
		buf_addstr(s, "newhistogram ");
		gp_side(s, side ? 'B' : 'A', side ? label_b : label_a);
		buf_addstr(s, " lt 1");
		for (int k = 0; k < 6; k++) {
			buf_addf(s, ", $%c using %d%s lc rgb '%s'%s ", side ? 'B' : 'A', k + 2,
				 k == 0 ? ":xtic(1)" : "", cpu_cols[k], cpu_fill[k]);
			if (side && na)
				buf_addstr(s, "notitle");
			else
				buf_addf(s, "title '%s'", cpu_names[k]);
		}
	}
	buf_addch(s, '\n');
	chart_end(pb);
	return 0;
}

int plot_histogram(struct plot_batch *pb, const char *file, const char *title, const char *xlabel,
		   const struct plot_bucket *bk, size_t n, const char *label_a, const char *label_b)
{
	struct buf *s = &pb->script;
	double ta = 0, tb = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		ta += bk[i].a;
		tb += bk[i].b;
	}
	if (!n || (ta <= 0 && tb <= 0))
		return plot_empty(pb, file, title, "no histogram was recorded (bpftrace or latency)");
	chart_begin(pb, file, title, 720, 340);
	gp_label(s, "x", xlabel);
	gp_label(s, "y", "share of samples (%)");
	buf_addstr(s, "set style data histograms\nset style histogram clustered gap 1\n"
		   "set style fill solid 0.9 border rgb '#333333'\nset boxwidth 0.9\n"
		   "set yrange [0:*]\nset xtics rotate by -45 font ',9'\nset bmargin 6\n"
		   "set key inside top right vertical\n$H << EOD\n");
	for (i = 0; i < n; i++) {
		buf_addf(s, "\"%s\" ", bk[i].label);
		gp_num(s, ta > 0 ? 100.0 * bk[i].a / ta : 0);
		buf_addch(s, ' ');
		gp_num(s, tb > 0 ? 100.0 * bk[i].b / tb : 0);
		buf_addch(s, '\n');
	}
	buf_addstr(s, "EOD\nplot $H using 2:xtic(1) lc rgb '" COL_A "' title ");
	gp_side(s, 'A', label_a);
	buf_addstr(s, ", $H using 3 lc rgb '" COL_B "' title ");
	gp_side(s, 'B', label_b);
	buf_addch(s, '\n');
	chart_end(pb);
	return 0;
}

static void xy_block(struct buf *s, char name, const struct plot_xy *p, size_t n)
{
	buf_addf(s, "$%c << EOD\n", name);
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(p[i].x) || !isfinite(p[i].y))
			continue;
		gp_num(s, p[i].x);
		buf_addch(s, ' ');
		gp_num(s, p[i].y);
		buf_addch(s, '\n');
	}
	buf_addstr(s, "EOD\n");
}

int plot_timeseries(struct plot_batch *pb, const char *file, const char *title, const char *ylabel,
		    const struct plot_xy *a, size_t na, const struct plot_xy *b, size_t nb,
		    const char *label_a, const char *label_b)
{
	struct buf *s = &pb->script;

	if (!na && !nb)
		return plot_empty(pb, file, title, "no per-second samples were recorded");
	chart_begin(pb, file, title, 720, 300);
	gp_label(s, "x", "time in the measured window (s)");
	gp_label(s, "y", ylabel);
	{
		double lo = INFINITY, hi = -INFINITY;

		xy_range(a, na, &lo, &hi);
		xy_range(b, nb, &lo, &hi);
		gp_yformat(s, lo, hi);
	}
	xy_block(s, 'A', a, na);
	xy_block(s, 'B', b, nb);
	buf_addstr(s, "plot ");
	if (na) {
		buf_addstr(s, "$A using 1:2 with linespoints pt 7 ps 0.6 lw 1.5 dt 1 lc rgb '" COL_A "' title ");
		gp_side(s, 'A', label_a);
	}
	if (nb) {
		buf_addstr(s, na ? ", " : "");
		buf_addstr(s, "$B using 1:2 with linespoints pt 9 ps 0.7 lw 1.5 dt 2 lc rgb '" COL_B "' title ");
		gp_side(s, 'B', label_b);
	}
	buf_addch(s, '\n');
	chart_end(pb);
	return 0;
}

int plot_history(struct plot_batch *pb, const char *file, const char *title, const char *ylabel,
		 const struct plot_xy *pts, size_t n, const struct plot_segment *seg, size_t nseg,
		 const double *cp_x, size_t ncp, const long long *xlabels)
{
	struct buf *s = &pb->script;
	size_t i;

	if (!n)
		return plot_empty(pb, file, title, "no nightly run measured this metric yet");
	chart_begin(pb, file, title, 720, 300);
	gp_label(s, "x", xlabels && n <= 40 ? "nightly job id, oldest to newest (dashed: change points)"
					     : "nightly job, oldest to newest (dashed: change points)");
	gp_label(s, "y", ylabel);
	{
		double lo = INFINITY, hi = -INFINITY;

		xy_range(pts, n, &lo, &hi);
		gp_yformat(s, lo, hi);
	}
	buf_addf(s, "set xrange [0.5:%zu.5]\nunset key\n", n);
	if (xlabels && n <= 40) {
		buf_addstr(s, "set xtics rotate by -45 (");
		for (i = 0; i < n; i++)
			buf_addf(s, "%s'%lld' %zu", i ? ", " : "", xlabels[i], i + 1);
		buf_addstr(s, ")\n");
	}
	for (i = 0; i < ncp; i++) {
		buf_addstr(s, "set arrow from ");
		gp_num(s, cp_x[i] - 0.5);
		buf_addstr(s, ", graph 0 to ");
		gp_num(s, cp_x[i] - 0.5);
		buf_addstr(s, ", graph 1 nohead dt 2 lw 1.5 lc rgb '#D55E00'\n");
	}
	for (i = 0; i < nseg; i++) {
		if (!isfinite(seg[i].mean))
			continue;
		buf_addstr(s, "set arrow from ");
		gp_num(s, seg[i].x0 - 0.4);
		buf_addch(s, ',');
		gp_num(s, seg[i].mean);
		buf_addstr(s, " to ");
		gp_num(s, seg[i].x1 + 0.4);
		buf_addch(s, ',');
		gp_num(s, seg[i].mean);
		buf_addstr(s, " nohead lw 3 lc rgb '#222222' front\n");
	}
	xy_block(s, 'A', pts, n);
	buf_addstr(s, "plot $A using 1:2 with linespoints pt 7 ps 0.7 lc rgb '" COL_A "' notitle\n");
	chart_end(pb);
	return 0;
}

int plot_forest(struct plot_batch *pb, const char *file, const char *title, const struct plot_forest_row *rows,
		size_t n)
{
	static const char *const col[] = { "0x1a7f37", "0x444444", "0xb3261e" };	/* better, other, worse */
	struct buf *s = &pb->script;
	double lo = 0, hi = 0, pad;
	size_t i, k = 0, lw = 10;

	for (i = 0; i < n; i++)
		if (isfinite(rows[i].change)) {
			double t = fabs(isfinite(rows[i].threshold) ? rows[i].threshold : 0);

			lo = fmin(lo, fmin(isfinite(rows[i].lo) ? rows[i].lo : rows[i].change, -t));
			hi = fmax(hi, fmax(isfinite(rows[i].hi) ? rows[i].hi : rows[i].change, t));
			lw = strlen(rows[i].label) > lw ? strlen(rows[i].label) : lw;
			k++;
		}
	if (!k)
		return plot_empty(pb, file, title, "no headline metric has a change to show");
	chart_begin(pb, file, title, 960, 110 + 30 * (int)k);
	pad = (hi - lo) * 0.06 + 0.1;
	gp_label(s, "x", "% change of B against A with its 95% CI (shaded: the practical threshold +-T)");
	buf_addf(s, "unset key\nset grid xtics noytics lc rgb '" COL_GRID "'\nset lmargin %zu\nset yrange [%zu.6:0.4]\n"
		 "set xrange [", (lw > 60 ? 60 : lw) + 2, k);
	gp_num(s, lo - pad);
	buf_addch(s, ':');
	gp_num(s, hi + pad);
	buf_addstr(s, "]\nset arrow 1 from first 0, graph 0 to first 0, graph 1 nohead lc rgb '#444444'\nset ytics (");
	for (i = 0, k = 0; i < n; i++) {
		if (!isfinite(rows[i].change))
			continue;
		buf_addstr(s, k ? ", " : "");
		gp_str(s, rows[i].label);
		buf_addf(s, " %zu", k + 1);
		k++;
	}
	buf_addstr(s, ")\n");
	/* the threshold band of each row, as wide as the row's threshold */
	for (i = 0, k = 0; i < n; i++) {
		double t;

		if (!isfinite(rows[i].change))
			continue;
		k++;
		t = fabs(isfinite(rows[i].threshold) ? rows[i].threshold : 0);
		if (t <= 0)
			continue;
		buf_addf(s, "set object %zu rect from first ", k + 1);
		gp_num(s, -t);
		buf_addf(s, ", first %zu.6 to first ", k - 1);
		gp_num(s, t);
		buf_addf(s, ", first %zu.4 fc rgb '#e6e6e6' fs solid 1.0 noborder behind\n", k);
	}
	buf_addstr(s, "$F << EOD\n");
	for (i = 0, k = 0; i < n; i++) {
		int c = rows[i].direction > 0 ? 0 : rows[i].direction < 0 ? 2 : 1;

		if (!isfinite(rows[i].change))
			continue;
		buf_addf(s, "%zu ", ++k);
		gp_num(s, rows[i].change);
		buf_addch(s, ' ');
		gp_num(s, isfinite(rows[i].lo) ? rows[i].lo : rows[i].change);
		buf_addch(s, ' ');
		gp_num(s, isfinite(rows[i].hi) ? rows[i].hi : rows[i].change);
		buf_addf(s, " %s\n", col[c]);
	}
	buf_addstr(s, "EOD\nplot $F using 2:1:3:4:5 with xerrorbars pt 7 ps 1.3 lw 2 lc rgb variable notitle\n");
	chart_end(pb);
	return 0;
}

int plot_exists(const struct plot_batch *pb, const char *file)
{
	char *p = xasprintf("%s/%s", pb->dir, file);
	struct stat st;
	int ok = stat(p, &st) == 0 && st.st_size > 0;

	free(p);
	return ok;
}

int plot_batch_run(struct plot_batch *pb)
{
	struct run_cmd c = RUN_CMD_INIT;
	const char *gp = plot_gnuplot();
	const char *argv[3];
	int made = 0, ret = -1;
	size_t i;

	pb->ran = 1;
	if (!pb->files.n)
		return 0;
	if (!gp)
		return error("cannot draw %zu chart(s): gnuplot not found (install gnuplot-nox)", pb->files.n);
	if (mkdir_p(pb->dir) < 0)
		return -1;
	for (i = 0; i < pb->files.n; i++) {
		char *p = chart_tmp(pb->dir, pb->files.v[i]);

		unlink(p);
		free(p);
	}
	argv[0] = gp;
	argv[1] = "-";
	argv[2] = NULL;
	c.argv = argv;
	c.dir = pb->dir;
	c.in = pb->script.buf;
	c.in_len = pb->script.len;
	c.timeout_ms = 300000;
	c.out_cap = 1 << 20;
	pb->processes++;
	if (run_command(&c) < 0)
		goto out;
	if (c.status != 0 || c.err.len) {
		buf_rtrim(&c.err);
		if (c.status != 0)
			warn("gnuplot %s: %.2000s", run_describe(&c), c.err.buf);
		else
			debug("gnuplot said: %.2000s", c.err.buf);
	}
	for (i = 0; i < pb->files.n; i++) {
		char *tmp = chart_tmp(pb->dir, pb->files.v[i]), *p = xasprintf("%s/%s", pb->dir, pb->files.v[i]);
		struct stat st;

		if (stat(tmp, &st) == 0 && st.st_size > 0) {
			if (rename(tmp, p) == 0)
				made++;
			else
				error_errno("cannot rename chart '%s' to '%s'", tmp, p);
		} else {
			warn("gnuplot did not draw chart '%s'", pb->files.v[i]);
			/* a chart left over from an older report must not pass for a new one */
			unlink(p);
		}
		unlink(tmp);
		free(tmp);
		free(p);
	}
	ret = made;
out:
	run_release(&c);
	return ret;
}
