/* pw_api.c: the Patchwork REST API over libcurl (watch/pw_api.h). */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "jsonh.h"
#include "log.h"
#include "util.h"
#include "watch/pw_api.h"

#define PW_CAP (64u << 20)

static int curl_ready;

int pw_api_open(struct pw_api *a, const char *base, const char *token_file, long timeout_ms)
{
	struct buf tok = BUF_INIT;
	struct stat st;
	int fd = -1, ret = -1;
	char *nl;

	memset(a, 0, sizeof(*a));
	a->base = xstrdup(base);
	while (*a->base && a->base[strlen(a->base) - 1] == '/')
		a->base[strlen(a->base) - 1] = 0;
	a->timeout_ms = timeout_ms > 0 ? timeout_ms : 30000;
	a->tries = 5;
	a->backoff_ms = 1000;
	if (!curl_ready) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
			return error("patchwork '%s': libcurl did not initialise", base);
		curl_ready = 1;
	}
	if (!token_file || !*token_file)
		return 0;
	fd = open(token_file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		error("cannot read the patchwork token file '%s': %s", token_file, strerror(errno));
		goto out;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		error("the patchwork token file '%s' is not a regular file", token_file);
		goto out;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		error("the patchwork token file '%s' belongs to uid %u: it must be root's", token_file,
		      (unsigned)st.st_uid);
		goto out;
	}
	if (st.st_mode & 077) {
		error("the patchwork token file '%s' is readable by others (mode %04o): chmod 600 it", token_file,
		      (unsigned)(st.st_mode & 07777));
		goto out;
	}
	if (buf_read_fd(&tok, fd) < 0) {
		error("cannot read the patchwork token file '%s'", token_file);
		goto out;
	}
	if ((nl = strchr(tok.buf, '\n')))
		*nl = 0;
	buf_setlen(&tok, strlen(tok.buf));
	buf_trim(&tok);
	if (!tok.len || strspn(tok.buf, "0123456789abcdefABCDEF") != tok.len) {
		error("the patchwork token file '%s' does not hold a token (one line of hex digits)", token_file);
		goto out;
	}
	a->auth = xasprintf("Authorization: Token %s", tok.buf);
	ret = 0;
out:
	if (tok.buf)
		explicit_bzero(tok.buf, tok.alloc);
	buf_release(&tok);
	if (fd >= 0)
		close(fd);
	return ret;
}

