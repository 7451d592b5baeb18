/*
 * store/side.c: a comparison side's boot values: from the per-boot
 * summaries (migration 0014), from the runs when a warm-up count is given,
 * and for two kernels from the per-kernel samples (migration 0016,
 * ksample.c) and the boots without a kernel id beside them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "store/ksample.h"
#include "store/result.h"
#include "store/side.h"
#include "util.h"

void groups_free(struct groups *gs)
{
	for (size_t i = 0; i < gs->n; i++) {
		free(gs->g[i].workload);
		free(gs->g[i].metric);
		free(gs->g[i].unit);
		free(gs->g[i].better);
		free(gs->g[i].v);
	}
	free(gs->g);
	memset(gs, 0, sizeof(*gs));
}

static void group_push(struct group *g, double v)
{
	if (g->n == g->alloc) {
		g->alloc = g->alloc ? 2 * g->alloc : 8;
		g->v = xrealloc(g->v, g->alloc * sizeof(*g->v));
	}
	g->v[g->n++] = v;
}

/* A new empty group of GS for WORKLOAD/METRIC; UNIT and BETTER (malloc'd or NULL) become its own. */
static struct group *group_new(struct groups *gs, const char *workload, const char *metric, char *unit, char *better)
{
	struct group *g;

	if (gs->n == gs->alloc) {
		gs->alloc = gs->alloc ? 2 * gs->alloc : 16;
		gs->g = xrealloc(gs->g, gs->alloc * sizeof(*gs->g));
	}
	g = &gs->g[gs->n++];
	memset(g, 0, sizeof(*g));
	g->workload = xstrdup(workload);
	g->metric = xstrdup(metric);
	g->unit = unit;
	g->better = better;
	return g;
}

/*
 * Read rows (workload, metric, unit, better, value) ordered by workload and
 * metric into groups; consecutive rows of one key form one group.
 */
static int load_groups(struct db *db, struct db_stmt *st, struct groups *gs)
{
	int rc;

	if (!st)
		return -1;
	while ((rc = db_step(st)) == DB_ROW) {
		const char *w = db_col_text(st, 0), *m = db_col_text(st, 1);
		struct group *g = gs->n ? &gs->g[gs->n - 1] : NULL;

		if (!w || !m || db_col_null(st, 4))
			continue;
		if (!g || strcmp(g->workload, w) || strcmp(g->metric, m)) {
			g = group_new(gs, w, m, db_col_strdup(st, 2), db_col_strdup(st, 3));
		}
		group_push(g, db_col_double(st, 4));
	}
	db_finalize(st);
	if (rc != DB_DONE)
		return error("database '%s': cannot read results: %s", db_file(db), db_errmsg(db));
	return 0;
}

int key_cmp(const struct group *a, const struct group *b)
{
	int c = strcmp(a->workload, b->workload);

	return c ? c : strcmp(a->metric, b->metric);
}

/*
 * The boots of TABLE (b) without a kernel id that the name ?1 finds: a
 * run's kernel label, a job side's label: SELECT COLS of them. A boot with
 * a kernel id is found by its kernel alone (KERNEL_IDS); an index holds
 * just the boots without one.
 */
static char *nokernel_sql(const char *cols, const char *table)
{
	return xasprintf("SELECT %s FROM %s b WHERE b.kernel_id IS NULL AND b.kernel_label = ?1"
			 " UNION SELECT %s FROM %s b JOIN job_sides js ON js.job_id = b.job_id AND js.side = b.side"
			 " WHERE js.label = ?1 AND b.kernel_id IS NULL", cols, table, cols, table);
}

/*
 * SELECT COLS (of b, a row per boot) from the per-boot summary TABLE of
 * the side's boots (migration 0014; s->own_warmup). For a kernel: its
 * boots by kernel id, then those without one that its name finds
 * (nokernel_sql(), disjoint from the first), then RAW: the same columns
 * from the runs outside jobs, which the summaries do not hold
 * (r.kernel_label = ?1, their first ?3 runs left out). ?1..?3 bound as
 * side_prepare() binds them.
 */
