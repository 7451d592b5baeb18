/* mailreport.c: `klab report --format=mail JOB`, a plain-text report for a mailing list, after LKP's. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "compare/compare.h"
#include "compare/compare_fmt.h"
#include "log.h"
#include "report/plot.h"
#include "report/report.h"
#include "report/report_data.h"
#include "report/report_observe.h"
#include "strvec.h"
#include "util.h"

#define DEFAULT_TESTED_BY "klab kernel performance lab <klab@localhost>"

/* An outside string on one line: control characters (a newline in a subject) become spaces. */
static void line_clean(struct buf *b, const char *s)
{
	for (; s && *s; s++)
		buf_addch(b, (unsigned char)*s < 0x20 || *s == 0x7f ? ' ' : *s);
}

static const char *clean(struct buf *b, const char *s)
{
	buf_reset(b);
	line_clean(b, s ? s : "-");
	return b->buf;
}

/* "workload.metric", on one line. */
static void row_name(struct buf *b, const struct compare_row *r)
{
	line_clean(b, r->workload);
	buf_addch(b, '.');
	line_clean(b, r->metric);
}

/* "eth1 (idpf, 32 TX / 32 RX queues)": the NIC the runs' spec names, as the DUT's sysinfo describes it. */
static char *nic_line(struct db *db, const struct rep_job *j)
{
	struct rep_sysinfo si;
	const struct rep_nic *n;
	char *out = NULL;

	rep_sysinfo_load(db, j, &si);
	if (!si.spec_nic)
		goto out;
	n = si.n_nics ? &si.nics[0] : NULL;
	if (n && n->driver && n->tx_queues >= 0)
		out = xasprintf("%s (%s, %d TX / %d RX queues)", si.spec_nic, n->driver, n->tx_queues, n->rx_queues);
	else if (n && n->driver)
		out = xasprintf("%s (%s)", si.spec_nic, n->driver);
	else
		out = xstrdup(si.spec_nic);
out:
	rep_sysinfo_free(&si);
	return out;
}

/* The DUT's PMU in words (rep_sysinfo's pmu), NULL when its sysinfo did not record it. */
static char *pmu_line(struct db *db, const struct rep_job *j)
{
	struct rep_sysinfo si;
	char *out;

	rep_sysinfo_load(db, j, &si);
	out = si.pmu ? xstrdup(si.pmu) : NULL;
	rep_sysinfo_free(&si);
	return out;
}

static void method_line(struct db *db, const struct rep_job *j, FILE *out)
{
	struct rep_count *c;
	int64_t boots = 0, runs = 0;
	size_t n;

	/* the first workload's side A stands for the method */
	rep_counts_load(db, j->id, &c, &n);
	for (size_t i = 0; i < n; i++)
		if (c[i].side == 'A') {
			boots = c[i].boots;
			runs = c[i].runs;
			break;
		}
	rep_counts_free(c, n);
	fprintf(out, "method:       ");
	if (boots > 0 && runs % boots == 0)
		fprintf(out, "%lld boots x %lld runs per kernel", (long long)boots, (long long)(runs / boots));
	else
		fprintf(out, "%lld boots per kernel", (long long)boots);
	if (j->have_seed)
		fprintf(out, ", randomised ABBA order (seed %lld)", (long long)j->order_seed);
	fprintf(out, ";\n              Welch's t on log values of per-boot means with a 95%% CI,\n"
		"              exact Mann-Whitney as a check\n");
}

