/*
 * ksample.c: the per-kernel samples of boot values (migration 0016): a
 * kernel's boot values of a metric, a CPU share, a profile symbol or a
 * clock, a row per 1024 boot keys, so that a comparison of two kernels
 * reads tens of rows a metric instead of a row per boot.
 *
 * A row's data is base64 of its entries in key order: the key's distance
 * from the previous key (from 0 for the first), zigzag varint, then the
 * entry's values as little-endian IEEE 754 doubles.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "store/ksample.h"
#include "log.h"
#include "store/result.h"
#include "util.h"

int ksample_width(int kind)
{
	return kind == KSAMPLE_PROFILE ? 2 : 1;
}

void ksample_init(struct ksample *s, int w)
{
	memset(s, 0, sizeof(*s));
	s->w = w;
}

void ksample_free(struct ksample *s)
{
	free(s->key);
	free(s->v);
	ksample_init(s, s->w);
}

static void grow(struct ksample *s, size_t want)
{
	if (want <= s->alloc)
		return;
	s->alloc = s->alloc * 2 > want ? s->alloc * 2 : want < 16 ? 16 : want;
	s->key = xrealloc(s->key, s->alloc * sizeof(*s->key));
	s->v = xrealloc(s->v, s->alloc * (size_t)s->w * sizeof(*s->v));
}

void ksample_push(struct ksample *s, int64_t key, const double *v)
{
	grow(s, s->n + 1);
	s->key[s->n] = key;
	memcpy(&s->v[s->n * (size_t)s->w], v, (size_t)s->w * sizeof(*v));
	s->n++;
}

void ksample_encode(const struct ksample *s, struct buf *out)
{
	unsigned char *raw = xmalloc(s->n * (10 + 8 * (size_t)s->w) + 1), *p = raw;
	int64_t prev = 0;

	for (size_t i = 0; i < s->n; i++) {
		uint64_t d = (uint64_t)s->key[i] - (uint64_t)prev;
		uint64_t z = (d << 1) ^ (uint64_t)((int64_t)d >> 63);

		prev = s->key[i];
		while (z >= 0x80) {
			*p++ = (unsigned char)(z | 0x80);
			z >>= 7;
		}
		*p++ = (unsigned char)z;
		for (int k = 0; k < s->w; k++) {
			uint64_t bits;

			memcpy(&bits, &s->v[i * (size_t)s->w + (size_t)k], sizeof(bits));
			for (int b = 0; b < 8; b++)
				*p++ = (unsigned char)(bits >> (8 * b));
		}
	}
	base64_encode(out, raw, (size_t)(p - raw), 1);
	free(raw);
}

int ksample_decode(struct ksample *s, const char *text, size_t len)
{
	struct buf raw = BUF_INIT;
	const unsigned char *p, *end;
	int64_t prev = 0;
	int ret = 0;

	if (base64_decode(&raw, text, len, 1)) {
		buf_release(&raw);
		return -1;
	}
	p = (const unsigned char *)raw.buf;
	end = p + raw.len;
	while (p < end) {
		uint64_t z = 0;
		double v[2];
		int shift = 0;

		do {
			if (p == end || shift > 63) {
				ret = -1;
				goto out;
			}
			z |= (uint64_t)(*p & 0x7f) << shift;
			shift += 7;
		} while (*p++ & 0x80);
		if (end - p < 8 * s->w) {
			ret = -1;
			goto out;
		}
		prev = (int64_t)((uint64_t)prev + ((z >> 1) ^ (uint64_t)-(int64_t)(z & 1)));
		for (int k = 0; k < s->w; k++) {
			uint64_t bits = 0;

			for (int b = 0; b < 8; b++)
				bits |= (uint64_t)p[b] << (8 * b);
			memcpy(&v[k], &bits, sizeof(bits));
			p += 8;
		}
		ksample_push(s, prev, v);
	}
out:
	buf_release(&raw);
	return ret;
}

int ksample_ready(struct db *db)
{
	int64_t ready = 0;
	int r = db_get_int(db, &ready, "SELECT ready FROM summary_state WHERE name = 'kernel_samples'", "");

	return r < 0 ? -1 : r > 0 && ready;
}

static int64_t chunk_of(int64_t bkey)
{
	return bkey >= 0 ? bkey / KSAMPLE_CHUNK : -((-bkey + KSAMPLE_CHUNK - 1) / KSAMPLE_CHUNK);
}

const char *const ksample_cpu_fields[5] = { "usr", "sys", "irq", "soft", "idle" };

char *ksample_cpu_name(int64_t cpu, const char *field)
{
	return cpu < 0 ? xasprintf("cpuall.%s", field) : xasprintf("cpu%lld.%s", (long long)cpu, field);
}

/* ---- a boot's entries, made again as its run is stored ------------------- */