static char *side_boots_sql(const struct side_sel *s, const char *cols, const char *table, const char *raw)
{
	char *nk, *sql;

	if (!s->kernel)
		return xasprintf("SELECT %s FROM %s b WHERE b.job_id = ?1 AND b.side = ?2 AND ?3 >= 0", cols, table);
	nk = nokernel_sql(cols, table);
	sql = xasprintf("SELECT %s FROM %s b WHERE b.kernel_id IN " KERNEL_IDS " UNION ALL SELECT * FROM (%s) nk"
			" UNION ALL %s", cols, table, nk, raw);
	free(nk);
	return sql;
}

/* Prepare PRE + the side's WHERE fragment + POST with the side's parameters bound. */
struct db_stmt *side_prepare(struct db *db, const char *pre, const char *post, const struct side_sel *s)
{
	char *sql = xasprintf("%s%s%s", pre, s->where, post);
	struct db_stmt *st;

	if (s->kernel)
		st = db_prepare(db, sql, "sni", s->kernel, (int64_t)s->warmup);
	else
		st = db_prepare(db, sql, "isi", s->job_id, s->side, (int64_t)s->warmup);
	free(sql);
	return st;
}

/*
 * side_prepare() of PRE + side_boots_sql(S, COLS, TABLE, RAW) + POST: a
 * query over the side's rows of a per-boot summary table.
 */
static struct db_stmt *boots_prepare(struct db *db, const struct side_sel *s, const char *cols, const char *table,
				     const char *raw, const char *pre, const char *post)
{
	char *sql = side_boots_sql(s, cols, table, raw);
	struct side_sel b = *s;
	struct db_stmt *st;

	b.where = sql;
	st = side_prepare(db, pre, post, &b);
	free(sql);
	return st;
}

int load_side_metrics(struct db *db, const struct side_sel *s, struct groups *gs)
{
	struct db_stmt *st;

	/* in the boot order (bkey) both ways, so that a side's values come in the same order */
	if (s->own_warmup) {
		st = boots_prepare(db, s, "b.workload, b.name, b.unit, b.better, b.value, b.bkey", "boot_metrics",
			"SELECT r.workload, m.name, MAX(m.unit), MAX(m.better), AVG(m.value), COALESCE(r.boot_id, -r.id)"
			" FROM runs r JOIN metrics m ON m.run_id = r.id" RAW_KERNEL_RUNS
			" GROUP BY r.workload, m.name, COALESCE(r.boot_id, -r.id)",
			"SELECT workload, name, unit, better, value FROM (", ") x ORDER BY workload, name, bkey");
	} else
		st = side_prepare(db,
			"SELECT r.workload, m.name, MAX(m.unit), MAX(m.better), AVG(m.value)"
			" FROM runs r JOIN metrics m ON m.run_id = r.id"
			" WHERE ",
			" AND " RESULT_MEASURED_SQL " AND r.seq >= ?3"
			" GROUP BY r.workload, m.name, COALESCE(r.boot_id, -r.id)"
			" ORDER BY r.workload, m.name, COALESCE(r.boot_id, -r.id)", s);
	return load_groups(db, st, gs);
}

