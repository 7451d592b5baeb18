/* mbox.c: mail text -> decoded messages (mbox, one message, thread text, bare patch; RFC 2047, QP, base64). */
#include <ctype.h>
#include <errno.h>
#include <iconv.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base64.h"
#include "buf.h"
#include "log.h"
#include "intake/mbox.h"
#include "util.h"

#define MAX_MIME_DEPTH 4

const char *mail_format_name(enum mail_format f)
{
	switch (f) {
	case MAIL_MBOX: return "mbox";
	case MAIL_MESSAGE: return "message";
	case MAIL_THREAD_TEXT: return "thread text";
	case MAIL_PLAIN: return "plain";
	}
	return "?";
}

/* ---- small text helpers ---------------------------------------------- */

/* A line view: [s, s+len) without the newline. */
struct line {
	const char *s;
	size_t len;
};

/* Split into lines; the last line may lack a newline. */
static struct line *split_lines(const char *text, size_t len, size_t *n)
{
	size_t alloc = 64, cnt = 0, i = 0;
	struct line *v = xmalloc(alloc * sizeof(*v));

	while (i < len) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t l = nl ? (size_t)(nl - (text + i)) : len - i;

		if (cnt == alloc) {
			alloc *= 2;
			v = xrealloc(v, alloc * sizeof(*v));
		}
		v[cnt].s = text + i;
		v[cnt].len = l;
		cnt++;
		i += l + (nl ? 1 : 0);
	}
	*n = cnt;
	return v;
}

static int line_starts(const struct line *l, const char *prefix)
{
	size_t n = strlen(prefix);

	return l->len >= n && !memcmp(l->s, prefix, n);
}

static int line_blank(const struct line *l)
{
	for (size_t i = 0; i < l->len; i++)
		if (!isspace((unsigned char)l->s[i]))
			return 0;
	return 1;
}

/* "Name: value" with a token name: length of the name, else 0. */
static size_t header_name_len(const char *s, size_t len)
{
	size_t i = 0;

	while (i < len && (isalnum((unsigned char)s[i]) || s[i] == '-' || s[i] == '_'))
		i++;
	if (i == 0 || i >= len || s[i] != ':')
		return 0;
	return i;
}

/* Normalise CRLF to LF into a new buffer. */
static void crlf_to_lf(struct buf *out, const char *in, size_t len)
{
	buf_grow(out, len);
	for (size_t i = 0; i < len; i++) {
		if (in[i] == '\r' && i + 1 < len && in[i + 1] == '\n')
			continue;
		buf_addch(out, in[i]);
	}
}

/* ---- decoders ---------------------------------------------------------- */

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int mail_decode_qp(const char *in, size_t len, struct buf *out)
{
	int bad = 0;

	for (size_t i = 0; i < len; i++) {
		if (in[i] != '=') {
			buf_addch(out, in[i]);
			continue;
		}
		/* soft line break: "=" then optional white space then newline */
		size_t j = i + 1;

		while (j < len && (in[j] == ' ' || in[j] == '\t' || in[j] == '\r'))
			j++;
		if (j >= len || in[j] == '\n') {
			i = j;
			continue;
		}
		if (i + 2 < len && hexval(in[i + 1]) >= 0 && hexval(in[i + 2]) >= 0) {
			buf_addch(out, hexval(in[i + 1]) * 16 + hexval(in[i + 2]));
			i += 2;
			continue;
		}
		bad = 1;
		buf_addch(out, '=');
	}
	return bad ? -1 : 0;
}

int mail_decode_base64(const char *in, size_t len, struct buf *out)
{
	return base64_decode(out, in, len, 1);
}

static int charset_is_utf8(const char *cs)
{
	return !cs || !*cs || !strcasecmp(cs, "utf-8") || !strcasecmp(cs, "utf8") ||
	       !strcasecmp(cs, "us-ascii") || !strcasecmp(cs, "ascii");
}

