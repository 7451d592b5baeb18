/* jobs.h: the jobs family of tables (jobs, job_sides, steps, looks) and a job's spec, parsed once. */
#ifndef KLAB_STORE_JOBS_H
#define KLAB_STORE_JOBS_H

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

#include "store/db.h"
#include "strvec.h"

/*
 * A job's spec is the JSON document in jobs.spec (docs/jobs.md), written
 * once at submit (job/job_spec.c) so that a job runs and is judged the same
 * after the config changed. Everything that reads it reads this struct,
 * filled by job_spec_parse(); what a spec does not say takes the defaults
 * below, here and nowhere else.
 */

/* A workload's measured window and its warm-up when the config names none (job_spec.c writes them too). */
#define JOB_SPEC_DURATION_S 10.0
#define JOB_SPEC_WARMUP_S 2.0

/* One side of the comparison ("sides" of the spec). */
struct job_spec_side {
	char side;			/* 'A' or 'B' */
	const char *label, *ref, *variant, *profile;	/* NULL when not given */
	int build;			/* 1: build the side's kernel; 0: reuse kernel_id or the machine's own */
	int64_t kernel_id, from_job;	/* a kernel of an earlier job (confirmations, nightlies); 0: none */
};

/* One workload as the config had it at submit ("workloads" of the spec). */
struct job_spec_workload {
	const char *name, *type;
	struct json_object *params;	/* the generator's keys as the config spells them (strings); may be NULL */
	struct json_object *monitors;	/* array of monitor names, as the agent takes it; may be NULL */
	double duration_s, warmup_s;	/* default JOB_SPEC_DURATION_S, JOB_SPEC_WARMUP_S */
	const char *perf_events, *profile_cpus, *bpftrace_script;	/* NULL when not given */
	const char *headline;		/* the headline metric; NULL when not given or empty */
	double threshold_pct;		/* the change that matters (0: not given) */
	const char *target;		/* udp_tx: params.target ("peer", "dummy", "blackhole"); NULL when not given */
};

struct job_spec {
	struct json_object *doc;	/* the parsed document: owns every string and object below */
	const char *name, *kind;	/* kind: series, refs, nightly, tuning, confirm, bisect ("" when not given) */
	const char *tree, *base, *test, *series, *pool, *schedule, *uid_salt;	/* NULL when not given */
	const char *order;		/* "abba" (default) or "fixed" */
	struct strvec local_patches, machines;	/* machines: dut and peer, or none (a pool) */
	int boots;			/* boots per job, the maximum of a range (default 1) */
	int boots_min;			/* boots = MIN..MAX: the first look (0: a plain count) */
	int runs;			/* measured runs of each workload per boot (default 1) */
	/*
	 * Runs of each workload per boot before the measured ones, discarded
	 * by every comparison: "warmup_runs", else the old key "warmup" (a count
	 * up to 100), else 1; never below 0. The plan runs runs + warmup_runs.
	 */
	int warmup_runs;
	/*
	 * The first N boots of each side carry observation runs after their
	 * measurement runs (default 1; 0: none): docs/observation.md.
	 */
	int observe_boots;
	int64_t seed;
	int64_t confirms;		/* a confirmation: the nightly job it measures again (0: none) */
	int64_t bisection;		/* a bisection's job: its bisection (0: none) and step */
	int bisect_seq;
	struct job_spec_side *sides;	/* in the spec's order: A then B, or B alone */
	size_t n_sides;
	char letters[3];		/* the side letters in order: "AB", "B" (at most two) */
	struct job_spec_workload *workloads;
	size_t n_workloads;
	struct json_object *profiles;	/* profile name -> its tuning, as klab-agent prepare takes it; may be NULL */
};

/*
 * Parse a job's spec TEXT into *SPEC: 0, or -1 when it is not a JSON object
 * (logged; *SPEC then holds the defaults). *SPEC is released with
 * job_spec_release() either way.
 */
int job_spec_parse(const char *text, struct job_spec *spec);
void job_spec_release(struct job_spec *spec);

/* Side SIDE ('A', 'B') of the spec, a workload by name: NULL when it has none. */
const struct job_spec_side *job_spec_side(const struct job_spec *spec, char side);
const struct job_spec_workload *job_spec_workload(const struct job_spec *spec, const char *name);

/* ---- jobs */

/* Job ID runs on machines DUT and PEER (its lease): 0 or -1. */
int jobs_set_machines(struct db *db, int64_t id, const char *dut, const char *peer);

#endif
