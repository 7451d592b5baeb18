/* kernels.h: the built kernels (the kernels table): a build's row, the cache, listing and removal. */
#ifndef KLAB_STORE_KERNELS_H
#define KLAB_STORE_KERNELS_H

#include <stdint.h>

#include "store/db.h"

/*
 * One kernels row. A NULL column is a NULL string, NAN for a number and 0
 * for series_id (ids start at 1). Strings are malloc'd; kernel_row_release()
 * frees them.
 */
struct kernel_row {
	int64_t id;
	char *key;		/* sha256 of what goes into the kernel (kbuild/build.h) */
	char *tree, *commit, *variant;
	int64_t series_id;	/* the series applied, 0 for none */
	char *release, *build_id, *artifact_dir;
	char *state;		/* building, ok, failed */
	char *error;
	char *apply_log;	/* JSON: per patch, how it applied */
	double duration_s;
	char *ccache_stats;	/* JSON */
	double created;
	char *compiler, *config_sha256;
};

void kernel_row_release(struct kernel_row *k);

/* The row of kernel ID into OUT: 1, 0 when there is none (OUT zeroed), -1 on an error. */
int kernel_get(struct db *db, int64_t id, struct kernel_row *out);

/* The commit kernel ID was built from (malloc'd), or NULL when there is none. */
char *kernel_commit(struct db *db, int64_t id);

/*
 * The kernel WHAT names: its id, its key, or a prefix of its key of 8 or
 * more digits. 1 with OUT filled, 0 none, 2 several (ambiguous), -1 on an
 * error.
 */
int kernel_find(struct db *db, const char *what, struct kernel_row *out);

/* Call FN with every kernel in id order; stops at FN's first nonzero, which it returns. 0, or -1 on an error. */
int kernels_each(struct db *db, int (*fn)(const struct kernel_row *k, void *data), void *data);

/* The id of the kernel of KEY (any state, or in state 'ok' only when OK): 1 with *ID, 0 none, -1. */
int kernel_id_by_key(struct db *db, const char *key, int ok, int64_t *id);

/*
 * The row of a build starting: the row of KEY made 'building' again (a
 * failed or stale one) or a new one, with these columns and the series
 * (0: none). *ID is its id. 0, or -1.
 */
int kernel_start(struct db *db, const char *key, const char *tree, const char *commit, const char *variant,
		 const char *compiler, const char *artifact_dir, double created, int64_t series_id, int64_t *id);

/* Kernel ID failed: state 'failed', its error and apply log (JSON). 0, or -1. */
int kernel_set_failed(struct db *db, int64_t id, const char *msg, const char *apply_log);

/*
 * Kernel ID is built: state 'ok' and what the build found. ARTIFACT_DIR
 * NULL keeps the row's folder; CCACHE_STATS may be NULL. 0, or -1.
 */
int kernel_set_ok(struct db *db, int64_t id, const char *release, const char *build_id, const char *artifact_dir,
		  const char *config_sha256, const char *apply_log, double duration_s, const char *ccache_stats);

/* A kernel as `klab kernels gc` weighs it: used when a job side, a boot or a run names it. */
struct kernel_use {
	int64_t id;
	const char *artifact_dir;	/* NULL when none */
	const char *state;
	double created;
	int used;
};

/* Call FN with every kernel and whether it is used; stops at FN's first nonzero, which it returns. 0, or -1. */
int kernels_use_each(struct db *db, int (*fn)(const struct kernel_use *u, void *data), void *data);

/* Remove the row of kernel ID. 0, or -1. */
int kernel_delete(struct db *db, int64_t id);

#endif
