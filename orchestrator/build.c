/* build.c: kernel trees, patch application, config recipes, ccache builds and the artifact store. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "buf.h"
#include "build.h"
#include "db.h"
#include "fetch.h"
#include "jsonh.h"
#include "lock.h"
#include "log.h"
#include "run.h"
#include "series.h"
#include "strvec.h"
#include "util.h"

#define DEFAULT_TARBALL "/usr/src/linux-source-6.1.tar.xz"
#define IMPORT_TAG "klab-import"
#define GIT_TIMEOUT_MS (30L * 60 * 1000)

const char *build_cache_dir(void)
{
	const char *e = getenv("KLAB_KERNEL_CACHE");

	return e && *e ? e : "/var/cache/klab";
}

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

/* ---- the tree recipe ------------------------------------------------------------ */

struct tree {
	char *name;
	char *git;		/* URL or local path, or NULL */
	char *branch;
	char *tarball;
	char *base;		/* tinyconfig | defconfig | running | FILE */
	struct strvec fragments;	/* resolved paths */
	char *localversion;	/* prefix of LOCALVERSION */
	int jobs;
};

static void tree_free(struct tree *t)
{
	free(t->name);
	free(t->git);
	free(t->branch);
	free(t->tarball);
	free(t->base);
	strvec_clear(&t->fragments);
	free(t->localversion);
}

/* A fragment name -> path: as given if it exists, else under kernels/configs. */
static char *find_fragment(const char *f)
{
	const char *dirs[3];
	const char *env = getenv("KLAB_KERNEL_CONFIGS");
	size_t nd = 0;

	if (f[0] == '/' || file_exists(f))
		return xstrdup(f);
	if (env && *env)
		dirs[nd++] = env;
	dirs[nd++] = KLAB_SRCDIR "/kernels/configs";
	dirs[nd++] = "/usr/local/share/klab/kernels/configs";
	for (size_t i = 0; i < nd; i++) {
		char *p = xasprintf("%s/%s", dirs[i], f);

		if (file_exists(p))
			return p;
		free(p);
	}
	return NULL;
}

static int tree_resolve(const struct klab_config *cfg, const char *name, struct tree *t)
{
	const struct conf_tree *ct = cfg && name ? conf_tree(cfg, name) : NULL;

	memset(t, 0, sizeof(*t));
	strvec_init(&t->fragments);
	if (!ct) {
		const char *tb = getenv("KLAB_LINUX_TARBALL");

		if (name && strcmp(name, BUILD_DEFAULT_TREE))
			return error("unknown tree '%s': no [tree \"%s\"] in the config (the built-in one is '%s')",
				     name, name, BUILD_DEFAULT_TREE);
		t->name = xstrdup(BUILD_DEFAULT_TREE);
		t->tarball = xstrdup(tb && *tb ? tb : DEFAULT_TARBALL);
		t->base = xstrdup("tinyconfig");
		t->localversion = xstrdup("");
		{
			char *f = find_fragment("qemu.config");

			if (!f)
				return error("cannot find the fragment 'qemu.config' (kernels/configs)");
			strvec_push(&t->fragments, f);
			free(f);
		}
		return 0;
	}
	t->name = xstrdup(ct->name);
	t->git = ct->git ? xstrdup(ct->git) : NULL;
	t->branch = ct->branch ? xstrdup(ct->branch) : NULL;
	t->tarball = ct->tarball ? xstrdup(ct->tarball) : NULL;
	t->base = xstrdup(ct->config_base ? ct->config_base : "defconfig");
	t->localversion = xstrdup(ct->localversion ? ct->localversion : "-klab");
	t->jobs = ct->jobs;
	if (!t->git && !t->tarball)
		return error("tree '%s' has neither git nor tarball", ct->name);
	for (size_t i = 0; i < ct->fragments.n; i++) {
		char *f = find_fragment(ct->fragments.v[i]);

		if (!f)
			return error("tree '%s': cannot find config fragment '%s' (looked in kernels/configs)",
				     ct->name, ct->fragments.v[i]);
		strvec_push(&t->fragments, f);
		free(f);
	}
	return 0;
}

/* ---- running commands ------------------------------------------------------------- */

/*
 * git [-C REPO] ARGS... (NULL-terminated) with a fixed identity, no
 * prompts and C messages: 0 when it exited 0, 1 when it failed, -1 when it
 * could not run (logged). OUT and ERR (either may be NULL) get its stdout
 * and stderr; after a failure ERR ends with the reason (run_failure()), so
 * last_line(ERR) is the line to show.
 */
static int git(const char *repo, struct buf *out, struct buf *err, long timeout_ms, ...)
{
	struct strvec av = STRVEC_INIT;
	struct run_cmd c = RUN_CMD_INIT;
	va_list ap;
	const char *a;
	static const char *const env[] = { "GIT_AUTHOR_NAME=klab", "GIT_AUTHOR_EMAIL=klab@localhost",
					   "GIT_COMMITTER_NAME=klab", "GIT_COMMITTER_EMAIL=klab@localhost",
					   "GIT_TERMINAL_PROMPT=0", "LC_ALL=C", NULL };
	int r;

	strvec_push(&av, "git");
	if (repo) {
		strvec_push(&av, "-C");
		strvec_push(&av, repo);
	}
	va_start(ap, timeout_ms);
	while ((a = va_arg(ap, const char *)))
		strvec_push(&av, a);
	va_end(ap);
	c.argv = (const char *const *)av.v;
	c.env = env;
	c.timeout_ms = timeout_ms ? timeout_ms : GIT_TIMEOUT_MS;
	c.quiet = 1;
	r = run_check(&c);
	if (r < 0 && c.status < 0 && !c.timed_out)
		r = -1;		/* it did not start */
	else if (r < 0)
		r = 1;
	if (out)
		buf_add(out, c.out.buf, c.out.len);
	if (err) {
		buf_add(err, c.err.buf, c.err.len);
		if (r > 0 && (c.timed_out || c.signaled || !c.err.len))
			buf_addf(err, "%s%s", err->len ? "\n" : "", run_failure(&c));
	}
	run_release(&c);
	strvec_clear(&av);
	return r;
}

/* The progress line of a long command: its label, the time and the log's last line, on stderr. */
struct log_progress {
	const char *label;
	int fd;			/* the log, read from where it ended at the start */
	int64_t t0;
	struct buf tail;
};

