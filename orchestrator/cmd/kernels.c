/* cmd/kernels.c: `klab kernels list|show|build|gc`: the built kernels and the artifact store. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kbuild/build.h"
#include "cmd.h"
#include "store/db.h"
#include "store/kernels.h"
#include "jsonh.h"
#include "intake/intake.h"
#include "log.h"
#include "intake/series.h"
#include "strvec.h"
#include "util.h"

/* ---- list, show ----------------------------------------------------------------------- */

/* The keys of a kernel's columns, in JSON, CSV and the text of kernels show. */
static const char *const kernel_cols[] = {
	"id", "key", "tree", "commit", "variant", "series_id", "release", "build_id", "artifact_dir", "state",
	"error", "apply_log", "duration_s", "ccache", "created", "compiler", "config_sha256", NULL,
};

/* A text column: data only (list), or data and its "KEY  VALUE" line (show); NULL is null and "-". */
static void str_print(const char *name, const char *t, int text)
{
	struct json_object *v = NULL;

	if (text)
		print_text("%-14s ", name);
	if (!t) {
		print_data_null(name);
		if (text)
			print_text("-\n");
		return;
	}
	if (!strcmp(name, "apply_log") || !strcmp(name, "ccache"))
		v = json_tokener_parse(t);
	if (v) {
		if (text)
			print_text("%s\n", json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN |
								     JSON_C_TO_STRING_NOSLASHESCAPE));
		print_data_json(name, v);
	} else {
		print_str(text ? PRINT_ANY : PRINT_DATA, name, "%s\n", t);
	}
}

/* A whole-number column (HAVE 0: NULL). */
static void int_print(const char *name, int64_t v, int have, int text)
{
	if (text)
		print_text("%-14s ", name);
	if (have) {
		print_int(text ? PRINT_ANY : PRINT_DATA, name, "%lld\n", v);
	} else {
		print_data_null(name);
		if (text)
			print_text("-\n");
	}
}

/* A number column (NAN: NULL). */
static void num_print(const char *name, double v, int text)
{
	char b[40];

	if (text)
		print_text("%-14s ", name);
	if (isnan(v)) {
		print_data_null(name);
		if (text)
			print_text("-\n");
		return;
	}
	if (!strcmp(name, "created"))
		print_data_time(name, v);
	else
		print_data_num(name, v);
	if (text)
		print_text("%s\n", print_fmt_num(b, v));
}

/* One kernel: data only (list), or data and the text "KEY  VALUE" lines (show), in kernel_cols' order. */
static void row_print(const struct kernel_row *k, int text)
{
	int_print("id", k->id, 1, text);
	str_print("key", k->key, text);
	str_print("tree", k->tree, text);
	str_print("commit", k->commit, text);
	str_print("variant", k->variant, text);
	int_print("series_id", k->series_id, k->series_id != 0, text);
	str_print("release", k->release, text);
	str_print("build_id", k->build_id, text);
	str_print("artifact_dir", k->artifact_dir, text);
	str_print("state", k->state, text);
	str_print("error", k->error, text);
	str_print("apply_log", k->apply_log, text);
	num_print("duration_s", k->duration_s, text);
	str_print("ccache", k->ccache_stats, text);
	num_print("created", k->created, text);
	str_print("compiler", k->compiler, text);
	str_print("config_sha256", k->config_sha256, text);
}

static const struct opt list_opts[] = { OPT_JSON(), OPT_CSV(), OPT_END() };
static const struct opt show_opts[] = { OPT_JSON(), OPT_END() };
static const char *const list_usage[] = { "[--json|--csv]", NULL };
static const char *const show_usage[] = { "ID|KEY [--json]", NULL };
static const struct opt_spec list_spec = {
	"klab kernels list", list_usage, "the built kernels: state, tree, variant, build time, release, key", NULL,
	list_opts,
};
static const struct opt_spec show_spec = {
	"klab kernels show", show_usage, "one built kernel, by its id or a key prefix of 8 or more digits", NULL,
	show_opts,
};

static int list_one(const struct kernel_row *k, void *data)
{
	print_obj_begin(NULL);
	row_print(k, 0);
	print_obj_end();
	print_text("%-4lld %-8s %-18s %-9s %7.0f %-30s %.16s\n", (long long)k->id, k->state, k->tree ? k->tree : "",
		   k->variant, isnan(k->duration_s) ? 0 : k->duration_s, k->release ? k->release : "-", k->key);
	return 0;
}

