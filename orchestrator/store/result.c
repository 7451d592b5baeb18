/* result.c: check a klab-agent result document and store it in sqlite in one transaction. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "store/db.h"
#include "jsonh.h"
#include "store/ksample.h"
#include "log.h"
#include "store/result.h"
#include "util.h"

static int is_num(struct json_object *v)
{
	return json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double);
}

/* An optional array of objects under `key`: 0 (missing is fine), -1 if not an array of objects. */
static int check_array(struct json_object *o, const char *key, const char *what, struct json_object **out,
		       struct buf *err)
{
	size_t i;

	*out = NULL;
	if (json_get_to(o, key, json_type_array, out, what, err) < 0)
		return -1;
	if (!*out)
		return 0;
	for (i = 0; i < json_object_array_length(*out); i++)
		if (!json_object_is_type(json_object_array_get_idx(*out, i), json_type_object))
			return error_to(err, "%s: '%s[%zu]' is not an object", what, key, i);
	return 0;
}

static int check_num(struct json_object *o, const char *key, const char *what, const char *arr,
		     size_t i, int required, struct buf *err)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v)) {
		if (required)
			return error_to(err, "%s: '%s[%zu]' has no '%s'", what, arr, i, key);
		return 0;
	}
	if (!is_num(v) || !isfinite(json_object_get_double(v)))
		return error_to(err, "%s: '%s[%zu].%s' is not a number", what, arr, i, key);
	return 0;
}

static int check_str(struct json_object *o, const char *key, const char *what, const char *arr,
		     size_t i, int required, struct buf *err)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v)) {
		if (required)
			return error_to(err, "%s: '%s[%zu]' has no '%s'", what, arr, i, key);
		return 0;
	}
	if (!json_object_is_type(v, json_type_string))
		return error_to(err, "%s: '%s[%zu].%s' is not a string", what, arr, i, key);
	return 0;
}

