/* intake.c: a series fetched and parsed by a helper in the sandbox, as the sandbox user; klab reads back only its JSON. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "intake/claims.h"
#include "intake/intake.h"
#include "jsonh.h"
#include "log.h"
#include "run.h"
#include "sandbox/sandbox.h"
#include "intake/series.h"
#include "strvec.h"
#include "util.h"

#define ANSWER_CAP (512u << 20)

/* ---- the JSON both sides speak: series_to_json(s, 1), read back ---------------------- */

/* Reading it back: every field checked; the first bad one is named and the rest skipped. */
struct rd {
	const char *what;
	int bad;
	struct buf *err;	/* the first bad field named (NULL: logged) */
};

static struct json_object *field(struct rd *r, struct json_object *o, const char *key, enum json_type t,
				 int may_be_null)
{
	struct json_object *v = NULL;

	if (r->bad)
		return NULL;
	if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v)) {
		r->bad = error_to(r->err, "%s: bad answer from the intake helper: no field '%s'", r->what, key);
		return NULL;
	}
	if (!v && may_be_null)
		return NULL;
	if (!json_object_is_type(v, t) && !(t == json_type_double && json_object_is_type(v, json_type_int))) {
		r->bad = error_to(r->err, "%s: bad answer from the intake helper: field '%s' has the wrong type",
				  r->what, key);
		return NULL;
	}
	return v;
}

static char *str(struct rd *r, struct json_object *o, const char *key)
{
	struct json_object *v = field(r, o, key, json_type_string, 1);

	return v ? xstrdup(json_object_get_string(v)) : NULL;
}

static int integer(struct rd *r, struct json_object *o, const char *key)
{
	struct json_object *v = field(r, o, key, json_type_int, 0);
	int64_t n = v ? json_object_get_int64(v) : 0;

	if (n < INT_MIN || n > INT_MAX) {
		r->bad = error_to(r->err, "%s: bad answer from the intake helper: field '%s' out of range", r->what,
				  key);
		return 0;
	}
	return (int)n;
}

static double dbl(struct rd *r, struct json_object *o, const char *key)
{
	struct json_object *v = field(r, o, key, json_type_double, 1);

	return v ? json_object_get_double(v) : NAN;
}

static size_t array(struct rd *r, struct json_object *o, const char *key, struct json_object **a)
{
	*a = field(r, o, key, json_type_array, 0);
	return *a ? json_object_array_length(*a) : 0;
}