static void show_progress(void *arg)
{
	struct log_progress *p = arg;
	char chunk[4096];
	ssize_t n;
	long s = (long)((now_ms() - p->t0) / 1000);

	while ((n = read(p->fd, chunk, sizeof(chunk))) > 0) {
		buf_add(&p->tail, chunk, (size_t)n);
		if (p->tail.len > 8192) {
			memmove(p->tail.buf, p->tail.buf + p->tail.len - 4096, 4096);
			buf_setlen(&p->tail, 4096);
		}
	}
	fprintf(stderr, "\r\033[K[%s] %02ld:%02ld %.60s", p->label, s / 60, s % 60, last_line(p->tail.buf));
}

/*
 * make (or any long command) with its output appended to LOGFD, at nice
 * 19 ($KLAB_BUILD_NICE), the step and the elapsed time shown on stderr
 * when PROGRESS and stderr is a terminal, the whole process group killed
 * at the timeout. Returns the exit status (0 ok), 124 on a timeout, -1
 * when it could not start.
 */
static int run_logged(const char *const *argv, const char *dir, const char *const *env, int logfd,
		      const char *logpath, long timeout_ms, const char *label, int progress)
{
	struct run_cmd c = RUN_CMD_INIT;
	struct log_progress lp = { label, -1, now_ms(), BUF_INIT };
	const char *nv = getenv("KLAB_BUILD_NICE");
	long v;
	int ret;

	c.argv = argv;
	c.dir = dir;
	c.env = env;
	c.out_fd = logfd;
	c.timeout_ms = timeout_ms;
	c.kill_grace_ms = 5000;
	c.nice = nv && parse_long(nv, -20, 19, &v) == 0 ? (int)v : 19;
	if (progress && isatty(2))
		lp.fd = open(logpath, O_RDONLY | O_CLOEXEC);
	if (lp.fd >= 0) {
		lseek(lp.fd, 0, SEEK_END);
		c.tick = show_progress;
		c.tick_arg = &lp;
	}
	if (run_command(&c) < 0) {
		dprintf(logfd, "klab: %s\n", log_last_error());
		ret = -1;
	} else {
		ret = c.timed_out ? 124 : c.status;
	}
	if (lp.fd >= 0) {
		fprintf(stderr, "\r\033[K");
		close(lp.fd);
	}
	buf_release(&lp.tail);
	run_release(&c);
	return ret;
}

/* The last lines of a log that say "error" (or simply the last ones), for messages. */
static char *log_excerpt(const char *path)
{
	struct buf b = BUF_INIT, out = BUF_INIT;
	struct strvec lines = STRVEC_INIT;
	size_t shown = 0;

	if (buf_read_file(&b, path) < 0)
		return xstrdup("(no log)");
	strvec_split(&lines, b.buf, "\n");
	for (size_t i = 0; i < lines.n && shown < 3; i++)
		if (strstr(lines.v[i], "error:") || strstr(lines.v[i], "Error ")) {
			buf_addf(&out, "%s%s", out.len ? " | " : "", lines.v[i]);
			shown++;
		}
	if (!shown && lines.n)
		buf_addstr(&out, lines.v[lines.n - 1]);
	strvec_clear(&lines);
	buf_release(&b);
	return buf_detach(&out, NULL);
}

/* ---- the repository ---------------------------------------------------------------- */

static int has_commit(const char *repo, const char *ref, char **sha)
{
	struct buf out = BUF_INIT;
	char *r = xasprintf("%s^{commit}", ref);
	int ok = git(repo, &out, NULL, 60000, "rev-parse", "-q", "--verify", r, NULL) == 0;

	free(r);
	buf_trim(&out);
	if (ok && sha)
		*sha = xstrdup(out.buf);
	buf_release(&out);
	return ok;
}

/* Import a tarball as one commit tagged klab-import. */
static int import_tarball(const struct tree *t, const char *src)
{
	char *tmp = xasprintf("%s.import.%d", src, (int)getpid());
	struct buf err = BUF_INIT;
	DIR *d = NULL;
	struct dirent *de;
	char *top = NULL;
	int ret = -1, n = 0;

	info("importing '%s' into '%s' (once; takes a minute)", t->tarball, src);
	if (!file_exists(t->tarball)) {
		error("tree '%s': tarball '%s' does not exist", t->name, t->tarball);
		goto out;
	}
	remove_tree(tmp);
	if (mkdir_p(tmp) < 0)
		goto out;
	{
		const char *const argv[] = { "tar", "-xf", t->tarball, "-C", tmp, NULL };
		struct run_cmd c = RUN_CMD_INIT;

		c.argv = argv;
		c.timeout_ms = GIT_TIMEOUT_MS;
		c.quiet = 1;
		if (run_check(&c)) {
			error("cannot unpack '%s': %s", t->tarball, run_failure(&c));
			run_release(&c);
			goto out;
		}
		run_release(&c);
	}
	/* the tarball has one top folder (linux-source-6.1/) or the tree itself */
	d = opendir(tmp);
	while (d && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		n++;
		free(top);
		top = xasprintf("%s/%s", tmp, de->d_name);
	}
	if (n != 1 || !top) {
		free(top);
		top = xstrdup(tmp);
	}
	remove_tree(src);
	if (rename(top, src) < 0) {
		error_errno("cannot move '%s' to '%s'", top, src);
		goto out;
	}
	if (git(src, NULL, &err, 0, "init", "-q", NULL) ||
	    git(src, NULL, &err, 0, "add", "-A", "-f", ".", NULL) ||
	    git(src, NULL, &err, 0, "commit", "-q", "--no-verify", "-m", "import tarball", NULL) ||
	    git(src, NULL, &err, 0, "tag", IMPORT_TAG, NULL)) {
		error("cannot import '%s' into git at '%s': %s", t->tarball, src, last_line(err.buf));
		goto out;
	}
	ret = 0;
out:
	if (d)
		closedir(d);
	free(top);
	remove_tree(tmp);
	free(tmp);
	buf_release(&err);
	return ret;
}