int result_parse(const char *json, size_t len, const char *what, struct json_object **out, struct buf *err)
{
	struct json_object *o, *a, *v = NULL;
	const char *s;
	int64_t ver;
	size_t i, j;
	int r;

	*out = NULL;
	if (!(o = json_parse_to(json, len, what, err)))
		return -1;
	if (!json_object_is_type(o, json_type_object)) {
		error_to(err, "%s: not a JSON object", what);
		goto bad;
	}
	r = json_get_to(o, "schema_version", json_type_int, &v, what, err);
	if (!r)
		ver = json_object_get_int64(v);
	if (r) {
		if (r > 0)
			error_to(err, "%s: no 'schema_version' (not a klab-agent result?)", what);
		goto bad;
	}
	if (ver != RESULT_SCHEMA_VERSION_KNOWN) {
		error_to(err, "%s: unknown result schema_version %lld (this klab reads version %d; update klab)",
			      what, (long long)ver, RESULT_SCHEMA_VERSION_KNOWN);
		goto bad;
	}
	r = json_get_to(o, "run_id", json_type_string, &v, what, err);
	if (!r)
		s = json_object_get_string(v);
	if (r || !run_id_valid(s)) {
		if (!r || r > 0)
			error_to(err, "%s: %s", what, r > 0 ? "no 'run_id'" : "bad 'run_id'");
		goto bad;
	}
	if (json_get_to(o, "status", json_type_string, &v, what, err) < 0)
		goto bad;

	if (check_array(o, "metrics", what, &a, err))
		goto bad;
	for (i = 0; a && i < json_object_array_length(a); i++) {
		struct json_object *m = json_object_array_get_idx(a, i);
		if (check_str(m, "name", what, "metrics", i, 1, err) ||
		    check_num(m, "value", what, "metrics", i, 1, err) ||
		    check_str(m, "unit", what, "metrics", i, 0, err) ||
		    check_str(m, "better", what, "metrics", i, 0, err))
			goto bad;
		if (json_object_object_get_ex(m, "better", &v) &&
		    strcmp(json_object_get_string(v), "higher") && strcmp(json_object_get_string(v), "lower") &&
		    strcmp(json_object_get_string(v), "none")) {
			error_to(err, "%s: 'metrics[%zu].better' is '%s' (higher, lower or none)", what, i,
				      json_object_get_string(v));
			goto bad;
		}
	}
	if (check_array(o, "series", what, &a, err))
		goto bad;
	for (i = 0; a && i < json_object_array_length(a); i++) {
		/* json_get_array leaves its out untouched when the key is missing */
		struct json_object *sr = json_object_array_get_idx(a, i), *pts = NULL;
		if (check_str(sr, "metric", what, "series", i, 1, err))
			goto bad;
		if (json_get_to(sr, "points", json_type_array, &pts, what, err) < 0)
			goto bad;
		for (j = 0; pts && j < json_object_array_length(pts); j++) {
			struct json_object *p = json_object_array_get_idx(pts, j);
			if (!json_object_is_type(p, json_type_array) || json_object_array_length(p) != 2 ||
			    !is_num(json_object_array_get_idx(p, 0)) || !is_num(json_object_array_get_idx(p, 1))) {
				error_to(err, "%s: 'series[%zu].points[%zu]' is not a [t, value] pair", what, i, j);
				goto bad;
			}
		}
	}
	if (check_array(o, "cpus", what, &a, err))
		goto bad;
	for (i = 0; a && i < json_object_array_length(a); i++) {
		static const char *const f[] = { "cpu", "usr", "nice", "sys", "iowait", "irq", "soft", "steal", "idle" };
		for (j = 0; j < ARRAY_SIZE(f); j++)
			if (check_num(json_object_array_get_idx(a, i), f[j], what, "cpus", i, j == 0, err))
				goto bad;
	}
	if (check_array(o, "histograms", what, &a, err))
		goto bad;
	for (i = 0; a && i < json_object_array_length(a); i++) {
		struct json_object *h = json_object_array_get_idx(a, i), *bk = NULL;
		if (check_str(h, "name", what, "histograms", i, 1, err) ||
		    json_get_to(h, "buckets", json_type_array, &bk, what, err) < 0)
			goto bad;
		for (j = 0; bk && j < json_object_array_length(bk); j++) {
			struct json_object *b = json_object_array_get_idx(bk, j);
			if (!json_object_is_type(b, json_type_object) ||
			    check_num(b, "lo", what, "buckets", j, 1, err) ||
			    check_num(b, "hi", what, "buckets", j, 1, err) ||
			    check_num(b, "count", what, "buckets", j, 1, err))
				goto bad;
		}
	}
	if (check_array(o, "profile", what, &a, err))
		goto bad;
	for (i = 0; a && i < json_object_array_length(a); i++) {
		struct json_object *p = json_object_array_get_idx(a, i);
		if (check_num(p, "percent", what, "profile", i, 1, err) ||
		    check_str(p, "symbol", what, "profile", i, 1, err) ||
		    check_str(p, "comm", what, "profile", i, 0, err) || check_str(p, "dso", what, "profile", i, 0, err))
			goto bad;
	}
	if (check_array(o, "profile_stacks", what, &a, err))
		goto bad;
	for (i = 0; a && i < json_object_array_length(a); i++) {
		struct json_object *p = json_object_array_get_idx(a, i);
		if (check_str(p, "stack", what, "profile_stacks", i, 1, err) ||
		    check_num(p, "count", what, "profile_stacks", i, 1, err))
			goto bad;
	}
	if (json_object_object_get_ex(o, "monitors", &v) && v) {
		if (!json_object_is_type(v, json_type_object)) {
			error_to(err, "%s: 'monitors' is not an object", what);
			goto bad;
		}
		json_object_object_foreach(v, mk, mv) {
			if (!json_object_is_type(mv, json_type_string)) {
				error_to(err, "%s: 'monitors.%s' is not a string", what, mk);
				goto bad;
			}
		}
	}
	*out = o;
	return 0;
bad:
	json_object_put(o);
	return -1;
}

/* --- store ---------------------------------------------------------------------------- */

static const char *str_at(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static int num_at(struct json_object *o, const char *key, double *out)
{
	struct json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) || !is_num(v))
		return 0;
	*out = json_object_get_double(v);
	return 1;
}

/* The seed the generator drew its source ports from (workload.params.seed), else NULL: the kernel picked them. */
static void bind_seed(struct db_stmt *st, int i, struct json_object *res)
{
	struct json_object *doc, *params, *v;

	if (json_object_object_get_ex(res, "workload", &doc) &&
	    json_object_object_get_ex(doc, "params", &params) &&
	    json_object_object_get_ex(params, "seed", &v) && json_object_is_type(v, json_type_int))
		db_bind_int64(st, i, json_object_get_int64(v));
	else
		db_bind_null(st, i);
}