/* Convert IN from CHARSET to UTF-8 into OUT: 0, or -1 (OUT untouched). */
static int to_utf8(const char *charset, const char *in, size_t len, struct buf *out)
{
	iconv_t cd;
	struct buf tmp = BUF_INIT;
	char *ip = (char *)in;
	size_t il = len;
	int ret = -1;

	if (charset_is_utf8(charset)) {
		buf_add(out, in, len);
		return 0;
	}
	cd = iconv_open("UTF-8", charset);
	if (cd == (iconv_t)-1)
		return -1;
	buf_grow(&tmp, len * 2 + 16);
	while (il > 0) {
		size_t room = tmp.alloc - tmp.len - 1;
		char *op = tmp.buf + tmp.len;
		size_t ol = room;
		size_t r = iconv(cd, &ip, &il, &op, &ol);

		tmp.len += room - ol;
		tmp.buf[tmp.len] = 0;
		if (r == (size_t)-1) {
			if (errno == E2BIG) {
				buf_grow(&tmp, len + 64);
				continue;
			}
			goto out;
		}
	}
	buf_add(out, tmp.buf, tmp.len);
	ret = 0;
out:
	iconv_close(cd);
	buf_release(&tmp);
	return ret;
}

/*
 * One encoded word at S ("=?cs?E?text?="): appends the decoded text and
 * returns its length in S, or 0 when S is not a well-formed encoded word.
 */
static size_t decode_word(const char *s, struct buf *out)
{
	const char *cs, *q1, *q2, *end;
	char *charset, *star;
	struct buf raw = BUF_INIT;
	int enc, bad = 0;

	if (s[0] != '=' || s[1] != '?')
		return 0;
	cs = s + 2;
	q1 = strchr(cs, '?');
	if (!q1 || q1 == cs || !q1[1] || q1[2] != '?')
		return 0;
	enc = toupper((unsigned char)q1[1]);
	if (enc != 'B' && enc != 'Q')
		return 0;
	q2 = q1 + 3;
	end = strstr(q2, "?=");
	if (!end)
		return 0;
	for (const char *p = q2; p < end; p++)
		if (*p == ' ' || *p == '\t' || *p == '\n')
			return 0;
	if (enc == 'B') {
		bad = mail_decode_base64(q2, end - q2, &raw) < 0;
	} else {
		for (const char *p = q2; p < end; p++) {
			if (*p == '_') {
				buf_addch(&raw, ' ');
			} else if (*p == '=' && p + 2 < end + 1 && hexval(p[1]) >= 0 && hexval(p[2]) >= 0) {
				buf_addch(&raw, hexval(p[1]) * 16 + hexval(p[2]));
				p += 2;
			} else if (*p == '=') {
				bad = 1;
				break;
			} else {
				buf_addch(&raw, *p);
			}
		}
	}
	charset = xstrndup(cs, q1 - cs);
	star = strchr(charset, '*');	/* RFC 2231 language suffix */
	if (star)
		*star = 0;
	if (!bad && to_utf8(charset, raw.buf, raw.len, out) < 0)
		bad = 1;
	free(charset);
	buf_release(&raw);
	if (bad)
		return 0;
	return (size_t)(end + 2 - s);
}

char *mail_decode_header(const char *value)
{
	struct buf unfolded = BUF_INIT, out = BUF_INIT;
	const char *p;
	int last_was_word = 0;

	/* unfold: newline + white space -> one space */
	for (p = value; *p; p++) {
		if (*p == '\r')
			continue;
		if (*p == '\n') {
			while (p[1] == ' ' || p[1] == '\t')
				p++;
			buf_addch(&unfolded, ' ');
			continue;
		}
		buf_addch(&unfolded, *p);
	}
	for (p = unfolded.buf; *p;) {
		size_t n;

		if (*p == '=' && p[1] == '?') {
			n = decode_word(p, &out);
			if (n) {
				p += n;
				last_was_word = 1;
				continue;
			}
		}
		/* white space between two encoded words is dropped */
		if (last_was_word && (*p == ' ' || *p == '\t')) {
			const char *q = p;

			while (*q == ' ' || *q == '\t')
				q++;
			if (q[0] == '=' && q[1] == '?') {
				struct buf probe = BUF_INIT;
				size_t m = decode_word(q, &probe);

				buf_release(&probe);
				if (m) {
					p = q;
					continue;
				}
			}
		}
		last_was_word = 0;
		buf_addch(&out, *p++);
	}
	buf_release(&unfolded);
	buf_trim(&out);
	return buf_detach(&out, NULL);
}

