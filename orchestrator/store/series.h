/*
 * series.h: the stored patch series (tables series, patches, expectations,
 * proposals): rows in, rows out. intake/series.c makes a struct series of
 * them (series_store(), series_load_db()); nothing else writes SQL on these
 * tables. `trees` belongs here too and has no SQL yet.
 */
#ifndef KLAB_STORE_SERIES_H
#define KLAB_STORE_SERIES_H

#include <stdint.h>

#include "store/db.h"

/*
 * A series row. On a write the strings are the caller's; on a read they
 * are malloc'd (series_row_release()). A NULL column is a NULL string.
 */
struct series_row {
	int64_t id;
	char *source, *source_url, *subject, *author, *date, *message_id;
	int64_t version, total;
	char *cover, *content_sha256;
	double created;
};

void series_row_release(struct series_row *r);

/* The id of the series whose diffs hash to SHA: 1 with *ID, 0 none, -1. */
int series_id_by_hash(struct db *db, const char *sha, int64_t *id);

/* Insert R (its id ignored); *ID is the new row's. 0, or -1. */
int series_insert(struct db *db, const struct series_row *r, int64_t *id);

/* The row of series ID into OUT: 1, 0 none, -1. */
int series_get(struct db *db, int64_t id, struct series_row *out);

/* A series as `klab series list` shows it: its row and how many patches and claims it has. */
struct series_item {
	const struct series_row *s;
	int64_t patches, claims;
};

/* Call FN with every series in id order (only id, subject, version, total, source, created are read). 0, or -1. */
int series_each(struct db *db, int (*fn)(const struct series_item *it, void *data), void *data);

/* A patches row (strings as in struct series_row; TRAILERS is JSON: [{tag, value, from}]). */
struct patch_row {
	int64_t seq;
	char *subject, *author, *date, *message_id, *body, *diff, *diffstat, *trailers;
};

/* Insert patch P of series SID. 0, or -1. */
int series_patch_insert(struct db *db, int64_t sid, const struct patch_row *p);

/* Call FN with the patches of series SID by seq (strings borrowed for the call). 0, or -1. */
int series_patches_each(struct db *db, int64_t sid, int (*fn)(const struct patch_row *p, void *data), void *data);

/* An expectations row: a claim of the series (NAN where a number is NULL). */
struct claim_row {
	int64_t patch_seq;
	const char *metric, *direction;	/* direction: higher, lower */
	double lo_pct, hi_pct, before, after;
	const char *unit, *text;
};

/* Insert claim C of series SID (its before and after only when before is a number). 0, or -1 (logged). */
int series_claim_insert(struct db *db, int64_t sid, const struct claim_row *c);

/*
 * Call FN with the claims of series SID (strings borrowed for the call),
 * in id order, or by patch_seq and then id when BY_PATCH. 0, or -1.
 */
int series_claims_each(struct db *db, int64_t sid, int by_patch, int (*fn)(const struct claim_row *c, void *data),
		       void *data);

/* The same for the series of job JOB_ID, in id order (-1 logged with the database's message). */
int series_job_claims_each(struct db *db, int64_t job_id, int (*fn)(const struct claim_row *c, void *data),
			   void *data);

/* A proposals row: a workload the series proposes. PARAMS is JSON: {key: value}. */
struct proposal_row {
	int64_t patch_seq;
	const char *type, *params, *command;
};

/* Insert proposal P of series SID. 0, or -1. */
int series_proposal_insert(struct db *db, int64_t sid, const struct proposal_row *p);

/* Call FN with the proposals of series SID in id order (strings borrowed for the call). 0, or -1. */
int series_proposals_each(struct db *db, int64_t sid, int (*fn)(const struct proposal_row *p, void *data),
			  void *data);

/* Call FN with each distinct workload type the series of job JOB_ID proposes. 0, or -1. */
int series_job_proposal_types(struct db *db, int64_t job_id, void (*fn)(const char *type, void *data), void *data);

#endif
