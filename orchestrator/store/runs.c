/* store/runs.c: reading runs and their metrics: klab query, a job's runs (store/runs.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "log.h"
#include "store/result.h"
#include "store/runs.h"
#include "store/side.h"
#include "util.h"

/* ---- klab query ---- */

/*
 * The runs of kernel K, as three disjoint branches of a UNION ALL, each an
 * index search: a run with a kernel id is that kernel's, found by the ids K
 * names (side_kernel_ids(), a literal list); a run without one is K's by
 * its own kernel_label or by its job side's label. With the ids behind a
 * subquery and the branches in one IN (...), PostgreSQL guessed 20M runs
 * and hashed every run and every tps row (3.8 s at 100M metric rows;
 * docs/query-scale.md). CROSS JOIN keeps sqlite on the runs first: it
 * started from the 2M tps rows otherwise (1.2 s against 0.3). Each branch
 * ends with its kernel condition, after the other filters and the join's;
 * '?' are K's name.
 */
#define QUERY_COLS \
	"SELECT r.id, r.job_id, r.side, COALESCE(r.kernel_label, k.release, k.variant, CAST(r.kernel_id AS TEXT))," \
	" r.machine, r.workload, r.boot_id, r.seq, COALESCE(r.started, r.created), m.name, m.value, m.unit"
#define QUERY_FROM " FROM runs r JOIN metrics m ON m.run_id = r.id LEFT JOIN kernels k ON k.id = r.kernel_id"
#define QUERY_FROM_KERNEL " FROM runs r CROSS JOIN metrics m LEFT JOIN kernels k ON k.id = r.kernel_id"
#define QUERY_FROM_SIDES \
	" FROM job_sides js CROSS JOIN runs r CROSS JOIN metrics m LEFT JOIN kernels k ON k.id = r.kernel_id"
#define QUERY_BY_ID " AND m.run_id = r.id AND r.kernel_id IN "
#define QUERY_BY_LABEL " AND m.run_id = r.id AND r.kernel_id IS NULL AND r.kernel_label = ?"
#define QUERY_BY_SIDE \
	" AND r.job_id = js.job_id AND r.side = js.side AND m.run_id = r.id AND js.label = ?" \
	" AND r.kernel_id IS NULL AND (r.kernel_label IS NULL OR r.kernel_label <> ?)"

struct run_query_iter {
	struct db *db;
	struct db_stmt *st;
};

/* The first NF bound values once more, after the *NB there are. */
static void rebind(char *types, const char **sv, int64_t *iv, double *dv, size_t *nb, size_t nf)
{
	for (size_t i = 0; i < nf; i++, (*nb)++) {
		types[*nb] = types[i];
		sv[*nb] = sv[i];
		iv[*nb] = iv[i];
		dv[*nb] = dv[i];
	}
}