/* ---- headers ------------------------------------------------------------- */

struct hdrs {
	char *subject, *from, *date, *message_id, *in_reply_to, *references;
	char *content_type, *cte;
};

static void hdrs_free(struct hdrs *h)
{
	free(h->subject);
	free(h->from);
	free(h->date);
	free(h->message_id);
	free(h->in_reply_to);
	free(h->references);
	free(h->content_type);
	free(h->cte);
	memset(h, 0, sizeof(*h));
}

/* "<a@b>" -> "a@b" (first bracketed id, else the trimmed value). */
static char *strip_msgid(const char *v)
{
	const char *lt = strchr(v, '<'), *gt;

	if (lt && (gt = strchr(lt, '>')) && gt > lt + 1)
		return xstrndup(lt + 1, gt - lt - 1);
	while (isspace((unsigned char)*v))
		v++;
	size_t n = strlen(v);

	while (n && isspace((unsigned char)v[n - 1]))
		n--;
	return n ? xstrndup(v, n) : NULL;
}

static void set_header(struct hdrs *h, const char *name, size_t nlen, const char *raw)
{
	char **slot = NULL;
	int msgid = 0;

#define IS(s) (nlen == strlen(s) && !strncasecmp(name, s, nlen))
	if (IS("Subject"))
		slot = &h->subject;
	else if (IS("From"))
		slot = &h->from;
	else if (IS("Date"))
		slot = &h->date;
	else if (IS("Message-ID"))
		slot = &h->message_id, msgid = 1;
	else if (IS("In-Reply-To"))
		slot = &h->in_reply_to, msgid = 1;
	else if (IS("References"))
		slot = &h->references;
	else if (IS("Content-Type"))
		slot = &h->content_type;
	else if (IS("Content-Transfer-Encoding"))
		slot = &h->cte;
#undef IS
	if (!slot || *slot)
		return;		/* first one wins */
	if (msgid) {
		*slot = strip_msgid(raw);
	} else {
		char *d = mail_decode_header(raw);

		if (*d)
			*slot = d;
		else
			free(d);
	}
}

/*
 * Parse the header block starting at line *i (up to the first blank line
 * or a line that is not a header). Leaves *i at the first body line.
 */
static void parse_headers(const struct line *l, size_t n, size_t *i, struct hdrs *h)
{
	struct buf val = BUF_INIT;
	const char *name = NULL;
	size_t nlen = 0;

	while (*i < n) {
		const struct line *cur = &l[*i];
		size_t hl;

		if (cur->len == 0)
			break;
		if ((cur->s[0] == ' ' || cur->s[0] == '\t') && name) {
			buf_addch(&val, '\n');
			buf_add(&val, cur->s, cur->len);
			(*i)++;
			continue;
		}
		hl = header_name_len(cur->s, cur->len);
		if (!hl)
			break;
		if (name)
			set_header(h, name, nlen, val.buf);
		name = cur->s;
		nlen = hl;
		buf_reset(&val);
		buf_add(&val, cur->s + hl + 1, cur->len - hl - 1);
		(*i)++;
	}
	if (name)
		set_header(h, name, nlen, val.buf);
	if (*i < n && l[*i].len == 0)
		(*i)++;
	buf_release(&val);
}

/* A parameter of a Content-Type value ("charset", "boundary"): new string or NULL. */
static char *ct_param(const char *ct, const char *param)
{
	size_t pl = strlen(param);

	for (const char *p = ct; p && (p = strchr(p, ';')); ) {
		p++;
		while (isspace((unsigned char)*p))
			p++;
		if (!strncasecmp(p, param, pl) && p[pl] == '=') {
			const char *v = p + pl + 1, *e;

			if (*v == '"') {
				v++;
				e = strchr(v, '"');
				if (!e)
					e = v + strlen(v);
			} else {
				e = v;
				while (*e && *e != ';' && !isspace((unsigned char)*e))
					e++;
			}
			return xstrndup(v, e - v);
		}
	}
	return NULL;
}

/* ---- bodies ---------------------------------------------------------------- */

/*
 * Decode the body [start,end) of lines with the given Content-Type and
 * transfer encoding into OUT (text parts only). -1 with a message in ERR.
 */