/* Make or update the repository of T at SRC; resolve REF to *COMMIT. */
static int prepare_repo(const struct tree *t, const char *src, const char *ref, char **commit)
{
	struct buf err = BUF_INIT;
	char *gitdir = xasprintf("%s/.git", src);
	int ret = -1;

	if (t->tarball && !t->git) {
		if (!has_commit(src, IMPORT_TAG, NULL) && import_tarball(t, src) < 0)
			goto out;
		if (!ref)
			ref = IMPORT_TAG;
	} else {
		if (!file_exists(gitdir)) {
			info("cloning '%s' into '%s' (once)", t->git, src);
			if (git(NULL, NULL, &err, 0, "clone", "-q", "--no-checkout", t->git, src, NULL)) {
				error("cannot clone '%s' for tree '%s': %s", t->git, t->name, last_line(err.buf));
				goto out;
			}
		} else if (git(src, NULL, &err, 0, "fetch", "-q", "--tags", "origin", NULL)) {
			error("cannot fetch '%s' for tree '%s': %s", t->git, t->name, last_line(err.buf));
			goto out;
		}
		if (!ref)
			ref = t->branch ? t->branch : "HEAD";
	}
	{
		char *remote = xasprintf("origin/%s", ref);
		int ok = (!t->tarball || t->git) && has_commit(src, remote, commit);

		free(remote);
		if (!ok && !has_commit(src, ref, commit)) {
			error("tree '%s': unknown ref '%s'", t->name, ref);
			goto out;
		}
	}
	ret = 0;
out:
	free(gitdir);
	buf_release(&err);
	return ret;
}

/* Put the work tree at COMMIT with nothing else in it. */
static int reset_worktree(const char *src, const char *commit)
{
	struct buf err = BUF_INIT;
	char *ra = xasprintf("%s/.git/rebase-apply", src);
	int ret = 0;

	if (file_exists(ra))
		git(src, NULL, NULL, 0, "am", "--abort", NULL);
	if (git(src, NULL, &err, 0, "checkout", "-q", "-f", "--detach", commit, NULL) ||
	    git(src, NULL, &err, 0, "clean", "-q", "-f", "-d", "-x", NULL))
		ret = error("cannot reset the work tree '%s' to %s: %s", src, commit, last_line(err.buf));
	free(ra);
	buf_release(&err);
	return ret;
}

