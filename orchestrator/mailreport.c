/* mailreport.c: `klab report --format=mail JOB`, a plain-text report for a mailing list, after LKP's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "db.h"
#include "log.h"
#include "plot.h"
#include "report.h"
#include "report_int.h"
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

/* Plain numbers as LKP prints them: 2380000, 8.80, 0.8500. */
static void num(struct buf *b, double v)
{
	if (!isfinite(v))
		buf_addstr(b, "-");
	else if (fabs(v) >= 1000)
		buf_addf(b, "%.0f", v);
	else if (fabs(v) >= 1)
		buf_addf(b, "%.2f", v);
	else
		buf_addf(b, "%.4f", v);
}

struct mjob {
	char *name, *tree, *dut, *peer, *subject, *author, *url, *msgid, *source;
	char *label[2], *commit[2], *release[2], *profile[2];
	int64_t series_id, seed, total, version;
	int have_seed;
};

static void mjob_free(struct mjob *j)
{
	free(j->name); free(j->tree); free(j->dut); free(j->peer); free(j->subject);
	free(j->author); free(j->url); free(j->msgid); free(j->source);
	for (int i = 0; i < 2; i++) {
		free(j->label[i]); free(j->commit[i]); free(j->release[i]); free(j->profile[i]);
	}
}

static int mjob_load(struct db *db, int64_t id, struct mjob *j)
{
	struct db_stmt *st;

	memset(j, 0, sizeof(*j));
	st = db_prepare(db, "SELECT j.name, j.tree, j.dut, j.peer, j.order_seed, j.series_id, s.subject, s.author, "
			"s.source_url, s.message_id, s.source, s.total, s.version "
			"FROM jobs j LEFT JOIN series s ON s.id = j.series_id WHERE j.id = ?", "i", id);
	if (!st)
		return -1;
	if (db_step(st) != DB_ROW) {
		db_finalize(st);
		return error("cannot report job %lld: no such job", (long long)id);
	}
	j->name = rep_colstr(st, 0);
	j->tree = rep_colstr(st, 1);
	j->dut = rep_colstr(st, 2);
	j->peer = rep_colstr(st, 3);
	j->have_seed = !db_col_null(st, 4);
	j->seed = db_col_int64(st, 4);
	j->series_id = db_col_int64(st, 5);
	j->subject = rep_colstr(st, 6);
	j->author = rep_colstr(st, 7);
	j->url = rep_colstr(st, 8);
	j->msgid = rep_colstr(st, 9);
	j->source = rep_colstr(st, 10);
	j->total = db_col_int64(st, 11);
	j->version = db_col_int64(st, 12);
	db_finalize(st);
	st = db_prepare(db, "SELECT s.side, s.label, k.commit_id, k.release, s.profile FROM job_sides s "
			"LEFT JOIN kernels k ON k.id = s.kernel_id WHERE s.job_id = ?", "i", id);
	if (!st)
		return -1;
	while (db_step(st) == DB_ROW) {
		const char *sd = db_col_text(st, 0);
		int i;

		if (!sd || (sd[0] != 'A' && sd[0] != 'B'))
			continue;
		i = sd[0] - 'A';
		j->label[i] = rep_colstr(st, 1);
		j->commit[i] = rep_colstr(st, 2);
		j->release[i] = rep_colstr(st, 3);
		j->profile[i] = rep_colstr(st, 4);
	}
	db_finalize(st);
	for (int i = 0; i < 2; i++)
		if (!j->label[i])
			j->label[i] = xstrdup(i ? "B" : "A");
	return 0;
}