/* Per-CPU shares as groups with metric "cpuN.FIELD" (unit "%"). */
int load_side_cpus(struct db *db, const struct side_sel *s, struct groups *gs)
{
	static const char *fields[] = { "usr", "sys", "irq", "soft", "idle" };
	struct db_stmt *st;
	int rc;

	if (s->own_warmup) {
		st = boots_prepare(db, s, "b.workload, b.cpu, b.bkey, b.usr, b.sys, b.irq, b.soft, b.idle", "boot_cpus",
			"SELECT r.workload, c.cpu, COALESCE(r.boot_id, -r.id),"
			" AVG(c.usr), AVG(c.sys), AVG(c.irq), AVG(c.soft), AVG(c.idle)"
			" FROM runs r JOIN cpu_stats c ON c.run_id = r.id" RAW_KERNEL_RUNS
			" GROUP BY r.workload, c.cpu, COALESCE(r.boot_id, -r.id)",
			"SELECT * FROM (", ") x ORDER BY 1, 2, 3");
	} else {
		st = side_prepare(db,
			"SELECT r.workload, c.cpu, COALESCE(r.boot_id, -r.id) AS bk,"
			" AVG(c.usr), AVG(c.sys), AVG(c.irq), AVG(c.soft), AVG(c.idle)"
			" FROM runs r JOIN cpu_stats c ON c.run_id = r.id"
			" WHERE ",
			" AND " RESULT_MEASURED_SQL " AND r.seq >= ?3"
			" GROUP BY r.workload, c.cpu, bk ORDER BY r.workload, c.cpu, bk", s);
	}

	if (!st)
		return -1;
	/*
	 * Rows come per (workload, cpu, boot); fan each out to five groups,
	 * found by a linear search within the current workload (few CPUs).
	 */
	while ((rc = db_step(st)) == DB_ROW) {
		const char *w = db_col_text(st, 0);
		int cpu = db_col_int(st, 1);

		if (!w)
			continue;
		for (size_t f = 0; f < ARRAY_SIZE(fields); f++) {
			char name[64];
			struct group *g = NULL;

			if (db_col_type(st, 3 + (int)f) == DB_NULL)
				continue;
			if (cpu < 0)
				snprintf(name, sizeof(name), "cpuall.%s", fields[f]);
			else
				snprintf(name, sizeof(name), "cpu%d.%s", cpu, fields[f]);
			for (size_t k = gs->n; k-- > 0;) {
				if (strcmp(gs->g[k].workload, w))
					break;
				if (!strcmp(gs->g[k].metric, name)) {
					g = &gs->g[k];
					break;
				}
			}
			if (!g)
				g = group_new(gs, w, name, xstrdup("%"), xstrdup("none"));
			group_push(g, db_col_double(st, 3 + (int)f));
		}
	}
	db_finalize(st);
	if (rc != DB_DONE)
		return error("database '%s': cannot read per-CPU results: %s", db_file(db), db_errmsg(db));
	return 0;
}

int load_side_profile(struct db *db, const struct side_sel *s, struct profrow **out, size_t *n)
{
	struct db_stmt *st;
	size_t alloc = 0;
	int rc;

	if (s->own_warmup) {
		/* a run outside jobs is a boot of its own: its symbols' shares, 1 run */
		st = boots_prepare(db, s, "b.workload, b.symbol, b.dso, b.pct_sum, b.runs, b.bkey", "boot_profile",
			"SELECT r.workload, p.symbol, MAX(p.dso), SUM(p.percent), 1, -r.id"
			" FROM runs r JOIN profile_rows p ON p.run_id = r.id" RAW_KERNEL_RUNS
			" GROUP BY r.workload, p.symbol, r.id",
			"WITH pb AS (",
			"), nr AS (SELECT workload, SUM(runs) AS n FROM (SELECT DISTINCT workload, bkey, runs FROM pb) d"
			" GROUP BY workload)"
			" SELECT pb.workload, pb.symbol, MAX(pb.dso), SUM(pb.pct_sum) / MAX(nr.n)"
			" FROM pb JOIN nr ON nr.workload = pb.workload"
			" GROUP BY pb.workload, pb.symbol ORDER BY pb.workload, pb.symbol");
	} else {
		st = side_prepare(db,
			"WITH pr AS (SELECT r.id, r.workload FROM runs r"
			"  WHERE ",
			" AND " RESULT_MEASURED_SQL " AND r.seq >= ?3"
			"  AND EXISTS (SELECT 1 FROM profile_rows p WHERE p.run_id = r.id)),"
			" nr AS (SELECT workload, COUNT(*) AS n FROM pr GROUP BY workload)"
			" SELECT pr.workload, p.symbol, MAX(p.dso), SUM(p.percent) / MAX(nr.n)"
			" FROM pr JOIN profile_rows p ON p.run_id = pr.id JOIN nr ON nr.workload = pr.workload"
			" GROUP BY pr.workload, p.symbol ORDER BY pr.workload, p.symbol", s);
	}

	*out = NULL;
	*n = 0;
	if (!st)
		return -1;
	while ((rc = db_step(st)) == DB_ROW) {
		if (!db_col_text(st, 0) || !db_col_text(st, 1))
			continue;
		if (*n == alloc) {
			alloc = alloc ? 2 * alloc : 64;
			*out = xrealloc(*out, alloc * sizeof(**out));
		}
		(*out)[*n].workload = db_col_strdup(st, 0);
		(*out)[*n].symbol = db_col_strdup(st, 1);
		(*out)[*n].dso = db_col_strdup(st, 2);
		(*out)[*n].pct = db_col_double(st, 3);
		(*n)++;
	}
	db_finalize(st);
	if (rc != DB_DONE)
		return error("database '%s': cannot read profiles: %s", db_file(db), db_errmsg(db));
	return 0;
}