struct run_query_iter *runs_query_open(struct db *db, const struct run_query *q)
{
	struct buf sql = BUF_INIT, flt = BUF_INIT;
	/* bound values, in order: 'i' int, 'd' double, 's' text (the filters' up to 3 times) */
	char types[48];
	const char *sv[48] = { NULL };
	int64_t iv[48] = { 0 };
	double dv[48] = { 0 };
	size_t nb = 0, nf;
	struct db_stmt *st = NULL;
	struct run_query_iter *it = NULL;

#define BIND_S(v) (types[nb] = 's', sv[nb++] = (v))
#define BIND_I(v) (types[nb] = 'i', iv[nb++] = (v))
#define BIND_D(v) (types[nb] = 'd', dv[nb++] = (v))
	if (q->job > 0) {
		buf_addstr(&flt, " AND r.job_id = ?");
		BIND_I(q->job);
	}
	if (q->side) {
		buf_addstr(&flt, " AND r.side = ?");
		BIND_S(q->side);
	}
	if (q->tree) {
		buf_addstr(&flt, " AND (r.job_id IN (SELECT id FROM jobs WHERE tree = ?) OR k.tree = ?)");
		BIND_S(q->tree);
		BIND_S(q->tree);
	}
	if (q->machine) {
		buf_addstr(&flt, " AND r.machine = ?");
		BIND_S(q->machine);
	}
	if (q->workload) {
		buf_addstr(&flt, strpbrk(q->workload, "*?[") ? " AND glob(?, r.workload)" : " AND r.workload = ?");
		BIND_S(q->workload);
	}
	if (q->metric) {
		buf_addstr(&flt, strpbrk(q->metric, "*?[") ? " AND glob(?, m.name)" : " AND m.name = ?");
		BIND_S(q->metric);
	}
	if (!isnan(q->since)) {
		buf_addstr(&flt, " AND COALESCE(r.started, r.created) >= ?");
		BIND_D(q->since);
	}
	if (!isnan(q->until)) {
		buf_addstr(&flt, " AND COALESCE(r.started, r.created) < ?");
		BIND_D(q->until);
	}
	nf = nb;
	if (q->kernel) {
		char *ids = side_kernel_ids(db, q->kernel);

		if (!ids)
			goto out;
		buf_addf(&sql, "%s%s WHERE r.status = 'ok'%s" QUERY_BY_ID "%s", QUERY_COLS, QUERY_FROM_KERNEL,
			 flt.buf ? flt.buf : "", ids);
		free(ids);
		/* the filters' values again for each branch, then the name */
		buf_addf(&sql, " UNION ALL %s%s WHERE r.status = 'ok'%s" QUERY_BY_LABEL, QUERY_COLS, QUERY_FROM_KERNEL,
			 flt.buf ? flt.buf : "");
		rebind(types, sv, iv, dv, &nb, nf);
		BIND_S(q->kernel);
		buf_addf(&sql, " UNION ALL %s%s WHERE r.status = 'ok'%s" QUERY_BY_SIDE, QUERY_COLS, QUERY_FROM_SIDES,
			 flt.buf ? flt.buf : "");
		rebind(types, sv, iv, dv, &nb, nf);
		BIND_S(q->kernel);
		BIND_S(q->kernel);
		buf_addstr(&sql, " ORDER BY 1, 10");
	} else {
		buf_addf(&sql, "%s%s WHERE r.status = 'ok'%s ORDER BY r.id, m.name", QUERY_COLS, QUERY_FROM,
			 flt.buf ? flt.buf : "");
	}
	if (q->limit >= 0) {
		buf_addstr(&sql, " LIMIT ?");
		BIND_I(q->limit);
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

		if (b) {
			db_finalize(st);
			goto out;
		}
	}
	it = xcalloc(1, sizeof(*it));
	it->db = db;
	it->st = st;
out:
	buf_release(&sql);
	buf_release(&flt);
	return it;
}

int runs_query_next(struct run_query_iter *it, struct run_metric_row *row)
{
	struct db_stmt *st = it->st;
	int rc = db_step(st);

	if (rc == DB_DONE)
		return 0;
	if (rc != DB_ROW)
		return error("database '%s': cannot query results: %s", db_file(it->db), db_errmsg(it->db));
	row->run = db_col_int64(st, 0);
	row->job = db_col_null(st, 1) ? 0 : db_col_int64(st, 1);
	row->side = db_col_text(st, 2);
	row->kernel = db_col_text(st, 3);
	row->machine = db_col_text(st, 4);
	row->workload = db_col_text(st, 5);
	row->boot = db_col_null(st, 6) ? 0 : db_col_int64(st, 6);
	row->seq = db_col_int(st, 7);
	row->time = db_col_double(st, 8);
	row->metric = db_col_text(st, 9);
	row->value = db_col_double(st, 10);
	row->unit = db_col_text(st, 11);
	return 1;
}

void runs_query_close(struct run_query_iter *it)
{
	if (!it)
		return;
	db_finalize(it->st);
	free(it);
}

/* ---- a job's runs ---- */

int64_t runs_count_of_job(struct db *db, int64_t job_id)
{
	int64_t n = 0;

	db_get_int(db, &n, "SELECT count(*) FROM runs WHERE job_id = ?", "i", job_id);
	return n;
}