static int kernels_list(int argc, char **argv, struct klab_ctx *ctx)
{
	struct db *db;
	int s;

	if ((argc = cmd_parse(&list_spec, argc, argv, &s)) < 0)
		return s;
	if (argc)
		return cmd_usage_error(&list_spec, "unexpected argument '%s'", argv[0]);
	if (!(db = ctx_db(ctx)))
		return 1;
	cmd_print_begin();
	print_text("%-4s %-8s %-18s %-9s %-7s %-30s %s\n", "ID", "STATE", "TREE", "VARIANT", "SECONDS", "RELEASE",
		   "KEY");
	print_list_begin(NULL, kernel_cols);
	kernels_each(db, list_one, NULL);
	print_list_end();
	return cmd_print_end();
}

static int kernels_show(int argc, char **argv, struct klab_ctx *ctx)
{
	struct kernel_row k;
	const char *what;
	struct db *db;
	int n, s;

	if ((argc = cmd_parse(&show_spec, argc, argv, &s)) < 0)
		return s;
	if (argc != 1)
		return argc ? cmd_usage_error(&show_spec, "unexpected argument '%s'", argv[1])
			    : cmd_usage_error(&show_spec, "needs an ID or a KEY");
	what = argv[0];
	if (!(db = ctx_db(ctx)))
		return 1;
	n = kernel_find(db, what, &k);
	if (n < 0)
		return 1;
	if (n == 0)
		return error("no kernel '%s' (give an id or a key prefix of 8 or more digits)", what), 1;
	if (n > 1)
		return error("kernel '%s' is ambiguous: several keys start with it", what), 1;
	cmd_print_begin();
	row_print(&k, 1);
	kernel_row_release(&k);
	return cmd_print_end();
}

/* ---- build ------------------------------------------------------------------------------ */

static const char *b_tree, *b_ref, *b_series, *b_subject, *b_variant, *b_artifact_dir;
static long b_series_id, b_jobs;
static int b_force, b_apply_only;
static struct strvec b_locals = STRVEC_INIT;

static const struct opt build_opts[] = {
	OPT_STRING(0, "tree", &b_tree, "NAME", "a [tree] of the config, or " BUILD_DEFAULT_TREE " (the default)"),
	OPT_STRING(0, "ref", &b_ref, "REF", "commit, tag or branch (default: the tree's branch)"),
	OPT_STRING(0, "series", &b_series, "SOURCE", "apply this series (stored too): FILE, lore:MSGID, patchwork:ID"),
	OPT_INT(0, "series-id", &b_series_id, "ID", 1, 1L << 62, "apply a stored series"),
	OPT_STRING(0, "subject", &b_subject, "S", "the subject of a bare patch given as --series"),
	OPT_LIST(0, "local-patch", &b_locals, "FILE", "a fix-up applied after the series (may be repeated)"),
	OPT_STRING(0, "variant", &b_variant, "base|patched|LABEL",
		   "the variant's name (default: patched with patches, else base)"),
	OPT_INT(0, "jobs", &b_jobs, "N", 1, 1024, "make -jN (default: the tree's jobs, else nproc)"),
	OPT_BOOL(0, "force", &b_force, "build even when a kernel with the same key is stored"),
	OPT_BOOL(0, "apply-only", &b_apply_only, "only check that the patches apply; build nothing"),
	OPT_STRING(0, "artifact-dir", &b_artifact_dir, "DIR", "where the kernel goes (default: [lab] artifact_dir)"),
	OPT_JSON(),
	OPT_END(),
};
static const char *const build_usage[] = {
	"[--tree NAME] [--ref REF] [--series SOURCE | --series-id ID] [--subject S]",
	" [--local-patch FILE]... [--variant base|patched|LABEL] [--jobs N]",
	" [--force] [--apply-only] [--artifact-dir DIR] [--json]",
	NULL,
};
static const struct opt_spec build_spec = {
	"klab kernels build", build_usage, "build a kernel (or find it built) and store it",
	"The tree '" BUILD_DEFAULT_TREE "' (Debian's linux-source-6.1, tinyconfig + qemu.config)\n"
	"needs no config. Build state: $KLAB_KERNEL_CACHE (default /var/cache/klab).\n"
	"Prints the kernel's id and artifact folder; the patches' outcome goes to stderr.\n",
	build_opts,
};

