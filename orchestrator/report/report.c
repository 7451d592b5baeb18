/* report.c: the job pages and the index of the static report, and the report run that writes them. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "buf.h"
#include "compare/compare.h"
#include "compare/compare_fmt.h"
#include "store/db.h"
#include "store/jobs.h"
#include "report/html.h"
#include "jsonh.h"
#include "log.h"
#include "report/plot.h"
#include "report/report.h"
#include "report/report_data.h"
#include "report/report_observe.h"
#include "report/report_history.h"
#include "report/report_site.h"
#include "strvec.h"
#include "util.h"

/* ---- the job page: the header facts ---- */

/* The link to the series: its recorded URL, else lore by Message-ID. */
static void series_href(struct buf *h, const struct rep_job *j)
{
	if (j->s_url && *j->s_url) {
		html_url(h, j->s_url);
	} else if (j->s_msgid && *j->s_msgid) {
		struct buf u = BUF_INIT;
		const char *m = j->s_msgid;
		size_t n = strlen(m);

		if (*m == '<' && n >= 2 && m[n - 1] == '>') {
			m++;
			n -= 2;
		}
		buf_addstr(&u, "https://lore.kernel.org/r/");
		for (size_t i = 0; i < n; i++) {
			unsigned char c = (unsigned char)m[i];

			if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			    strchr("-._~@!$+=", c))
				buf_addch(&u, c);
			else
				buf_addf(&u, "%%%02X", c);
		}
		html_url(h, u.buf);
		buf_release(&u);
	} else {
		buf_addch(h, '#');
	}
}

/* NIC driver and queue counts of the job's DUT, and the kernel command lines. */
static void machine_facts(const struct rep_sysinfo *si, struct buf *nic, struct buf *cmdline, struct buf *pmu)
{
	if (si->pmu)
		html_escape(pmu, si->pmu);
	else
		buf_addstr(pmu, "<span class=\"muted\">not recorded</span>");
	for (size_t i = 0; i < si->n_nics; i++) {
		const struct rep_nic *n = &si->nics[i];

		if (i)
			buf_addstr(nic, "; ");
		html_escape(nic, n->name);
		buf_addstr(nic, ": driver <code>");
		if (n->driver)
			html_escape(nic, n->driver);
		else
			buf_addstr(nic, "unknown");
		buf_addstr(nic, "</code>");
		if (n->tx_queues >= 0 && n->rx_queues >= 0)
			buf_addf(nic, ", %d TX / %d RX queues", n->tx_queues, n->rx_queues);
	}
	if (!si->n_nics)
		buf_addstr(nic, "<span class=\"muted\">not recorded</span>");
	if (si->cmdline[0]) {
		buf_addstr(cmdline, "<code>");
		html_escape(cmdline, si->cmdline[0]);
		buf_addstr(cmdline, "</code>");
		if (si->cmdline[1] && strcmp(si->cmdline[0], si->cmdline[1])) {
			buf_addstr(cmdline, " (A); <code>");
			html_escape(cmdline, si->cmdline[1]);
			buf_addstr(cmdline, "</code> (B)");
		}
	} else {
		buf_addstr(cmdline, "<span class=\"muted\">not recorded</span>");
	}
}

static void fact(struct buf *h, const char *dt, const char *dd_html)
{
	buf_addf(h, "<dt>%s</dt><dd>%s</dd>\n", dt, dd_html);
}

static void kernel_desc(struct buf *h, const struct rep_side *s, char side)
{
	buf_addf(h, "<span class=\"side-%c\">%c</span> ", side == 'A' ? 'a' : 'b', side);
	html_escape(h, s->label);
	if (s->tree || s->commit) {
		buf_addstr(h, ": <code>");
		html_escape(h, s->tree ? s->tree : "");
		if (s->commit) {
			buf_addch(h, ' ');
			html_escape_n(h, s->commit, strlen(s->commit) > 12 ? 12 : strlen(s->commit));
		}
		buf_addstr(h, "</code>");
	}
	if (s->variant) {
		buf_addstr(h, " (");
		html_escape(h, s->variant);
		buf_addch(h, ')');
	}
	if (s->release) {
		buf_addstr(h, ", uname -r <code>");
		html_escape(h, s->release);
		buf_addstr(h, "</code>");
	}
}

/* Boots x runs per side and workload, e.g. "udp_rr_500: A 4 x 3, B 4 x 3". */
static void boots_runs(struct db *db, int64_t job, struct buf *h)
{
	struct rep_count *c;
	size_t n;

	rep_counts_load(db, job, &c, &n);
	for (size_t i = 0; i < n; i++) {
		int b = c[i].side == 'B';

		if (!i || strcmp(c[i].workload, c[i - 1].workload)) {
			if (i)
				buf_addstr(h, "<br>");
			html_escape(h, c[i].workload);
			buf_addstr(h, ":");
		}
		buf_addf(h, "%s %s ", b ? "," : "", b ? "B" : "A");
		if (c[i].boots > 0)
			buf_addf(h, "%lld boot%s &times; ", (long long)c[i].boots, c[i].boots == 1 ? "" : "s");
		if (!c[i].boots)
			buf_addf(h, "%lld run%s (no boot recorded)", (long long)c[i].runs, c[i].runs == 1 ? "" : "s");
		else if (c[i].runs % c[i].boots == 0)
			buf_addf(h, "%lld runs", (long long)(c[i].runs / c[i].boots));
		else
			buf_addf(h, "%lld runs in all", (long long)c[i].runs);
	}
	if (!n)
		buf_addstr(h, "<span class=\"muted\">no runs stored</span>");
	rep_counts_free(c, n);
}

/* A/A noise: the CI half-width of the latest A/A comparison of each workload's headline metric. */
static void aa_noise(struct rep *r, const struct compare_result *res, struct buf *h)
{
	const struct compare_row *c = res->rows;
	int found = 0;

	for (size_t i = 0; i < res->n_rows; i++) {
		struct compare_result *aa;
		size_t n;

		if (compare_metric_rank(c[i].metric) >= 10 || (i && !strcmp(c[i].workload, c[i - 1].workload)))
			continue;
		if (compare_load_metric(r->db, c[i].workload, c[i].metric, COMPARE_LOAD_AA, 1, &aa, &n) < 0)
			continue;
		if (n) {
			const struct stats_cmp *s = &aa[0].rows[0].st;

			if (found++)
				buf_addstr(h, "<br>");
			html_escape(h, c[i].workload);
			buf_addch(h, ' ');
			html_escape(h, c[i].metric);
			buf_addstr(h, ": &plusmn;");
			compare_fmt_mde(h, isfinite(s->ci_lo) && isfinite(s->ci_hi) ? (s->ci_hi - s->ci_lo) / 2 : NAN);
			buf_addstr(h, " (95% CI half-width, ");
			rep_job_link(r, h, aa[0].job_id);
			buf_addch(h, ')');
		}
		compare_results_free(aa, n);
	}
	if (!found)
		buf_addstr(h, "<span class=\"muted\">not measured (run an A/A job to know the noise floor)</span>");
}