int runs_uid_stored(struct db *db, const char *uid)
{
	char *status = NULL;
	int ret;

	db_get_str(db, &status, "SELECT status FROM runs WHERE uid = ?", "s", uid);	/* uid is unique */
	ret = !status ? 0 : !strcmp(status, "ok") ? 1 : 2;
	free(status);
	return ret;
}

int runs_icount_excess(struct db *db, int64_t run_id, double *pct)
{
	struct db_stmt *st = db_prepare(db,
		"SELECT m.value, (SELECT MIN(m2.value) FROM runs r2 JOIN metrics m2 ON m2.run_id = r2.id"
		"  WHERE r2.job_id = r.job_id AND r2.boot_id = r.boot_id AND r2.workload = r.workload"
		"  AND r2.kind = 'measure' AND r2.status = 'ok' AND r2.id != r.id AND m2.name = m.name),"
		" (SELECT count(*) FROM cpu_stats c WHERE c.run_id = r.id AND c.cpu >= 0)"
		" FROM runs r JOIN metrics m ON m.run_id = r.id"
		" WHERE r.id = ? AND r.boot_id IS NOT NULL AND m.name = 'insn_per_op'", "i", run_id);
	int r;

	*pct = NAN;
	if (!st)
		return -1;
	r = db_step(st);
	if (r == DB_ROW && !db_col_null(st, 1) && db_col_int64(st, 2) == 1 && db_col_double(st, 1) > 0)
		*pct = 100 * (db_col_double(st, 0) / db_col_double(st, 1) - 1);
	db_finalize(st);
	return r == DB_ROW || r == DB_DONE ? 0 : -1;
}

int runs_set_status(struct db *db, int64_t run_id, const char *status)
{
	return db_run(db, "UPDATE runs SET status = ? WHERE id = ?", "si", status, run_id);
}

/* ---- a job's boots ---- */

int boots_start(struct db *db, int64_t job_id, int seq, const char *side, int64_t kernel_id, const char *machine,
		double started, const char *clock)
{
	return db_run(db, "INSERT INTO boots (job_id, seq, side, kernel_id, machine, started, clock) "
		      "VALUES (?, ?, ?, NULLIF(?, 0), ?, ?, ?) "
		      "ON CONFLICT (job_id, seq) DO UPDATE SET kernel_id = excluded.kernel_id, "
		      "machine = excluded.machine, started = excluded.started, clock = excluded.clock",
		      "iisisds", job_id, (int64_t)seq, side, kernel_id, machine, started, clock);
}

int boots_set(struct db *db, int64_t job_id, int seq, enum boot_field field, const char *value)
{
	static const char *const sql[] = {
		[BOOT_MACHINE_BOOT_ID] = "UPDATE boots SET machine_boot_id = ? WHERE job_id = ? AND seq = ?",
		[BOOT_BUILD_ID] = "UPDATE boots SET build_id = ? WHERE job_id = ? AND seq = ?",
		[BOOT_RELEASE] = "UPDATE boots SET release = ? WHERE job_id = ? AND seq = ?",
		[BOOT_SYSINFO] = "UPDATE boots SET sysinfo = ? WHERE job_id = ? AND seq = ?",
		[BOOT_MACHINE] = "UPDATE boots SET machine = ? WHERE job_id = ? AND seq = ?",
	};

	return db_run(db, sql[field], "sii", value, job_id, (int64_t)seq);
}

int boots_get(struct db *db, int64_t job_id, int seq, enum boot_field field, char **out)
{
	static const char *const sql[] = {
		[BOOT_MACHINE_BOOT_ID] = "SELECT machine_boot_id FROM boots WHERE job_id = ? AND seq = ?",
		[BOOT_BUILD_ID] = "SELECT build_id FROM boots WHERE job_id = ? AND seq = ?",
		[BOOT_RELEASE] = "SELECT release FROM boots WHERE job_id = ? AND seq = ?",
		[BOOT_SYSINFO] = "SELECT sysinfo FROM boots WHERE job_id = ? AND seq = ?",
		[BOOT_MACHINE] = "SELECT machine FROM boots WHERE job_id = ? AND seq = ?",
	};

	return db_get_str(db, out, sql[field], "ii", job_id, (int64_t)seq);
}

