/* series.h: a patch series from an mbox file, lore or patchwork: parsed, ordered, stored. */
#ifndef KLAB_SERIES_H
#define KLAB_SERIES_H

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

#include "intake/claims.h"
#include "store/db.h"
#include "strvec.h"

struct trailer {
	char *tag;		/* "Reviewed-by" */
	char *value;		/* "Neal Cardwell <ncardwell@google.com>" */
	char *from;		/* who added it in a reply (NULL: in the patch itself) */
};

struct patch {
	int seq;		/* m of [PATCH m/N]; 1 for a single patch */
	char *subject;		/* without the [PATCH ...] prefix */
	char *raw_subject;	/* as written (NULL for a bare patch) */
	char *author;
	char *date;
	char *message_id;
	char *body;		/* commit message: text before the "---" line or the diff */
	char *diff;		/* the diff, from the first "diff --git" to the end of its last hunk */
	char *diffstat;		/* computed from the diff, git style */
	int files, insertions, deletions;
	struct trailer *trailers;
	size_t n_trailers;
};

struct series {
	char *source;		/* as given: mbox:PATH, lore:MSGID, patchwork:ID, file:PATH */
	char *source_url;	/* what was fetched (lore, patchwork), or NULL */
	char *format;		/* mbox | message | thread text | plain */
	char *subject;		/* cover letter subject, or the single patch's */
	char *author;
	char *date;
	char *message_id;
	int version;		/* N of [PATCH vN] (1 without) */
	int total;		/* N of m/N (1 without) */
	char *cover;		/* cover letter body (0/N), or NULL */
	char content_sha256[65];	/* of the diffs in order: the identity of the series */
	struct patch *patches;	/* ordered by seq */
	size_t n_patches;
	struct claim *claims;
	size_t n_claims;
	struct proposal *proposals;
	size_t n_proposals;
	struct strvec notes;	/* what the reader should know: missing patches, older versions dropped, ... */
};

/* The text of one source, read by someone else (klab, for its intake helper: intake.c). */
struct series_text {
	const char *text;		/* NULL: the source is fetched (lore, patchwork), not a file */
	size_t len;
};

struct series_opts {
	const char *subject;		/* subject of a bare patch (no mail headers) */
	const char *lore_url;		/* NULL: $KLAB_LORE_URL, else https://lore.kernel.org/all */
	const char *patchwork_url;	/* NULL: $KLAB_PATCHWORK_URL, else https://patchwork.kernel.org */
	long timeout_ms;		/* per HTTP request; 0: $KLAB_FETCH_TIMEOUT, else 60 s */
	/*
	 * NULL, or one entry per source: a file source whose entry has a text
	 * is that text (no file is opened), and a file source without one is
	 * an error; the sources are still named as given.
	 */
	const struct series_text *texts;
	size_t n_texts;
	/*
	 * non-NULL: why the series cannot be read, one line (the helper's first
	 * error, or series_load_sandboxed()'s own; also logged)
	 */
	struct buf *why;
};

/*
 * The file that SOURCE (one line of a series_load() source) reads: the
 * path without its mbox: or file: prefix, "-" for standard input; NULL
 * when the source is fetched (lore, patchwork, a bare Message-ID that is
 * not the name of a file here).
 */
const char *series_source_file(const char *src);

/*
 * Load a series from SOURCE:
 *   mbox:PATH or file:PATH or PATH   a file (mbox, format-patch, message,
 *                                    thread text, bare commit message + diff);
 *                                    "-" is standard input
 *   lore:MSGID (or a lore URL)       the thread mbox BASE/MSGID/t.mbox.gz
 *   patchwork:ID                     BASE/api/series/ID/ then its mbox
 * Several sources may be given in one string separated by newlines: their
 * messages are read as one thread (a patch file and a reply to it).
 * Messages are split and decoded; patches ordered by [PATCH vN m/N]; the
 * newest version kept; a 0/N cover letter kept as the description; replies
 * without a diff give their trailers to the patch they answer (In-Reply-To,
 * else the same subject; the cover letter: every patch); claims and
 * "Tested:" commands extracted. A source without any patch fails with a
 * message that says what it did contain.
 * 0 (*out set; free with series_free) or -1 (logged).
 */
int series_load(const char *source, const struct series_opts *opts, struct series **out);

/* Parse mail text (already read) the same way; WHAT names it in errors. */
int series_parse(const char *text, size_t len, const char *what, const char *source,
		 const struct series_opts *opts, struct series **out);

/*
 * Store the series with its patches, expectations and proposals in one
 * transaction. Idempotent: a series whose content_sha256 is already stored
 * is not stored again and its id is returned. 0 (*id set) or -1 with ERR
 * saying why (NULL: logged; the database logs its own failure either way).
 * *existed (may be NULL) says which.
 */
int series_store(struct db *db, const struct series *s, int64_t *id, int *existed, struct buf *err);

/* Load a stored series (patches, expectations, proposals) by id: 0, or -1 with ERR saying why (as series_store). */
int series_load_db(struct db *db, int64_t id, struct series **out, struct buf *err);

void series_free(struct series *s);

/*
 * The series as a JSON object: what `klab series show --json` prints, and
 * with EXACT what the intake helper answers (intake_from_json() reads it
 * back). One key set for both; EXACT gives the claims' percentages as
 * they are (NAN: null) instead of rounded to 2 decimals.
 */
struct json_object *series_to_json(const struct series *s, int exact);

/* One patch as an mbox message (From:, Subject: [PATCH m/N] ..., body, ---, diff) for git am. */
char *series_patch_mbox(const struct series *s, const struct patch *p);

#endif
