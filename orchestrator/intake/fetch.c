/* fetch.c: libcurl downloads for patch intake (lore thread mboxes, patchwork series). */
#include <ctype.h>
#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "intake/fetch.h"
#include "jsonh.h"
#include "log.h"
#include "run.h"
#include "util.h"

#define FETCH_CAP (64u << 20)
#define DEFAULT_LORE "https://lore.kernel.org/all"
#define DEFAULT_PATCHWORK "https://patchwork.kernel.org"

static int curl_ready;

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *ud)
{
	struct buf *b = ud;
	size_t n = size * nmemb;

	if (buf_add(b, ptr, n) < 0)
		return 0;	/* over the cap: abort the transfer */
	return n;
}

static long default_timeout(long timeout_ms)
{
	const char *e = getenv("KLAB_FETCH_TIMEOUT");
	long ms;

	if (timeout_ms > 0)
		return timeout_ms;
	if (e && *e && parse_duration_ms(e, &ms) == 0 && ms > 0)
		return ms;
	return 60000;
}

static const char *http_reason(long code)
{
	switch (code) {
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 410: return "Gone";
	case 429: return "Too Many Requests";
	case 500: return "Internal Server Error";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	}
	return "error";
}

int fetch_url(const char *url, long timeout_ms, struct buf *out)
{
	CURL *c;
	CURLcode rc;
	char errbuf[CURL_ERROR_SIZE] = "";
	long code = 0, tmo = default_timeout(timeout_ms);
	int ret = -1;

	if (!curl_ready) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
			return error("cannot fetch '%s': libcurl did not initialise", url);
		curl_ready = 1;
	}
	c = curl_easy_init();
	if (!c)
		return error("cannot fetch '%s': libcurl did not initialise", url);
	buf_set_cap(out, FETCH_CAP);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(c, CURLOPT_MAXREDIRS, 8L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, tmo);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, tmo < 15000 ? tmo : 15000L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "klab/" KLAB_VERSION);
	curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");	/* transfer compression, decoded by libcurl */
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	rc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	if (rc == CURLE_OPERATION_TIMEDOUT) {
		error("cannot fetch '%s': timed out after %ld s", url, (tmo + 999) / 1000);
		goto out;
	}
	if (rc == CURLE_WRITE_ERROR && out->truncated) {
		error("cannot fetch '%s': larger than %u MiB", url, FETCH_CAP >> 20);
		goto out;
	}
	if (rc == CURLE_TOO_MANY_REDIRECTS) {
		error("cannot fetch '%s': more than 8 redirects", url);
		goto out;
	}
	if (rc != CURLE_OK) {
		error("cannot fetch '%s': %s", url, *errbuf ? errbuf : curl_easy_strerror(rc));
		goto out;
	}
	if (code >= 400) {
		error("cannot fetch '%s': HTTP %ld %s", url, code, http_reason(code));
		goto out;
	}
	ret = 0;
out:
	buf_set_cap(out, 0);
	curl_easy_cleanup(c);
	return ret;
}

int fetch_gunzip(struct buf *data, const char *what)
{
	static const char *const argv[] = { "gzip", "-dc", NULL };
	struct run_cmd cmd = RUN_CMD_INIT;
	int ret = -1;

	if (data->len < 2 || (unsigned char)data->buf[0] != 0x1f || (unsigned char)data->buf[1] != 0x8b)
		return 0;
	cmd.argv = argv;
	cmd.in = data->buf;
	cmd.in_len = data->len;
	cmd.timeout_ms = 60000;
	if (run_command(&cmd) < 0)
		goto out;
	if (cmd.status != 0) {
		buf_rtrim(&cmd.err);
		error("%s: cannot gunzip: %s%s%s", what, run_describe(&cmd),
		      cmd.err.len ? ": " : "", cmd.err.buf);
		goto out;
	}
	buf_reset(data);
	buf_add(data, cmd.out.buf, cmd.out.len);
	ret = 0;
out:
	run_release(&cmd);
	return ret;
}

/* Strip trailing slashes of a base URL into a new string. */
static char *base_url(const char *base, const char *env, const char *def)
{
	const char *b = base;
	size_t n;

	if (!b || !*b)
		b = getenv(env);
	if (!b || !*b)
		b = def;
	n = strlen(b);
	while (n && b[n - 1] == '/')
		n--;
	return xstrndup(b, n);
}

/* Percent-encode a Message-ID for a URL path ('@' and unreserved bytes kept). */
static void add_escaped(struct buf *b, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (isalnum(c) || strchr("-._~@!$&'()*+,;=:", c))
			buf_addch(b, c);
		else
			buf_addf(b, "%%%02X", c);
	}
}

int fetch_lore_thread(const char *base, const char *msgid, long timeout_ms, struct buf *mbox,
		      char **url)
{
	char *b = base_url(base, "KLAB_LORE_URL", DEFAULT_LORE);
	struct buf u = BUF_INIT;
	size_t n;
	int ret = -1;

	while (*msgid == '<' || isspace((unsigned char)*msgid))
		msgid++;
	n = strlen(msgid);
	while (n && (msgid[n - 1] == '>' || isspace((unsigned char)msgid[n - 1])))
		n--;
	if (!n || !memchr(msgid, '@', n)) {
		error("invalid Message-ID '%s': expected something like <id@host>", msgid);
		goto out;
	}
	{
		char *id = xstrndup(msgid, n);

		buf_addf(&u, "%s/", b);
		add_escaped(&u, id);
		buf_addstr(&u, "/t.mbox.gz");
		free(id);
	}
	if (fetch_url(u.buf, timeout_ms, mbox) < 0)
		goto out;
	if (fetch_gunzip(mbox, u.buf) < 0)
		goto out;
	if (url)
		*url = xstrdup(u.buf);
	ret = 0;
out:
	free(b);
	buf_release(&u);
	return ret;
}

int fetch_patchwork_series(const char *base, const char *id, long timeout_ms, struct buf *mbox,
			   char **url)
{
	char *b = base_url(base, "KLAB_PATCHWORK_URL", DEFAULT_PATCHWORK);
	char *api = NULL;
	struct buf js = BUF_INIT;
	struct json_object *o = NULL;
	const char *m = NULL;
	long n;
	int ret = -1;

	if (parse_long(id, 1, 1L << 40, &n) < 0) {
		error("invalid patchwork series id '%s': expected a positive number", id);
		goto out;
	}
	api = xasprintf("%s/api/series/%ld/", b, n);
	if (fetch_url(api, timeout_ms, &js) < 0)
		goto out;
	o = json_parse(js.buf, js.len, api);
	if (!o)
		goto out;
	if (json_get_str(o, "mbox", &m, api) != 0 || !m || !*m) {
		error("patchwork series %ld at '%s': no \"mbox\" URL in the answer", n, api);
		goto out;
	}
	if (fetch_url(m, timeout_ms, mbox) < 0)
		goto out;
	if (fetch_gunzip(mbox, m) < 0)
		goto out;
	if (url)
		*url = xstrdup(m);
	ret = 0;
out:
	if (o)
		json_object_put(o);
	free(api);
	free(b);
	buf_release(&js);
	return ret;
}
