/* report_history.c: the nightly history pages (series, change points, segment means, comparisons) and their index tiles. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "compare/compare.h"
#include "compare/compare_fmt.h"
#include "report/html.h"
#include "report/plot.h"
#include "report/report_data.h"
#include "report/report_history.h"
#include "report/report_site.h"
#include "strvec.h"
#include "util.h"

static char *history_name(const char *workload, const char *metric)
{
	struct buf b = BUF_INIT;

	buf_addstr(&b, "history-");
	rep_slug(&b, workload);
	buf_addstr(&b, "--");
	rep_slug(&b, metric);
	buf_addstr(&b, ".html");
	return buf_detach(&b, NULL);
}

static int dbl_cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

/* The table of change points; their x positions (1-based point numbers) into *cpx. */
static void changepoints_table(struct rep *r, const struct rep_cp *c, size_t ncp, const struct rep_hpoint *p,
			       size_t n, struct buf *h, double **cpx, size_t *ncpx)
{
	*cpx = xcalloc(ncp + 1, sizeof(**cpx));
	*ncpx = 0;
	for (size_t k = 0; k < ncp; k++) {
		if (!k)
			buf_addstr(h, "<div class=\"table-wrap\"><table><tr><th>first job after</th><th>tree</th>"
				   "<th>machines</th><th class=\"num\">mean before</th><th class=\"num\">mean after</th>"
				   "<th class=\"num\">change</th><th class=\"num\">p</th><th>found</th></tr>\n");
		buf_addstr(h, "<tr><td>");
		rep_job_link(r, h, c[k].job);
		buf_addstr(h, "</td><td>");
		html_escape(h, c[k].tree);
		buf_addstr(h, "</td><td>");
		html_escape(h, c[k].machines);
		buf_addstr(h, "</td><td class=\"num\">");
		compare_fmt_si(h, c[k].mean_before);
		buf_addstr(h, "</td><td class=\"num\">");
		compare_fmt_si(h, c[k].mean_after);
		buf_addstr(h, "</td><td class=\"num\">");
		compare_fmt_pct(h, c[k].change_pct);
		buf_addstr(h, "</td><td class=\"num\">");
		compare_fmt_p(h, c[k].p);
		buf_addstr(h, "</td><td>");
		rep_fmt_time(h, c[k].created);
		buf_addstr(h, "</td></tr>\n");
		for (size_t i = 0; i < n; i++)
			if (p[i].job == c[k].job && i > 0)
				(*cpx)[(*ncpx)++] = (double)(i + 1);
	}
	if (ncp)
		buf_addstr(h, "</table></div>\n");
	else
		buf_addstr(h, "<p class=\"note\">No change point found in this series.</p>\n");
}

/* The means of the points between change points (CPX sorted), as chart segments. */
static struct plot_segment *segments(const struct rep_hpoint *p, size_t n, const double *cpx, size_t ncp,
				     size_t *nseg)
{
	struct plot_segment *seg = xcalloc(ncp + 1, sizeof(*seg));
	size_t start = 0;

	*nseg = 0;
	if (!n)
		return seg;
	for (size_t s = 0; s <= ncp; s++) {
		size_t end = s < ncp ? (size_t)cpx[s] - 1 : n;	/* exclusive, 0-based */
		double sum = 0;

		if (end <= start)
			continue;
		for (size_t i = start; i < end; i++)
			sum += p[i].value;
		seg[*nseg].x0 = (double)(start + 1);
		seg[*nseg].x1 = (double)end;
		seg[*nseg].mean = sum / (double)(end - start);
		(*nseg)++;
		start = end;
	}
	return seg;
}