void pw_api_close(struct pw_api *a)
{
	if (a->auth) {
		explicit_bzero(a->auth, strlen(a->auth));
		free(a->auth);
	}
	free(a->base);
	memset(a, 0, sizeof(*a));
}

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *ud)
{
	struct buf *b = ud;
	size_t n = size * nmemb;

	if (buf_add(b, ptr, n) < 0)
		return 0;	/* over the cap: abort the transfer */
	return n;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * The fields a 4xx answer names: Django REST framework answers
 * {"field": ["message", ...], ...} or {"detail": "message"}. Into MSG as
 * "field: message; field: message" (cut at 300 bytes), else the body's
 * first line.
 */
static void refusal(const struct buf *body, struct buf *msg)
{
	struct json_object *o = body->len ? json_tokener_parse(body->buf) : NULL;

	if (o && json_object_is_type(o, json_type_object)) {
		json_object_object_foreach(o, key, val) {
			const char *v;

			if (json_object_is_type(val, json_type_array) && json_object_array_length(val))
				val = json_object_array_get_idx(val, 0);
			v = json_object_is_type(val, json_type_string) ? json_object_get_string(val)
								       : json_object_to_json_string(val);
			buf_addf(msg, "%s%s: %s", msg->len ? "; " : "", key, v);
			if (msg->len > 300)
				break;
		}
	} else if (body->len) {
		buf_add(msg, body->buf, strcspn(body->buf, "\n") < 200 ? strcspn(body->buf, "\n") : 200);
	}
	if (msg->len > 300) {
		buf_setlen(msg, 300);
		buf_addstr(msg, "...");
	}
	json_object_put(o);
}

/*
 * One request, with up to TRIES attempts: METHOD "GET" or "POST" (BODY as
 * JSON). OUT gets the answer's body. *CODE the last HTTP status. Returns 0
 * for a 2xx, -1 for a 4xx or another answer that retrying will not change
 * (MSG gets why), PW_API_TRANSIENT after every try failed on a 5xx, 429 or
 * the transport: logged as an error when TRIES is a->tries, else MSG gets
 * why and the caller decides (a POST looks before it tries again).
 */
static int request(struct pw_api *a, int tries, const char *method, const char *url_in, const char *body,
		   struct buf *out, long *code, struct buf *msg)
{
	char *url = url_in[0] == '/' ? xasprintf("%s%s", a->base, url_in) : xstrdup(url_in);
	long backoff = a->backoff_ms;
	int ret = PW_API_TRANSIENT;
	struct buf why = BUF_INIT;

	for (int attempt = 1; attempt <= tries; attempt++) {
		CURL *c = curl_easy_init();
		struct curl_slist *h = NULL;
		char errbuf[CURL_ERROR_SIZE] = "";
		CURLcode rc;

		if (!c) {
			ret = error("patchwork: libcurl did not initialise");
			break;
		}
		a->requests++;
		if (attempt > 1)
			a->retries++;
		buf_reset(out);
		buf_set_cap(out, PW_CAP);
		h = curl_slist_append(h, "Accept: application/json");
		if (a->auth)
			h = curl_slist_append(h, a->auth);
		if (body)
			h = curl_slist_append(h, "Content-Type: application/json");
		curl_easy_setopt(c, CURLOPT_URL, url);
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
		curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
		curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
		curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
		curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);	/* the token goes to the configured host only */
		curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, a->timeout_ms);
		curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, a->timeout_ms < 15000 ? a->timeout_ms : 15000L);
		curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(c, CURLOPT_USERAGENT, "klab/" KLAB_VERSION);
		curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
		if (body) {
			curl_easy_setopt(c, CURLOPT_POST, 1L);
			curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		}
		rc = curl_easy_perform(c);
		*code = 0;
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, code);
		curl_slist_free_all(h);
		curl_easy_cleanup(c);
		buf_set_cap(out, 0);
		buf_reset(&why);
		if (rc == CURLE_OK && *code >= 200 && *code < 300) {
			ret = 0;
			break;
		}
		if (rc == CURLE_OK && *code >= 400 && *code < 500 && *code != 429 && *code != 408) {
			buf_addf(&why, "HTTP %ld", *code);
			if (msg) {
				buf_reset(msg);
				refusal(out, msg);
			}
			ret = -1;
			break;
		}
		if (rc == CURLE_OK && *code >= 300 && *code < 400) {
			error("patchwork %s '%s': HTTP %ld (a redirect, not followed with the token)", method, url, *code);
			ret = -1;
			break;
		}
		if (rc == CURLE_OPERATION_TIMEDOUT)
			buf_addf(&why, "timed out after %ld ms", a->timeout_ms);
		else if (rc != CURLE_OK)
			buf_addstr(&why, *errbuf ? errbuf : curl_easy_strerror(rc));
		else
			buf_addf(&why, "HTTP %ld", *code);
		if (attempt < tries) {
			log_msg(LOG_WARNING, "patchwork %s '%s': %s; trying again in %ld ms (attempt %d of %d)", method,
				url, why.buf, backoff, attempt + 1, tries);
			sleep_ms(backoff);
			backoff *= 2;
		} else if (tries < a->tries) {
			if (msg) {
				buf_reset(msg);
				buf_addstr(msg, why.buf);
			}
		} else {
			error("patchwork %s '%s': %s after %d attempts; the next poll tries again", method, url,
			      why.buf, a->tries);
		}
	}
	if (ret == -1 && msg && !msg->len)
		buf_addstr(msg, why.buf);
	buf_release(&why);
	free(url);
	return ret;
}

int pw_api_get(struct pw_api *a, const char *url, struct buf *out)
{
	long code;
	struct buf msg = BUF_INIT;
	int rc = request(a, a->tries, "GET", url, NULL, out, &code, &msg);

	if (rc == -1 && code)
		error("patchwork GET '%s%s': HTTP %ld: %s", url[0] == '/' ? a->base : "", url, code, msg.buf);
	buf_release(&msg);
	return rc;
}