int boots_id(struct db *db, int64_t job_id, int seq, int64_t *id)
{
	return db_get_int(db, id, "SELECT id FROM boots WHERE job_id = ? AND seq = ?", "ii", job_id, (int64_t)seq);
}

int runs_of_job_each(struct db *db, int64_t job_id, int (*fn)(const struct job_run *r, void *data), void *data)
{
	struct db_stmt *st = db_prepare(db, "SELECT r.id, r.uid, r.side, r.workload, r.seq, b.seq, r.status, r.machine,"
					" r.profile, (SELECT value FROM metrics m WHERE m.run_id = r.id"
					" AND m.name IN ('tps', 'tx_pps') LIMIT 1) "
					"FROM runs r LEFT JOIN boots b ON b.id = r.boot_id WHERE r.job_id = ? ORDER BY r.id",
					"i", job_id);
	int r = DB_DONE, ret = 0;

	if (!st)
		return -1;
	while (!ret && (r = db_step(st)) == DB_ROW) {
		struct job_run jr = {
			db_col_int64(st, 0), db_col_text(st, 1), db_col_text(st, 2), db_col_text(st, 3),
			db_col_int64(st, 4), db_col_null(st, 5) ? -1 : db_col_int64(st, 5), db_col_text(st, 6),
			db_col_text(st, 7), db_col_text(st, 8), db_col_null(st, 9) ? NAN : db_col_double(st, 9),
		};

		ret = fn(&jr, data);
	}
	db_finalize(st);
	return ret ? ret : r == DB_DONE ? 0 : -1;
}

/* ---- a bisection's steps ---- */

int runs_bisect_step_values(struct db *db, int64_t id, int seq, const char *side, const char *workload,
			    const char *metric, double **out, size_t *n)
{
	struct db_stmt *q = db_prepare(db,
		"SELECT AVG(m.value) FROM runs x JOIN metrics m ON m.run_id = x.id JOIN jobs j ON j.id = x.job_id "
		"WHERE j.bisection_id = ? AND j.bisect_seq = ? AND x.side = ? AND x.workload = ? AND m.name = ? "
		"AND x.status = 'ok' AND x.kind = 'measure' AND x.seq >= COALESCE(CAST(json_extract(j.spec, '$.warmup_runs') AS DOUBLE PRECISION), 1) "
		"GROUP BY COALESCE(x.boot_id, -x.id) ORDER BY MIN(x.id)",
		"iisss", id, (int64_t)seq, side, workload, metric);

	*out = NULL;
	*n = 0;
	if (!q)
		return -1;
	while (db_step(q) == DB_ROW) {
		*out = xrealloc(*out, (*n + 1) * sizeof(double));
		(*out)[(*n)++] = db_col_double(q, 0);
	}
	db_finalize(q);
	return 0;
}

void runs_workload_metric_count(struct db *db, const char *workload, const char *metric, int64_t *runs, int64_t *has)
{
	db_get_int(db, runs, "SELECT count(*) FROM runs WHERE workload = ?", "s", workload);
	if (*runs)
		db_get_int(db, has, "SELECT count(*) FROM metrics m JOIN runs r ON r.id = m.run_id "
			   "WHERE r.workload = ? AND m.name = ?", "ss", workload, metric);
}

/* ---- the nightly history ---- */

struct nightly_boot_iter {
	struct db_stmt *st;
};

int samples_each(struct db *db, int64_t run, const char *metric, void (*fn)(double t, double value, void *data),
		 void *data)
{
	struct db_stmt *st = db_prepare(db, "SELECT t, value FROM samples WHERE run_id = ? AND metric = ? ORDER BY t",
					"is", run, metric);

	if (!st)
		return -1;
	while (db_step(st) == DB_ROW)
		fn(db_col_double(st, 0), db_col_double(st, 1), data);
	db_finalize(st);
	return 0;
}