/* Adaptive boots (boots = MIN..MAX): what each look saw, and where the job stopped adding boots. */
static void looks_section(struct db *db, int64_t job_id, struct buf *h)
{
	struct compare_look *l;
	struct buf t = BUF_INIT;
	size_t n;

	if (compare_load_looks(db, job_id, &l, &n) || !n)
		return;
	buf_addf(h, "<h3>Looks</h3>\n<p class=\"note\">Boots were added one ABBA round at a time; after each "
		 "round the headline verdicts were decided at alpha = 0.05 / %d per look (docs/statistics.md), "
		 "and the job stopped adding boots once every one was CHANGED or EQUIVALENT.</p>\n"
		 "<div class=\"table-wrap\"><table class=\"looks\">"
		 "<tr><th class=\"num\">look</th><th class=\"num\">boots per side</th><th class=\"num\">alpha</th>"
		 "<th>workload</th><th>metric</th><th>verdict</th><th class=\"num\">change [95%% CI]</th><th>decided</th></tr>\n",
		 l[0].looks);
	for (size_t i = 0; i < n; i++) {
		struct compare_row r;

		memset(&r, 0, sizeof(r));
		r.st.verdict = l[i].verdict;
		r.st.change_pct = l[i].change_pct;
		r.st.ci_lo = l[i].ci_lo;
		r.st.ci_hi = l[i].ci_hi;
		r.st.extra_boots = -1;
		buf_addf(h, "<tr><td class=\"num\">%d/%d</td><td class=\"num\">%d</td><td class=\"num\">%.4g</td><td>",
			 l[i].look, l[i].looks, l[i].boots, l[i].alpha);
		html_escape(h, l[i].workload);
		buf_addstr(h, "</td><td><code>");
		html_escape(h, l[i].metric);
		buf_addstr(h, "</code></td><td>");
		buf_reset(&t);
		buf_addstr(&t, stats_verdict_name(l[i].verdict));
		html_escape(h, t.buf);
		buf_addstr(h, "</td><td class=\"num\">");
		buf_reset(&t);
		compare_fmt_change_ci(&t, &r);
		html_escape(h, t.buf);
		buf_addf(h, "</td><td>%s</td></tr>\n", l[i].decided ? "yes: no more boots" : "no");
	}
	buf_addstr(h, "</table></div>\n");
	compare_looks_free(l, n);
	buf_release(&t);
}

static void claims_section(struct db *db, const struct rep_job *j, struct buf *h)
{
	struct rep_claim *c;
	struct buf words = BUF_INIT;
	size_t n;

	rep_claims_load(db, j->series_id, &c, &n);
	for (size_t i = 0; i < n; i++) {
		if (!i)
			buf_addstr(h, "<h3>Claims found in the series</h3>\n<div class=\"table-wrap\"><table>"
				   "<tr><th>patch</th><th>metric</th><th>expected</th><th>text</th></tr>\n");
		buf_addf(h, "<tr><td class=\"num\">%lld</td><td><code>", (long long)c[i].patch_seq);
		html_escape(h, c[i].metric);
		buf_addstr(h, "</code></td><td>");
		buf_reset(&words);
		compare_fmt_claimed(&words, c[i].direction, c[i].lo, c[i].hi);
		html_escape(h, words.buf);
		buf_addstr(h, "</td><td>");
		html_escape(h, c[i].text);
		buf_addstr(h, "</td></tr>\n");
	}
	if (n)
		buf_addstr(h, "</table></div>\n");
	rep_claims_free(c, n);
	buf_release(&words);
}

/* ---- the job page: the KPI table ---- */

static void mean_cov(struct buf *h, double mean, double cov, size_t n)
{
	buf_addf(h, "<td class=\"num\" title=\"mean of %zu boots\">", n);
	compare_fmt_si(h, mean);
	buf_addstr(h, " <span class=\"muted\">&plusmn;");
	if (isfinite(cov))
		buf_addf(h, "%.2f%%", cov);
	else
		buf_addstr(h, "-");
	buf_addstr(h, "</span></td>");
}

static void claim_cell(struct buf *h, const struct compare_row *x)
{
	struct buf t = BUF_INIT;

	if (!compare_fmt_claim(&t, x)) {
		buf_addstr(h, "<span class=\"muted\">no claim</span>");
		return;
	}
	buf_addstr(h, "<span class=\"claim-");
	rep_slug(h, x->claim);
	buf_addstr(h, "\">");
	html_escape(h, t.buf);
	buf_addstr(h, "</span>");
	buf_reset(&t);
	if (compare_fmt_claim_basis(&t, x)) {
		/* which figure stood for the claim's cycles */
		buf_addstr(h, " <span class=\"muted\">(a claim on cycles, checked on ");
		html_escape(h, t.buf);
		buf_addstr(h, ")</span>");
	}
	buf_release(&t);
}

/* The rows a reader decides on: throughput, cost, latency and busy time, and the Holm family. */
static int kpi_main_row(const struct compare_row *x)
{
	return x->headline || compare_metric_rank(x->metric) < 20;
}

static void kpi_rows(const struct compare_result *res, int main_rows, struct buf *h)
{
	const struct compare_row *c = res->rows;
	const char *group = NULL;
	struct buf t = BUF_INIT;

	buf_addstr(h, "<div class=\"table-wrap\"><table class=\"kpi\">\n<tr><th>metric</th>"
		   "<th class=\"num\">A &plusmn;CoV</th><th class=\"num\">B &plusmn;CoV</th>"
		   "<th class=\"num\">change [95% CI]</th><th class=\"num\">p</th>"
		   "<th class=\"num\">MWU p</th><th class=\"num\">MDE</th><th>verdict</th><th>claim check</th></tr>\n");
	for (size_t i = 0; i < res->n_rows; i++) {
		const struct compare_row *x = &c[i];

		if (kpi_main_row(x) != main_rows)
			continue;
		if (!group || strcmp(x->workload, group)) {
			group = x->workload;
			buf_addstr(h, "<tr class=\"group\"><th colspan=\"9\">");
			html_escape(h, x->workload);
			buf_addf(h, " <span class=\"muted\">(%zu vs %zu boots)</span></th></tr>\n", x->st.n_a, x->st.n_b);
		}
		buf_addf(h, "<tr id=\"kpi-%zu\"><td class=\"metric\"><code>", i);
		html_escape(h, x->metric);
		buf_addstr(h, "</code>");
		if (x->unit && *x->unit) {
			buf_addstr(h, " <span class=\"muted\">");
			html_escape(h, x->unit);
			buf_addstr(h, "</span>");
		}
		buf_reset(&t);
		if (compare_fmt_modeled(&t, res, x)) {
			buf_addstr(h, "<br><span class=\"modeled muted\">");
			html_escape(h, t.buf);
			buf_addstr(h, "</span>");
		}
		buf_addstr(h, "</td>");
		mean_cov(h, x->st.mean_a, x->st.cov_a, x->st.n_a);
		mean_cov(h, x->st.mean_b, x->st.cov_b, x->st.n_b);
		buf_addstr(h, "<td class=\"num change\"><strong>");
		compare_fmt_change(h, x);
		buf_addstr(h, "</strong>");
		if (isfinite(x->st.ci_lo) && isfinite(x->st.ci_hi)) {
			buf_addstr(h, "<span class=\"ci muted\">");
			compare_fmt_ci(h, x);
			buf_addstr(h, "</span>");
		}
		buf_addstr(h, "</td><td class=\"num\" title=\"Welch; Holm-adjusted: ");
		compare_fmt_p(h, x->p_holm);
		buf_addstr(h, "\">");
		compare_fmt_p(h, x->st.w.p);
		buf_addstr(h, "</td><td class=\"num\">");
		compare_fmt_p(h, x->st.p_mwu);
		buf_addstr(h, "</td><td class=\"num\">");
		compare_fmt_mde(h, x->st.mde_pct);
		buf_addstr(h, "</td><td>");
		rep_verdict_badge(h, x);
		buf_addstr(h, "</td><td class=\"claim\">");
		claim_cell(h, x);
		buf_addstr(h, "</td></tr>\n");
	}
	buf_addstr(h, "</table></div>\n");
	buf_release(&t);
}