/* An integer of the result's timing (ops, warmup_ops of a run sized by work), else NULL: a timed run. */
static void bind_timing_int(struct db_stmt *st, int i, struct json_object *timing, const char *key)
{
	struct json_object *v;

	if (timing && json_object_object_get_ex(timing, key, &v) && json_object_is_type(v, json_type_int))
		db_bind_int64(st, i, json_object_get_int64(v));
	else
		db_bind_null(st, i);
}

static void bind_int_or_null(struct db_stmt *st, int i, int64_t v)
{
	if (v)
		db_bind_int64(st, i, v);
	else
		db_bind_null(st, i);
}

static void bind_text(struct db_stmt *st, int i, const char *s)
{
	if (s)
		db_bind_text(st, i, s);
	else
		db_bind_null(st, i);
}

static void bind_num(struct db_stmt *st, int i, struct json_object *o, const char *key)
{
	double d;

	if (num_at(o, key, &d))
		db_bind_double(st, i, d);
	else
		db_bind_null(st, i);
}

static struct db_stmt *prep(struct db *db, const char *sql)
{
	return db_prepare(db, sql, "");
}

static int step_done(struct db *db, struct db_stmt *st, const char *what)
{
	int rc = db_step(st);

	db_reset(st);
	db_clear_bindings(st);
	if (rc != DB_DONE)
		return error("cannot store %s: %s", what, db_errmsg(db));
	return 0;
}

/*
 * Under the icount clock (qemu -icount shift=0) one nanosecond of guest time
 * is one executed instruction, so the agent's busy CPU microseconds per
 * operation are thousands of instructions per operation: they are stored as
 * what they are, insn_per_op (unit "insn"), not as cpu_us_per_op. With
 * several vCPUs busy at once, each instruction counts on every busy vCPU
 * (docs/qemu-icount.md).
 */
#define ICOUNT_COST_METRIC "insn_per_op"