int histograms_of_job_each(struct db *db, int64_t job, const char *workload,
			   void (*fn)(const struct hist_bucket_row *h, void *data), void *data)
{
	struct db_stmt *st = db_prepare(db,
		"SELECT h.name, h.lo, h.hi, SUM(CASE WHEN r.side = 'A' THEN h.count ELSE 0 END), "
		"SUM(CASE WHEN r.side = 'B' THEN h.count ELSE 0 END) "
		"FROM histograms h JOIN runs r ON r.id = h.run_id "
		"WHERE r.job_id = ? AND r.workload = ? AND r.status = 'ok' "
		/* the generator's histograms are measurements; bpftrace's (@map) come from observation runs */
		"AND (r.kind = 'measure' OR h.name LIKE '@%') "
		"GROUP BY h.name, h.lo, h.hi ORDER BY h.name, h.lo", "is", job, workload);

	if (!st)
		return -1;
	while (db_step(st) == DB_ROW) {
		struct hist_bucket_row h = {
			db_col_text(st, 0), db_col_double(st, 1), db_col_double(st, 2), db_col_double(st, 3),
			db_col_double(st, 4),
		};

		fn(&h, data);
	}
	db_finalize(st);
	return 0;
}

int job_metrics_of_workload_each(struct db *db, const char *workload,
				 void (*fn)(const struct job_metric_row *m, void *data), void *data)
{
	struct db_stmt *st = db_prepare(db, "SELECT name, job_id, side, value, n FROM job_metrics WHERE workload = ?"
					" ORDER BY name, job_id, side", "s", workload);
	int rc;

	if (!st)
		return -1;
	while ((rc = db_step(st)) == DB_ROW) {
		struct job_metric_row m = {
			db_col_text(st, 0), db_col_int64(st, 1), db_col_text(st, 2), db_col_double(st, 3),
			db_col_int64(st, 4),
		};

		fn(&m, data);
	}
	db_finalize(st);
	return rc == DB_DONE ? 0 : -1;
}

int runs_workloads_of_job_each(struct db *db, int64_t job, void (*fn)(const char *workload, void *data), void *data)
{
	struct db_stmt *st = db_prepare(db, "SELECT DISTINCT workload FROM runs WHERE job_id = ? ORDER BY workload",
				      "i", job);

	if (!st)
		return -1;
	while (db_step(st) == DB_ROW)
		fn(db_col_text(st, 0), data);
	db_finalize(st);
	return 0;
}

int boots_of_job_each(struct db *db, int64_t job, void (*fn)(const struct boot_info_row *b, void *data), void *data)
{
	struct db_stmt *st = db_prepare(db, "SELECT side, cmdline, sysinfo, machine FROM boots WHERE job_id = ? ORDER BY seq",
					"i", job);

	if (!st)
		return -1;
	while (db_step(st) == DB_ROW) {
		struct boot_info_row b = { db_col_text(st, 0), db_col_text(st, 1), db_col_text(st, 2), db_col_text(st, 3) };

		fn(&b, data);
	}
	db_finalize(st);
	return 0;
}

int runs_spec_nic(struct db *db, int64_t job, char **nic)
{
	return db_get_str(db, nic, "SELECT json_extract(result, '$.spec.nic') FROM runs "
			  "WHERE job_id = ? AND json_valid(result) = 1 AND json_extract(result, '$.spec.nic') IS NOT NULL "
			  "LIMIT 1", "i", job);
}

int runs_counts_of_job_each(struct db *db, int64_t job, void (*fn)(const struct run_count_row *c, void *data),
			    void *data)
{
	struct db_stmt *st = db_prepare(db,
		"SELECT workload, side, COUNT(DISTINCT boot_id), COUNT(*) FROM runs "
		"WHERE job_id = ? AND status = 'ok' AND kind = 'measure' GROUP BY workload, side ORDER BY workload, side", "i", job);

	if (!st)
		return -1;
	while (db_step(st) == DB_ROW) {
		struct run_count_row c = { db_col_text(st, 0), db_col_text(st, 1), db_col_int64(st, 2), db_col_int64(st, 3) };

		fn(&c, data);
	}
	db_finalize(st);
	return 0;
}