/*
 * The KPI table: the metrics a reader decides on (throughput, cost,
 * latency, busy time, and the Holm family) in view, every other metric
 * (counters, perf, per-CPU shares) folded under a <details>, which needs
 * no script: a demo job has 60 rows and the answer must not drown in them.
 */
static void kpi_table(const struct compare_result *res, struct buf *h)
{
	size_t n_main = 0;

	if (!res->n_rows) {
		buf_addstr(h, "<p class=\"note\">No comparison has been computed for this job yet.</p>\n");
		return;
	}
	for (size_t i = 0; i < res->n_rows; i++)
		n_main += kpi_main_row(&res->rows[i]);
	if (n_main)
		kpi_rows(res, 1, h);
	buf_addstr(h, "<p class=\"note\">A, B: means over boots &plusmn; coefficient of variation. "
		   "Change of B against A from Welch's t on log values, with its 95% confidence interval below it; "
		   "p: Welch (hover for the Holm-adjusted value); MWU: exact Mann-Whitney as a check; "
		   "MDE: the smallest change this many boots could detect.</p>\n");
	if (n_main < res->n_rows) {
		buf_addf(h, "<details class=\"more\"><summary>%zu more metric%s (counters, perf, per-CPU shares)</summary>\n",
			 res->n_rows - n_main, res->n_rows - n_main == 1 ? "" : "s");
		kpi_rows(res, 0, h);
		buf_addstr(h, "</details>\n");
	}
}

/* ---- the job page: the answer ---- */

/*
 * The answer first: per workload one line with the headline verdict, the
 * change and its 95% CI, what measured it and the claim check in words,
 * then a forest plot of every headline change with its CI against the
 * threshold band. The details follow further down.
 */
static void answer_section(struct rep *r, const struct rep_job *j, const struct compare_result *res, struct buf *h)
{
	struct plot_forest_row *fr;
	struct buf t = BUF_INIT;
	size_t nf = 0, i;
	char *file;

	if (!res->n_rows) {
		buf_addstr(h, j->side[1].present ? "<p class=\"note\">No comparison has been computed for this job yet "
					     "(it runs <code>klab compare</code> when its runs are in).</p>\n"
					   : "<p class=\"note\">This job measured one kernel: there is nothing to compare; "
					     "its runs are below.</p>\n");
		return;
	}
	buf_addstr(h, "<p class=\"note\">B (");
	html_escape(h, j->side[1].label);
	buf_addstr(h, ") against A (");
	html_escape(h, j->side[0].label);
	buf_addstr(h, "): the headline metric of each workload, its change with the 95% confidence interval, "
		   "and the check of the series' claims.</p>\n<ul class=\"answer\">\n");
	for (i = 0; i < res->n_rows; i++) {
		const struct compare_row *x;

		if (i && !strcmp(res->rows[i].workload, res->rows[i - 1].workload))
			continue;
		x = compare_headline_row(res, res->rows[i].workload);
		buf_addstr(h, "<li><a class=\"wl\" href=\"#wl-");
		rep_slug(h, x->workload);
		buf_addstr(h, "\">");
		html_escape(h, x->workload);
		buf_addstr(h, "</a> <code>");
		html_escape(h, x->metric);
		buf_addstr(h, "</code> ");
		rep_verdict_badge(h, x);
		buf_addstr(h, " <strong>");
		compare_fmt_change(h, x);
		buf_addstr(h, "</strong>");
		if (isfinite(x->st.ci_lo) && isfinite(x->st.ci_hi)) {
			buf_addstr(h, " <span class=\"muted\">[95% CI ");
			compare_fmt_pct(h, x->st.ci_lo);
			buf_addstr(h, ", ");
			compare_fmt_pct(h, x->st.ci_hi);
			buf_addstr(h, "]</span>");
		}
		buf_reset(&t);
		if (confirm_text(r->db, j->id, x->workload, x->metric, &t)) {	/* a nightly's change */
			buf_addstr(h, " <span class=\"confirm\">");
			html_escape(h, t.buf);
			buf_addstr(h, "</span>");
			buf_reset(&t);
		}
		buf_addstr(h, "<br><span class=\"claim\">");
		if (compare_fmt_claims(&t, res, x))
			html_escape(h, t.buf);
		else
			buf_addstr(h, "<span class=\"muted\">no claim checked</span>");
		buf_addstr(h, "</span> &middot; <span class=\"measured\">");
		buf_reset(&t);
		compare_fmt_measured_by(&t, x);
		html_escape(h, t.buf);
		buf_addstr(h, "</span></li>\n");
	}
	buf_addstr(h, "</ul>\n");
	buf_reset(&t);
	if (compare_fmt_clock_note(&t, res)) {	/* what an instruction-count figure means, once */
		buf_addstr(h, "<p class=\"note measured\">");
		html_escape(h, t.buf);
		buf_addstr(h, "</p>\n");
	}

	/* the forest plot: every headline change (the Holm family) with its CI, against the threshold */
	fr = xcalloc(res->n_rows + 1, sizeof(*fr));
	for (int pass = 0; pass < 2 && !nf; pass++)
		for (i = 0; i < res->n_rows; i++) {
			const struct compare_row *x = &res->rows[i];

			if ((pass == 0 && !x->headline) || (pass == 1 && x != compare_headline_row(res, x->workload)) ||
			    (x->unit && !strcmp(x->unit, "pp")) || x->st.verdict == VERDICT_DESCRIPTIVE)
				continue;
			snprintf(fr[nf].label, sizeof(fr[nf].label), "%s %s", x->workload, x->metric);
			fr[nf].change = x->st.change_pct;
			fr[nf].lo = x->st.ci_lo;
			fr[nf].hi = x->st.ci_hi;
			fr[nf].threshold = x->st.threshold_pct;
			fr[nf].direction = x->st.verdict == VERDICT_CHANGED ? compare_direction(x) : 0;
			nf++;
		}
	if (nf) {
		file = rep_chart_file(r, "j%lld-forest", (long long)j->id);
		plot_forest(&r->pb, file, "every headline change of B against A, with its 95% CI", fr, nf);
		rep_chart_add(r, h, file, "forest plot: every headline change with its 95% CI and the threshold");
		buf_addstr(h, "<p class=\"note\">One line per headline metric: the dot is the change, the bar its 95% "
			   "confidence interval, the grey band the practical threshold (a change inside it is too small "
			   "to matter); green: changed the better way, red: the worse way.</p>\n");
		free(file);
	}
	free(fr);
	buf_release(&t);
}

/* ---- the job page: one section per workload ---- */

/* ---- the job page: monitor gaps and one-sided data ---- */

/*
 * Beside the chart a monitor feeds: per side, how many of the side's runs
 * lacked MONITOR and the agent's reason. Returns the number of notes.
 */