static void table(const struct compare_result *res, const struct rep_job *j, FILE *out)
{
	struct buf t = BUF_INIT, l = BUF_INIT;

	fprintf(out, "A: %s\n", clean(&l, j->side[0].label));
	fprintf(out, "B: %s\n\n", clean(&l, j->side[1].label));
	fprintf(out, "        A                                             B\n");
	fprintf(out, "---------------- ---------------------------- ----------------\n");
	fprintf(out, "      mean  %%CoV  %%change [95%% CI]                 mean  %%CoV\n");
	fprintf(out, "          \\          |                              \\\n");
	for (size_t i = 0; i < res->n_rows; i++) {
		const struct compare_row *r = &res->rows[i];

		buf_reset(&t);
		compare_fmt_num(&t, r->st.mean_a);
		fprintf(out, "%10s", t.buf);
		if (isfinite(r->st.cov_a))
			fprintf(out, " \u00b1%5.2f%%", r->st.cov_a);
		else
			fprintf(out, "      -");
		buf_reset(&t);
		compare_fmt_change(&t, r);
		fprintf(out, " %9s", t.buf);
		buf_reset(&t);
		compare_fmt_ci(&t, r);
		fprintf(out, " %-20s", t.buf);
		buf_reset(&t);
		compare_fmt_num(&t, r->st.mean_b);
		fprintf(out, "%10s", t.buf);
		if (isfinite(r->st.cov_b))
			fprintf(out, " \u00b1%5.2f%%", r->st.cov_b);
		else
			fprintf(out, "      -");
		buf_reset(&t);
		row_name(&t, r);
		if (r->unit && *r->unit) {
			buf_addstr(&t, " (");
			line_clean(&t, r->unit);
			buf_addch(&t, ')');
		}
		buf_reset(&l);
		if (compare_fmt_modeled(&l, res, r)) {
			buf_addstr(&t, ", ");
			line_clean(&t, l.buf);
		}
		fprintf(out, "  %s\n", t.buf);
	}
	buf_release(&t);
	buf_release(&l);
}

static void verdicts(const struct compare_result *res, FILE *out)
{
	struct buf t = BUF_INIT, v = BUF_INIT;

	fprintf(out, "verdicts:\n");
	for (size_t i = 0; i < res->n_rows; i++) {
		const struct compare_row *r = &res->rows[i];

		buf_reset(&t);
		row_name(&t, r);
		buf_reset(&v);
		compare_fmt_verdict(&v, r);
		fprintf(out, "  %-40s %-18s p=", t.buf, v.buf);
		buf_reset(&t);
		compare_fmt_p(&t, r->st.w.p);
		buf_addstr(&t, " (Holm ");
		compare_fmt_p(&t, r->p_holm);
		buf_addstr(&t, "), MWU p=");
		compare_fmt_p(&t, r->st.p_mwu);
		if (isfinite(r->st.mde_pct)) {
			buf_addstr(&t, ", MDE ");
			compare_fmt_mde(&t, r->st.mde_pct);
		}
		fprintf(out, "%s\n", t.buf);
	}
	buf_release(&t);
	buf_release(&v);
}

/*
 * The claim check. Returns 1 when the measurements support the claim: at
 * least one claimed metric was checked, every check is "consistent" with a
 * CHANGED verdict, and no metric changed the worse way.
 */
/* fprintf when OUT is not NULL: claims() runs once silently, for the answer at the top. */
static void say(FILE *out, const char *fmt, ...) KLAB_PRINTF(2, 3);
static void say(FILE *out, const char *fmt, ...)
{
	va_list ap;

	if (!out)
		return;
	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
}

/* Whether some row of RES was checked against the claim on METRIC. */
static int claim_checked_on(const struct compare_result *res, const char *metric)
{
	for (size_t i = 0; i < res->n_rows; i++)
		if (res->rows[i].claim_on && !strcmp(res->rows[i].claim_on, metric))
			return 1;
	return 0;
}

static int claims(struct db *db, const struct rep_job *j, const struct compare_result *res, FILE *out,
		  struct buf *why)
{
	struct rep_claim *e;
	struct buf t = BUF_INIT, v = BUF_INIT, expected = BUF_INIT;
	size_t n_exp;
	int checked = 0, consistent = 0, worse = 0;

