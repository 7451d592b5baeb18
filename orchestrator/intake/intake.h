/* intake.h: patch intake without privilege: fetching and parsing a series in the sandbox, the series handed back as JSON. */
#ifndef KLAB_INTAKE_H
#define KLAB_INTAKE_H

#include <json-c/json.h>

#include "conf/conf.h"
#include "intake/series.h"

/*
 * series_load() of SOURCE, done by a helper process: `klab series show
 * --intake --json SOURCE...` run in the sandbox of CFG (sandbox.h) as the
 * sandbox user, with the host's network only when a source is fetched
 * (lore, patchwork). klab itself opens the files a source names (and its
 * standard input for "-"), with its own rights and from its own working
 * folder, and hands their bytes to the helper on its standard input
 * (privilege separation, as OpenBSD's daemons do it): no input path is
 * bound into the sandbox, and the helper program itself runs through a
 * descriptor klab opened. The mail is parsed there; klab reads back only the
 * helper's JSON (series_to_json(s, 1)), checked field by field. The helper's
 * messages (errors naming the source) are passed on to stderr. A file that
 * cannot be read fails here, before the helper runs. With [lab] sandbox =
 * none it is series_load() in this process.
 * 0 (*out set; series_free) or -1 (logged).
 */
int series_load_sandboxed(const struct klab_config *cfg, const char *source, const struct series_opts *opts,
			  struct series **out);

/*
 * The helper's side of the hand-over: IN (LEN bytes, its standard input)
 * split into the texts of its N sources (TEXTS[i].text points into IN;
 * NULL for a source it fetches). 0, or -1 when IN is not what klab sends
 * (logged).
 */
int intake_read_texts(const char *in, size_t len, size_t n, struct series_text *texts);

/* The series of series_to_json(s, 1)'s JSON: 0, or -1 with ERR naming WHAT and the field (NULL: logged). */
int intake_from_json(struct json_object *o, const char *what, struct series **out, struct buf *err);

#endif