int intake_from_json(struct json_object *o, const char *what, struct series **out, struct buf *err)
{
	struct rd r = { what, 0, err };
	struct series *s = xcalloc(1, sizeof(*s));
	struct json_object *a;
	char *sha;
	size_t n;

	strvec_init(&s->notes);
	s->source = str(&r, o, "source");
	s->source_url = str(&r, o, "source_url");
	s->format = str(&r, o, "format");
	s->subject = str(&r, o, "subject");
	s->author = str(&r, o, "author");
	s->date = str(&r, o, "date");
	s->message_id = str(&r, o, "message_id");
	s->version = integer(&r, o, "version");
	s->total = integer(&r, o, "total");
	s->cover = str(&r, o, "cover");
	sha = str(&r, o, "content_sha256");
	if (!r.bad && (!sha || strlen(sha) != 64 || strspn(sha, "0123456789abcdef") != 64))
		r.bad = error_to(r.err, "%s: bad answer from the intake helper: content_sha256 is not a sha256",
				 what);
	if (sha)
		snprintf(s->content_sha256, sizeof(s->content_sha256), "%s", sha);
	free(sha);
	if (!r.bad && !s->subject)
		r.bad = error_to(r.err, "%s: bad answer from the intake helper: no subject", what);
	n = array(&r, o, "patches", &a);
	s->patches = xcalloc(n ? n : 1, sizeof(*s->patches));
	for (size_t i = 0; i < n && !r.bad; i++) {
		struct json_object *po = json_object_array_get_idx(a, i), *ta;
		struct patch *p = &s->patches[s->n_patches++];
		size_t nt;

		p->seq = integer(&r, po, "seq");
		p->subject = str(&r, po, "subject");
		p->raw_subject = str(&r, po, "raw_subject");
		p->author = str(&r, po, "author");
		p->date = str(&r, po, "date");
		p->message_id = str(&r, po, "message_id");
		p->body = str(&r, po, "body");
		p->diff = str(&r, po, "diff");
		p->diffstat = str(&r, po, "diffstat");
		p->files = integer(&r, po, "files");
		p->insertions = integer(&r, po, "insertions");
		p->deletions = integer(&r, po, "deletions");
		if (!r.bad && (!p->subject || !p->body || !p->diff))
			r.bad = error_to(r.err, "%s: bad answer from the intake helper: patch %zu lacks its subject, "
					 "message or diff", what, i + 1);
		nt = array(&r, po, "trailers", &ta);
		p->trailers = xcalloc(nt ? nt : 1, sizeof(*p->trailers));
		for (size_t t = 0; t < nt && !r.bad; t++) {
			struct json_object *to = json_object_array_get_idx(ta, t);
			struct trailer *tr = &p->trailers[p->n_trailers++];

			tr->tag = str(&r, to, "tag");
			tr->value = str(&r, to, "value");
			tr->from = str(&r, to, "from");
			if (!r.bad && (!tr->tag || !tr->value))
				r.bad = error_to(r.err, "%s: bad answer from the intake helper: a trailer of patch %zu "
						 "is empty", what, i + 1);
		}
	}
	n = array(&r, o, "expectations", &a);
	s->claims = xcalloc(n ? n : 1, sizeof(*s->claims));
	for (size_t i = 0; i < n && !r.bad; i++) {
		struct json_object *co = json_object_array_get_idx(a, i);
		struct claim *c = &s->claims[s->n_claims++];

		c->patch_seq = integer(&r, co, "patch");
		c->metric = str(&r, co, "metric");
		c->direction = str(&r, co, "direction");
		c->lo_pct = dbl(&r, co, "lo_pct");
		c->hi_pct = dbl(&r, co, "hi_pct");
		c->before = dbl(&r, co, "before");
		c->after = dbl(&r, co, "after");
		c->unit = str(&r, co, "unit");
		c->text = str(&r, co, "text");
		if (!r.bad && (!c->metric || !c->direction || isnan(c->lo_pct) || isnan(c->hi_pct)))
			r.bad = error_to(r.err, "%s: bad answer from the intake helper: claim %zu is incomplete", what,
					 i + 1);
	}
	n = array(&r, o, "proposals", &a);
	s->proposals = xcalloc(n ? n : 1, sizeof(*s->proposals));
	for (size_t i = 0; i < n && !r.bad; i++) {
		struct json_object *po = json_object_array_get_idx(a, i), *pa;
		struct proposal *p = &s->proposals[s->n_proposals++];

		strvec_init(&p->params);
		p->patch_seq = integer(&r, po, "patch");
		p->type = str(&r, po, "type");
		p->name = str(&r, po, "name");
		p->command = str(&r, po, "command");
		p->context = str(&r, po, "context");
		pa = field(&r, po, "params", json_type_object, 0);
		if (!pa)
			continue;
		/* {"flows": "500", ...}: back to "flows=500", in the order given */
		json_object_object_foreach(pa, key, v) {
			if (r.bad)
				break;
			if (!*key || strchr(key, '=') || !json_object_is_type(v, json_type_string))
				r.bad = error_to(r.err, "%s: bad answer from the intake helper: a parameter of proposal "
						 "%zu is not key=value", what, i + 1);
			else
				strvec_pushf(&p->params, "%s=%s", key, json_object_get_string(v));
		}
	}
	n = array(&r, o, "notes", &a);
	for (size_t i = 0; i < n && !r.bad; i++) {
		struct json_object *v = json_object_array_get_idx(a, i);

		if (!json_object_is_type(v, json_type_string))
			r.bad = error_to(r.err, "%s: bad answer from the intake helper: a note is not text", what);
		else
			strvec_push(&s->notes, json_object_get_string(v));
	}
	if (r.bad) {
		series_free(s);
		return -1;
	}
	*out = s;
	return 0;
}

/* ---- the helper --------------------------------------------------------------------- */

/* The klab program (the helper is `klab series show --intake`): this one, or the klab beside klabd. */
static char *klab_program(void)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n <= 0)
		return xstrdup("klab");
	self[n] = 0;
	slash = strrchr(self, '/');
	if (slash && !strcmp(slash + 1, "klab"))
		return xstrdup(self);
	if (slash)
		*slash = 0;
	return xasprintf("%s/klab", slash ? self : ".");
}

/*
 * A failure of series_load_sandboxed(): logged, and kept in WHY when the
 * caller gave one (series_opts.why), so that a job's intake step says it in
 * its reason. -1.
 */
