/* cmd/kernels.c: `klab kernels list|show|build|gc`: the built kernels and the artifact store. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "build.h"
#include "cmd.h"
#include "db.h"
#include "jsonh.h"
#include "log.h"
#include "series.h"
#include "strvec.h"
#include "util.h"

static int usage(void)
{
	fprintf(stderr,
		"usage: klab kernels list [--json]\n"
		"       klab kernels show ID|KEY [--json]\n"
		"       klab kernels build [--tree NAME] [--ref REF] [--series SOURCE | --series-id ID]\n"
		"                          [--subject S] [--local-patch FILE]... [--variant base|patched|LABEL]\n"
		"                          [--jobs N] [--force] [--apply-only] [--artifact-dir DIR] [--json]\n"
		"       klab kernels gc [--older-than DURATION] [--dry-run]\n"
		"The tree '" BUILD_DEFAULT_TREE "' (Debian's linux-source-6.1, tinyconfig + qemu.config)\n"
		"needs no config. Build state: $KLAB_KERNEL_CACHE (default /var/cache/klab).\n");
	return 2;
}

static int finish(int rc)
{
	if (fflush(stdout) || ferror(stdout)) {
		error_errno("cannot write to stdout");
		return 1;
	}
	return rc;
}

static void print_json(struct json_object *o)
{
	struct buf b = BUF_INIT;

	json_to_buf(&b, o, 1);
	puts(b.buf);
	buf_release(&b);
	json_object_put(o);
}

/* The config when one is given or exists; NULL (no error) when there is none. */
static const struct klab_config *maybe_config(struct klab_ctx *ctx, int *failed)
{
	*failed = 0;
	if (!ctx->config_path && !conf_default_path())
		return NULL;
	if (!ctx->config_path && !file_exists(conf_default_path()))
		return NULL;
	if (!ctx_config(ctx))
		*failed = 1;
	return ctx->cfg;
}

static struct json_object *jstr(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

static const char *const cols = "id, key, tree, commit_id, variant, series_id, release, build_id, artifact_dir,"
				" state, error, apply_log, duration_s, ccache_stats, created, compiler, config_sha256";

static struct json_object *row_json(struct db_stmt *st)
{
	struct json_object *o = json_object_new_object();
	static const char *const names[] = { "id", "key", "tree", "commit", "variant", "series_id", "release",
					     "build_id", "artifact_dir", "state", "error", "apply_log",
					     "duration_s", "ccache", "created", "compiler", "config_sha256" };

	for (int i = 0; i < (int)ARRAY_SIZE(names); i++) {
		int ty = db_col_type(st, i);
		struct json_object *v = NULL;

		if (ty == DB_INTEGER)
			v = json_object_new_int64(db_col_int64(st, i));
		else if (ty == DB_FLOAT)
			v = json_object_new_double(db_col_double(st, i));
		else if (ty == DB_TEXT) {
			const char *t = db_col_text(st, i);

			if (!strcmp(names[i], "apply_log") || !strcmp(names[i], "ccache"))
				v = json_tokener_parse(t);
			if (!v)
				v = json_object_new_string(t);
		}
		json_object_object_add(o, names[i], v);
	}
	return o;
}

static int kernels_list(struct db *db, int json)
{
	char *sql = xasprintf("SELECT %s FROM kernels ORDER BY id", cols);
	struct db_stmt *st = db_prepare(db, sql, "");
	struct json_object *a = json_object_new_array();

	free(sql);
	if (!st) {
		json_object_put(a);
		return 1;
	}
	if (!json)
		printf("%-4s %-8s %-18s %-9s %-7s %-30s %s\n", "ID", "STATE", "TREE", "VARIANT", "SECONDS", "RELEASE",
		       "KEY");
	while (db_step(st) == DB_ROW) {
		if (json) {
			json_object_array_add(a, row_json(st));
			continue;
		}
		printf("%-4lld %-8s %-18s %-9s %7.0f %-30s %.16s\n", (long long)db_col_int64(st, 0),
		       db_col_text(st, 9), db_col_text(st, 2) ? db_col_text(st, 2) : "",
		       db_col_text(st, 4), db_col_double(st, 12),
		       db_col_text(st, 6) ? db_col_text(st, 6) : "-",
		       db_col_text(st, 1));
	}
	db_finalize(st);
	if (json)
		print_json(a);
	else
		json_object_put(a);
	return finish(0);
}

static int kernels_show(struct db *db, const char *what, int json)
{
	char *sql = xasprintf("SELECT %s FROM kernels WHERE id = ? OR key = ? OR key LIKE ? ORDER BY id LIMIT 2", cols);
	long id = 0;
	char *like = xasprintf("%s%%", what);
	struct db_stmt *st;
	struct json_object *o;
	int n = 0, rc = 1;

	parse_long(what, 1, 1L << 62, &id);
	st = db_prepare(db, sql, "iss", (int64_t)id, what, strlen(what) >= 8 ? like : "-");
	free(sql);
	free(like);
	if (!st)
		return 1;
	o = NULL;
	while (db_step(st) == DB_ROW) {
		n++;
		if (!o)
			o = row_json(st);
	}
	db_finalize(st);
	if (n == 0) {
		error("no kernel '%s' (give an id or a key prefix of 8 or more digits)", what);
		goto out;
	}
	if (n > 1) {
		error("kernel '%s' is ambiguous: several keys start with it", what);
		goto out;
	}
	if (json) {
		print_json(o);
		o = NULL;
	} else {
		json_object_object_foreach(o, k, v) {
			const char *s = v ? json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN) : "-";

			if (v && json_object_is_type(v, json_type_string))
				s = json_object_get_string(v);
			printf("%-14s %s\n", k, s);
		}
	}
	rc = finish(0);
out:
	if (o)
		json_object_put(o);
	return rc;
}