static void applied_print(const struct kernel_artifact *art)
{
	print_list_begin("applied", NULL);
	for (size_t i = 0; i < art->n_applied; i++) {
		const struct apply_result *a = &art->applied[i];

		print_obj_begin(NULL);
		print_data_str("patch", a->name);
		print_data_str("how", apply_how_name(a->how));
		print_data_str("method", a->method);
		print_data_int("max_fuzz", a->max_fuzz);
		print_data_int("offsets", a->offsets);
		print_obj_end();
	}
	print_list_end();
}

static int kernels_build(int argc, char **argv, struct klab_ctx *ctx)
{
	struct build_request req = { 0 };
	struct series_opts so = { 0 };
	struct kernel_artifact art;
	struct series *s = NULL;
	const struct klab_config *cfg;
	struct db *db;
	int failed, rc = 1, st;

	if ((argc = cmd_parse(&build_spec, argc, argv, &st)) < 0)
		return st;
	if (argc)
		return cmd_usage_error(&build_spec, "unexpected argument '%s'", argv[0]);
	if (b_series && b_series_id)
		return cmd_usage_error(&build_spec, "give --series or --series-id, not both");
	for (size_t i = 0; i < b_locals.n; i++)
		if (!file_exists(b_locals.v[i]))
			return error("local patch '%s' does not exist", b_locals.v[i]), 1;
	cfg = ctx_config_optional(ctx, &failed);
	if (failed)
		return 1;
	db = ctx_db(ctx);
	if (!db)
		return 1;
	so.subject = b_subject;
	if (b_series) {
		int64_t sid;

		if (series_load_sandboxed(cfg, b_series, &so, &s) < 0 || series_store(db, s, &sid, NULL, NULL) < 0)
			goto out;
		b_series_id = sid;
	} else if (b_series_id && series_load_db(db, b_series_id, &s, NULL) < 0) {
		goto out;
	}
	req.tree = b_tree;
	req.ref = b_ref;
	req.variant = b_variant;
	req.artifact_dir = b_artifact_dir;
	req.force = b_force;
	req.apply_only = b_apply_only;
	req.series = s;
	req.series_id = b_series_id;
	req.local_patches = b_locals.n ? (const char *const *)b_locals.v : NULL;
	req.jobs = (int)b_jobs;
	req.progress = 1;
	if (build_kernel(cfg, db, &req, &art, NULL) < 0)
		goto out;
	cmd_print_begin();
	if (req.apply_only) {
		for (size_t i = 0; i < art.n_applied; i++)
			print_text("%s: %s (%s%s%d%s%d)\n", art.applied[i].name, apply_how_name(art.applied[i].how),
				   art.applied[i].method, ", max fuzz ", art.applied[i].max_fuzz, ", offsets ",
				   art.applied[i].offsets);
		print_str(PRINT_ANY, "tree", "applies to tree '%s'", art.tree);
		print_str(PRINT_ANY, "commit", " at %s\n", art.commit);
		applied_print(&art);
	} else {
		print_int(PRINT_ANY, "id", "%lld", art.id);
		print_data_str("key", art.key);
		print_data_bool("cached", art.cached);
		print_data_str("tree", art.tree);
		print_data_str("commit", art.commit);
		print_data_str("variant", art.variant);
		print_data_str("release", art.release);
		print_data_str("build_id", art.build_id);
		print_str(PRINT_ANY, "artifact_dir", " %s\n", art.dir);
		print_data_str("image", art.image);
		print_data_str("modules", art.modules);
		print_data_num("duration_s", art.duration_s);
		applied_print(&art);
		if (print_is(PRINT_TEXT)) {
			for (size_t i = 0; i < art.n_applied; i++)
				fprintf(stderr, "  patch %s: %s (%s)\n", art.applied[i].name,
					apply_how_name(art.applied[i].how), art.applied[i].method);
			fprintf(stderr, "kernel %lld: %s%s\n", (long long)art.id, art.release ? art.release : "?",
				art.cached ? " (already built)" : "");
		}
	}
	kernel_artifact_release(&art);
	rc = cmd_print_end();
out:
	series_free(s);
	return rc;
}

/* ---- gc ---------------------------------------------------------------------------------- */

static long gc_older_ms = -1;
static int gc_dry;