int runs_job_headline(struct db *db, int64_t job, const char *workload, char **metric)
{
	return db_get_str(db, metric, "SELECT m.name FROM metrics m JOIN runs r ON r.id = m.run_id "
			  "WHERE r.job_id = ? AND r.workload = ? AND m.name IN ('tps', 'tx_pps', 'rx_pps', 'tx_bps') "
			  "ORDER BY CASE m.name WHEN 'tps' THEN 0 WHEN 'tx_pps' THEN 1 WHEN 'rx_pps' THEN 2 ELSE 3 END "
			  "LIMIT 1", "is", job, workload);
}

int runs_job_metric_unit(struct db *db, int64_t job, const char *workload, const char *metric, char **unit)
{
	return db_get_str(db, unit, "SELECT m.unit FROM metrics m JOIN runs r ON r.id = m.run_id "
			  "WHERE r.job_id = ? AND r.workload = ? AND m.name = ? LIMIT 1", "iss", job, workload, metric);
}

int runs_metric_values_each(struct db *db, int64_t job, const char *workload, const char *metric,
			    void (*fn)(const struct run_value_row *v, void *data), void *data)
{
	struct db_stmt *st = db_prepare(db,
		"SELECT r.side, COALESCE(b.seq, 0), m.value, r.id FROM runs r "
		"LEFT JOIN boots b ON b.id = r.boot_id "
		"JOIN metrics m ON m.run_id = r.id AND m.name = ? "
		"WHERE r.job_id = ? AND r.workload = ? AND " RESULT_MEASURED_SQL " "
		"ORDER BY COALESCE(b.seq, 0), r.seq, r.id", "sis", metric, job, workload);

	if (!st)
		return -1;
	while (db_step(st) == DB_ROW) {
		struct run_value_row v = { db_col_text(st, 0), db_col_int64(st, 1), db_col_num(st, 2), db_col_int64(st, 3) };

		fn(&v, data);
	}
	db_finalize(st);
	return 0;
}

int runs_uid(struct db *db, int64_t run, char **uid)
{
	return db_get_str(db, uid, "SELECT uid FROM runs WHERE id = ?", "i", run);
}

int runs_metric_unit(struct db *db, const char *workload, const char *metric, char **unit)
{
	return db_get_str(db, unit, "SELECT m.unit FROM metrics m JOIN runs r ON r.id = m.run_id WHERE r.workload = ? "
			  "AND m.name = ? AND m.unit IS NOT NULL LIMIT 1", "ss", workload, metric);
}

int runs_profile_cpus(struct db *db, int64_t job, const char *workload, char **out)
{
	return db_get_str(db, out, "SELECT group_concat(c, ' / ') FROM (SELECT DISTINCT "
			  "json_extract(result, '$.profile_cpus') AS c FROM runs WHERE job_id = ? AND workload = ? "
			  "AND json_valid(result) = 1 AND json_extract(result, '$.profile_cpus') IS NOT NULL ORDER BY c) AS p",
			  "is", job, workload);
}

int runs_cache_model(struct db *db, int64_t job, char **out)
{
	return db_get_str(db, out, "SELECT group_concat(c, ' / ') FROM (SELECT DISTINCT "
			  "json_extract(result, '$.cache_model.model') AS c FROM runs WHERE job_id = ? "
			  "AND json_valid(result) = 1 AND json_extract(result, '$.cache_model.model') IS NOT NULL "
			  "ORDER BY c) AS p", "i", job);
}

int cpu_stats_avg_each(struct db *db, int64_t job, const char *workload, const char *side,
		       void (*fn)(const struct cpu_avg_row *c, void *data), void *data)
{
	struct db_stmt *st = db_prepare(db,
		"SELECT c.cpu, AVG(c.usr), AVG(c.sys), AVG(c.irq), AVG(c.soft), "
		"AVG(COALESCE(c.nice, 0) + COALESCE(c.iowait, 0) + COALESCE(c.steal, 0)), AVG(c.idle) "
		"FROM cpu_stats c JOIN runs r ON r.id = c.run_id "
		"WHERE r.job_id = ? AND r.workload = ? AND r.side = ? AND " RESULT_MEASURED_SQL " "
		"GROUP BY c.cpu ORDER BY c.cpu", "iss", job, workload, side);

	if (!st)
		return -1;
	while (db_step(st) == DB_ROW) {
		struct cpu_avg_row c = {
			(int)db_col_int(st, 0), db_col_double(st, 1), db_col_double(st, 2), db_col_double(st, 3),
			db_col_double(st, 4), db_col_double(st, 5), db_col_double(st, 6),
		};

		fn(&c, data);
	}
	db_finalize(st);
	return 0;
}