static int gap_notes(const struct rep_job *j, const struct rep_gaps *g, const char *monitor, struct buf *h)
{
	int n = 0;

	for (size_t i = 0; i < g->n; i++) {
		const struct rep_gap *x = &g->v[i];
		int b = x->side == 'B';

		if (strcmp(x->monitor, monitor))
			continue;
		buf_addstr(h, "<p class=\"gap\"><strong>");
		if (!strcmp(x->monitor, "pmu")) {
			buf_addstr(h, "Hardware counters (pmu: cycles_per_op, ipc, the cache and branch misses per "
				      "operation)</strong> were ");
		} else {
			html_escape(h, x->monitor);
			buf_addstr(h, "</strong> was ");
		}
		html_escape(h, x->status);
		buf_addf(h, " on %lld of %lld run%s of <span class=\"side-%c\">%c</span> (", (long long)x->runs,
			 (long long)g->runs[b], g->runs[b] == 1 ? "" : "s", b ? 'b' : 'a', b ? 'B' : 'A');
		html_escape(h, j->side[b].label);
		buf_addstr(h, ")");
		if (x->reason) {
			buf_addstr(h, ": <q>");
			html_escape(h, x->reason);
			buf_addstr(h, "</q>");
		} else {
			buf_addstr(h, ", without a reason");
		}
		buf_addstr(h, "</p>\n");
		n++;
	}
	return n;
}

/* The side that alone has data when the job compares two kernels ('A' or 'B'), else 0. */
static char one_side(const struct rep_job *j, size_t na, size_t nb)
{
	if (!j->side[1].present || (na && nb) || (!na && !nb))
		return 0;
	return na ? 'A' : 'B';
}

/* In place of a chart with one side only: which side has data and that the chart is not drawn. */
static void one_side_note(const struct rep_job *j, const struct rep_gaps *g, const char *what, char have,
			  struct buf *h)
{
	int m = have == 'A';	/* the missing side's index */

	buf_addstr(h, "<div class=\"chart-missing one-side\">");
	html_escape(h, what);
	buf_addf(h, ": only <span class=\"side-%c\">%c</span> (", have == 'A' ? 'a' : 'b', have);
	html_escape(h, j->side[have == 'B'].label);
	buf_addf(h, ") has data; the %lld run%s of <span class=\"side-%c\">%c</span> (", (long long)g->runs[m],
		 g->runs[m] == 1 ? "" : "s", m ? 'b' : 'a', m ? 'B' : 'A');
	html_escape(h, j->side[m].label);
	buf_addstr(h, ") recorded none, so there is nothing to compare and no chart is drawn.</div>\n");
}

/* ---- the job page: one section per workload ---- */

static void histograms_section(struct rep *r, const struct rep_job *j, const struct rep_gaps *g, const char *wl,
			       const char *wslug, struct buf *h)
{
	struct rep_hist *hs;
	size_t n;

	gap_notes(j, g, "bpftrace", h);
	rep_hists_load(r->db, j->id, wl, &hs, &n);
	for (size_t i = 0; i < n; i++) {
		struct buf t = BUF_INIT, x = BUF_INIT, s = BUF_INIT;
		const char *name = hs[i].name;
		double ta = 0, tb = 0;
		char have, *file;

		for (size_t k = 0; k < hs[i].n; k++) {
			ta += hs[i].bk[k].a;
			tb += hs[i].bk[k].b;
		}
		buf_addf(&t, "%s: histogram %s, both kernels", wl, name);
		if ((have = one_side(j, ta > 0, tb > 0))) {
			buf_reset(&t);
			buf_addf(&t, "histogram %s", name);
			one_side_note(j, g, t.buf, have, h);
			buf_release(&t);
			continue;
		}
		rep_slug(&s, name);
		file = rep_chart_file(r, "j%lld-%s-hist-%s", (long long)j->id, wslug, s.buf);
		buf_addstr(&x, name);
		if (ends_with(name, "_ns") || ends_with(name, "ns"))
			buf_addstr(&x, " (ns)");
		else if (ends_with(name, "_us"))
			buf_addstr(&x, " (us)");
		plot_histogram(&r->pb, file, t.buf, x.buf, hs[i].bk, hs[i].n, j->side[0].label, j->side[1].label);
		rep_chart_add(r, h, file, t.buf);
		free(file);
		buf_release(&t);
		buf_release(&x);
		buf_release(&s);
	}
	if (!n) {
		char *file = rep_chart_file(r, "j%lld-%s-hist", (long long)j->id, wslug);
		struct buf t = BUF_INIT;

		buf_addf(&t, "%s: histograms", wl);
		plot_empty(&r->pb, file, t.buf, "no histogram was recorded (bpftrace or latency monitor)");
		rep_chart_add(r, h, file, t.buf);
		free(file);
		buf_release(&t);
	}
	rep_hists_free(hs, n);
}

static void bar(struct buf *h, const char *cls, double pct, double scale)
{
	double w = isfinite(pct) ? fabs(pct) * scale : 0;

	if (w > 0.4)
		buf_addf(h, "<span class=\"bar %s\" style=\"width:%.1fpx\"></span> ", cls, w > 120 ? 120 : w);
}

/*
 * Where the CPU time moved: the differential flame graph of the folded
 * stacks, drawn by flamegraph.c into its own SVG file (its frames carry
 * tooltips, which an <img> would not show, so the page embeds it with
 * <object>), and the frames B no longer runs, which a graph of B's widths
 * cannot show.
 */
static void flame_section(struct rep *r, const struct rep_job *j, const struct rep_gaps *g, const char *wl,
			  const char *wslug, struct buf *h)
{
	struct flame_stack *v;
	struct strvec gone = STRVEC_INIT;
	struct buf svg = BUF_INIT, t = BUF_INIT;
	struct flame_opts o = { NULL, j->side[0].label, j->side[1].label, 0, 0 };
	size_t n, drawn;
	int ra, rb;
	char have, *file;

	if (rep_stacks_load(r->db, j->id, wl, &v, &n, &ra, &rb) < 0)
		return;
	buf_addstr(h, "<h3>Where the CPU time moved: differential flame graph</h3>\n");
	if (!ra && !rb) {
		buf_addstr(h, "<div class=\"chart-missing\">No call stacks were stored for this workload (the perf-profile "
			   "monitor sends them; runs stored by an older klab have none).</div>\n");
		goto out;
	}
	if ((have = one_side(j, (size_t)ra, (size_t)rb))) {
		one_side_note(j, g, "call stacks", have, h);
		goto out;
	}
	buf_addf(&t, "%s: B against A, %d and %d profiled runs", wl, ra, rb);
	o.title = t.buf;
	drawn = flame_svg(&svg, v, n, &o, &gone);
	file = xasprintf("charts/j%lld-%s-flame.svg", (long long)j->id, wslug);
	buf_addf(h, "<p class=\"note\">B's call stacks: a frame's width is its share of B's samples (mean over the "
		 "profiled runs), its children sit on top of it; red where B spends a larger share of its samples in "
		 "the frame than A, blue a smaller one. Hover a frame for both shares; %zu frames drawn.</p>\n", drawn);
	buf_addf(h, "<figure class=\"chart flame\"><object style=\"aspect-ratio: 1200 / %d\" type=\"image/svg+xml\" "
		 "data=\"", o.height > 0 ? o.height : 400);
	html_url(h, file);
	buf_addstr(h, "\">differential flame graph (");
	html_url(h, file);
	buf_addstr(h, ")</object></figure>\n");
	rep_add_file(r, file, &svg);
	free(file);
	if (gone.n) {
		buf_addstr(h, "<p class=\"note\">Frames A ran and B did not (no width in B's graph):</p>\n<ul class=\"gone\">");
		for (size_t i = 0; i < gone.n; i++) {
			buf_addstr(h, "<li><code>");
			html_escape(h, gone.v[i]);
			buf_addstr(h, "</code></li>");
		}
		buf_addstr(h, "</ul>\n");
	}
out:
	rep_stacks_free(v, n);
	strvec_clear(&gone);
	buf_release(&svg);
	buf_release(&t);
}

