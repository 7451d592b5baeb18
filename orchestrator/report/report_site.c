/* report_site.c: one run of the report pages: pages and charts in memory, one gnuplot process, atomic writes; links and badges. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "compare/compare.h"
#include "compare/compare_fmt.h"
#include "report/html.h"
#include "log.h"
#include "report/plot.h"
#include "report/report.h"
#include "report/report_site.h"
#include "util.h"

/* The marker a page holds where chart N goes: control bytes never survive html_escape(). */
#define CHART_MARK '\x01'

static int cmp_id(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;

	return a < b ? -1 : a > b;
}

/*
 * The ids of the job pages already in the output folder (job-N.html),
 * sorted: a history page links every night it shows, and asking the file
 * system about each was 100k access() calls, a third of one job's report at
 * 100M metric rows (docs/query-scale.md).
 */
static void read_job_pages(struct rep *r)
{
	DIR *d = opendir(r->outdir);
	struct dirent *e;
	size_t alloc = 0;

	if (!d)
		return;
	while ((e = readdir(d))) {
		long long id;
		int end = 0;

		if (sscanf(e->d_name, "job-%lld.html%n", &id, &end) != 1 || !end || e->d_name[end])
			continue;
		if (r->n_pages_on_disk == alloc) {
			alloc = alloc ? 2 * alloc : 64;
			r->pages_on_disk = xrealloc(r->pages_on_disk, alloc * sizeof(*r->pages_on_disk));
		}
		r->pages_on_disk[r->n_pages_on_disk++] = id;
	}
	closedir(d);
	if (r->n_pages_on_disk > 1)
		qsort(r->pages_on_disk, r->n_pages_on_disk, sizeof(*r->pages_on_disk), cmp_id);
}

void rep_keep(struct rep *r, const char *fmt, ...)
{
	va_list ap;

	if (!r->why || r->why->len)
		return;
	va_start(ap, fmt);
	buf_vaddf(r->why, fmt, ap);
	va_end(ap);
}

void rep_init(struct rep *r, struct db *db, const char *outdir, const struct report_opts *o)
{
	time_t now = time(NULL);
	struct tm tm;

	memset(r, 0, sizeof(*r));
	r->db = db;
	r->outdir = xstrdup(outdir);
	r->no_charts = o ? o->no_charts : 0;
	r->max_jobs = o && o->max_jobs > 0 ? o->max_jobs : 200;
	r->why = o ? o->why : NULL;
	if (r->why)
		buf_reset(r->why);
	plot_batch_init(&r->pb, outdir, PLOT_SVG);
	read_job_pages(r);
	gmtime_r(&now, &tm);
	strftime(r->generated, sizeof(r->generated), "%Y-%m-%d %H:%M", &tm);
}

void rep_release(struct rep *r)
{
	size_t i;

	for (i = 0; i < r->n_charts; i++) {
		free(r->charts[i].file);
		free(r->charts[i].title);
	}
	free(r->charts);
	for (i = 0; i < r->n_pages; i++) {
		free(r->pages[i].name);
		buf_release(&r->pages[i].html);
	}
	free(r->pages);
	for (i = 0; i < r->n_files; i++) {
		free(r->files[i].name);
		buf_release(&r->files[i].html);
	}
	free(r->files);
	free(r->jobs);
	free(r->pages_on_disk);
	free(r->outdir);
	plot_batch_release(&r->pb);
}

char *rep_chart_file(struct rep *r, const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	va_list ap;

	buf_addstr(&b, "charts/");
	va_start(ap, fmt);
	buf_vaddf(&b, fmt, ap);
	va_end(ap);
	buf_addstr(&b, plot_ext(&r->pb));
	return buf_detach(&b, NULL);
}

