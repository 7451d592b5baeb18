/* cmd/query.c: `klab query`, `klab compare` and `klab history`: results, A/B comparisons and nightly series. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "cmd.h"
#include "compare/compare.h"
#include "conf/conf.h"
#include "store/db.h"
#include "store/jobs.h"
#include "store/runs.h"
#include "log.h"
#include "util.h"

/*
 * A point in time for --since/--until: seconds since 1970, an ISO date
 * "YYYY-MM-DD[THH:MM[:SS]]" (UTC, ' ' instead of 'T' too), or an age
 * "30m", "12h", "7d" before now. 0 or -1.
 */
static int parse_when(const char *s, double *out)
{
	struct tm tm;
	const char *end;
	double v;
	char unit;
	int n = 0;

	if (!parse_double(s, &v)) {
		*out = v;
		return 0;
	}
	if (sscanf(s, "%lf%c%n", &v, &unit, &n) == 2 && !s[n] && v >= 0) {
		double mul = unit == 'm' ? 60 : unit == 'h' ? 3600 : unit == 'd' ? 86400 : unit == 'w' ? 604800 : 0;

		if (mul > 0) {
			*out = now_wall() - v * mul;
			return 0;
		}
	}
	static const char *const fmts[] = { "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M",
					     "%Y-%m-%d %H:%M", "%Y-%m-%d" };
	for (size_t i = 0; i < ARRAY_SIZE(fmts); i++) {
		memset(&tm, 0, sizeof(tm));
		end = strptime(s, fmts[i], &tm);
		if (end && !*end) {
			*out = (double)timegm(&tm);
			return 0;
		}
	}
	return -1;
}

static void fmt_time(char *out, size_t n, double t)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (isnan(t) || !gmtime_r(&tt, &tm))
		snprintf(out, n, "-");
	else
		strftime(out, n, "%Y-%m-%d %H:%M:%S", &tm);
}

/* --since, --until: a time (parse_when) into a double. */
static int opt_when(const char *arg, void *value)
{
	return parse_when(arg, value);
}

#define WHEN_EXPECT "a time (YYYY-MM-DD[THH:MM[:SS]] in UTC, seconds since 1970, or an age such as 7d or 12h)"

/* --threshold: a percentage above 0 and below 100. */
static int opt_pct(const char *arg, void *value)
{
	double v;

	if (parse_double(arg, &v) || !(v > 0) || v >= 100)
		return -1;
	*(double *)value = v;
	return 0;
}

#define PCT_EXPECT "a percentage above 0 and below 100, such as 1 or 0.5"

/* ---- klab query ------------------------------------------------------------ */

static const char *q_tree, *q_kernel, *q_machine, *q_workload, *q_metric, *q_side;
static long q_job, q_limit = -1;
static double q_since = NAN, q_until = NAN;

static int opt_side(const char *arg, void *value)
{
	if (strcmp(arg, "A") && strcmp(arg, "B"))
		return -1;
	*(const char **)value = arg;
	return 0;
}

