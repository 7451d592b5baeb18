/* diff.c: locating and checking the diff of a patch mail: text hunks, git's extended headers, binary data, names. */
#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "buf.h"
#include "intake/diff.h"
#include "util.h"

/* Binary data is inflated to check it; more than this is refused as implausible for a patch mail. */
#define DIFF_BINARY_MAX (64L << 20)

void diff_free(struct diff *d)
{
	for (size_t i = 0; i < d->n_files; i++) {
		free(d->files[i].old_path);
		free(d->files[i].new_path);
	}
	free(d->files);
	free(d->error);
	free(d->error_file);
	memset(d, 0, sizeof(*d));
}

/* ---- names --------------------------------------------------------------------- */

int diff_path_needs_quote(const char *path)
{
	for (const unsigned char *p = (const unsigned char *)path; *p; p++)
		if (*p < 0x20 || *p == '"' || *p == '\\' || *p >= 0x7f)
			return 1;
	return 0;
}

static void add_quoted(struct buf *b, const char *path)
{
	static const char esc[] = "\a\b\t\n\v\f\r";
	static const char let[] = "abtnvfr";

	if (!diff_path_needs_quote(path)) {
		buf_addstr(b, path);
		return;
	}
	buf_addch(b, '"');
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		const char *e = *p ? strchr(esc, *p) : NULL;

		if (e)
			buf_addf(b, "\\%c", let[e - esc]);
		else if (*p == '"' || *p == '\\')
			buf_addf(b, "\\%c", *p);
		else if (*p < 0x20 || *p >= 0x7f)
			buf_addf(b, "\\%03o", *p);
		else
			buf_addch(b, *p);
	}
	buf_addch(b, '"');
}

/*
 * A C-quoted name at S ("a/x\tz"): its unquoted value, *END after the
 * closing quote. NULL when malformed (no closing quote, bad escape).
 */
static char *unquote(const char *s, size_t len, size_t *end)
{
	struct buf b = BUF_INIT;
	size_t i = 1;

	while (i < len && s[i] != '"') {
		char c = s[i++];

		if (c != '\\') {
			buf_addch(&b, c);
			continue;
		}
		if (i >= len)
			goto bad;
		c = s[i++];
		switch (c) {
		case 'a': buf_addch(&b, '\a'); break;
		case 'b': buf_addch(&b, '\b'); break;
		case 't': buf_addch(&b, '\t'); break;
		case 'n': buf_addch(&b, '\n'); break;
		case 'v': buf_addch(&b, '\v'); break;
		case 'f': buf_addch(&b, '\f'); break;
		case 'r': buf_addch(&b, '\r'); break;
		case '"': case '\\': buf_addch(&b, c); break;
		case '0': case '1': case '2': case '3': {
			int v = c - '0';

			for (int k = 0; k < 2; k++) {
				if (i >= len || s[i] < '0' || s[i] > '7')
					goto bad;
				v = v * 8 + (s[i++] - '0');
			}
			if (!v)
				goto bad;
			buf_addch(&b, v);
			break;
		}
		default:
			goto bad;
		}
	}
	if (i >= len)
		goto bad;
	*end = i + 1;
	return buf_detach(&b, NULL);
bad:
	buf_release(&b);
	return NULL;
}

/* "a/x" -> "x" (one component, as git am -p1). */
static char *strip_prefix(char *p)
{
	char *slash = p ? strchr(p, '/') : NULL;

	if (slash && slash[1])
		memmove(p, slash + 1, strlen(slash + 1) + 1);
	return p;
}

/*
 * The name of a "--- NAME" or "+++ NAME" line (the rest of the line, LEN
 * bytes): unquoted, a tab and what follows (a date) cut, the prefix
 * stripped; NULL for /dev/null. *BAD set when the quoting is broken.
 */
static char *side_name(const char *s, size_t len, int *bad)
{
	char *n;

	if (len && s[0] == '"') {
		size_t e;

		n = unquote(s, len, &e);
		if (!n) {
			*bad = 1;
			return NULL;
		}
	} else {
		const char *tab = memchr(s, '\t', len);

		n = xstrndup(s, tab ? (size_t)(tab - s) : len);
	}
	if (!strcmp(n, "/dev/null")) {
		free(n);
		return NULL;
	}
	return strip_prefix(n);
}

/*
 * The two names of "diff --git A B" (REST, LEN bytes): quoted ones
 * unquoted; unquoted ones, which may hold spaces, split where both halves
 * name the same file ("a/x y b/x y"), else at the last " b/". Names from
 * ---/+++ or rename/copy lines replace these later. 0, or -1 when the
 * line cannot be read.
 */
