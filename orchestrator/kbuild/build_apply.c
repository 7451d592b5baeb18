/* build_apply.c: applying a series and local patches to the work tree: git am -3, else patch -p1 with fuzz (not for binary diffs), each outcome recorded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "kbuild/build.h"
#include "kbuild/build_int.h"
#include "intake/diff.h"
#include "log.h"
#include "run.h"
#include "intake/series.h"
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
 * What git am -3 said was wrong, from its messages: its conflicts and
 * errors without the generic ones ("Failed to merge in the changes."),
 * joined with "; " ("" when it said nothing specific).
 */
static char *am_reason(const char *out, const char *err)
{
	static const char *const generic[] = { "Failed to merge in the changes.", "could not build fake ancestor" };
	const char *texts[] = { err, out };
	struct strvec got = STRVEC_INIT;
	char *s;

	for (size_t k = 0; k < 2; k++)
		for (const char *l = texts[k]; l && *l && got.n < 3;) {
			const char *nl = strchr(l, '\n'), *v = NULL;
			size_t len = nl ? (size_t)(nl - l) : strlen(l), skip = 0;

			if (starts_with(l, "error: "))
				skip = 7;
			else if (starts_with(l, "warning: Cannot merge binary files: "))
				skip = 9;
			else if (starts_with(l, "CONFLICT "))
				skip = 0, v = l;
			if (skip || v) {
				char *t = xstrndup(l + skip, len - skip);
				int known = 0;

				for (size_t g = 0; g < ARRAY_SIZE(generic); g++)
					known |= !strcmp(t, generic[g]);
				if (!known && *t)
					strvec_push(&got, t);
				free(t);
			}
			l = nl ? nl + 1 : l + len;
		}
	s = strvec_join(&got, "; ");
	strvec_clear(&got);
	return s;
}

/*
 * Why patch -p1 cannot stand in for git am on DIFF, or NULL: binary data
 * it does not support, and "Binary files ... differ", which it skips while
 * reporting success.
 */
static char *no_fallback(const char *diff, int mail)
{
	struct diff d;
	char *why = NULL;

	if (diff_parse(diff, &d) != 1)
		return NULL;
	for (size_t i = 0; i < d.n_files && !why; i++) {
		const struct diff_file *f = &d.files[i];
		char *name = diff_file_display(f);

		if (f->binary == DIFF_BINARY_DATA)
			why = xasprintf("patch -p1 cannot apply the binary diff of '%s' (GIT binary patch)%s", name,
					mail ? "" : "; give it as a git format-patch mail, which git am applies");
		else if (f->binary == DIFF_BINARY_NODATA)
			why = xasprintf("the diff of '%s' has no binary data ('Binary files ... differ'): patch -p1"
					" would leave the file as it is; it needs git format-patch --binary", name);
		free(name);
	}
	diff_free(&d);
	return why;
}

/*
 * A rename, copy or mode change without hunks whose file is not in the work
 * tree SRC: what patch -p1 failed on, said plainly, or NULL.
 */
static char *missing_source(const char *src, const char *diff)
{
	struct diff d;
	char *why = NULL;

	if (diff_parse(diff, &d) != 1)
		return NULL;
	for (size_t i = 0; i < d.n_files && !why; i++) {
		const struct diff_file *f = &d.files[i];
		char *path, *name;

		if (f->hunks || f->binary != DIFF_TEXT || !f->old_path || f->status == DIFF_ADDED)
			continue;
		path = xasprintf("%s/%s", src, f->old_path);
		name = diff_file_display(f);
		if (!file_exists(path))
			why = xasprintf("the %s '%s' has no content to patch and '%s' is not in the tree",
					f->status == DIFF_RENAMED ? "rename-only diff" : f->status == DIFF_COPIED ?
					"copy-only diff" : f->status == DIFF_DELETED ? "deletion" : "mode change",
					name, f->old_path);
		free(name);
		free(path);
	}
	diff_free(&d);
	return why;
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
	char *am_why = NULL, *why;
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
		am_why = am_reason(out.buf, err.buf);
		git(src, NULL, NULL, 0, "am", "--abort", NULL);
		buf_reset(&out);
		buf_reset(&err);
	}
	if ((why = no_fallback(diff, mail))) {
		/* not a hunk that failed: what git am said, and why patch cannot take over */
		buf_addf(fail, "%s%s%s%s", am_why && *am_why ? "git am -3: " : "", am_why ? am_why : "",
			 am_why && *am_why ? "; " : "", why);
		dprintf(logfd, "klab: %s: %s\n", r->name, fail->buf);
		r->how = APPLY_FAILED;
		r->method = xstrdup(mail ? "git am -3" : "patch -p1 --fuzz=2");
		r->detail = xstrdup(fail->buf);
		free(why);
		goto out;
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
			if ((why = missing_source(src, diff))) {
				buf_addf(fail, "%s%s%s%s", why, am_why && *am_why ? " (git am -3: " : "",
					 am_why ? am_why : "", am_why && *am_why ? ")" : "");
				free(why);
			}
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
	free(am_why);
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
