/* compare_fmt.c: a comparison in words and numbers (the formatters every output calls), and klab compare's text table and JSON through lib/print. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "compare/compare.h"
#include "compare/compare_fmt.h"
#include "print.h"
#include "stats/stats.h"
#include "util.h"

/* ---- the formatters ------------------------------------------------------- */

void compare_fmt_p(struct buf *b, double p)
{
	if (!isfinite(p))
		buf_addstr(b, "-");
	else if (p < 0.0001)
		buf_addstr(b, "<0.0001");
	else if (p < 0.01)
		buf_addf(b, "%.4f", p);
	else
		buf_addf(b, "%.3f", p);
}

void compare_fmt_num(struct buf *b, double v)
{
	if (!isfinite(v))
		buf_addstr(b, "-");
	else if (fabs(v) >= 1000 && fabs(v) < 1e13)
		buf_addf(b, "%.0f", v);
	else
		buf_addf(b, "%.4g", v);
}

void compare_fmt_si(struct buf *b, double v)
{
	double a = fabs(v);

	if (!isfinite(v))
		buf_addstr(b, "-");
	else if (a >= 1e9)
		buf_addf(b, "%.4gG", v / 1e9);
	else if (a >= 1e6)
		buf_addf(b, "%.4gM", v / 1e6);
	else if (a >= 1e4)
		buf_addf(b, "%.4gk", v / 1e3);
	else
		buf_addf(b, "%.4g", v);
}

void compare_fmt_pct(struct buf *b, double v)
{
	if (!isfinite(v))
		buf_addstr(b, "-");
	else
		buf_addf(b, "%+.2f%%", v);
}

void compare_fmt_mde(struct buf *b, double v)
{
	if (!isfinite(v))
		buf_addstr(b, "-");
	else
		buf_addf(b, "%.2f%%", v);
}

void compare_fmt_change(struct buf *b, const struct compare_row *r)
{
	if (r->unit && !strcmp(r->unit, "pp") && isfinite(r->st.change_pct))
		buf_addf(b, "%+.2f pp", r->st.change_pct);
	else
		compare_fmt_pct(b, r->st.change_pct);
}

void compare_fmt_ci(struct buf *b, const struct compare_row *r)
{
	if (!isfinite(r->st.ci_lo) || !isfinite(r->st.ci_hi))
		return;
	buf_addch(b, '[');
	compare_fmt_pct(b, r->st.ci_lo);
	buf_addstr(b, ", ");
	compare_fmt_pct(b, r->st.ci_hi);
	buf_addch(b, ']');
}

void compare_fmt_change_ci(struct buf *b, const struct compare_row *r)
{
	size_t len;

	compare_fmt_change(b, r);
	buf_addch(b, ' ');
	len = b->len;
	compare_fmt_ci(b, r);
	if (b->len == len)
		buf_setlen(b, len - 1);	/* no CI: drop the space */
}

void compare_fmt_verdict(struct buf *b, const struct compare_row *r)
{
	const struct stats_cmp *s = &r->st;
	int d;

	switch (s->verdict) {
	case VERDICT_CHANGED:
		d = compare_direction(r);
		buf_addstr(b, d > 0 ? "CHANGED (better)" : d < 0 ? "CHANGED (worse)" : "CHANGED");
		break;
	case VERDICT_INCONCLUSIVE:
		buf_addstr(b, "INCONCLUSIVE");
		if (s->extra_boots > 0)
			buf_addf(b, "(+%d)", s->extra_boots);
		else if (s->extra_boots < 0 && !isnan(s->w.p))
			buf_addf(b, "(>%d)", STATS_MAX_BOOTS);
		break;
	default:
		buf_addstr(b, stats_verdict_name(s->verdict));
		break;
	}
}