static int decode_body(const struct line *l, size_t start, size_t end, const char *ct,
		       const char *cte, int depth, struct buf *out, struct buf *err, int *errline,
		       int *body_line)
{
	size_t out_before = out->len;

	struct buf raw = BUF_INIT, dec = BUF_INIT;
	char *charset = NULL, *boundary = NULL;
	int ret = -1;

	if (ct && !strncasecmp(ct, "multipart/", 10)) {
		size_t i, part = 0, bl;
		int in_part = 0;

		boundary = ct_param(ct, "boundary");
		if (!boundary || depth >= MAX_MIME_DEPTH) {
			buf_addf(err, boundary ? "MIME parts nested too deeply" :
				 "multipart message without a boundary");
			*errline = (int)start + 1;
			goto out;
		}
		bl = strlen(boundary);
		for (i = start; i < end; i++) {
			int is_b = l[i].len >= bl + 2 && l[i].s[0] == '-' && l[i].s[1] == '-' &&
				   !memcmp(l[i].s + 2, boundary, bl);

			if (!is_b)
				continue;
			if (in_part) {
				size_t j = part;
				struct hdrs ph = { 0 };

				parse_headers(l, i, &j, &ph);
				if (!ph.content_type || !strncasecmp(ph.content_type, "text/", 5) ||
				    !strncasecmp(ph.content_type, "multipart/", 10)) {
					if (ph.content_type && !strncasecmp(ph.content_type, "text/html", 9)) {
						hdrs_free(&ph);
					} else {
						if (out->len && out->buf[out->len - 1] != '\n')
							buf_addch(out, '\n');
						int r = decode_body(l, j, i, ph.content_type, ph.cte, depth + 1,
								    out, err, errline, body_line);

						hdrs_free(&ph);
						if (r < 0)
							goto out;
					}
				} else {
					hdrs_free(&ph);
				}
			}
			if (l[i].len >= bl + 4 && !memcmp(l[i].s + 2 + bl, "--", 2))
				break;	/* closing boundary */
			in_part = 1;
			part = i + 1;
		}
		ret = 0;
		goto out;
	}

	for (size_t i = start; i < end; i++) {
		buf_add(&raw, l[i].s, l[i].len);
		buf_addch(&raw, '\n');
	}
	if (!cte || !strcasecmp(cte, "7bit") || !strcasecmp(cte, "8bit") ||
	    !strcasecmp(cte, "binary")) {
		buf_add(&dec, raw.buf, raw.len);
		/* its lines are the input's when it is the first text of the body */
		*body_line = out_before == 0 && *body_line == 0 ? (int)start + 1 : -1;
	} else if (!strcasecmp(cte, "quoted-printable")) {
		if (mail_decode_qp(raw.buf, raw.len, &dec) < 0) {
			buf_addf(err, "malformed quoted-printable body");
			*errline = (int)start + 1;
			goto out;
		}
	} else if (!strcasecmp(cte, "base64")) {
		if (mail_decode_base64(raw.buf, raw.len, &dec) < 0) {
			buf_addf(err, "malformed base64 body");
			*errline = (int)start + 1;
			goto out;
		}
	} else {
		buf_addf(err, "unknown Content-Transfer-Encoding '%s'", cte);
		*errline = (int)start + 1;
		goto out;
	}
	if (cte && strcasecmp(cte, "7bit") && strcasecmp(cte, "8bit") && strcasecmp(cte, "binary"))
		*body_line = -1;	/* decoded: its lines are not the input's */
	charset = ct ? ct_param(ct, "charset") : NULL;
	{
		struct buf conv = BUF_INIT;

		if (to_utf8(charset, dec.buf, dec.len, &conv) < 0)
			buf_add(&conv, dec.buf, dec.len);	/* unknown charset: keep the bytes */
		crlf_to_lf(out, conv.buf, conv.len);
		buf_release(&conv);
	}
	ret = 0;
out:
	free(charset);
	free(boundary);
	buf_release(&raw);
	buf_release(&dec);
	return ret;
}

static void msg_free(struct mail_msg *m)
{
	free(m->subject);
	free(m->from);
	free(m->date);
	free(m->message_id);
	free(m->in_reply_to);
	free(m->references);
	free(m->body);
	memset(m, 0, sizeof(*m));
}

