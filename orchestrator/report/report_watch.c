/* report_watch.c: the patchwork watcher's status page, patchwork.html (report/report_watch.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "log.h"
#include "report/html.h"
#include "report/report_watch.h"
#include "store/patchwork.h"
#include "util.h"

struct page {
	struct buf *h;
	double oldest;		/* completion time of the oldest series still waiting */
	int n;
};

static int row(const struct pw_series_row *r, void *data)
{
	struct page *p = data;
	struct buf *h = p->h;

	p->n++;
	if ((!strcmp(r->state, "queued") || !strcmp(r->state, "running")) && (!p->oldest || r->completed < p->oldest))
		p->oldest = r->completed;
	html_escapef(h, "<tr class=\"%s\"><td>%lld</td><td>v%lld</td><td>", r->state, (long long)r->pw_id,
		     (long long)r->version);
	html_escape(h, r->name);
	buf_addstr(h, "</td><td>");
	html_escape(h, r->state);
	buf_addstr(h, "</td><td>");
	if (r->job_id)
		buf_addf(h, "<a href=\"job-%lld.html\">job %lld</a>", (long long)r->job_id, (long long)r->job_id);
	buf_addstr(h, "</td><td>");
	html_escape(h, r->outcome);
	buf_addstr(h, "</td><td>");
	if (r->final > 0)
		buf_addf(h, "%.1f s", r->final - r->completed);
	buf_addstr(h, "</td><td>");
	html_escape(h, r->reason ? r->reason : r->description);
	buf_addstr(h, "</td></tr>\n");
	return 0;
}

int report_watch_page(struct db *db, const struct klab_config *cfg, const char *outdir)
{
	struct buf h = BUF_INIT, path = BUF_INIT;
	int ret = -1;

	buf_addstr(&h, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>klab: patchwork</title>"
		   "<link rel=\"stylesheet\" href=\"style.css\"></head><body>\n<h1>Patchwork watchers</h1>\n");
	for (size_t i = 0; i < cfg->n_patchworks; i++) {
		const struct conf_patchwork *w = &cfg->patchworks[i];
		struct page p = { &h, 0, 0 };
		struct buf rows = BUF_INIT;
		double now = now_wall();

		p.h = &rows;
		if (pw_series_each(db, w->name, NULL, row, &p) < 0) {
			buf_release(&rows);
			goto out;
		}
		buf_addstr(&h, "<h2>");
		html_escapef(&h, "%s: project %s, context %s", w->name, w->project, w->context);
		buf_addstr(&h, "</h2>\n");
		if (w->max_lag_ms > 0 && p.oldest > 0 && (now - p.oldest) * 1000 > w->max_lag_ms)
			buf_addf(&h, "<p class=\"behind\">The lab is behind: the oldest series waiting completed %.0f s "
				 "ago (max_lag %ld s).</p>\n", now - p.oldest, w->max_lag_ms / 1000);
		buf_addf(&h, "<p>%d series seen.</p>\n<table><tr><th>series</th><th>version</th><th>name</th>"
			 "<th>state</th><th>job</th><th>check</th><th>lag</th><th>why</th></tr>\n", p.n);
		buf_add(&h, rows.buf, rows.len);
		buf_addstr(&h, "</table>\n");
		buf_release(&rows);
	}
	buf_addstr(&h, "</body></html>\n");
	buf_addf(&path, "%s/patchwork.html", outdir);
	if (mkdir_p(outdir) || write_file_atomic(path.buf, h.buf, h.len, 0644)) {
		error("cannot write '%s'", path.buf);
		goto out;
	}
	ret = 0;
out:
	buf_release(&h);
	buf_release(&path);
	return ret;
}