static int kernels_build(int argc, char **argv, struct klab_ctx *ctx)
{
	struct build_request req = { 0 };
	struct series_opts so = { 0 };
	struct strvec locals = STRVEC_INIT;
	struct kernel_artifact art;
	struct series *s = NULL;
	const char *series_src = NULL;
	const struct klab_config *cfg;
	struct db *db;
	int json = ctx->json, failed, rc = 1;
	long series_id = 0, jobs = 0;

	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--json")) {
			json = 1;
		} else if (!strcmp(a, "--force")) {
			req.force = 1;
		} else if (!strcmp(a, "--apply-only")) {
			req.apply_only = 1;
		} else if (i + 1 < argc && !strcmp(a, "--tree")) {
			req.tree = argv[++i];
		} else if (i + 1 < argc && !strcmp(a, "--ref")) {
			req.ref = argv[++i];
		} else if (i + 1 < argc && !strcmp(a, "--series")) {
			series_src = argv[++i];
		} else if (i + 1 < argc && !strcmp(a, "--subject")) {
			so.subject = argv[++i];
		} else if (i + 1 < argc && !strcmp(a, "--local-patch")) {
			strvec_push(&locals, argv[++i]);
		} else if (i + 1 < argc && !strcmp(a, "--variant")) {
			req.variant = argv[++i];
		} else if (i + 1 < argc && !strcmp(a, "--artifact-dir")) {
			req.artifact_dir = argv[++i];
		} else if (i + 1 < argc && !strcmp(a, "--series-id")) {
			if (parse_long(argv[++i], 1, 1L << 62, &series_id) < 0) {
				error("invalid --series-id '%s': expected a series id", argv[i]);
				goto usage;
			}
		} else if (i + 1 < argc && !strcmp(a, "--jobs")) {
			if (parse_long(argv[++i], 1, 1024, &jobs) < 0) {
				error("invalid --jobs '%s': expected 1..1024", argv[i]);
				goto usage;
			}
		} else {
			error("unknown or incomplete option '%s' of 'klab kernels build'", a);
			goto usage;
		}
	}
	if (series_src && series_id) {
		error("give --series or --series-id, not both");
		goto usage;
	}
	for (size_t i = 0; i < locals.n; i++)
		if (!file_exists(locals.v[i])) {
			error("local patch '%s' does not exist", locals.v[i]);
			goto out;
		}
	cfg = maybe_config(ctx, &failed);
	if (failed)
		goto out;
	db = ctx_db(ctx);
	if (!db)
		goto out;
	if (series_src) {
		int64_t sid;

		if (series_load(series_src, &so, &s) < 0 || series_store(db, s, &sid, NULL) < 0)
			goto out;
		series_id = sid;
	} else if (series_id && series_load_db(db, series_id, &s) < 0) {
		goto out;
	}
	req.series = s;
	req.series_id = series_id;
	req.local_patches = locals.n ? (const char *const *)locals.v : NULL;
	req.jobs = (int)jobs;
	req.progress = 1;
	if (build_kernel(cfg, db, &req, &art) < 0)
		goto out;
	if (req.apply_only) {
		for (size_t i = 0; i < art.n_applied; i++)
			printf("%s: %s (%s%s%d%s%d)\n", art.applied[i].name, apply_how_name(art.applied[i].how),
			       art.applied[i].method, ", max fuzz ", art.applied[i].max_fuzz, ", offsets ",
			       art.applied[i].offsets);
		printf("applies to tree '%s' at %s\n", art.tree, art.commit);
		kernel_artifact_release(&art);
		rc = finish(0);
		goto out;
	}
	if (json) {
		struct json_object *o = json_object_new_object(), *a = json_object_new_array();

		json_object_object_add(o, "id", json_object_new_int64(art.id));
		json_object_object_add(o, "key", json_object_new_string(art.key));
		json_object_object_add(o, "cached", json_object_new_boolean(art.cached));
		json_object_object_add(o, "tree", jstr(art.tree));
		json_object_object_add(o, "commit", jstr(art.commit));
		json_object_object_add(o, "variant", jstr(art.variant));
		json_object_object_add(o, "release", jstr(art.release));
		json_object_object_add(o, "build_id", jstr(art.build_id));
		json_object_object_add(o, "artifact_dir", jstr(art.dir));
		json_object_object_add(o, "image", jstr(art.image));
		json_object_object_add(o, "modules", jstr(art.modules));
		json_object_object_add(o, "duration_s", json_object_new_double(art.duration_s));
		for (size_t i = 0; i < art.n_applied; i++) {
			struct json_object *e = json_object_new_object();

			json_object_object_add(e, "patch", jstr(art.applied[i].name));
			json_object_object_add(e, "how", jstr(apply_how_name(art.applied[i].how)));
			json_object_object_add(e, "method", jstr(art.applied[i].method));
			json_object_object_add(e, "max_fuzz", json_object_new_int(art.applied[i].max_fuzz));
			json_object_object_add(e, "offsets", json_object_new_int(art.applied[i].offsets));
			json_object_array_add(a, e);
		}
		json_object_object_add(o, "applied", a);
		print_json(o);
	} else {
		printf("%lld %s\n", (long long)art.id, art.dir);
		for (size_t i = 0; i < art.n_applied; i++)
			fprintf(stderr, "  patch %s: %s (%s)\n", art.applied[i].name, apply_how_name(art.applied[i].how),
				art.applied[i].method);
		fprintf(stderr, "kernel %lld: %s%s\n", (long long)art.id, art.release ? art.release : "?",
			art.cached ? " (already built)" : "");
	}
	kernel_artifact_release(&art);
	rc = finish(0);
	goto out;
