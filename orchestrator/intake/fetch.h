/* fetch.h: HTTP(S) downloads with libcurl: lore thread mboxes and patchwork series. */
#ifndef KLAB_FETCH_H
#define KLAB_FETCH_H

#include <stddef.h>

#include "buf.h"

/*
 * Get URL into OUT (capped at 64 MiB). Redirects are followed (at most 8),
 * proxies come from the usual environment variables (http_proxy,
 * https_proxy, no_proxy: libcurl's defaults), TIMEOUT_MS bounds the whole
 * transfer (0: $KLAB_FETCH_TIMEOUT, else 60 s; connecting: at most 15 s).
 * Errors name the URL and the cause: "cannot fetch 'URL': HTTP 404 Not
 * Found", "...: timed out after 2 s", "...: Could not connect to server".
 * 0 or -1 (logged).
 */
int fetch_url(const char *url, long timeout_ms, struct buf *out);

/*
 * The thread of MSGID (angle brackets optional) from a public-inbox
 * archive: BASE/MSGID/t.mbox.gz, gunzipped. BASE: NULL for $KLAB_LORE_URL,
 * else https://lore.kernel.org/all. *URL (may be NULL) gets the URL used
 * (caller frees). 0 or -1 (logged).
 */
int fetch_lore_thread(const char *base, const char *msgid, long timeout_ms, struct buf *mbox,
		      char **url);

/*
 * The mbox of patchwork series ID: BASE/api/series/ID/ (JSON) gives the
 * "mbox" URL, which is then fetched. BASE: NULL for $KLAB_PATCHWORK_URL,
 * else https://patchwork.kernel.org. *URL gets the mbox URL. 0 or -1.
 */
int fetch_patchwork_series(const char *base, const char *id, long timeout_ms, struct buf *mbox,
			   char **url);

/* Undo gzip if DATA starts with the gzip magic (via gzip -dc): 0 or -1 (logged, naming WHAT). */
int fetch_gunzip(struct buf *data, const char *what);

#endif