static int store_rows(struct db *db, int64_t id, struct json_object *o, int icount)
{
	struct db_stmt *st = NULL;
	struct json_object *a;
	size_t i, j;
	int ret = -1;

	if (json_object_object_get_ex(o, "metrics", &a) && a) {
		if (!(st = prep(db, "INSERT INTO metrics (run_id, name, value, unit, better) VALUES (?, ?, ?, ?, ?) "
				    "ON CONFLICT (run_id, name) DO UPDATE SET value = excluded.value, unit = excluded.unit, "
				    "better = excluded.better")))
			goto out;
		for (i = 0; i < json_object_array_length(a); i++) {
			struct json_object *m = json_object_array_get_idx(a, i);
			double v;

			db_bind_int64(st, 1, id);
			if (icount && str_at(m, "name") && !strcmp(str_at(m, "name"), "cpu_us_per_op") &&
			    num_at(m, "value", &v)) {
				bind_text(st, 2, ICOUNT_COST_METRIC);
				db_bind_double(st, 3, v * 1000);
				bind_text(st, 4, "insn");
			} else {
				bind_text(st, 2, str_at(m, "name"));
				bind_num(st, 3, m, "value");
				bind_text(st, 4, str_at(m, "unit"));
			}
			bind_text(st, 5, str_at(m, "better") ? str_at(m, "better") : "none");
			if (step_done(db, st, "a metric"))
				goto out;
		}
		db_finalize(st);
		st = NULL;
	}
	if (json_object_object_get_ex(o, "series", &a) && a) {
		if (!(st = prep(db, "INSERT INTO samples (run_id, metric, t, value) VALUES (?, ?, ?, ?) "
				    "ON CONFLICT (run_id, metric, t) DO UPDATE SET value = excluded.value")))
			goto out;
		for (i = 0; i < json_object_array_length(a); i++) {
			struct json_object *s = json_object_array_get_idx(a, i), *pts;
			if (!json_object_object_get_ex(s, "points", &pts) || !pts)
				continue;
			for (j = 0; j < json_object_array_length(pts); j++) {
				struct json_object *p = json_object_array_get_idx(pts, j);
				db_bind_int64(st, 1, id);
				bind_text(st, 2, str_at(s, "metric"));
				db_bind_double(st, 3, json_object_get_double(json_object_array_get_idx(p, 0)));
				db_bind_double(st, 4, json_object_get_double(json_object_array_get_idx(p, 1)));
				if (step_done(db, st, "a sample"))
					goto out;
			}
		}
		db_finalize(st);
		st = NULL;
	}
	if (json_object_object_get_ex(o, "cpus", &a) && a) {
		if (!(st = prep(db, "INSERT INTO cpu_stats (run_id, cpu, usr, nice, sys, iowait, irq, soft, steal, idle)"
				" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, cpu) DO UPDATE SET "
				"usr = excluded.usr, nice = excluded.nice, sys = excluded.sys, iowait = excluded.iowait, "
				"irq = excluded.irq, soft = excluded.soft, steal = excluded.steal, idle = excluded.idle")))
			goto out;
		for (i = 0; i < json_object_array_length(a); i++) {
			struct json_object *c = json_object_array_get_idx(a, i);
			double cpu = -1;
			num_at(c, "cpu", &cpu);
			db_bind_int64(st, 1, id);
			db_bind_int64(st, 2, (int64_t)cpu);
			bind_num(st, 3, c, "usr");
			bind_num(st, 4, c, "nice");
			bind_num(st, 5, c, "sys");
			bind_num(st, 6, c, "iowait");
			bind_num(st, 7, c, "irq");
			bind_num(st, 8, c, "soft");
			bind_num(st, 9, c, "steal");
			bind_num(st, 10, c, "idle");
			if (step_done(db, st, "per-CPU figures"))
				goto out;
		}
		db_finalize(st);
		st = NULL;
	}
	if (json_object_object_get_ex(o, "histograms", &a) && a) {
		if (!(st = prep(db, "INSERT INTO histograms (run_id, name, lo, hi, count) VALUES (?, ?, ?, ?, ?) "
				    "ON CONFLICT (run_id, name, lo) DO UPDATE SET hi = excluded.hi, count = excluded.count")))
			goto out;
		for (i = 0; i < json_object_array_length(a); i++) {
			struct json_object *h = json_object_array_get_idx(a, i), *bk = NULL;
			if (!json_object_object_get_ex(h, "buckets", &bk) || !bk)
				continue;
			for (j = 0; j < json_object_array_length(bk); j++) {
				struct json_object *b = json_object_array_get_idx(bk, j);
				double c = 0;
				num_at(b, "count", &c);
				db_bind_int64(st, 1, id);
				bind_text(st, 2, str_at(h, "name"));
				bind_num(st, 3, b, "lo");
				bind_num(st, 4, b, "hi");
				db_bind_int64(st, 5, (int64_t)c);
				if (step_done(db, st, "a histogram bucket"))
					goto out;
			}
		}
		db_finalize(st);
		st = NULL;
	}
	if (json_object_object_get_ex(o, "profile", &a) && a) {
		if (!(st = prep(db, "INSERT INTO profile_rows (run_id, comm, dso, symbol, percent) VALUES (?, ?, ?, ?, ?)")))
			goto out;
		for (i = 0; i < json_object_array_length(a); i++) {
			struct json_object *p = json_object_array_get_idx(a, i);
			db_bind_int64(st, 1, id);
			bind_text(st, 2, str_at(p, "comm"));
			bind_text(st, 3, str_at(p, "dso"));
			bind_text(st, 4, str_at(p, "symbol"));
			bind_num(st, 5, p, "percent");
			if (step_done(db, st, "a profile row"))
				goto out;
		}
	}
	ret = 0;
out:
	db_finalize(st);
	return ret;
}

/*
 * The monitors' words: "ok", or "unavailable: REASON" (a "failed: REASON"
 * is read the same way); anything else is kept whole as the reason of an
 * "unavailable" status, so no word of the agent is lost.
 */