static void points_table(struct rep *r, const struct rep_hpoint *p, size_t n, struct buf *h)
{
	if (!n) {
		buf_addstr(h, "<p class=\"note\">No scheduled (nightly) job measured this metric yet.</p>\n");
		return;
	}
	buf_addstr(h, "<div class=\"table-wrap\"><table><tr><th class=\"num\">#</th><th>job</th><th>date</th>"
		   "<th class=\"num\">mean</th><th class=\"num\">runs</th></tr>\n");
	for (size_t i = n; i-- > 0;) {
		buf_addf(h, "<tr><td class=\"num\">%zu</td><td>", i + 1);
		rep_job_link(r, h, p[i].job);
		buf_addstr(h, "</td><td>");
		rep_fmt_time(h, p[i].created);
		buf_addstr(h, "</td><td class=\"num\">");
		compare_fmt_si(h, p[i].value);
		buf_addf(h, "</td><td class=\"num\">%lld</td></tr>\n", (long long)p[i].n);
	}
	buf_addstr(h, "</table></div>\n");
}

/* Every stored comparison of this metric, newest first. */
static int comparisons_table(struct rep *r, const char *wl, const char *metric, struct buf *h)
{
	struct compare_result *c;
	size_t n;

	if (compare_load_metric(r->db, wl, metric, 0, 100, &c, &n) < 0)
		return -1;
	for (size_t k = 0; k < n; k++) {
		if (!k)
			buf_addstr(h, "<div class=\"table-wrap\"><table><tr><th>job</th><th>A</th><th>B</th>"
				   "<th class=\"num\">% change [95% CI]</th><th>verdict</th></tr>\n");
		buf_addstr(h, "<tr><td>");
		if (c[k].job_id)
			rep_job_link(r, h, c[k].job_id);
		else
			buf_addstr(h, "-");
		buf_addstr(h, "</td><td>");
		html_escape(h, c[k].label_a);
		buf_addstr(h, "</td><td>");
		html_escape(h, c[k].label_b);
		buf_addstr(h, "</td><td class=\"num\">");
		compare_fmt_change_ci(h, &c[k].rows[0]);
		buf_addstr(h, "</td><td>");
		rep_verdict_badge(h, &c[k].rows[0]);
		buf_addstr(h, "</td></tr>\n");
	}
	if (n)
		buf_addstr(h, "</table></div>\n");
	else
		buf_addstr(h, "<p class=\"note\">None.</p>\n");
	compare_results_free(c, n);
	return 0;
}

/* The tile on the index: the latest value and the last change point. */
static void tile_html(struct rep *r, const char *page, const char *wl, const char *metric, const char *unit,
		      const struct rep_hpoint *p, size_t n, const struct rep_cp *c, size_t ncp, struct buf *tile)
{
	buf_addf(tile, "<div class=\"tile\"><h3><a href=\"%s\">", page);
	html_escape(tile, wl);
	buf_addstr(tile, " &middot; ");
	html_escape(tile, metric);
	buf_addstr(tile, "</a></h3><div class=\"big\">");
	compare_fmt_si(tile, p[n - 1].value);
	buf_addstr(tile, "</div><div class=\"muted\">");
	html_escape(tile, unit);
	buf_addf(tile, " latest of %zu nightly run(s)</div><div>", n);
	if (ncp) {
		buf_addstr(tile, "last change point: <strong>");
		compare_fmt_pct(tile, c[ncp - 1].change_pct);
		buf_addstr(tile, "</strong> at ");
		rep_job_link(r, tile, c[ncp - 1].job);
		buf_addstr(tile, " (");
		rep_fmt_time(tile, c[ncp - 1].created);
		buf_addstr(tile, ")");
	} else {
		buf_addstr(tile, "<span class=\"muted\">no change point</span>");
	}
	buf_addstr(tile, "</div></div>\n");
}