static int git_names(const char *rest, size_t len, char **a, char **b)
{
	*a = *b = NULL;
	if (len && rest[0] == '"') {
		size_t e;

		*a = unquote(rest, len, &e);
		if (!*a || e >= len || rest[e] != ' ')
			goto bad;
		rest += e + 1;
		len -= e + 1;
		if (len && rest[0] == '"') {
			*b = unquote(rest, len, &e);
			if (!*b || e != len)
				goto bad;
		} else {
			*b = xstrndup(rest, len);
		}
	} else {
		const char *q = memchr(rest, '"', len);

		if (q && q > rest && q[-1] == ' ') {	/* a/x "b/y\t" */
			size_t e;

			*a = xstrndup(rest, q - 1 - rest);
			*b = unquote(q, len - (q - rest), &e);
			if (!*b || e != len - (size_t)(q - rest))
				goto bad;
		} else if (len % 2 == 1 && rest[len / 2] == ' ' &&
			   memchr(rest, '/', len / 2) && memchr(rest + len / 2 + 1, '/', len / 2)) {
			const char *sa = memchr(rest, '/', len / 2), *sb = memchr(rest + len / 2 + 1, '/', len / 2);
			size_t la = len / 2 - (sa - rest), lb = len - (sb - rest);

			if (!sa || !sb || la != lb || memcmp(sa, sb, la))
				goto split_b;
			*a = xstrndup(rest, len / 2);
			*b = xstrndup(rest + len / 2 + 1, len / 2);
		} else {
split_b:;
			const char *sp = NULL;

			for (const char *p = rest; p + 3 <= rest + len; p++)
				if (!memcmp(p, " b/", 3))
					sp = p;
			if (!sp) {
				for (const char *p = rest; p < rest + len; p++)
					if (*p == ' ')
						sp = p;
			}
			if (!sp)
				goto bad;
			*a = xstrndup(rest, sp - rest);
			*b = xstrndup(sp + 1, len - (sp - rest) - 1);
		}
	}
	strip_prefix(*a);
	strip_prefix(*b);
	return 0;
bad:
	free(*a);
	free(*b);
	*a = *b = NULL;
	return -1;
}

/* Shorten "dir/a.c" => "dir/b.c" to "dir/{a.c => b.c}" as git's diffstat does. */
static void add_rename(struct buf *b, const char *a, const char *n)
{
	size_t la = strlen(a), ln = strlen(n), pfx = 0, sfx = 0, i;

	if (diff_path_needs_quote(a) || diff_path_needs_quote(n)) {
		add_quoted(b, a);
		buf_addstr(b, " => ");
		add_quoted(b, n);
		return;
	}
	for (i = 0; a[i] && a[i] == n[i]; i++)
		if (a[i] == '/')
			pfx = i + 1;
	/* a common suffix starts at a '/'; it may reuse the prefix's slash */
	for (i = 1; i <= la && i <= ln; i++) {
		size_t pa = la - i, pn = ln - i;

		if (a[pa] != n[pn])
			break;
		if (pa + 1 < pfx || pn + 1 < pfx)
			break;
		if (a[pa] == '/')
			sfx = i;
	}
	{
		size_t ma = la > pfx + sfx ? la - pfx - sfx : 0, mn = ln > pfx + sfx ? ln - pfx - sfx : 0;

		if (pfx + sfx) {
			buf_add(b, a, pfx);
			buf_addch(b, '{');
		}
		buf_add(b, a + pfx, ma);
		buf_addstr(b, " => ");
		buf_add(b, n + pfx, mn);
		if (pfx + sfx) {
			buf_addch(b, '}');
			buf_add(b, n + ln - sfx, sfx);
		}
	}
}

char *diff_file_display(const struct diff_file *f)
{
	struct buf b = BUF_INIT;

	if ((f->status == DIFF_RENAMED || f->status == DIFF_COPIED) && f->old_path && f->new_path)
		add_rename(&b, f->old_path, f->new_path);
	else
		add_quoted(&b, f->new_path ? f->new_path : f->old_path ? f->old_path : "?");
	return buf_detach(&b, NULL);
}

/* ---- binary data ---------------------------------------------------------------- */

static const char b85_chars[] =
	"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";

static int b85_value(int c)
{
	const char *p = c ? strchr(b85_chars, c) : NULL;

	return p ? (int)(p - b85_chars) : -1;
}

