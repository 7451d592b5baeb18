/* calib.c: the only SQL on `calibrations`, the instrument and workload keys, and the job readers that learning needs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "buf.h"
#include "jsonh.h"
#include "log.h"
#include "store/calib.h"
#include "store/result.h"
#include "strvec.h"
#include "util.h"

/* Lab words whose value names one lab instance (an address, a MAC, a folder): kept by name only. */
static const char *const instance_words[] = {
	"klab.name", "klab.dir", "klab.mgmt", "klab.mgmt_mac", "klab.lab", "klab.lab_mac", "klab.dummy",
	"klab.peerns",
};

static int is_instance_word(const char *w, size_t len)
{
	for (size_t i = 0; i < ARRAY_SIZE(instance_words); i++)
		if (strlen(instance_words[i]) == len && !strncmp(w, instance_words[i], len))
			return 1;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The next word of a command line at *P (its length into *LEN), moving *P past it; NULL at the end. */
static const char *cmdline_word(const char **p, size_t *len)
{
	const char *w;

	if (!*p)
		return NULL;
	*p += strspn(*p, " \t\n");
	if (!**p)
		return NULL;
	w = *p;
	*len = strcspn(w, " \t\n");
	*p = w + *len;
	return w;
}

/* The lab's words of a kernel command line, sorted, instance values dropped, into B. */
static void lab_words(struct buf *b, const char *cmdline)
{
	struct strvec v = STRVEC_INIT;
	const char *p = cmdline, *word;
	size_t len;

	while ((word = cmdline_word(&p, &len))) {
		size_t name = strcspn(word, "=");

		if (name > len)
			name = len;
		if (starts_with(word, "klab.") || starts_with(word, "maxcpus=")) {
			char *w = xstrndup(word, is_instance_word(word, name) ? name : len);

			if (strvec_find(&v, w) < 0)
				strvec_push(&v, w);
			free(w);
		}
	}
	if (v.n)
		qsort(v.v, v.n, sizeof(*v.v), cmp_str);
	for (size_t i = 0; i < v.n; i++)
		buf_addf(b, "%s%s", i ? " " : "", v.v[i]);
	strvec_clear(&v);
}

static const char *jstr(struct json_object *o, const char *a, const char *b)
{
	struct json_object *x;

	if (!json_object_object_get_ex(o, a, &x))
		return NULL;
	if (b && !json_object_object_get_ex(x, b, &x))
		return NULL;
	return json_object_is_type(x, json_type_null) ? NULL : json_object_get_string(x);
}

/*
 * klab.pool=NAME of a command line (the qemu lab's guests of a pool), into a
 * new string, or NULL.
 */
static char *cmdline_pool(const char *cmdline)
{
	const char *p = cmdline, *word;
	size_t len;

	while ((word = cmdline_word(&p, &len)))
		if (len > 10 && !strncmp(word, "klab.pool=", 10))
			return xstrndup(word + 10, len - 10);
	return NULL;
}

char *calib_instrument_key(const char *machine, const char *clock, const char *sysinfo)
{
	struct json_object *si = sysinfo ? json_tokener_parse(sysinfo) : NULL;
	struct buf b = BUF_INIT;
	int icount = clock && !strcmp(clock, "icount");
	char *pool = icount && si && json_object_is_type(si, json_type_object) ?
		     cmdline_pool(jstr(si, "kernel", "cmdline")) : NULL;

	/*
	 * The guests of an icount pool are one instrument (the same qemu, the
	 * same kernel command line but their names; their best runs agree to
	 * 2-16 ppm, docs/qemu-lab.md): one calibration serves every guest of
	 * the pool. A real-clock machine is its own instrument, pool or not.
	 */
	if (pool)
		buf_addf(&b, "pool:%s;%s;", pool, clock);
	else
		buf_addf(&b, "%s;%s;", machine ? machine : "?", clock ? clock : "real");
	free(pool);
	if (si && json_object_is_type(si, json_type_object)) {
		const char *model = jstr(si, "cpu", "model"), *count = jstr(si, "cpu", "count");
		const char *smt = jstr(si, "cpu", "smt"), *gov = jstr(si, "cpu", "governor");

		buf_addf(&b, "%s x%s", model ? model : "?", count ? count : "?");
		if (smt)
			buf_addf(&b, " smt=%s", smt);
		if (gov)
			buf_addf(&b, " gov=%s", gov);
		buf_addch(&b, ';');
		lab_words(&b, jstr(si, "kernel", "cmdline"));
	} else {
		buf_addstr(&b, "?;");
	}
	json_object_put(si);
	return buf_detach(&b, NULL);
}

void calib_workload_key(const struct job_spec_workload *w, char out[CALIB_WL_KEY_LEN + 1])
{
	struct buf b = BUF_INIT;
	char hex[65];

	if (!w) {
		snprintf(out, CALIB_WL_KEY_LEN + 1, "-");
		return;
	}
	buf_addf(&b, "type=%s\nduration=%.17g\nwarmup=%.17g\nparams=%s\n", w->type ? w->type : "",
		 w->duration_s, w->warmup_s,
		 w->params ? json_object_to_json_string_ext(w->params, JSON_C_TO_STRING_PLAIN) : "{}");
	{
		/* runs sized by work spread otherwise than timed runs (docs/qemu-icount.md) */
		struct job_work work;

		job_spec_work(w, 1, &work);
		if (work.ops)
			buf_addf(&b, "work=%lld+%lld seed=%lld\n", (long long)work.warmup_ops, (long long)work.ops,
				 (long long)work.seed);
	}
	sha256_hex(b.buf, b.len, hex);
	memcpy(out, hex, CALIB_WL_KEY_LEN);
	out[CALIB_WL_KEY_LEN] = 0;
	buf_release(&b);
}

void calib_row_release(struct calib_row *r)
{
	free(r->instrument);
	free(r->machine);
	free(r->clock);
	free(r->workload);
	free(r->wl_key);
	free(r->metric);
	free(r->jobs);
	memset(r, 0, sizeof(*r));
}

void calib_rows_free(struct calib_row *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		calib_row_release(&v[i]);
	free(v);
}

#define CALIB_COLS "id, instrument, machine, clock, workload, wl_key, metric, boot_var, boot_df, boots, aa_boots," \
	" runs_per_boot, run_var, run_df, jobs, created, updated"

static char *col_dup(struct db_stmt *st, int i)
{
	return db_col_null(st, i) ? NULL : xstrdup(db_col_text(st, i));
}

static void read_row(struct db_stmt *st, struct calib_row *r)
{
	r->id = db_col_int64(st, 0);
	r->instrument = col_dup(st, 1);
	r->machine = col_dup(st, 2);
	r->clock = col_dup(st, 3);
	r->workload = col_dup(st, 4);
	r->wl_key = col_dup(st, 5);
	r->metric = col_dup(st, 6);
	r->boot_var = db_col_double(st, 7);
	r->boot_df = db_col_double(st, 8);
	r->boots = db_col_int64(st, 9);
	r->aa_boots = db_col_int64(st, 10);
	r->runs_per_boot = db_col_double(st, 11);
	r->run_var = db_col_null(st, 12) ? NAN : db_col_double(st, 12);
	r->run_df = db_col_null(st, 13) ? NAN : db_col_double(st, 13);
	r->jobs = col_dup(st, 14);
	r->created = db_col_double(st, 15);
	r->updated = db_col_double(st, 16);
}

int calib_get(struct db *db, const char *instrument, const char *workload, const char *wl_key, const char *metric,
	      struct calib_row *r)
{
	struct db_stmt *st = db_prepare(db, "SELECT " CALIB_COLS " FROM calibrations WHERE instrument = ? AND workload = ?"
					" AND wl_key = ? AND metric = ?", "ssss", instrument, workload, wl_key, metric);
	int rc;

	memset(r, 0, sizeof(*r));
	if (!st)
		return -1;
	rc = db_step(st);
	if (rc == DB_ROW)
		read_row(st, r);
	db_finalize(st);
	return rc == DB_ROW ? 1 : rc == DB_DONE ? 0 : -1;
}

int calib_put(struct db *db, const struct calib_row *r)
{
	struct db_stmt *st = db_prepare(db,
		"INSERT INTO calibrations (instrument, machine, clock, workload, wl_key, metric, boot_var, boot_df, boots,"
		" aa_boots, runs_per_boot, run_var, run_df, jobs, created, updated)"
		" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
		" ON CONFLICT (instrument, workload, wl_key, metric) DO UPDATE SET boot_var = excluded.boot_var,"
		" boot_df = excluded.boot_df, boots = excluded.boots, aa_boots = excluded.aa_boots,"
		" runs_per_boot = excluded.runs_per_boot, run_var = excluded.run_var, run_df = excluded.run_df,"
		" jobs = excluded.jobs, updated = excluded.updated",
		"ssssssddiid", r->instrument, r->machine, r->clock, r->workload, r->wl_key, r->metric, r->boot_var,
		r->boot_df, r->boots, r->aa_boots, r->runs_per_boot);
	int rc;

	if (!st)
		return -1;
	if (isnan(r->run_var) || isnan(r->run_df)) {
		db_bind_null(st, 12);
		db_bind_null(st, 13);
	} else {
		db_bind_double(st, 12, r->run_var);
		db_bind_double(st, 13, r->run_df);
	}
	db_bind_text(st, 14, r->jobs ? r->jobs : "");
	db_bind_double(st, 15, r->created);
	db_bind_double(st, 16, r->updated);
	rc = db_step(st);
	db_finalize(st);
	return rc == DB_DONE ? 0 : -1;
}

int calib_list(struct db *db, struct calib_row **out, size_t *n)
{
	struct db_stmt *st = db_prepare(db, "SELECT " CALIB_COLS " FROM calibrations"
					" ORDER BY machine, clock, instrument, workload, metric", "");
	size_t alloc = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if (!st)
		return -1;
	while ((rc = db_step(st)) == DB_ROW) {
		if (*n == alloc) {
			alloc = alloc ? 2 * alloc : 16;
			*out = xrealloc(*out, alloc * sizeof(**out));
		}
		memset(&(*out)[*n], 0, sizeof(**out));
		read_row(st, &(*out)[(*n)++]);
	}
	db_finalize(st);
	return rc == DB_DONE ? 0 : -1;
}

int calib_delete(struct db *db, const char *machine, const char *workload, int64_t *n)
{
	*n = 0;
	if (db_run(db, "DELETE FROM calibrations WHERE (CAST(?1 AS TEXT) IS NULL OR machine = ?1)"
		   " AND (CAST(?2 AS TEXT) IS NULL OR workload = ?2)", "ss", machine, workload))
		return -1;
	*n = db_changes(db);
	return 0;
}

int calib_job_boots_each(struct db *db, int64_t job_id, void (*fn)(const struct calib_boot *b, void *data),
			 void *data)
{
	struct db_stmt *st = db_prepare(db, "SELECT b.id, b.seq, b.side, b.kernel_id, b.machine, b.clock, b.sysinfo,"
					" b.started FROM boots b WHERE b.job_id = ? ORDER BY b.seq", "i", job_id);
	int rc;

	if (!st)
		return -1;
	while ((rc = db_step(st)) == DB_ROW) {
		struct calib_boot b;

		b.id = db_col_int64(st, 0);
		b.seq = db_col_int(st, 1);
		b.side = db_col_null(st, 2) ? NULL : db_col_text(st, 2);
		b.kernel_id = db_col_null(st, 3) ? 0 : db_col_int64(st, 3);
		b.machine = db_col_null(st, 4) ? NULL : db_col_text(st, 4);
		b.clock = db_col_null(st, 5) ? NULL : db_col_text(st, 5);
		b.sysinfo = db_col_null(st, 6) ? NULL : db_col_text(st, 6);
		b.started = db_col_null(st, 7) ? NAN : db_col_double(st, 7);
		fn(&b, data);
	}
	db_finalize(st);
	return rc == DB_DONE ? 0 : -1;
}

int calib_job_runs_each(struct db *db, int64_t job_id, int warmup,
			void (*fn)(const struct calib_run_value *v, void *data), void *data)
{
	struct db_stmt *st = db_prepare(db, "SELECT r.boot_id, r.workload, m.name, m.unit, m.value"
					" FROM runs r JOIN metrics m ON m.run_id = r.id"
					" WHERE r.job_id = ? AND r.boot_id IS NOT NULL AND " RESULT_MEASURED_SQL
					" AND r.seq >= ? ORDER BY r.workload, m.name, r.boot_id, r.seq",
					"ii", job_id, (int64_t)warmup);
	int rc;

	if (!st)
		return -1;
	while ((rc = db_step(st)) == DB_ROW) {
		struct calib_run_value v;

		v.boot_id = db_col_int64(st, 0);
		v.workload = db_col_text(st, 1);
		v.metric = db_col_text(st, 2);
		v.unit = db_col_null(st, 3) ? NULL : db_col_text(st, 3);
		v.value = db_col_double(st, 4);
		fn(&v, data);
	}
	db_finalize(st);
	return rc == DB_DONE ? 0 : -1;
}

int calib_machine_last_boot(struct db *db, const char *machine, char **clock, char **sysinfo, double *started)
{
	struct db_stmt *st = db_prepare(db, "SELECT b.clock, b.sysinfo, b.started FROM boots b WHERE b.machine = ?"
					" AND b.sysinfo IS NOT NULL ORDER BY b.id DESC LIMIT 1", "s", machine);
	int rc;

	*clock = *sysinfo = NULL;
	*started = NAN;
	if (!st)
		return -1;
	rc = db_step(st);
	if (rc == DB_ROW) {
		*clock = col_dup(st, 0);
		*sysinfo = col_dup(st, 1);
		*started = db_col_null(st, 2) ? NAN : db_col_double(st, 2);
	}
	db_finalize(st);
	return rc == DB_ROW ? 1 : rc == DB_DONE ? 0 : -1;
}

/* ---- calibration files ------------------------------------------------------ */

#define CALIB_FILE_VERSION 1

struct json_object *calib_rows_json(const struct calib_row *rows, size_t n)
{
	struct json_object *doc = json_object_new_object(), *a = json_object_new_array();

	json_object_object_add(doc, "klab_calibrations", json_object_new_int(CALIB_FILE_VERSION));
	for (size_t i = 0; i < n; i++) {
		const struct calib_row *r = &rows[i];
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "instrument", json_str(r->instrument));
		json_object_object_add(o, "machine", json_str(r->machine));
		json_object_object_add(o, "clock", json_str(r->clock));
		json_object_object_add(o, "workload", json_str(r->workload));
		json_object_object_add(o, "wl_key", json_str(r->wl_key));
		json_object_object_add(o, "metric", json_str(r->metric));
		json_object_object_add(o, "boot_var", json_object_new_double(r->boot_var));
		json_object_object_add(o, "boot_df", json_object_new_double(r->boot_df));
		json_object_object_add(o, "boots", json_object_new_int64(r->boots));
		json_object_object_add(o, "aa_boots", json_object_new_int64(r->aa_boots));
		json_object_object_add(o, "runs_per_boot", json_object_new_double(r->runs_per_boot));
		json_object_object_add(o, "run_var", isnan(r->run_var) ? NULL : json_object_new_double(r->run_var));
		json_object_object_add(o, "run_df", isnan(r->run_df) ? NULL : json_object_new_double(r->run_df));
		json_object_object_add(o, "created", json_object_new_double(r->created));
		json_object_object_add(o, "updated", json_object_new_double(r->updated));
		json_object_array_add(a, o);
	}
	json_object_object_add(doc, "rows", a);
	return doc;
}

