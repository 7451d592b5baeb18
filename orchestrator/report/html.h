/* html.h: the one HTML escaping function, safe hrefs, and a tiny template fill for web-static/. */
#ifndef KLAB_HTML_H
#define KLAB_HTML_H

#include <stddef.h>

#include "buf.h"
#include "util.h"

/*
 * Append `s` to `b` escaped for HTML text and for attribute values in
 * double or single quotes: & < > " ' become entities; control characters
 * other than tab and newline, and bytes that are not valid UTF-8, become
 * U+FFFD. Every string that came from outside klab (patch subjects, author
 * names, host names, symbol names, anything read from the database) goes
 * through this function and no other. NULL appends nothing.
 */
void html_escape(struct buf *b, const char *s);
/* The same for `len` bytes (a NUL inside is replaced too). */
void html_escape_n(struct buf *b, const char *s, size_t len);
/* Format, then escape the whole result. */
void html_escapef(struct buf *b, const char *fmt, ...) KLAB_PRINTF(2, 3);

/*
 * Append a URL for an href or src attribute, escaped. Only http:, https:,
 * mailto: and relative URLs (no scheme) pass; anything else (javascript:,
 * data:, vbscript:, ...) is replaced by "#". Returns 1 when the URL was
 * kept, 0 when it was replaced.
 */
int html_url(struct buf *b, const char *url);

/* One template placeholder: {{name}} is replaced by value (escaped unless raw). */
struct html_var {
	const char *name;
	const char *value;	/* NULL: empty */
	int raw;		/* 1: value is HTML the caller built with html_escape() */
};

/*
 * Fill `tmpl` into `out`: every "{{name}}" is replaced by the variable of
 * that name. An unknown placeholder is an error naming WHAT (the template)
 * and the placeholder; text outside placeholders is copied as it is.
 * Returns 0 or -1 (logged).
 */
int html_fill(struct buf *out, const char *tmpl, const char *what,
	      const struct html_var *vars, size_t n_vars);

/*
 * The web-static folder: $KLAB_WEB_STATIC, else the source tree's
 * web-static (compiled in), else PREFIX/share/klab/web-static. NULL when
 * none exists (logged by the caller).
 */
const char *html_static_dir(void);
/* Read web-static/NAME into `out`: 0 or -1 (logged). */
int html_load_static(struct buf *out, const char *name);

#endif