/*
 * One data line of a "GIT binary patch" block (without the newline): its
 * length letter, then 5 base85 characters per 4 bytes. Bytes appended to
 * OUT; 0, or -1 with WHY set.
 */
static int b85_line(const char *s, size_t len, struct buf *out, const char **why)
{
	int n;

	if (len < 6) {
		*why = "a data line shorter than 6 characters";
		return -1;
	}
	if (s[0] >= 'A' && s[0] <= 'Z')
		n = s[0] - 'A' + 1;
	else if (s[0] >= 'a' && s[0] <= 'z')
		n = s[0] - 'a' + 27;
	else {
		*why = "a data line without its length letter";
		return -1;
	}
	if ((len - 1) % 5 || (size_t)(n + 3) / 4 * 5 != len - 1) {
		*why = "a data line whose length does not match its length letter";
		return -1;
	}
	for (size_t i = 1; i < len; i += 5) {
		uint32_t acc = 0;

		for (int k = 0; k < 5; k++) {
			int v = b85_value((unsigned char)s[i + k]);

			if (v < 0) {
				*why = "a character that is not base85";
				return -1;
			}
			if (k == 4 && (acc > 0xffffffffU / 85 || acc * 85 > 0xffffffffU - (uint32_t)v)) {
				*why = "a base85 group out of range";
				return -1;
			}
			acc = acc * 85 + (uint32_t)v;
		}
		for (int k = 0; k < 4 && n > 0; k++, n--)
			buf_addch(out, (acc >> (24 - 8 * k)) & 0xff);
	}
	return 0;
}

/*
 * Inflate IN and check that it gives exactly WANT bytes; the first bytes
 * (a delta's header) into HEAD (HEADLEN bytes at most, *GOT of them). 0 or
 * -1 (corrupt, or another size). Inflated through a small window, so a
 * hostile size costs time, not memory.
 */
static int inflate_check(const struct buf *in, long want, unsigned char *head, size_t headlen, size_t *got)
{
	unsigned char win[16384];
	z_stream z;
	int r;

	*got = 0;
	if (want < 0 || want > DIFF_BINARY_MAX)
		return -1;
	memset(&z, 0, sizeof(z));
	if (inflateInit(&z) != Z_OK)
		return -1;
	z.next_in = (unsigned char *)in->buf;
	z.avail_in = (uInt)in->len;
	do {
		z.next_out = win;
		z.avail_out = sizeof(win);
		r = inflate(&z, Z_NO_FLUSH);
		{
			size_t n = sizeof(win) - z.avail_out;

			for (size_t i = 0; i < n && *got < headlen; i++)
				head[(*got)++] = win[i];
		}
		if (z.total_out > (uLong)want)
			break;
	} while (r == Z_OK && (z.avail_in || !z.avail_out));
	inflateEnd(&z);
	if (r != Z_STREAM_END || z.total_out != (uLong)want || z.avail_in)
		return -1;
	return 0;
}

/* A delta's header: the sizes of its source and result (git's varints). 0 or -1. */
static int delta_sizes(const unsigned char *d, size_t len, long *src, long *dst)
{
	size_t i = 0;

	for (int k = 0; k < 2; k++) {
		unsigned long v = 0;
		int shift = 0;
		unsigned char c;

		do {
			if (i >= len || shift > 56)
				return -1;
			c = d[i++];
			v |= (unsigned long)(c & 0x7f) << shift;
			shift += 7;
		} while (c & 0x80);
		if (v > (unsigned long)DIFF_BINARY_MAX)
			return -1;
		*(k ? dst : src) = (long)v;
	}
	return 0;
}

/* ---- the parser ------------------------------------------------------------------ */

struct lines {
	const char *text;
	const char *p;		/* the current line */
	const char *next;	/* the line after it */
	size_t len;		/* of the current line, without the newline */
	int no;			/* its number (1-based) */
};

static int line_next(struct lines *L)
{
	const char *nl;

	if (L->next)
		L->p = L->next;
	if (!*L->p)
		return 0;
	nl = strchr(L->p, '\n');
	L->len = nl ? (size_t)(nl - L->p) : strlen(L->p);
	L->next = nl ? nl + 1 : L->p + L->len;
	L->no++;
	return 1;
}

static int is(const struct lines *L, const char *prefix)
{
	size_t n = strlen(prefix);

	return L->len >= n && !memcmp(L->p, prefix, n);
}

