/* cmd/query.c: `klab query`, `klab compare` and `klab history`: results, A/B comparisons and nightly series. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "buf.h"
#include "cmd.h"
#include "compare.h"
#include "conf.h"
#include "db.h"
#include "jsonh.h"
#include "log.h"
#include "util.h"

/* ---- small option parser: "--name VALUE", "--name=VALUE", flags ---------- */

struct qopt {
	const char *name;	/* without the dashes */
	int takes_value;
	const char **value;	/* where a value goes */
	int *flag;		/* where a flag goes */
};

/*
 * Parse argv[1..] against opts; words that are not options are collected
 * into pos[] (up to max_pos). Returns 0, or 2 after printing a usage error.
 */
static int parse_opts(const char *cmd, int argc, char **argv, const struct qopt *opts, size_t n_opts,
		      const char **pos, size_t max_pos, size_t *n_pos)
{
	*n_pos = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *eq;
		size_t len;
		const struct qopt *o = NULL;

		if (strcmp(a, "--") == 0) {
			while (++i < argc) {
				if (*n_pos == max_pos)
					goto too_many;
				pos[(*n_pos)++] = argv[i];
			}
			break;
		}
		if (a[0] != '-' || a[1] != '-' || !a[2]) {
			if (*n_pos == max_pos)
				goto too_many;
			pos[(*n_pos)++] = a;
			continue;
		}
		a += 2;
		eq = strchr(a, '=');
		len = eq ? (size_t)(eq - a) : strlen(a);
		for (size_t k = 0; k < n_opts; k++)
			if (strlen(opts[k].name) == len && !strncmp(opts[k].name, a, len))
				o = &opts[k];
		if (!o) {
			fprintf(stderr, "klab %s: unknown option '--%.*s'\n", cmd, (int)len, a);
			return cmd_usage(cmd, 2);
		}
		if (!o->takes_value) {
			if (eq) {
				fprintf(stderr, "klab %s: option '--%s' takes no value\n", cmd, o->name);
				return cmd_usage(cmd, 2);
			}
			*o->flag = 1;
		} else if (eq) {
			*o->value = eq + 1;
		} else if (i + 1 < argc) {
			*o->value = argv[++i];
		} else {
			fprintf(stderr, "klab %s: option '--%s' needs a value\n", cmd, o->name);
			return cmd_usage(cmd, 2);
		}
	}
	return 0;
too_many:
	fprintf(stderr, "klab %s: too many arguments\n", cmd);
	return cmd_usage(cmd, 2);
}

static int finish_output(void)
{
	if (fflush(stdout) || ferror(stdout)) {
		error_errno("cannot write the output");
		return 1;
	}
	return 0;
}

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

/* ---- klab query ------------------------------------------------------------ */