int run_monitors_recorded_each(struct db *db, int64_t job, const char *workload,
			       void (*fn)(const char *side, int64_t runs, int64_t recorded, void *data), void *data)
{
	struct db_stmt *st = db_prepare(db, "SELECT r.side, COUNT(*), "
			"SUM(CASE WHEN EXISTS (SELECT 1 FROM run_monitors m WHERE m.run_id = r.id) THEN 1 ELSE 0 END) "
			"FROM runs r WHERE r.job_id = ? AND r.workload = ? AND r.status = 'ok' GROUP BY r.side", "is", job,
			workload);

	if (!st)
		return -1;
	while (db_step(st) == DB_ROW)
		fn(db_col_text(st, 0), db_col_int64(st, 1), db_col_int64(st, 2), data);
	db_finalize(st);
	return 0;
}

int run_monitors_gaps_each(struct db *db, int64_t job, const char *workload,
			   void (*fn)(const struct monitor_gap_row *g, void *data), void *data)
{
	struct db_stmt *st = db_prepare(db, "SELECT r.side, m.monitor, m.status, m.reason, COUNT(*) FROM run_monitors m "
			"JOIN runs r ON r.id = m.run_id "
			"WHERE r.job_id = ? AND r.workload = ? AND r.status = 'ok' AND m.status != 'ok' "
			"GROUP BY r.side, m.monitor, m.status, m.reason ORDER BY r.side, m.monitor, COUNT(*) DESC, m.reason",
			"is", job, workload);

	if (!st)
		return -1;
	while (db_step(st) == DB_ROW) {
		struct monitor_gap_row g = {
			db_col_text(st, 0), db_col_text(st, 1), db_col_text(st, 2), db_col_text(st, 3), db_col_int64(st, 4),
		};

		fn(&g, data);
	}
	db_finalize(st);
	return 0;
}

int profile_stacks_runs(struct db *db, int64_t job, const char *workload, const char *side, int64_t *n)
{
	return db_get_int(db, n, "SELECT COUNT(DISTINCT s.run_id) FROM profile_stacks s JOIN runs r ON r.id = s.run_id "
			  "WHERE r.job_id = ? AND r.workload = ? AND r.side = ? AND r.status = 'ok'", "iss", job, workload,
			  side);
}

int profile_stacks_shares_each(struct db *db, int64_t job, const char *workload, const char *side,
			       void (*fn)(const char *stack, double share_sum, void *data), void *data)
{
	struct db_stmt *st = db_prepare(db, "SELECT s.stack, SUM(CAST(s.count AS DOUBLE PRECISION) / t.total) FROM profile_stacks s "
			"JOIN (SELECT p.run_id, SUM(p.count) AS total FROM profile_stacks p JOIN runs r ON r.id = p.run_id "
			"      WHERE r.job_id = ? AND r.workload = ? AND r.side = ? AND r.status = 'ok' GROUP BY p.run_id) t "
			"  ON t.run_id = s.run_id "
			"WHERE t.total > 0 GROUP BY s.stack", "iss", job, workload, side);

	if (!st)
		return -1;
	while (db_step(st) == DB_ROW)
		fn(db_col_text(st, 0), db_col_double(st, 1), data);
	db_finalize(st);
	return 0;
}

int profile_rows_runs_each(struct db *db, int64_t job, const char *workload,
			   void (*fn)(const char *side, int64_t runs, void *data), void *data)
{
	struct db_stmt *st = db_prepare(db, "SELECT r.side, COUNT(DISTINCT p.run_id) FROM profile_rows p JOIN runs r ON r.id = p.run_id "
			"WHERE r.job_id = ? AND r.workload = ? AND r.status = 'ok' GROUP BY r.side", "is", job, workload);

	if (!st)
		return -1;
	while (db_step(st) == DB_ROW)
		fn(db_col_text(st, 0), db_col_int(st, 1), data);
	db_finalize(st);
	return 0;
}