/* The line after the current one starts with PREFIX. */
static int next_is(const struct lines *L, const char *prefix)
{
	return starts_with(L->next, prefix);
}

struct parser {
	struct diff *d;
	struct lines L;
	struct diff_file *f;	/* the file being read */
	int have_sides;		/* its ---/+++ pair was seen */
	int extended;		/* it had a git extended header line */
	int from, to;		/* its rename/copy from and to lines */
	int hunk_line;		/* line of the current hunk's header */
};

static int fail(struct parser *P, int line, const char *fmt, ...) KLAB_PRINTF(3, 4);
static int fail(struct parser *P, int line, const char *fmt, ...)
{
	va_list ap;
	struct buf b = BUF_INIT;

	va_start(ap, fmt);
	buf_vaddf(&b, fmt, ap);
	va_end(ap);
	P->d->error = buf_detach(&b, NULL);
	P->d->error_line = line;
	if (P->f && (P->f->old_path || P->f->new_path))
		P->d->error_file = diff_file_display(P->f);
	return -1;
}

static struct diff_file *new_file(struct parser *P, int git)
{
	struct diff *d = P->d;
	struct diff_file *f;

	d->files = xrealloc(d->files, (d->n_files + 1) * sizeof(*d->files));
	f = &d->files[d->n_files++];
	memset(f, 0, sizeof(*f));
	f->status = DIFF_MODIFIED;
	f->similarity = -1;
	f->old_size = f->new_size = -1;
	f->git = git;
	f->line = P->L.no;
	P->f = f;
	P->have_sides = 0;
	P->extended = 0;
	P->from = P->to = 0;
	return f;
}

static void set_path(char **slot, char *v)
{
	free(*slot);
	*slot = v;
}

/* The rest of the current line after PREFIX, as a string. */
static char *rest_of(const struct lines *L, const char *prefix)
{
	size_t n = strlen(prefix);

	return xstrndup(L->p + n, L->len - n);
}

static int parse_mode(struct parser *P, const char *prefix, unsigned *mode)
{
	char *v = rest_of(&P->L, prefix), *e;
	unsigned long m = strtoul(v, &e, 8);

	if (!*v || *e || m == 0 || m > 0177777) {
		fail(P, P->L.no, "bad mode in '%.*s' (an octal file mode is expected)", (int)P->L.len, P->L.p);
		free(v);
		return -1;
	}
	free(v);
	*mode = (unsigned)m;
	return 0;
}

/* A path of "rename from X" and the like: quoted or not, no prefix to strip. */
static int header_path(struct parser *P, const char *prefix, char **slot)
{
	size_t n = strlen(prefix), e;
	char *v;

	if (P->L.len > n && P->L.p[n] == '"') {
		v = unquote(P->L.p + n, P->L.len - n, &e);
		if (!v || e != P->L.len - n) {
			free(v);
			return fail(P, P->L.no, "badly quoted name in '%.*s'", (int)P->L.len, P->L.p);
		}
	} else {
		v = rest_of(&P->L, prefix);
	}
	if (!*v) {
		free(v);
		return fail(P, P->L.no, "no name in '%.*s'", (int)P->L.len, P->L.p);
	}
	set_path(slot, v);
	return 0;
}

/*
 * A git extended header line of the current file: 1 (taken), 0 (not
 * one), -1 (malformed).
 */