static int store_monitors(struct db *db, int64_t id, struct json_object *o)
{
	struct json_object *mons;
	struct db_stmt *st;
	int ret = 0;

	if (!json_object_object_get_ex(o, "monitors", &mons) || !mons)
		return 0;
	if (!(st = prep(db, "INSERT INTO run_monitors (run_id, monitor, status, reason) VALUES (?, ?, ?, ?)")))
		return -1;
	json_object_object_foreach(mons, name, val) {
		const char *t = json_object_get_string(val), *status = "unavailable", *reason = t;

		if (!strcmp(t, "ok")) {
			status = "ok";
			reason = NULL;
		} else if (starts_with(t, "unavailable:") || starts_with(t, "failed:")) {
			status = t[0] == 'f' ? "failed" : "unavailable";
			reason = strchr(t, ':') + 1;
			while (*reason == ' ')
				reason++;
		}
		db_bind_int64(st, 1, id);
		db_bind_text(st, 2, name);
		db_bind_text(st, 3, status);
		bind_text(st, 4, reason && *reason ? reason : NULL);
		if (step_done(db, st, "a monitor's status")) {
			ret = -1;
			break;
		}
	}
	db_finalize(st);
	return ret;
}

/*
 * The folded call stacks, largest first as the agent sends them, up to
 * RESULT_STACKS_MAX rows and RESULT_STACKS_BYTES of stack text per run: the
 * agent keeps 1000, so the cap only bites on a document from elsewhere;
 * what it drops is counted into one "[dropped stacks]" row so the shares
 * of the rest stay right.
 */
#define RESULT_STACKS_MAX 2000
#define RESULT_STACKS_BYTES (2 << 20)

static int store_stacks(struct db *db, int64_t id, struct json_object *o)
{
	struct json_object *a;
	struct db_stmt *st;
	size_t i, bytes = 0, kept = 0;
	int64_t dropped = 0;
	int ret = -1;

	if (!json_object_object_get_ex(o, "profile_stacks", &a) || !a || !json_object_array_length(a))
		return 0;
	if (!(st = prep(db, "INSERT INTO profile_stacks (run_id, stack, count) VALUES (?, ?, ?)")))
		return -1;
	for (i = 0; i < json_object_array_length(a); i++) {
		struct json_object *p = json_object_array_get_idx(a, i);
		const char *stack = str_at(p, "stack");
		double c = 0;

		num_at(p, "count", &c);
		if (c < 1 || !*stack)
			continue;
		if (kept >= RESULT_STACKS_MAX - 1 || bytes + strlen(stack) > RESULT_STACKS_BYTES) {
			dropped += (int64_t)c;
			continue;
		}
		bytes += strlen(stack);
		kept++;
		db_bind_int64(st, 1, id);
		db_bind_text(st, 2, stack);
		db_bind_int64(st, 3, (int64_t)c);
		if (step_done(db, st, "a call stack"))
			goto out;
	}
	if (dropped) {
		warn("run %lld: %zu call stacks kept, the rest (%lld samples) stored as one", (long long)id, kept,
		     (long long)dropped);
		db_bind_int64(st, 1, id);
		db_bind_text(st, 2, "[dropped stacks]");
		db_bind_int64(st, 3, dropped);
		if (step_done(db, st, "a call stack"))
			goto out;
	}
	ret = 0;
out:
	db_finalize(st);
	return ret;
}

/*
 * The per-boot summaries (migration 0014), made from the measured runs of
 * jobs (r, with its job j) that FILTER selects: per boot (bkey: the boot's
 * id, or -(run id) for a run without a boot) and workload, the mean of each
 * metric and CPU share, and the sum of each symbol's profile shares with
 * the number of runs that have a profile. The migration's backfill is the
 * same SELECTs over every run.
 */