	say(out, "claim check:\n");
	rep_claims_load(db, j->series_id, &e, &n_exp);
	for (size_t k = 0; k < n_exp; k++) {
		int found = 0;

		say(out, "  the series says: \"%s\"\n", clean(&t, e[k].text));
		say(out, "    expected: %s ", clean(&t, e[k].metric));
		buf_reset(&expected);
		compare_fmt_claimed(&expected, e[k].direction, e[k].lo, e[k].hi);
		say(out, "%s\n", clean(&t, expected.buf));
		for (size_t i = 0; e[k].metric && i < res->n_rows; i++) {
			const struct compare_row *r = &res->rows[i];
			struct buf words = BUF_INIT;

			/* the rows this claim was checked on ("throughput" on tps, cycles on cycles_per_op), else its own metric's */
			if (r->claim_on ? strcmp(r->claim_on, e[k].metric) : strcmp(r->metric, e[k].metric) ||
			    claim_checked_on(res, e[k].metric))
				continue;
			found++;
			buf_reset(&t);
			row_name(&t, r);
			buf_addch(&t, ' ');
			compare_fmt_change_ci(&t, r);
			buf_reset(&v);
			compare_fmt_verdict(&v, r);
			if (!compare_fmt_claim(&words, r))
				buf_addstr(&words, "not checked");
			say(out, "    measured: %s, %s: %s\n", t.buf, v.buf, words.buf);
			buf_reset(&words);
			if (compare_fmt_claim_basis(&words, r))
				say(out, "      a claim on cycles, checked on %s: %s\n", clean(&t, r->metric), words.buf);
			buf_release(&words);
		}
		if (!found)
			say(out, "    measured: no workload of this job measured it\n");
	}
	if (!n_exp)
		say(out, "  no performance claim was found in the series\n");
	for (size_t i = 0; i < res->n_rows; i++) {
		const struct compare_row *r = &res->rows[i];

		if (r->claim) {
			checked++;
			if (!strcmp(r->claim, "consistent") && r->st.verdict == VERDICT_CHANGED)
				consistent++;
		}
		if (r->st.verdict == VERDICT_CHANGED && compare_direction(r) < 0)
			worse++;
	}
	rep_claims_free(e, n_exp);
	buf_release(&t);
	buf_release(&expected);
	buf_release(&v);
	if (!checked)
		buf_addstr(why, n_exp ? "no claimed metric was checked by this job"
				      : "the series makes no performance claim to test");
	else if (consistent < checked)
		buf_addf(why, "%d of %d claim checks do not agree with the claim", checked - consistent, checked);
	else if (worse)
		buf_addf(why, "%d metric(s) changed the worse way", worse);
	return checked && consistent == checked && !worse;
}

/* The monitors that did not record on every run, per workload and side, with the agent's reason. */
static void gaps(struct db *db, const struct rep_job *j, const struct compare_result *res, FILE *out)
{
	struct buf t = BUF_INIT;
	int any = 0;

	for (size_t i = 0; i < res->n_rows; i++) {
		struct rep_gaps g;

		if (i && !strcmp(res->rows[i].workload, res->rows[i - 1].workload))
			continue;
		rep_gaps_load(db, j->id, res->rows[i].workload, &g);
		for (size_t k = 0; k < g.n; k++) {
			const struct rep_gap *x = &g.v[k];
			int b = x->side == 'B';

			if (!any++)
				fprintf(out, "\nmonitors that did not record on every run (their charts and figures lack those runs):\n");
			fprintf(out, "  %s: ", clean(&t, res->rows[i].workload));
			fprintf(out, "%s ", clean(&t, x->monitor));
			fprintf(out, "%s on %lld of %lld runs of %c", clean(&t, x->status), (long long)x->runs,
				(long long)g.runs[b], b ? 'B' : 'A');
			fprintf(out, ": %s\n", clean(&t, x->reason ? x->reason : "no reason given"));
		}
		rep_gaps_free(&g);
	}
	buf_release(&t);
}

/* What each monitor cost each workload, from its observation runs (docs/observation.md). */
static void monitor_costs(struct db *db, const struct rep_job *j, const struct compare_result *res, FILE *out)
{
	struct buf t = BUF_INIT, l = BUF_INIT;
	int any = 0;

	for (size_t i = 0; i < res->n_rows; i++) {
		struct mc_row rows[16];
		const char *per_op;
		size_t n;

		if (i && !strcmp(res->rows[i].workload, res->rows[i - 1].workload))
			continue;
		n = rep_monitor_costs(db, j->id, res->rows[i].workload, compare_headline_row(res, res->rows[i].workload),
				      rows, ARRAY_SIZE(rows), &per_op);
		for (size_t k = 0; k < n; k++) {
			if (!any++)
				fprintf(out, "\nmonitor cost (observation runs against the measurement runs of their boot; "
					     "no verdict reads an observation run):\n");
			buf_reset(&l);
			rep_monitor_cost_line(&l, &rows[k], per_op);
			fprintf(out, "  %s: ", clean(&t, res->rows[i].workload));
			fprintf(out, "%s\n", clean(&t, l.buf));
		}
	}
	buf_release(&t);
	buf_release(&l);
}