void rep_chart_add(struct rep *r, struct buf *html, const char *file, const char *title)
{
	if (r->n_charts == r->a_charts) {
		r->a_charts = r->a_charts ? 2 * r->a_charts : 32;
		r->charts = xrealloc(r->charts, r->a_charts * sizeof(*r->charts));
	}
	r->charts[r->n_charts].file = xstrdup(file);
	r->charts[r->n_charts].title = xstrdup(title);
	buf_addf(html, "%c%zu%c", CHART_MARK, r->n_charts, CHART_MARK);
	r->n_charts++;
}

int rep_add_page(struct rep *r, const char *name, const char *title, const struct buf *content)
{
	struct buf tmpl = BUF_INIT;
	struct rep_page *p;
	const struct html_var vars[] = {
		{ "title", title, 0 },
		{ "content", content->buf, 1 },
		{ "version", KLAB_VERSION, 0 },
		{ "generated", r->generated, 0 },
	};
	int ret = -1;

	if (html_load_static(&tmpl, "page.tmpl") < 0)
		goto out;
	if (r->n_pages == r->a_pages) {
		r->a_pages = r->a_pages ? 2 * r->a_pages : 16;
		r->pages = xrealloc(r->pages, r->a_pages * sizeof(*r->pages));
	}
	p = &r->pages[r->n_pages];
	p->name = xstrdup(name);
	buf_init(&p->html, content->len + tmpl.len + 256);
	if (html_fill(&p->html, tmpl.buf, "page.tmpl", vars, ARRAY_SIZE(vars)) < 0) {
		free(p->name);
		buf_release(&p->html);
		goto out;
	}
	r->n_pages++;
	ret = 0;
out:
	buf_release(&tmpl);
	return ret;
}

void rep_add_file(struct rep *r, const char *name, struct buf *content)
{
	if (r->n_files == r->a_files) {
		r->a_files = r->a_files ? 2 * r->a_files : 16;
		r->files = xrealloc(r->files, r->a_files * sizeof(*r->files));
	}
	r->files[r->n_files].name = xstrdup(name);
	r->files[r->n_files].html = *content;
	buf_init(content, 0);
	r->n_files++;
}

int rep_fill_static(struct buf *out, const char *name, const struct html_var *vars, size_t n)
{
	struct buf tmpl = BUF_INIT;
	int ret = -1;

	if (html_load_static(&tmpl, name) == 0)
		ret = html_fill(out, tmpl.buf, name, vars, n);
	buf_release(&tmpl);
	return ret;
}

static int job_rendered(const struct rep *r, int64_t id)
{
	for (size_t i = 0; i < r->n_jobs; i++)
		if (r->jobs[i] == id)
			return 1;
	return r->n_pages_on_disk && bsearch(&id, r->pages_on_disk, r->n_pages_on_disk, sizeof(id), cmp_id);
}

void rep_job_link(const struct rep *r, struct buf *h, int64_t id)
{
	if (job_rendered(r, id))
		buf_addf(h, "<a href=\"job-%lld.html\">job %lld</a>", (long long)id, (long long)id);
	else
		buf_addf(h, "job %lld", (long long)id);
}

static const char *verdict_class(const struct compare_row *c)
{
	switch (c->st.verdict) {
	case VERDICT_CHANGED: {
		int d = compare_direction(c);

		return d > 0 ? "v-better" : d < 0 ? "v-worse" : "v-changed";
	}
	case VERDICT_EQUIVALENT:
		return "v-equivalent";
	case VERDICT_INCONCLUSIVE:
		return "v-inconclusive";
	default:
		return "v-descriptive";
	}
}

void rep_verdict_badge(struct buf *h, const struct compare_row *c)
{
	struct buf v = BUF_INIT;

	compare_fmt_verdict(&v, c);
	buf_addf(h, "<span class=\"badge %s\">", verdict_class(c));
	html_escape(h, v.buf);
	buf_addstr(h, "</span>");
	buf_release(&v);
}

void rep_metric_label(struct buf *b, const char *metric, const char *unit)
{
	buf_addstr(b, metric);
	if (unit && *unit)
		buf_addf(b, " (%s)", unit);
}