/* A value of the boot: its kind, name, unit and better, and values. */
struct bentry {
	int kind;
	char *name, *unit, *better;
	double v[2];
	int used;
};

struct bentries {
	struct bentry *e;
	size_t n, alloc;
	int64_t kernel;		/* the boot's kernel id in the boot tables, 0 if none */
};

static void bentry_add(struct bentries *b, int kind, char *name, char *unit, char *better, double v0, double v1)
{
	if (b->n == b->alloc) {
		b->alloc = b->alloc ? 2 * b->alloc : 64;
		b->e = xrealloc(b->e, b->alloc * sizeof(*b->e));
	}
	b->e[b->n++] = (struct bentry){ kind, name, unit, better, { v0, v1 }, 0 };
}

static void bentries_free(struct bentries *b)
{
	for (size_t i = 0; i < b->n; i++) {
		free(b->e[i].name);
		free(b->e[i].unit);
		free(b->e[i].better);
	}
	free(b->e);
	memset(b, 0, sizeof(*b));
}

/* Kernel id (column 0) of a boot table row: the boot's kernel (the same on all its rows). */
static void note_kernel(struct bentries *b, struct db_stmt *st)
{
	if (!db_col_null(st, 0) && db_col_int64(st, 0) > b->kernel)
		b->kernel = db_col_int64(st, 0);
}

static int boot_entries(struct db *db, int64_t job_id, int64_t bkey, const char *workload, struct bentries *b)
{
	struct db_stmt *st;
	char *sql;
	int rc;

	st = db_prepare(db, "SELECT kernel_id, name, unit, better, value FROM boot_metrics WHERE bkey = ?1 AND workload = ?2",
			"is", bkey, workload);
	while (st && (rc = db_step(st)) == DB_ROW) {
		note_kernel(b, st);
		bentry_add(b, KSAMPLE_METRIC, db_col_strdup(st, 1), db_col_strdup(st, 2), db_col_strdup(st, 3),
			   db_col_double(st, 4), 0);
	}
	if (!st || (db_finalize(st), rc != DB_DONE))
		return -1;
	st = db_prepare(db, "SELECT kernel_id, cpu, usr, sys, irq, soft, idle FROM boot_cpus WHERE bkey = ?1 AND workload = ?2",
			"is", bkey, workload);
	while (st && (rc = db_step(st)) == DB_ROW) {
		note_kernel(b, st);
		for (size_t f = 0; f < ARRAY_SIZE(ksample_cpu_fields); f++)
			if (!db_col_null(st, 2 + (int)f))
				bentry_add(b, KSAMPLE_CPU, ksample_cpu_name(db_col_int64(st, 1), ksample_cpu_fields[f]), xstrdup("%"),
					   xstrdup("none"), db_col_double(st, 2 + (int)f), 0);
	}
	if (!st || (db_finalize(st), rc != DB_DONE))
		return -1;
	st = db_prepare(db, "SELECT kernel_id, symbol, dso, pct_sum, runs FROM boot_profile WHERE bkey = ?1 AND workload = ?2",
			"is", bkey, workload);
	while (st && (rc = db_step(st)) == DB_ROW) {
		note_kernel(b, st);
		bentry_add(b, KSAMPLE_PROFILE, db_col_strdup(st, 1), db_col_strdup(st, 2), NULL,
			   db_col_double(st, 3), db_col_double(st, 4));
	}
	if (!st || (db_finalize(st), rc != DB_DONE))
		return -1;
	sql = xasprintf("SELECT MAX(r.kernel_id), CASE WHEN r.clock = 'icount' THEN 'icount' ELSE 'real' END AS c,"
			" COUNT(*) FROM runs r JOIN jobs j ON j.id = r.job_id WHERE %s"
			" AND " RESULT_MEASURED_SQL " AND r.seq >= " RESULT_JOB_WARMUP_SQL " GROUP BY c", RESULT_BOOT_RUNS_SQL(bkey));
	st = db_prepare(db, sql, "isi", bkey, workload, job_id);
	free(sql);
	while (st && (rc = db_step(st)) == DB_ROW) {
		note_kernel(b, st);
		bentry_add(b, KSAMPLE_CLOCK, db_col_strdup(st, 1), NULL, NULL, db_col_double(st, 2), 0);
	}
	if (!st || (db_finalize(st), rc != DB_DONE))
		return -1;
	return 0;
}