const char *compare_claim_words(const char *claim)
{
	if (!claim)
		return NULL;
	if (!strcmp(claim, "consistent"))
		return "consistent with the claim";
	if (!strcmp(claim, "outside"))
		return "changed, but outside the claimed range";
	if (!strcmp(claim, "opposite"))
		return "opposite to the claim";
	if (!strcmp(claim, "smaller"))
		return "smaller than claimed";
	if (!strcmp(claim, "larger"))
		return "larger than claimed";
	if (!strcmp(claim, "untestable"))
		return "not testable at this precision";
	return claim;
}

int compare_fmt_claim(struct buf *b, const struct compare_row *r)
{
	const char *w = compare_claim_words(r->claim);

	if (!w)
		return 0;
	buf_addstr(b, w);
	if (!strcmp(r->claim, "untestable")) {
		buf_addstr(b, " (95% CI +-");
		compare_fmt_mde(b, isfinite(r->st.ci_lo) && isfinite(r->st.ci_hi) ?
				   (r->st.ci_hi - r->st.ci_lo) / 2 : NAN);
		buf_addch(b, ')');
	}
	return 1;
}

int compare_fmt_claim_basis(struct buf *b, const struct compare_row *r)
{
	static const char *const basis[] = {
		"cycles the PMU counted",
		"instructions on the icount clock: no run counted cycles",
		"CPU time: no run counted cycles",
	};
	int k = compare_cost_rank(r->metric);

	if (!r->claim || !r->claim_on || strcmp(r->claim_on, COMPARE_COST_CLAIM) || k < 0)
		return 0;
	buf_addstr(b, basis[k]);
	return 1;
}

int compare_fmt_modeled(struct buf *b, const struct compare_result *res, const struct compare_row *r)
{
	if (!starts_with(r->metric, "model_"))
		return 0;
	buf_addf(b, "modeled (klab cache model: %s)",
		 res && res->cache_model && *res->cache_model ? res->cache_model : "sizes and latencies not recorded");
	return 1;
}

void compare_fmt_claim_pct(struct buf *b, const struct compare_row *r)
{
	if (isfinite(r->claim_pct))
		buf_addf(b, "%+.1f%%", r->claim_pct);
	else
		buf_addstr(b, "no figure");
}

void compare_fmt_measured_by(struct buf *b, const struct compare_row *r)
{
	if (r && r->clock && !strcmp(r->clock, "icount"))
		buf_addstr(b, "measured by instruction count (icount clock: path length, not hardware throughput)");
	else
		buf_addstr(b, "measured in real time (wall-clock rates, per-CPU time)");
}

static void fmt_date(struct buf *b, double t)
{
	time_t tt = (time_t)t;
	struct tm tm;
	char d[16];

	if (!isfinite(t) || !gmtime_r(&tt, &tm) || !strftime(d, sizeof(d), "%Y-%m-%d", &tm))
		buf_addstr(b, "?");
	else
		buf_addstr(b, d);
}

int compare_fmt_noise(struct buf *b, const struct compare_row *r)
{
	const struct stats_cmp *s;
	int64_t nb, aa;

	if (!r || r->st.cal == STATS_CAL_NONE)
		return 0;
	s = &r->st;
	nb = r->noise.boots;
	aa = r->noise.aa_boots;
	if (s->cal == STATS_CAL_REJECTED) {
		buf_addstr(b, "calibration of ");
		fmt_date(b, r->noise.date);
		buf_addstr(b, " not used: ");
		if (s->cal_z > STATS_CAL_Z_MAX)
			buf_addf(b, "a boot lies %.1f calibrated sd from its side's mean", s->cal_z);
		else
			buf_addf(b, "the job's spread is %.1fx the calibrated sd (F test p %.2g)", sqrt(s->cal_f),
				 s->cal_f_p);
		buf_addstr(b, "; noise from the job's own boots");
		return 1;
	}
	if (aa == nb)
		buf_addf(b, "noise from %lld A/A boots, ", (long long)nb);
	else if (aa)
		buf_addf(b, "noise from %lld boots (%lld A/A), ", (long long)nb, (long long)aa);
	else
		buf_addf(b, "noise from %lld same-kernel boots, ", (long long)nb);
	fmt_date(b, r->noise.date);
	if (r->noise.self)
		buf_addstr(b, " less this job's own");
	buf_addf(b, " (sd %.3g ppm, %.0f df)", 1e6 * s->cal_sd, s->cal_df);
	return 1;
}

