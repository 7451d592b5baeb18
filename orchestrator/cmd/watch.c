/* cmd/watch.c: `klab watch`: what klabd's patchwork watcher saw and did (docs/patchwork.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "log.h"
#include "store/patchwork.h"

static const char *const series_cols[] = {
	"watch", "series", "version", "name", "submitter", "state", "reason", "job", "job_state", "outcome",
	"description", "completed", "seen", "final", "lag_s", NULL,
};
static const char *const check_cols[] = {
	"watch", "series", "patch", "context", "state", "intended", "posted", "found", "attempts", "error",
	"description", "target_url", NULL,
};

static const char *w_name;
static int w_checks;

static const struct opt watch_opts[] = {
	OPT_STRING(0, "name", &w_name, "NAME", "only the watcher of [patchwork \"NAME\"]"),
	OPT_BOOL(0, "checks", &w_checks, "list the checks (posted, found, waiting) instead of the series"),
	OPT_JSON(), OPT_CSV(), OPT_END(),
};
static const char *const watch_usage[] = { "[--name NAME] [--checks] [--json|--csv]", NULL };
static const struct opt_spec watch_spec = {
	"klab watch", watch_usage, "what the patchwork watcher saw and did: series, filters, jobs, checks, lag",
	"Every series klabd's [patchwork] watchers saw, in arrival order: filtered out\n"
	"(and why), queued, running, done (with the final check), superseded, or an\n"
	"error; the lag from patchwork's series-completed event to the final check on\n"
	"every patch. --checks lists the checks instead: each is written before it is\n"
	"posted, so one not posted yet (the server down) shows here with its error.\n",
	watch_opts,
};

struct tally {
	int n, filtered, queued, running, done, other;
	double lag_max, lag_sum;
	int lags;
};

static int print_series(const struct pw_series_row *r, void *data)
{
	struct tally *t = data;
	double lag = r->final > 0 ? r->final - r->completed : NAN;
	char lagb[32] = "-", jobb[32] = "-";

	t->n++;
	if (!strcmp(r->state, "filtered"))
		t->filtered++;
	else if (!strcmp(r->state, "queued"))
		t->queued++;
	else if (!strcmp(r->state, "running"))
		t->running++;
	else if (!strcmp(r->state, "done"))
		t->done++;
	else
		t->other++;
	if (!isnan(lag)) {
		snprintf(lagb, sizeof(lagb), "%.1fs", lag);
		t->lag_sum += lag;
		t->lags++;
		if (lag > t->lag_max)
			t->lag_max = lag;
	}
	if (r->job_id)
		snprintf(jobb, sizeof(jobb), "%lld", (long long)r->job_id);
	print_obj_begin(NULL);
	print_str(PRINT_ANY, "watch", "%-10s ", r->watch);
	print_int(PRINT_ANY, "series", "%-7lld ", r->pw_id);
	print_int(PRINT_ANY, "version", "v%-2lld ", r->version);
	print_str(PRINT_ANY, "state", "%-10s ", r->state);
	print_text("%-5s ", jobb);
	if (r->job_id)
		print_data_int("job", r->job_id);
	else
		print_data_null("job");
	print_str(PRINT_DATA, "job_state", "%s", r->job_state);
	print_str(PRINT_ANY, "outcome", "%-8s ", r->outcome ? r->outcome : "-");
	print_text("%-8s ", lagb);
	print_str(PRINT_ANY, "name", "%s", r->name);
	print_str(PRINT_DATA, "submitter", "%s", r->submitter);
	print_str(PRINT_DATA, "reason", "%s", r->reason);
	print_str(PRINT_DATA, "description", "%s", r->description);
	if (r->reason)
		print_text("\n%43s%s", "", r->reason);
	if (r->description)
		print_text("\n%43s%s", "", r->description);
	print_text("\n");
	print_data_time("completed", r->completed);
	print_data_time("seen", r->seen);
	print_data_time("final", r->final > 0 ? r->final : NAN);
	if (isnan(lag))
		print_data_null("lag_s");
	else
		print_data_num("lag_s", lag);
	print_obj_end();
	return 0;
}

static int print_check(const struct pw_check_row *c, void *data)
{
	(void)data;
	print_obj_begin(NULL);
	print_str(PRINT_ANY, "watch", "%-10s ", c->watch);
	print_int(PRINT_ANY, "series", "%-7lld ", c->pw_series);
	print_int(PRINT_ANY, "patch", "%-7lld ", c->patch_id);
	print_str(PRINT_ANY, "context", "%-16s ", c->context);
	print_str(PRINT_ANY, "state", "%-8s ", c->state);
	print_text("%-8s ", c->posted > 0 ? (c->found ? "found" : "posted") : "waiting");
	print_data_time("intended", c->intended);
	print_data_time("posted", c->posted > 0 ? c->posted : NAN);
	print_data_bool("found", c->found);
	print_int(PRINT_DATA, "attempts", "%lld", c->attempts);
	print_str(PRINT_DATA, "error", "%s", c->error);
	print_str(PRINT_ANY, "description", "%s\n", c->description);
	print_str(PRINT_DATA, "target_url", "%s", c->target_url);
	if (c->error && !(c->posted > 0))
		print_text("%55s%s (%d attempts)\n", "", c->error, c->attempts);
	print_obj_end();
	return 0;
}

static int watch_cmd(int argc, char **argv, struct klab_ctx *ctx)
{
	struct klab_config *cfg;
	struct db *db;
	struct tally t;
	int st, rc;

	if ((argc = cmd_parse(&watch_spec, argc, argv, &st)) < 0)
		return st;
	if (argc)
		return cmd_usage_error(&watch_spec, "unexpected argument '%s'", argv[0]);
	cfg = ctx_config(ctx);
	if (!cfg)
		return 1;
	if (w_name && !conf_patchwork(cfg, w_name)) {
		error("no [patchwork \"%s\"] in the configuration", w_name);
		return 1;
	}
	db = ctx_db(ctx);
	if (!db)
		return 1;
	memset(&t, 0, sizeof(t));
	cmd_print_begin();
	if (w_checks) {
		print_text("%-10s %-7s %-7s %-16s %-8s %-8s %s\n", "WATCH", "SERIES", "PATCH", "CONTEXT", "STATE",
			   "POSTED", "DESCRIPTION");
		print_list_begin(NULL, check_cols);
		rc = pw_checks_each(db, w_name, 0, print_check, NULL);
		print_list_end();
	} else {
		print_text("%-10s %-7s %-3s %-10s %-5s %-8s %-8s %s\n", "WATCH", "SERIES", "V", "STATE", "JOB",
			   "OUTCOME", "LAG", "NAME");
		print_list_begin(NULL, series_cols);
		rc = pw_series_each(db, w_name, NULL, print_series, &t);
		print_list_end();
		print_text("%d series: %d filtered out, %d queued, %d running, %d done, %d other", t.n, t.filtered,
			   t.queued, t.running, t.done, t.other);
		if (t.lags)
			print_text("; lag to the final check: mean %.1f s, max %.1f s", t.lag_sum / t.lags, t.lag_max);
		print_text("\n");
	}
	st = cmd_print_end();
	return rc < 0 ? 1 : st;
}

const struct klab_cmd cmd_watch = { "watch", watch_cmd, &watch_spec, NULL, CMD_LISTING };
