/* build_apply.c: applying a series and local patches to the work tree: git am -3, else patch -p1 with fuzz, each outcome recorded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "build.h"
#include "build_int.h"
#include "log.h"
#include "run.h"
#include "series.h"
#include "strvec.h"
#include "util.h"

const char *apply_how_name(enum apply_how h)
{
	switch (h) {
	case APPLY_CLEAN: return "clean";
	case APPLY_OFFSET: return "offset";
	case APPLY_FUZZ: return "fuzz";
	case APPLY_FAILED: return "failed";
	}
	return "?";
}

/* The header line of hunk K (1-based) of FILE in a diff, or NULL. */
static char *hunk_header(const char *diff, const char *file, int k)
{
	const char *p = diff;
	int in_file = 0, n = 0;

	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);

		if (starts_with(p, "+++ ")) {
			const char *nm = p + 4;
			size_t fl = strlen(file);

			if (starts_with(nm, "b/"))
				nm += 2;
			in_file = !strncmp(nm, file, fl) && (nm[fl] == '\n' || nm[fl] == '\t' || !nm[fl]);
			n = 0;
		} else if (in_file && starts_with(p, "@@ ")) {
			if (++n == k)
				return xstrndup(p, l);
		}
		p = nl ? nl + 1 : NULL;
	}
	return NULL;
}

/* Read patch(1)'s messages into R (fuzz, offsets) and name the first failed hunk. */
static void parse_patch_output(const char *out, const char *diff, struct apply_result *r, struct buf *fail)
{
	struct strvec lines = STRVEC_INIT;
	char *file = NULL;

	strvec_split(&lines, out, "\n");
	for (size_t i = 0; i < lines.n; i++) {
		const char *l = lines.v[i], *q;
		int hunk, at;

		if ((q = skip_prefix(l, "patching file ")) || (q = skip_prefix(l, "checking file "))) {
			free(file);
			file = xstrdup(q);
			if (file[0] == '\'' && strlen(file) > 1) {
				memmove(file, file + 1, strlen(file));
				file[strlen(file) - 1] = 0;
			}
		} else if (sscanf(l, "Hunk #%d succeeded at %d", &hunk, &at) == 2) {
			const char *f = strstr(l, "with fuzz ");

			if (f && atoi(f + 10) > r->max_fuzz)
				r->max_fuzz = atoi(f + 10);
			if (strstr(l, "(offset "))
				r->offsets++;
		} else if (sscanf(l, "Hunk #%d FAILED at %d", &hunk, &at) == 2 && !fail->len) {
			char *hh = file ? hunk_header(diff, file, hunk) : NULL;

			buf_addf(fail, "%s hunk #%d failed at line %d%s%s", file ? file : "?", hunk, at,
				 hh ? ": " : "", hh ? hh : "");
			free(hh);
		} else if (strstr(l, "Reversed (or previously applied) patch detected") && !fail->len) {
			buf_addf(fail, "%s: already applied (or reversed)", file ? file : "?");
		} else if (starts_with(l, "can't find file to patch") && !fail->len) {
			buf_addf(fail, "a file it changes does not exist (%s)", l);
		}
	}
	free(file);
	strvec_clear(&lines);
}

/*
 * Apply one patch (mail text MBOX or a plain diff) to the work tree SRC:
 * git am -3, else patch -p1 --fuzz=2 (checked with --dry-run first, then
 * committed). R is filled; 0 applied, -1 failed (FAIL says where).
 */