int compare_fmt_clock_note(struct buf *b, const struct compare_result *res)
{
	if (!res->clock || strcmp(res->clock, "icount"))
		return 0;
	buf_addstr(b, "Instruction count: these runs ran in qemu with -icount shift=0, whose guest clock "
		   "advances 1 ns per executed instruction. A rate (tps, tx_pps) is operations per 10^9 "
		   "guest instructions and insn_per_op is instructions per operation: the path length of the "
		   "code, reproducible to parts per million. It is not hardware throughput: cache misses, "
		   "memory bandwidth, lock contention and NIC limits are not modelled.");
	return 1;
}

const struct compare_row *compare_headline_row(const struct compare_result *res, const char *workload)
{
	const struct compare_row *head = NULL;

	for (size_t i = 0; i < res->n_rows; i++)
		if (!strcmp(res->rows[i].workload, workload) &&
		    (!head || compare_metric_rank(res->rows[i].metric) < compare_metric_rank(head->metric)))
			head = &res->rows[i];
	return head;
}

int compare_fmt_claims(struct buf *b, const struct compare_result *res, const struct compare_row *head)
{
	struct buf basis = BUF_INIT;
	int n = 0;

	for (size_t i = 0; i < res->n_rows; i++) {
		const struct compare_row *r = &res->rows[i];

		if (strcmp(r->workload, head->workload) || !r->claim)
			continue;
		buf_addstr(b, n++ ? "; claim on " : "claim on ");
		buf_addstr(b, r->metric);
		buf_addstr(b, " (");
		compare_fmt_claim_pct(b, r);
		if (compare_fmt_claim_basis(&basis, r))
			buf_addf(b, ", %s", basis.buf);
		buf_reset(&basis);
		buf_addstr(b, "): ");
		compare_fmt_claim(b, r);
	}
	buf_release(&basis);
	return n;
}

void compare_fmt_answer(struct buf *b, const struct compare_result *res, const struct compare_row *head)
{
	buf_addstr(b, head->metric);
	buf_addch(b, ' ');
	compare_fmt_verdict(b, head);
	buf_addch(b, ' ');
	compare_fmt_change(b, head);
	if (isfinite(head->st.ci_lo) && isfinite(head->st.ci_hi)) {
		buf_addstr(b, " [95% CI ");
		compare_fmt_pct(b, head->st.ci_lo);
		buf_addstr(b, ", ");
		compare_fmt_pct(b, head->st.ci_hi);
		buf_addch(b, ']');
	}
	buf_addstr(b, ", ");
	compare_fmt_measured_by(b, head);
	buf_addstr(b, "; ");
	if (compare_fmt_noise(b, head))
		buf_addstr(b, "; ");
	if (!compare_fmt_claims(b, res, head))
		buf_addstr(b, "no claim checked");
}

/* ---- klab compare: the text table and JSON ------------------------------- */

static int is_cpu_row(const struct compare_row *r)
{
	return starts_with(r->metric, "cpu") && strchr(r->metric, '.') &&
	       r->st.verdict == VERDICT_DESCRIPTIVE;
}

/* "cpu3.soft" -> 3 and "soft"; "cpuall.soft" -> -1. 0, or -1 when not a per-CPU row. */
static int cpu_row_parse(const struct compare_row *r, int *cpu, const char **field)
{
	const char *dot;

	if (!is_cpu_row(r))
		return -1;
	dot = strchr(r->metric, '.');
	*field = dot + 1;
	if (starts_with(r->metric, "cpuall."))
		*cpu = -1;
	else
		*cpu = atoi(r->metric + 3);
	return 0;
}

