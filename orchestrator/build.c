/* build.c: one kernel build, phase by phase (source, key and cache, patches, make, artifacts), and the artifact store. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "build.h"
#include "build_int.h"
#include "db.h"
#include "jsonh.h"
#include "log.h"
#include "run.h"
#include "series.h"
#include "strvec.h"
#include "util.h"

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
