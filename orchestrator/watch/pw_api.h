/*
 * pw_api.h: the Patchwork REST API (version 1.3) over libcurl and json-c:
 * the GETs the watcher reads with, the POST of a check, retries with
 * backoff on 5xx and timeouts, 4xx errors that name the field.
 */
#ifndef KLAB_PW_API_H
#define KLAB_PW_API_H

#include <json-c/json.h>
#include <stdint.h>

#include "buf.h"

/*
 * A connection's settings. The token is read from a file by
 * pw_api_open() and kept only in the Authorization header's text: it is
 * never logged, printed or stored, and no error message holds it (errors
 * name URLs, which carry no token). TLS is libcurl's default: the peer's
 * certificate and host name are verified.
 */
struct pw_api {
	char *base;		/* https://host[/prefix], no trailing slash */
	char *auth;		/* "Authorization: Token ..." (NULL: anonymous, reading only) */
	long timeout_ms;	/* one request */
	int tries;		/* attempts of a request on a 5xx, 429 or transport failure */
	long backoff_ms;	/* wait before the second attempt, doubled after each */
	int requests;		/* requests made (counted for the status and the tests) */
	int retries;		/* of them, attempts after a failure */
};

/* The return of a request that failed after every retry (the server down, 5xx): try again later. */
#define PW_API_TRANSIENT (-2)

/*
 * Set up A for the instance at BASE. TOKEN_FILE (NULL: none) must be a
 * regular file owned by root or by this process's user, not readable by
 * group or others; its first line is the token. Errors name the file and
 * never its content. 0 or -1 (logged).
 */
int pw_api_open(struct pw_api *a, const char *base, const char *token_file, long timeout_ms);
/* Forget the token (its memory is cleared) and free A's strings. */
void pw_api_close(struct pw_api *a);

/*
 * GET URL (absolute, or a path starting with '/' under the base) as JSON
 * into *OUT (json_object_put). 0; -1 for an answer that is no use (a 4xx,
 * JSON that does not parse: logged, naming the URL); PW_API_TRANSIENT when
 * every attempt failed on a 5xx, 429 or the transport (logged).
 */
int pw_api_get_json(struct pw_api *a, const char *url, struct json_object **out);
/* GET URL's body as bytes into OUT (an mbox), with the same returns. */
int pw_api_get(struct pw_api *a, const char *url, struct buf *out);

/*
 * POST a check on patch PATCH_ID: {state, context, description,
 * target_url (omitted when NULL)}. 0 on 201; -1 when the server refused it
 * (4xx: the error names the fields it named, "state: \"x\" is not a valid
 * choice"), PW_API_TRANSIENT as above. ERR (may be NULL) gets the message.
 */
int pw_api_post_check(struct pw_api *a, int64_t patch_id, const char *state, const char *context,
		      const char *description, const char *target_url, struct buf *err);

/*
 * Whether patch PATCH_ID has a check of CONTEXT in STATE already (any
 * user's: the context is the lab's own): 1, 0, or -1 / PW_API_TRANSIENT.
 */
int pw_api_has_check(struct pw_api *a, int64_t patch_id, const char *context, const char *state);

#endif