/* each: its table, and the SQL before and after FILTER */
static const struct { const char *table, *head, *tail; } summary_sql[] = {
	{ "boot_metrics", "INSERT INTO boot_metrics (job_id, bkey, side, kernel_id, kernel_label, workload, name, unit, better, value, n)"
	" SELECT r.job_id, COALESCE(r.boot_id, -r.id), MAX(r.side), MAX(r.kernel_id), MAX(r.kernel_label), r.workload,"
	" m.name, MAX(m.unit), MAX(m.better), AVG(m.value), COUNT(*)"
	" FROM runs r JOIN jobs j ON j.id = r.job_id JOIN metrics m ON m.run_id = r.id"
	" WHERE " RESULT_MEASURED_SQL " AND r.seq >= " RESULT_JOB_WARMUP_SQL " AND ",
	  " GROUP BY r.job_id, COALESCE(r.boot_id, -r.id), r.workload, m.name" },

	{ "boot_cpus", "INSERT INTO boot_cpus (job_id, bkey, side, kernel_id, kernel_label, workload, cpu, usr, sys, irq, soft, idle)"
	" SELECT r.job_id, COALESCE(r.boot_id, -r.id), MAX(r.side), MAX(r.kernel_id), MAX(r.kernel_label), r.workload,"
	" c.cpu, AVG(c.usr), AVG(c.sys), AVG(c.irq), AVG(c.soft), AVG(c.idle)"
	" FROM runs r JOIN jobs j ON j.id = r.job_id JOIN cpu_stats c ON c.run_id = r.id"
	" WHERE " RESULT_MEASURED_SQL " AND r.seq >= " RESULT_JOB_WARMUP_SQL " AND ",
	  " GROUP BY r.job_id, COALESCE(r.boot_id, -r.id), r.workload, c.cpu" },

	{ "boot_profile", "WITH rr AS (SELECT r.id, r.job_id, COALESCE(r.boot_id, -r.id) AS bkey, r.side, r.kernel_id, r.kernel_label,"
	" r.workload FROM runs r JOIN jobs j ON j.id = r.job_id"
	" WHERE " RESULT_MEASURED_SQL " AND r.seq >= " RESULT_JOB_WARMUP_SQL " AND ",
	  " AND EXISTS (SELECT 1 FROM profile_rows p WHERE p.run_id = r.id)),"
	" nb AS (SELECT bkey, workload, COUNT(*) AS runs FROM rr GROUP BY bkey, workload)"
	" INSERT INTO boot_profile (job_id, bkey, side, kernel_id, kernel_label, workload, symbol, dso, pct_sum, runs)"
	" SELECT rr.job_id, rr.bkey, MAX(rr.side), MAX(rr.kernel_id), MAX(rr.kernel_label), rr.workload, p.symbol,"
	" MAX(p.dso), SUM(p.percent), MAX(nb.runs)"
	" FROM rr JOIN profile_rows p ON p.run_id = rr.id JOIN nb ON nb.bkey = rr.bkey AND nb.workload = rr.workload"
	" GROUP BY rr.job_id, rr.bkey, rr.workload, p.symbol" },
};

/*
 * job_metrics (migration 0015) from boot_metrics, for the job sides FILTER
 * (of boot_metrics) selects: the mean of a side's measured runs and their
 * number, a night's point on the history pages.
 */
#define JOB_METRICS_HEAD \
	"INSERT INTO job_metrics (job_id, side, workload, name, value, n)" \
	" SELECT job_id, side, workload, name, SUM(value * n) / SUM(n), SUM(n) FROM boot_metrics WHERE "
#define JOB_METRICS_TAIL " GROUP BY job_id, side, workload, name"

/*
 * The summaries of the boot run ID belongs to, for its workload, made again
 * from the boot's runs (a handful), then its side's job_metrics from the
 * side's boots, in the caller's transaction. Runs outside jobs have no
 * rows: readers take them from runs.
 */
static int store_boot_summaries(struct db *db, int64_t id, const struct result_meta *meta, const char *workload)
{
	int64_t bkey = meta->boot_id ? meta->boot_id : -id, old_kernel = 0;
	int ret = 0;

	if (!meta->job_id)
		return 0;
	/* the kernel the boot's summaries had (its samples lose the boot if that changes) */
	if (db_get_int(db, &old_kernel, "SELECT MAX(k) FROM (SELECT kernel_id AS k FROM boot_metrics WHERE bkey = ?1"
		       " AND workload = ?2 UNION ALL SELECT kernel_id FROM boot_cpus WHERE bkey = ?1 AND workload = ?2"
		       " UNION ALL SELECT kernel_id FROM boot_profile WHERE bkey = ?1 AND workload = ?2) x",
		       "is", bkey, workload) < 0)
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(summary_sql) && !ret; i++) {
		char *del = xasprintf("DELETE FROM %s WHERE bkey = ?1 AND workload = ?2", summary_sql[i].table);
		char *ins = xasprintf("%s%s%s", summary_sql[i].head, RESULT_BOOT_RUNS_SQL(bkey), summary_sql[i].tail);

		ret = db_run(db, del, "is", bkey, workload) || db_run(db, ins, "isi", bkey, workload, meta->job_id);
		free(del);
		free(ins);
	}
	if (!ret && meta->side)
		ret = db_run(db, "DELETE FROM job_metrics WHERE job_id = ?1 AND side = ?2 AND workload = ?3", "iss",
			     meta->job_id, meta->side, workload) ||
		      db_run(db, JOB_METRICS_HEAD "job_id = ?1 AND side = ?2 AND workload = ?3" JOB_METRICS_TAIL, "iss",
			     meta->job_id, meta->side, workload);
	if (!ret)
		ret = ksample_update_boot(db, meta->job_id, old_kernel, bkey, workload);
	return ret ? -1 : 0;
}

