/* build_tree.c: the source of a build: a tree's recipe, its repository (cloned, fetched or a tarball imported), the ref, the work tree. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "kbuild/build.h"
#include "kbuild/build_int.h"
#include "lock.h"
#include "log.h"
#include "run.h"
#include "intake/series.h"
#include "strvec.h"
#include "util.h"

#define DEFAULT_TARBALL "/usr/src/linux-source-6.1.tar.xz"

#define IMPORT_TAG "klab-import"

#define GIT_TIMEOUT_MS (30L * 60 * 1000)

/*
 * A local tree's repository belongs to its owner, not to the sandbox user
 * that clones it: git's ownership check is lifted for the reading side
 * (git clears -c settings for a local transport, so it goes here).
 */
#define UPLOAD_PACK "git -c safe.directory='*' upload-pack"

void tree_free(struct tree *t)
{
	free(t->name);
	free(t->git);
	free(t->branch);
	free(t->tarball);
	free(t->base);
	strvec_clear(&t->fragments);
	free(t->localversion);
	if (t->share) {
		tree_free(t->share);
		free(t->share);
	}
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

int tree_resolve(const struct klab_config *cfg, const char *name, struct tree *t, struct buf *err)
{
	const struct conf_tree *ct = cfg && name ? conf_tree(cfg, name) : NULL;

	memset(t, 0, sizeof(*t));
	strvec_init(&t->fragments);
	if (!ct) {
		const char *tb = getenv("KLAB_LINUX_TARBALL");

		if (name && strcmp(name, BUILD_DEFAULT_TREE))
			return error_to(err, "unknown tree '%s': no [tree \"%s\"] in the config (the built-in one is '%s')",
					name, name, BUILD_DEFAULT_TREE);
		t->name = xstrdup(BUILD_DEFAULT_TREE);
		t->tarball = xstrdup(tb && *tb ? tb : DEFAULT_TARBALL);
		t->base = xstrdup("tinyconfig");
		t->localversion = xstrdup("");
		{
			char *f = find_fragment("qemu.config");

			if (!f)
				return error_to(err, "cannot find the fragment 'qemu.config' (kernels/configs)");
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
		return error_to(err, "tree '%s' has neither git nor tarball", ct->name);
	for (size_t i = 0; i < ct->fragments.n; i++) {
		char *f = find_fragment(ct->fragments.v[i]);

		if (!f)
			return error_to(err, "tree '%s': cannot find config fragment '%s' (looked in kernels/configs)",
					ct->name, ct->fragments.v[i]);
		strvec_push(&t->fragments, f);
		free(f);
	}
	if (ct->share) {
		if (!t->git)
			return error_to(err, "tree '%s': share = %s needs git = PATH (the history to fetch into it)",
					ct->name, ct->share);
		t->share = xmalloc(sizeof(*t->share));
		{
			struct buf why = BUF_INIT;
			int r = tree_resolve(cfg, ct->share, t->share, &why);

			if (r < 0)
				error_to(err, "tree '%s': cannot use the tree '%s' it shares: %s", ct->name, ct->share,
					 why.buf);
			buf_release(&why);
			if (r < 0)
				return -1;
		}
		if (t->share->share)
			return error_to(err, "tree '%s': the tree '%s' it shares shares '%s' itself", ct->name,
					ct->share, t->share->share->name);
	}
	return 0;
}

/*
 * The folder name of a tree's repository and build folders: a tarball tree
 * is named after its tarball (linux-source-6.1), so that every [tree] made
 * from one tarball, and the built-in tree, share the import, the build
 * folder and the artifacts; other trees after their name. A tree with
 * share = NAME is named as that tree is: a fork or a branch of its history
 * (a bisection's tree) builds in the same work tree and build folder, so a
 * commit there is an incremental build, not a cold one in a folder of its own.
 */
char *repo_name(const struct tree *t)
{
	static const char *const exts[] = { ".tar.xz", ".tar.gz", ".tar.bz2", ".tar.zst", ".tgz", ".tar" };
	const char *b;

	if (t->share)
		return repo_name(t->share);
	if (!t->tarball || t->git)
		return xstrdup(t->name);
	b = strrchr(t->tarball, '/');
	b = b ? b + 1 : t->tarball;
	for (size_t i = 0; i < ARRAY_SIZE(exts); i++)
		if (ends_with(b, exts[i]) && strlen(b) > strlen(exts[i]))
			return xstrndup(b, strlen(b) - strlen(exts[i]));
	return xstrdup(b);
}

int lock_tree(const char *cache, const char *name)
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

static struct build *jail;

void build_jail(struct build *b)
{
	jail = b;
}

int build_run(struct run_cmd *c, unsigned flags)
{
	struct strvec vis = STRVEC_INIT;
	const char *rw[6], *ro[2];
	struct sandbox_spec sp = { rw, ro, NULL, 0, "kernel build" };
	char *gitdir = NULL;
	size_t nrw = 0, nro = 0;
	int r;

	if (!jail)
		return error_to(c->why, "cannot run '%s': no build sandbox (klab never runs it without one)",
				c->argv[0]);
	if (jail->src)
		rw[nrw++] = jail->src;
	if (jail->obj)
		rw[nrw++] = jail->obj;
	if (jail->ccache_dir)
		rw[nrw++] = jail->ccache_dir;
	if (jail->modroot)
		rw[nrw++] = jail->modroot;
	if ((flags & BUILD_RUN_OUT) && jail->tmpdir)
		rw[nrw++] = jail->tmpdir;
	rw[nrw] = NULL;
	if (!(flags & BUILD_RUN_GIT) && jail->src) {
		gitdir = xasprintf("%s/.git", jail->src);
		ro[nro++] = gitdir;
	}
	ro[nro] = NULL;
	if (jail->tmpdir && !(flags & BUILD_RUN_OUT))
		strvec_push(&vis, jail->tmpdir);
	for (size_t i = 0; i < jail->t.fragments.n; i++)
		strvec_push(&vis, jail->t.fragments.v[i]);
	if (jail->t.tarball)
		strvec_push(&vis, jail->t.tarball);
	if (jail->t.git && jail->t.git[0] == '/')
		strvec_push(&vis, jail->t.git);
	if (jail->t.base && strchr(jail->t.base, '/'))
		strvec_push(&vis, jail->t.base);
	if (jail->t.share && jail->t.share->tarball)
		strvec_push(&vis, jail->t.share->tarball);
	if (jail->t.share && jail->t.share->git && jail->t.share->git[0] == '/')
		strvec_push(&vis, jail->t.share->git);
	sp.visible = (const char *const *)vis.v;
	sp.net = !!(flags & BUILD_RUN_NET);
	r = sandbox_run(&jail->sb, &sp, c);
	free(gitdir);
	strvec_clear(&vis);
	return r;
}

/*
 * git [-C REPO] ARGS... (NULL-terminated) with a fixed identity, no
 * prompts and C messages: 0 when it exited 0, 1 when it failed, -1 when it
 * could not run (logged). OUT and ERR (either may be NULL) get its stdout
 * and stderr; after a failure ERR ends with the reason (run_failure()), so
 * last_line(ERR) is the line to show.
 */
int git(const char *repo, struct buf *out, struct buf *err, long timeout_ms, ...)
{
	struct strvec av = STRVEC_INIT;
	struct run_cmd c = RUN_CMD_INIT;
	struct buf nostart = BUF_INIT;
	va_list ap;
	const char *a;
	static const char *const env[] = { "GIT_AUTHOR_NAME=klab", "GIT_AUTHOR_EMAIL=klab@localhost",
					   "GIT_COMMITTER_NAME=klab", "GIT_COMMITTER_EMAIL=klab@localhost",
					   "GIT_TERMINAL_PROMPT=0", "LC_ALL=C",
					   /* see UPLOAD_PACK: the same for git's own reading of a local repository */
					   "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=safe.directory", "GIT_CONFIG_VALUE_0=*",
					   NULL };
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
	c.why = &nostart;
	{
		/* git runs in the build's sandbox: as the sandbox user, the tree writable,
		 * the network only to clone or fetch a URL */
		const char *verb = av.v[repo ? 3 : 1];
		unsigned fl = BUILD_RUN_GIT;

		if (verb && (!strcmp(verb, "clone") || !strcmp(verb, "fetch")) && jail && jail->t.git &&
		    jail->t.git[0] != '/')
			fl |= BUILD_RUN_NET;
		if (jail) {
			r = build_run(&c, fl);
		} else {
			/* outside a build (looking at a tree): the same sandbox, the repository writable */
			struct sandbox sb = SANDBOX_INIT;
			const char *rw[] = { repo, NULL };
			struct sandbox_spec sp = { rw, NULL, NULL, !!(fl & BUILD_RUN_NET), "git" };

			r = sandbox_init(&sb, NULL, &nostart) < 0 ? -1 : sandbox_run(&sb, &sp, &c);
			sandbox_release(&sb);
		}
	}
	if (r < 0)
		r = -1;		/* it did not start */
	else
		r = c.status == 0 && !c.timed_out ? 0 : 1;
	if (out)
		buf_add(out, c.out.buf, c.out.len);
	if (err) {
		buf_add(err, c.err.buf, c.err.len);
		if (r > 0 && (c.timed_out || c.signaled || !c.err.len))
			buf_addf(err, "%s%s", err->len ? "\n" : "", run_failure(&c));
		else if (r < 0)
			buf_addf(err, "%s%s", err->len ? "\n" : "", nostart.buf);
	} else if (r < 0) {
		error("%s", nostart.buf);
	}
	buf_release(&nostart);
	run_release(&c);
	strvec_clear(&av);
	return r;
}

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

static int file_is_dir(const char *p)
{
	struct stat st;

	return lstat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Remove everything inside the folder DIR (not DIR itself): 0 or -1. */
static int empty_folder(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int ret = 0;

	if (!d)
		return error_errno("cannot read '%s'", dir);
	while ((de = readdir(d))) {
		char *p;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		p = xasprintf("%s/%s", dir, de->d_name);
		if (remove_tree(p) < 0)
			ret = -1;
		free(p);
	}
	closedir(d);
	return ret;
}

/*
 * Import a tarball as one commit tagged klab-import, into SRC itself (the
 * sandbox user owns SRC, not the folder it is in): unpacked there, and a
 * single top folder (linux-source-6.1/) moved up a level.
 */
static int import_tarball(const struct tree *t, const char *src, struct buf *why)
{
	char *top = NULL, *hold = xasprintf("%s/.klab-import-top", src);
	struct buf err = BUF_INIT;
	DIR *d = NULL;
	struct dirent *de;
	int ret = -1, n = 0;

	info("importing '%s' into '%s' (once; takes a minute)", t->tarball, src);
	if (!file_exists(t->tarball)) {
		error_to(why, "tree '%s': tarball '%s' does not exist", t->name, t->tarball);
		goto out;
	}
	if (empty_folder(src) < 0) {
		error_to(why, "cannot import '%s': cannot empty '%s'", t->tarball, src);
		goto out;
	}
	{
		const char *const argv[] = { "tar", "-xf", t->tarball, "-C", src, "--no-same-owner", NULL };
		struct run_cmd c = RUN_CMD_INIT;
		struct buf nostart = BUF_INIT;

		c.argv = argv;
		c.timeout_ms = GIT_TIMEOUT_MS;
		c.why = &nostart;
		if (build_run(&c, BUILD_RUN_GIT) < 0 || c.status != 0) {
			error_to(why, "cannot unpack '%s': %s", t->tarball, nostart.len ? nostart.buf : run_failure(&c));
			buf_release(&nostart);
			run_release(&c);
			goto out;
		}
		run_release(&c);
		buf_release(&nostart);
	}
	/* the tarball has one top folder (linux-source-6.1/) or the tree itself */
	d = opendir(src);
	while (d && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		n++;
		free(top);
		top = xasprintf("%s/%s", src, de->d_name);
	}
	if (d)
		closedir(d);
	d = NULL;
	if (n == 1 && top && file_is_dir(top)) {
		if (rename(top, hold) < 0) {
			error_to(why, "cannot move '%s' to '%s': %s", top, hold, strerror(errno));
			goto out;
		}
		d = opendir(hold);
		while (d && (de = readdir(d))) {
			char *from, *to;

			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			from = xasprintf("%s/%s", hold, de->d_name);
			to = xasprintf("%s/%s", src, de->d_name);
			if (rename(from, to) < 0) {
				error_to(why, "cannot move '%s' to '%s': %s", from, to, strerror(errno));
				free(from);
				free(to);
				goto out;
			}
			free(from);
			free(to);
		}
		if (rmdir(hold) < 0) {
			error_to(why, "cannot remove '%s': %s", hold, strerror(errno));
			goto out;
		}
	}
	if (git(src, NULL, &err, 0, "init", "-q", NULL) ||
	    git(src, NULL, &err, 0, "add", "-A", "-f", ".", NULL) ||
	    git(src, NULL, &err, 0, "commit", "-q", "--no-verify", "-m", "import tarball", NULL) ||
	    git(src, NULL, &err, 0, "tag", IMPORT_TAG, NULL)) {
		error_to(why, "cannot import '%s' into git at '%s': %s", t->tarball, src, last_line(err.buf));
		goto out;
	}
	ret = 0;
out:
	if (d)
		closedir(d);
	free(top);
	free(hold);
	buf_release(&err);
	return ret;
}

/*
 * A tree that shares another's repository: that one made or updated first,
 * then T's history fetched into it (refs/remotes/T/...), and REF resolved
 * there (T/REF first, then REF itself: a commit id, or a tag).
 */
static int prepare_shared(const struct tree *t, const char *src, const char *ref, char **commit, struct buf *why)
{
	struct buf err = BUF_INIT;
	char *own = NULL, *refspec = xasprintf("+refs/heads/*:refs/remotes/%s/*", t->name), *mine = NULL;
	int ret = -1;

	if (prepare_repo(t->share, src, NULL, &own, why) < 0)
		goto out;
	if (git(src, NULL, &err, 0, "fetch", "-q", "--no-tags", "--upload-pack", UPLOAD_PACK, t->git, refspec, NULL)) {
		error_to(why, "cannot fetch '%s' for tree '%s' into the repository of tree '%s': %s", t->git, t->name,
			 t->share->name, last_line(err.buf));
		goto out;
	}
	if (!ref)
		ref = t->branch ? t->branch : "HEAD";
	mine = xasprintf("%s/%s", t->name, ref);
	if (!has_commit(src, mine, commit) && !has_commit(src, ref, commit)) {
		error_to(why, "tree '%s': unknown ref '%s'", t->name, ref);
		goto out;
	}
	ret = 0;
out:
	free(own);
	free(mine);
	free(refspec);
	buf_release(&err);
	return ret;
}

/* Make or update the repository of T at SRC; resolve REF to *COMMIT. */
int prepare_repo(const struct tree *t, const char *src, const char *ref, char **commit, struct buf *why)
{
	struct buf err = BUF_INIT;
	char *gitdir = xasprintf("%s/.git", src);
	int ret = -1;

	if (t->share) {
		free(gitdir);
		return prepare_shared(t, src, ref, commit, why);
	}
	if (t->tarball && !t->git) {
		if (!has_commit(src, IMPORT_TAG, NULL) && import_tarball(t, src, why) < 0)
			goto out;
		if (!ref)
			ref = IMPORT_TAG;
	} else {
		if (!file_exists(gitdir)) {
			info("cloning '%s' into '%s' (once)", t->git, src);
			if (git(NULL, NULL, &err, 0, "clone", "-q", "--no-checkout", "-u", UPLOAD_PACK, t->git, src, NULL)) {
				error_to(why, "cannot clone '%s' for tree '%s': %s", t->git, t->name, last_line(err.buf));
				goto out;
			}
		} else if (git(src, NULL, &err, 0, "fetch", "-q", "--tags", "--upload-pack", UPLOAD_PACK, "origin", NULL)) {
			error_to(why, "cannot fetch '%s' for tree '%s': %s", t->git, t->name, last_line(err.buf));
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
			error_to(why, "tree '%s': unknown ref '%s'", t->name, ref);
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
int reset_worktree(const char *src, const char *commit)
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

int build_source(struct build *b)
{
	const struct build_request *req = b->req;
	int r;

	if (tree_resolve(b->cfg, req->tree && *req->tree ? req->tree : NULL, &b->t, &b->msg) < 0)
		return -1;
	while (req->local_patches && req->local_patches[b->n_local])
		b->n_local++;
	b->variant = req->variant && *req->variant ? req->variant : NULL;	/* "": not given */
	if (!b->variant)
		b->variant = (req->series && req->series->n_patches) || b->n_local ? "patched" : "base";
	for (const char *p = b->variant; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_' && *p != '.')
			return error_to(&b->msg, "invalid variant '%s': letters, digits, '-', '_' and '.' only",
					b->variant);
	if (req->series && !req->series->n_patches)
		return error_to(&b->msg, "series '%s' has no patch to apply", req->series->subject);
	b->rname = repo_name(&b->t);
	b->src = xasprintf("%s/src/%s", b->cache, b->rname);
	b->lockfd = lock_tree(b->cache, b->rname);
	if (b->lockfd < 0)
		return error_to(&b->msg, "cannot lock tree '%s' for its build", b->t.name);
	/* the sandbox user owns the tree (made, or handed over once) and does all the work in it */
	if (sandbox_own(&b->sb, b->src, &b->msg) < 0 || sandbox_enter(&b->sb, &b->msg) < 0)
		return -1;
	r = prepare_repo(&b->t, b->src, req->ref && *req->ref ? req->ref : NULL, &b->commit, &b->msg);
	if (sandbox_leave(&b->sb) < 0)
		return error_to(&b->msg, "cannot take root back after acting as '%s'", b->sb.user);
	return r;
}