/* ---- applying patches ------------------------------------------------------------ */

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
static int apply_one(const char *src, const char *file, const char *diff, const char *subject,
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
		if (run_command(&c) < 0) {
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
		if (run_command(&c) < 0 || c.status != 0) {
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

/* ---- config ---------------------------------------------------------------------- */

/* Value of every CONFIG_ option in a .config-style text ("n" for "is not set"). */
static void config_values(const char *text, struct strvec *keys, struct strvec *vals)
{
	struct strvec lines = STRVEC_INIT;

	strvec_split(&lines, text, "\n");
	for (size_t i = 0; i < lines.n; i++) {
		const char *l = lines.v[i], *eq;

		if (starts_with(l, "# CONFIG_") && ends_with(l, " is not set")) {
			char *k = xstrndup(l + 2, strlen(l) - 2 - strlen(" is not set"));

			strvec_push(keys, k);
			strvec_push(vals, "n");
			free(k);
		} else if (starts_with(l, "CONFIG_") && (eq = strchr(l, '='))) {
			char *k = xstrndup(l, eq - l);

			strvec_push(keys, k);
			strvec_push(vals, eq + 1);
			free(k);
		}
	}
	strvec_clear(&lines);
}

/* Every option a fragment sets must have that value in DOTCONFIG; the ones that vanished are named. */
static int check_fragments(const struct tree *t, const char *dotconfig, struct buf *missing)
{
	struct buf cfg = BUF_INIT;
	struct strvec ck = STRVEC_INIT, cv = STRVEC_INIT;

	if (buf_read_file(&cfg, dotconfig) < 0)
		return -1;
	config_values(cfg.buf, &ck, &cv);
	for (size_t f = 0; f < t->fragments.n; f++) {
		struct buf frag = BUF_INIT;
		struct strvec fk = STRVEC_INIT, fv = STRVEC_INIT;

		if (buf_read_file(&frag, t->fragments.v[f]) < 0) {
			buf_release(&frag);
			continue;
		}
		config_values(frag.buf, &fk, &fv);
		for (size_t i = 0; i < fk.n; i++) {
			long at = strvec_find(&ck, fk.v[i]);
			const char *got = at >= 0 ? cv.v[at] : "n";

			if (strcmp(got, fv.v[i]))
				buf_addf(missing, "%s%s=%s (now %s%s)", missing->len ? ", " : "", fk.v[i], fv.v[i],
					 strcmp(got, "n") ? "=" : "", strcmp(got, "n") ? got : "not set");
		}
		strvec_clear(&fk);
		strvec_clear(&fv);
		buf_release(&frag);
	}
	strvec_clear(&ck);
	strvec_clear(&cv);
	buf_release(&cfg);
	return 0;
}

/* Hash of the config recipe: the base (and its file's content) and each fragment's content. */
static int recipe_hash(const struct tree *t, char hex[65])
{
	struct buf b = BUF_INIT;
	char h[65];

	buf_addf(&b, "base %s\n", t->base);
	if (!strcmp(t->base, "running")) {
		struct utsname u;

		uname(&u);
		buf_addf(&b, "running %s %s\n", u.release, u.version);
	} else if (strchr(t->base, '/') || file_exists(t->base)) {
		if (sha256_file_hex(t->base, h) < 0) {
			buf_release(&b);
			return -1;
		}
		buf_addf(&b, "file %s\n", h);
	}
	for (size_t i = 0; i < t->fragments.n; i++) {
		if (sha256_file_hex(t->fragments.v[i], h) < 0) {
			buf_release(&b);
			return -1;
		}
		buf_addf(&b, "fragment %s\n", h);
	}
	sha256_hex(b.buf, b.len, hex);
	buf_release(&b);
	return 0;
}

static const char *kernel_arch(void)
{
	struct utsname u;
	static char arch[sizeof(((struct utsname *)0)->machine)];

	uname(&u);
	if (!strcmp(u.machine, "x86_64") || !strncmp(u.machine, "i", 1))
		return "x86";
	if (!strcmp(u.machine, "aarch64"))
		return "arm64";
	snprintf(arch, sizeof(arch), "%s", u.machine);
	return arch;
}

/* make -C SRC O=OBJ CC=... ARGS... into the log. */
static int make_step(const char *src, const char *obj, const char *cc, const char *const *env, int logfd,
		     const char *logpath, long timeout_ms, const char *label, int progress, ...)
{
	struct strvec av = STRVEC_INIT;
	va_list ap;
	const char *a;
	int r;

	strvec_push(&av, "make");
	strvec_push(&av, "-C");
	strvec_push(&av, src);
	strvec_pushf(&av, "O=%s", obj);
	strvec_pushf(&av, "CC=%s", cc);
	va_start(ap, progress);
	while ((a = va_arg(ap, const char *)))
		strvec_push(&av, a);
	va_end(ap);
	{
		char *cmd = strvec_join(&av, " ");

		dprintf(logfd, "klab: $ %s\n", cmd);
		free(cmd);
	}
	r = run_logged((const char *const *)av.v, NULL, env, logfd, logpath, timeout_ms, label, progress);
	strvec_clear(&av);
	return r;
}

/* Make the .config in OBJ from the recipe (when it changed) and check it. */
static int make_config(const struct tree *t, const char *src, const char *obj, const char *recipe,
		       const char *cc, const char *const *env, int logfd, const char *logpath, int progress)
{
	char *stamp = xasprintf("%s/.klab-recipe", obj), *dotconfig = xasprintf("%s/.config", obj);
	struct buf old = BUF_INIT, missing = BUF_INIT, err = BUF_INIT;
	int ret = -1, fresh;

	fresh = !file_exists(stamp) || buf_read_file(&old, stamp) < 0 || strcmp(old.buf, recipe) ||
		!file_exists(dotconfig);
	if (fresh) {
		const char *b = t->base;

		unlink(stamp);
		if (!strcmp(b, "running")) {
			struct utsname u;
			struct buf cfg = BUF_INIT;
			char *boot;

			uname(&u);
			boot = xasprintf("/boot/config-%s", u.release);
			if (file_exists("/proc/config.gz")) {
				buf_read_file(&cfg, "/proc/config.gz");
				fetch_gunzip(&cfg, "/proc/config.gz");
			} else if (buf_read_file(&cfg, boot) < 0) {
				error("tree '%s': config base 'running': no /proc/config.gz and no '%s'", t->name, boot);
				free(boot);
				buf_release(&cfg);
				goto out;
			}
			free(boot);
			if (write_file_atomic(dotconfig, cfg.buf, cfg.len, 0644) < 0) {
				buf_release(&cfg);
				goto out;
			}
			buf_release(&cfg);
		} else if (strchr(b, '/') || (file_exists(b) && !ends_with(b, "config"))) {
			struct buf cfg = BUF_INIT;

			if (buf_read_file(&cfg, b) < 0 || write_file_atomic(dotconfig, cfg.buf, cfg.len, 0644) < 0) {
				buf_release(&cfg);
				goto out;
			}
			buf_release(&cfg);
		} else if (make_step(src, obj, cc, env, logfd, logpath, 600000, "config", progress, b, NULL)) {
			error("tree '%s': 'make %s' failed (log: %s)", t->name, b, logpath);
			goto out;
		}
		if (t->fragments.n) {
			struct strvec av = STRVEC_INIT;
			char *script = xasprintf("%s/scripts/kconfig/merge_config.sh", src);

			strvec_push(&av, script);
			strvec_push(&av, "-m");
			strvec_push(&av, "-O");
			strvec_push(&av, obj);
			strvec_push(&av, dotconfig);
			for (size_t i = 0; i < t->fragments.n; i++)
				strvec_push(&av, t->fragments.v[i]);
			dprintf(logfd, "klab: merging %zu fragment(s)\n", t->fragments.n);
			if (run_logged((const char *const *)av.v, src, env, logfd, logpath, 300000, "config", progress)) {
				error("tree '%s': merge_config.sh failed (log: %s)", t->name, logpath);
				free(script);
				strvec_clear(&av);
				goto out;
			}
			free(script);
			strvec_clear(&av);
		}
	}
	if (make_step(src, obj, cc, env, logfd, logpath, 600000, "config", progress, "olddefconfig", NULL)) {
		error("tree '%s': 'make olddefconfig' failed (log: %s)", t->name, logpath);
		goto out;
	}
	if (check_fragments(t, dotconfig, &missing) < 0)
		goto out;
	if (missing.len) {
		error("tree '%s': config options of the fragments did not survive olddefconfig: %s", t->name,
		      missing.buf);
		goto out;
	}
	if (fresh && write_file_atomic(stamp, recipe, strlen(recipe), 0644) < 0)
		goto out;
	ret = 0;
out:
	free(stamp);
	free(dotconfig);
	buf_release(&old);
	buf_release(&missing);
	buf_release(&err);
	return ret;
}

/* ---- artifacts and the kernels table ------------------------------------------------ */

/* GNU build id of an ELF file via readelf -n: malloc'd hex or NULL. */
static char *elf_build_id(const char *path)
{
	const char *const argv[] = { "readelf", "-n", path, NULL };
	const char *const env[] = { "LC_ALL=C", NULL };
	struct run_cmd c = RUN_CMD_INIT;
	char *id = NULL, *p;

	c.argv = argv;
	c.env = env;
	c.timeout_ms = 60000;
	c.quiet = 1;
	if (run_check(&c) == 0 && (p = strstr(c.out.buf, "Build ID: "))) {
		p += 10;
		size_t n = strspn(p, "0123456789abcdef");

		if (n)
			id = xstrndup(p, n);
	}
	run_release(&c);
	return id;
}

/* ccache counters (hits and misses) from `ccache --print-stats`. */
static void ccache_counts(const char *const *env, long *hits, long *misses)
{
	const char *const argv[] = { "ccache", "--print-stats", NULL };
	struct run_cmd c = RUN_CMD_INIT;
	struct strvec lines = STRVEC_INIT;

	*hits = *misses = 0;
	c.argv = argv;
	c.env = env;
	c.timeout_ms = 30000;
	c.quiet = 1;
	if (run_check(&c) == 0) {
		strvec_split(&lines, c.out.buf, "\n");
		for (size_t i = 0; i < lines.n; i++) {
			const char *tab = strchr(lines.v[i], '\t');
			long v;

			if (!tab || parse_long(tab + 1, 0, 1L << 62, &v) < 0)
				continue;
			if (starts_with(lines.v[i], "direct_cache_hit\t") ||
			    starts_with(lines.v[i], "preprocessed_cache_hit\t"))
				*hits += v;
			else if (starts_with(lines.v[i], "cache_miss\t"))
				*misses += v;
		}
	}
	strvec_clear(&lines);
	run_release(&c);
}

static void apply_results_free(struct apply_result *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].method);
		free(v[i].detail);
	}
	free(v);
}

