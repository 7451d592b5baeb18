/* ksample.h: the per-kernel samples of boot values (migration 0016, docs/query-scale.md). */
#ifndef KLAB_KSAMPLE_H
#define KLAB_KSAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "store/db.h"

/* Boot keys per kernel_samples row. */
#define KSAMPLE_CHUNK 1024

/* kernel_samples.kind */
enum ksample_kind {
	KSAMPLE_METRIC = 0,	/* a metric: its boot_metrics value */
	KSAMPLE_CPU = 1,	/* a CPU share named cpuN.FIELD or cpuall.FIELD: its boot_cpus value */
	KSAMPLE_PROFILE = 2,	/* a profile symbol: pct_sum and runs */
	KSAMPLE_CLOCK = 3,	/* a clock ("real", "icount"): the boot's measured runs on it */
	KSAMPLE_KINDS
};

/* The fields of a CPU's shares, and the name of one as a group (cpuN.FIELD, cpuall.FIELD for CPU -1; malloc'd). */
extern const char *const ksample_cpu_fields[5];
char *ksample_cpu_name(int64_t cpu, const char *field);

/* Values per entry of KIND (1 or 2). */
int ksample_width(int kind);

/* Entries sorted by key (the boot key), `w` values each. */
struct ksample {
	int64_t *key;
	double *v;		/* n * w */
	size_t n, alloc;
	int w;
};

void ksample_init(struct ksample *s, int w);
void ksample_free(struct ksample *s);
/* Append an entry (the caller keeps the keys ascending, or sorts after). */
void ksample_push(struct ksample *s, int64_t key, const double *v);
/* Append the entries of a row's data text; 0, or -1 if it is not a sample of width s->w. */
int ksample_decode(struct ksample *s, const char *text, size_t len);
/* The data text of S, appended to OUT. */
void ksample_encode(const struct ksample *s, struct buf *out);

/* 1 when kernel_samples holds every boot of a kernel, 0 when not (readers use the boot tables), -1 on error. */
int ksample_ready(struct db *db);

/*
 * Make the entries of boot key BKEY, WORKLOAD again from the boot tables
 * (boot_metrics, boot_cpus, boot_profile, already made for it) and from the
 * runs of job JOB_ID (its clocks), in the caller's transaction; OLD_KERNEL
 * is the kernel id the boot tables had for it before (0: none), whose rows
 * lose the boot if its kernel changed. 0 or -1 (logged).
 */
int ksample_update_boot(struct db *db, int64_t job_id, int64_t old_kernel, int64_t bkey, const char *workload);

/* Make every row again from the boot tables and runs, in the caller's transaction, and mark them ready. */
int ksample_rebuild(struct db *db);

/* How many rows boot_metrics (*BOOTS) and kernel_samples (*SAMPLES) have: 0, or -1. */
int ksample_row_counts(struct db *db, int64_t *boots, int64_t *samples);

#endif