void mail_list_free(struct mail_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		msg_free(&l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

static struct mail_msg *push_msg(struct mail_list *l)
{
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	memset(&l->v[l->n], 0, sizeof(l->v[0]));
	return &l->v[l->n++];
}

/* An RFC 5322 message in lines [start,end): headers then body. */
static int parse_message(const struct line *l, size_t start, size_t end, const char *what,
			 int line_base, struct mail_list *out)
{
	struct hdrs h = { 0 };
	struct buf body = BUF_INIT, err = BUF_INIT;
	size_t i = start;
	int errline = 0, body_line = 0;
	struct mail_msg *m;

	parse_headers(l, end, &i, &h);
	if (decode_body(l, i, end, h.content_type, h.cte, 0, &body, &err, &errline, &body_line) < 0) {
		error("%s:%d: %s (message at line %zu)", what, line_base + errline, err.buf,
		      line_base ? (size_t)line_base : start + 1);
		hdrs_free(&h);
		buf_release(&body);
		buf_release(&err);
		return -1;
	}
	m = push_msg(out);
	m->subject = h.subject;
	m->from = h.from;
	m->date = h.date;
	m->message_id = h.message_id;
	m->in_reply_to = h.in_reply_to;
	m->references = h.references;
	m->body = buf_detach(&body, NULL);
	m->line = (int)start + 1;
	/* l is the whole input (line_base 0) or the message's lines after its From_ line */
	m->body_line = body_line > 0 ? line_base + body_line : 0;
	free(h.content_type);
	free(h.cte);
	buf_release(&err);
	return 0;
}

/* ---- format detection ------------------------------------------------------ */

/* "From " line of an mbox: followed by a header line. */
static int is_from_line(const struct line *l, size_t n, size_t i)
{
	if (!line_starts(&l[i], "From ") || line_starts(&l[i], "From: "))
		return 0;
	return i + 1 < n && header_name_len(l[i + 1].s, l[i + 1].len) > 0;
}

/* A header block with at least one of From/Subject/Message-ID. */
static int looks_like_message(const struct line *l, size_t n, size_t i)
{
	int known = 0;

	for (; i < n && l[i].len; i++) {
		size_t hl;

		if (l[i].s[0] == ' ' || l[i].s[0] == '\t')
			continue;
		hl = header_name_len(l[i].s, l[i].len);
		if (!hl)
			return 0;
		if ((hl == 4 && !strncasecmp(l[i].s, "From", 4)) ||
		    (hl == 7 && !strncasecmp(l[i].s, "Subject", 7)) ||
		    (hl == 10 && !strncasecmp(l[i].s, "Message-ID", 10)))
			known = 1;
	}
	return known;
}

/* "[RFC 1/2] subject" or "Re: [PATCH] subject". */
static int is_subject_line(const struct line *l)
{
	const char *s = l->s, *e = l->s + l->len, *rb;

	while (e - s >= 4 && !strncasecmp(s, "Re: ", 4))
		s += 4;
	if (s >= e || *s != '[')
		return 0;
	rb = memchr(s, ']', e - s);
	if (!rb || rb == s + 1 || rb + 2 > e || rb[1] != ' ')
		return 0;
	for (const char *p = s + 1; p < rb; p++)
		if (*p == '[')
			return 0;
	return rb + 2 < e;
}

/* "[Name <mail>]" alone on a line. */
static int is_author_line(const struct line *l)
{
	if (l->len < 3 || l->s[0] != '[' || l->s[l->len - 1] != ']')
		return 0;
	for (size_t i = 1; i + 1 < l->len; i++)
		if (l->s[i] == '[' || l->s[i] == ']')
			return 0;
	return 1;
}

/* A thread-text message starts at I: return the index of its author line, or 0. */
static size_t thread_start(const struct line *l, size_t n, size_t i)
{
	size_t j, seen = 0;

	if (!is_subject_line(&l[i]))
		return 0;
	for (j = i + 1; j < n && seen < 3; j++) {
		if (line_blank(&l[j]))
			continue;
		if (is_author_line(&l[j]))
			return j;
		if (l[j].len == l[i].len && !memcmp(l[j].s, l[i].s, l[i].len)) {
			seen++;
			continue;	/* the subject repeated */
		}
		return 0;
	}
	return 0;
}

static char *join_lines(const struct line *l, size_t start, size_t end)
{
	struct buf b = BUF_INIT;

	for (size_t i = start; i < end; i++) {
		buf_add(&b, l[i].s, l[i].len);
		buf_addch(&b, '\n');
	}
	return buf_detach(&b, NULL);
}

static void parse_thread_text(const struct line *l, size_t n, struct mail_list *out)
{
	size_t i = 0;

	while (i < n) {
		size_t a = thread_start(l, n, i), j;
		struct mail_msg *m;

		if (!a) {
			i++;
			continue;
		}
		/* the body runs until the next message start */
		for (j = a + 1; j < n && !thread_start(l, n, j); j++)
			;
		m = push_msg(out);
		m->subject = xstrndup(l[i].s, l[i].len);
		m->from = xstrndup(l[a].s + 1, l[a].len - 2);
		{
			size_t b = a + 1;

			while (b < j && line_blank(&l[b]))
				b++;
			m->body = join_lines(l, b, j);
			m->body_line = (int)b + 1;
		}
		m->line = (int)i + 1;
		i = j;
	}
}

int mail_parse(const char *text, size_t len, const char *what, struct mail_list *out)
{
	struct buf norm = BUF_INIT;
	struct line *l = NULL;
	size_t n = 0, first = 0, i;
	int ret = -1;

	memset(out, 0, sizeof(*out));
	if (memchr(text, 0, len)) {
		error("%s: binary data (a NUL byte) where mail text was expected", what);
		return -1;
	}
	crlf_to_lf(&norm, text, len);
	l = split_lines(norm.buf, norm.len, &n);
	while (first < n && line_blank(&l[first]))
		first++;
	if (first == n) {
		error("%s: empty input: no message found", what);
		goto out;
	}

	if (is_from_line(l, n, first)) {
		/* mbox: mboxrd unescaping into a second line array per message */
		size_t start = first;

		out->format = MAIL_MBOX;
		for (i = first + 1; i <= n; i++) {
			if (i < n && !is_from_line(l, n, i))
				continue;
			{
				struct buf msg = BUF_INIT;
				struct line *ml;
				size_t mn;
				int r;

				for (size_t k = start + 1; k < i; k++) {
					const char *s = l[k].s;
					size_t sl = l[k].len, q = 0;

					while (q < sl && s[q] == '>')
						q++;
					if (q > 0 && sl - q >= 5 && !memcmp(s + q, "From ", 5)) {
						s++;
						sl--;
					}
					buf_add(&msg, s, sl);
					buf_addch(&msg, '\n');
				}
				ml = split_lines(msg.buf, msg.len, &mn);
				r = parse_message(ml, 0, mn, what, (int)start + 1, out);
				if (r == 0)
					out->v[out->n - 1].line = (int)start + 1;
				free(ml);
				buf_release(&msg);
				if (r < 0)
					goto out;
			}
			start = i;
		}
		if (out->n == 0) {
			error("%s: truncated mbox: no message after the 'From ' line", what);
			goto out;
		}
	} else if (looks_like_message(l, n, first)) {
		out->format = MAIL_MESSAGE;
		if (parse_message(l, first, n, what, 0, out) < 0)
			goto out;
	} else if (thread_start(l, n, first) ||
		   (is_subject_line(&l[first]) && (i = first + 1) < n)) {
		/* thread text (a subject line first; text before the first author line is not kept) */
		out->format = MAIL_THREAD_TEXT;
		parse_thread_text(l, n, out);
		if (out->n == 0) {
			error("%s:%zu: subject line '%.*s' is not followed by a bracketed author line",
			      what, first + 1, (int)l[first].len, l[first].s);
			goto out;
		}
	} else {
		struct mail_msg *m;

		out->format = MAIL_PLAIN;
		m = push_msg(out);
		m->body = join_lines(l, first, n);
		m->line = (int)first + 1;
		m->body_line = (int)first + 1;
	}
	ret = 0;
out:
	if (ret < 0)
		mail_list_free(out);
	free(l);
	buf_release(&norm);
	return ret;
}