void profrows_free(struct profrow *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(p[i].workload);
		free(p[i].symbol);
		free(p[i].dso);
	}
	free(p);
}

/* ---- a kernel side from the per-kernel samples (migration 0016) ---------- */

/*
 * The workloads of the kernel side named P, to read only those both sides
 * have; its kernel ids are the list in the format's %s (side_kernel_ids()).
 */
#define SIDE_WORKLOADS(p) \
	"SELECT workload FROM kernel_samples WHERE kernel_id IN %s" \
	" UNION SELECT b.workload FROM boot_metrics b WHERE b.kernel_id IS NULL AND b.kernel_label = " p \
	" UNION SELECT b.workload FROM boot_cpus b WHERE b.kernel_id IS NULL AND b.kernel_label = " p \
	" UNION SELECT b.workload FROM boot_profile b WHERE b.kernel_id IS NULL AND b.kernel_label = " p \
	" UNION SELECT b.workload FROM job_sides js JOIN boot_metrics b ON b.job_id = js.job_id AND b.side = js.side" \
	"  WHERE js.label = " p " AND b.kernel_id IS NULL" \
	" UNION SELECT b.workload FROM job_sides js JOIN boot_cpus b ON b.job_id = js.job_id AND b.side = js.side" \
	"  WHERE js.label = " p " AND b.kernel_id IS NULL" \
	" UNION SELECT b.workload FROM job_sides js JOIN boot_profile b ON b.job_id = js.job_id AND b.side = js.side" \
	"  WHERE js.label = " p " AND b.kernel_id IS NULL" \
	" UNION SELECT workload FROM runs WHERE kernel_label = " p " AND job_id IS NULL"

/*
 * The rows beside the samples, each (workload, name, unit, better, key, v0,
 * v1) as kernel_samples has them: of the boot TABLE, COLS of the boots
 * without a kernel id (nokernel_sql()), then RAW: the runs outside jobs
 * (RAW_KERNEL_RUNS, ?3 warm-up runs left out). The clock's rows are counts.
 */