static int extended_header(struct parser *P)
{
	struct diff_file *f = P->f;
	struct lines *L = &P->L;
	int r = 1;

	if (is(L, "old mode "))
		r = parse_mode(P, "old mode ", &f->old_mode) < 0 ? -1 : 1;
	else if (is(L, "new mode "))
		r = parse_mode(P, "new mode ", &f->new_mode) < 0 ? -1 : 1;
	else if (is(L, "deleted file mode ")) {
		r = parse_mode(P, "deleted file mode ", &f->old_mode) < 0 ? -1 : 1;
		f->status = DIFF_DELETED;
	} else if (is(L, "new file mode ")) {
		r = parse_mode(P, "new file mode ", &f->new_mode) < 0 ? -1 : 1;
		f->status = DIFF_ADDED;
	} else if (is(L, "rename from ")) {
		r = header_path(P, "rename from ", &f->old_path) < 0 ? -1 : 1;
		P->from = 1;
		f->status = DIFF_RENAMED;
	} else if (is(L, "rename to ")) {
		r = header_path(P, "rename to ", &f->new_path) < 0 ? -1 : 1;
		P->to = 1;
		f->status = DIFF_RENAMED;
	} else if (is(L, "copy from ")) {
		r = header_path(P, "copy from ", &f->old_path) < 0 ? -1 : 1;
		P->from = 1;
		f->status = DIFF_COPIED;
	} else if (is(L, "copy to ")) {
		r = header_path(P, "copy to ", &f->new_path) < 0 ? -1 : 1;
		P->to = 1;
		f->status = DIFF_COPIED;
	} else if (is(L, "similarity index ") || is(L, "dissimilarity index ")) {
		const char *v = L->p + (is(L, "similarity") ? 17 : 20);
		char *e;
		long pct = strtol(v, &e, 10);

		if (e == v || *e != '%' || pct < 0 || pct > 100 || e + 1 != L->p + L->len)
			return fail(P, L->no, "bad percentage in '%.*s'", (int)L->len, L->p);
		if (L->p[0] == 's')
			f->similarity = (int)pct;
	} else if (is(L, "index ")) {
		/* "index abc..def [mode]": the blobs; git apply checks them */
		const char *dots = memchr(L->p, '.', L->len);

		if (!dots || dots + 1 >= L->p + L->len || dots[1] != '.')
			return fail(P, L->no, "bad index line '%.*s'", (int)L->len, L->p);
		{
			const char *sp = memchr(dots, ' ', L->len - (dots - L->p));

			if (sp) {
				/* the mode of a file the patch does not change */
				char *v = xstrndup(sp + 1, L->len - (sp + 1 - L->p)), *e;
				unsigned long m = strtoul(v, &e, 8);

				if (!*v || *e || !m || m > 0177777) {
					free(v);
					return fail(P, L->no, "bad mode in '%.*s'", (int)L->len, L->p);
				}
				free(v);
				if (!f->old_mode)
					f->old_mode = (unsigned)m;
				if (!f->new_mode)
					f->new_mode = (unsigned)m;
			}
		}
	} else {
		r = 0;
	}
	if (r == 1)
		P->extended = 1;
	return r;
}

/* The ---/+++ pair at the current line (the +++ line consumed too): 0 or -1. */
static int sides(struct parser *P)
{
	struct lines *L = &P->L;
	struct diff_file *f = P->f;
	int bad = 0;
	char *minus = side_name(L->p + 4, L->len - 4, &bad), *plus;
	int mline = L->no;

	line_next(L);
	plus = side_name(L->p + 4, L->len - 4, &bad);
	if (bad) {
		free(minus);
		free(plus);
		return fail(P, mline, "badly quoted name in the ---/+++ lines");
	}
	if (!minus && !plus) {
		free(minus);
		free(plus);
		return fail(P, mline, "both sides of the diff are /dev/null");
	}
	if (f->git) {
		/* git names these the same as its header; /dev/null says new or deleted */
		if (!minus) {
			f->status = DIFF_ADDED;
			set_path(&f->old_path, NULL);
		} else if (f->status != DIFF_ADDED) {
			set_path(&f->old_path, minus), minus = NULL;
		}
		if (!plus) {
			f->status = DIFF_DELETED;
			set_path(&f->new_path, NULL);
		} else if (f->status != DIFF_DELETED) {
			set_path(&f->new_path, plus), plus = NULL;
		}
	} else {
		set_path(&f->old_path, minus), minus = NULL;
		set_path(&f->new_path, plus), plus = NULL;
		f->status = !f->old_path ? DIFF_ADDED : !f->new_path ? DIFF_DELETED : DIFF_MODIFIED;
	}
	free(minus);
	free(plus);
	P->have_sides = 1;
	return 0;
}

static int parse_hunk_header(const char *s, size_t len, long *old, long *new)
{
	/* "@@ -a[,b] +c[,d] @@ [function]" */
	char *line = xstrndup(s, len), *e;
	const char *p = line + 4;
	int ok = 0;

	*old = *new = 1;
	if (!isdigit((unsigned char)*p))
		goto out;
	strtol(p, &e, 10);
	if (*e == ',') {
		if (!isdigit((unsigned char)e[1]))
			goto out;
		*old = strtol(e + 1, &e, 10);
	}
	if (*e != ' ' || e[1] != '+' || !isdigit((unsigned char)e[2]))
		goto out;
	strtol(e + 2, &e, 10);
	if (*e == ',') {
		if (!isdigit((unsigned char)e[1]))
			goto out;
		*new = strtol(e + 1, &e, 10);
	}
	ok = !strncmp(e, " @@", 3) && *old >= 0 && *new >= 0 && *old < 100000000 && *new < 100000000;
out:
	free(line);
	return ok ? 0 : -1;
}