/* A kernel_samples row of one chunk, as read and as it is to be written. */
struct krow {
	int kind;
	char *name, *unit, *better, *data;	/* data: as read (NULL: a new row) */
	struct ksample s;
};

static void krows_free(struct krow *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(r[i].name);
		free(r[i].unit);
		free(r[i].better);
		free(r[i].data);
		ksample_free(&r[i].s);
	}
	free(r);
}

/* The index of KEY in S, or of where it goes (*found 0). */
static size_t find_key(const struct ksample *s, int64_t key, int *found)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->key[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < s->n && s->key[lo] == key;
	return lo;
}

/* Put KEY's values (v, or none: remove it) in S; 1 when it became the first entry. */
static int set_key(struct ksample *s, int64_t key, const double *v)
{
	int found;
	size_t i = find_key(s, key, &found), w = (size_t)s->w;

	if (!v) {
		if (found) {
			memmove(&s->key[i], &s->key[i + 1], (s->n - i - 1) * sizeof(*s->key));
			memmove(&s->v[i * w], &s->v[(i + 1) * w], (s->n - i - 1) * w * sizeof(*s->v));
			s->n--;
		}
		return 0;
	}
	if (!found) {
		grow(s, s->n + 1);
		memmove(&s->key[i + 1], &s->key[i], (s->n - i) * sizeof(*s->key));
		memmove(&s->v[(i + 1) * w], &s->v[i * w], (s->n - i) * w * sizeof(*s->v));
		s->n++;
		s->key[i] = key;
	}
	memcpy(&s->v[i * w], v, w * sizeof(*v));
	return i == 0;
}

/* Write the rows of one chunk of KERNEL, WORKLOAD whose data changed. */
static int write_rows(struct db *db, int64_t kernel, const char *workload, int64_t chunk, struct krow *r, size_t n)
{
	struct buf data = BUF_INIT;
	int ret = 0;

	for (size_t i = 0; i < n && !ret; i++) {
		buf_reset(&data);
		ksample_encode(&r[i].s, &data);
		if (r[i].data && !strcmp(r[i].data, data.buf))
			continue;
		if (!r[i].s.n)
			ret = db_run(db, "DELETE FROM kernel_samples WHERE kernel_id = ? AND kind = ? AND workload = ?"
				     " AND name = ? AND chunk = ?", "iiss" "i", kernel, (int64_t)r[i].kind, workload,
				     r[i].name, chunk);
		else if (r[i].data)
			ret = db_run(db, "UPDATE kernel_samples SET unit = ?, better = ?, n = ?, data = ?"
				     " WHERE kernel_id = ? AND kind = ? AND workload = ? AND name = ? AND chunk = ?",
				     "ssis" "iiss" "i", r[i].unit, r[i].better, (int64_t)r[i].s.n, data.buf, kernel,
				     (int64_t)r[i].kind, workload, r[i].name, chunk);
		else
			ret = db_run(db, "INSERT INTO kernel_samples (kernel_id, kind, workload, name, chunk, unit, better, n, data)"
				     " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", "iiss" "issis", kernel, (int64_t)r[i].kind,
				     workload, r[i].name, chunk, r[i].unit, r[i].better, (int64_t)r[i].s.n, data.buf);
	}
	buf_release(&data);
	return ret;
}