static const struct opt query_opts[] = {
	OPT_INT(0, "job", &q_job, "ID", 1, 1L << 62, "the runs of job ID"),
	OPT_STRING(0, "tree", &q_tree, "T", "runs of jobs on tree T, or of kernels built from it"),
	OPT_STRING(0, "kernel", &q_kernel, "K", "runs of kernel K: an id, a release, a variant or a side's label"),
	OPT_STRING(0, "machine", &q_machine, "M", "runs on machine M"),
	OPT_STRING(0, "workload", &q_workload, "W", "runs of workload W (a glob: udp_rr_*)"),
	OPT_STRING(0, "metric", &q_metric, "M", "metric M only (a glob: latency_*)"),
	OPT_CALLBACK(0, "side", &q_side, "A|B", opt_side, "A or B", "runs of one side of their jobs"),
	OPT_CALLBACK(0, "since", &q_since, "WHEN", opt_when, WHEN_EXPECT, "runs started at WHEN or later"),
	OPT_CALLBACK(0, "until", &q_until, "WHEN", opt_when, WHEN_EXPECT, "runs started before WHEN"),
	OPT_INT(0, "limit", &q_limit, "N", 0, 1L << 62, "at most N rows"),
	OPT_JSON(),
	OPT_CSV(),
	OPT_END(),
};
static const char *const query_usage[] = {
	"[--job ID] [--tree T] [--kernel K] [--machine M] [--workload W] [--metric M]",
	" [--side A|B] [--since WHEN] [--until WHEN] [--limit N] [--json|--csv]",
	NULL,
};
static const struct opt_spec query_spec = {
	"klab query", query_usage, "stored results, filtered: one row per run and metric",
	"Only runs with status ok. WHEN is YYYY-MM-DD[THH:MM[:SS]] (UTC), seconds since 1970,\n"
	"or an age before now such as 30m, 12h, 7d, 2w.\n",
	query_opts,
};
static const char *const query_cols[] = {
	"run", "job", "side", "kernel", "machine", "workload", "boot", "seq", "time", "metric", "value", "unit", NULL,
};

static int query(int argc, char **argv, struct klab_ctx *ctx)
{
	struct run_query q = { 0 };
	struct run_query_iter *it;
	struct run_metric_row row;
	size_t rows = 0;
	struct db *db;
	int rc;

	if ((argc = cmd_parse(&query_spec, argc, argv, &rc)) < 0)
		return rc;
	if (argc)
		return cmd_usage_error(&query_spec, "unexpected argument '%s'", argv[0]);
	q.job = q_job > 0 ? q_job : 0;
	q.side = q_side, q.tree = q_tree, q.kernel = q_kernel, q.machine = q_machine;
	q.workload = q_workload, q.metric = q_metric, q.since = q_since, q.until = q_until, q.limit = q_limit;
	db = ctx_db(ctx);
	if (!db)
		return 1;
	if (!(it = runs_query_open(db, &q)))
		return 1;
	cmd_print_begin();
	print_text("%7s %5s %4s %-20s %-10s %-16s %6s %3s %-19s %-22s %14s %s\n", "run", "job", "side",
		   "kernel", "machine", "workload", "boot", "seq", "time (UTC)", "metric", "value", "unit");
	print_list_begin(NULL, query_cols);
	while ((rc = runs_query_next(it, &row)) == 1) {
		char ts[32], vs[40], jb[24] = "-", bt[24] = "-";

		rows++;
		print_obj_begin(NULL);
		print_data_int("run", row.run);
		if (row.job)
			print_data_int("job", row.job);
		else
			print_data_null("job");
		print_data_str("side", row.side);
		print_data_str("kernel", row.kernel);
		print_data_str("machine", row.machine);
		print_data_str("workload", row.workload ? row.workload : "");
		if (row.boot)
			print_data_int("boot", row.boot);
		else
			print_data_null("boot");
		print_data_int("seq", row.seq);
		print_data_time("time", row.time);
		print_data_str("metric", row.metric ? row.metric : "");
		print_data_num("value", row.value);
		print_data_str("unit", row.unit);
		print_obj_end();
		if (row.job)
			snprintf(jb, sizeof(jb), "%lld", (long long)row.job);
		if (row.boot)
			snprintf(bt, sizeof(bt), "%lld", (long long)row.boot);
		fmt_time(ts, sizeof(ts), row.time);
		snprintf(vs, sizeof(vs), "%.6g", row.value);
		print_text("%7lld %5s %4s %-20s %-10s %-16s %6s %3d %-19s %-22s %14s %s\n", (long long)row.run, jb,
			   row.side ? row.side : "-", row.kernel ? row.kernel : "-", row.machine ? row.machine : "-",
			   row.workload ? row.workload : "-", bt, row.seq, ts, row.metric ? row.metric : "-", vs,
			   row.unit ? row.unit : "");
	}
	print_list_end();
	runs_query_close(it);
	if (rc < 0) {
		cmd_print_end();
		return 1;
	}
	if (!rows)
		print_text("(no results match)\n");
	return cmd_print_end();
}

