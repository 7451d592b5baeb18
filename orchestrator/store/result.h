/* result.h: reading a klab-agent result document (docs/result-schema.md) and storing it in sqlite. */
#ifndef KLAB_RESULT_H
#define KLAB_RESULT_H

#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#include "store/db.h"

/* The result schema version this klab reads. */
#define RESULT_SCHEMA_VERSION_KNOWN 1

/*
 * Parse and check one result document: a JSON object with a known
 * "schema_version" (an unknown one is an error naming it and the version
 * this klab reads), a valid "run_id", and, where present, "metrics",
 * "series", "cpus", "histograms" and "profile" of the documented shapes.
 * `what` names the source in messages ("result of run X from dut1").
 * Returns 0 with *out set (caller puts it), or -1 with ERR naming the
 * field (error_to(): logged when ERR is NULL).
 */
int result_parse(const char *json, size_t len, const char *what, struct json_object **out, struct buf *err);

/*
 * Where a run belongs. Every field is optional: 0 / NULL store NULL,
 * except that `workload` defaults to spec.workload.name of the document,
 * `kernel_label` to kernel.release and `machine` to host.
 */
struct result_meta {
	int64_t job_id;
	int64_t boot_id;
	const char *side;		/* "A" | "B" */
	int64_t kernel_id;
	const char *kernel_label;
	const char *workload;
	int64_t seq;			/* run index within its boot */
	const char *machine;
	const char *peer;
	const char *profile;
	const char *clock;		/* "real" (NULL) or "icount": runs.clock; icount stores insn_per_op */
	/*
	 * NULL: a measurement run (runs.kind 'measure'); else an observation
	 * run (kind 'observe') and what it observes: a monitor's name or
	 * "bare" (docs/observation.md). No verdict, summary or sample reads an
	 * observation run.
	 */
	const char *observes;
	/*
	 * NULL, or where result_store() says why it failed (error_to(): not
	 * logged then; a database failure is logged by the database and its
	 * message put here too), for a caller that keeps the reason (a job's
	 * run step).
	 */
	struct buf *why;
};

/*
 * SQL for the runs (r) of one boot: ?1 its key (a boot id, or minus the id
 * of a run stored without a boot), ?2 the workload, ?3 the job. Two texts so
 * that each is one index search (runs_boot, or the primary key) whatever
 * sqlite's statistics say (migration 0017).
 */
#define RESULT_BOOT_RUNS_SQL(bkey) \
	((bkey) > 0 ? "r.boot_id = ?1 AND r.workload = ?2 AND r.job_id = ?3" \
		    : "r.id = -?1 AND r.workload = ?2 AND r.job_id = ?3")

/*
 * SQL for the runs (r) whose values a verdict, a summary, a history point or
 * a bisection step may read: stored whole (status ok) and measurement runs,
 * never an observation run, which carried a probe or a sampler
 * (docs/observation.md). Every such reader says it with this.
 */
#define RESULT_MEASURED_SQL "r.status = 'ok' AND r.kind = 'measure'"

/*
 * SQL for the warm-up runs per boot of job `j` (a jobs row in the query),
 * read from its spec as compare.c's spec_warmup() does: "warmup_runs",
 * else "warmup" when it is a count, else 1. Runs with seq below it are
 * warm-ups. Migration 0014 writes the same expression out.
 */
#define RESULT_JOB_WARMUP_SQL \
	"COALESCE(CAST(json_extract(j.spec, '$.warmup_runs') AS DOUBLE PRECISION)," \
	" CASE WHEN CAST(json_extract(j.spec, '$.warmup') AS DOUBLE PRECISION) BETWEEN 0 AND 100" \
	" THEN CAST(json_extract(j.spec, '$.warmup') AS DOUBLE PRECISION) END, 1)"

/*
 * Store one result (the JSON text `json` of `len` bytes, kept verbatim in
 * runs.result) in ONE transaction: the runs row (uid = the document's
 * run_id), metrics, samples (from series), cpu_stats, histograms and
 * profile_rows, and for a run of a job its boot's rows of the per-boot
 * summaries and its side's rows of job_metrics (made again). Storing a uid that is already there changes nothing and
 * returns the existing row's id, so a retried fetch never stores twice.
 * `meta` may be NULL. Returns 0 with *run_id set (if run_id is not
 * NULL), or -1 (logged; the database is left as it was).
 */
int result_store(struct db *db, const char *json, size_t len, const struct result_meta *meta,
		 int64_t *run_id);

/*
 * A run of one workload as the monitor-cost table reads it
 * (compare/monitor_cost.h, docs/observation.md): its side and boot, its
 * kind, what an observation run observes (a monitor's name, or "bare": no
 * monitor at all), its position in the boot, and two values: the workload's
 * rate headline (tps, tx_pps, ...) and its cost per operation (insn_per_op
 * on the icount lab, cpu_us_per_op elsewhere); NaN when the run has none (a
 * bare run has no cpu monitor).
 */
struct run_cost {
	char side;		/* 'A' or 'B' */
	int boot;		/* the boot's number in the job (boots.seq) */
	int observe;		/* 0: a measurement run, 1: an observation run */
	char *observes;		/* observation runs: the monitor, or "bare"; NULL otherwise */
	int seq;		/* the run's index in its boot */
	double rate;		/* the rate headline; NaN: none */
	double per_op;		/* the cost per operation; NaN: none */
};

/*
 * The stored (status ok) runs of workload WL of job JOB in the boots that
 * have an observation run, without the job's warm-up runs (a boot's first
 * run is slower: it would move the reference a cost is taken against), with
 * their metrics RATE and PER_OP, into *OUT
 * (malloc'd, *N of them; free with run_costs_free()). 0, or -1 (logged).
 */
int result_cost_runs(struct db *db, int64_t job, const char *wl, const char *rate, const char *per_op,
		     struct run_cost **out, size_t *n);
void run_costs_free(struct run_cost *v, size_t n);

/*
 * Make the per-boot summaries (boot_metrics, boot_cpus, boot_profile) of
 * every run of a job again, and job_metrics from them, in one transaction: for runs written into the
 * database other than by result_store() (test fixtures, bench/gen-db.sh;
 * `klab db rebuild-summaries`). 0 or -1 (logged; nothing changed).
 */
int result_rebuild_summaries(struct db *db);

#endif