/*
 * The answer first: per workload the headline verdict, change and 95% CI,
 * what measured it and the claim check (compare_fmt_answer(), the line
 * klab compare prints too), then whether the measurements support the
 * series' claim. The details follow.
 */
static void answer(struct db *db, const struct rep_job *j, const struct compare_result *res, int supported,
		   const char *why, FILE *out)
{
	struct buf t = BUF_INIT, l = BUF_INIT, w = BUF_INIT;

	fprintf(out, "The answer (B against A; each workload's headline metric, 95%% CI):\n\n");
	for (size_t i = 0; i < res->n_rows; i++) {
		const struct compare_row *head;

		if (i && !strcmp(res->rows[i].workload, res->rows[i - 1].workload))
			continue;
		head = compare_headline_row(res, res->rows[i].workload);
		buf_reset(&t);
		compare_fmt_answer(&t, res, head);
		fprintf(out, "  %s: %s\n", clean(&w, head->workload), clean(&l, t.buf));
		/*
		 * a nightly's change counts once a second job agrees (docs/bisect.md): before
		 * its confirmation is queued (the mail of the nightly's own notify) and after
		 */
		buf_reset(&t);
		if (confirm_text(db, j->id, head->workload, head->metric, &t))
			fprintf(out, "    %s\n", clean(&l, t.buf));
		else if (j->schedule && head->st.verdict == VERDICT_CHANGED)
			fprintf(out, "    not reported yet: a confirmation job measures it again before it counts\n");
	}
	buf_reset(&t);
	if (compare_fmt_clock_note(&t, res)) {	/* what an instruction-count figure means, once, wrapped */
		const char *p = clean(&l, t.buf), *sp;
		int col = 0;

		fputc('\n', out);
		while (*p) {
			size_t n = (sp = strchr(p, ' ')) ? (size_t)(sp - p) : strlen(p);

			if (col && col + 1 + (int)n > 74) {
				fputc('\n', out);
				col = 0;
			}
			fprintf(out, "%s%.*s", col ? " " : "  ", (int)n, p);
			col += (int)n + (col ? 1 : 2);
			p += n;
			while (*p == ' ')
				p++;
		}
		fputc('\n', out);
	}
	if (supported)
		fprintf(out, "\n  The measurements support the performance claim of the series (Tested-by below).\n");
	else
		fprintf(out, "\n  No Tested-by: %s.\n", why);
	buf_release(&t);
	buf_release(&l);
	buf_release(&w);
}

struct pdiff {
	const struct rep_prof *p;
	double d;
};

static int pdiff_cmp(const void *x, const void *y)
{
	double a = fabs(((const struct pdiff *)x)->d), b = fabs(((const struct pdiff *)y)->d);

	return a > b ? -1 : a < b;
}

static void profiles(struct db *db, int64_t job, const struct compare_result *res, FILE *out)
{
	const struct compare_row *c = res->rows;
	struct buf t = BUF_INIT;
	int any = 0;

	for (size_t i = 0; i < res->n_rows; i++) {
		struct rep_prof *p;
		struct pdiff *d;
		size_t np, k;
		int ra, rb;

		if (i && !strcmp(c[i].workload, c[i - 1].workload))
			continue;
		if (rep_load_profile(db, job, c[i].workload, 40, &p, &np, &ra, &rb) < 0 || !np) {
			rep_prof_free(p, np);
			continue;
		}
		d = xcalloc(np, sizeof(*d));
		for (k = 0; k < np; k++) {
			d[k].p = &p[k];
			d[k].d = (isfinite(p[k].b) ? p[k].b : 0) - (isfinite(p[k].a) ? p[k].a : 0);
		}
		qsort(d, np, sizeof(*d), pdiff_cmp);
		fprintf(out, "\ntop profile differences, %s (perf, %d profiled runs of A, %d of B):\n",
			clean(&t, c[i].workload), ra, rb);
		fprintf(out, "      A%%      B%%   B-A pp  %s symbol\n", ra >= 3 && rb >= 3 ? "     p" : "");
		for (k = 0; k < np && k < 10; k++) {
			fprintf(out, "  %6.2f  %6.2f  %+7.2f  ", d[k].p->a, d[k].p->b, d[k].d);
			if (ra >= 3 && rb >= 3) {
				buf_reset(&t);
				compare_fmt_p(&t, d[k].p->p);
				fprintf(out, "%7s ", t.buf);
			}
			fprintf(out, "%s\n", clean(&t, d[k].p->symbol));
		}
		any = 1;
		free(d);
		rep_prof_free(p, np);
	}
	if (!any)
		fprintf(out, "\nno perf profile was recorded, so there are no profile differences to show\n");
	buf_release(&t);
}

