/* html.c: the one HTML escaping function, safe hrefs, and the template fill for web-static/. */
#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "report/html.h"
#include "log.h"

#ifndef KLAB_SRCDIR
#define KLAB_SRCDIR "."
#endif

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if it is not valid. */
static size_t utf8_len(const unsigned char *s, size_t avail)
{
	unsigned c = s[0];
	size_t n, i;
	unsigned cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2; cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3; cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4; cp = c & 0x07;
	} else {
		return 0;
	}
	if (avail < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

void html_escape_n(struct buf *b, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, n;

	if (!s)
		return;
	while (i < len) {
		unsigned char c = p[i];

		switch (c) {
		case '&': buf_addstr(b, "&amp;"); i++; continue;
		case '<': buf_addstr(b, "&lt;"); i++; continue;
		case '>': buf_addstr(b, "&gt;"); i++; continue;
		case '"': buf_addstr(b, "&quot;"); i++; continue;
		case '\'': buf_addstr(b, "&#39;"); i++; continue;
		case '\t': case '\n': buf_addch(b, c); i++; continue;
		default: break;
		}
		if (c < 0x20 || c == 0x7f) {
			buf_addstr(b, "\xef\xbf\xbd");
			i++;
			continue;
		}
		n = utf8_len(p + i, len - i);
		if (!n) {
			buf_addstr(b, "\xef\xbf\xbd");
			i++;
			continue;
		}
		buf_add(b, p + i, n);
		i += n;
	}
}

void html_escape(struct buf *b, const char *s)
{
	if (s)
		html_escape_n(b, s, strlen(s));
}

void html_escapef(struct buf *b, const char *fmt, ...)
{
	struct buf t = BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	buf_vaddf(&t, fmt, ap);
	va_end(ap);
	html_escape_n(b, t.buf, t.len);
	buf_release(&t);
}

int html_url(struct buf *b, const char *url)
{
	const char *p;
	size_t i, n;

	if (!url || !*url) {
		buf_addch(b, '#');
		return 0;
	}
	/* Browsers ignore these in a scheme ("java\tscript:"), so do we. */
	for (p = url; *p; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			buf_addch(b, '#');
			return 0;
		}
	}
	n = strcspn(url, ":/?#");
	if (url[n] == ':') {
		static const char *const ok_schemes[] = { "http", "https", "mailto" };
		int ok = 0;

		for (i = 0; i < ARRAY_SIZE(ok_schemes); i++)
			if (strlen(ok_schemes[i]) == n && !strncasecmp(url, ok_schemes[i], n))
				ok = 1;
		if (!ok) {
			buf_addch(b, '#');
			return 0;
		}
	}
	html_escape(b, url);
	return 1;
}

int html_fill(struct buf *out, const char *tmpl, const char *what,
	      const struct html_var *vars, size_t n_vars)
{
	const char *p = tmpl, *open, *close;
	size_t i, len;

	while ((open = strstr(p, "{{"))) {
		buf_add(out, p, (size_t)(open - p));
		close = strstr(open + 2, "}}");
		if (!close)
			return error("template '%s': '{{' without '}}'", what);
		len = (size_t)(close - open - 2);
		for (i = 0; i < n_vars; i++)
			if (strlen(vars[i].name) == len && !memcmp(vars[i].name, open + 2, len))
				break;
		if (i == n_vars)
			return error("template '%s': unknown placeholder '{{%.*s}}'",
				     what, (int)(len > 64 ? 64 : len), open + 2);
		if (vars[i].raw)
			buf_addstr(out, vars[i].value ? vars[i].value : "");
		else
			html_escape(out, vars[i].value);
		p = close + 2;
	}
	buf_addstr(out, p);
	return 0;
}

static int is_static_dir(const char *dir)
{
	char *f = xasprintf("%s/style.css", dir);
	int ok = file_exists(f);

	free(f);
	return ok;
}

const char *html_static_dir(void)
{
	static char *found;
	static const char *const fixed[] = {
		KLAB_SRCDIR "/web-static",
		"/usr/local/share/klab/web-static",
		"/usr/share/klab/web-static",
	};
	const char *env = getenv("KLAB_WEB_STATIC");
	char exe[PATH_MAX];
	ssize_t n;
	size_t i;

	if (env && *env)
		return is_static_dir(env) ? env : NULL;
	if (found)
		return found;
	/* An installed klab: BINDIR/../share/klab/web-static. */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		char *slash, *cand;

		exe[n] = 0;
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = 0;
			cand = xasprintf("%s/../share/klab/web-static", exe);
			if (is_static_dir(cand)) {
				found = cand;
				return found;
			}
			free(cand);
		}
	}
	for (i = 0; i < ARRAY_SIZE(fixed); i++) {
		if (is_static_dir(fixed[i])) {
			found = xstrdup(fixed[i]);
			return found;
		}
	}
	return NULL;
}

int html_load_static(struct buf *out, const char *name)
{
	const char *dir = html_static_dir();
	char *path;
	int ret;

	if (!dir)
		return error("cannot find the web-static folder (set KLAB_WEB_STATIC)");
	path = xasprintf("%s/%s", dir, name);
	ret = buf_read_file(out, path);
	free(path);
	return ret;
}