void kernel_artifact_release(struct kernel_artifact *a)
{
	free(a->tree);
	free(a->commit);
	free(a->variant);
	free(a->dir);
	free(a->image);
	free(a->config);
	free(a->system_map);
	free(a->modules);
	free(a->log);
	free(a->release);
	free(a->build_id);
	apply_results_free(a->applied, a->n_applied);
	memset(a, 0, sizeof(*a));
}

static struct json_object *apply_json(const struct apply_result *v, size_t n)
{
	struct json_object *a = json_object_new_array();

	for (size_t i = 0; i < n; i++) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "patch", json_object_new_string(v[i].name));
		json_object_object_add(o, "how", json_object_new_string(apply_how_name(v[i].how)));
		json_object_object_add(o, "method", json_object_new_string(v[i].method ? v[i].method : ""));
		json_object_object_add(o, "max_fuzz", json_object_new_int(v[i].max_fuzz));
		json_object_object_add(o, "offsets", json_object_new_int(v[i].offsets));
		json_object_array_add(a, o);
	}
	return a;
}

static char *col(struct db_stmt *st, int i)
{
	const char *t = db_col_text(st, i);

	return t ? xstrdup((const char *)t) : NULL;
}

int kernel_artifact_load(struct db *db, int64_t id, struct kernel_artifact *a)
{
	struct db_stmt *st = db_prepare(db, "SELECT key, tree, commit_id, variant, artifact_dir, release, build_id,"
				      " duration_s, apply_log, state FROM kernels WHERE id = ?", "i", id);
	char *k, *al, *state;

	memset(a, 0, sizeof(*a));
	if (!st)
		return -1;
	if (db_step(st) != DB_ROW) {
		db_finalize(st);
		return error("no kernel with id %lld", (long long)id);
	}
	a->id = id;
	k = col(st, 0);
	snprintf(a->key, sizeof(a->key), "%s", k ? k : "");
	free(k);
	a->tree = col(st, 1);
	a->commit = col(st, 2);
	a->variant = col(st, 3);
	a->dir = col(st, 4);
	a->release = col(st, 5);
	a->build_id = col(st, 6);
	a->duration_s = db_col_double(st, 7);
	al = col(st, 8);
	state = col(st, 9);
	db_finalize(st);
	if (state && strcmp(state, "ok")) {
		error("kernel %lld is not built (state '%s')", (long long)id, state);
		free(al);
		free(state);
		kernel_artifact_release(a);
		return -1;
	}
	free(state);
	if (a->dir) {
		char *m = xasprintf("%s/modules.tar.gz", a->dir);

		a->image = xasprintf("%s/bzImage", a->dir);
		a->config = xasprintf("%s/config", a->dir);
		a->system_map = xasprintf("%s/System.map", a->dir);
		a->log = xasprintf("%s/build.log", a->dir);
		if (file_exists(m))
			a->modules = m;
		else
			free(m);
	}
	if (al) {
		struct json_object *o = json_parse(al, strlen(al), "kernels.apply_log");

		for (size_t i = 0; o && json_object_is_type(o, json_type_array) && i < json_object_array_length(o); i++) {
			struct json_object *e = json_object_array_get_idx(o, i);
			const char *p = NULL, *how = NULL, *m = NULL;
			int64_t fz = 0, off = 0;
			struct apply_result *r;

			json_get_str(e, "patch", &p, "apply_log");
			json_get_str(e, "how", &how, "apply_log");
			json_get_str(e, "method", &m, "apply_log");
			json_get_int(e, "max_fuzz", &fz, "apply_log");
			json_get_int(e, "offsets", &off, "apply_log");
			a->applied = xrealloc(a->applied, (a->n_applied + 1) * sizeof(*a->applied));
			r = &a->applied[a->n_applied++];
			memset(r, 0, sizeof(*r));
			r->name = xstrdup(p ? p : "?");
			r->method = xstrdup(m ? m : "");
			r->how = !how ? APPLY_CLEAN : !strcmp(how, "fuzz") ? APPLY_FUZZ :
				 !strcmp(how, "offset") ? APPLY_OFFSET : !strcmp(how, "failed") ? APPLY_FAILED : APPLY_CLEAN;
			r->max_fuzz = (int)fz;
			r->offsets = (int)off;
		}
		if (o)
			json_object_put(o);
		free(al);
	}
	return 0;
}

/* ---- the build -------------------------------------------------------------------- */

/*
 * The folder name of a tree's repository and build folders: a tarball tree
 * is named after its tarball (linux-source-6.1), so that every [tree] made
 * from one tarball, and the built-in tree, share the import, the build
 * folder and the artifacts; other trees after their name.
 */
static char *repo_name(const struct tree *t)
{
	static const char *const exts[] = { ".tar.xz", ".tar.gz", ".tar.bz2", ".tar.zst", ".tgz", ".tar" };
	const char *b;

	if (!t->tarball || t->git)
		return xstrdup(t->name);
	b = strrchr(t->tarball, '/');
	b = b ? b + 1 : t->tarball;
	for (size_t i = 0; i < ARRAY_SIZE(exts); i++)
		if (ends_with(b, exts[i]) && strlen(b) > strlen(exts[i]))
			return xstrndup(b, strlen(b) - strlen(exts[i]));
	return xstrdup(b);
}

static int lock_tree(const char *cache, const char *name)
{
	char *dir = xasprintf("%s/src", cache), *path = xasprintf("%s/src/%s.lock", cache, name);
	int fd = -1;

	if (mkdir_p(dir) < 0)
		goto out;
	fd = lock_file(path, 0);
	if (fd == LOCK_FILE_BUSY) {
		info("waiting for another build of tree '%s' (lock '%s')", name, path);
		fd = lock_file(path, -1);
	}
out:
	free(dir);
	free(path);
	return fd;
}

static char *compiler_version(void)
{
	const char *const argv[] = { "gcc", "--version", NULL };
	struct buf out = BUF_INIT;
	char *nl, *v;

	if (run_argv(argv, 30000, &out, 1)) {
		buf_release(&out);
		return xstrdup("unknown");
	}
	nl = strchr(out.buf, '\n');
	if (nl)
		*nl = 0;
	v = xstrdup(out.buf);
	buf_release(&out);
	return v;
}

static int mark_failed(struct db *db, int64_t id, const char *msg, const struct apply_result *ap, size_t n)
{
	struct buf aj = BUF_INIT;
	struct json_object *o = apply_json(ap, n);

	json_to_buf(&aj, o, 0);
	json_object_put(o);
	db_run(db, "UPDATE kernels SET state = 'failed', error = ?, apply_log = ? WHERE id = ?", "ssi", msg, aj.buf,
	       id);
	buf_release(&aj);
	return -1;
}