static void profile_section(struct rep *r, const struct rep_job *j, const struct rep_gaps *g, const char *wl,
			    const char *wslug, struct buf *h)
{
	struct rep_prof *p;
	size_t n, i;
	int ra, rb;
	char have;

	if (rep_load_profile(r->db, j->id, wl, 20, &p, &n, &ra, &rb) < 0)
		return;
	buf_addstr(h, "<h3>perf profile: top symbols</h3>\n");
	gap_notes(j, g, "perf-profile", h);
	{
		char *cpus = rep_profile_cpus(r->db, j->id, wl);

		if (cpus) {	/* e.g. the CPU that services the NIC (seed 004's profile) */
			buf_addstr(h, "<p class=\"note profile-cpus\">Samples of CPU ");
			html_escape(h, cpus);
			buf_addstr(h, " only (the workload's <code>profile_cpus</code>: <code>perf record -C</code>), "
				   "not of every CPU.</p>\n");
		}
		free(cpus);
	}
	if (!n) {
		buf_addstr(h, "<div class=\"chart-missing\">No data: no perf profile was recorded for this workload "
			   "(perf-profile monitor).</div>\n");
		rep_prof_free(p, n);
		return;
	}
	if ((have = one_side(j, (size_t)ra, (size_t)rb))) {
		one_side_note(j, g, "perf profile", have, h);
		rep_prof_free(p, n);
		return;
	}
	buf_addf(h, "<p class=\"note\">Share of samples per symbol (summed over commands), mean over %d profiled "
		 "run(s) of A and %d of B. pp: percentage points, B minus A. %s</p>\n", ra, rb,
		 ra >= 3 && rb >= 3 ? "p: Welch's t on the per-run shares."
				    : "No p-value: fewer than 3 profiled runs per side.");
	buf_addstr(h, "<div class=\"table-wrap\"><table class=\"profile\"><tr><th>symbol</th><th>dso</th>"
		   "<th class=\"num\">A %</th><th class=\"num\">B %</th><th class=\"num\">B &minus; A (pp)</th>"
		   "<th class=\"num\">p</th></tr>\n");
	for (i = 0; i < n; i++) {
		double d = p[i].b - p[i].a;

		buf_addstr(h, "<tr><td class=\"sym\"><code>");
		html_escape(h, p[i].symbol);
		buf_addstr(h, "</code></td><td class=\"muted\">");
		html_escape(h, p[i].dso);
		buf_addstr(h, "</td><td class=\"num\">");
		bar(h, "a", p[i].a, 3);
		buf_addf(h, "%.2f</td><td class=\"num\">", p[i].a);
		bar(h, "b", p[i].b, 3);
		buf_addf(h, "%.2f</td><td class=\"num\">", p[i].b);
		bar(h, d < 0 ? "a" : "b", d, 4);
		buf_addf(h, "%+.2f</td><td class=\"num\">", d);
		compare_fmt_p(h, p[i].p);
		buf_addstr(h, "</td></tr>\n");
	}
	buf_addstr(h, "</table></div>\n");
	rep_prof_free(p, n);
	if (j->side[1].present)
		flame_section(r, j, g, wl, wslug, h);
}

/* Runs whose monitors' statuses klab did not store (stored by an older klab): one line for both sides. */
static void unrecorded_note(const struct rep_gaps *g, struct buf *h)
{
	int64_t ma = g->runs[0] - g->recorded[0], mb = g->runs[1] - g->recorded[1];

	if (ma <= 0 && mb <= 0)
		return;
	buf_addstr(h, "<p class=\"gap\">The monitors' statuses were not stored for ");
	if (ma > 0)
		buf_addf(h, "%lld of the %lld runs of A", (long long)ma, (long long)g->runs[0]);
	if (mb > 0)
		buf_addf(h, "%s%lld of the %lld runs of B", ma > 0 ? " and " : "", (long long)mb, (long long)g->runs[1]);
	buf_addstr(h, " (stored by an older klab): a monitor missing there is not named here.</p>\n");
}