usage:
	rc = usage();
out:
	series_free(s);
	strvec_clear(&locals);
	return rc;
}

/* Remove failed kernels and kernels whose files are gone, and (with --older-than) unused old ones. */
static int kernels_gc(int argc, char **argv, struct klab_ctx *ctx)
{
	long older_ms = -1;
	int dry = 0, removed = 0, failed;
	struct db *db;
	struct db_stmt *st;
	struct strvec ids = STRVEC_INIT, dirs = STRVEC_INIT;
	const struct klab_config *cfg;

	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--dry-run"))
			dry = 1;
		else if (i + 1 < argc && !strcmp(argv[i], "--older-than")) {
			if (parse_duration_ms(argv[++i], &older_ms) < 0) {
				error("invalid --older-than '%s': expected a duration such as 30d... in s/m/h", argv[i]);
				return usage();
			}
		} else {
			error("unknown option '%s' of 'klab kernels gc'", argv[i]);
			return usage();
		}
	}
	cfg = maybe_config(ctx, &failed);
	if (failed)
		return 1;
	db = ctx_db(ctx);
	if (!db)
		return 1;
	st = db_prepare(db, "SELECT id, artifact_dir, state, created,"
			" EXISTS (SELECT 1 FROM job_sides j WHERE j.kernel_id = k.id)"
			" OR EXISTS (SELECT 1 FROM boots b WHERE b.kernel_id = k.id)"
			" OR EXISTS (SELECT 1 FROM runs r WHERE r.kernel_id = k.id) FROM kernels k", "");
	if (!st)
		return 1;
	while (db_step(st) == DB_ROW) {
		const char *dir = db_col_text(st, 1);
		const char *state = db_col_text(st, 2);
		int used = db_col_int(st, 4), gone = 0, old = 0;

		if (!strcmp(state, "ok")) {
			char *img = dir ? xasprintf("%s/bzImage", dir) : NULL;

			gone = !img || !file_exists(img);
			free(img);
		}
		old = older_ms >= 0 && now_wall() - db_col_double(st, 3) > older_ms / 1000.0;
		if (used || !(!strcmp(state, "failed") || gone || old))
			continue;
		strvec_pushf(&ids, "%lld", (long long)db_col_int64(st, 0));
		strvec_push(&dirs, dir ? dir : "");
	}
	db_finalize(st);
	for (size_t i = 0; i < ids.n; i++) {
		char *flog = xasprintf("%s.failed.log", dirs.v[i]);

		printf("%s kernel %s%s%s\n", dry ? "would remove" : "removing", ids.v[i], *dirs.v[i] ? " " : "",
		       dirs.v[i]);
		if (!dry) {
			if (*dirs.v[i]) {
				remove_tree(dirs.v[i]);
				unlink(flog);
			}
			db_run(db, "DELETE FROM kernels WHERE id = ?", "i", (int64_t)atoll(ids.v[i]));
			removed++;
		}
		free(flog);
	}
	(void)cfg;
	printf("%s %zu kernel(s)\n", dry ? "would remove" : "removed", dry ? ids.n : (size_t)removed);
	strvec_clear(&ids);
	strvec_clear(&dirs);
	return finish(0);
}