static int history_page(struct rep *r, struct rep_nightly *nw, const char *wl, const char *metric, struct buf *tile)
{
	struct buf content = BUF_INIT, chart = BUF_INIT, cps = BUF_INIT, pts = BUF_INIT, cmps = BUF_INIT;
	struct buf title = BUF_INIT, sub = BUF_INIT, ylab = BUF_INIT, hs = BUF_INIT;
	const struct rep_hpoint *p = NULL;
	struct rep_cp *c = NULL;
	struct plot_xy *xy = NULL;
	struct plot_segment *seg = NULL;
	double *cpx = NULL;
	size_t n = 0, ncp = 0, ncpx = 0, nseg = 0, i;
	char *unit, *file, *page = history_name(wl, metric);
	int ret = -1;

	unit = rep_metric_unit(r->db, wl, metric);
	rep_metric_label(&ylab, metric, unit);

	/* the nightly series: per scheduled job, the mean of its newest side */
	if (rep_nightly_load(r->db, nw, wl, metric, &p, &n) < 0)
		goto out;
	xy = xcalloc(n + 1, sizeof(*xy));
	for (i = 0; i < n; i++) {
		xy[i].x = (double)(i + 1);
		xy[i].y = p[i].value;
	}
	if (rep_changepoints_load(r->db, wl, metric, &c, &ncp) < 0)
		goto out;
	changepoints_table(r, c, ncp, p, n, &cps, &cpx, &ncpx);
	qsort(cpx, ncpx, sizeof(*cpx), dbl_cmp);
	seg = segments(p, n, cpx, ncpx, &nseg);

	buf_addf(&title, "%s: %s, nightly", wl, metric);
	buf_addstr(&hs, page);
	buf_setlen(&hs, hs.len - 5);	/* drop ".html" */
	file = rep_chart_file(r, "%s", hs.buf);
	{
		long long *ids = xcalloc(n + 1, sizeof(*ids));

		for (i = 0; i < n; i++)
			ids[i] = (long long)p[i].job;
		plot_history(&r->pb, file, title.buf, ylab.buf, xy, n, seg, nseg, cpx, ncpx, ids);
		free(ids);
	}
	rep_chart_add(r, &chart, file, title.buf);
	free(file);

	points_table(r, p, n, &pts);
	if (comparisons_table(r, wl, metric, &cmps) < 0)
		goto out;
	buf_addf(&sub, "%zu nightly point(s), %zu change point(s); the line segments are the means between change points.",
		 n, ncp);
	{
		const struct html_var vars[] = {
			{ "workload", wl, 0 },
			{ "metric", metric, 0 },
			{ "subtitle", sub.buf, 0 },
			{ "chart", chart.buf, 1 },
			{ "changepoints", cps.buf, 1 },
			{ "points", pts.buf, 1 },
			{ "comparisons", cmps.buf, 1 },
		};
		if (rep_fill_static(&content, "history.tmpl", vars, ARRAY_SIZE(vars)) < 0)
			goto out;
	}
	buf_reset(&title);
	buf_addf(&title, "history %s %s", wl, metric);
	if (rep_add_page(r, page, title.buf, &content) < 0)
		goto out;
	/* the tile on the index, for series with nightly data */
	if (tile && n)
		tile_html(r, page, wl, metric, unit, p, n, c, ncp, tile);
	ret = 0;
out:
	free(xy); free(seg); free(cpx); free(unit); free(page);
	rep_changepoints_free(c, ncp);
	buf_release(&content); buf_release(&chart); buf_release(&cps); buf_release(&pts);
	buf_release(&cmps); buf_release(&title); buf_release(&sub); buf_release(&ylab); buf_release(&hs);
	return ret;
}

int report_history_pages(struct rep *r, struct buf *tiles, struct buf *list)
{
	struct strvec keys = STRVEC_INIT;
	struct rep_nightly nw = { 0 };
	int n = 0, ret = 0;

	if (rep_history_keys(r->db, &keys) < 0)
		return -1;
	for (size_t k = 0; k + 1 < keys.n; k += 2) {
		const char *wl = keys.v[k], *m = keys.v[k + 1];
		char *page;

		if (history_page(r, &nw, wl, m, tiles) < 0) {
			ret = -1;
			continue;
		}
		page = history_name(wl, m);
		if (!n++)
			buf_addstr(list, "<h3>Every history page</h3>\n<p>");
		else
			buf_addstr(list, " &middot; ");
		buf_addf(list, "<a href=\"%s\">", page);
		html_escape(list, wl);
		buf_addch(list, ' ');
		html_escape(list, m);
		buf_addstr(list, "</a>");
		free(page);
	}
	if (n)
		buf_addstr(list, "</p>\n");
	rep_nightly_free(&nw);
	strvec_clear(&keys);
	return ret;
}
