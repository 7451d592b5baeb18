/* cmd/db.c: `klab db init|info`: create or upgrade the database, show its version and row counts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "buf.h"
#include "cmd.h"
#include "db.h"
#include "jsonh.h"
#include "log.h"

static int db_info(struct klab_ctx *ctx)
{
	struct db *db = ctx_db(ctx);
	struct db_stmt *st;
	struct json_object *o, *tables;
	int ret = 0;

	if (!db)
		return 1;
	st = db_prepare(db, "SELECT name FROM sqlite_master WHERE type = 'table' "
			"AND name NOT LIKE 'sqlite_%' ORDER BY name", "");
	if (!st)
		return 1;
	o = json_object_new_object();
	tables = json_object_new_object();
	json_object_object_add(o, "path", json_object_new_string(db_file(db)));
	json_object_object_add(o, "schema_version", json_object_new_int(db_version(db)));
	json_object_object_add(o, "latest_version", json_object_new_int(db_latest_version()));
	while (db_step(st) == DB_ROW) {
		const char *name = db_col_text(st, 0);
		char *sql = xasprintf("SELECT count(*) FROM \"%s\"", name);
		int64_t n = 0;

		if (db_get_int(db, &n, sql, "") < 0)
			ret = 1;
		json_object_object_add(tables, name, json_object_new_int64(n));
		free(sql);
	}
	db_finalize(st);
	json_object_object_add(o, "tables", tables);
	if (ctx->json) {
		struct buf b = BUF_INIT;

		json_to_buf(&b, o, 1);
		printf("%s\n", b.buf);
		buf_release(&b);
	} else {
		printf("database        %s\n", db_file(db));
		printf("schema version  %d (this klab knows up to %d)\n", db_version(db), db_latest_version());
		json_object_object_foreach(tables, k, v)
			printf("  %-16s %8lld rows\n", k, (long long)json_object_get_int64(v));
	}
	json_object_put(o);
	return ret;
}

int oldcmd_db(int argc, char **argv, struct klab_ctx *ctx)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return cmd_usage("db", argc < 2 ? 2 : 0);
	if (!strcmp(argv[1], "init")) {
		struct db *db = ctx_db(ctx);

		if (!db)
			return 1;
		if (!ctx->json)
			printf("database '%s' is at schema version %d\n",
			       db_file(db), db_version(db));
		else
			printf("{\"path\": \"%s\", \"schema_version\": %d}\n",
			       db_file(db), db_version(db));
		return 0;
	}
	if (!strcmp(argv[1], "info"))
		return db_info(ctx);
	error("unknown db subcommand '%s' (init, info)", argv[1]);
	return 2;
}