int build_kernel(const struct klab_config *cfg, struct db *db, const struct build_request *req,
		 struct kernel_artifact *out)
{
	const char *cache = build_cache_dir();
	struct tree t;
	char *src = NULL, *obj = NULL, *commit = NULL, *cc = NULL, *compiler = NULL, *artroot = NULL;
	char *artdir = NULL, *tmpdir = NULL, *logpath = NULL, *lv = NULL, *label = NULL, *rname = NULL;
	char recipe[65], key[65];
	const char *variant = req->variant;
	struct strvec envv = STRVEC_INIT;
	struct apply_result *ap = NULL;
	size_t nap = 0;
	struct buf kb = BUF_INIT, msg = BUF_INIT;
	int lockfd = -1, logfd = -1, ret = -1, worktree_dirty = 0, jobs;
	int64_t kid = 0, t0;
	long hits0, miss0, hits1, miss1;
	size_t n_local = 0;

	memset(out, 0, sizeof(*out));
	if (variant && !*variant)
		variant = NULL;	/* an empty string means "not given", as NULL */
	if (tree_resolve(cfg, req->tree && *req->tree ? req->tree : NULL, &t) < 0) {
		tree_free(&t);
		return -1;
	}
	while (req->local_patches && req->local_patches[n_local])
		n_local++;
	if (!variant)
		variant = (req->series && req->series->n_patches) || n_local ? "patched" : "base";
	for (const char *p = variant; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_' && *p != '.') {
			error("invalid variant '%s': letters, digits, '-', '_' and '.' only", variant);
			goto out_early;
		}
	if (req->series && !req->series->n_patches) {
		error("series '%s' has no patch to apply", req->series->subject);
		goto out_early;
	}
	rname = repo_name(&t);
	src = xasprintf("%s/src/%s", cache, rname);
	lockfd = lock_tree(cache, rname);
	if (lockfd < 0)
		goto out_early;
	if (prepare_repo(&t, src, req->ref && *req->ref ? req->ref : NULL, &commit) < 0)
		goto out_early;

	/* the environment of every make: ccache in the kernel cache unless set */
	{
		const char *cd = getenv("CCACHE_DIR");

		if (!cd || !*cd)
			strvec_pushf(&envv, "CCACHE_DIR=%s/ccache", cache);
		if (!getenv("CCACHE_BASEDIR"))
			strvec_pushf(&envv, "CCACHE_BASEDIR=%s", cache);
		strvec_push(&envv, "LC_ALL=C");
		strvec_push(&envv, "KBUILD_BUILD_USER=klab");
		strvec_push(&envv, "KBUILD_BUILD_HOST=klab");
	}
	{
		char *ccache = run_which("ccache");

		if (ccache) {
			cc = xstrdup("ccache gcc");
			free(ccache);
		} else {
			warn("ccache not found: building without a compiler cache");
			cc = xstrdup("gcc");
		}
	}
	compiler = compiler_version();
	if (recipe_hash(&t, recipe) < 0)
		goto out_early;

	/* the key */
	buf_addf(&kb, "klab kernel key 1\nrepo %s\ncommit %s\n", rname, commit);
	buf_addf(&kb, "series %s\n", req->series ? req->series->content_sha256 : "-");
	for (size_t i = 0; i < n_local; i++) {
		char h[65];

		if (sha256_file_hex(req->local_patches[i], h) < 0)
			goto out_early;
		buf_addf(&kb, "local %s\n", h);
	}
	buf_addf(&kb, "config %s\ncompiler %s\nvariant %s\nlocalversion %s\n", recipe, compiler, variant,
		 t.localversion);
	sha256_hex(kb.buf, kb.len, key);
	snprintf(out->key, sizeof(out->key), "%s", key);

	artroot = xstrdup(req->artifact_dir ? req->artifact_dir :
			  cfg && cfg->lab.artifact_dir ? cfg->lab.artifact_dir : "");
	if (!*artroot) {
		free(artroot);
		artroot = xasprintf("%s/artifacts", cache);
	}
	artdir = xasprintf("%s/%.16s", artroot, key);

	/* reuse */
	if (!req->force && !req->apply_only) {
		int64_t id;
		char *dir = NULL;
		int r = db_get_int(db, &id, "SELECT id FROM kernels WHERE key = ? AND state = 'ok'", "s", key);

		if (r < 0)
			goto out_early;
		if (r == 1) {
			db_get_str(db, &dir, "SELECT artifact_dir FROM kernels WHERE id = ?", "i", id);
			if (dir) {
				char *img = xasprintf("%s/bzImage", dir);
				int have = file_exists(img);

				free(img);
				free(dir);
				if (have && kernel_artifact_load(db, id, out) == 0) {
					out->cached = 1;
					info("kernel %lld (%s) is already built: %s", (long long)id, out->release, out->dir);
					ret = 0;
					goto out_early;
				}
			}
		}
	}

	/* the row */
	if (req->apply_only)
		goto rowless;
	if (db_get_int(db, &kid, "SELECT id FROM kernels WHERE key = ?", "s", key) == 1) {
		if (db_run(db, "UPDATE kernels SET state = 'building', error = NULL, tree = ?, commit_id = ?, variant = ?,"
			   " config_sha256 = NULL, compiler = ?, artifact_dir = ?, created = ? WHERE id = ?", "sssssdi",
			   t.name, commit, variant, compiler, artdir, now_wall(), kid) < 0)
			goto out_early;
	} else {
		if (db_run(db, "INSERT INTO kernels (key, tree, commit_id, variant, compiler, artifact_dir, state, created)"
			   " VALUES (?,?,?,?,?,?,'building',?)", "ssssssd", key, t.name, commit, variant, compiler,
			   artdir, now_wall()) < 0)
			goto out_early;
		kid = db_last_id(db);
	}
	if (req->series_id)
		db_run(db, "UPDATE kernels SET series_id = ? WHERE id = ?", "ii", req->series_id, kid);
	else
		db_run(db, "UPDATE kernels SET series_id = NULL WHERE id = ?", "i", kid);

rowless:
	tmpdir = xasprintf("%s.tmp.%d", artdir, (int)getpid());
	remove_tree(tmpdir);
	if (mkdir_p(tmpdir) < 0)
		goto fail;
	logpath = xasprintf("%s/build.log", tmpdir);
	logfd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (logfd < 0) {
		error_errno("cannot create '%s'", logpath);
		goto fail;
	}
	dprintf(logfd, "klab: build of tree '%s' at %s, variant '%s', key %s\n", t.name, commit, variant, key);