static void workload_section(struct rep *r, const struct rep_job *j, const struct compare_result *res,
			     const char *wl, struct buf *h)
{
	struct buf ws = BUF_INIT, title = BUF_INIT, ylab = BUF_INIT;
	const struct compare_row *head = NULL;
	const char *metric = NULL, *unit = NULL, *la = j->side[0].label, *lb = j->side[1].label;
	char *own_metric = NULL, *own_unit = NULL;
	struct plot_run *runs = NULL;
	struct rep_gaps g;
	int64_t *ids = NULL;
	size_t nr = 0, i, run_a = 0, run_b = 0;
	char *file, have;

	rep_slug(&ws, wl);
	rep_gaps_load(r->db, j->id, wl, &g);
	head = compare_headline_row(res, wl);
	if (head) {
		metric = head->metric;
		unit = head->unit;
	} else {
		/* no comparison yet (a one-kernel or running job): the runs' own headline metric */
		rep_own_headline(r->db, j->id, wl, &own_metric, &own_unit);
		metric = own_metric;
		unit = own_unit;
	}
	buf_addstr(h, "<section class=\"workload\" id=\"wl-");
	buf_addstr(h, ws.buf);
	buf_addstr(h, "\">\n<h2>Workload ");
	html_escape(h, wl);
	buf_addstr(h, "</h2>\n");
	if (metric) {
		rep_metric_label(&ylab, metric, unit);
		buf_addstr(h, "<p class=\"note\">Headline metric <code>");
		html_escape(h, metric);
		buf_addstr(h, "</code>");
		if (head) {
			struct buf v = BUF_INIT;

			compare_fmt_verdict(&v, head);
			buf_addstr(h, "; ");
			html_escape(h, v.buf);
			buf_addstr(h, ", ");
			compare_fmt_change(h, head);
			buf_release(&v);
		} else {
			buf_addstr(h, "; not compared");
		}
		buf_addstr(h, ".</p>\n");
		rep_runs_load(r->db, j->id, wl, metric, &runs, &ids, &nr);
	}
	unrecorded_note(&g, h);
	/* monitors that feed no chart of their own: their metrics are in the KPI table */
	gap_notes(j, &g, "perf-stat", h);
	/* no cycles_per_op and no ipc without a PMU: the agent's reason (no hardware PMU, perf_event_paranoid) */
	gap_notes(j, &g, "pmu", h);
	gap_notes(j, &g, "nic", h);
	for (i = 0; i < nr; i++) {
		if (runs[i].side == 'A')
			run_a++;
		else
			run_b++;
	}

	/* run order */
	buf_addstr(h, "<h3>Run order</h3>\n");
	buf_addf(&title, "%s: %s of every run, in run order", wl, metric ? metric : "headline metric");
	if (metric && (have = one_side(j, run_a, run_b))) {
		one_side_note(j, &g, title.buf, have, h);
	} else {
		file = rep_chart_file(r, "j%lld-%s-order", (long long)j->id, ws.buf);
		if (metric)
			plot_run_order(&r->pb, file, title.buf, ylab.buf, runs, nr, la, lb);
		else
			plot_empty(&r->pb, file, title.buf, "no run stored a headline metric (tps, tx_pps, rx_pps, tx_bps)");
		rep_chart_add(r, h, file, title.buf);
		free(file);
	}

	/* distribution and CI */
	buf_addstr(h, "<h3>Distribution per side and the confidence interval of the change</h3>\n");
	buf_reset(&title);
	buf_addf(&title, "%s: %s per side, and B vs A", wl, metric ? metric : "headline metric");
	if (metric && (have = one_side(j, run_a, run_b))) {
		one_side_note(j, &g, title.buf, have, h);
	} else {
		double *va = xmalloc((nr + 1) * sizeof(double)), *vb = xmalloc((nr + 1) * sizeof(double));
		size_t na = 0, nb = 0;
		struct plot_ci ci = { 0, NAN, NAN, NAN, 0 };

		for (i = 0; i < nr; i++) {
			if (runs[i].side == 'A')
				va[na++] = runs[i].value;
			else
				vb[nb++] = runs[i].value;
		}
		if (head) {
			ci.have = 1;
			ci.change = head->st.change_pct;
			ci.lo = head->st.ci_lo;
			ci.hi = head->st.ci_hi;
			ci.threshold = isfinite(head->st.threshold_pct) ? head->st.threshold_pct : 0;
		}
		file = rep_chart_file(r, "j%lld-%s-dist", (long long)j->id, ws.buf);
		plot_distribution(&r->pb, file, title.buf, ylab.buf, va, na, vb, nb, la, lb, &ci);
		rep_chart_add(r, h, file, title.buf);
		free(file);
		free(va);
		free(vb);
	}

	/* per-CPU */
	{
		struct plot_cpu *ca, *cb;
		size_t tot_a, tot_b, na = rep_cpus_load(r->db, j->id, wl, 'A', &ca, &tot_a);
		size_t nb = rep_cpus_load(r->db, j->id, wl, 'B', &cb, &tot_b);

		buf_reset(&title);
		buf_addf(&title, "%s: CPU time per CPU (mean over runs)", wl);
		buf_addstr(h, "<h3>Where the CPU time went</h3>\n");
		gap_notes(j, &g, "cpu", h);
		if ((have = one_side(j, na, nb))) {
			one_side_note(j, &g, "per-CPU time", have, h);
		} else {
			file = rep_chart_file(r, "j%lld-%s-cpu", (long long)j->id, ws.buf);
			plot_cpu_breakdown(&r->pb, file, title.buf, ca, na, cb, nb, la, lb);
			if (tot_a > REP_MAX_CPUS || tot_b > REP_MAX_CPUS)
				buf_addf(h, "<p class=\"note\">The %d busiest CPUs of each side are shown.</p>\n",
					 REP_MAX_CPUS);
			rep_chart_add(r, h, file, title.buf);
			free(file);
		}
		free(ca);
		free(cb);
	}

	/* what observation runs found, and what each monitor cost */
	rep_monitor_cost_section(r->db, j->id, wl, head, h);
	buf_addstr(h, "<p class=\"note observe\">The histograms, profiles and flame graphs below are the "
		      "explanation, not a measurement: bpftrace's histograms and the profiles come from "
		      "observation runs (docs/observation.md), whose probes and samplers add work to every "
		      "event they see; the generator's own histograms come from the measurement runs.</p>\n");

	/* histograms */
	buf_addstr(h, "<h3>Histograms</h3>\n");
	histograms_section(r, j, &g, wl, ws.buf, h);

	/* profile and flame graph */
	profile_section(r, j, &g, wl, ws.buf, h);

	/* per-second series of one run per side */
	{
		struct plot_xy *sa = NULL, *sb = NULL;
		int64_t ra = rep_median_run(runs, ids, nr, 'A'), rb = rep_median_run(runs, ids, nr, 'B');
		size_t na = metric ? rep_samples_load(r->db, ra, metric, &sa) : 0;
		size_t nb = metric ? rep_samples_load(r->db, rb, metric, &sb) : 0;

		buf_reset(&title);
		buf_addf(&title, "%s: %s per second, the median run of each side", wl, metric ? metric : "headline");
		buf_addstr(h, "<h3>Per-second series</h3>\n");
		if (ra || rb) {
			char *ua = rep_run_uid(r->db, ra), *ub = rep_run_uid(r->db, rb);

			buf_addstr(h, "<p class=\"note\">The run whose value is the median of its side: A <code>");
			html_escape(h, ua ? ua : "-");
			buf_addstr(h, "</code>, B <code>");
			html_escape(h, ub ? ub : "-");
			buf_addstr(h, "</code>.</p>\n");
			free(ua);
			free(ub);
		}
		if ((have = one_side(j, na, nb))) {
			one_side_note(j, &g, "per-second series", have, h);
		} else {
			file = rep_chart_file(r, "j%lld-%s-series", (long long)j->id, ws.buf);
			plot_timeseries(&r->pb, file, title.buf, ylab.buf, sa, na, sb, nb, la, lb);
			rep_chart_add(r, h, file, title.buf);
			free(file);
		}
		free(sa);
		free(sb);
	}
	buf_addstr(h, "</section>\n");
	rep_gaps_free(&g);
	free(own_metric);
	free(own_unit);
	free(runs);
	free(ids);
	buf_release(&ws);
	buf_release(&title);
	buf_release(&ylab);
}

/* ---- the job page ---- */