/* PNG charts to attach: the distribution of each workload's headline metric, and its CI. */
static int attachments(struct db *db, const struct rep_job *j, const struct compare_result *res, const char *dir,
		       FILE *out)
{
	const struct compare_row *c = res->rows;
	struct plot_batch pb;
	struct buf f = BUF_INIT, t = BUF_INIT, y = BUF_INIT;
	int ret = 0;

	if (mkdir_p(dir) < 0)
		return -1;
	plot_batch_init(&pb, dir, PLOT_PNG);
	for (size_t i = 0; i < res->n_rows; i++) {
		struct plot_run *runs;
		int64_t *ids;
		double *va, *vb;
		size_t nr, na = 0, nb = 0;
		struct plot_ci ci = { 1, c[i].st.change_pct, c[i].st.ci_lo, c[i].st.ci_hi,
				      isfinite(c[i].st.threshold_pct) ? c[i].st.threshold_pct : 0 };

		if (i && !strcmp(c[i].workload, c[i - 1].workload))
			continue;
		rep_runs_load(db, j->id, c[i].workload, c[i].metric, &runs, &ids, &nr);
		va = xmalloc((nr + 1) * sizeof(double));
		vb = xmalloc((nr + 1) * sizeof(double));
		for (size_t k = 0; k < nr; k++) {
			if (runs[k].side == 'B')
				vb[nb++] = runs[k].value;
			else
				va[na++] = runs[k].value;
		}
		buf_reset(&f);
		buf_addf(&f, "j%lld-", (long long)j->id);
		rep_slug(&f, c[i].workload);
		buf_addstr(&f, "-dist.png");
		buf_reset(&t);
		buf_addf(&t, "%s: %s per side, and B vs A", c[i].workload, c[i].metric);
		buf_reset(&y);
		buf_addstr(&y, c[i].metric);
		if (c[i].unit)
			buf_addf(&y, " (%s)", c[i].unit);
		plot_distribution(&pb, f.buf, t.buf, y.buf, va, na, vb, nb, j->side[0].label, j->side[1].label, &ci);
		free(va);
		free(vb);
		free(runs);
		free(ids);
	}
	if (pb.files.n) {
		if (!plot_gnuplot()) {
			fprintf(out, "\n(no charts attached: gnuplot is not installed)\n");
		} else if (plot_batch_run(&pb) < 0) {
			ret = -1;
		} else {
			fprintf(out, "\nattached charts (in %s):\n", dir);
			for (size_t k = 0; k < pb.files.n; k++)
				if (plot_exists(&pb, pb.files.v[k]))
					fprintf(out, "  %s\n", pb.files.v[k]);
		}
	}
	plot_batch_release(&pb);
	buf_release(&f);
	buf_release(&t);
	buf_release(&y);
	return ret;
}