static const struct { const char *table, *cols, *raw; } extra_sql[] = {
	[KSAMPLE_METRIC] = { "boot_metrics", "b.workload, b.name, b.unit, b.better, b.bkey, b.value, 0",
		"SELECT r.workload, m.name, MAX(m.unit), MAX(m.better), COALESCE(r.boot_id, -r.id), AVG(m.value), 0"
		" FROM runs r JOIN metrics m ON m.run_id = r.id" RAW_KERNEL_RUNS
		" GROUP BY r.workload, m.name, COALESCE(r.boot_id, -r.id)" },
	/* (workload, cpu, NULL, NULL, key, usr, sys, irq, soft, idle): fanned out by field */
	[KSAMPLE_CPU] = { "boot_cpus", "b.workload, b.cpu, NULL AS u, NULL AS bt, b.bkey, b.usr, b.sys, b.irq, b.soft, b.idle",
		"SELECT r.workload, c.cpu, NULL, NULL, COALESCE(r.boot_id, -r.id),"
		" AVG(c.usr), AVG(c.sys), AVG(c.irq), AVG(c.soft), AVG(c.idle)"
		" FROM runs r JOIN cpu_stats c ON c.run_id = r.id" RAW_KERNEL_RUNS
		" GROUP BY r.workload, c.cpu, COALESCE(r.boot_id, -r.id)" },
	/* a run outside jobs is a boot of its own: its symbols' shares, 1 run */
	[KSAMPLE_PROFILE] = { "boot_profile", "b.workload, b.symbol, b.dso, NULL AS bt, b.bkey, b.pct_sum, b.runs",
		"SELECT r.workload, p.symbol, MAX(p.dso), NULL, -r.id, SUM(p.percent), 1"
		" FROM runs r JOIN profile_rows p ON p.run_id = r.id" RAW_KERNEL_RUNS
		" GROUP BY r.workload, p.symbol, r.id" },
	/* the measured runs on each clock: of jobs as their summaries count them, outside jobs after ?3 */
	[KSAMPLE_CLOCK] = { NULL, NULL,
		"SELECT NULL, CASE WHEN r.clock = 'icount' THEN 'icount' ELSE 'real' END AS c, NULL, NULL, 0, COUNT(*), 0"
		" FROM runs r JOIN jobs j ON j.id = r.job_id"
		" WHERE r.id IN (SELECT id FROM runs WHERE kernel_id IS NULL AND kernel_label = ?1"
		"  UNION SELECT r2.id FROM job_sides js JOIN runs r2 ON r2.job_id = js.job_id AND r2.side = js.side"
		"  WHERE js.label = ?1 AND r2.kernel_id IS NULL)"
		" AND " RESULT_MEASURED_SQL " AND r.seq >= " RESULT_JOB_WARMUP_SQL " GROUP BY c"
		" UNION ALL SELECT NULL, CASE WHEN r.clock = 'icount' THEN 'icount' ELSE 'real' END AS c, NULL, NULL, 0,"
		" COUNT(*), 0 FROM runs r" RAW_KERNEL_RUNS " GROUP BY c" },
};

/* Entries of one kind, workload and name: a kernel_samples row or a boot beside them. */
struct piece {
	int kind;
	char *workload, *name, *unit, *better;
	struct ksample s;
};

struct pieces {
	struct piece *p;
	size_t n, alloc;
};

static struct piece *piece_add(struct pieces *ps, int kind, const char *workload, const char *name,
			       const char *unit, const char *better)
{
	struct piece *p;

	if (ps->n == ps->alloc) {
		ps->alloc = ps->alloc ? 2 * ps->alloc : 256;
		ps->p = xrealloc(ps->p, ps->alloc * sizeof(*ps->p));
	}
	p = &ps->p[ps->n++];
	p->kind = kind;
	p->workload = xstrdup(workload);
	p->name = xstrdup(name);
	p->unit = unit ? xstrdup(unit) : NULL;
	p->better = better ? xstrdup(better) : NULL;
	ksample_init(&p->s, ksample_width(kind));
	return p;
}

static void pieces_free(struct pieces *ps)
{
	for (size_t i = 0; i < ps->n; i++) {
		free(ps->p[i].workload);
		free(ps->p[i].name);
		free(ps->p[i].unit);
		free(ps->p[i].better);
		ksample_free(&ps->p[i].s);
	}
	free(ps->p);
	memset(ps, 0, sizeof(*ps));
}

static int piece_cmp(const void *pa, const void *pb)
{
	const struct piece *a = pa, *b = pb;
	int c = a->kind - b->kind;

	if (!c)
		c = strcmp(a->workload, b->workload);
	if (!c)
		c = strcmp(a->name, b->name);
	if (!c && a->s.n && b->s.n)
		c = a->s.key[0] < b->s.key[0] ? -1 : a->s.key[0] > b->s.key[0];
	return c;
}

/* side.h; KERNEL_IDS_OF */
char *side_kernel_ids(struct db *db, const char *name)
{
	struct db_stmt *st = db_prepare(db, "SELECT id FROM " KERNEL_IDS_OF("?1") " k WHERE id IS NOT NULL ORDER BY id",
					"s", name);
	struct buf b = BUF_INIT;
	int rc;

	if (!st)
		return NULL;
	buf_addch(&b, '(');
	while ((rc = db_step(st)) == DB_ROW)
		buf_addf(&b, "%s%lld", b.len > 1 ? ", " : "", (long long)db_col_int64(st, 0));
	db_finalize(st);
	if (rc != DB_DONE) {
		buf_release(&b);
		return NULL;
	}
	buf_addstr(&b, b.len > 1 ? ")" : "NULL)");
	return buf_detach(&b, NULL);
}