int oldcmd_kernels(int argc, char **argv, struct klab_ctx *ctx)
{
	const char *sub = argc > 1 ? argv[1] : "list";
	int json = ctx->json;
	struct db *db;

	if (!strcmp(sub, "--help") || !strcmp(sub, "-h") || !strcmp(sub, "help")) {
		usage();
		return 0;
	}
	if (!strcmp(sub, "build"))
		return kernels_build(argc, argv, ctx);
	if (!strcmp(sub, "gc"))
		return kernels_gc(argc, argv, ctx);
	if (!strcmp(sub, "list") || !strcmp(sub, "show")) {
		const char *what = NULL;

		for (int i = 2; i < argc; i++) {
			if (!strcmp(argv[i], "--json"))
				json = 1;
			else if (argv[i][0] != '-' && !what && !strcmp(sub, "show"))
				what = argv[i];
			else {
				error("unexpected argument '%s' of 'klab kernels %s'", argv[i], sub);
				return usage();
			}
		}
		if (!strcmp(sub, "show") && !what) {
			error("'klab kernels show' needs an ID or a KEY");
			return usage();
		}
		db = ctx_db(ctx);
		if (!db)
			return 1;
		return what ? kernels_show(db, what, json) : kernels_list(db, json);
	}
	error("unknown kernels subcommand '%s' (list, show, build, gc)", sub);
	return usage();
}