static int fail(struct buf *why, const char *fmt, ...) KLAB_PRINTF(2, 3);
static int fail(struct buf *why, const char *fmt, ...)
{
	struct buf m = BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	buf_vaddf(&m, fmt, ap);
	va_end(ap);
	if (why) {
		buf_reset(why);
		buf_addstr(why, m.buf);
	}
	error("%s", m.buf);
	buf_release(&m);
	return -1;
}

/*
 * What klab hands its intake helper on standard input: for each source, in
 * order, a line "-" (a source the helper fetches) or a line with the byte
 * count of the source's text, then the text. klab opens the files (and its
 * own standard input for "-") with its own rights, so nothing of the host's
 * file system is bound into the sandbox for intake: a mail in a folder only
 * root may enter, or a path through folders the sandbox does not show
 * (kernels/lab/../../../shared/seeds/...), is read as klab itself reads it.
 * Returns 1 when some source is fetched (the helper needs the network),
 * 0 when none is, -1 when a file cannot be read (logged, naming it).
 */
static int intake_texts(const struct strvec *srcs, struct buf *in, struct buf *why)
{
	int net = 0;

	for (size_t i = 0; i < srcs->n; i++) {
		const char *f = series_source_file(srcs->v[i]);
		struct buf t = BUF_INIT;

		if (!f) {
			net = 1;
			buf_addstr(in, "-\n");
			continue;
		}
		if (!strcmp(f, "-")) {
			if (buf_read_fd(&t, 0) < 0) {
				buf_release(&t);
				return fail(why, "cannot read standard input: %s", strerror(errno));
			}
		} else {
			int fd = open(f, O_RDONLY | O_CLOEXEC), e;

			if (fd < 0 || buf_read_fd(&t, fd) < 0) {
				e = errno;
				if (fd >= 0)
					close(fd);
				buf_release(&t);
				return fail(why, "cannot read '%s': %s", f, strerror(e));
			}
			close(fd);
		}
		buf_addf(in, "%zu\n", t.len);
		buf_add(in, t.buf, t.len);
		buf_release(&t);
	}
	return net;
}

int intake_read_texts(const char *in, size_t len, size_t n, struct series_text *texts)
{
	size_t off = 0;

	for (size_t i = 0; i < n; i++) {
		const char *nl = off < len ? memchr(in + off, '\n', len - off) : NULL;
		unsigned long long l;
		char *end;

		if (!nl)
			return error("intake helper: no header for source %zu on standard input", i + 1);
		texts[i].text = NULL;
		texts[i].len = 0;
		if (nl - (in + off) == 1 && in[off] == '-') {
			off = nl - in + 1;
			continue;
		}
		l = strtoull(in + off, &end, 10);
		if (end != nl || end == in + off || !isdigit((unsigned char)in[off]) || l > len - (nl - in + 1))
			return error("intake helper: bad header for source %zu on standard input", i + 1);
		off = nl - in + 1;
		texts[i].text = in + off;
		texts[i].len = (size_t)l;
		off += (size_t)l;
	}
	if (off != len)
		return error("intake helper: %zu bytes after the last source on standard input", len - off);
	return 0;
}

/* The helper's first error line into WHY (its "klab: error: " cut), else how it ended. */
static void helper_reason(const struct run_cmd *c, struct buf *why)
{
	static const char tag[] = "klab: error: ";
	const char *e = c->err.len ? strstr(c->err.buf, tag) : NULL;

	buf_reset(why);
	if (e) {
		const char *nl;

		e += sizeof(tag) - 1;
		nl = strchr(e, '\n');
		buf_add(why, e, nl ? (size_t)(nl - e) : strlen(e));
	} else {
		buf_addf(why, "the intake helper ended with %s", run_describe(c));
	}
}

int series_load_sandboxed(const struct klab_config *cfg, const char *source, const struct series_opts *opts,
			  struct series **out)
{
	struct sandbox sb = SANDBOX_INIT;
	struct strvec srcs = STRVEC_INIT, av = STRVEC_INIT, env = STRVEC_INIT;
	struct run_cmd c = RUN_CMD_INIT;
	struct sandbox_spec sp = { NULL, NULL, NULL, 0, "patch intake" };
	struct json_object *o = NULL;
	struct buf in = BUF_INIT, e = BUF_INIT, *why = opts ? opts->why : NULL;
	char *prog = NULL, *what = NULL;
	static const char *const pass[] = { "KLAB_LORE_URL", "KLAB_PATCHWORK_URL", "KLAB_FETCH_TIMEOUT", "ASAN_OPTIONS",
					    "UBSAN_OPTIONS", "http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY",
					    "HTTPS_PROXY", "NO_PROXY", NULL };
	int ret = -1, net, exe = -1;