/*
 * The kernel_samples rows of side S's kernel ids: the metrics and CPU shares
 * of the workloads the side OTHER has too (a comparison has no use for the
 * others), every profile and clock (a profile is shown for each workload
 * either side has, the clock of all the side's runs is checked).
 */
static int load_sample_rows(struct db *db, const struct side_sel *s, const char *other, struct pieces *ps)
{
	struct db_stmt *st;
	char *mine, *theirs, *sql;
	int rc;

	/*
	 * The kernels' ids first, as lists in the statement, then their rows by
	 * the primary key: with the ids behind a subquery both engines guessed
	 * how many there are (sqlite under a full ANALYZE's statistics, and
	 * PostgreSQL, which counted the 2000 job sides a label names) and
	 * scanned all of kernel_samples (130 ms more on sqlite at 100M rows,
	 * 500 ms on PostgreSQL).
	 */
	mine = side_kernel_ids(db, s->kernel);
	theirs = mine ? side_kernel_ids(db, other) : NULL;
	if (!theirs) {
		free(mine);
		return -1;
	}
	sql = xasprintf("SELECT s.kind, s.workload, s.name, s.unit, s.better, s.data FROM kernel_samples s"
			" WHERE s.kernel_id IN %s AND (s.kind >= 2 OR s.workload IN (" SIDE_WORKLOADS("?1") "))",
			mine, theirs);
	st = db_prepare(db, sql, "s", other);
	free(sql);
	free(mine);
	free(theirs);
	if (!st)
		return -1;
	while ((rc = db_step(st)) == DB_ROW) {
		const char *w = db_col_text(st, 1), *name = db_col_text(st, 2), *data;
		int kind = db_col_int(st, 0);
		struct piece *p;

		if (!w || !name || kind < 0 || kind >= KSAMPLE_KINDS)
			continue;
		p = piece_add(ps, kind, w, name, db_col_text(st, 3), db_col_text(st, 4));
		data = db_col_text(st, 5);
		if (!data || ksample_decode(&p->s, data, strlen(data))) {
			db_finalize(st);
			return error("database '%s': the kernel_samples row of kernel '%s', %s, %s is not a sample;"
				     " klab db rebuild-summaries --kernel-samples makes them again", db_file(db), s->kernel,
				     p->workload, p->name);
		}
	}
	db_finalize(st);
	if (rc != DB_DONE)
		return error("database '%s': cannot read kernel samples: %s", db_file(db), db_errmsg(db));
	return 0;
}

/* The rows beside the samples (extra_sql), a piece of one entry each. */
static int load_extra_rows(struct db *db, const struct side_sel *s, struct pieces *ps)
{
	for (int kind = 0; kind < KSAMPLE_KINDS; kind++) {
		char *nk = extra_sql[kind].table ? nokernel_sql(extra_sql[kind].cols, extra_sql[kind].table) : NULL;
		char *sql = nk ? xasprintf("SELECT * FROM (%s) nk UNION ALL %s", nk, extra_sql[kind].raw) :
				 xstrdup(extra_sql[kind].raw);
		struct db_stmt *st = side_prepare(db, "", "", &(struct side_sel){ sql, 0, NULL, s->kernel, s->warmup, 1 });
		int rc;

		free(nk);
		free(sql);

		if (!st)
			return -1;
		while ((rc = db_step(st)) == DB_ROW) {
			const char *w = db_col_text(st, 0), *name = db_col_text(st, 1);
			int64_t key = db_col_int64(st, 4);

			if (kind == KSAMPLE_CPU) {
				for (size_t f = 0; w && f < ARRAY_SIZE(ksample_cpu_fields); f++) {
					char *cn;
					double v;

					if (db_col_null(st, 5 + (int)f))
						continue;
					cn = ksample_cpu_name(db_col_int(st, 1), ksample_cpu_fields[f]);
					v = db_col_double(st, 5 + (int)f);
					ksample_push(&piece_add(ps, kind, w, cn, "%", "none")->s, key, &v);
					free(cn);
				}
				continue;
			}
			if (kind == KSAMPLE_CLOCK)
				w = "";
			if (!w || !name || db_col_null(st, 5))
				continue;
			ksample_push(&piece_add(ps, kind, w, name, db_col_text(st, 2), db_col_text(st, 3))->s, key,
				     (double[2]){ db_col_double(st, 5), db_col_double(st, 6) });
		}
		db_finalize(st);
		if (rc != DB_DONE)
			return error("database '%s': cannot read the boots of kernel '%s': %s", db_file(db), s->kernel,
				     db_errmsg(db));
	}
	return 0;
}

