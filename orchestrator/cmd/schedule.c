/* cmd/schedule.c: `klab schedule list`: schedules with their last and next fire times. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd.h"
#include "store/db.h"
#include "log.h"
#include "nightly/sched.h"
#include "store/schedules.h"

static const char *const sched_cols[] = {
	"name", "cron", "job", "last_fire", "next_fire", "next_fire_local", "overdue", "error", NULL,
};
static const struct opt list_opts[] = { OPT_JSON(), OPT_CSV(), OPT_END() };
static const char *const list_usage[] = { "[--json|--csv]", NULL };
static const struct opt_spec list_spec = {
	"klab schedule list", list_usage, "the [schedule] sections with their last and next fire times",
	"The next fire time is klabd's when it has one stored, else computed from the\n"
	"cron expression; one that is due already fires once when klabd starts.\n",
	list_opts,
};

static int schedule_list(int argc, char **argv, struct klab_ctx *ctx)
{
	struct klab_config *cfg;
	struct db *db;
	time_t now = time(NULL);
	int st;

	if ((argc = cmd_parse(&list_spec, argc, argv, &st)) < 0)
		return st;
	if (argc)
		return cmd_usage_error(&list_spec, "unexpected argument '%s'", argv[0]);
	cfg = ctx_config(ctx);
	if (!cfg)
		return 1;
	db = ctx_db(ctx);
	if (!db)
		return 1;
	cmd_print_begin();
	print_text("%-16s %-20s %-16s %-28s %s\n", "NAME", "CRON", "JOB", "NEXT FIRE", "LAST FIRE");
	print_list_begin(NULL, sched_cols);
	for (size_t i = 0; i < cfg->n_schedules; i++) {
		const struct conf_schedule *s = &cfg->schedules[i];
		struct cron c;
		double last = 0, stored_next = 0;
		time_t next;
		char tb[64], lb[64] = "never";

		schedule_fire_times(db, s->name, s->cron, s->job, &last, &stored_next);
		print_obj_begin(NULL);
		print_str(PRINT_ANY, "name", "%-16s ", s->name);
		print_str(PRINT_ANY, "cron", "%-20s ", s->cron);
		print_str(PRINT_ANY, "job", "%-16s ", s->job);
		if (cron_parse(&c, s->cron, NULL)) {
			print_str(PRINT_ANY, "error", "%s\n", "invalid cron expression");
			print_obj_end();
			continue;
		}
		/* klabd's stored next fire when it is still ahead (or overdue: fires at start), else computed. */
		next = stored_next > 0 ? (time_t)stored_next : cron_next(&c, now);
		if (last > 0)
			sched_fmt_time((time_t)last, lb, sizeof(lb));
		print_data_time("last_fire", last > 0 ? last : NAN);
		print_data_time("next_fire", next != (time_t)-1 ? (double)next : NAN);
		print_str(PRINT_ANY, "next_fire_local", "%-28s ", sched_fmt_time(next, tb, sizeof(tb)));
		print_text("%s", lb);
		print_bool(PRINT_DATA, "overdue", "%d", next != (time_t)-1 && next < now);
		print_text("%s\n", next != (time_t)-1 && next < now ? " (overdue: klabd fires it once at start)" : "");
		print_obj_end();
	}
	print_list_end();
	return cmd_print_end();
}

static const struct klab_cmd schedule_list_cmd = { "list", schedule_list, &list_spec, NULL, CMD_LISTING };
static const struct klab_cmd *const schedule_subs[] = { &schedule_list_cmd, NULL };
static const struct opt_spec schedule_spec = {
	"klab schedule", NULL, "nightly schedules and their next fire times", NULL, NULL,
};
const struct klab_cmd cmd_schedule = { "schedule", NULL, &schedule_spec, schedule_subs, 0 };