static void print_cpu_tables(const struct compare_result *res)
{
	static const char *fields[] = { "usr", "sys", "irq", "soft", "idle" };
	const char *cur = NULL;

	for (size_t i = 0; i < res->n_rows; i++) {
		int cpu_min = 1 << 30, cpu_max = -2, cpu;
		const char *f;

		if (cpu_row_parse(&res->rows[i], &cpu, &f) || (cur && !strcmp(cur, res->rows[i].workload)))
			continue;
		cur = res->rows[i].workload;
		for (size_t k = i; k < res->n_rows && !strcmp(res->rows[k].workload, cur); k++)
			if (!cpu_row_parse(&res->rows[k], &cpu, &f)) {
				if (cpu < cpu_min)
					cpu_min = cpu;
				if (cpu > cpu_max)
					cpu_max = cpu;
			}
		print_text("\nper-CPU time of %s: %% of the CPU, base -> test (difference in points, descriptive)\n  %-4s",
			   cur, "cpu");
		for (size_t fi = 0; fi < ARRAY_SIZE(fields); fi++)
			print_text(fi + 1 < ARRAY_SIZE(fields) ? " %-19s" : " %s", fields[fi]);
		print_text("\n");
		for (int c = cpu_min; c <= cpu_max; c++) {
			int any = 0;
			char line[512];
			size_t len = 0;

			len += (size_t)snprintf(line + len, sizeof(line) - len, "  %-4s", "");
			if (c < 0)
				snprintf(line + 2, sizeof(line) - 2, "%-4s", "all");
			else
				snprintf(line + 2, sizeof(line) - 2, "%-4d", c);
			len = strlen(line);
			for (size_t fi = 0; fi < ARRAY_SIZE(fields); fi++) {
				const struct compare_row *hit = NULL;

				for (size_t k = i; k < res->n_rows && !strcmp(res->rows[k].workload, cur); k++)
					if (!cpu_row_parse(&res->rows[k], &cpu, &f) && cpu == c && !strcmp(f, fields[fi]))
						hit = &res->rows[k];
				if (hit) {
					any = 1;
					len += (size_t)snprintf(line + len, sizeof(line) - len, " %5.1f->%5.1f %+6.1f",
								hit->st.mean_a, hit->st.mean_b, hit->st.change_pct);
				} else {
					len += (size_t)snprintf(line + len, sizeof(line) - len, " %-19s", "-");
				}
				if (len >= sizeof(line))
					len = sizeof(line) - 1;
			}
			if (any)
				print_text("%s\n", line);
		}
	}
}

/* 1 when row I is the first of its workload (the rows need not be sorted). */
static int first_of_workload(const struct compare_result *res, size_t i)
{
	for (size_t k = 0; k < i; k++)
		if (!strcmp(res->rows[k].workload, res->rows[i].workload))
			return 0;
	return 1;
}