int pw_api_get_json(struct pw_api *a, const char *url, struct json_object **out)
{
	struct buf b = BUF_INIT;
	char what[512];
	int rc = pw_api_get(a, url, &b);

	*out = NULL;
	if (rc == 0) {
		snprintf(what, sizeof(what), "patchwork GET '%s%s'", url[0] == '/' ? a->base : "", url);
		*out = json_parse(b.buf, b.len, what);
		if (!*out)
			rc = -1;
	}
	buf_release(&b);
	return rc;
}

int pw_api_post_check(struct pw_api *a, int64_t patch_id, const char *state, const char *context,
		      const char *description, const char *target_url, struct buf *err)
{
	struct json_object *o = json_object_new_object();
	struct buf out = BUF_INIT, msg = BUF_INIT;
	char path[128];
	long code = 0, backoff = a->backoff_ms;
	int rc, found;

	json_object_object_add(o, "state", json_object_new_string(state));
	json_object_object_add(o, "context", json_object_new_string(context));
	json_object_object_add(o, "description", json_object_new_string(description));
	if (target_url)
		json_object_object_add(o, "target_url", json_object_new_string(target_url));
	snprintf(path, sizeof(path), "/api/1.3/patches/%lld/checks/", (long long)patch_id);
	/*
	 * A POST that timed out (or was answered 5xx by a proxy) may have
	 * reached the server all the same: before each retry, look for the
	 * check on the server, so that a slow server gets each check once.
	 */
	for (int attempt = 1;; attempt++) {
		rc = request(a, 1, "POST", path, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), &out, &code,
			     &msg);
		if (rc != PW_API_TRANSIENT)
			break;
		if (attempt >= a->tries) {
			error("patchwork POST '%s%s': %s after %d attempts; the next poll tries again", a->base, path,
			      msg.buf, attempt);
			break;
		}
		log_msg(LOG_WARNING, "patchwork POST '%s%s': %s; looking for the check on the server in %ld ms before "
			"trying again (attempt %d of %d)", a->base, path, msg.buf, backoff, attempt + 1, a->tries);
		sleep_ms(backoff);
		backoff *= 2;
		a->retries++;
		found = pw_api_has_check(a, patch_id, context, state);
		if (found == 1) {
			log_msg(LOG_NOTICE, "patchwork: the '%s' check of patch %lld is on the server: the post that "
				"got no answer went through; not posted again", state, (long long)patch_id);
			rc = 0;
			break;
		}
		if (found) {	/* cannot look: posting blindly could post twice */
			rc = found;
			code = 0;
			buf_reset(&msg);
			buf_addstr(&msg, "a post got no answer and the server's checks could not be read; not posted "
				   "again blindly");
			break;
		}
	}
	if (rc == -1) {
		if (code)
			error("patchwork refused the '%s' check of patch %lld (POST '%s%s'): HTTP %ld: %s", state,
			      (long long)patch_id, a->base, path, code, msg.buf);
		if (err) {
			buf_reset(err);
			if (code)
				buf_addf(err, "HTTP %ld: ", code);
			buf_addstr(err, msg.buf);
		}
	} else if (rc == PW_API_TRANSIENT && err) {
		buf_reset(err);
		buf_addstr(err, "the server did not answer (5xx or timeout)");
	}
	buf_release(&out);
	buf_release(&msg);
	json_object_put(o);
	return rc;
}

int pw_api_has_check(struct pw_api *a, int64_t patch_id, const char *context, const char *state)
{
	struct json_object *arr = NULL;
	char path[160];
	int rc, found = 0;

	snprintf(path, sizeof(path), "/api/1.3/patches/%lld/checks/?per_page=250", (long long)patch_id);
	rc = pw_api_get_json(a, path, &arr);
	if (rc)
		return rc;
	if (!json_object_is_type(arr, json_type_array)) {
		json_object_put(arr);
		return error("patchwork GET '%s%s': not a JSON array", a->base, path);
	}
	for (size_t i = 0; i < json_object_array_length(arr) && !found; i++) {
		struct json_object *c = json_object_array_get_idx(arr, i);
		const char *ctx = NULL, *st = NULL;

		if (json_get_str(c, "context", &ctx, "patchwork check") == 0 && json_get_str(c, "state", &st, "patchwork check") == 0)
			found = !strcmp(ctx, context) && !strcmp(st, state);
	}
	json_object_put(arr);
	return found;
}