int result_rebuild_summaries(struct db *db)
{
	int ret = 0;

	if (db_begin(db))
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(summary_sql) && !ret; i++) {
		char *del = xasprintf("DELETE FROM %s", summary_sql[i].table);
		char *ins = xasprintf("%s%s%s", summary_sql[i].head, "r.job_id IS NOT NULL", summary_sql[i].tail);

		ret = db_run(db, del, "") || db_run(db, ins, "");
		free(del);
		free(ins);
	}
	if (!ret)
		ret = db_run(db, "DELETE FROM job_metrics", "") ||
		      db_run(db, JOB_METRICS_HEAD "side IS NOT NULL" JOB_METRICS_TAIL, "") ||
		      ksample_rebuild(db);
	if (ret) {
		db_rollback(db);
		return -1;
	}
	return db_commit(db);
}

int result_store(struct db *db, const char *json, size_t len, const struct result_meta *meta,
		 int64_t *run_id)
{
	static const struct result_meta none;
	struct json_object *o = NULL, *spec = NULL, *wl = NULL, *kernel = NULL, *timing = NULL;
	struct db_stmt *st = NULL;
	const char *uid, *workload, *label, *machine;
	int64_t id = 0;
	char *what;
	int ret = -1, in_tx = 0, r;

	if (!meta)
		meta = &none;
	what = xasprintf("result of run from %s", meta->machine ? meta->machine : "an agent");
	if (meta->why)
		buf_reset(meta->why);
	if (result_parse(json, len, what, &o, meta->why))
		goto out;
	uid = str_at(o, "run_id");
	json_object_object_get_ex(o, "spec", &spec);
	json_object_object_get_ex(spec, "workload", &wl);
	json_object_object_get_ex(o, "kernel", &kernel);
	json_object_object_get_ex(o, "timing", &timing);
	workload = meta->workload ? meta->workload : str_at(wl, "name") ? str_at(wl, "name") : str_at(wl, "type");
	if (!workload) {
		error_to(meta->why, "cannot store run '%s': no workload name (neither given nor in spec.workload.name)",
			 uid);
		goto out;
	}
	label = meta->kernel_label ? meta->kernel_label : str_at(kernel, "release");
	machine = meta->machine ? meta->machine : str_at(o, "host");

	if (db_begin(db))
		goto out;
	in_tx = 1;
	r = db_get_int(db, &id, "SELECT id FROM runs WHERE uid = ?", "s", uid);
	if (r < 0)
		goto out;
	if (r > 0) {
		debug("run '%s' is already stored as run %lld", uid, (long long)id);
		ret = 0;
		goto out;
	}
	if (!(st = prep(db, "INSERT INTO runs (uid, job_id, boot_id, side, kernel_id, kernel_label, workload, seq,"
			" machine, peer, profile, started, duration_s, warmup_s, status, result, created, clock,"
			" machine_boot_id, machine_release, machine_build_id, kind, observes, seed, ops, warmup_ops)"
			" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")))
		goto out;
	bind_text(st, 1, uid);
	bind_int_or_null(st, 2, meta->job_id);
	bind_int_or_null(st, 3, meta->boot_id);
	bind_text(st, 4, meta->side);
	bind_int_or_null(st, 5, meta->kernel_id);
	bind_text(st, 6, label);
	bind_text(st, 7, workload);
	db_bind_int64(st, 8, meta->seq);
	bind_text(st, 9, machine);
	bind_text(st, 10, meta->peer);
	bind_text(st, 11, meta->profile);
	bind_num(st, 12, timing, "start");
	if (num_at(timing, "window_s", &(double){ 0 }))
		bind_num(st, 13, timing, "window_s");
	else
		bind_num(st, 13, timing, "duration_s");
	bind_num(st, 14, timing, "warmup_s");
	bind_text(st, 15, str_at(o, "status") ? str_at(o, "status") : "ok");
	db_bind_textn(st, 16, json, len);
	db_bind_double(st, 17, now_wall());
	bind_text(st, 18, meta->clock ? meta->clock : "real");
	/* the machine as the agent saw it during the run (kernel.boot_id: agents since issue 16) */
	bind_text(st, 19, str_at(kernel, "boot_id"));
	bind_text(st, 20, str_at(kernel, "release"));
	bind_text(st, 21, str_at(kernel, "build_id"));
	bind_text(st, 22, meta->observes ? "observe" : "measure");
	bind_text(st, 23, meta->observes);
	bind_seed(st, 24, o);
	bind_timing_int(st, 25, timing, "ops");
	bind_timing_int(st, 26, timing, "warmup_ops");
	if (step_done(db, st, "the run"))
		goto out;
	id = db_last_id(db);
	if (store_rows(db, id, o, meta->clock && !strcmp(meta->clock, "icount")) || store_monitors(db, id, o) ||
	    store_stacks(db, id, o) || (!meta->observes && store_boot_summaries(db, id, meta, workload)))
		goto out;
	if (db_commit(db))
		goto out;
	in_tx = 0;
	ret = 0;
out:
	if (in_tx) {
		if (ret)
			db_rollback(db);
		else if (db_commit(db))
			ret = -1;
	}
	if (ret && meta->why && !meta->why->len)	/* the rest fails only in the database */
		db_error_to(db, meta->why);
	if (!ret && run_id)
		*run_id = id;
	db_finalize(st);
	json_object_put(o);
	free(what);
	return ret;
}