/* A row's numbers and words as data: the object of "comparisons". */
static void print_row_data(const struct compare_result *res, const struct compare_row *r)
{
	const struct stats_cmp *s = &r->st;
	struct buf m = BUF_INIT;

	print_data_str("workload", r->workload);
	print_data_str("metric", r->metric);
	print_data_str("unit", r->unit);
	print_data_str("better", r->better);
	if (compare_fmt_modeled(&m, res, r))
		print_data_str("modeled", m.buf);	/* a figure of klab's cache model, not of hardware */
	buf_release(&m);
	print_bool(PRINT_JSON, "headline", "%d", r->headline);
	print_data_int("n_a", (long long)s->n_a);
	print_data_int("n_b", (long long)s->n_b);
	print_data_num("mean_a", s->mean_a);
	print_data_num("mean_b", s->mean_b);
	print_data_num("cov_a", s->cov_a);
	print_data_num("cov_b", s->cov_b);
	print_data_num("change_pct", s->change_pct);
	print_data_num("ci_lo", s->ci_lo);
	print_data_num("ci_hi", s->ci_hi);
	print_data_num("ci90_lo", s->ci90_lo);
	print_data_num("ci90_hi", s->ci90_hi);
	print_data_num("t", s->w.t);
	print_data_num("df", s->w.df);
	print_data_num("p_welch", s->w.p);
	print_data_num("u", s->u);
	print_data_num("p_holm", r->p_holm);
	print_data_num("p_mwu", s->p_mwu);
	print_data_num("hl_ratio", s->hl_ratio);
	print_data_num("mde_pct", s->mde_pct);
	print_data_num("threshold_pct", s->threshold_pct);
	print_data_str("verdict", stats_verdict_name(s->verdict));
	if (s->verdict == VERDICT_INCONCLUSIVE && s->extra_boots >= 0)
		print_data_int("extra_boots", s->extra_boots);
	else
		print_data_null("extra_boots");
	print_data_str("claim", r->claim);
	print_data_num("claim_pct", r->claim_pct);
	if (s->cal == STATS_CAL_NONE) {
		print_data_null("noise");
	} else {
		struct buf w = BUF_INIT;

		compare_fmt_noise(&w, r);
		print_obj_begin("noise");
		print_data_str("source", s->cal == STATS_CAL_USED ? "calibration" : "own");
		print_data_str("text", w.buf);
		print_data_int("boots", r->noise.boots);
		print_data_int("aa_boots", r->noise.aa_boots);
		print_data_time("date", r->noise.date);
		print_data_str("jobs", r->noise.jobs);
		print_data_bool("without_this_job", r->noise.self);
		print_data_num("sd_ppm", 1e6 * s->cal_sd);
		print_data_num("df", s->cal_df);
		print_data_num("z_max", s->cal_z);
		print_data_num("f", s->cal_f);
		print_data_num("f_p", s->cal_f_p);
		print_obj_end();
		buf_release(&w);
	}
}