int report_mail(struct db *db, int64_t job_id, FILE *out, const struct report_mail_opts *opts)
{
	struct rep_job j;
	struct compare_result res;
	struct buf t = BUF_INIT, why = BUF_INIT;
	struct strvec wls = STRVEC_INIT;
	const char *tested_by = opts && opts->tested_by ? opts->tested_by : getenv("KLAB_TESTED_BY");
	char *nic;
	size_t i;
	int ret = -1, supported, found;

	memset(&res, 0, sizeof(res));
	if (rep_job_load(db, job_id, &j) < 0)
		return -1;
	if ((found = compare_load(db, job_id, 0, &res)) < 0)
		goto out;
	if (!found) {
		error("cannot write the mail report of job %lld: no comparison computed yet (klab compare)",
		      (long long)job_id);
		goto out;
	}
	compare_sort_rows(&res);
	if (!tested_by || !*tested_by)
		tested_by = DEFAULT_TESTED_BY;

	buf_addstr(&t, j.s_subject ? j.s_subject : j.name ? j.name : "klab job");
	fprintf(out, "Subject: %s%s\n", starts_with(t.buf, "Re:") ? "" : "Re: ", clean(&why, t.buf));
	buf_reset(&why);
	if (j.s_msgid && *j.s_msgid)
		fprintf(out, "In-Reply-To: %s\n", clean(&t, j.s_msgid));
	fprintf(out, "\nHello,\n\nklab measured the performance of the %s on a base and a patched kernel.\n\n",
		j.s_subject ? "series below" : "two kernels below");
	supported = claims(db, &j, &res, NULL, &why);
	answer(db, &j, &res, supported, why.buf, out);
	buf_reset(&why);
	fprintf(out, "\nThe details:\n\n");
	if (j.s_subject) {
		fprintf(out, "series:       %s\n", clean(&t, j.s_subject));
		if (j.s_author)
			fprintf(out, "author:       %s\n", clean(&t, j.s_author));
		if (j.s_url || j.s_source)
			fprintf(out, "link:         %s\n", clean(&t, j.s_url ? j.s_url : j.s_source));
	}
	for (int s = 0; s < 2; s++) {
		const struct rep_side *sd = &j.side[s];

		fprintf(out, "%s %s:  %s", s ? "patched" : "base   ", s ? "(B)" : "(A)", clean(&t, sd->label));
		if (j.tree || sd->commit) {
			fprintf(out, "  %s", clean(&t, j.tree));
			if (sd->commit)
				fprintf(out, " %.12s", clean(&t, sd->commit));
			if (s && j.s_subject)
				fprintf(out, " + the series");
		}
		fprintf(out, "\n");
	}
	fprintf(out, "test machine: %s", clean(&t, j.dut));
	fprintf(out, " -> %s", clean(&t, j.peer));
	nic = nic_line(db, &j);
	if (nic)
		fprintf(out, ", NIC %s", clean(&t, nic));
	free(nic);
	if ((nic = pmu_line(db, &j)))
		fprintf(out, "\nPMU:          %s", clean(&t, nic));
	free(nic);
	fprintf(out, "\ntuning:       %s", clean(&t, j.side[0].profile ? j.side[0].profile : "default"));
	if (j.side[1].profile && (!j.side[0].profile || strcmp(j.side[0].profile, j.side[1].profile)))
		fprintf(out, " (A), %s (B)", clean(&t, j.side[1].profile));
	for (i = 0; i < res.n_rows; i++)
		if (strvec_find(&wls, res.rows[i].workload) < 0)
			strvec_push(&wls, res.rows[i].workload);
	buf_reset(&why);
	for (i = 0; i < wls.n; i++) {
		if (i)
			buf_addstr(&why, ", ");
		line_clean(&why, wls.v[i]);
	}
	fprintf(out, "\ntestcase:     %s\n", why.buf);
	buf_reset(&why);
	method_line(db, &j, out);
	fprintf(out, "\n");
	table(&res, &j, out);
	fprintf(out, "\n");
	verdicts(&res, out);
	fprintf(out, "\n");
	supported = claims(db, &j, &res, out, &why);
	gaps(db, &j, &res, out);
	monitor_costs(db, &j, &res, out);
	profiles(db, job_id, &res, out);
	if (opts && opts->png_dir && attachments(db, &j, &res, opts->png_dir, out) < 0)
		goto out;
	fprintf(out, "\n");
	if (supported)
		fprintf(out, "The measurements support the performance claim of the series.\n\n"
			"Tested-by: %s\n", clean(&t, tested_by));
	else
		fprintf(out, "No Tested-by: %s.\n", why.buf);
	fprintf(out, "\n-- \nklab %s, job %lld\n", KLAB_VERSION, (long long)job_id);
	ret = 0;
out:
	rep_job_free(&j);
	compare_result_free(&res);
	strvec_clear(&wls);
	buf_release(&t);
	buf_release(&why);
	return ret;
}