static int job_page(struct rep *r, int64_t id)
{
	struct rep_job j;
	struct rep_sysinfo si;
	struct compare_result res;
	struct buf facts = BUF_INIT, kpi = BUF_INIT, wls = BUF_INIT, claims = BUF_INIT, t = BUF_INIT;
	struct buf content = BUF_INIT, sub = BUF_INIT, state = BUF_INIT, nic = BUF_INIT, cl = BUF_INIT;
	struct buf pmu = BUF_INIT;
	struct buf answer = BUF_INIT;
	struct strvec workloads = STRVEC_INIT;
	char name[64], idstr[32];
	size_t i;
	int ret = -1;

	memset(&res, 0, sizeof(res));
	if (rep_job_load(r->db, id, &j) < 0)
		return -1;
	if (compare_load(r->db, id, 0, &res) < 0)
		goto out;
	compare_sort_rows(&res);

	buf_addstr(&state, "<span class=\"badge s-");
	rep_slug(&state, j.state ? j.state : "unknown");
	buf_addstr(&state, "\">");
	html_escape(&state, j.state);
	buf_addstr(&state, "</span>");
	html_escape(&sub, j.side[0].label);
	if (j.side[1].present) {
		buf_addstr(&sub, " versus ");
		html_escape(&sub, j.side[1].label);
	} else {
		buf_addstr(&sub, " (one kernel)");
	}
	buf_addstr(&sub, " · created ");
	rep_fmt_time(&sub, j.created);
	if (isfinite(j.finished)) {
		buf_addstr(&sub, " · finished ");
		rep_fmt_time(&sub, j.finished);
	}
	if (j.schedule) {
		buf_addstr(&sub, " · schedule ");
		html_escape(&sub, j.schedule);
	}

	buf_addstr(&facts, "<dl class=\"facts\">\n");
	html_escape(&t, j.tree ? j.tree : j.side[0].tree);
	fact(&facts, "tree", t.len ? t.buf : "-");
	buf_reset(&t);
	kernel_desc(&t, &j.side[0], 'A');
	fact(&facts, "base", t.buf);
	buf_reset(&t);
	if (j.side[1].present)
		kernel_desc(&t, &j.side[1], 'B');
	else
		buf_addstr(&t, "<span class=\"muted\">none: this job measured one kernel</span>");
	fact(&facts, "patched", t.buf);
	buf_reset(&t);
	if (j.s_subject || j.s_source) {
		buf_addstr(&t, "<a href=\"");
		series_href(&t, &j);
		buf_addstr(&t, "\">");
		html_escape(&t, j.s_subject ? j.s_subject : j.s_source);
		buf_addstr(&t, "</a>");
		if (j.s_author) {
			buf_addstr(&t, " by ");
			html_escape(&t, j.s_author);
		}
		buf_addf(&t, " <span class=\"muted\">(v%lld, %lld patch%s; ", (long long)j.s_version,
			 (long long)j.s_total, j.s_total == 1 ? "" : "es");
		html_escape(&t, j.s_source);
		buf_addstr(&t, ")</span>");
		fact(&facts, "series", t.buf);
		buf_reset(&t);
	}
	buf_addstr(&t, "DUT <code>");
	html_escape(&t, j.dut ? j.dut : "-");
	buf_addstr(&t, "</code>, peer <code>");
	html_escape(&t, j.peer ? j.peer : "-");
	buf_addstr(&t, "</code>");
	fact(&facts, "machines", t.buf);
	buf_reset(&t);
	rep_sysinfo_load(r->db, &j, &si);
	machine_facts(&si, &nic, &cl, &pmu);
	rep_sysinfo_free(&si);
	fact(&facts, "NIC", nic.buf);
	fact(&facts, "hardware counters", pmu.buf);
	fact(&facts, "kernel cmdline", cl.buf);
	html_escape(&t, j.side[0].profile ? j.side[0].profile : "default");
	if (j.side[1].profile && (!j.side[0].profile || strcmp(j.side[0].profile, j.side[1].profile))) {
		buf_addstr(&t, " (A), ");
		html_escape(&t, j.side[1].profile);
		buf_addstr(&t, " (B)");
	}
	fact(&facts, "tuning profile", t.buf);
	buf_reset(&t);
	boots_runs(r->db, id, &t);
	fact(&facts, "boots &times; runs", t.buf);
	buf_reset(&t);
	if (j.have_seed)
		buf_addf(&t, "randomised ABBA, seed <code>%lld</code>", (long long)j.order_seed);
	else
		buf_addstr(&t, "<span class=\"muted\">not recorded</span>");
	fact(&facts, "order", t.buf);
	buf_reset(&t);
	aa_noise(r, &res, &t);
	fact(&facts, "A/A noise", t.buf);
	buf_reset(&t);
	if (j.error) {
		html_escape(&t, j.error);
		fact(&facts, "error", t.buf);
		buf_reset(&t);
	}
	buf_addstr(&facts, "</dl>\n");
	claims_section(r->db, &j, &claims);
	answer_section(r, &j, &res, &answer);
	kpi_table(&res, &kpi);
	looks_section(r->db, id, &kpi);

	/* workloads: those compared, then any others that have runs */
	for (i = 0; i < res.n_rows; i++)
		if (strvec_find(&workloads, res.rows[i].workload) < 0)
			strvec_push(&workloads, res.rows[i].workload);
	rep_job_workloads(r->db, id, &workloads);
	for (i = 0; i < workloads.n; i++)
		workload_section(r, &j, &res, workloads.v[i], &wls);
	if (!workloads.n)
		buf_addstr(&wls, "<p class=\"note\">No run of this job has been stored yet.</p>\n");

	snprintf(idstr, sizeof(idstr), "%lld", (long long)id);
	{
		const struct html_var vars[] = {
			{ "id", idstr, 0 },
			{ "name", j.name, 0 },
			{ "state", state.buf, 1 },
			{ "subtitle", sub.buf, 1 },
			{ "answer", answer.buf, 1 },
			{ "facts", facts.buf, 1 },
			{ "claims", claims.buf, 1 },
			{ "kpi", kpi.buf, 1 },
			{ "workloads", wls.buf, 1 },
		};
		if (rep_fill_static(&content, "job.tmpl", vars, ARRAY_SIZE(vars)) < 0)
			goto out;
	}
	snprintf(name, sizeof(name), "job-%lld.html", (long long)id);
	buf_reset(&t);
	buf_addf(&t, "job %lld: %s", (long long)id, j.name ? j.name : "");
	ret = rep_add_page(r, name, t.buf, &content);
out:
	rep_job_free(&j);
	compare_result_free(&res);
	strvec_clear(&workloads);
	buf_release(&facts); buf_release(&kpi); buf_release(&wls); buf_release(&claims); buf_release(&t);
	buf_release(&content); buf_release(&sub); buf_release(&state); buf_release(&nic); buf_release(&cl);
	buf_release(&pmu);
	buf_release(&answer);
	return ret;
}

/* ---- the index ---- */

/* A job's headline verdicts on the index: one short line per workload, "workload: VERDICT change [CI]". */
#define INDEX_WORKLOADS 6

static void verdict_summary(struct rep *r, int64_t job, struct buf *h)
{
	struct compare_result res;
	size_t i, shown = 0, total = 0;

	if (compare_load(r->db, job, 0, &res) <= 0) {
		buf_addstr(h, "<span class=\"muted\">no comparison</span>");
		compare_result_free(&res);
		return;
	}
	compare_sort_rows(&res);
	for (i = 0; i < res.n_rows; i++) {
		const struct compare_row *x;

		if (i && !strcmp(res.rows[i].workload, res.rows[i - 1].workload))
			continue;
		total++;
		if (shown == INDEX_WORKLOADS)
			continue;
		x = compare_headline_row(&res, res.rows[i].workload);
		buf_addstr(h, shown++ ? "<br>" : "");
		buf_addstr(h, "<span class=\"headline\">");
		html_escape(h, x->workload);
		buf_addstr(h, ": ");
		rep_verdict_badge(h, x);
		buf_addstr(h, " <code>");
		html_escape(h, x->metric);
		buf_addstr(h, "</code> ");
		compare_fmt_change_ci(h, x);
		buf_addstr(h, "</span>");
	}
	if (total > shown)
		buf_addf(h, "<br><span class=\"muted\">and %zu more workload%s</span>", total - shown,
			 total - shown == 1 ? "" : "s");
	compare_result_free(&res);
}