int apply_one(const char *src, const char *file, const char *diff, const char *subject,
	      int mail, struct apply_result *r, struct buf *fail, int logfd)
{
	struct buf out = BUF_INIT, err = BUF_INIT;
	int ret = -1;

	if (mail) {
		if (git(src, &out, &err, 0, "am", "-3", "-q", file, NULL) == 0) {
			r->how = APPLY_CLEAN;
			r->method = xstrdup("git am -3");
			r->detail = xstrdup("");
			dprintf(logfd, "klab: %s: applied cleanly with git am -3\n", r->name);
			ret = 0;
			goto out;
		}
		dprintf(logfd, "klab: %s: git am -3 failed, falling back to patch -p1:\n%s%s\n", r->name, out.buf,
			err.buf);
		git(src, NULL, NULL, 0, "am", "--abort", NULL);
		buf_reset(&out);
		buf_reset(&err);
	}
	{
		const char *const dry[] = { "patch", "-p1", "--fuzz=2", "-N", "-t", "--no-backup-if-mismatch",
					    "-r", "-", "--dry-run", "-i", file, NULL };
		const char *const real[] = { "patch", "-p1", "--fuzz=2", "-N", "-t", "--no-backup-if-mismatch",
					     "-r", "-", "-i", file, NULL };
		const char *const env[] = { "LC_ALL=C", NULL };
		struct run_cmd c = RUN_CMD_INIT;

		c.argv = dry;
		c.dir = src;
		c.env = env;
		c.timeout_ms = 120000;
		if (build_run(&c, 0) < 0) {
			run_release(&c);
			goto out;
		}
		dprintf(logfd, "klab: %s: patch -p1 --fuzz=2 --dry-run:\n%s%s", r->name, c.out.buf, c.err.buf);
		r->method = xstrdup("patch -p1 --fuzz=2");
		if (c.status != 0) {
			parse_patch_output(c.out.buf, diff, r, fail);
			if (!fail->len)
				buf_addf(fail, "%s", last_line(c.err.len ? c.err.buf : c.out.buf));
			r->how = APPLY_FAILED;
			r->detail = xstrdup(fail->buf);
			run_release(&c);
			goto out;
		}
		parse_patch_output(c.out.buf, diff, r, fail);
		r->how = r->max_fuzz ? APPLY_FUZZ : r->offsets ? APPLY_OFFSET : APPLY_CLEAN;
		r->detail = xstrdup(c.out.buf);
		run_release(&c);
		c = (struct run_cmd)RUN_CMD_INIT;
		c.argv = real;
		c.dir = src;
		c.env = env;
		c.timeout_ms = 120000;
		if (build_run(&c, 0) < 0 || c.status != 0) {
			buf_addf(fail, "patch -p1 failed after a clean dry run: %s", last_line(c.out.buf));
			r->how = APPLY_FAILED;
			run_release(&c);
			goto out;
		}
		run_release(&c);
	}
	if (git(src, NULL, &err, 0, "add", "-A", "-f", ".", NULL) ||
	    git(src, NULL, &err, 0, "commit", "-q", "--no-verify", "--allow-empty", "-m", subject, NULL)) {
		buf_addf(fail, "cannot commit the applied patch: %s", last_line(err.buf));
		r->how = APPLY_FAILED;
		goto out;
	}
	ret = 0;
out:
	buf_release(&out);
	buf_release(&err);
	return ret;
}

/*
 * Patch I of the build (the series first, then the local patches): its
 * text into TEXT and what apply_one() needs; its name into R. 0 or -1.
 */
static int patch_at(struct build *b, size_t i, struct buf *text, struct apply_result *r, const char **diff,
		    const char **subject, int *mail)
{
	const struct series *s = b->req->series;
	size_t n_series = s ? s->n_patches : 0;

	if (i < n_series) {
		const struct patch *p = &s->patches[i];
		char *m = series_patch_mbox(s, p);

		buf_addstr(text, m);
		free(m);
		r->name = xasprintf("%d/%d %s", p->seq, s->total, p->subject);
		*diff = p->diff;
		*subject = p->subject;
		*mail = 1;
	} else {
		const char *lp = b->req->local_patches[i - n_series];
		const char *base = strrchr(lp, '/');

		r->name = xasprintf("local %s", base ? base + 1 : lp);
		if (buf_read_file(text, lp) < 0)
			return -1;
		*diff = text->buf;
		*subject = r->name;
		*mail = starts_with(text->buf, "From ") || starts_with(text->buf, "From: ");
	}
	return 0;
}

int build_apply(struct build *b)
{
	const struct series *s = b->req->series;
	size_t total = (s ? s->n_patches : 0) + b->n_local;
	char *pfile = xasprintf("%s/patch.mbox", b->tmpdir);
	int ret = -1;

	if (reset_worktree(b->src, b->commit) < 0)
		goto out;
	b->worktree_dirty = 1;
	b->ap = xcalloc(total ? total : 1, sizeof(*b->ap));
	for (size_t i = 0; i < total; i++) {
		struct apply_result *r = &b->ap[b->nap++];
		struct buf fail = BUF_INIT, text = BUF_INIT;
		const char *diff, *subject;
		int mail, rc;

		rc = patch_at(b, i, &text, r, &diff, &subject, &mail);
		if (rc == 0)
			rc = write_file_atomic(pfile, text.buf, text.len, 0644);
		if (rc == 0 && apply_one(b->src, pfile, diff, subject, mail, r, &fail, b->logfd) < 0) {
			if (s && i < s->n_patches)
				buf_addf(&b->msg, "cannot apply patch %d/%d '%s'", s->patches[i].seq, s->total,
					 s->patches[i].subject);
			else
				buf_addf(&b->msg, "cannot apply %s", r->name);
			buf_addf(&b->msg, " to tree '%s' at %.12s: %s", b->t.name, b->commit,
				 fail.len ? fail.buf : "unknown failure");
			error("%s", b->msg.buf);
			rc = -1;
		} else if (rc == 0) {
			info("patch %s: %s (%s%s)", r->name, apply_how_name(r->how), r->method,
			     r->how == APPLY_FUZZ ? ", fuzz" : "");
		}
		buf_release(&fail);
		buf_release(&text);
		if (rc < 0)
			goto out;
	}
	unlink(pfile);
	ret = 0;
out:
	free(pfile);
	return ret;
}