static const struct opt gc_opts[] = {
	OPT_DURATION(0, "older-than", &gc_older_ms, "DURATION", 0, LONG_MAX,
		     "also unused kernels built longer ago than DURATION (such as 720h)"),
	OPT_BOOL(0, "dry-run", &gc_dry, "say what would go, remove nothing"),
	OPT_JSON(),
	OPT_END(),
};
static const char *const gc_usage[] = { "[--older-than DURATION] [--dry-run]", NULL };
static const struct opt_spec gc_spec = {
	"klab kernels gc", gc_usage, "remove failed kernels and kernels whose files are gone",
	"A kernel that a job, a boot or a run refers to is always kept.\n", gc_opts,
};

struct gc_pick {
	struct strvec ids, dirs;
};

/* A kernel to remove: failed, its image gone, or (--older-than) old; never one in use. */
static int gc_weigh(const struct kernel_use *u, void *data)
{
	struct gc_pick *p = data;
	int gone = 0, old;

	if (!strcmp(u->state, "ok")) {
		char *img = u->artifact_dir ? xasprintf("%s/bzImage", u->artifact_dir) : NULL;

		gone = !img || !file_exists(img);
		free(img);
	}
	old = gc_older_ms >= 0 && now_wall() - u->created > gc_older_ms / 1000.0;
	if (u->used || !(!strcmp(u->state, "failed") || gone || old))
		return 0;
	strvec_pushf(&p->ids, "%lld", (long long)u->id);
	strvec_push(&p->dirs, u->artifact_dir ? u->artifact_dir : "");
	return 0;
}

/* Remove failed kernels and kernels whose files are gone, and (with --older-than) unused old ones. */
static int kernels_gc(int argc, char **argv, struct klab_ctx *ctx)
{
	int removed = 0, failed, s;
	struct db *db;
	struct gc_pick pick = { STRVEC_INIT, STRVEC_INIT };
	struct strvec ids, dirs;

	if ((argc = cmd_parse(&gc_spec, argc, argv, &s)) < 0)
		return s;
	if (argc)
		return cmd_usage_error(&gc_spec, "unexpected argument '%s'", argv[0]);
	ctx_config_optional(ctx, &failed);
	if (failed)
		return 1;
	db = ctx_db(ctx);
	if (!db)
		return 1;
	if (kernels_use_each(db, gc_weigh, &pick) < 0)
		return 1;
	ids = pick.ids, dirs = pick.dirs;
	cmd_print_begin();
	print_data_bool("dry_run", gc_dry);
	print_list_begin("kernels", NULL);
	for (size_t i = 0; i < ids.n; i++) {
		char *flog = xasprintf("%s.failed.log", dirs.v[i]);

		print_obj_begin(NULL);
		print_text("%s kernel ", gc_dry ? "would remove" : "removing");
		print_int(PRINT_ANY, "id", "%lld", atoll(ids.v[i]));
		print_str(PRINT_ANY, "artifact_dir", "%s", *dirs.v[i] ? dirs.v[i] : NULL);
		print_text("%s%s\n", *dirs.v[i] ? " " : "", dirs.v[i]);
		print_obj_end();
		if (!gc_dry) {
			if (*dirs.v[i]) {
				remove_tree(dirs.v[i]);
				unlink(flog);
			}
			kernel_delete(db, (int64_t)atoll(ids.v[i]));
			removed++;
		}
		free(flog);
	}
	print_list_end();
	print_text("%s %zu kernel(s)\n", gc_dry ? "would remove" : "removed", gc_dry ? ids.n : (size_t)removed);
	print_data_int("removed", removed);
	strvec_clear(&ids);
	strvec_clear(&dirs);
	return cmd_print_end();
}

static const struct klab_cmd kernels_cmds[] = {
	{ "list", kernels_list, &list_spec, NULL, CMD_LISTING },
	{ "show", kernels_show, &show_spec, NULL, 0 },
	{ "build", kernels_build, &build_spec, NULL, 0 },
	{ "gc", kernels_gc, &gc_spec, NULL, 0 },
};
static const struct klab_cmd *const kernels_subs[] = {
	&kernels_cmds[0], &kernels_cmds[1], &kernels_cmds[2], &kernels_cmds[3], NULL,
};
static const struct opt_spec kernels_spec = {
	"klab kernels", NULL, "build kernels (baseline, patched) and manage the artifact cache",
	"Without a subcommand: list.\n", NULL,
};
const struct klab_cmd cmd_kernels = { "kernels", NULL, &kernels_spec, kernels_subs, CMD_DEFAULT_SUB };
