/* orch-html.c: the HTML escaping function, safe URLs and the template fill, fed hostile input. */
#include <string.h>

#include "buf.h"
#include "report/html.h"
#include "tap.h"

static char *esc(const char *s)
{
	static struct buf b = BUF_INIT;

	buf_reset(&b);
	html_escape(&b, s);
	return b.buf;
}

static char *escn(const char *s, size_t n)
{
	static struct buf b = BUF_INIT;

	buf_reset(&b);
	html_escape_n(&b, s, n);
	return b.buf;
}

static char *url(const char *s, int *kept)
{
	static struct buf b = BUF_INIT;

	buf_reset(&b);
	*kept = html_url(&b, s);
	return b.buf;
}

/* No byte that could open a tag, end an attribute or start an entity survives raw. */
static int is_inert(const char *s)
{
	for (; *s; s++) {
		if (*s == '<' || *s == '>' || *s == '"' || *s == '\'')
			return 0;
		if (*s == '&' && strncmp(s, "&amp;", 5) && strncmp(s, "&lt;", 4) &&
		    strncmp(s, "&gt;", 4) && strncmp(s, "&quot;", 6) && strncmp(s, "&#39;", 5))
			return 0;
	}
	return 1;
}

int main(void)
{
	static const char *const hostile[] = {
		"<script>alert(1)</script>",
		"\"><img src=x onerror=alert(1)>",
		"' onmouseover='alert(1)",
		"&lt;already&gt; &amp; &#x3c;",
		"<<<>>>\"\"''&&&",
		"</textarea></title></style><svg/onload=alert(1)>",
		"Ren\xc3\xa9 O'Brien & \"Sons\" <rob@example.org>",
		"\xff\xfe<\xc0\xafscript>",
	};
	struct buf b = BUF_INIT;
	int kept;
	size_t i;

	is_str(esc("plain text 123"), "plain text 123", "plain text passes");
	is_str(esc("<script>alert(1)</script>"), "&lt;script&gt;alert(1)&lt;/script&gt;", "script tag escaped");
	is_str(esc("a & b \"c\" 'd'"), "a &amp; b &quot;c&quot; &#39;d&#39;", "ampersand and quotes");
	is_str(esc("Ren\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\xa7"), "Ren\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\xa7",
	       "valid UTF-8 is kept");
	is_str(esc("a\xff" "b"), "a\xef\xbf\xbd" "b", "an invalid byte becomes U+FFFD");
	is_str(esc("\xc0\xbc"), "\xef\xbf\xbd\xef\xbf\xbd", "overlong '<' is not decoded");
	is_str(esc("\xed\xa0\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", "surrogate rejected");
	is_str(esc("\xe2\x82"), "\xef\xbf\xbd\xef\xbf\xbd", "truncated sequence rejected");
	is_str(esc("a\x01\x1b[31mb\x7f"), "a\xef\xbf\xbd\xef\xbf\xbd[31mb\xef\xbf\xbd", "control characters replaced");
	is_str(esc("tab\there\nnl"), "tab\there\nnl", "tab and newline kept");
	is_str(escn("a\0<b", 4), "a\xef\xbf\xbd&lt;b", "NUL inside a length-counted string replaced");
	is_str(esc(NULL), "", "NULL appends nothing");
	for (i = 0; i < ARRAY_SIZE(hostile); i++)
		ok(is_inert(esc(hostile[i])), "hostile input %zu is inert", i);
	buf_reset(&b);
	html_escapef(&b, "%s by %s", "<b>", "\"x\"");
	is_str(b.buf, "&lt;b&gt; by &quot;x&quot;", "html_escapef escapes the whole result");

	is_str(url("https://lore.kernel.org/r/1@x?a=1&b=2", &kept),
	       "https://lore.kernel.org/r/1@x?a=1&amp;b=2", "https URL kept, & escaped");
	ok(kept, "https URL reported kept");
	is_str(url("javascript:alert(1)", &kept), "#", "javascript: URL refused");
	ok(!kept, "javascript: reported refused");
	is_str(url("JaVaScRiPt:alert(1)", &kept), "#", "mixed-case javascript: refused");
	is_str(url("java\tscript:alert(1)", &kept), "#", "tab inside a scheme refused");
	is_str(url("data:text/html,<script>", &kept), "#", "data: URL refused");
	is_str(url("job-3.html#kpi", &kept), "job-3.html#kpi", "relative URL kept");
	is_str(url("x\"onclick=\"y", &kept), "x&quot;onclick=&quot;y", "quotes in a relative URL escaped");
	is_str(url("charts/a:b.svg", &kept), "charts/a:b.svg", "colon after a slash is not a scheme");
	is_str(url("", &kept), "#", "empty URL becomes #");

	{
		const struct html_var v[] = {
			{ "title", "<script>alert(1)</script>", 0 },
			{ "body", "<p>ok</p>", 1 },
			{ "none", NULL, 0 },
		};
		buf_reset(&b);
		ok(html_fill(&b, "<h1>{{title}}</h1>{{body}}[{{none}}]{x}", "t", v, ARRAY_SIZE(v)) == 0,
		   "template fills");
		is_str(b.buf, "<h1>&lt;script&gt;alert(1)&lt;/script&gt;</h1><p>ok</p>[]{x}",
		       "escaped and raw placeholders");
		buf_reset(&b);
		ok(html_fill(&b, "{{nope}}", "t", v, ARRAY_SIZE(v)) < 0, "unknown placeholder is an error");
		buf_reset(&b);
		ok(html_fill(&b, "a {{title", "t", v, ARRAY_SIZE(v)) < 0, "unclosed placeholder is an error");
		buf_reset(&b);
		/* a value that looks like a placeholder is not expanded again */
		const struct html_var w[] = { { "a", "{{b}}", 0 }, { "b", "<x>", 0 } };
		ok(html_fill(&b, "{{a}}", "t", w, ARRAY_SIZE(w)) == 0 && !strcmp(b.buf, "{{b}}"),
		   "values are not expanded twice");
	}
	ok(html_static_dir() != NULL, "web-static folder found");
	buf_reset(&b);
	ok(html_load_static(&b, "style.css") == 0 && b.len > 100, "style.css loads");
	buf_release(&b);
	return done_testing();
}