/* Put the boot's entries B (NULL: none) in KERNEL's rows of BKEY's chunk, and take BKEY out of the others. */
static int update_kernel(struct db *db, int64_t kernel, int64_t bkey, const char *workload, struct bentries *b)
{
	int64_t chunk = chunk_of(bkey);
	struct krow *r = NULL;
	size_t n = 0, alloc = 0;
	struct db_stmt *st;
	int rc, ret = -1;

	st = db_prepare(db, "SELECT kind, name, unit, better, data FROM kernel_samples"
			" WHERE kernel_id = ?1 AND workload = ?2 AND chunk = ?3", "isi", kernel, workload, chunk);
	if (!st)
		return -1;
	while ((rc = db_step(st)) == DB_ROW) {
		const char *data = db_col_text(st, 4);

		if (n == alloc) {
			alloc = alloc ? 2 * alloc : 64;
			r = xrealloc(r, alloc * sizeof(*r));
		}
		memset(&r[n], 0, sizeof(r[n]));
		r[n].kind = db_col_int(st, 0);
		r[n].name = db_col_strdup(st, 1);
		r[n].unit = db_col_strdup(st, 2);
		r[n].better = db_col_strdup(st, 3);
		r[n].data = xstrdup(data ? data : "");
		ksample_init(&r[n].s, ksample_width(r[n].kind));
		if (r[n].kind < 0 || r[n].kind >= KSAMPLE_KINDS || ksample_decode(&r[n].s, r[n].data, strlen(r[n].data))) {
			/* the run is stored all the same; comparisons read the boot summaries until a rebuild */
			warn("database '%s': the kernel_samples row of kernel %lld, %s, %s is not a sample: kernel"
			     " comparisons read the per-boot summaries until klab db rebuild-summaries --kernel-samples",
			     db_file(db), (long long)kernel, workload, r[n].name ? r[n].name : "?");
			n++;
			db_finalize(st);
			ret = db_run(db, "UPDATE summary_state SET ready = 0 WHERE name = 'kernel_samples'", "");
			goto out;
		}
		n++;
	}
	db_finalize(st);
	if (rc != DB_DONE)
		goto out;
	for (size_t i = 0; i < n; i++) {
		struct bentry *e = NULL;

		for (size_t k = 0; b && k < b->n && !e; k++)
			if (!b->e[k].used && b->e[k].kind == r[i].kind && !strcmp(b->e[k].name, r[i].name))
				e = &b->e[k];
		if (e)
			e->used = 1;
		if (set_key(&r[i].s, bkey, e ? e->v : NULL)) {
			free(r[i].unit);
			free(r[i].better);
			r[i].unit = e->unit ? xstrdup(e->unit) : NULL;
			r[i].better = e->better ? xstrdup(e->better) : NULL;
		}
	}
	for (size_t k = 0; b && k < b->n; k++) {
		struct bentry *e = &b->e[k];

		if (e->used)
			continue;
		if (n == alloc) {
			alloc = alloc ? 2 * alloc : 64;
			r = xrealloc(r, alloc * sizeof(*r));
		}
		memset(&r[n], 0, sizeof(r[n]));
		r[n].kind = e->kind;
		r[n].name = xstrdup(e->name);
		r[n].unit = e->unit ? xstrdup(e->unit) : NULL;
		r[n].better = e->better ? xstrdup(e->better) : NULL;
		ksample_init(&r[n].s, ksample_width(e->kind));
		ksample_push(&r[n].s, bkey, e->v);
		n++;
	}
	ret = write_rows(db, kernel, workload, chunk, r, n);
out:
	krows_free(r, n);
	return ret;
}

int ksample_update_boot(struct db *db, int64_t job_id, int64_t old_kernel, int64_t bkey, const char *workload)
{
	struct bentries b = { 0 };
	int ret = -1;

	if (boot_entries(db, job_id, bkey, workload, &b))
		goto out;
	ret = 0;
	if (b.kernel)
		ret = update_kernel(db, b.kernel, bkey, workload, &b);
	if (!ret && old_kernel && old_kernel != b.kernel)
		ret = update_kernel(db, old_kernel, bkey, workload, NULL);
out:
	bentries_free(&b);
	return ret;
}

/* ---- every row, made again ------------------------------------------------ */

/* The row being made: one kernel, kind, workload, name and chunk. */
struct builder {
	struct db *db;
	int64_t kernel, chunk;
	int kind;
	char *workload, *name, *unit, *better;
	struct ksample s;
	struct buf data;
	size_t rows;
};

static int flush(struct builder *b)
{
	int ret = 0;

	if (b->s.n) {
		buf_reset(&b->data);
		ksample_encode(&b->s, &b->data);
		ret = db_run(b->db, "INSERT INTO kernel_samples (kernel_id, kind, workload, name, chunk, unit, better, n, data)"
			     " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", "iiss" "issis", b->kernel, (int64_t)b->kind,
			     b->workload, b->name, b->chunk, b->unit, b->better, (int64_t)b->s.n, b->data.buf);
		b->rows++;
	}
	b->s.n = 0;
	return ret;
}

/*
 * Rows of (kernel_id, workload, name, unit, better, bkey, v0[, v1]) in
 * the order of kernel_id, workload, name, bkey, into rows of KIND.
 */