/* The hunk whose header is the current line, through its last line: 0 or -1. */
static int hunk(struct parser *P)
{
	struct lines *L = &P->L;
	struct diff_file *f = P->f;
	long old, new;
	int hdr = L->no;
	char *h = xstrndup(L->p, L->len > 60 ? 60 : L->len);
	int ret = -1;

	if (parse_hunk_header(L->p, L->len, &old, &new) < 0) {
		fail(P, L->no, "malformed hunk header '%s'", h);
		goto out;
	}
	f->hunks++;
	if (f->status == DIFF_ADDED && old > 0) {
		fail(P, L->no, "hunk %d (%s) has old lines in a new file", f->hunks, h);
		goto out;
	}
	if (f->status == DIFF_DELETED && new > 0) {
		fail(P, L->no, "hunk %d (%s) has new lines in a deleted file", f->hunks, h);
		goto out;
	}
	while (old > 0 || new > 0) {
		char c;

		if (!line_next(L)) {
			fail(P, hdr, "hunk %d (%s) is truncated: %ld old and %ld new lines missing", f->hunks, h,
			     old, new);
			goto out;
		}
		c = L->len ? L->p[0] : ' ';
		if (c == ' ') {
			old--;
			new--;
		} else if (c == '-') {
			old--;
			f->deleted++;
		} else if (c == '+') {
			new--;
			f->added++;
		} else if (c == '\\') {
			continue;	/* "\ No newline at end of file" */
		} else {
			fail(P, L->no, "hunk %d (%s) ends early at '%.*s': %ld old and %ld new lines missing",
			     f->hunks, h, (int)(L->len > 40 ? 40 : L->len), L->p, old, new);
			goto out;
		}
		if (old < 0 || new < 0) {
			fail(P, L->no, "hunk %d (%s) has more lines than its header says", f->hunks, h);
			goto out;
		}
	}
	/* a "\ No newline" line may follow the last line */
	if (next_is(L, "\\ "))
		line_next(L);
	ret = 0;
out:
	free(h);
	return ret;
}

/*
 * One "literal N" or "delta N" block of a GIT binary patch at the current
 * line, through its closing blank line: sizes into *SRC (delta only) and
 * *DST. 0 or -1.
 */
static int binary_block(struct parser *P, long *src, long *dst)
{
	struct lines *L = &P->L;
	int delta = is(L, "delta "), start = L->no;
	const char *v = L->p + (delta ? 6 : 8);
	char *e;
	long size = strtol(v, &e, 10);
	struct buf data = BUF_INIT;
	unsigned char head[32];
	size_t got;
	const char *why = NULL;
	int ret = -1;

	if (e == v || e != L->p + L->len || size < 0 || size > DIFF_BINARY_MAX) {
		fail(P, L->no, "bad size in '%.*s'", (int)L->len, L->p);
		goto out;
	}
	for (;;) {
		if (!line_next(L)) {
			fail(P, start, "binary data ('%s %ld') is truncated: no blank line ends it",
			     delta ? "delta" : "literal", size);
			goto out;
		}
		if (!L->len)
			break;
		if (b85_line(L->p, L->len, &data, &why) < 0) {
			fail(P, L->no, "binary data ('%s %ld') is corrupt: %s", delta ? "delta" : "literal", size, why);
			goto out;
		}
	}
	if (inflate_check(&data, size, head, sizeof(head), &got) < 0) {
		fail(P, start, "binary data ('%s %ld') is corrupt: it does not inflate to %ld bytes",
		     delta ? "delta" : "literal", size, size);
		goto out;
	}
	*src = -1;
	*dst = size;
	if (delta && delta_sizes(head, got, src, dst) < 0) {
		fail(P, start, "binary data ('delta %ld') is corrupt: no delta header", size);
		goto out;
	}
	ret = 0;
out:
	buf_release(&data);
	return ret;
}

/* "GIT binary patch" at the current line: the forward block, then the optional reverse one. 0 or -1. */
static int binary_patch(struct parser *P)
{
	struct lines *L = &P->L;
	struct diff_file *f = P->f;
	long src, dst, rsrc, rdst;

	f->binary = DIFF_BINARY_DATA;
	if (!line_next(L) || !(is(L, "literal ") || is(L, "delta ")))
		return fail(P, L->no, "'GIT binary patch' is not followed by a 'literal N' or 'delta N' line");
	if (binary_block(P, &src, &dst) < 0)
		return -1;
	f->new_size = dst;
	f->old_size = src;
	if (next_is(L, "literal ") || next_is(L, "delta ")) {
		line_next(L);
		if (binary_block(P, &rsrc, &rdst) < 0)
			return -1;
		/* the reverse block rebuilds the old file */
		f->old_size = rdst;
	}
	if (f->status == DIFF_ADDED)
		f->old_size = 0;
	if (f->status == DIFF_DELETED)
		f->new_size = 0;
	return 0;
}

