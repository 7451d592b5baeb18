/* cmd/schedule.c: `klab schedule list`: schedules with their last and next fire times. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd.h"
#include "db.h"
#include "jsonh.h"
#include "log.h"
#include "sched.h"

int oldcmd_schedule(int argc, char **argv, struct klab_ctx *ctx)
{
	struct klab_config *cfg;
	struct json_object *arr;
	struct db *db;
	time_t now = time(NULL);

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))
		return cmd_usage("schedule", 0);
	if (argc != 2 || strcmp(argv[1], "list")) {
		if (argc >= 2)
			error("unknown schedule subcommand '%s' (list)", argv[1]);
		return cmd_usage("schedule", 2);
	}
	cfg = ctx_config(ctx);
	if (!cfg)
		return 1;
	db = ctx_db(ctx);
	if (!db)
		return 1;
	arr = json_object_new_array();
	for (size_t i = 0; i < cfg->n_schedules; i++) {
		const struct conf_schedule *s = &cfg->schedules[i];
		struct json_object *o = json_object_new_object();
		struct cron c;
		double last = 0, stored_next = 0;
		time_t next;
		struct db_stmt *st;
		char tb[64];

		st = db_prepare(db, "SELECT last_fire, next_fire FROM schedules WHERE name = ? AND cron = ? AND job = ?",
				"sss", s->name, s->cron, s->job);
		if (st && db_step(st) == DB_ROW) {
			last = db_col_double(st, 0);
			stored_next = db_col_double(st, 1);
		}
		db_finalize(st);
		json_object_object_add(o, "name", json_object_new_string(s->name));
		json_object_object_add(o, "cron", json_object_new_string(s->cron));
		json_object_object_add(o, "job", json_object_new_string(s->job));
		if (cron_parse(&c, s->cron, NULL)) {
			json_object_object_add(o, "error", json_object_new_string("invalid cron expression"));
			json_object_array_add(arr, o);
			continue;
		}
		/* klabd's stored next fire when it is still ahead (or overdue: fires at start), else computed. */
		next = stored_next > 0 ? (time_t)stored_next : cron_next(&c, now);
		json_object_object_add(o, "last_fire", last > 0 ? json_object_new_double(last) : NULL);
		json_object_object_add(o, "next_fire", next != (time_t)-1 ? json_object_new_int64((int64_t)next) : NULL);
		json_object_object_add(o, "next_fire_local",
				       json_object_new_string(sched_fmt_time(next, tb, sizeof(tb))));
		json_object_object_add(o, "overdue", json_object_new_boolean(next != (time_t)-1 && next < now));
		json_object_array_add(arr, o);
	}
	if (ctx->json) {
		struct buf b = BUF_INIT;
		json_to_buf(&b, arr, 1);
		puts(b.buf);
		buf_release(&b);
	} else {
		printf("%-16s %-20s %-16s %-28s %s\n", "NAME", "CRON", "JOB", "NEXT FIRE", "LAST FIRE");
		for (size_t i = 0; i < json_object_array_length(arr); i++) {
			struct json_object *o = json_object_array_get_idx(arr, i), *v;
			char last[64] = "never";
			if ((v = json_object_object_get(o, "last_fire")))
				sched_fmt_time((time_t)json_object_get_double(v), last, sizeof(last));
			if (json_object_object_get(o, "error")) {
				printf("%-16s %-20s %-16s %s\n", json_object_get_string(json_object_object_get(o, "name")),
				       json_object_get_string(json_object_object_get(o, "cron")),
				       json_object_get_string(json_object_object_get(o, "job")), "invalid cron expression");
				continue;
			}
			printf("%-16s %-20s %-16s %-28s %s%s\n", json_object_get_string(json_object_object_get(o, "name")),
			       json_object_get_string(json_object_object_get(o, "cron")),
			       json_object_get_string(json_object_object_get(o, "job")),
			       json_object_get_string(json_object_object_get(o, "next_fire_local")), last,
			       json_object_get_boolean(json_object_object_get(o, "overdue")) ?
			       " (overdue: klabd fires it once at start)" : "");
		}
	}
	json_object_put(arr);
	if (fflush(stdout) || ferror(stdout))
		return error_errno("cannot write to standard output") ? 1 : 1;
	return 0;
}
