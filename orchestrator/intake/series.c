/* series.c: patch series intake: messages -> ordered patches, trailers, claims; storing and loading. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "intake/claims.h"
#include "store/db.h"
#include "intake/diff.h"
#include "intake/fetch.h"
#include "jsonh.h"
#include "log.h"
#include "intake/mbox.h"
#include "intake/series.h"
#include "store/series.h"
#include "strvec.h"
#include "util.h"

/* ---- subjects ---------------------------------------------------------------- */

struct subj {
	int reply;		/* "Re:" */
	int version;		/* 0: not given */
	int seq, total;		/* -1: not numbered */
	char *clean;		/* without prefixes */
};

/* A decimal number of a subject ("08" of [PATCH 08/12] is 8, not bad octal): 0 or -1. */
static int subj_number(const char *t, long min, long max, long *out)
{
	char *e;
	long v;

	if (!isdigit((unsigned char)*t) || strlen(t) > 9)
		return -1;
	v = strtol(t, &e, 10);
	if (*e || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static void parse_subject(const char *raw, struct subj *s)
{
	const char *p = raw;
	int again = 1;

	s->reply = 0;
	s->version = 0;
	s->seq = s->total = -1;
	while (again) {
		again = 0;
		while (isspace((unsigned char)*p))
			p++;
		if (!strncasecmp(p, "Re:", 3) || !strncasecmp(p, "Aw:", 3)) {
			s->reply = 1;
			p += 3;
			again = 1;
		} else if (!strncasecmp(p, "Fwd:", 4)) {
			p += 4;
			again = 1;
		} else if (*p == '[') {
			const char *e = strchr(p, ']');
			char *grp;
			struct strvec w = STRVEC_INIT;

			if (!e)
				break;
			grp = xstrndup(p + 1, e - p - 1);
			strvec_split(&w, grp, " ,\t");
			for (size_t i = 0; i < w.n; i++) {
				const char *t = w.v[i];
				long a, b;
				const char *slash = strchr(t, '/');

				if ((t[0] == 'v' || t[0] == 'V') && subj_number(t + 1, 1, 1000, &a) == 0) {
					s->version = (int)a;
				} else if (slash) {
					char *l = xstrndup(t, slash - t);

					if (subj_number(l, 0, 100000, &a) == 0 &&
					    subj_number(slash + 1, 1, 100000, &b) == 0 && a <= b) {
						s->seq = (int)a;
						s->total = (int)b;
					}
					free(l);
				}
			}
			strvec_clear(&w);
			free(grp);
			p = e + 1;
			again = 1;
		}
	}
	while (isspace((unsigned char)*p))
		p++;
	s->clean = xstrdup(p);
	{
		size_t n = strlen(s->clean);

		while (n && isspace((unsigned char)s->clean[n - 1]))
			s->clean[--n] = 0;
	}
}

/* ---- trailers ----------------------------------------------------------------- */

static const char *const reply_tags[] = { "Reviewed-by", "Acked-by", "Tested-by", "Reported-by",
					  "Suggested-by", "Nacked-by" };

/* "Tag: value" with a trailer-like tag: tag length, else 0. */
static size_t trailer_tag(const char *l)
{
	size_t i = 0;

	if (!isalpha((unsigned char)l[0]))
		return 0;
	while (isalnum((unsigned char)l[i]) || l[i] == '-')
		i++;
	if (l[i] != ':' || l[i + 1] != ' ' || !l[i + 2])
		return 0;
	return i;
}

static void add_trailer(struct patch *p, const char *tag, size_t taglen, const char *value,
			const char *from)
{
	struct trailer *t;
	char *tg = xstrndup(tag, taglen);
	struct buf v = BUF_INIT;

	buf_addstr(&v, value);
	buf_trim(&v);
	for (size_t i = 0; i < p->n_trailers; i++)
		if (!strcasecmp(p->trailers[i].tag, tg) && !strcmp(p->trailers[i].value, v.buf)) {
			free(tg);
			buf_release(&v);
			return;
		}
	p->trailers = xrealloc(p->trailers, (p->n_trailers + 1) * sizeof(*p->trailers));
	t = &p->trailers[p->n_trailers++];
	t->tag = tg;
	t->value = buf_detach(&v, NULL);
	t->from = from ? xstrdup(from) : NULL;
}

/* Trailers of a commit message: its last paragraph, when it holds a "-by:" line. */
static void message_trailers(struct patch *p)
{
	const char *body = p->body, *last = body;
	struct strvec lines = STRVEC_INIT;
	int has_by = 0, all = 1;

	for (const char *q = body; *q; q++)
		if (q[0] == '\n' && q[1] == '\n' && q[2] && q[2] != '\n')
			last = q + 2;
	strvec_split(&lines, last, "\n");
	for (size_t i = 0; i < lines.n; i++) {
		size_t tl = trailer_tag(lines.v[i]);

		if (!tl) {
			if (lines.v[i][0] != ' ' && lines.v[i][0] != '\t')
				all = 0;
			continue;
		}
		if (tl > 3 && !strncmp(lines.v[i] + tl - 3, "-by", 3))
			has_by = 1;
	}
	if (has_by && all)
		for (size_t i = 0; i < lines.n; i++) {
			size_t tl = trailer_tag(lines.v[i]);

			if (tl)
				add_trailer(p, lines.v[i], tl, lines.v[i] + tl + 2, NULL);
		}
	strvec_clear(&lines);
}

/* ---- assembling a series ----------------------------------------------------------- */

enum kind { K_PATCH, K_COVER, K_REPLY, K_OTHER };

struct item {
	struct mail_msg *m;
	struct subj s;
	enum kind kind;
	struct diff d;
	int dropped;
};

static char *trimmed(const char *s, size_t len)
{
	struct buf b = BUF_INIT;

	buf_add(&b, s, len);
	buf_trim(&b);
	return buf_detach(&b, NULL);
}

/* Fill a patch from a message with a diff. */
static void make_patch(struct patch *p, const struct item *it, int seq)
{
	const char *body = it->m->body;

	memset(p, 0, sizeof(*p));
	p->seq = seq;
	p->subject = xstrdup(it->s.clean);
	p->raw_subject = it->m->subject ? xstrdup(it->m->subject) : NULL;
	p->author = it->m->from ? xstrdup(it->m->from) : NULL;
	p->date = it->m->date ? xstrdup(it->m->date) : NULL;
	p->message_id = it->m->message_id ? xstrdup(it->m->message_id) : NULL;
	p->body = trimmed(body, it->d.msg_end);
	p->diff = xstrndup(body + it->d.start, it->d.end - it->d.start);
	p->diffstat = diff_stat(&it->d, &p->files, &p->insertions, &p->deletions);
	message_trailers(p);
	if (!p->author) {
		for (size_t i = 0; i < p->n_trailers; i++)
			if (!strcasecmp(p->trailers[i].tag, "Signed-off-by")) {
				p->author = xstrdup(p->trailers[i].value);
				break;
			}
	}
}

/* A short description of a message for notes and errors. */
static char *describe(const struct item *it)
{
	if (it->m->subject)
		return xasprintf("'%s' (line %d)", it->m->subject, it->m->line);
	return xasprintf("message at line %d", it->m->line);
}

static int same_id(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

/* Give the trailers of a reply to the patch(es) it answers: 1 if matched. */
static int apply_reply(struct series *se, struct item *items, size_t n, const struct item *r)
{
	const char *from = r->m->from ? r->m->from : "a reply";
	struct strvec tr = STRVEC_INIT;
	int matched = 0, all = 0;
	struct patch *target = NULL;

	/* which patch: In-Reply-To, else the subject */
	for (size_t i = 0; i < n && !target && !all; i++) {
		if (items[i].dropped || !same_id(r->m->in_reply_to, items[i].m->message_id))
			continue;
		if (items[i].kind == K_COVER)
			all = 1;
		for (size_t k = 0; k < se->n_patches; k++)
			if (same_id(se->patches[k].message_id, items[i].m->message_id))
				target = &se->patches[k];
	}
	if (!target && !all) {
		for (size_t k = 0; k < se->n_patches; k++)
			if (!strcmp(se->patches[k].subject, r->s.clean))
				target = &se->patches[k];
		if (!target && se->subject && se->cover && !strcmp(se->subject, r->s.clean))
			all = 1;
	}
	if (!target && !all)
		return 0;
	strvec_split(&tr, r->m->body, "\n");
	for (size_t i = 0; i < tr.n; i++) {
		size_t tl = trailer_tag(tr.v[i]);
		int known = 0;

		if (!tl)
			continue;
		for (size_t k = 0; k < ARRAY_SIZE(reply_tags); k++)
			if (strlen(reply_tags[k]) == tl && !strncasecmp(tr.v[i], reply_tags[k], tl))
				known = 1;
		if (!known)
			continue;
		matched = 1;
		for (size_t k = 0; k < se->n_patches; k++)
			if (all || &se->patches[k] == target)
				add_trailer(&se->patches[k], tr.v[i], tl, tr.v[i] + tl + 2, from);
	}
	strvec_clear(&tr);
	(void)matched;
	return 1;
}

/* The review trailers of a reply as "Tag: value; ..." (for notes), or NULL. */
static char *reply_trailers_text(const struct item *r)
{
	struct strvec tr = STRVEC_INIT, got = STRVEC_INIT;
	char *s = NULL;

	strvec_split(&tr, r->m->body, "\n");
	for (size_t i = 0; i < tr.n; i++) {
		size_t tl = trailer_tag(tr.v[i]);

		for (size_t k = 0; tl && k < ARRAY_SIZE(reply_tags); k++)
			if (strlen(reply_tags[k]) == tl && !strncasecmp(tr.v[i], reply_tags[k], tl))
				strvec_push(&got, tr.v[i]);
	}
	if (got.n)
		s = strvec_join(&got, "; ");
	strvec_clear(&tr);
	strvec_clear(&got);
	return s;
}

static int cmp_patch(const void *a, const void *b)
{
	const struct patch *x = a, *y = b;

	return x->seq - y->seq;
}

static void series_hash(struct series *s)
{
	struct sha256_ctx c;
	unsigned char d[32];

	sha256_init(&c);
	for (size_t i = 0; i < s->n_patches; i++) {
		char hdr[32];

		snprintf(hdr, sizeof(hdr), "%d\n", s->patches[i].seq);
		sha256_update(&c, hdr, strlen(hdr));
		sha256_update(&c, s->patches[i].diff, strlen(s->patches[i].diff));
	}
	sha256_final(&c, d);
	for (int i = 0; i < 32; i++)
		snprintf(s->content_sha256 + 2 * i, 3, "%02x", d[i]);
}

static int assemble(struct mail_list *ml, const char *what, const char *source,
		    const struct series_opts *opts, struct series **out)
{
	struct item *items = xcalloc(ml->n ? ml->n : 1, sizeof(*items));
	struct series *se = xcalloc(1, sizeof(*se));
	int best_version = 0, total = -1, numbered = 0, ret = -1;
	size_t n_patch_msgs = 0;
	struct item *cover = NULL;

	strvec_init(&se->notes);
	se->source = xstrdup(source);
	se->format = xstrdup(mail_format_name(ml->format));

	/* classify */
	for (size_t i = 0; i < ml->n; i++) {
		struct item *it = &items[i];
		int has;

		it->m = &ml->v[i];
		if (!it->m->subject && opts && opts->subject && ml->format == MAIL_PLAIN)
			it->m->subject = xstrdup(opts->subject);
		parse_subject(it->m->subject ? it->m->subject : "", &it->s);
		has = diff_parse(it->m->body, &it->d);
		if (it->s.reply)
			it->kind = K_REPLY;
		else if (has)
			it->kind = K_PATCH;
		else if (it->s.seq == 0 && it->s.total > 0)
			it->kind = K_COVER;
		else
			it->kind = K_OTHER;
		if (it->kind == K_PATCH && it->d.error) {
			char *d = describe(it);
			const char *f = it->d.error_file;

			/* the line of the mail, when the body's lines are the mail's */
			if (it->m->body_line > 0)
				error("%s:%d: %s: %s%s%s", what, it->m->body_line + it->d.error_line - 1, d,
				      f ? f : "", f ? ": " : "", it->d.error);
			else
				error("%s: %s, line %d of its decoded body: %s%s%s", what, d, it->d.error_line,
				      f ? f : "", f ? ": " : "", it->d.error);
			free(d);
			goto out;
		}
		if (it->kind == K_PATCH) {
			int v = it->s.version ? it->s.version : 1;

			if (v > best_version)
				best_version = v;
			n_patch_msgs++;
		}
	}
	if (!n_patch_msgs) {
		struct buf why = BUF_INIT;
		size_t replies = 0;

		for (size_t i = 0; i < ml->n; i++)
			if (items[i].kind == K_REPLY)
				replies++;
		if (replies) {
			for (size_t i = 0; i < ml->n; i++) {
				char *t;

				if (items[i].kind != K_REPLY)
					continue;
				t = reply_trailers_text(&items[i]);
				buf_addf(&why, "%s%s answers '%s'%s%s%s", why.len ? "; " : "",
					 items[i].m->from ? items[i].m->from : "a reply", items[i].s.clean,
					 t ? " with " : " with no trailer", t ? t : "", "");
				free(t);
			}
			error("%s: no patch: %zu repl%s without a diff (%s); give the patch too", what,
			      replies, replies == 1 ? "y" : "ies", why.buf);
		} else if (ml->n == 1) {
			error("%s: no diff found in the message%s%s%s", what,
			      items[0].m->subject ? " '" : "", items[0].m->subject ? items[0].m->subject : "",
			      items[0].m->subject ? "'" : "");
		} else {
			error("%s: no diff found in any of its %zu messages", what, ml->n);
		}
		buf_release(&why);
		goto out;
	}

	/* the newest version; the numbering of its first patch */
	for (size_t i = 0; i < ml->n; i++) {
		struct item *it = &items[i];
		int v = it->s.version ? it->s.version : 1;

		if (it->kind != K_PATCH && it->kind != K_COVER)
			continue;
		if (v != best_version) {
			char *d = describe(it);

			strvec_pushf(&se->notes, "dropped %s: version %d, the newest is v%d", d, v, best_version);
			it->dropped = 1;
			free(d);
			continue;
		}
		if (it->kind == K_COVER) {
			if (cover) {
				char *d = describe(cover);

				strvec_pushf(&se->notes, "dropped cover letter %s: a later one replaces it", d);
				free(d);
				cover->dropped = 1;
			}
			cover = it;
			continue;
		}
		if (it->s.total > 0) {
			if (total < 0)
				total = it->s.total;
			numbered = 1;
		}
	}
	se->version = best_version;

	/* patches in order; numbering by position when there is none */
	{
		int pos = 0;

		for (size_t i = 0; i < ml->n; i++) {
			struct item *it = &items[i];
			int seq;

			if (it->kind != K_PATCH || it->dropped)
				continue;
			pos++;
			if (numbered && (it->s.total != total || it->s.seq < 1)) {
				char *d = describe(it);

				strvec_pushf(&se->notes, "dropped %s: not numbered as part of the %d-patch series",
					     d, total);
				free(d);
				it->dropped = 1;
				continue;
			}
			seq = numbered ? it->s.seq : pos;
			/* a resend of the same number replaces the earlier one */
			for (size_t k = 0; k < se->n_patches; k++)
				if (se->patches[k].seq == seq) {
					strvec_pushf(&se->notes, "patch %d appears twice: the later message (line %d) is used",
						     seq, it->m->line);
					/* drop the earlier one */
					struct patch tmp = se->patches[k];

					se->patches[k] = se->patches[--se->n_patches];
					se->patches[se->n_patches] = tmp;
					free(tmp.subject);
					free(tmp.raw_subject);
					free(tmp.author);
					free(tmp.date);
					free(tmp.message_id);
					free(tmp.body);
					free(tmp.diff);
					free(tmp.diffstat);
					for (size_t t = 0; t < tmp.n_trailers; t++) {
						free(tmp.trailers[t].tag);
						free(tmp.trailers[t].value);
						free(tmp.trailers[t].from);
					}
					free(tmp.trailers);
					break;
				}
			se->patches = xrealloc(se->patches, (se->n_patches + 1) * sizeof(*se->patches));
			make_patch(&se->patches[se->n_patches++], it, seq);
		}
		if (!numbered)
			total = (int)se->n_patches;
	}
	if (!se->n_patches) {
		char *why = strvec_join(&se->notes, "; ");

		error("%s: no usable patch: %s", what, why);
		free(why);
		goto out;
	}
	qsort(se->patches, se->n_patches, sizeof(*se->patches), cmp_patch);
	se->total = total > 0 ? total : 1;
	{
		struct strvec missing = STRVEC_INIT;
		size_t k = 0;

		for (int s = 1; s <= se->total; s++) {
			while (k < se->n_patches && se->patches[k].seq < s)
				k++;
			if (k >= se->n_patches || se->patches[k].seq != s)
				strvec_pushf(&missing, "%d/%d", s, se->total);
		}
		if (missing.n) {
			char *j = strvec_join(&missing, ", ");

			strvec_pushf(&se->notes, "incomplete series: patch%s %s not in the input",
				     missing.n == 1 ? "" : "es", j);
			free(j);
		}
		strvec_clear(&missing);
	}

	/* series description */
	if (cover) {
		se->subject = xstrdup(cover->s.clean);
		se->author = cover->m->from ? xstrdup(cover->m->from) : NULL;
		se->date = cover->m->date ? xstrdup(cover->m->date) : NULL;
		se->message_id = cover->m->message_id ? xstrdup(cover->m->message_id) : NULL;
		{
			/* the body without the signature */
			const char *b = cover->m->body, *sig = strstr(b, "\n-- \n");
			size_t l = sig ? (size_t)(sig - b) : strlen(b);

			se->cover = trimmed(b, l);
		}
	} else {
		const struct patch *p = &se->patches[0];

		se->subject = xstrdup(p->subject);
		se->author = p->author ? xstrdup(p->author) : NULL;
		se->date = p->date ? xstrdup(p->date) : NULL;
		se->message_id = p->message_id ? xstrdup(p->message_id) : NULL;
	}
	if (!*se->subject) {
		free(se->subject);
		se->subject = xstrdup("(no subject)");
		for (size_t k = 0; k < se->n_patches; k++)
			if (!*se->patches[k].subject) {
				free(se->patches[k].subject);
				se->patches[k].subject = xstrdup("(no subject)");
			}
		strvec_push(&se->notes, "the patch has no subject: give one with --subject");
	}

	/* replies and ignored messages */
	for (size_t i = 0; i < ml->n; i++) {
		struct item *it = &items[i];

		if (it->kind == K_REPLY) {
			if (!apply_reply(se, items, ml->n, it)) {
				char *t = reply_trailers_text(it);
				char *d = describe(it);

				strvec_pushf(&se->notes, "reply %s from %s answers no patch of this input%s%s%s", d,
					     it->m->from ? it->m->from : "?", t ? "; its trailers were not used: " : "",
					     t ? t : "", "");
				free(t);
				free(d);
			}
		} else if (it->kind == K_OTHER) {
			char *d = describe(it);

			strvec_pushf(&se->notes, "ignored %s: no diff and not a cover letter", d);
			free(d);
		}
	}

	/* claims and proposals */
	if (se->cover)
		claims_scan(se->cover, 0, &se->claims, &se->n_claims, &se->proposals, &se->n_proposals);
	for (size_t k = 0; k < se->n_patches; k++)
		claims_scan(se->patches[k].body, se->patches[k].seq, &se->claims, &se->n_claims,
			    &se->proposals, &se->n_proposals);
	series_hash(se);
	*out = se;
	se = NULL;
	ret = 0;
out:
	for (size_t i = 0; i < ml->n; i++) {
		free(items[i].s.clean);
		diff_free(&items[i].d);
	}
	free(items);
	if (se)
		series_free(se);
	return ret;
}

int series_parse(const char *text, size_t len, const char *what, const char *source,
		 const struct series_opts *opts, struct series **out)
{
	struct mail_list ml;
	int ret;

	if (mail_parse(text, len, what, &ml) < 0)
		return -1;
	ret = assemble(&ml, what, source, opts, out);
	mail_list_free(&ml);
	return ret;
}

/* ---- sources ------------------------------------------------------------------ */

const char *series_source_file(const char *src)
{
	const char *v;

	if (starts_with(src, "lore:") || starts_with(src, "patchwork:") || starts_with(src, "pw:") ||
	    starts_with(src, "https://lore.kernel.org/") || starts_with(src, "http://lore.kernel.org/"))
		return NULL;
	if ((v = skip_prefix(src, "mbox:")) || (v = skip_prefix(src, "file:")))
		return v;
	if (strcmp(src, "-") && !file_exists(src) && strchr(src, '@') && !strchr(src, '/'))
		return NULL;	/* a bare Message-ID: lore */
	return src;
}

/*
 * Read one source into TEXT (appended as its own messages); sets *url for
 * fetched ones. GIVEN (may be NULL) is its text read already by klab.
 */
static int read_source(const char *src, const struct series_opts *opts, const struct series_text *given,
		       struct buf *text, char **what, char **url)
{
	const char *v, *file;
	long tmo = opts ? opts->timeout_ms : 0;

	if (given && given->text) {
		file = series_source_file(src);
		*what = xasprintf("'%s'", file ? file : src);
		buf_add(text, given->text, given->len);
		return fetch_gunzip(text, *what);
	}
	if ((v = skip_prefix(src, "lore:"))) {
		*what = xasprintf("lore thread '%s'", v);
		return fetch_lore_thread(opts ? opts->lore_url : NULL, v, tmo, text, url);
	}
	if ((v = skip_prefix(src, "patchwork:")) || (v = skip_prefix(src, "pw:"))) {
		*what = xasprintf("patchwork series %s", v);
		return fetch_patchwork_series(opts ? opts->patchwork_url : NULL, v, tmo, text, url);
	}
	if (starts_with(src, "https://lore.kernel.org/") || starts_with(src, "http://lore.kernel.org/")) {
		/* https://lore.kernel.org/LIST/MSGID/... */
		const char *p = strchr(src + strlen("https://lore.kernel.org/") - (src[4] == ':'), '/');
		char *id, *slash, *base;
		int r;

		if (!p)
			return error("cannot find a Message-ID in lore URL '%s'", src);
		id = xstrdup(p + 1);
		slash = strchr(id, '/');
		if (slash)
			*slash = 0;
		base = xstrndup(src, p - src);
		*what = xasprintf("lore thread '%s'", id);
		r = fetch_lore_thread(base, id, tmo, text, url);
		free(id);
		free(base);
		return r;
	}
	if (!(file = series_source_file(src))) {
		*what = xasprintf("lore thread '%s'", src);
		return fetch_lore_thread(opts ? opts->lore_url : NULL, src, tmo, text, url);
	}
	*what = xasprintf("'%s'", file);
	if (opts && opts->texts)
		return error("cannot read %s: klab did not pass its text to the intake helper", *what);
	if (!strcmp(file, "-")) {
		if (buf_read_fd(text, 0) < 0)
			return error_errno("cannot read standard input");
	} else if (buf_read_file(text, file) < 0) {
		return -1;
	}
	return fetch_gunzip(text, *what);
}

int series_load(const char *source, const struct series_opts *opts, struct series **out)
{
	struct strvec srcs = STRVEC_INIT;
	struct mail_list all = { 0 };
	struct buf whatb = BUF_INIT, urls = BUF_INIT;
	char *src_joined = NULL;
	int ret = -1;

	*out = NULL;
	strvec_split(&srcs, source, "\n");
	if (!srcs.n) {
		error("no series source given");
		goto out;
	}
	for (size_t i = 0; i < srcs.n; i++) {
		struct buf text = BUF_INIT;
		struct mail_list ml;
		char *what = NULL, *url = NULL;
		const struct series_text *given = opts && opts->texts && i < opts->n_texts ? &opts->texts[i] : NULL;
		int r = read_source(srcs.v[i], opts, given, &text, &what, &url);

		if (r == 0)
			r = mail_parse(text.buf, text.len, what, &ml);
		if (r == 0) {
			all.v = xrealloc(all.v, (all.n + ml.n + 1) * sizeof(*all.v));
			memcpy(all.v + all.n, ml.v, ml.n * sizeof(*ml.v));
			all.n += ml.n;
			if (i == 0 || ml.format != MAIL_PLAIN)
				all.format = i == 0 ? ml.format : all.format;
			free(ml.v);
		}
		buf_addf(&whatb, "%s%s", whatb.len ? " + " : "", what ? what : srcs.v[i]);
		if (url)
			buf_addf(&urls, "%s%s", urls.len ? " " : "", url);
		free(what);
		free(url);
		buf_release(&text);
		if (r < 0)
			goto out;
	}
	src_joined = strvec_join(&srcs, " + ");
	if (assemble(&all, whatb.buf, src_joined, opts, out) < 0)
		goto out;
	if (urls.len)
		(*out)->source_url = xstrdup(urls.buf);
	ret = 0;
out:
	mail_list_free(&all);
	strvec_clear(&srcs);
	buf_release(&whatb);
	buf_release(&urls);
	free(src_joined);
	return ret;
}

/* ---- freeing, JSON, mbox --------------------------------------------------------- */

static void patch_release(struct patch *p)
{
	free(p->subject);
	free(p->raw_subject);
	free(p->author);
	free(p->date);
	free(p->message_id);
	free(p->body);
	free(p->diff);
	free(p->diffstat);
	for (size_t t = 0; t < p->n_trailers; t++) {
		free(p->trailers[t].tag);
		free(p->trailers[t].value);
		free(p->trailers[t].from);
	}
	free(p->trailers);
}

void series_free(struct series *s)
{
	if (!s)
		return;
	free(s->source);
	free(s->source_url);
	free(s->format);
	free(s->subject);
	free(s->author);
	free(s->date);
	free(s->message_id);
	free(s->cover);
	for (size_t i = 0; i < s->n_patches; i++)
		patch_release(&s->patches[i]);
	free(s->patches);
	claims_free(s->claims, s->n_claims);
	proposals_free(s->proposals, s->n_proposals);
	strvec_clear(&s->notes);
	free(s);
}

static struct json_object *trailers_json(const struct patch *p)
{
	struct json_object *a = json_object_new_array();

	for (size_t t = 0; t < p->n_trailers; t++) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "tag", json_str(p->trailers[t].tag));
		json_object_object_add(o, "value", json_str(p->trailers[t].value));
		json_object_object_add(o, "from", json_str(p->trailers[t].from));
		json_object_array_add(a, o);
	}
	return a;
}

static struct json_object *patch_json(const struct patch *p)
{
	struct json_object *po = json_object_new_object();

	json_object_object_add(po, "seq", json_object_new_int(p->seq));
	json_object_object_add(po, "subject", json_str(p->subject));
	json_object_object_add(po, "raw_subject", json_str(p->raw_subject));
	json_object_object_add(po, "author", json_str(p->author));
	json_object_object_add(po, "date", json_str(p->date));
	json_object_object_add(po, "message_id", json_str(p->message_id));
	json_object_object_add(po, "files", json_object_new_int(p->files));
	json_object_object_add(po, "insertions", json_object_new_int(p->insertions));
	json_object_object_add(po, "deletions", json_object_new_int(p->deletions));
	json_object_object_add(po, "diffstat", json_str(p->diffstat));
	json_object_object_add(po, "trailers", trailers_json(p));
	json_object_object_add(po, "body", json_str(p->body));
	json_object_object_add(po, "diff", json_str(p->diff));
	return po;
}

static struct json_object *params_json(const struct proposal *p)
{
	struct json_object *o = json_object_new_object();

	for (size_t k = 0; k < p->params.n; k++) {
		const char *eq = strchr(p->params.v[k], '=');
		char *key;

		if (!eq)
			continue;
		key = xstrndup(p->params.v[k], eq - p->params.v[k]);
		json_object_object_add(o, key, json_object_new_string(eq + 1));
		free(key);
	}
	return o;
}

static struct json_object *num_or_null(double v)
{
	return isnan(v) ? NULL : json_object_new_double(v);
}

/* A claim's percentage: exact (NAN: null), or rounded to 2 decimals for a reader. */
static struct json_object *pct_json(double v, int exact)
{
	return exact ? num_or_null(v) : json_object_new_double(round(v * 100) / 100);
}

struct json_object *series_to_json(const struct series *s, int exact)
{
	struct json_object *o = json_object_new_object(), *a;

	json_object_object_add(o, "source", json_str(s->source));
	json_object_object_add(o, "source_url", json_str(s->source_url));
	json_object_object_add(o, "format", json_str(s->format));
	json_object_object_add(o, "subject", json_str(s->subject));
	json_object_object_add(o, "author", json_str(s->author));
	json_object_object_add(o, "date", json_str(s->date));
	json_object_object_add(o, "message_id", json_str(s->message_id));
	json_object_object_add(o, "version", json_object_new_int(s->version));
	json_object_object_add(o, "total", json_object_new_int(s->total));
	json_object_object_add(o, "cover", json_str(s->cover));
	json_object_object_add(o, "content_sha256", json_str(s->content_sha256));
	a = json_object_new_array();
	for (size_t i = 0; i < s->n_patches; i++)
		json_object_array_add(a, patch_json(&s->patches[i]));
	json_object_object_add(o, "patches", a);
	a = json_object_new_array();
	for (size_t i = 0; i < s->n_claims; i++) {
		const struct claim *c = &s->claims[i];
		struct json_object *co = json_object_new_object();

		json_object_object_add(co, "patch", json_object_new_int(c->patch_seq));
		json_object_object_add(co, "metric", json_str(c->metric));
		json_object_object_add(co, "direction", json_str(c->direction));
		json_object_object_add(co, "lo_pct", pct_json(c->lo_pct, exact));
		json_object_object_add(co, "hi_pct", pct_json(c->hi_pct, exact));
		json_object_object_add(co, "before", num_or_null(c->before));
		json_object_object_add(co, "after", num_or_null(c->after));
		json_object_object_add(co, "unit", json_str(c->unit));
		json_object_object_add(co, "text", json_str(c->text));
		json_object_array_add(a, co);
	}
	json_object_object_add(o, "expectations", a);
	a = json_object_new_array();
	for (size_t i = 0; i < s->n_proposals; i++) {
		const struct proposal *p = &s->proposals[i];
		struct json_object *po = json_object_new_object();

		json_object_object_add(po, "patch", json_object_new_int(p->patch_seq));
		json_object_object_add(po, "name", json_str(p->name));
		json_object_object_add(po, "type", json_str(p->type));
		json_object_object_add(po, "params", params_json(p));
		json_object_object_add(po, "command", json_str(p->command));
		json_object_object_add(po, "context", json_str(p->context));
		json_object_array_add(a, po);
	}
	json_object_object_add(o, "proposals", a);
	a = json_object_new_array();
	for (size_t i = 0; i < s->notes.n; i++)
		json_object_array_add(a, json_object_new_string(s->notes.v[i]));
	json_object_object_add(o, "notes", a);
	return o;
}

char *series_patch_mbox(const struct series *s, const struct patch *p)
{
	struct buf b = BUF_INIT;
	const char *author = p->author;
	char *fixed = NULL;

	/* git am needs "Name <mail>": borrow the mail of a matching Signed-off-by */
	if (!author || !strchr(author, '<')) {
		for (size_t t = 0; t < p->n_trailers && !fixed; t++)
			if (!strcasecmp(p->trailers[t].tag, "Signed-off-by") && strchr(p->trailers[t].value, '<') &&
			    (!author || starts_with(p->trailers[t].value, author)))
				fixed = xstrdup(p->trailers[t].value);
		if (!fixed)
			fixed = xasprintf("%s <unknown@klab.invalid>", author ? author : "unknown");
		author = fixed;
	}
	buf_addf(&b, "From: %s\n", author);
	if (p->date)
		buf_addf(&b, "Date: %s\n", p->date);
	if (s->total > 1)
		buf_addf(&b, "Subject: [PATCH %d/%d] %s\n\n", p->seq, s->total, p->subject);
	else
		buf_addf(&b, "Subject: [PATCH] %s\n\n", p->subject);
	buf_addstr(&b, p->body);
	buf_addstr(&b, "\n---\n");
	buf_addstr(&b, p->diff);
	if (b.len && b.buf[b.len - 1] != '\n')
		buf_addch(&b, '\n');
	free(fixed);
	return buf_detach(&b, NULL);
}

/* ---- the database ------------------------------------------------------------------- */

static char *json_text(struct json_object *o)
{
	struct buf b = BUF_INIT;

	json_to_buf(&b, o, 0);
	json_object_put(o);
	return buf_detach(&b, NULL);
}

int series_store(struct db *db, const struct series *s, int64_t *id, int *existed, struct buf *err)
{
	struct series_row row = {
		0, s->source, s->source_url, s->subject, s->author, s->date, s->message_id, s->version, s->total,
		s->cover, (char *)s->content_sha256, now_wall(),
	};
	int64_t sid = 0;
	int r;

	if (existed)
		*existed = 0;
	if (!s->n_patches)
		return error_to(err, "series '%s' has no patch with a diff: nothing to store", s->subject);
	if (db_begin(db) < 0)
		return -1;
	r = series_id_by_hash(db, s->content_sha256, &sid);
	if (r < 0)
		goto fail;
	if (r == 1) {
		db_rollback(db);
		*id = sid;
		if (existed)
			*existed = 1;
		return 0;
	}
	if (series_insert(db, &row, &sid) < 0)
		goto fail;
	for (size_t i = 0; i < s->n_patches; i++) {
		const struct patch *p = &s->patches[i];
		struct patch_row pr = {
			p->seq, p->subject, p->author, p->date, p->message_id, p->body, p->diff, p->diffstat,
			json_text(trailers_json(p)),
		};

		r = series_patch_insert(db, sid, &pr);
		free(pr.trailers);
		if (r < 0)
			goto fail;
	}
	for (size_t i = 0; i < s->n_claims; i++) {
		const struct claim *c = &s->claims[i];
		struct claim_row cr = {
			c->patch_seq, c->metric, c->direction, c->lo_pct, c->hi_pct, c->before, c->after, c->unit,
			c->text,
		};

		if (series_claim_insert(db, sid, &cr) < 0)
			goto fail;
	}
	for (size_t i = 0; i < s->n_proposals; i++) {
		const struct proposal *p = &s->proposals[i];
		char *pj = json_text(params_json(p));
		struct proposal_row pr = { p->patch_seq, p->type, pj, p->command };

		r = series_proposal_insert(db, sid, &pr);
		free(pj);
		if (r < 0)
			goto fail;
	}
	if (db_commit(db) < 0)
		goto fail;
	*id = sid;
	return 0;
fail:
	db_rollback(db);
	return error_to(err, "cannot store series '%s': %s", s->subject, db_error(db));
}


static char *dup(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

static int load_patch(const struct patch_row *row, void *data)
{
	struct series *s = data;
	struct patch *p;
	struct json_object *ta;

	s->patches = xrealloc(s->patches, (s->n_patches + 1) * sizeof(*s->patches));
	p = &s->patches[s->n_patches++];
	memset(p, 0, sizeof(*p));
	p->seq = (int)row->seq;
	p->subject = dup(row->subject);
	p->author = dup(row->author);
	p->date = dup(row->date);
	p->message_id = dup(row->message_id);
	p->body = xstrdup(row->body ? row->body : "");
	p->diff = xstrdup(row->diff ? row->diff : "");
	p->diffstat = dup(row->diffstat);
	ta = row->trailers ? json_parse(row->trailers, strlen(row->trailers), "patches.trailers") : NULL;
	for (size_t k = 0; ta && json_object_is_type(ta, json_type_array) && k < json_object_array_length(ta); k++) {
		struct json_object *t = json_object_array_get_idx(ta, k);
		const char *tag = NULL, *val = NULL, *from = NULL;

		json_get_str(t, "tag", &tag, "trailer");
		json_get_str(t, "value", &val, "trailer");
		json_get_str(t, "from", &from, "trailer");
		if (tag && val)
			add_trailer(p, tag, strlen(tag), val, from);
	}
	if (ta)
		json_object_put(ta);
	{
		/* counts back from the diffstat's last line */
		const char *last = p->diffstat ? strrchr(p->diffstat, '\n') : NULL;

		last = last ? last + 1 : p->diffstat;
		if (last) {
			const char *q;

			p->files = atoi(last);
			if ((q = strstr(last, " insertion")))
				while (q > last && isdigit((unsigned char)q[-1]))
					q--, p->insertions = atoi(q);
			if ((q = strstr(last, " deletion")))
				while (q > last && isdigit((unsigned char)q[-1]))
					q--, p->deletions = atoi(q);
		}
	}
	return 0;
}

static int load_claim(const struct claim_row *row, void *data)
{
	struct series *s = data;
	struct claim *c;

	s->claims = xrealloc(s->claims, (s->n_claims + 1) * sizeof(*s->claims));
	c = &s->claims[s->n_claims++];
	c->patch_seq = (int)row->patch_seq;
	c->metric = dup(row->metric);
	c->direction = dup(row->direction);
	c->lo_pct = isnan(row->lo_pct) ? 0 : row->lo_pct;
	c->hi_pct = isnan(row->hi_pct) ? 0 : row->hi_pct;
	c->before = row->before;
	c->after = row->after;
	c->unit = dup(row->unit);
	c->text = dup(row->text);
	return 0;
}

static int load_proposal(const struct proposal_row *row, void *data)
{
	struct series *s = data;
	struct proposal *p;
	struct json_object *po = row->params ? json_parse(row->params, strlen(row->params), "proposals.params") : NULL;
	const char *fl = NULL;

	s->proposals = xrealloc(s->proposals, (s->n_proposals + 1) * sizeof(*s->proposals));
	p = &s->proposals[s->n_proposals++];
	memset(p, 0, sizeof(*p));
	strvec_init(&p->params);
	p->patch_seq = (int)row->patch_seq;
	p->type = dup(row->type);
	p->command = dup(row->command);
	if (po && json_object_is_type(po, json_type_object)) {
		json_object_object_foreach(po, k, v)
			strvec_pushf(&p->params, "%s=%s", k, json_object_get_string(v));
		json_get_str(po, "flows", &fl, "proposals.params");
		if (!fl)
			json_get_str(po, "threads", &fl, "proposals.params");
	}
	p->name = xasprintf("%s_%s", p->type ? p->type : "workload", fl ? fl : "1");
	if (po)
		json_object_put(po);
	return 0;
}

int series_load_db(struct db *db, int64_t id, struct series **out, struct buf *err)
{
	struct series *s = xcalloc(1, sizeof(*s));
	struct series_row row;
	int r;

	strvec_init(&s->notes);
	r = series_get(db, id, &row);
	if (r <= 0) {
		if (r == 0)
			error_to(err, "no series with id %lld", (long long)id);
		else
			db_error_to(db, err);
		goto fail;
	}
	s->source = row.source, row.source = NULL;
	s->source_url = row.source_url, row.source_url = NULL;
	s->subject = row.subject, row.subject = NULL;
	s->author = row.author, row.author = NULL;
	s->date = row.date, row.date = NULL;
	s->message_id = row.message_id, row.message_id = NULL;
	s->version = (int)row.version;
	s->total = (int)row.total;
	s->cover = row.cover, row.cover = NULL;
	snprintf(s->content_sha256, sizeof(s->content_sha256), "%s", row.content_sha256 ? row.content_sha256 : "");
	s->format = xstrdup("database");
	series_row_release(&row);
	if (series_patches_each(db, id, load_patch, s) < 0 || series_claims_each(db, id, 0, load_claim, s) < 0 ||
	    series_proposals_each(db, id, load_proposal, s) < 0) {
		db_error_to(db, err);
		goto fail;
	}
	*out = s;
	return 0;
fail:
	series_free(s);
	return -1;
}