void compare_print(const struct compare_result *res)
{
	struct buf f[7] = { BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT };
	const char *cur = NULL;

	if (res->job_id)
		print_int(PRINT_ANY, "job_id", "comparison of job %lld: ", res->job_id);
	else
		print_text("comparison of kernels: ");
	print_data_str("label_a", res->label_a);
	print_data_str("label_b", res->label_b);
	print_text("A = %s, B = %s\n", res->label_a ? res->label_a : "A", res->label_b ? res->label_b : "B");
	print_data_str("clock", res->clock ? res->clock : "real");
	/* the answer first: each workload's headline verdict, change and CI, what measured it, the claims */
	for (size_t i = 0; print_is(PRINT_TEXT) && i < res->n_rows; i++) {
		const struct compare_row *head;

		if (!first_of_workload(res, i))
			continue;
		head = compare_headline_row(res, res->rows[i].workload);
		buf_reset(&f[0]);
		compare_fmt_answer(&f[0], res, head);
		print_text("%s%s: %s\n", i ? "" : "\n", head->workload, f[0].buf);
	}
	buf_reset(&f[0]);
	if (print_is(PRINT_TEXT) && compare_fmt_clock_note(&f[0], res))
		print_text("\n%s\n", f[0].buf);
	/* every row is data; the per-CPU rows are text in their own tables below */
	print_list_begin("comparisons", NULL);
	for (size_t i = 0; i < res->n_rows; i++) {
		const struct compare_row *r = &res->rows[i];
		const struct stats_cmp *s = &r->st;

		print_obj_begin(NULL);
		print_row_data(res, r);
		print_obj_end();
		if (is_cpu_row(r) || !print_is(PRINT_TEXT))
			continue;
		if (!cur || strcmp(cur, r->workload)) {
			cur = r->workload;
			print_text("\nworkload %s (T = %.3g%%; boots = unit, values are per-boot means)\n",
				   cur, s->threshold_pct);
			print_text("%14s %7s  %-26s %14s %7s  %8s %8s  %-18s %6s  %s\n", "base", "±CoV",
				   "%change [95% CI]", "test", "±CoV", "p", "MWU p", "verdict", "MDE", "metric");
		}
		for (size_t k = 0; k < ARRAY_SIZE(f); k++)
			buf_reset(&f[k]);
		compare_fmt_num(&f[0], s->mean_a);
		compare_fmt_num(&f[1], s->mean_b);
		compare_fmt_change_ci(&f[2], r);
		compare_fmt_p(&f[3], !isnan(r->p_holm) ? r->p_holm : s->w.p);
		compare_fmt_p(&f[4], s->p_mwu);
		compare_fmt_verdict(&f[5], r);
		compare_fmt_mde(&f[6], s->mde_pct);
		print_text("%14s %6.2f%%  %-26s %14s %6.2f%%  %8s %8s  %-18s %6s  %s%s", f[0].buf,
			   isnan(s->cov_a) ? 0 : s->cov_a, f[2].buf, f[1].buf, isnan(s->cov_b) ? 0 : s->cov_b, f[3].buf,
			   f[4].buf, f[5].buf, f[6].buf, r->metric, r->headline ? " *" : "");
		if (r->claim) {
			buf_reset(&f[0]);
			compare_fmt_claim_pct(&f[0], r);
			buf_addstr(&f[0], ": ");
			compare_fmt_claim(&f[0], r);
			print_text("  (claim %s)", f[0].buf);
		}
		buf_reset(&f[0]);
		if (compare_fmt_noise(&f[0], r))
			print_text("  (%s)", f[0].buf);
		buf_reset(&f[0]);
		if (compare_fmt_modeled(&f[0], res, r))
			print_text("  %s", f[0].buf);
		print_text("\n");
	}
	print_list_end();
	/* per-CPU point differences: one line per workload and CPU, the five shares across */
	if (print_is(PRINT_TEXT))
		print_cpu_tables(res);
	cur = NULL;
	print_list_begin("profile", NULL);
	for (size_t i = 0; i < res->n_prof; i++) {
		const struct compare_prof *p = &res->prof[i];

		if (!cur || strcmp(cur, p->workload)) {
			cur = p->workload;
			print_text("\nperf profile of %s, top differences (%% of samples; difference in points)\n",
				   cur);
			print_text("  %7s %7s %8s  %s\n", "base", "test", "diff", "symbol");
		}
		print_obj_begin(NULL);
		print_data_str("workload", p->workload);
		print_data_str("symbol", p->symbol);
		print_data_str("dso", p->dso);
		print_num(PRINT_ANY, "pct_a", "  %7.2f", p->pct_a);
		print_num(PRINT_ANY, "pct_b", " %7.2f", p->pct_b);
		print_num(PRINT_ANY, "diff_pp", " %+8.2f", p->pct_b - p->pct_a);
		if (p->dso && p->dso[0] == '[')
			print_text("  %s %s\n", p->symbol, p->dso);
		else
			print_text("  %s%s%s%s\n", p->symbol, p->dso ? " (" : "", p->dso ? p->dso : "", p->dso ? ")" : "");
		print_obj_end();
	}
	print_list_end();
	print_text("\n* headline metric: p is Holm-adjusted across the headline metrics\n");
	for (size_t k = 0; k < ARRAY_SIZE(f); k++)
		buf_release(&f[k]);
}

void compare_fmt_claimed(struct buf *b, const char *direction, double lo, double hi)
{
	buf_addstr(b, direction ? direction : "changed");
	if (isfinite(lo) && isfinite(hi) && fabs(hi - lo) < 0.005)
		buf_addf(b, " by %.3g%%", lo);
	else if (isfinite(lo) && isfinite(hi))
		buf_addf(b, " by %.3g%% to %.3g%%", lo, hi);
	else if (isfinite(lo))
		buf_addf(b, " by at least %.3g%%", lo);
	else if (isfinite(hi))
		buf_addf(b, " by up to %.3g%%", hi);
}