static int build_kind(struct builder *b, int kind, const char *sql)
{
	struct db_stmt *st = db_prepare(b->db, sql, "");
	int rc, w = ksample_width(kind);

	if (!st)
		return -1;
	ksample_free(&b->s);
	ksample_init(&b->s, w);
	b->kind = kind;
	while ((rc = db_step(st)) == DB_ROW) {
		int64_t kernel = db_col_int64(st, 0), bkey = db_col_int64(st, 5);
		const char *workload = db_col_text(st, 1), *name = db_col_text(st, 2);
		double v[2] = { db_col_double(st, 6), w > 1 ? db_col_double(st, 7) : 0 };

		if (!workload || !name)
			continue;
		if (!b->s.n || kernel != b->kernel || chunk_of(bkey) != b->chunk || strcmp(workload, b->workload) ||
		    strcmp(name, b->name)) {
			if (flush(b))
				break;
			b->kernel = kernel;
			b->chunk = chunk_of(bkey);
			free(b->workload);
			free(b->name);
			free(b->unit);
			free(b->better);
			b->workload = xstrdup(workload);
			b->name = xstrdup(name);
			b->unit = db_col_strdup(st, 3);
			b->better = db_col_strdup(st, 4);
		}
		ksample_push(&b->s, bkey, v);
	}
	db_finalize(st);
	if (rc != DB_DONE && rc != DB_ROW)
		return -1;
	return rc == DB_ROW ? -1 : flush(b);
}

#define CPU_FIELD(f) \
	"SELECT kernel_id, workload, CASE WHEN cpu < 0 THEN 'cpuall' ELSE 'cpu' || CAST(cpu AS TEXT) END || '." f "'" \
	" AS name, '%', 'none', bkey, " f " FROM boot_cpus WHERE kernel_id IS NOT NULL AND " f " IS NOT NULL"

int ksample_rebuild(struct db *db)
{
	struct builder b = { .db = db };
	int ret;

	ksample_init(&b.s, 1);
	ret = db_run(db, "DELETE FROM kernel_samples", "") ||
	      build_kind(&b, KSAMPLE_METRIC, "SELECT kernel_id, workload, name, unit, better, bkey, value FROM boot_metrics"
			 " WHERE kernel_id IS NOT NULL ORDER BY kernel_id, workload, name, bkey") ||
	      build_kind(&b, KSAMPLE_CPU, "SELECT * FROM (" CPU_FIELD("usr") " UNION ALL " CPU_FIELD("sys")
			 " UNION ALL " CPU_FIELD("irq") " UNION ALL " CPU_FIELD("soft") " UNION ALL " CPU_FIELD("idle")
			 ") x ORDER BY 1, 2, 3, 6") ||
	      build_kind(&b, KSAMPLE_PROFILE, "SELECT kernel_id, workload, symbol, dso, NULL, bkey, pct_sum, runs"
			 " FROM boot_profile WHERE kernel_id IS NOT NULL ORDER BY kernel_id, workload, symbol, bkey") ||
	      build_kind(&b, KSAMPLE_CLOCK, "SELECT MAX(r.kernel_id) AS k, r.workload,"
			 " CASE WHEN r.clock = 'icount' THEN 'icount' ELSE 'real' END AS c, NULL, NULL,"
			 " COALESCE(r.boot_id, -r.id) AS bk, COUNT(*)"
			 " FROM runs r JOIN jobs j ON j.id = r.job_id"
			 " WHERE " RESULT_MEASURED_SQL " AND r.seq >= " RESULT_JOB_WARMUP_SQL
			 " GROUP BY r.job_id, bk, r.workload, c HAVING MAX(r.kernel_id) IS NOT NULL"
			 " ORDER BY k, r.workload, c, bk") ||
	      db_run(db, "UPDATE summary_state SET ready = 1 WHERE name = 'kernel_samples'", "");
	ksample_free(&b.s);
	free(b.workload);
	free(b.name);
	free(b.unit);
	free(b.better);
	buf_release(&b.data);
	if (!ret)
		debug("database: %zu rows of kernel samples made", b.rows);
	return ret ? -1 : 0;
}

int ksample_row_counts(struct db *db, int64_t *boots, int64_t *samples)
{
	if (db_get_int(db, boots, "SELECT count(*) FROM boot_metrics", "") < 0 ||
	    db_get_int(db, samples, "SELECT count(*) FROM kernel_samples", "") < 0)
		return -1;
	return 0;
}