	/* the work tree and the patches */
	if (reset_worktree(src, commit) < 0)
		goto fail;
	worktree_dirty = 1;
	{
		size_t total = (req->series ? req->series->n_patches : 0) + n_local;
		char *pfile = xasprintf("%s/patch.mbox", tmpdir);

		ap = xcalloc(total ? total : 1, sizeof(*ap));
		for (size_t i = 0; i < total; i++) {
			struct apply_result *r = &ap[nap++];
			struct buf fail = BUF_INIT, text = BUF_INIT;
			const char *diff, *subject;
			int mail, rr;

			if (req->series && i < req->series->n_patches) {
				const struct patch *p = &req->series->patches[i];
				char *m = series_patch_mbox(req->series, p);

				buf_addstr(&text, m);
				free(m);
				r->name = xasprintf("%d/%d %s", p->seq, req->series->total, p->subject);
				diff = p->diff;
				subject = p->subject;
				mail = 1;
			} else {
				const char *lp = req->local_patches[i - (req->series ? req->series->n_patches : 0)];
				const char *base = strrchr(lp, '/');

				if (buf_read_file(&text, lp) < 0) {
					buf_release(&text);
					free(pfile);
					goto fail;
				}
				r->name = xasprintf("local %s", base ? base + 1 : lp);
				diff = text.buf;
				subject = r->name;
				mail = starts_with(text.buf, "From ") || starts_with(text.buf, "From: ");
			}
			if (write_file_atomic(pfile, text.buf, text.len, 0644) < 0) {
				buf_release(&text);
				free(pfile);
				goto fail;
			}
			rr = apply_one(src, pfile, diff, subject, mail, r, &fail, logfd);
			if (rr < 0) {
				if (req->series && i < req->series->n_patches)
					buf_addf(&msg, "cannot apply patch %d/%d '%s'", req->series->patches[i].seq,
						 req->series->total, req->series->patches[i].subject);
				else
					buf_addf(&msg, "cannot apply %s", r->name);
				buf_addf(&msg, " to tree '%s' at %.12s: %s", t.name, commit,
					 fail.len ? fail.buf : "unknown failure");
				error("%s", msg.buf);
				buf_release(&fail);
				buf_release(&text);
				free(pfile);
				goto fail_msg;
			}
			info("patch %s: %s (%s%s)", r->name, apply_how_name(r->how), r->method,
			     r->how == APPLY_FUZZ ? ", fuzz" : "");
			buf_release(&fail);
			buf_release(&text);
		}
		unlink(pfile);
		free(pfile);
	}

	if (req->apply_only) {
		out->tree = xstrdup(t.name);
		out->commit = xstrdup(commit);
		out->variant = xstrdup(variant);
		out->applied = ap;
		out->n_applied = nap;
		ap = NULL;
		nap = 0;
		ret = 0;
		goto out_early;
	}