/* "eth1 (idpf, 32 TX / 32 RX queues)" from the DUT's sysinfo, via sqlite's JSON functions. */
static char *nic_line(struct db *db, int64_t job)
{
	char *nic = NULL, *out = NULL, *driver = NULL;
	int64_t tq = -1, rq = -1;
	char *path;

	if (db_get_str(db, &nic, "SELECT json_extract(result, '$.spec.nic') FROM runs WHERE job_id = ? "
		       "AND json_valid(result) AND json_extract(result, '$.spec.nic') IS NOT NULL LIMIT 1", "i", job) < 1)
		return NULL;
	path = xasprintf("$.nics.\"%s\"", nic);
	if (!strchr(nic, '"')) {
		char *d = xasprintf("%s.driver", path), *t = xasprintf("%s.tx_queues", path), *r = xasprintf("%s.rx_queues", path);
		const char *q = "SELECT json_extract(sysinfo, ?) FROM boots WHERE job_id = ? AND json_valid(sysinfo) "
				"AND json_extract(sysinfo, ?) IS NOT NULL ORDER BY seq LIMIT 1";

		db_get_str(db, &driver, q, "sis", d, job, d);
		db_get_int(db, &tq, q, "sis", t, job, t);
		db_get_int(db, &rq, q, "sis", r, job, r);
		free(d);
		free(t);
		free(r);
	}
	if (driver && tq >= 0)
		out = xasprintf("%s (%s, %lld TX / %lld RX queues)", nic, driver, (long long)tq, (long long)rq);
	else if (driver)
		out = xasprintf("%s (%s)", nic, driver);
	else
		out = xstrdup(nic);
	free(path);
	free(nic);
	free(driver);
	return out;
}

static void method_line(struct db *db, int64_t job, const struct mjob *j, FILE *out)
{
	int64_t boots = 0, runs = 0;

	db_get_int(db, &boots, "SELECT COUNT(DISTINCT boot_id) FROM runs WHERE job_id = ? AND side = 'A' AND status = 'ok'",
		   "i", job);
	db_get_int(db, &runs, "SELECT COUNT(*) FROM runs WHERE job_id = ? AND side = 'A' AND status = 'ok' AND workload = "
		   "(SELECT MIN(workload) FROM runs WHERE job_id = ?)", "ii", job, job);
	fprintf(out, "method:       ");
	if (boots > 0 && runs % boots == 0)
		fprintf(out, "%lld boots x %lld runs per kernel", (long long)boots, (long long)(runs / boots));
	else
		fprintf(out, "%lld boots per kernel", (long long)boots);
	if (j->have_seed)
		fprintf(out, ", randomised ABBA order (seed %lld)", (long long)j->seed);
	fprintf(out, ";\n              Welch's t on log values of per-boot means with a 95%% CI,\n"
		"              exact Mann-Whitney as a check\n");
}

static void table(const struct rep_cmp *c, size_t n, const struct mjob *j, FILE *out)
{
	struct buf t = BUF_INIT, l = BUF_INIT;

	fprintf(out, "A: %s\n", clean(&l, j->label[0]));
	fprintf(out, "B: %s\n\n", clean(&l, j->label[1]));
	fprintf(out, "        A                                             B\n");
	fprintf(out, "---------------- ---------------------------- ----------------\n");
	fprintf(out, "      mean  %%CoV  %%change [95%% CI]                 mean  %%CoV\n");
	fprintf(out, "          \\          |                              \\\n");
	for (size_t i = 0; i < n; i++) {
		buf_reset(&t);
		num(&t, c[i].mean_a);
		fprintf(out, "%10s", t.buf);
		if (isfinite(c[i].cov_a))
			fprintf(out, " \u00b1%5.2f%%", c[i].cov_a);
		else
			fprintf(out, "      -");
		buf_reset(&t);
		if (isfinite(c[i].change_pct))
			buf_addf(&t, "%+.2f%%", c[i].change_pct);
		else
			buf_addstr(&t, "-");
		fprintf(out, " %9s", t.buf);
		buf_reset(&t);
		if (isfinite(c[i].ci_lo) && isfinite(c[i].ci_hi))
			buf_addf(&t, "[%+.2f%%, %+.2f%%]", c[i].ci_lo, c[i].ci_hi);
		fprintf(out, " %-20s", t.buf);
		buf_reset(&t);
		num(&t, c[i].mean_b);
		fprintf(out, "%10s", t.buf);
		if (isfinite(c[i].cov_b))
			fprintf(out, " \u00b1%5.2f%%", c[i].cov_b);
		else
			fprintf(out, "      -");
		buf_reset(&t);
		line_clean(&t, c[i].workload);
		buf_addch(&t, '.');
		line_clean(&t, c[i].metric);
		if (c[i].unit && *c[i].unit) {
			buf_addstr(&t, " (");
			line_clean(&t, c[i].unit);
			buf_addch(&t, ')');
		}
		fprintf(out, "  %s\n", t.buf);
	}
	buf_release(&t);
	buf_release(&l);
}

