/* cmd/db.c: `klab db init|info|rebuild-summaries`: create or upgrade the database, show its version and row counts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "store/db.h"
#include "store/ksample.h"
#include "log.h"
#include "store/result.h"
#include "strvec.h"
#include "util.h"

static const struct opt db_opts[] = { OPT_JSON(), OPT_END() };
static const char *const no_usage[] = { "", NULL };
static const struct opt_spec init_spec = {
	"klab db init", no_usage, "create the database, or apply the migrations it lacks",
	"The database is --db FILE, $KLAB_DB, or [lab] db of the configuration.\n", db_opts,
};
static const struct opt_spec info_spec = {
	"klab db info", no_usage, "the database's schema version and the row count of every table", NULL, db_opts,
};

static int db_init(int argc, char **argv, struct klab_ctx *ctx)
{
	struct db *db;
	int st;

	if ((argc = cmd_parse(&init_spec, argc, argv, &st)) < 0)
		return st;
	if (argc)
		return cmd_usage_error(&init_spec, "unexpected argument '%s'", argv[0]);
	if (!(db = ctx_db(ctx)))
		return 1;
	cmd_print_begin();
	print_str(PRINT_ANY, "path", "database '%s'", db_file(db));
	print_int(PRINT_ANY, "schema_version", " is at schema version %lld\n", db_version(db));
	return cmd_print_end();
}

static int rb_kernel_samples;
static const struct opt rebuild_opts[] = {
	OPT_BOOL(0, "kernel-samples", &rb_kernel_samples,
		 "make only the per-kernel samples, from the per-boot summaries (after the upgrade to schema 16)"),
	OPT_JSON(), OPT_END(),
};
static const struct opt_spec rebuild_spec = {
	"klab db rebuild-summaries", no_usage, "make the per-boot summaries of every job's runs again",
	"Comparisons and the nightly history read per-boot summaries (boot_metrics,\n"
	"boot_cpus, boot_profile, job_metrics) and per-kernel samples (kernel_samples)\n"
	"that klab keeps as it stores each run. Runs written into the database by\n"
	"other means (a test fixture, bench/gen-db.sh) need them made again; this does\n"
	"it in one transaction, then refreshes the query planner's statistics (sqlite).\n"
	"A database upgraded to schema 16 lacks the per-kernel\n"
	"samples: until they are made, kernel comparisons read the boot summaries\n"
	"(slower on a large database, same answer).\n", rebuild_opts,
};

static int db_rebuild(int argc, char **argv, struct klab_ctx *ctx)
{
	struct db *db;
	int64_t n = 0, k = 0;
	int st;

	if ((argc = cmd_parse(&rebuild_spec, argc, argv, &st)) < 0)
		return st;
	if (argc)
		return cmd_usage_error(&rebuild_spec, "unexpected argument '%s'", argv[0]);
	if (!(db = ctx_db(ctx)))
		return 1;
	if (rb_kernel_samples) {
		if (db_begin(db))
			return 1;
		if (ksample_rebuild(db)) {
			db_rollback(db);
			return 1;
		}
		if (db_commit(db))
			return 1;
	} else if (result_rebuild_summaries(db))
		return 1;
	if (db_refresh_stats(db))
		warn("the rows are made; the query planner's statistics were not refreshed");
	if (ksample_row_counts(db, &n, &k) < 0)
		return 1;
	cmd_print_begin();
	print_str(PRINT_ANY, "path", "database '%s'", db_file(db));
	if (!rb_kernel_samples)
		print_int(PRINT_ANY, "boot_metrics", ": %lld boot_metrics rows made again,", n);
	else
		print_text(":");
	print_int(PRINT_ANY, "kernel_samples", " %lld kernel_samples rows made again\n", k);
	return cmd_print_end();
}

static int db_info(int argc, char **argv, struct klab_ctx *ctx)
{
	struct strvec tables = STRVEC_INIT;
	struct db *db;
	int ret = 0, s;

	if ((argc = cmd_parse(&info_spec, argc, argv, &s)) < 0)
		return s;
	if (argc)
		return cmd_usage_error(&info_spec, "unexpected argument '%s'", argv[0]);
	if (!(db = ctx_db(ctx)))
		return 1;
	if (db_tables(db, &tables))
		return 1;
	cmd_print_begin();
	print_str(PRINT_ANY, "path", "database        %s\n", db_file(db));
	print_int(PRINT_ANY, "schema_version", "schema version  %lld", db_version(db));
	print_int(PRINT_ANY, "latest_version", " (this klab knows up to %lld)\n", db_latest_version());
	print_obj_begin("tables");
	for (size_t i = 0; i < tables.n; i++) {
		const char *name = tables.v[i];
		int64_t n = 0;

		if (db_table_rows(db, name, &n))
			ret = 1;
		print_text("  %-16s", name);
		print_int(PRINT_ANY, name, " %8lld rows\n", n);
	}
	strvec_clear(&tables);
	print_obj_end();
	return cmd_print_end() | ret;
}

static const struct klab_cmd db_init_cmd = { "init", db_init, &init_spec, NULL, 0 };
static const struct klab_cmd db_info_cmd = { "info", db_info, &info_spec, NULL, 0 };
static const struct klab_cmd db_rebuild_cmd = { "rebuild-summaries", db_rebuild, &rebuild_spec, NULL, 0 };
static const struct klab_cmd *const db_subs[] = { &db_init_cmd, &db_info_cmd, &db_rebuild_cmd, NULL };
static const struct opt_spec db_spec = {
	"klab db", NULL, "create or upgrade the database; show its version and row counts", NULL, NULL,
};
const struct klab_cmd cmd_db = { "db", NULL, &db_spec, db_subs, 0 };