int result_cost_runs(struct db *db, int64_t job, const char *wl, const char *rate, const char *per_op,
		     struct run_cost **out, size_t *n)
{
	struct db_stmt *st = db_prepare(db,
		"SELECT r.side, COALESCE(b.seq, 0), r.kind, r.observes, r.seq, mr.value, mp.value FROM runs r "
		"JOIN jobs j ON j.id = r.job_id "
		"LEFT JOIN boots b ON b.id = r.boot_id "
		"LEFT JOIN metrics mr ON mr.run_id = r.id AND mr.name = ?3 "
		"LEFT JOIN metrics mp ON mp.run_id = r.id AND mp.name = ?4 "
		"WHERE r.job_id = ?1 AND r.workload = ?2 AND r.status = 'ok' "
		"AND (r.kind = 'observe' OR r.seq >= " RESULT_JOB_WARMUP_SQL ") AND r.boot_id IN "
		"(SELECT o.boot_id FROM runs o WHERE o.job_id = ?1 AND o.workload = ?2 AND o.kind = 'observe') "
		"ORDER BY COALESCE(b.seq, 0), r.kind, r.seq, r.id", "isss", job, wl, rate, per_op);
	size_t alloc = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if (!st)
		return -1;
	while ((rc = db_step(st)) == DB_ROW) {
		struct run_cost *c;
		const char *side = db_col_text(st, 0), *kind = db_col_text(st, 2), *obs = db_col_text(st, 3);

		if (*n == alloc) {
			alloc = alloc ? 2 * alloc : 16;
			*out = xrealloc(*out, alloc * sizeof(**out));
		}
		c = &(*out)[(*n)++];
		c->side = side ? side[0] : '?';
		c->boot = (int)db_col_int64(st, 1);
		c->observe = kind && !strcmp(kind, "observe");
		c->observes = obs ? xstrdup(obs) : NULL;
		c->seq = (int)db_col_int64(st, 4);
		c->rate = db_col_null(st, 5) ? NAN : db_col_double(st, 5);
		c->per_op = db_col_null(st, 6) ? NAN : db_col_double(st, 6);
	}
	db_finalize(st);
	if (rc != DB_DONE) {
		run_costs_free(*out, *n);
		*out = NULL;
		*n = 0;
		return error("cannot read the observation runs of job %lld: %s", (long long)job, db_errmsg(db));
	}
	return 0;
}

void run_costs_free(struct run_cost *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].observes);
	free(v);
}