/* The current file is complete: check that it says something. 0 or -1. */
static int file_done(struct parser *P)
{
	struct diff_file *f = P->f;

	if (!f)
		return 0;
	if (P->have_sides && !f->hunks && f->binary == DIFF_TEXT)
		return fail(P, f->line, "'---'/'+++' lines without a hunk");
	if (!f->hunks && f->binary == DIFF_TEXT && !P->extended)
		return fail(P, f->line, "a 'diff --git' header that changes nothing: no hunk, mode change, rename,"
			    " copy, new or deleted file, or binary data");
	if (f->status == DIFF_RENAMED || f->status == DIFF_COPIED) {
		if (!P->from || !P->to)
			return fail(P, f->line, "a %s without both its 'from' and 'to' lines",
				    f->status == DIFF_RENAMED ? "rename" : "copy");
	}
	if (f->status == DIFF_ADDED && f->old_path) {
		free(f->old_path);
		f->old_path = NULL;
	}
	if (f->status == DIFF_DELETED && f->new_path) {
		free(f->new_path);
		f->new_path = NULL;
	}
	P->f = NULL;
	return 0;
}

static int is_sides(const struct lines *L)
{
	return is(L, "--- ") && next_is(L, "+++ ");
}

int diff_parse(const char *text, struct diff *d)
{
	struct parser P = { .d = d };
	struct lines *L = &P.L;
	const char *sep = NULL, *end;
	int sep_line = 0;

	memset(d, 0, sizeof(*d));
	L->text = L->p = text;
	L->next = NULL;
	/* the start: "diff --git", a combined diff, or "--- x" + "+++ y" */
	for (;;) {
		if (!line_next(L))
			return 0;
		if (is(L, "diff --git ") || is(L, "diff --cc ") || is(L, "diff --combined ") || is_sides(L))
			break;
		if (!sep && L->len == 3 && !memcmp(L->p, "---", 3)) {
			sep = L->p;
			sep_line = L->no;
		}
	}
	(void)sep_line;
	d->start = L->p - text;
	d->msg_end = (sep ? sep : L->p) - text;
	end = L->p;
	for (;;) {
		if (is(L, "diff --cc ") || is(L, "diff --combined ")) {
			fail(&P, L->no, "a combined diff ('%.*s') of a merge: git am and patch apply only"
			     " ordinary diffs", (int)(L->len > 60 ? 60 : L->len), L->p);
			break;
		} else if (is(L, "diff --git ")) {
			char *a, *b;

			if (file_done(&P) < 0)
				break;
			new_file(&P, 1);
			if (git_names(L->p + 11, L->len - 11, &a, &b) < 0) {
				fail(&P, L->no, "cannot read the names of '%.*s'", (int)(L->len > 80 ? 80 : L->len), L->p);
				break;
			}
			P.f->old_path = a;
			P.f->new_path = b;
		} else if (is_sides(L)) {
			if (!P.f || P.have_sides || P.f->hunks || P.f->binary) {
				/* a traditional diff's next file */
				if (file_done(&P) < 0)
					break;
				new_file(&P, 0);
			}
			if (sides(&P) < 0)
				break;
		} else if (is(L, "@@ -")) {
			if (!P.f || (!P.have_sides && !P.f->hunks)) {
				fail(&P, L->no, "a hunk before the '---'/'+++' lines of its file");
				break;
			}
			if (hunk(&P) < 0)
				break;
		} else if (P.f && !P.have_sides && !P.f->hunks && P.f->binary == DIFF_TEXT && P.f->git &&
			   is(L, "GIT binary patch") && L->len == 16) {
			if (binary_patch(&P) < 0)
				break;
		} else if (P.f && !P.have_sides && P.f->binary == DIFF_TEXT && is(L, "Binary files ") &&
			   L->len > 19 && !memcmp(L->p + L->len - 7, " differ", 7)) {
			P.f->binary = DIFF_BINARY_NODATA;
		} else if (P.f && P.f->git && !P.have_sides && !P.f->hunks && P.f->binary == DIFF_TEXT) {
			int r = extended_header(&P);

			if (r < 0)
				break;
			if (r == 0)
				goto stop;
		} else {
			goto stop;
		}
		end = L->next;
		if (!line_next(L))
			break;
		continue;
stop:
		break;
	}
	if (!d->error)
		file_done(&P);
	if (!d->error && !d->n_files)
		fail(&P, L->no, "no file in the diff");
	d->end = end - text;
	return 1;
}

