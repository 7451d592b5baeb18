/*
 * side.h: reading a comparison side's boot values (store/side.c), for
 * compare/compare.c: from the per-boot summaries, from the runs (a warm-up
 * count given), or for a kernel from the per-kernel samples. The large
 * analytic queries of a comparison live here, with the tables they read
 * (docs/query-scale.md).
 */
#ifndef KLAB_STORE_SIDE_H
#define KLAB_STORE_SIDE_H

#include <stddef.h>
#include <stdint.h>

#include "store/db.h"
#include "store/result.h"

/* Boot values of one (workload, metric) on one side, in query order. */
struct group {
	char *workload;
	char *metric;
	char *unit;
	char *better;
	double *v;
	size_t n, alloc;
};

struct groups {
	struct group *g;
	size_t n, alloc;
};

/*
 * Which runs form a side. `where` is one of the fixed fragments below (never
 * user text); ?1 and ?2 are bound to the side's parameters, ?3 to the
 * number of warm-up runs per boot.
 */
#define JOB_SIDE "r.job_id = ?1 AND r.side = ?2"
/*
 * A kernel by id, release, variant or job_sides label, or a run's
 * kernel_label: a union of three index searches (an OR over the columns
 * would scan every run).
 */
#define KERNEL_IDS_OF(p) \
	"(SELECT id FROM kernels WHERE CAST(id AS TEXT) = " p " OR release = " p " OR variant = " p \
	" UNION SELECT kernel_id FROM job_sides WHERE label = " p " AND kernel_id IS NOT NULL)"
#define KERNEL_IDS KERNEL_IDS_OF("?1")
/*
 * The runs of a kernel side: a run with a kernel id is that kernel's, the
 * labels name the runs without one (as the per-boot summaries and the
 * per-kernel samples have them; docs/statistics.md).
 */
#define KERNEL_SIDE \
	"r.id IN (SELECT id FROM runs WHERE kernel_id IN " KERNEL_IDS \
	" UNION SELECT id FROM runs WHERE kernel_label = ?1 AND kernel_id IS NULL" \
	" UNION SELECT r2.id FROM job_sides js JOIN runs r2 ON r2.job_id = js.job_id AND r2.side = js.side" \
	" WHERE js.label = ?1 AND r2.kernel_id IS NULL) AND CAST(?2 AS TEXT) IS NULL"

struct side_sel {
	const char *where;
	int64_t job_id;		/* JOB_SIDE */
	const char *side;	/* JOB_SIDE */
	const char *kernel;	/* KERNEL_SIDE */
	int warmup;
	int own_warmup;		/* the runs of jobs leave out their job's warm-ups: boot_metrics has the boot values */
};

/* The runs outside jobs of a kernel side, for side_boots_sql()'s RAW. */
#define RAW_KERNEL_RUNS \
	" WHERE r.kernel_label = ?1 AND r.job_id IS NULL AND " RESULT_MEASURED_SQL " AND r.seq >= ?3" \
	" AND CAST(?2 AS TEXT) IS NULL"

/* Mean profile share per (workload, symbol) over the measured runs that have a profile. */
struct profrow {
	char *workload, *symbol, *dso;
	double pct;
};

void groups_free(struct groups *gs);
int key_cmp(const struct group *a, const struct group *b);
void profrows_free(struct profrow *p, size_t n);

/* Prepare PRE + the side's WHERE fragment + POST with the side's parameters bound. */
struct db_stmt *side_prepare(struct db *db, const char *pre, const char *post, const struct side_sel *s);

/*
 * A side's boot values from the per-boot summaries (s->own_warmup) or
 * from the runs (s->warmup runs of each boot left out): per (workload,
 * metric) groups in that order, per-CPU groups cpuN.FIELD (unsorted), and
 * the mean profile share per (workload, symbol) in that order.
 */
int load_side_metrics(struct db *db, const struct side_sel *s, struct groups *gs);
int load_side_cpus(struct db *db, const struct side_sel *s, struct groups *gs);
int load_side_profile(struct db *db, const struct side_sel *s, struct profrow **out, size_t *n);

/*
 * Kernel side S (s->own_warmup) from the per-kernel samples and the boots
 * beside them, of the workloads the kernel side OTHER has too: its metric
 * groups M, per-CPU groups C (both sorted by workload and name), profile
 * rows (sorted by workload and symbol) and measured runs on each clock
 * (real, icount). The values come in the boot order, as from the per-boot
 * summaries.
 */
int load_kernel_side(struct db *db, const struct side_sel *s, const char *other, struct groups *m, struct groups *c,
		     struct profrow **prof, size_t *nprof, int64_t runs[2]);

/*
 * The ids of the kernels NAME names (by id, release, variant or a job
 * side's label) as an SQL list, "(1, 5)", or "(NULL)" when none; NULL on
 * error (logged). For a statement to hold literally: behind a subquery the
 * planners guess how many ids there are, and PostgreSQL guessed the 2000
 * job sides a label names (docs/query-scale.md).
 */
char *side_kernel_ids(struct db *db, const char *name);

/* Call FN with each clock (runs.clock) of side S's measured runs and how many there are on it. 0, or -1 (logged). */
int side_runs_by_clock(struct db *db, const struct side_sel *s, void (*fn)(const char *clock, int64_t n, void *data),
		       void *data);

/* *N: the runs with status ok of side SIDE ("A" or "B") of job JOB_ID. 1, or -1. */
int side_job_runs(struct db *db, int64_t job_id, const char *side, int64_t *n);

/* The runs of kernel side KERNEL (KERNEL_SIDE): 0 also on an error. */
int64_t side_kernel_runs(struct db *db, const char *kernel);

#endif