static void jobs_table(struct rep *r, const struct rep_job_row *v, size_t n, struct buf *h)
{
	for (size_t i = 0; i < n; i++) {
		if (!i)
			buf_addstr(h, "<div class=\"table-wrap\"><table><tr><th>job</th><th>state</th><th>created</th>"
				   "<th>kernels (A vs B)</th><th>series</th><th>machines</th><th>headline verdicts</th></tr>\n");
		buf_addstr(h, "<tr><td>");
		rep_job_link(r, h, v[i].id);
		buf_addstr(h, "<br><span class=\"muted\">");
		html_escape(h, v[i].name);
		if (v[i].scheduled)
			buf_addstr(h, " (scheduled)");
		buf_addstr(h, "</span></td><td><span class=\"s-");
		rep_slug(h, v[i].state ? v[i].state : "unknown");
		buf_addstr(h, "\">");
		html_escape(h, v[i].state);
		buf_addstr(h, "</span></td><td>");
		rep_fmt_time(h, v[i].created);
		buf_addstr(h, "</td><td><span class=\"side-a\">A</span> ");
		html_escape(h, v[i].label_a);
		if (v[i].label_b) {
			buf_addstr(h, "<br><span class=\"side-b\">B</span> ");
			html_escape(h, v[i].label_b);
		}
		buf_addstr(h, "</td><td>");
		html_escape(h, v[i].subject);
		buf_addstr(h, "</td><td>");
		html_escape(h, v[i].dut);
		buf_addstr(h, " &rarr; ");
		html_escape(h, v[i].peer);
		buf_addstr(h, "</td><td>");
		verdict_summary(r, v[i].id, h);
		buf_addstr(h, "</td></tr>\n");
	}
	if (n)
		buf_addstr(h, "</table></div>\n");
	else
		buf_addstr(h, "<p class=\"note\">No job yet: <code>klab submit</code> queues one.</p>\n");
}

static void machines_table(struct rep *r, const struct rep_machine *m, size_t n, struct buf *h)
{
	for (size_t i = 0; i < n; i++) {
		if (!i)
			buf_addstr(h, "<div class=\"table-wrap\"><table><tr><th>machine</th><th>host</th><th>role</th>"
				   "<th>state</th><th>leased to</th><th>last kernel</th><th>last seen</th></tr>\n");
		buf_addstr(h, "<tr><td><code>");
		html_escape(h, m[i].name);
		buf_addstr(h, "</code></td><td>");
		html_escape(h, m[i].host);
		buf_addstr(h, "</td><td>");
		html_escape(h, m[i].role);
		buf_addstr(h, "</td><td><span class=\"");
		buf_addstr(h, m[i].state && !strcmp(m[i].state, "free") ? "s-done" : "s-failed");
		buf_addstr(h, "\">");
		html_escape(h, m[i].state);
		buf_addstr(h, "</span>");
		if (m[i].reason) {
			buf_addstr(h, " <span class=\"muted\">(");
			html_escape(h, m[i].reason);
			buf_addstr(h, ")</span>");
		}
		buf_addstr(h, "</td><td>");
		if (m[i].leased)
			rep_job_link(r, h, m[i].lease_job);
		else
			buf_addstr(h, "-");
		buf_addstr(h, "</td><td>");
		html_escape(h, m[i].last_kernel);
		buf_addstr(h, "</td><td>");
		rep_fmt_time(h, m[i].last_seen);
		buf_addstr(h, "</td></tr>\n");
	}
	if (n)
		buf_addstr(h, "</table></div>\n");
	else
		buf_addstr(h, "<p class=\"note\">No machine has been seen yet.</p>\n");
}

static int index_page(struct rep *r, const char *tiles, const char *hist_list)
{
	struct buf jobs = BUF_INIT, mach = BUF_INIT, content = BUF_INIT, tl = BUF_INIT;
	struct rep_job_row *jv = NULL;
	struct rep_machine *mv = NULL;
	size_t nj = 0, nm = 0;
	int ret = -1;

	if (rep_job_rows_load(r->db, r->max_jobs, &jv, &nj) < 0)
		goto out;
	jobs_table(r, jv, nj, &jobs);
	if (rep_machines_load(r->db, &mv, &nm) < 0)
		goto out;
	machines_table(r, mv, nm, &mach);
	if (*tiles)
		buf_addf(&tl, "<div class=\"tiles\">\n%s</div>\n", tiles);
	else
		buf_addstr(&tl, "<p class=\"note\">No nightly series yet: a schedule in the config fires them.</p>\n");
	{
		const struct html_var vars[] = {
			{ "jobs", jobs.buf, 1 },
			{ "tiles", tl.buf, 1 },
			{ "histories", hist_list, 1 },
			{ "machines", mach.buf, 1 },
		};
		if (rep_fill_static(&content, "index.tmpl", vars, ARRAY_SIZE(vars)) < 0)
			goto out;
	}
	ret = rep_add_page(r, "index.html", "reports", &content);
out:
	rep_job_rows_free(jv, nj);
	rep_machines_free(mv, nm);
	buf_release(&jobs);
	buf_release(&mach);
	buf_release(&content);
	buf_release(&tl);
	return ret;
}

/* ---- a report run ---- */

static int rep_run(struct rep *r, struct report_stats *st)
{
	struct buf tiles = BUF_INIT, hist = BUF_INIT;
	char *charts;
	int ret = 0;
	size_t i;

	if (st)
		memset(st, 0, sizeof(*st));
	if (!html_static_dir()) {
		const char *m = "cannot find the web-static folder with the page templates (set KLAB_WEB_STATIC)";

		rep_keep(r, "%s", m);
		return error("%s", m);
	}
	charts = xasprintf("%s/charts", r->outdir);
	if (mkdir_p(charts) < 0) {
		rep_keep(r, "cannot create folder '%s': %s", charts, strerror(errno));
		free(charts);
		return -1;
	}
	free(charts);
	/* a page that fails keeps its stage when nothing under it kept a finer reason (the log has it) */
	for (i = 0; i < r->n_jobs; i++)
		if (job_page(r, r->jobs[i]) < 0) {
			rep_keep(r, "cannot make the page of job %lld (the report logs why)", (long long)r->jobs[i]);
			ret = -1;
		}
	if (report_history_pages(r, &tiles, &hist) < 0) {
		rep_keep(r, "cannot make the history pages (the report logs why)");
		ret = -1;
	}
	if (index_page(r, tiles.buf, hist.buf) < 0) {
		rep_keep(r, "cannot make the index page (the report logs why)");
		ret = -1;
	}
	if (rep_finish(r, st) < 0)
		ret = -1;
	buf_release(&tiles);
	buf_release(&hist);
	return ret;
}

int report_jobs(struct db *db, const char *outdir, const int64_t *ids, size_t n,
		const struct report_opts *opts, struct report_stats *st)
{
	struct rep r;
	int ret;

	rep_init(&r, db, outdir, opts);
	r.jobs = xcalloc(n + 1, sizeof(*r.jobs));
	memcpy(r.jobs, ids, n * sizeof(*ids));
	r.n_jobs = n;
	ret = rep_run(&r, st);
	rep_release(&r);
	return ret;
}

int report_job(struct db *db, const char *outdir, int64_t job_id, struct buf *why)
{
	struct report_opts o = { 0, 0, why };

	return report_jobs(db, outdir, &job_id, 1, &o, NULL);
}

int report_write_all(struct db *db, const char *outdir, const struct report_opts *opts,
		     struct report_stats *st)
{
	struct rep r;
	struct job_brief *v;
	size_t nv;
	int ret;

	rep_init(&r, db, outdir, opts);
	if (jobs_list_started(db, (int64_t)r.max_jobs, &v, &nv)) {
		rep_release(&r);
		return -1;
	}
	if (nv)
		r.jobs = xrealloc(r.jobs, nv * sizeof(*r.jobs));
	for (size_t i = 0; i < nv; i++)
		r.jobs[r.n_jobs++] = v[i].id;
	job_briefs_free(v, nv);
	ret = rep_run(&r, st);
	rep_release(&r);
	return ret;
}