/* ---- diffstat -------------------------------------------------------------------- */

char *diff_stat(const struct diff *d, int *files, int *ins, int *del)
{
	struct buf b = BUF_INIT;
	char **names = xcalloc(d->n_files ? d->n_files : 1, sizeof(*names));
	size_t namew = 0;
	int maxc = 0, tot_a = 0, tot_d = 0, numw, bin = 0;
	const int graphw = 50;

	for (size_t i = 0; i < d->n_files; i++) {
		const struct diff_file *f = &d->files[i];
		size_t l;

		names[i] = diff_file_display(f);
		l = strlen(names[i]);
		if (l > namew)
			namew = l;
		if (f->binary != DIFF_TEXT) {
			bin = 1;
			continue;
		}
		if (f->added + f->deleted > maxc)
			maxc = f->added + f->deleted;
		tot_a += f->added;
		tot_d += f->deleted;
	}
	numw = snprintf(NULL, 0, "%d", maxc);
	if (bin && numw < 3)
		numw = 3;
	for (size_t i = 0; i < d->n_files; i++) {
		const struct diff_file *f = &d->files[i];
		int a = f->added, r = f->deleted, c = a + r;

		buf_addf(&b, " %-*s |", (int)namew, names[i]);
		if (f->binary != DIFF_TEXT) {
			buf_addf(&b, " %*s", numw, "Bin");
			if (f->old_size >= 0 && f->new_size >= 0)
				buf_addf(&b, " %ld -> %ld bytes", f->old_size, f->new_size);
			buf_addch(&b, '\n');
			continue;
		}
		if (maxc > graphw && c) {	/* scale like git: keep at least one of each */
			int sa = a ? (int)((long)a * graphw / maxc) : 0, sr = r ? (int)((long)r * graphw / maxc) : 0;

			a = a && !sa ? 1 : sa;
			r = r && !sr ? 1 : sr;
		}
		buf_addf(&b, " %*d", numw, c);
		if (c)
			buf_addch(&b, ' ');
		for (int k = 0; k < a; k++)
			buf_addch(&b, '+');
		for (int k = 0; k < r; k++)
			buf_addch(&b, '-');
		buf_addch(&b, '\n');
	}
	buf_addf(&b, " %zu file%s changed", d->n_files, d->n_files == 1 ? "" : "s");
	if (tot_a || !tot_d)
		buf_addf(&b, ", %d insertion%s(+)", tot_a, tot_a == 1 ? "" : "s");
	if (tot_d || !tot_a)
		buf_addf(&b, ", %d deletion%s(-)", tot_d, tot_d == 1 ? "" : "s");
	/* the summary: what --summary adds */
	for (size_t i = 0; i < d->n_files; i++) {
		const struct diff_file *f = &d->files[i];

		if (f->status == DIFF_ADDED || f->status == DIFF_DELETED) {
			buf_addf(&b, "\n %s mode %06o ", f->status == DIFF_ADDED ? "create" : "delete",
				 f->status == DIFF_ADDED ? f->new_mode : f->old_mode);
			buf_addstr(&b, names[i]);
			continue;
		}
		if (f->status == DIFF_RENAMED || f->status == DIFF_COPIED) {
			buf_addf(&b, "\n %s %s", f->status == DIFF_RENAMED ? "rename" : "copy", names[i]);
			if (f->similarity >= 0)
				buf_addf(&b, " (%d%%)", f->similarity);
		}
		if (f->old_mode && f->new_mode && f->old_mode != f->new_mode) {
			buf_addf(&b, "\n mode change %06o => %06o", f->old_mode, f->new_mode);
			if (f->status != DIFF_RENAMED && f->status != DIFF_COPIED) {
				buf_addch(&b, ' ');
				buf_addstr(&b, names[i]);
			}
		}
	}
	for (size_t i = 0; i < d->n_files; i++)
		free(names[i]);
	free(names);
	*files = (int)d->n_files;
	*ins = tot_a;
	*del = tot_d;
	return buf_detach(&b, NULL);
}