	/* config and make */
	obj = xasprintf("%s/obj/%s-%.16s", cache, rname, recipe);
	if (mkdir_p(obj) < 0)
		goto fail;
	label = xasprintf("build %s %s", t.name, variant);
	if (make_config(&t, src, obj, recipe, cc, (const char *const *)envv.v, logfd, logpath, req->progress) < 0) {
		buf_addf(&msg, "config of tree '%s' failed (log: %s.failed.log)", t.name, artdir);
		goto fail_msg;
	}
	jobs = req->jobs > 0 ? req->jobs : t.jobs > 0 ? t.jobs : (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (jobs < 1)
		jobs = 1;
	lv = xasprintf("LOCALVERSION=%s-%s", t.localversion, variant);
	ccache_counts((const char *const *)envv.v, &hits0, &miss0);
	t0 = now_ms();
	{
		struct buf dc = BUF_INIT;
		char *jarg = xasprintf("-j%d", jobs), *dotconfig = xasprintf("%s/.config", obj);
		int has_modules = 0, r;

		if (buf_read_file(&dc, dotconfig) == 0)
			has_modules = strstr(dc.buf, "=m\n") != NULL;
		buf_release(&dc);
		r = make_step(src, obj, cc, (const char *const *)envv.v, logfd, logpath,
			      req->timeout_ms ? req->timeout_ms : 90L * 60 * 1000, label, req->progress, jarg, lv,
			      "bzImage", has_modules ? "modules" : NULL, NULL);
		free(jarg);
		free(dotconfig);
		if (r) {
			char *ex = log_excerpt(logpath);

			buf_addf(&msg, "kernel build of tree '%s' variant '%s' failed (%s): %s (log: %s.failed.log)",
				 t.name, variant, r == 124 ? "timed out" : "make failed", ex, artdir);
			free(ex);
			error("%s", msg.buf);
			goto fail_msg;
		}
		out->duration_s = (now_ms() - t0) / 1000.0;
		ccache_counts((const char *const *)envv.v, &hits1, &miss1);

		/* artifacts */
		{
			char *img = xasprintf("%s/arch/%s/boot/bzImage", obj, kernel_arch());
			char *f1 = xasprintf("%s/bzImage", tmpdir), *c0 = xasprintf("%s/.config", obj);
			char *c1 = xasprintf("%s/config", tmpdir), *s0 = xasprintf("%s/System.map", obj);
			char *s1 = xasprintf("%s/System.map", tmpdir), *rel = xasprintf("%s/include/config/kernel.release", obj);
			char *vml = xasprintf("%s/vmlinux", obj);
			struct buf rb = BUF_INIT;
			int bad = copy_file(img, f1, 0644) < 0 || copy_file(c0, c1, 0644) < 0 || copy_file(s0, s1, 0644) < 0 ||
				  buf_read_file(&rb, rel) < 0;

			buf_trim(&rb);
			out->release = buf_detach(&rb, NULL);
			out->build_id = elf_build_id(vml);
			free(img); free(f1); free(c0); free(c1); free(s0); free(s1); free(rel); free(vml);
			if (bad) {
				buf_addf(&msg, "kernel build of tree '%s': artifacts missing after make", t.name);
				goto fail_msg;
			}
			if (has_modules) {
				char *mroot = xasprintf("%s/modroot", tmpdir), *mp = xasprintf("INSTALL_MOD_PATH=%s", mroot);
				char *tarf = xasprintf("%s/modules.tar.gz", tmpdir);
				const char *const tar[] = { "tar", "-czf", tarf, "-C", mroot, "lib", NULL };

				r = make_step(src, obj, cc, (const char *const *)envv.v, logfd, logpath, 1800000, label,
					      req->progress, lv, mp, "INSTALL_MOD_STRIP=1", "modules_install", NULL);
				if (r == 0)
					r = run_argv(tar, 600000, NULL, 0);
				remove_tree(mroot);
				free(mroot);
				free(mp);
				free(tarf);
				if (r) {
					buf_addf(&msg, "kernel build of tree '%s': modules_install failed (log: %s.failed.log)",
						 t.name, artdir);
					goto fail_msg;
				}
			}
		}
	}

	/* keep the patched commit reachable, then back to the baseline */
	if (nap) {
		char *ref = xasprintf("refs/klab/%.16s", key);

		git(src, NULL, NULL, 0, "update-ref", ref, "HEAD", NULL);
		free(ref);
	}
	if (reset_worktree(src, commit) == 0)
		worktree_dirty = 0;

	{
		struct json_object *meta = json_object_new_object(), *cs = json_object_new_object();
		struct buf mj = BUF_INIT, aj = BUF_INIT, csj = BUF_INIT;
		char *mpath = xasprintf("%s/meta.json", tmpdir), *cfgsha = NULL;
		char cfghex[65];
		char *c1 = xasprintf("%s/config", tmpdir);

		if (sha256_file_hex(c1, cfghex) == 0)
			cfgsha = xstrdup(cfghex);
		free(c1);
		json_object_object_add(cs, "hits", json_object_new_int64(hits1 - hits0));
		json_object_object_add(cs, "misses", json_object_new_int64(miss1 - miss0));
		json_to_buf(&csj, cs, 0);
		json_object_object_add(meta, "key", json_object_new_string(key));
		json_object_object_add(meta, "tree", json_object_new_string(t.name));
		json_object_object_add(meta, "commit", json_object_new_string(commit));
		json_object_object_add(meta, "variant", json_object_new_string(variant));
		json_object_object_add(meta, "release", json_object_new_string(out->release));
		json_object_object_add(meta, "build_id", out->build_id ? json_object_new_string(out->build_id) : NULL);
		json_object_object_add(meta, "compiler", json_object_new_string(compiler));
		json_object_object_add(meta, "config_recipe", json_object_new_string(recipe));
		json_object_object_add(meta, "duration_s", json_object_new_double(out->duration_s));
		json_object_object_add(meta, "ccache", cs);
		json_object_object_add(meta, "applied", apply_json(ap, nap));
		json_to_buf(&mj, meta, 1);
		{
			struct json_object *a = apply_json(ap, nap);

			json_to_buf(&aj, a, 0);
			json_object_put(a);
		}
		json_object_put(meta);
		if (write_file_atomic(mpath, mj.buf, mj.len, 0644) < 0) {
			free(mpath);
			free(cfgsha);
			buf_release(&mj);
			buf_release(&aj);
			buf_release(&csj);
			goto fail;
		}
		free(mpath);
		close(logfd);
		logfd = -1;
		remove_tree(artdir);
		if (rename(tmpdir, artdir) < 0) {
			error_errno("cannot move '%s' to '%s'", tmpdir, artdir);
			free(cfgsha);
			buf_release(&mj);
			buf_release(&aj);
			buf_release(&csj);
			goto fail;
		}
		if (db_run(db, "UPDATE kernels SET state = 'ok', error = NULL, release = ?, build_id = ?, artifact_dir = ?,"
			   " config_sha256 = ?, apply_log = ?, duration_s = ?, ccache_stats = ? WHERE id = ?", "sssssdsi",
			   out->release, out->build_id, artdir, cfgsha, aj.buf, out->duration_s, csj.buf, kid) < 0) {
			free(cfgsha);
			buf_release(&mj);
			buf_release(&aj);
			buf_release(&csj);
			goto fail;
		}
		free(cfgsha);
		buf_release(&mj);
		buf_release(&aj);
		buf_release(&csj);
	}
	out->id = kid;
	out->tree = xstrdup(t.name);
	out->commit = xstrdup(commit);
	out->variant = xstrdup(variant);
	out->dir = xstrdup(artdir);
	out->image = xasprintf("%s/bzImage", artdir);
	out->config = xasprintf("%s/config", artdir);
	out->system_map = xasprintf("%s/System.map", artdir);
	out->log = xasprintf("%s/build.log", artdir);
	{
		char *m = xasprintf("%s/modules.tar.gz", artdir);

		if (file_exists(m))
			out->modules = m;
		else
			free(m);
	}
	out->applied = ap;
	out->n_applied = nap;
	ap = NULL;
	nap = 0;
	info("kernel %lld built: %s in %.0f s (ccache %ld hits, %ld misses): %s", (long long)kid, out->release,
	     out->duration_s, hits1 - hits0, miss1 - miss0, artdir);
	ret = 0;
	goto out_early;

fail:
	if (!msg.len)
		buf_addf(&msg, "build of tree '%s' variant '%s' failed", t.name, variant);
fail_msg:
	if (kid)
		mark_failed(db, kid, msg.buf, ap, nap);
	if (logfd >= 0) {
		dprintf(logfd, "klab: FAILED: %s\n", msg.buf);
		close(logfd);
		logfd = -1;
	}
	/* keep the log of a failed build beside the artifacts (nothing else changes) */
	if (tmpdir && logpath && file_exists(logpath) && !req->apply_only) {
		char *keep = xasprintf("%s.failed.log", artdir);

		rename(logpath, keep);
		free(keep);
	}
	ret = -1;
out_early:
	if (worktree_dirty && src && commit)
		reset_worktree(src, commit);
	if (logfd >= 0)
		close(logfd);
	if (tmpdir)
		remove_tree(tmpdir);
	if (lockfd >= 0)
		close(lockfd);
	tree_free(&t);
	apply_results_free(ap, nap);
	free(rname);
	free(src);
	free(obj);
	free(commit);
	free(cc);
	free(compiler);
	free(artroot);
	free(artdir);
	free(tmpdir);
	free(logpath);
	free(lv);
	free(label);
	strvec_clear(&envv);
	buf_release(&kb);
	buf_release(&msg);
	return ret;
}