/* A number of row O: 0, or -1 (logged). NULL_OK: a JSON null (or none) is NaN. */
static int row_num(struct json_object *o, const char *key, const char *what, int null_ok, double *out)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null)) {
		if (null_ok) {
			*out = NAN;
			return 0;
		}
		return error("%s: no '%s'", what, key);
	}
	if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
		return error("%s: '%s' is not a number", what, key);
	*out = json_object_get_double(v);
	if (!isfinite(*out) || *out < 0)
		return error("%s: '%s' is not a number >= 0", what, key);
	return 0;
}

int calib_rows_from_json(struct json_object *doc, const char *what, struct calib_row **out, size_t *n)
{
	static const char *const strs[] = { "instrument", "machine", "clock", "workload", "wl_key", "metric" };
	struct json_object *a;
	int64_t version = 0;
	size_t len;

	*out = NULL;
	*n = 0;
	if (!json_object_is_type(doc, json_type_object) ||
	    json_get_int(doc, "klab_calibrations", &version, what) || version != CALIB_FILE_VERSION)
		return error("%s: not a klab calibration file of version %d (\"klab_calibrations\": %d)", what,
			     CALIB_FILE_VERSION, CALIB_FILE_VERSION);
	if (json_get_array(doc, "rows", &a, what))
		return error("%s: no \"rows\" array", what);
	len = json_object_array_length(a);
	*out = xcalloc(len ? len : 1, sizeof(**out));
	for (size_t i = 0; i < len; i++) {
		struct json_object *o = json_object_array_get_idx(a, i);
		struct calib_row *r = &(*out)[i];
		char *rw = xasprintf("%s: row %zu", what, i + 1);
		const char *v[6];
		double boots, aa;
		int bad = !json_object_is_type(o, json_type_object);

		for (size_t k = 0; !bad && k < ARRAY_SIZE(strs); k++)
			if (json_get_str(o, strs[k], &v[k], rw) || !*v[k])
				bad = !!error("%s: no '%s' string", rw, strs[k]);
		if (!bad) {
			r->instrument = xstrdup(v[0]);
			r->machine = xstrdup(v[1]);
			r->clock = xstrdup(v[2]);
			r->workload = xstrdup(v[3]);
			r->wl_key = xstrdup(v[4]);
			r->metric = xstrdup(v[5]);
			r->jobs = xstrdup("");
			*n = i + 1;
		}
		bad = bad || row_num(o, "boot_var", rw, 0, &r->boot_var) || row_num(o, "boot_df", rw, 0, &r->boot_df) ||
		      row_num(o, "boots", rw, 0, &boots) || row_num(o, "aa_boots", rw, 0, &aa) ||
		      row_num(o, "runs_per_boot", rw, 0, &r->runs_per_boot) ||
		      row_num(o, "run_var", rw, 1, &r->run_var) || row_num(o, "run_df", rw, 1, &r->run_df) ||
		      row_num(o, "created", rw, 0, &r->created) || row_num(o, "updated", rw, 0, &r->updated);
		free(rw);
		if (bad) {
			calib_rows_free(*out, *n);
			*out = NULL;
			*n = 0;
			return -1;
		}
		r->boots = (int64_t)boots;
		r->aa_boots = (int64_t)aa;
	}
	*n = len;
	return 0;
}