/* ---- klab compare ---------------------------------------------------------- */

/* compare_opts.workload_info from the config: [workload "NAME"] threshold, headline. */
static double conf_workload_info(void *arg, const char *workload, const char **headline)
{
	const struct klab_config *cfg = arg;
	const struct conf_workload *w = cfg ? conf_workload(cfg, workload) : NULL;

	*headline = w ? w->headline : NULL;
	return w ? w->threshold_pct : 0;
}

static int all_digits(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

static const char *c_workload, *c_metric;
static double c_threshold;
static long c_warmup = -1;
static int c_stored, c_no_cal;

static const struct opt compare_opts[] = {
	OPT_STRING(0, "workload", &c_workload, "W", "only workload W"),
	OPT_STRING(0, "metric", &c_metric, "M", "only metric M"),
	OPT_CALLBACK(0, "threshold", &c_threshold, "PCT", opt_pct, PCT_EXPECT,
		     "the smallest change that matters (default: the workload's threshold, else 1 in real time, 0.1 under icount)"),
	OPT_INT(0, "warmup", &c_warmup, "N", 0, 1000, "runs per boot to discard (default: the job's warmup_runs)"),
	OPT_BOOL(0, "stored", &c_stored, "the comparison stored when the job ran, not a new one"),
	OPT_BOOL(0, "no-calibration", &c_no_cal, "judge a job by its own boots, even on a calibrated instrument"),
	OPT_JSON(),
	OPT_END(),
};
static const char *const compare_usage[] = {
	"JOB [--stored] [--no-calibration]", "KERNEL_A KERNEL_B",
	" [--workload W] [--metric M] [--threshold PCT] [--warmup N] [--json]",
	NULL,
};
static const struct opt_spec compare_spec = {
	"klab compare", compare_usage, "A/B comparison: % change with 95% CI, p values, verdict",
	"JOB is a job id or name (its two sides); KERNEL_A and KERNEL_B are kernel ids,\n"
	"releases, variants or side labels, compared over every run stored for them.\n"
	"A job is judged by the thresholds its spec had at submit, else the config's\n"
	"[workload] ones, else the clock's default (also from a bare database, --db).\n"
	"On an instrument with a calibration (klab calibrate) a job's metric pools the\n"
	"calibrated noise with its own boots, and its row says so.\n",
	compare_opts,
};

static int compare(int argc, char **argv, struct klab_ctx *ctx)
{
	struct compare_opts co = COMPARE_OPTS_INIT;
	struct compare_result res = { 0 };
	struct klab_config *cfg;
	struct db *db;
	int rc, failed, ret = 1;

	if ((argc = cmd_parse(&compare_spec, argc, argv, &rc)) < 0)
		return rc;
	if (argc < 1)
		return cmd_usage_error(&compare_spec, "give a job (id or name), or two kernels");
	if (argc > 2)
		return cmd_usage_error(&compare_spec, "too many arguments");
	if (c_stored && argc != 1)
		return cmd_usage_error(&compare_spec, "--stored needs a job");
	if (c_threshold > 0)
		co.threshold_pct = c_threshold;
	if (c_warmup >= 0)
		co.warmup_runs = (int)c_warmup;
	co.workload = c_workload;
	co.metric = c_metric;
	co.no_calibration = c_no_cal;
	cfg = ctx_config_optional(ctx, &failed);
	if (failed)
		return 1;
	/*
	 * An explicit --threshold wins over the per-workload ones; a job's own
	 * spec over the config's (compare_job).
	 */
	if (cfg && !(c_threshold > 0)) {
		co.workload_info = conf_workload_info;
		co.workload_arg = cfg;
	}
	db = ctx_db(ctx);
	if (!db)
		return 1;
	if (argc == 1) {
		int64_t id = 0;

		if (all_digits(argv[0])) {
			id = strtoll(argv[0], NULL, 10);
		} else if (jobs_find_name(db, argv[0], &id) != 1) {
			error("no job '%s' (give a job id or name; klab jobs lists them)", argv[0]);
			return 1;
		}
		if (c_stored) {
			rc = compare_load_job(db, id, &res);
			if (rc < 0)
				return 1;
			if (!rc) {
				error("job %lld has no stored comparison (run klab compare %lld)", (long long)id,
				      (long long)id);
				return 1;
			}
		} else if (compare_job(db, id, &co, &res)) {
			return 1;
		}
	} else if (compare_kernels(db, argv[0], argv[1], &co, &res)) {
		return 1;
	}
	cmd_print_begin();
	compare_print(&res);
	ret = cmd_print_end();
	compare_result_free(&res);
	return ret;
}

/* ---- klab history ---------------------------------------------------------- */

/* A value as an integer when it is large (2378247), else 6 significant digits. */
static void fmt_val(char *out, size_t n, double v)
{
	if (fabs(v) >= 1000 && fabs(v) < 1e13)
		snprintf(out, n, "%.0f", v);
	else
		snprintf(out, n, "%.6g", v);
}

static void history_text(const struct history_series *s, double t)
{
	printf("history of %s %s: tree %s, machines %s, %zu nights, %zu change point%s (T = %.3g%%)\n",
	       s->workload, s->metric, s->tree ? s->tree : "-", s->machines ? s->machines : "-", s->n,
	       s->cps.n, s->cps.n == 1 ? "" : "s", t);
	printf("%5s %6s  %-19s %14s %5s\n", "idx", "job", "date (UTC)", "value", "boots");
	for (size_t i = 0; i < s->n; i++) {
		const struct history_point *p = &s->pts[i];
		char ts[32];

		fmt_time(ts, sizeof(ts), p->time);
		char v[40];

		fmt_val(v, sizeof(v), p->value);
		printf("%5zu %6lld  %-19s %14s %5d", i, (long long)p->job_id, ts, v, p->n_boots);
		for (size_t k = 0; k < s->cps.n; k++) {
			const struct cp_point *c = &s->cps.pts[k];

			if (c->idx != i)
				continue;
			char before[40], after[40];

			fmt_val(before, sizeof(before), c->mean_before);
			fmt_val(after, sizeof(after), c->mean_after);
			printf("  <== change %+.2f%% (p %.2g): %s -> %s%s", c->change_pct, c->p, before, after,
			       c->alert ? "" : " (pending)");
		}
		putchar('\n');
	}
}

static const char *h_tree, *h_machines;
static double h_threshold;

static const struct opt history_opts[] = {
	OPT_STRING(0, "tree", &h_tree, "T", "only the series of tree T"),
	OPT_STRING(0, "machines", &h_machines, "DUT+PEER", "only the series of this machine pair"),
	OPT_CALLBACK(0, "threshold", &h_threshold, "PCT", opt_pct, PCT_EXPECT,
		     "the smallest change that counts (default: the workload's threshold, else 1)"),
	OPT_JSON(),
	OPT_CSV(),
	OPT_END(),
};
static const char *const history_usage[] = {
	"WORKLOAD METRIC [--tree T] [--machines DUT+PEER] [--threshold PCT] [--json|--csv]", NULL,
};
static const struct opt_spec history_spec = {
	"klab history", history_usage, "a nightly series with its change points",
	"One series per (tree, machine pair) of the jobs a schedule fired that are done;\n"
	"each night's value is the mean of its boots. In CSV, one record per night.\n",
	history_opts,
};
static const char *const history_cols[] = {
	"tree", "machines", "workload", "metric", "idx", "job_id", "time", "value", "boots", "changepoint",
	"change_pct", "p", "alert", NULL,
};

static void history_print(const struct history_series *s)
{
	print_obj_begin(NULL);
	print_str(PRINT_JSON, "tree", "%s", s->tree);
	print_str(PRINT_JSON, "machines", "%s", s->machines);
	print_str(PRINT_JSON, "workload", "%s", s->workload);
	print_str(PRINT_JSON, "metric", "%s", s->metric);
	print_list_begin("points", history_cols);
	for (size_t i = 0; i < s->n; i++) {
		const struct history_point *p = &s->pts[i];

		print_obj_begin(NULL);
		print_str(PRINT_CSV, "tree", "%s", s->tree);
		print_str(PRINT_CSV, "machines", "%s", s->machines);
		print_str(PRINT_CSV, "workload", "%s", s->workload);
		print_str(PRINT_CSV, "metric", "%s", s->metric);
		print_data_int("idx", i);
		print_data_int("job_id", p->job_id);
		print_data_time("time", p->time);
		print_data_num("value", p->value);
		print_data_int("boots", p->n_boots);
		print_data_bool("changepoint", p->changepoint);
		for (size_t k = 0; k < s->cps.n; k++) {
			const struct cp_point *c = &s->cps.pts[k];

			if (c->idx != i)
				continue;
			print_num(PRINT_CSV, "change_pct", "%g", c->change_pct);
			print_num(PRINT_CSV, "p", "%g", c->p);
			print_bool(PRINT_CSV, "alert", "%d", c->alert);
		}
		print_obj_end();
	}
	print_list_end();
	print_list_begin("changepoints", NULL);
	for (size_t k = 0; k < s->cps.n; k++) {
		const struct cp_point *c = &s->cps.pts[k];

		print_obj_begin(NULL);
		print_data_int("idx", c->idx);
		print_data_int("job_id", s->pts[c->idx].job_id);
		print_data_num("mean_before", c->mean_before);
		print_data_num("mean_after", c->mean_after);
		print_data_num("change_pct", c->change_pct);
		print_data_num("p", c->p);
		print_data_num("mde_pct", isfinite(c->mde_pct) ? c->mde_pct : NAN);
		print_data_bool("alert", c->alert);
		print_obj_end();
	}
	print_list_end();
	print_obj_end();
}

static int history(int argc, char **argv, struct klab_ctx *ctx)
{
	struct history_series *s = NULL;
	struct klab_config *cfg;
	size_t n = 0;
	double t;
	struct db *db;
	int rc, failed, ret;

	if ((argc = cmd_parse(&history_spec, argc, argv, &rc)) < 0)
		return rc;
	if (argc != 2)
		return cmd_usage_error(&history_spec, "give a workload and a metric");
	t = h_threshold;
	cfg = ctx_config_optional(ctx, &failed);
	if (failed)
		return 1;
	if (!(t > 0)) {
		const char *hl;

		t = cfg ? conf_workload_info(cfg, argv[0], &hl) : 0;
		if (!(t > 0))
			t = 1;
	}
	db = ctx_db(ctx);
	if (!db)
		return 1;
	if (history_analyse(db, argv[0], argv[1], h_tree, h_machines, t, &s, &n))
		return 1;
	cmd_print_begin();
	print_list_begin(NULL, NULL);
	for (size_t i = 0; i < n; i++) {
		if (print_is(PRINT_TEXT)) {
			if (i)
				putchar('\n');
			history_text(&s[i], t);
		}
		history_print(&s[i]);
	}
	if (!n && print_is(PRINT_CSV)) {
		print_list_begin(NULL, history_cols);	/* the header alone */
		print_list_end();
	}
	print_list_end();
	if (!n)
		print_text("(no nightly results for %s %s: jobs fired by a schedule and done)\n", argv[0], argv[1]);
	ret = cmd_print_end();
	history_free(s, n);
	return ret;
}

const struct klab_cmd cmd_query = { "query", query, &query_spec, NULL, CMD_LISTING };
const struct klab_cmd cmd_compare = { "compare", compare, &compare_spec, NULL, 0 };
const struct klab_cmd cmd_history = { "history", history, &history_spec, NULL, CMD_LISTING };
