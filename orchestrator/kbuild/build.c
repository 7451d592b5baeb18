/* build.c: one kernel build, phase by phase (source, key and cache, patches, make, artifacts), and the artifact store. */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "kbuild/build.h"
#include "kbuild/build_int.h"
#include "store/db.h"
#include "store/kernels.h"
#include "jsonh.h"
#include "log.h"
#include "run.h"
#include "intake/series.h"
#include "strvec.h"
#include "util.h"

const char *build_cache_dir(void)
{
	const char *e = getenv("KLAB_KERNEL_CACHE");

	return e && *e ? e : "/var/cache/klab";
}

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
	/* readelf parses what the build made: in the sandbox too */
	if (build_run(&c, 0) == 0 && c.status == 0 && (p = strstr(c.out.buf, "Build ID: "))) {
		p += 10;
		size_t n = strspn(p, "0123456789abcdef");

		if (n)
			id = xstrndup(p, n);
	}
	run_release(&c);
	return id;
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
		if (v[i].how == APPLY_FAILED && v[i].detail)
			json_object_object_add(o, "detail", json_object_new_string(v[i].detail));
		json_object_array_add(a, o);
	}
	return a;
}


int kernel_artifact_load(struct db *db, int64_t id, struct kernel_artifact *a, struct buf *err)
{
	struct kernel_row k;
	char *al, *state;
	int got = kernel_get(db, id, &k);

	memset(a, 0, sizeof(*a));
	if (got < 0)
		return db_error_to(db, err);
	if (got == 0)
		return error_to(err, "no kernel with id %lld", (long long)id);
	a->id = id;
	snprintf(a->key, sizeof(a->key), "%s", k.key ? k.key : "");
	a->tree = k.tree, k.tree = NULL;
	a->commit = k.commit, k.commit = NULL;
	a->variant = k.variant, k.variant = NULL;
	a->dir = k.artifact_dir, k.artifact_dir = NULL;
	a->release = k.release, k.release = NULL;
	a->build_id = k.build_id, k.build_id = NULL;
	a->duration_s = isnan(k.duration_s) ? 0 : k.duration_s;
	al = k.apply_log, k.apply_log = NULL;
	state = k.state, k.state = NULL;
	kernel_row_release(&k);
	if (state && strcmp(state, "ok")) {
		error_to(err, "kernel %lld is not built (state '%s')", (long long)id, state);
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
	kernel_set_failed(db, id, msg, aj.buf);
	buf_release(&aj);
	return -1;
}

/*
 * Phase 2: the key of the build (sha256 of the commit, the series and
 * local patches by content, the config recipe, the compiler and the
 * variant), the environment of every make, and the artifact folder.
 */
static int build_key(struct build *b)
{
	const struct build_request *req = b->req;
	struct buf kb = BUF_INIT;
	const char *cd = getenv("CCACHE_DIR");
	char *ccache = run_which("ccache"), *artroot;
	int ret = -1;

	/* ccache in the kernel cache unless set; the sandbox passes no other environment */
	b->ccache_dir = cd && *cd ? xstrdup(cd) : xasprintf("%s/ccache", b->cache);
	strvec_pushf(&b->env, "CCACHE_DIR=%s", b->ccache_dir);
	strvec_pushf(&b->env, "CCACHE_BASEDIR=%s", getenv("CCACHE_BASEDIR") ? getenv("CCACHE_BASEDIR") : b->cache);
	strvec_push(&b->env, "LC_ALL=C");
	strvec_push(&b->env, "KBUILD_BUILD_USER=klab");
	strvec_push(&b->env, "KBUILD_BUILD_HOST=klab");
	if (ccache) {
		b->cc = xstrdup("ccache gcc");
		free(ccache);
	} else {
		warn("ccache not found: building without a compiler cache");
		b->cc = xstrdup("gcc");
	}
	b->compiler = compiler_version();
	if (recipe_hash(&b->t, b->recipe) < 0)
		goto out;
	b->obj = xasprintf("%s/obj/%s-%.16s", b->cache, b->rname, b->recipe);

	buf_addf(&kb, "klab kernel key 1\nrepo %s\ncommit %s\n", b->rname, b->commit);
	buf_addf(&kb, "series %s\n", req->series ? req->series->content_sha256 : "-");
	for (size_t i = 0; i < b->n_local; i++) {
		char h[65];

		if (sha256_file_hex(req->local_patches[i], h) < 0)
			goto out;
		buf_addf(&kb, "local %s\n", h);
	}
	buf_addf(&kb, "config %s\ncompiler %s\nvariant %s\nlocalversion %s\n", b->recipe, b->compiler, b->variant,
		 b->t.localversion);
	sha256_hex(kb.buf, kb.len, b->key);
	snprintf(b->out->key, sizeof(b->out->key), "%s", b->key);

	artroot = xstrdup(req->artifact_dir ? req->artifact_dir :
			  b->cfg && b->cfg->lab.artifact_dir ? b->cfg->lab.artifact_dir : "");
	if (!*artroot) {
		free(artroot);
		artroot = xasprintf("%s/artifacts", b->cache);
	}
	b->artdir = xasprintf("%s/%.16s", artroot, b->key);
	free(artroot);
	ret = 0;
out:
	buf_release(&kb);
	return ret;
}

/* The cache: an ok kernel with this key and its image present is the answer. 1 (out filled), 0 none, -1. */
static int build_cached(struct build *b)
{
	int64_t id;
	struct kernel_row k;
	char *img;
	int r = kernel_id_by_key(b->db, b->key, 1, &id), have;

	if (r != 1)
		return r;
	kernel_get(b->db, id, &k);
	if (!k.artifact_dir) {
		kernel_row_release(&k);
		return 0;
	}
	img = xasprintf("%s/bzImage", k.artifact_dir);
	have = file_exists(img);
	free(img);
	kernel_row_release(&k);
	if (!have || kernel_artifact_load(b->db, id, b->out, NULL) < 0)
		return 0;
	b->out->cached = 1;
	info("kernel %lld (%s) is already built: %s", (long long)id, b->out->release, b->out->dir);
	return 1;
}

/* The kernels row of the build, state 'building' (a failed or stale row of the key is reused). */
static int build_row(struct build *b)
{
	return kernel_start(b->db, b->key, b->t.name, b->commit, b->variant, b->compiler, b->artdir, now_wall(),
			    b->req->series_id, &b->kid);
}

/*
 * The artifact store: a finished build of this key in the artifact folder
 * that no row of this database names, e.g. one an earlier `make demo` of
 * another clone made with its own database. A folder gets its place only
 * whole (meta.json written, then the folder renamed into it, then given
 * back to root), and the key covers everything that goes into the kernel
 * (commit, series and local patches by content, config recipe, compiler,
 * variant), so a folder whose meta.json carries the same key is that
 * kernel. Its row is made from meta.json: 1 (out filled), 0 none, -1.
 */
static int build_adopt(struct build *b)
{
	char *mpath = xasprintf("%s/meta.json", b->artdir), *img = xasprintf("%s/bzImage", b->artdir);
	char *cpath = xasprintf("%s/config", b->artdir);
	struct json_object *m = NULL, *applied = NULL, *cc = NULL;
	const char *key = NULL, *release = NULL, *build_id = NULL;
	struct buf aj = BUF_INIT, cj = BUF_INIT;
	double dur = 0;
	char cfghex[65];
	int ret = 0;

	if (!file_exists(mpath) || !file_exists(img) || !(m = json_parse_file(mpath)))
		goto out;
	if (json_get_str(m, "key", &key, mpath) || strcmp(key, b->key) ||
	    json_get_str(m, "release", &release, mpath) || !*release || sha256_file_hex(cpath, cfghex) < 0) {
		warn("artifact folder '%s' has no usable meta.json for key %.16s: building anew", b->artdir, b->key);
		goto out;
	}
	if (json_get_str(m, "build_id", &build_id, mpath) < 0)
		build_id = NULL;
	json_get_double(m, "duration_s", &dur, mpath);
	if (json_get_array(m, "applied", &applied, mpath) == 0)
		json_to_buf(&aj, applied, 0);
	else
		buf_addstr(&aj, "[]");
	if (json_get_obj(m, "ccache", &cc, mpath) == 0)
		json_to_buf(&cj, cc, 0);
	if (build_row(b) < 0 ||
	    kernel_set_ok(b->db, b->kid, release, build_id, NULL, cfghex, aj.buf, dur, cj.len ? cj.buf : NULL) < 0 ||
	    kernel_artifact_load(b->db, b->kid, b->out, NULL) < 0) {
		ret = -1;
		goto out;
	}
	b->out->cached = 1;
	info("kernel %lld (%s) found in the artifact store, built before by key %.16s: %s", (long long)b->kid,
	     b->out->release, b->key, b->out->dir);
	ret = 1;
out:
	json_object_put(m);
	buf_release(&aj);
	buf_release(&cj);
	free(mpath);
	free(img);
	free(cpath);
	return ret;
}

/* The folder the artifacts are made in (ARTDIR.tmp.PID) and the build log in it. */
static int build_log_open(struct build *b)
{
	b->tmpdir = xasprintf("%s.tmp.%d", b->artdir, (int)getpid());
	remove_tree(b->tmpdir);
	if (mkdir_p(b->tmpdir) < 0)
		return -1;
	b->logpath = xasprintf("%s/build.log", b->tmpdir);
	b->logfd = open(b->logpath, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (b->logfd < 0)
		return error_errno("cannot create '%s'", b->logpath);
	dprintf(b->logfd, "klab: build of tree '%s' at %s, variant '%s', key %s\n", b->t.name, b->commit,
		b->variant, b->key);
	return 0;
}

/* Phase 5: image, config and System.map copied, release and build id read, modules installed and packed. */
static int build_artifacts(struct build *b)
{
	struct kernel_artifact *out = b->out;
	char *img = xasprintf("%s/arch/%s/boot/bzImage", b->obj, kernel_arch());
	char *f1 = xasprintf("%s/bzImage", b->tmpdir), *c0 = xasprintf("%s/.config", b->obj);
	char *c1 = xasprintf("%s/config", b->tmpdir), *s0 = xasprintf("%s/System.map", b->obj);
	char *s1 = xasprintf("%s/System.map", b->tmpdir), *rel = xasprintf("%s/include/config/kernel.release", b->obj);
	char *vml = xasprintf("%s/vmlinux", b->obj);
	struct buf rb = BUF_INIT;
	int bad = copy_file(img, f1, 0644) < 0 || copy_file(c0, c1, 0644) < 0 || copy_file(s0, s1, 0644) < 0 ||
		  buf_read_file(&rb, rel) < 0;

	buf_trim(&rb);
	out->release = buf_detach(&rb, NULL);
	out->build_id = elf_build_id(vml);
	free(img); free(f1); free(c0); free(c1); free(s0); free(s1); free(rel); free(vml);
	if (bad) {
		buf_addf(&b->msg, "kernel build of tree '%s': artifacts missing after make", b->t.name);
		return -1;
	}
	if (b->has_modules) {
		char *mroot = xasprintf("%s/modroot", b->tmpdir), *mp = xasprintf("INSTALL_MOD_PATH=%s", mroot);
		char *tarf = xasprintf("%s/modules.tar.gz", b->tmpdir);
		const char *const tar[] = { "tar", "-czf", tarf, "-C", mroot, "lib", NULL };
		struct run_cmd tc = RUN_CMD_INIT;
		int r = mkdir_p(mroot) < 0 ? -1 : 0;

		b->modroot = mroot;	/* make writes there: writable in the sandbox */
		if (r == 0)
			r = make_step(b->src, b->obj, b->cc, (const char *const *)b->env.v, b->logfd, b->logpath, 1800000,
				  b->label, b->req->progress, b->lv, mp, "INSTALL_MOD_STRIP=1", "modules_install", NULL);

		b->modroot = NULL;
		tc.argv = tar;
		tc.timeout_ms = 600000;
		if (r == 0)
			r = build_run(&tc, BUILD_RUN_OUT) < 0 || tc.status != 0 ? -1 : 0;
		if (r && tc.status > 0)
			dprintf(b->logfd, "klab: tar of the modules failed: %s\n", run_failure(&tc));
		run_release(&tc);
		remove_tree(mroot);
		free(mroot);
		free(mp);
		free(tarf);
		if (r) {
			buf_addf(&b->msg, "kernel build of tree '%s': modules_install failed (log: %s.failed.log)",
				 b->t.name, b->artdir);
			return -1;
		}
	}
	return 0;
}

/* meta.json of the artifact folder, and the apply log and ccache counters as the row stores them. */
static void build_meta(struct build *b, struct buf *meta, struct buf *applied, struct buf *ccache)
{
	struct json_object *m = json_object_new_object(), *cs = json_object_new_object(), *a;

	json_object_object_add(cs, "hits", json_object_new_int64(b->hits));
	json_object_object_add(cs, "misses", json_object_new_int64(b->misses));
	json_to_buf(ccache, cs, 0);
	json_object_object_add(m, "key", json_object_new_string(b->key));
	json_object_object_add(m, "tree", json_object_new_string(b->t.name));
	json_object_object_add(m, "commit", json_object_new_string(b->commit));
	json_object_object_add(m, "variant", json_object_new_string(b->variant));
	json_object_object_add(m, "release", json_object_new_string(b->out->release));
	json_object_object_add(m, "build_id", b->out->build_id ? json_object_new_string(b->out->build_id) : NULL);
	json_object_object_add(m, "compiler", json_object_new_string(b->compiler));
	json_object_object_add(m, "config_recipe", json_object_new_string(b->recipe));
	json_object_object_add(m, "duration_s", json_object_new_double(b->out->duration_s));
	json_object_object_add(m, "ccache", cs);
	json_object_object_add(m, "applied", apply_json(b->ap, b->nap));
	json_to_buf(meta, m, 1);
	json_object_put(m);
	a = apply_json(b->ap, b->nap);
	json_to_buf(applied, a, 0);
	json_object_put(a);
}

/*
 * Phase 6: the patched commit kept reachable, the work tree back at the
 * baseline, meta.json written, the folder moved to its place and the row
 * marked ok; OUT describes the kernel.
 */
static int build_store(struct build *b)
{
	struct kernel_artifact *out = b->out;
	struct buf mj = BUF_INIT, aj = BUF_INIT, csj = BUF_INIT;
	char *mpath = xasprintf("%s/meta.json", b->tmpdir), *c1 = xasprintf("%s/config", b->tmpdir);
	char *cfgsha = NULL, *m;
	char cfghex[65];
	int ret = -1;

	if (b->nap) {
		char *ref = xasprintf("refs/klab/%.16s", b->key);

		git(b->src, NULL, NULL, 0, "update-ref", ref, "HEAD", NULL);
		free(ref);
	}
	if (reset_worktree(b->src, b->commit) == 0)
		b->worktree_dirty = 0;
	if (sha256_file_hex(c1, cfghex) == 0)
		cfgsha = xstrdup(cfghex);
	build_meta(b, &mj, &aj, &csj);
	if (write_file_atomic(mpath, mj.buf, mj.len, 0644) < 0)
		goto out;
	close(b->logfd);
	b->logfd = -1;
	remove_tree(b->artdir);
	if (rename(b->tmpdir, b->artdir) < 0) {
		error_errno("cannot move '%s' to '%s'", b->tmpdir, b->artdir);
		goto out;
	}
	/* the artifacts are ours again: nothing the sandbox user runs can change them after */
	if (sandbox_reclaim(&b->sb, b->artdir) < 0)
		goto out;
	if (kernel_set_ok(b->db, b->kid, out->release, out->build_id, b->artdir, cfgsha, aj.buf, out->duration_s,
			  csj.buf) < 0)
		goto out;
	out->id = b->kid;
	out->tree = xstrdup(b->t.name);
	out->commit = xstrdup(b->commit);
	out->variant = xstrdup(b->variant);
	out->dir = xstrdup(b->artdir);
	out->image = xasprintf("%s/bzImage", b->artdir);
	out->config = xasprintf("%s/config", b->artdir);
	out->system_map = xasprintf("%s/System.map", b->artdir);
	out->log = xasprintf("%s/build.log", b->artdir);
	m = xasprintf("%s/modules.tar.gz", b->artdir);
	if (file_exists(m))
		out->modules = m;
	else
		free(m);
	out->applied = b->ap;
	out->n_applied = b->nap;
	b->ap = NULL;
	b->nap = 0;
	info("kernel %lld built: %s in %.0f s (ccache %ld hits, %ld misses): %s", (long long)b->kid, out->release,
	     out->duration_s, b->hits, b->misses, b->artdir);
	ret = 0;
out:
	free(mpath);
	free(c1);
	free(cfgsha);
	buf_release(&mj);
	buf_release(&aj);
	buf_release(&csj);
	return ret;
}

/* A failed build: the row says why, the log says FAILED and stays beside the artifacts (ARTDIR.failed.log). */
static void build_failed(struct build *b)
{
	char *generic = xasprintf("build of tree '%s' variant '%s' failed", b->t.name, b->variant);
	const char *msg = b->msg.len ? b->msg.buf : generic;

	sandbox_leave(&b->sb);
	if (b->kid)
		mark_failed(b->db, b->kid, msg, b->ap, b->nap);
	if (b->logfd >= 0) {
		dprintf(b->logfd, "klab: FAILED: %s\n", msg);
		close(b->logfd);
		b->logfd = -1;
	}
	if (b->tmpdir && b->logpath && file_exists(b->logpath) && !b->req->apply_only) {
		char *keep = xasprintf("%s.failed.log", b->artdir);

		if (rename(b->logpath, keep) == 0)
			sandbox_reclaim(&b->sb, keep);
		free(keep);
	}
	free(generic);
}

static void build_release(struct build *b)
{
	sandbox_leave(&b->sb);
	build_unisolate(b);
	if (b->worktree_dirty && b->src && b->commit)
		reset_worktree(b->src, b->commit);
	if (b->logfd >= 0)
		close(b->logfd);
	if (b->tmpdir)
		remove_tree(b->tmpdir);
	if (b->lockfd >= 0)
		close(b->lockfd);
	tree_free(&b->t);
	apply_results_free(b->ap, b->nap);
	free(b->rname);
	free(b->src);
	free(b->commit);
	strvec_clear(&b->env);
	free(b->cc);
	free(b->compiler);
	free(b->artdir);
	free(b->tmpdir);
	free(b->logpath);
	free(b->obj);
	free(b->label);
	free(b->lv);
	free(b->ccache_dir);
	buf_release(&b->msg);
	build_jail(NULL);
	sandbox_release(&b->sb);
}

int build_kernel(const struct klab_config *cfg, struct db *db, const struct build_request *req,
		 struct kernel_artifact *out, struct buf *err)
{
	struct build b;
	struct buf why = BUF_INIT;
	int ret = -1, r;

	memset(&b, 0, sizeof(b));
	memset(out, 0, sizeof(*out));
	b.cfg = cfg;
	b.db = db;
	b.req = req;
	b.out = out;
	b.cache = build_cache_dir();
	strvec_init(&b.t.fragments);
	strvec_init(&b.env);
	b.lockfd = b.logfd = b.mntns = -1;
	b.msg = (struct buf)BUF_INIT;

	/* every command of the build runs in the sandbox; without one, nothing runs */
	if (sandbox_init(&b.sb, cfg, &b.msg) < 0)
		goto out;
	build_jail(&b);
	if (build_source(&b) < 0 || build_key(&b) < 0)
		goto out;
	if (!req->force && !req->apply_only &&
	    ((r = build_cached(&b)) != 0 || (r = build_adopt(&b)) != 0)) {
		ret = r > 0 ? 0 : -1;
		goto out;
	}
	if (!req->apply_only && build_row(&b) < 0)
		goto out;
	if (build_log_open(&b) < 0)
		goto failed;
	dprintf(b.logfd, "klab: patches, config and make run as user '%s' in a sandbox%s\n", b.sb.user ? b.sb.user : "?",
		b.sb.off ? " (off: [lab] sandbox = none)" : " (bwrap: no network, only the tree, the build folder and ccache writable)");
	/* series patches build over a throwaway layer of the build folder and ccache */
	if (build_isolate(&b, &why) < 0) {
		buf_addf(&b.msg, "cannot isolate the build of tree '%s' from the build cache: %s", b.t.name, why.buf);
		goto failed;
	}
	if (b.obj_overlay)
		dprintf(b.logfd, "klab: the build folder and ccache are overlays of this build only (untrusted patches)\n");
	/* the sandbox user owns what the build writes; klab acts as that user until the artifacts are made */
	if (sandbox_own(&b.sb, b.obj, &why) < 0 || sandbox_own(&b.sb, b.ccache_dir, &why) < 0 ||
	    sandbox_own(&b.sb, b.tmpdir, &why) < 0 || sandbox_enter(&b.sb, &why) < 0) {
		buf_addf(&b.msg, "cannot prepare the sandbox of the build of tree '%s': %s", b.t.name, why.buf);
		goto failed;
	}
	if (build_apply(&b) < 0)
		goto failed;
	if (req->apply_only) {
		/* the result stays reachable for a look: git show refs/klab/apply-only */
		if (b.nap)
			git(b.src, NULL, NULL, 0, "update-ref", "refs/klab/apply-only", "HEAD", NULL);
		out->tree = xstrdup(b.t.name);
		out->commit = xstrdup(b.commit);
		out->variant = xstrdup(b.variant);
		out->applied = b.ap;
		out->n_applied = b.nap;
		b.ap = NULL;
		b.nap = 0;
		ret = 0;
		goto out;
	}
	if (build_make(&b) < 0 || build_artifacts(&b) < 0 || sandbox_leave(&b.sb) < 0 || build_store(&b) < 0)
		goto failed;
	ret = 0;
	goto out;
failed:
	build_failed(&b);
out:
	/*
	 * b.msg says why when a step handed its reason up; a step that did not
	 * (a file, the database) logged it, and the caller gets the general line
	 */
	if (ret < 0 && err && !b.msg.len)
		error_to(err, "build of tree '%s' variant '%s' failed", b.t.name ? b.t.name : "?",
			 b.variant ? b.variant : "?");
	else if (ret < 0 && err)
		error_to(err, "%s", b.msg.buf);
	else if (ret < 0 && b.msg.len)
		error("%s", b.msg.buf);
	buf_release(&why);
	build_release(&b);
	return ret;
}