static void verdicts(const struct rep_cmp *c, size_t n, FILE *out)
{
	struct buf t = BUF_INIT;

	fprintf(out, "verdicts:\n");
	for (size_t i = 0; i < n; i++) {
		buf_reset(&t);
		line_clean(&t, c[i].workload);
		buf_addch(&t, '.');
		line_clean(&t, c[i].metric);
		fprintf(out, "  %-40s %-18s p=", t.buf, rep_verdict_text(&c[i]));
		buf_reset(&t);
		rep_fmt_p(&t, c[i].p_welch);
		buf_addstr(&t, " (Holm ");
		rep_fmt_p(&t, c[i].p_holm);
		buf_addstr(&t, "), MWU p=");
		rep_fmt_p(&t, c[i].p_mwu);
		if (isfinite(c[i].mde_pct))
			buf_addf(&t, ", MDE %.2f%%", c[i].mde_pct);
		fprintf(out, "%s\n", t.buf);
	}
	buf_release(&t);
}

/*
 * The claim check. Returns 1 when the measurements support the claim: at
 * least one claimed metric was checked, every check is "consistent" with a
 * CHANGED verdict, and no metric changed the worse way.
 */
static int claims(struct db *db, const struct mjob *j, const struct rep_cmp *c, size_t n, FILE *out,
		  struct buf *why)
{
	struct db_stmt *st;
	struct buf t = BUF_INIT;
	int n_exp = 0, checked = 0, consistent = 0, worse = 0;

	fprintf(out, "claim check:\n");
	if (j->series_id &&
	    (st = db_prepare(db, "SELECT metric, direction, lo_pct, hi_pct, text FROM expectations WHERE series_id = ? "
			     "ORDER BY patch_seq, id", "i", j->series_id))) {
		while (db_step(st) == DB_ROW) {
			const char *metric = db_col_text(st, 0);
			double lo = rep_coldbl(st, 2), hi = rep_coldbl(st, 3);
			int found = 0;

			n_exp++;
			fprintf(out, "  the series says: \"%s\"\n", clean(&t, db_col_text(st, 4)));
			fprintf(out, "    expected: %s ", clean(&t, metric));
			fprintf(out, "%s", clean(&t, db_col_text(st, 1)));
			if (isfinite(lo) && isfinite(hi))
				fprintf(out, " by %g%% to %g%%", lo, hi);
			else if (isfinite(lo))
				fprintf(out, " by at least %g%%", lo);
			fprintf(out, "\n");
			for (size_t i = 0; metric && i < n; i++) {
				if (strcmp(c[i].metric, metric))
					continue;
				found++;
				buf_reset(&t);
				line_clean(&t, c[i].workload);
				buf_addch(&t, '.');
				line_clean(&t, c[i].metric);
				buf_addch(&t, ' ');
				rep_fmt_pct(&t, c[i].change_pct);
				buf_addstr(&t, " [");
				rep_fmt_pct(&t, c[i].ci_lo);
				buf_addstr(&t, ", ");
				rep_fmt_pct(&t, c[i].ci_hi);
				buf_addstr(&t, "]");
				fprintf(out, "    measured: %s, %s: %s\n", t.buf, rep_verdict_text(&c[i]),
					rep_claim_text(c[i].claim) ? rep_claim_text(c[i].claim) : "not checked");
			}
			if (!found)
				fprintf(out, "    measured: no workload of this job measured it\n");
		}
		db_finalize(st);
	}
	if (!n_exp)
		fprintf(out, "  no performance claim was found in the series\n");
	for (size_t i = 0; i < n; i++) {
		if (c[i].claim) {
			checked++;
			if (!strcmp(c[i].claim, "consistent") && c[i].verdict && !strcmp(c[i].verdict, "CHANGED"))
				consistent++;
		}
		if (c[i].verdict && !strcmp(c[i].verdict, "CHANGED") && rep_direction(&c[i]) < 0)
			worse++;
	}
	buf_release(&t);
	if (!checked)
		buf_addstr(why, n_exp ? "no claimed metric was checked by this job"
				      : "the series makes no performance claim to test");
	else if (consistent < checked)
		buf_addf(why, "%d of %d claim checks do not agree with the claim", checked - consistent, checked);
	else if (worse)
		buf_addf(why, "%d metric(s) changed the worse way", worse);
	return checked && consistent == checked && !worse;
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

static void profiles(struct db *db, int64_t job, const struct rep_cmp *c, size_t n, FILE *out)
{
	struct buf t = BUF_INIT;
	int any = 0;

	for (size_t i = 0; i < n; i++) {
		struct rep_prof *p;
		struct pdiff *d;
		size_t np, k;
		int ra, rb;

		if (i && !strcmp(c[i].workload, c[i - 1].workload))
			continue;
		if (rep_load_profile(db, job, c[i].workload, 40, &p, &np, &ra, &rb) < 0 || !np) {
			rep_prof_free(p, 0);
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
				rep_fmt_p(&t, d[k].p->p);
				fprintf(out, "%7s ", t.buf);
			}
			fprintf(out, "%s\n", clean(&t, d[k].p->symbol));
		}
		any = 1;
		free(d);
		for (k = 0; k < np; k++) {
			free(p[k].symbol);
			free(p[k].dso);
		}
		free(p);
	}
	if (!any)
		fprintf(out, "\nno perf profile was recorded, so there are no profile differences to show\n");
	buf_release(&t);
}