	*out = NULL;
	if (sandbox_init(&sb, cfg, &e) < 0) {
		fail(why, "%s", e.buf);
		goto out;
	}
	if (sb.off) {
		ret = series_load(source, opts, out);
		if (ret < 0 && why && !why->len)	/* the parser only logs: say where its errors are */
			buf_addf(why, "cannot read series '%s': the parser's errors are in the log ([lab] sandbox = "
				 "none: it ran in klab's own process)", source);
		goto out;
	}
	strvec_split(&srcs, source, "\n");
	if (!srcs.n) {
		fail(why, "no series source given");
		goto out;
	}
	prog = klab_program();
	if (!strchr(prog, '/')) {
		char *found = run_which(prog);

		if (found) {
			free(prog);
			prog = found;
		}
	}
	/*
	 * The helper is run through a descriptor klab opened (not O_CLOEXEC: bwrap
	 * and the helper inherit it), so that it runs from a folder the sandbox
	 * user may not enter (a clone under /root, a 0700 scratch folder) and no
	 * path of the host's is bound into the sandbox for intake.
	 */
	if ((exe = open(prog, O_RDONLY)) < 0) {
		fail(why, "cannot open the intake helper '%s': %s", prog, strerror(errno));
		goto out;
	}
	strvec_pushf(&av, "/proc/self/fd/%d", exe);
	strvec_push(&av, "series");
	strvec_push(&av, "show");
	strvec_push(&av, "--intake");
	strvec_push(&av, "--json");
	if (opts && opts->subject) {
		strvec_push(&av, "--subject");
		strvec_push(&av, opts->subject);
	}
	if (opts && opts->lore_url) {
		strvec_push(&av, "--lore-url");
		strvec_push(&av, opts->lore_url);
	}
	if (opts && opts->patchwork_url) {
		strvec_push(&av, "--patchwork-url");
		strvec_push(&av, opts->patchwork_url);
	}
	if (opts && opts->timeout_ms) {
		strvec_push(&av, "--timeout");
		strvec_pushf(&av, "%ldms", opts->timeout_ms);
	}
	strvec_push(&av, "--");
	for (size_t i = 0; i < srcs.n; i++)
		strvec_push(&av, srcs.v[i]);	/* names only: the texts come on standard input */
	if ((net = intake_texts(&srcs, &in, why)) < 0)
		goto out;
	sp.net = net;
	for (size_t i = 0; pass[i]; i++)
		if (getenv(pass[i]))
			strvec_pushf(&env, "%s=%s", pass[i], getenv(pass[i]));
	c.argv = (const char *const *)av.v;
	c.env = (const char *const *)env.v;
	c.in = in.buf;
	c.in_len = in.len;
	c.timeout_ms = 10L * 60 * 1000;
	c.out_cap = ANSWER_CAP;
	c.why = &e;
	if (sandbox_run(&sb, &sp, &c) < 0) {
		fail(why, "%s", e.buf);
		goto out;
	}
	if (c.err.len)
		fputs(c.err.buf, stderr);	/* the helper's own messages: what it could not read, and why */
	what = xasprintf("series '%s'", srcs.v[0]);
	if (c.status != 0 || c.timed_out) {
		error("cannot read %s%s (intake helper as user '%s': %s)", what, srcs.n > 1 ? " and the rest" : "",
		      sb.user, run_describe(&c));
		if (opts && opts->why)
			helper_reason(&c, opts->why);
		goto out;
	}
	if (c.truncated) {
		fail(why, "cannot read %s: the intake helper's answer is larger than %u MiB", what, ANSWER_CAP >> 20);
		goto out;
	}
	o = json_parse(c.out.buf, c.out.len, what);
	if (!o) {
		fail(why, "cannot read %s: the intake helper's answer is not JSON", what);
		goto out;
	}
	if (intake_from_json(o, what, out, &e) < 0) {
		fail(why, "%s", e.buf);
		goto out;
	}
	ret = 0;
out:
	if (o)
		json_object_put(o);
	if (exe >= 0)
		close(exe);
	run_release(&c);
	buf_release(&in);
	buf_release(&e);
	sandbox_release(&sb);
	strvec_clear(&srcs);
	strvec_clear(&av);
	strvec_clear(&env);
	free(prog);
	free(what);
	return ret;
}