void rep_fmt_time(struct buf *b, double t)
{
	char s[32];
	time_t tt = (time_t)t;
	struct tm tm;

	if (!isfinite(t) || t <= 0 || !gmtime_r(&tt, &tm)) {
		buf_addstr(b, "-");
		return;
	}
	strftime(s, sizeof(s), "%Y-%m-%d %H:%M", &tm);
	buf_addstr(b, s);
}

/* ---- writing ---- */

/* Replace the chart markers with an image or, when the chart is missing, a note. */
static void resolve_charts(const struct rep *r, const char *why_missing, const struct buf *in, struct buf *out)
{
	const char *p = in->buf, *m;

	while ((m = memchr(p, CHART_MARK, (size_t)(in->buf + in->len - p)))) {
		char *end;
		unsigned long idx = strtoul(m + 1, &end, 10);

		buf_add(out, p, (size_t)(m - p));
		if (*end != CHART_MARK || idx >= r->n_charts) {
			p = m + 1;	/* cannot happen: markers are only made by rep_chart_add() */
			continue;
		}
		if (!why_missing && plot_exists(&r->pb, r->charts[idx].file)) {
			buf_addstr(out, "<figure class=\"chart\"><img src=\"");
			html_url(out, r->charts[idx].file);
			buf_addstr(out, "\" alt=\"");
			html_escape(out, r->charts[idx].title);
			buf_addstr(out, "\"></figure>");
		} else {
			buf_addstr(out, "<div class=\"chart-missing\">Chart not drawn: ");
			html_escape(out, r->charts[idx].title);
			buf_addstr(out, "<br>");
			html_escape(out, why_missing ? why_missing : "gnuplot failed on this chart (see the klab log)");
			buf_addstr(out, "</div>");
		}
		p = end + 1;
	}
	buf_addstr(out, p);
}

static int copy_static(const char *outdir, const char *name)
{
	struct buf b = BUF_INIT;
	char *dst;
	int ret;

	if (html_load_static(&b, name) < 0)
		return -1;
	dst = xasprintf("%s/%s", outdir, name);
	ret = write_file_atomic(dst, b.buf, b.len, 0644);
	free(dst);
	buf_release(&b);
	return ret;
}

int rep_finish(struct rep *r, struct report_stats *st)
{
	const char *why = NULL;
	int ret = 0;
	size_t i;

	if (r->no_charts)
		why = "charts are turned off for this report (--no-charts).";
	else if (!plot_gnuplot())
		why = "gnuplot is not installed (apt-get install gnuplot-nox), so no chart was drawn.";
	if (!why) {
		int made = plot_batch_run(&r->pb);

		if (made < 0)
			why = "gnuplot could not be run (see the klab log).";
		else if (st)
			st->charts_drawn = made;
	}
	if (st) {
		st->charts = (int)r->n_charts;
		st->gnuplot_runs = r->pb.processes;
	}
	if (copy_static(r->outdir, "style.css") < 0) {
		rep_keep(r, "cannot put style.css into '%s' (the report logs why)", r->outdir);
		ret = -1;
	}
	for (i = 0; i < r->n_files; i++) {
		char *path = xasprintf("%s/%s", r->outdir, r->files[i].name);

		if (write_file_atomic(path, r->files[i].html.buf, r->files[i].html.len, 0644) < 0) {
			rep_keep(r, "cannot write '%s': %s", path, strerror(errno));
			ret = -1;
		}
		free(path);
	}
	for (i = 0; i < r->n_pages; i++) {
		struct buf out = BUF_INIT;
		char *path = xasprintf("%s/%s", r->outdir, r->pages[i].name);

		resolve_charts(r, why, &r->pages[i].html, &out);
		if (write_file_atomic(path, out.buf, out.len, 0644) < 0) {
			rep_keep(r, "cannot write '%s': %s", path, strerror(errno));
			ret = -1;
		} else if (st)
			st->pages++;
		free(path);
		buf_release(&out);
	}
	return ret;
}