static void csv_field(FILE *f, const char *s)
{
	if (!s)
		return;
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* Six '?' for the kernel's name; the same match as compare.c's KERNEL_SIDE. */
#define QUERY_KERNEL_MATCH \
	" AND r.id IN (SELECT id FROM runs WHERE kernel_id IN (SELECT id FROM kernels WHERE CAST(id AS TEXT) = ?" \
	" OR release = ? OR variant = ? UNION SELECT kernel_id FROM job_sides WHERE label = ?" \
	" AND kernel_id IS NOT NULL) UNION SELECT id FROM runs WHERE kernel_label = ?" \
	" UNION SELECT r2.id FROM job_sides js JOIN runs r2 ON r2.job_id = js.job_id AND r2.side = js.side" \
	" WHERE js.label = ?)"

int oldcmd_query(int argc, char **argv, struct klab_ctx *ctx)
{
	const char *job = NULL, *tree = NULL, *kernel = NULL, *machine = NULL, *workload = NULL;
	const char *metric = NULL, *since = NULL, *until = NULL, *side = NULL, *limit = NULL;
	const char *pos[1];
	int json = ctx->json, csv = 0, help = 0, rc;
	const struct qopt opts[] = {
		{ "job", 1, &job, NULL }, { "tree", 1, &tree, NULL }, { "kernel", 1, &kernel, NULL },
		{ "machine", 1, &machine, NULL }, { "workload", 1, &workload, NULL },
		{ "metric", 1, &metric, NULL }, { "since", 1, &since, NULL }, { "until", 1, &until, NULL },
		{ "side", 1, &side, NULL }, { "limit", 1, &limit, NULL }, { "json", 0, NULL, &json },
		{ "csv", 0, NULL, &csv }, { "help", 0, NULL, &help },
	};
	struct buf sql = BUF_INIT;
	/* bound values, in order: 'i' int, 'd' double, 's' text */
	char types[32];
	const char *sv[32];
	int64_t iv[32];
	double dv[32];
	size_t nb = 0, n_pos, rows = 0;
	double t_since = 0, t_until = 0;
	long lim = -1, job_id = 0;
	struct db *db;
	struct db_stmt *st = NULL;
	struct json_object *arr = NULL;
	int ret = 1;

	if ((rc = parse_opts("query", argc, argv, opts, ARRAY_SIZE(opts), pos, 0, &n_pos)))
		return rc;
	if (help)
		return cmd_usage("query", 0);
	if (json && csv) {
		fprintf(stderr, "klab query: --json and --csv exclude each other\n");
		return 2;
	}
	if (job && parse_long(job, 1, 1L << 62, &job_id)) {
		fprintf(stderr, "klab query: bad --job '%s': expected a job id\n", job);
		return 2;
	}
	if (limit && parse_long(limit, 0, 1L << 62, &lim)) {
		fprintf(stderr, "klab query: bad --limit '%s': expected a number\n", limit);
		return 2;
	}
	if (side && strcmp(side, "A") && strcmp(side, "B")) {
		fprintf(stderr, "klab query: bad --side '%s': expected A or B\n", side);
		return 2;
	}
	if (since && parse_when(since, &t_since)) {
		fprintf(stderr, "klab query: bad --since '%s': expected YYYY-MM-DD[THH:MM[:SS]], "
			"seconds since 1970, or an age such as 7d or 12h\n", since);
		return 2;
	}
	if (until && parse_when(until, &t_until)) {
		fprintf(stderr, "klab query: bad --until '%s': expected YYYY-MM-DD[THH:MM[:SS]], "
			"seconds since 1970, or an age such as 7d or 12h\n", until);
		return 2;
	}
	db = ctx_db(ctx);
	if (!db)
		return 1;

#define BIND_S(v) (types[nb] = 's', sv[nb++] = (v))
#define BIND_I(v) (types[nb] = 'i', iv[nb++] = (v))
#define BIND_D(v) (types[nb] = 'd', dv[nb++] = (v))
	buf_addstr(&sql,
		   "SELECT r.id, r.job_id, r.side, COALESCE(r.kernel_label, k.release, k.variant, r.kernel_id),"
		   " r.machine, r.workload, r.boot_id, r.seq, COALESCE(r.started, r.created), m.name, m.value,"
		   " m.unit FROM runs r JOIN metrics m ON m.run_id = r.id"
		   " LEFT JOIN kernels k ON k.id = r.kernel_id WHERE r.status = 'ok'");
	if (job) {
		buf_addstr(&sql, " AND r.job_id = ?");
		BIND_I(job_id);
	}
	if (side) {
		buf_addstr(&sql, " AND r.side = ?");
		BIND_S(side);
	}
	if (tree) {
		buf_addstr(&sql, " AND (r.job_id IN (SELECT id FROM jobs WHERE tree = ?) OR k.tree = ?)");
		BIND_S(tree);
		BIND_S(tree);
	}
	if (kernel) {
		buf_addstr(&sql, QUERY_KERNEL_MATCH);
		for (int k = 0; k < 6; k++)
			BIND_S(kernel);
	}
	if (machine) {
		buf_addstr(&sql, " AND r.machine = ?");
		BIND_S(machine);
	}
	if (workload) {
		buf_addstr(&sql, strpbrk(workload, "*?[") ? " AND r.workload GLOB ?" : " AND r.workload = ?");
		BIND_S(workload);
	}
	if (metric) {
		buf_addstr(&sql, strpbrk(metric, "*?[") ? " AND m.name GLOB ?" : " AND m.name = ?");
		BIND_S(metric);
	}
	if (since) {
		buf_addstr(&sql, " AND COALESCE(r.started, r.created) >= ?");
		BIND_D(t_since);
	}
	if (until) {
		buf_addstr(&sql, " AND COALESCE(r.started, r.created) < ?");
		BIND_D(t_until);
	}
	buf_addstr(&sql, " ORDER BY r.id, m.name");
	if (lim >= 0) {
		buf_addstr(&sql, " LIMIT ?");
		BIND_I(lim);
	}
#undef BIND_S
#undef BIND_I
#undef BIND_D
	st = db_prepare(db, sql.buf, "");
	if (!st)
		goto out;
	for (size_t i = 0; i < nb; i++) {
		int b = types[i] == 'i' ? db_bind_int64(st, (int)i + 1, iv[i]) :
			types[i] == 'd' ? db_bind_double(st, (int)i + 1, dv[i]) :
			db_bind_text(st, (int)i + 1, sv[i]);

		if (b)
			goto out;
	}
	if (json)
		arr = json_object_new_array();
	else if (csv)
		printf("run,job,side,kernel,machine,workload,boot,seq,time,metric,value,unit\n");
	else
		printf("%7s %5s %4s %-20s %-10s %-16s %6s %3s %-19s %-22s %14s %s\n", "run", "job", "side",
		       "kernel", "machine", "workload", "boot", "seq", "time (UTC)", "metric", "value", "unit");
	while ((rc = db_step(st)) == DB_ROW) {
		const char *c_side = db_col_text(st, 2);
		const char *c_kernel = db_col_text(st, 3);
		const char *c_machine = db_col_text(st, 4);
		const char *c_wl = db_col_text(st, 5);
		const char *c_metric = db_col_text(st, 9);
		const char *c_unit = db_col_text(st, 11);
		int64_t run = db_col_int64(st, 0);
		int has_job = !db_col_null(st, 1);
		int has_boot = !db_col_null(st, 6);
		int64_t c_job = db_col_int64(st, 1), boot = db_col_int64(st, 6);
		int seq = db_col_int(st, 7);
		double t = db_col_double(st, 8), v = db_col_double(st, 10);
		char ts[32], vs[40];

		rows++;
		if (json) {
			struct json_object *o = json_object_new_object();

			json_object_object_add(o, "run", json_object_new_int64(run));
			json_object_object_add(o, "job", has_job ? json_object_new_int64(c_job) : NULL);
			json_object_object_add(o, "side", c_side ? json_object_new_string(c_side) : NULL);
			json_object_object_add(o, "kernel", c_kernel ? json_object_new_string(c_kernel) : NULL);
			json_object_object_add(o, "machine", c_machine ? json_object_new_string(c_machine) : NULL);
			json_object_object_add(o, "workload", json_object_new_string(c_wl ? c_wl : ""));
			json_object_object_add(o, "boot", has_boot ? json_object_new_int64(boot) : NULL);
			json_object_object_add(o, "seq", json_object_new_int(seq));
			json_object_object_add(o, "time", json_object_new_double(t));
			json_object_object_add(o, "metric", json_object_new_string(c_metric ? c_metric : ""));
			json_object_object_add(o, "value", json_object_new_double(v));
			json_object_object_add(o, "unit", c_unit ? json_object_new_string(c_unit) : NULL);
			json_object_array_add(arr, o);
		} else if (csv) {
			char num[32];

			printf("%lld,", (long long)run);
			if (has_job)
				printf("%lld", (long long)c_job);
			putchar(',');
			csv_field(stdout, c_side);
			putchar(',');
			csv_field(stdout, c_kernel);
			putchar(',');
			csv_field(stdout, c_machine);
			putchar(',');
			csv_field(stdout, c_wl);
			putchar(',');
			if (has_boot)
				printf("%lld", (long long)boot);
			snprintf(num, sizeof(num), "%.3f", t);
			snprintf(vs, sizeof(vs), "%.17g", v);
			printf(",%d,%s,", seq, num);
			csv_field(stdout, c_metric);
			printf(",%s,", vs);
			csv_field(stdout, c_unit);
			putchar('\n');
		} else {
			char jb[24] = "-", bt[24] = "-";

			if (has_job)
				snprintf(jb, sizeof(jb), "%lld", (long long)c_job);
			if (has_boot)
				snprintf(bt, sizeof(bt), "%lld", (long long)boot);
			fmt_time(ts, sizeof(ts), t);
			snprintf(vs, sizeof(vs), "%.6g", v);
			printf("%7lld %5s %4s %-20s %-10s %-16s %6s %3d %-19s %-22s %14s %s\n", (long long)run, jb,
			       c_side ? c_side : "-", c_kernel ? c_kernel : "-", c_machine ? c_machine : "-",
			       c_wl ? c_wl : "-", bt, seq, ts, c_metric ? c_metric : "-", vs, c_unit ? c_unit : "");
		}
	}
	if (rc != DB_DONE) {
		error("database '%s': cannot query results: %s", db_file(db), db_errmsg(db));
		goto out;
	}
	if (json) {
		struct buf b = BUF_INIT;

		json_to_buf(&b, arr, 1);
		printf("%s\n", b.buf);
		buf_release(&b);
	} else if (!csv && !rows) {
		printf("(no results match)\n");
	}
	ret = finish_output();
out:
	if (arr)
		json_object_put(arr);
	db_finalize(st);
	buf_release(&sql);
	return ret;
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

/*
 * The config when there is one: klab compare and history work from a bare
 * database (--db) too, with the default threshold. -1 when a config exists
 * but is broken (its errors are printed).
 */
static int optional_config(struct klab_ctx *ctx, struct klab_config **cfg)
{
	const char *path = ctx->config_path ? ctx->config_path : conf_default_path();

	*cfg = NULL;
	if (!ctx->cfg && (!path || !file_exists(path)))
		return 0;
	*cfg = ctx_config(ctx);
	return *cfg ? 0 : -1;
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

int oldcmd_compare(int argc, char **argv, struct klab_ctx *ctx)
{
	const char *workload = NULL, *metric = NULL, *threshold = NULL, *warmup = NULL;
	const char *pos[2];
	int json = ctx->json, stored = 0, help = 0, rc, ret = 1;
	const struct qopt opts[] = {
		{ "workload", 1, &workload, NULL }, { "metric", 1, &metric, NULL },
		{ "threshold", 1, &threshold, NULL }, { "warmup", 1, &warmup, NULL },
		{ "stored", 0, NULL, &stored }, { "json", 0, NULL, &json }, { "help", 0, NULL, &help },
	};
	struct compare_opts co = COMPARE_OPTS_INIT;
	struct compare_result res = { 0 };
	struct klab_config *cfg;
	size_t n_pos;
	struct db *db;

	if ((rc = parse_opts("compare", argc, argv, opts, ARRAY_SIZE(opts), pos, 2, &n_pos)))
		return rc;
	if (help)
		return cmd_usage("compare", 0);
	if (n_pos < 1) {
		fprintf(stderr, "klab compare: give a job (id or name), or two kernels\n");
		return cmd_usage("compare", 2);
	}
	if (threshold && (parse_double(threshold, &co.threshold_pct) || !(co.threshold_pct > 0) ||
			  co.threshold_pct >= 100)) {
		fprintf(stderr, "klab compare: bad --threshold '%s': expected a percentage such as 1 or 0.5\n",
			threshold);
		return 2;
	}
	if (warmup) {
		long w;

		if (parse_long(warmup, 0, 1000, &w)) {
			fprintf(stderr, "klab compare: bad --warmup '%s': expected a number of runs\n", warmup);
			return 2;
		}
		co.warmup_runs = (int)w;
	}
	if (stored && n_pos != 1) {
		fprintf(stderr, "klab compare: --stored needs a job\n");
		return 2;
	}
	co.workload = workload;
	co.metric = metric;
	if (optional_config(ctx, &cfg))
		return 1;
	/* an explicit --threshold wins over the per-workload ones */
	if (cfg && !threshold) {
		co.workload_info = conf_workload_info;
		co.workload_arg = cfg;
	}
	db = ctx_db(ctx);
	if (!db)
		return 1;
	if (n_pos == 1) {
		int64_t id = 0;

		if (all_digits(pos[0])) {
			id = strtoll(pos[0], NULL, 10);
		} else if (db_get_int(db, &id, "SELECT id FROM jobs WHERE name = ?1 ORDER BY id DESC LIMIT 1",
				      "s", pos[0]) != 1) {
			error("no job '%s' (give a job id or name; klab jobs lists them)", pos[0]);
			return 1;
		}
		if (stored) {
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
	} else if (compare_kernels(db, pos[0], pos[1], &co, &res)) {
		return 1;
	}
	if (json)
		compare_print_json(stdout, &res);
	else
		compare_print(stdout, &res);
	ret = finish_output();
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

static struct json_object *history_json(const struct history_series *s)
{
	struct json_object *o = json_object_new_object(), *pts = json_object_new_array();
	struct json_object *cps = json_object_new_array();

	json_object_object_add(o, "tree", s->tree ? json_object_new_string(s->tree) : NULL);
	json_object_object_add(o, "machines", s->machines ? json_object_new_string(s->machines) : NULL);
	json_object_object_add(o, "workload", json_object_new_string(s->workload));
	json_object_object_add(o, "metric", json_object_new_string(s->metric));
	for (size_t i = 0; i < s->n; i++) {
		struct json_object *p = json_object_new_object();

		json_object_object_add(p, "idx", json_object_new_int64((int64_t)i));
		json_object_object_add(p, "job_id", json_object_new_int64(s->pts[i].job_id));
		json_object_object_add(p, "time", json_object_new_double(s->pts[i].time));
		json_object_object_add(p, "value", json_object_new_double(s->pts[i].value));
		json_object_object_add(p, "boots", json_object_new_int(s->pts[i].n_boots));
		json_object_object_add(p, "changepoint", json_object_new_boolean(s->pts[i].changepoint));
		json_object_array_add(pts, p);
	}
	for (size_t k = 0; k < s->cps.n; k++) {
		const struct cp_point *c = &s->cps.pts[k];
		struct json_object *p = json_object_new_object();

		json_object_object_add(p, "idx", json_object_new_int64((int64_t)c->idx));
		json_object_object_add(p, "job_id", json_object_new_int64(s->pts[c->idx].job_id));
		json_object_object_add(p, "mean_before", json_object_new_double(c->mean_before));
		json_object_object_add(p, "mean_after", json_object_new_double(c->mean_after));
		json_object_object_add(p, "change_pct", json_object_new_double(c->change_pct));
		json_object_object_add(p, "p", json_object_new_double(c->p));
		json_object_object_add(p, "mde_pct", isfinite(c->mde_pct) ? json_object_new_double(c->mde_pct) : NULL);
		json_object_object_add(p, "alert", json_object_new_boolean(c->alert));
		json_object_array_add(cps, p);
	}
	json_object_object_add(o, "points", pts);
	json_object_object_add(o, "changepoints", cps);
	return o;
}

int oldcmd_history(int argc, char **argv, struct klab_ctx *ctx)
{
	const char *tree = NULL, *machines = NULL, *threshold = NULL;
	const char *pos[2];
	int json = ctx->json, help = 0, rc, ret = 1;
	const struct qopt opts[] = {
		{ "tree", 1, &tree, NULL }, { "machines", 1, &machines, NULL },
		{ "threshold", 1, &threshold, NULL }, { "json", 0, NULL, &json }, { "help", 0, NULL, &help },
	};
	struct history_series *s = NULL;
	struct klab_config *cfg;
	size_t n_pos, n = 0;
	double t = 0;
	struct db *db;

	if ((rc = parse_opts("history", argc, argv, opts, ARRAY_SIZE(opts), pos, 2, &n_pos)))
		return rc;
	if (help)
		return cmd_usage("history", 0);
	if (n_pos != 2) {
		fprintf(stderr, "klab history: give a workload and a metric\n");
		return cmd_usage("history", 2);
	}
	if (threshold && (parse_double(threshold, &t) || !(t > 0) || t >= 100)) {
		fprintf(stderr, "klab history: bad --threshold '%s': expected a percentage such as 1 or 0.5\n",
			threshold);
		return 2;
	}
	if (optional_config(ctx, &cfg))
		return 1;
	if (!threshold) {
		const char *hl;

		t = cfg ? conf_workload_info(cfg, pos[0], &hl) : 0;
		if (!(t > 0))
			t = 1;
	}
	db = ctx_db(ctx);
	if (!db)
		return 1;
	if (history_analyse(db, pos[0], pos[1], tree, machines, t, &s, &n))
		return 1;
	if (json) {
		struct json_object *arr = json_object_new_array();
		struct buf b = BUF_INIT;

		for (size_t i = 0; i < n; i++)
			json_object_array_add(arr, history_json(&s[i]));
		json_to_buf(&b, arr, 1);
		printf("%s\n", b.buf);
		buf_release(&b);
		json_object_put(arr);
	} else if (!n) {
		printf("(no nightly results for %s %s: jobs fired by a schedule and done)\n", pos[0], pos[1]);
	} else {
		for (size_t i = 0; i < n; i++) {
			if (i)
				putchar('\n');
			history_text(&s[i], t);
		}
	}
	ret = finish_output();
	history_free(s, n);
	return ret;
}