/* PNG charts to attach: run order and distribution of each workload's headline metric. */
static int attachments(struct db *db, int64_t job, const struct mjob *j, const struct rep_cmp *c, size_t n,
		       const char *dir, FILE *out)
{
	struct plot_batch pb;
	struct buf f = BUF_INIT, t = BUF_INIT, y = BUF_INIT;
	int ret = 0;

	if (mkdir_p(dir) < 0)
		return -1;
	plot_batch_init(&pb, dir, PLOT_PNG);
	for (size_t i = 0; i < n; i++) {
		struct db_stmt *st;
		double *va, *vb;
		size_t na = 0, nb = 0, cap = 16;
		struct plot_ci ci = { 1, c[i].change_pct, c[i].ci_lo, c[i].ci_hi,
				      isfinite(c[i].threshold_pct) ? c[i].threshold_pct : 0 };

		if (i && !strcmp(c[i].workload, c[i - 1].workload))
			continue;
		st = db_prepare(db, "SELECT r.side, m.value FROM runs r JOIN metrics m ON m.run_id = r.id AND m.name = ? "
				"WHERE r.job_id = ? AND r.workload = ? AND r.status = 'ok'", "sis", c[i].metric, job, c[i].workload);
		if (!st)
			continue;
		va = xmalloc(cap * sizeof(double));
		vb = xmalloc(cap * sizeof(double));
		while (db_step(st) == DB_ROW) {
			const char *sd = db_col_text(st, 0);

			if (na == cap || nb == cap) {
				cap *= 2;
				va = xrealloc(va, cap * sizeof(double));
				vb = xrealloc(vb, cap * sizeof(double));
			}
			if (sd && sd[0] == 'B')
				vb[nb++] = db_col_double(st, 1);
			else
				va[na++] = db_col_double(st, 1);
		}
		db_finalize(st);
		buf_reset(&f);
		buf_addf(&f, "j%lld-", (long long)job);
		rep_slug(&f, c[i].workload);
		buf_addstr(&f, "-dist.png");
		buf_reset(&t);
		buf_addf(&t, "%s: %s per side, and B vs A", c[i].workload, c[i].metric);
		buf_reset(&y);
		buf_addstr(&y, c[i].metric);
		if (c[i].unit)
			buf_addf(&y, " (%s)", c[i].unit);
		plot_distribution(&pb, f.buf, t.buf, y.buf, va, na, vb, nb, j->label[0], j->label[1], &ci);
		free(va);
		free(vb);
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
	struct mjob j;
	struct rep_cmp *c = NULL;
	struct buf t = BUF_INIT, why = BUF_INIT;
	struct strvec wls = STRVEC_INIT;
	const char *tested_by = opts && opts->tested_by ? opts->tested_by : getenv("KLAB_TESTED_BY");
	char *nic;
	size_t n = 0, i;
	int ret = -1, supported;

	if (mjob_load(db, job_id, &j) < 0)
		goto out;
	if (rep_load_cmps(db, job_id, &c, &n) < 0)
		goto out;
	if (!n) {
		error("cannot write the mail report of job %lld: no comparison computed yet (klab compare)",
		      (long long)job_id);
		goto out;
	}
	if (!tested_by || !*tested_by)
		tested_by = DEFAULT_TESTED_BY;

	buf_addstr(&t, j.subject ? j.subject : j.name ? j.name : "klab job");
	fprintf(out, "Subject: %s%s\n", starts_with(t.buf, "Re:") ? "" : "Re: ", clean(&why, t.buf));
	buf_reset(&why);
	if (j.msgid && *j.msgid)
		fprintf(out, "In-Reply-To: %s\n", clean(&t, j.msgid));
	fprintf(out, "\nHello,\n\nklab measured the performance of the %s on a base and a patched kernel.\n\n",
		j.subject ? "series below" : "two kernels below");
	if (j.subject) {
		fprintf(out, "series:       %s\n", clean(&t, j.subject));
		if (j.author)
			fprintf(out, "author:       %s\n", clean(&t, j.author));
		if (j.url || j.source)
			fprintf(out, "link:         %s\n", clean(&t, j.url ? j.url : j.source));
	}
	for (int s = 0; s < 2; s++) {
		fprintf(out, "%s %s:  %s", s ? "patched" : "base   ", s ? "(B)" : "(A)", clean(&t, j.label[s]));
		if (j.tree || j.commit[s]) {
			fprintf(out, "  %s", clean(&t, j.tree));
			if (j.commit[s])
				fprintf(out, " %.12s", clean(&t, j.commit[s]));
			if (s && j.subject)
				fprintf(out, " + the series");
		}
		fprintf(out, "\n");
	}
	fprintf(out, "test machine: %s", clean(&t, j.dut));
	fprintf(out, " -> %s", clean(&t, j.peer));
	nic = nic_line(db, job_id);
	if (nic)
		fprintf(out, ", NIC %s", clean(&t, nic));
	free(nic);
	fprintf(out, "\ntuning:       %s", clean(&t, j.profile[0] ? j.profile[0] : "default"));
	if (j.profile[1] && (!j.profile[0] || strcmp(j.profile[0], j.profile[1])))
		fprintf(out, " (A), %s (B)", clean(&t, j.profile[1]));
	for (i = 0; i < n; i++)
		if (strvec_find(&wls, c[i].workload) < 0)
			strvec_push(&wls, c[i].workload);
	buf_reset(&why);
	for (i = 0; i < wls.n; i++) {
		if (i)
			buf_addstr(&why, ", ");
		line_clean(&why, wls.v[i]);
	}
	fprintf(out, "\ntestcase:     %s\n", why.buf);
	buf_reset(&why);
	method_line(db, job_id, &j, out);
	fprintf(out, "\n");
	table(c, n, &j, out);
	fprintf(out, "\n");
	verdicts(c, n, out);
	fprintf(out, "\n");
	supported = claims(db, &j, c, n, out, &why);
	profiles(db, job_id, c, n, out);
	if (opts && opts->png_dir && attachments(db, job_id, &j, c, n, opts->png_dir, out) < 0)
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
	mjob_free(&j);
	rep_cmps_free(c, n);
	strvec_clear(&wls);
	buf_release(&t);
	buf_release(&why);
	return ret;
}