int profile_rows_each(struct db *db, int64_t job, const char *workload,
		      void (*fn)(const struct profile_sum_row *p, void *data), void *data)
{
	struct db_stmt *st = db_prepare(db, "SELECT r.side, p.run_id, p.symbol, MIN(COALESCE(p.dso, '')), SUM(p.percent) "
			"FROM profile_rows p JOIN runs r ON r.id = p.run_id "
			"WHERE r.job_id = ? AND r.workload = ? AND r.status = 'ok' "
			"GROUP BY r.side, p.run_id, p.symbol", "is", job, workload);

	if (!st)
		return -1;
	while (db_step(st) == DB_ROW) {
		struct profile_sum_row p = {
			db_col_text(st, 0), db_col_int64(st, 1), db_col_text(st, 2), db_col_text(st, 3), db_col_double(st, 4),
		};

		fn(&p, data);
	}
	db_finalize(st);
	return 0;
}

struct nightly_boot_iter *nightly_boots_open(struct db *db, const char *workload, const char *metric,
					     const char *tree, const char *machines)
{
	/*
	 * One row per (job, side, boot): the boot value, the mean of its
	 * measured runs, as boot_metrics keeps it (result_store()). In the
	 * order of boot_metrics_series, which holds every column read
	 * (migration 0018): PostgreSQL merges it with the jobs by id, where
	 * ordering by tree first had it fetch 20000 scattered rows and sort
	 * them (130 ms against 15 at 100M metric rows). The caller gathers
	 * the series and sorts them by tree and machines.
	 */
	struct db_stmt *st = db_prepare(db,
		"SELECT j.tree, j.dut || '+' || j.peer, j.id, j.created, b.side, b.value"
		" FROM boot_metrics b JOIN jobs j ON j.id = b.job_id"
		" WHERE b.workload = ?1 AND b.name = ?2 AND j.schedule IS NOT NULL AND j.state = 'done'"
		" AND (CAST(?3 AS TEXT) IS NULL OR j.tree = ?3)"
		" AND (CAST(?4 AS TEXT) IS NULL OR j.dut || '+' || j.peer = ?4)"
		" ORDER BY b.job_id, b.side, b.bkey", "ssss", workload, metric, tree, machines);
	struct nightly_boot_iter *it;

	if (!st)
		return NULL;
	it = xcalloc(1, sizeof(*it));
	it->st = st;
	return it;
}

int nightly_boots_next(struct nightly_boot_iter *it, struct nightly_boot *b)
{
	int rc = db_step(it->st);

	if (rc != DB_ROW)
		return rc == DB_DONE ? 0 : -1;
	b->tree = db_col_text(it->st, 0);
	b->machines = db_col_text(it->st, 1);
	b->job_id = db_col_int64(it->st, 2);
	b->created = db_col_double(it->st, 3);
	b->side = db_col_text(it->st, 4);
	b->value = db_col_double(it->st, 5);
	return 1;
}

void nightly_boots_close(struct nightly_boot_iter *it)
{
	if (!it)
		return;
	db_finalize(it->st);
	free(it);
}

int job_metric_keys_each(struct db *db, int64_t job_id,
			 void (*fn)(const char *workload, const char *metric, const char *tree, const char *machines,
				    void *data), void *data)
{
	struct db_stmt *st = db_prepare(db,
		"SELECT DISTINCT r.workload, m.name, j.tree, j.dut || '+' || j.peer"
		" FROM runs r JOIN metrics m ON m.run_id = r.id JOIN jobs j ON j.id = r.job_id"
		" WHERE r.job_id = ?1 ORDER BY 1, 2", "i", job_id);
	int rc;

	if (!st)
		return -1;
	while ((rc = db_step(st)) == DB_ROW)
		fn(db_col_text(st, 0), db_col_text(st, 1), db_col_text(st, 2), db_col_text(st, 3), data);
	db_finalize(st);
	if (rc != DB_DONE)
		return error("database '%s': %s", db_file(db), db_errmsg(db));
	return 0;
}