struct key_value {
	int64_t k;
	double v;
};

static int key_value_cmp(const void *pa, const void *pb)
{
	const struct key_value *a = pa, *b = pb;

	return a->k < b->k ? -1 : a->k > b->k;
}

/* Concatenate pieces [i, j) (one kind, workload and name) into a group, sorted by key if they interleave. */
static void pieces_group(struct pieces *ps, size_t i, size_t j, struct groups *gs)
{
	struct group *g;
	struct ksample all;
	int sorted = 1;

	ksample_init(&all, 1);
	for (size_t k = i; k < j; k++)
		for (size_t e = 0; e < ps->p[k].s.n; e++) {
			sorted &= !all.n || all.key[all.n - 1] < ps->p[k].s.key[e];
			ksample_push(&all, ps->p[k].s.key[e], &ps->p[k].s.v[e]);
		}
	if (!sorted) {
		struct key_value *kv = xmalloc(all.n * sizeof(*kv));

		for (size_t e = 0; e < all.n; e++) {
			kv[e].k = all.key[e];
			kv[e].v = all.v[e];
		}
		qsort(kv, all.n, sizeof(*kv), key_value_cmp);
		for (size_t e = 0; e < all.n; e++) {
			all.key[e] = kv[e].k;
			all.v[e] = kv[e].v;
		}
		free(kv);
	}
	g = group_new(gs, ps->p[i].workload, ps->p[i].name, ps->p[i].unit ? xstrdup(ps->p[i].unit) : NULL,
		      ps->p[i].better ? xstrdup(ps->p[i].better) : NULL);
	g->v = all.v;	/* the group owns the values */
	g->n = g->alloc = all.n;
	free(all.key);
}

static int same_series(const struct piece *a, const struct piece *b)
{
	return a->kind == b->kind && !strcmp(a->workload, b->workload) && !strcmp(a->name, b->name);
}

/* The profile rows of pieces [i, j) (kind KSAMPLE_PROFILE, sorted): a symbol's shares over the runs with a profile. */
static void pieces_profile(struct pieces *ps, size_t i, size_t j, struct profrow **out, size_t *n, size_t *alloc)
{
	for (size_t a = i, b; a < j; a = b) {
		struct key_value *kr = NULL;
		size_t nkr = 0, akr = 0;
		double runs = 0;

		for (b = a; b < j && !strcmp(ps->p[b].workload, ps->p[a].workload); b++)
			for (size_t e = 0; e < ps->p[b].s.n; e++) {
				if (nkr == akr) {
					akr = akr ? 2 * akr : 256;
					kr = xrealloc(kr, akr * sizeof(*kr));
				}
				kr[nkr++] = (struct key_value){ ps->p[b].s.key[e], ps->p[b].s.v[2 * e + 1] };
			}
		/* the workload's boots with a profile, each once */
		qsort(kr, nkr, sizeof(*kr), key_value_cmp);
		for (size_t e = 0; e < nkr; e++)
			if (!e || kr[e].k != kr[e - 1].k)
				runs += kr[e].v;
		free(kr);
		for (size_t c = a, d; c < b; c = d) {
			const char *dso = NULL;
			double sum = 0;

			for (d = c; d < b && same_series(&ps->p[d], &ps->p[c]); d++) {
				for (size_t e = 0; e < ps->p[d].s.n; e++)
					sum += ps->p[d].s.v[2 * e];
				if (ps->p[d].unit && (!dso || strcmp(ps->p[d].unit, dso) > 0))
					dso = ps->p[d].unit;
			}
			if (*n == *alloc) {
				*alloc = *alloc ? 2 * *alloc : 64;
				*out = xrealloc(*out, *alloc * sizeof(**out));
			}
			(*out)[*n].workload = xstrdup(ps->p[c].workload);
			(*out)[*n].symbol = xstrdup(ps->p[c].name);
			(*out)[*n].dso = dso ? xstrdup(dso) : NULL;
			(*out)[*n].pct = sum / runs;
			(*n)++;
		}
	}
}

/*
 * Kernel side S from the per-kernel samples and the boots beside them, of
 * the workloads the kernel side OTHER has too: its metric groups M, per-CPU
 * groups C (both sorted by workload and name), profile rows (sorted by
 * workload and symbol) and measured runs on each clock (real, icount). The
 * values come in the boot order, as the boot tables' ORDER BY bkey gives them.
 */
int load_kernel_side(struct db *db, const struct side_sel *s, const char *other, struct groups *m,
			    struct groups *c, struct profrow **prof, size_t *nprof, int64_t runs[2])
{
	struct pieces ps = { 0 };
	size_t aprof = 0;
	int ret = -1;

	*prof = NULL;
	*nprof = 0;
	runs[0] = runs[1] = 0;
	if (load_sample_rows(db, s, other, &ps) || load_extra_rows(db, s, &ps))
		goto out;
	if (ps.n)
		qsort(ps.p, ps.n, sizeof(*ps.p), piece_cmp);
	for (size_t i = 0, j; i < ps.n; i = j) {
		for (j = i + 1; j < ps.n && (ps.p[i].kind == KSAMPLE_PROFILE ? ps.p[j].kind == KSAMPLE_PROFILE :
					     same_series(&ps.p[j], &ps.p[i])); j++)
			;
		switch (ps.p[i].kind) {
		case KSAMPLE_METRIC:
			pieces_group(&ps, i, j, m);
			break;
		case KSAMPLE_CPU:
			pieces_group(&ps, i, j, c);
			break;
		case KSAMPLE_PROFILE:
			pieces_profile(&ps, i, j, prof, nprof, &aprof);
			break;
		case KSAMPLE_CLOCK:
			for (size_t k = i; k < j; k++)
				for (size_t e = 0; e < ps.p[k].s.n; e++)
					runs[!strcmp(ps.p[k].name, "icount")] += (int64_t)ps.p[k].s.v[e];
			break;
		}
	}
	ret = 0;
out:
	pieces_free(&ps);
	return ret;
}
/* ---- what compare.c counts ---- */

int side_runs_by_clock(struct db *db, const struct side_sel *s, void (*fn)(const char *clock, int64_t n, void *data),
		       void *data)
{
	struct db_stmt *st = side_prepare(db, "SELECT r.clock, COUNT(*) FROM runs r WHERE ",
					  " AND " RESULT_MEASURED_SQL " AND r.seq >= ?3 GROUP BY r.clock", s);
	int rc;

	if (!st)
		return -1;
	while ((rc = db_step(st)) == DB_ROW)
		fn(db_col_text(st, 0), db_col_int64(st, 1), data);
	db_finalize(st);
	if (rc != DB_DONE)
		return error("database '%s': cannot read the clock of the runs: %s", db_file(db), db_errmsg(db));
	return 0;
}

int side_job_runs(struct db *db, int64_t job_id, const char *side, int64_t *n)
{
	if (!strcmp(side, "A"))
		return db_get_int(db, n, "SELECT COUNT(*) FROM runs WHERE job_id = ?1 AND side = 'A' AND status = 'ok' AND kind = 'measure'",
				  "i", job_id);
	return db_get_int(db, n, "SELECT COUNT(*) FROM runs WHERE job_id = ?1 AND side = 'B' AND status = 'ok' AND kind = 'measure'",
			  "i", job_id);
}

int64_t side_kernel_runs(struct db *db, const char *kernel)
{
	char *sql = xasprintf("SELECT COUNT(*) FROM runs r WHERE %s", KERNEL_SIDE);
	int64_t n = 0;

	if (db_get_int(db, &n, sql, "sn", kernel) != 1)
		n = 0;
	free(sql);
	return n;
}
