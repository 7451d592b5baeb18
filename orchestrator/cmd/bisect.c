/* cmd/bisect.c: `klab bisect start|show|list|cancel`: bisections of a performance change between two commits. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisect/bisect_db.h"
#include "cmd.h"
#include "job/job.h"
#include "buf.h"
#include "store/bisections.h"
#include "store/db.h"
#include "log.h"
#include "report/report.h"
#include "util.h"

static const char *b_tree, *b_good, *b_bad, *b_workload, *b_metric, *b_job;
static double b_alpha = 0.01;
static long b_min = 3, b_max = 8, b_ends;

static const struct opt start_opts[] = {
	OPT_STRING(0, "tree", &b_tree, "TREE", "the [tree] whose git history is bisected"),
	OPT_STRING(0, "good", &b_good, "REF", "a commit without the change"),
	OPT_STRING(0, "bad", &b_bad, "REF", "a commit with it (descending from good)"),
	OPT_STRING(0, "workload", &b_workload, "NAME", "the [workload] that measures it"),
	OPT_STRING(0, "metric", &b_metric, "METRIC", "the metric (default: the workload's headline)"),
	OPT_STRING(0, "job", &b_job, "JOB", "the [job] whose machines and runs measure each commit "
		   "(default: the one job of the tree that runs the workload)"),
	OPT_DOUBLE(0, "alpha", &b_alpha, "P", "the error rate of one classification (default 0.01)"),
	OPT_INT(0, "min-boots", &b_min, "N", 2, 100, "boots per commit at first (default 3; the ends get twice)"),
	OPT_INT(0, "max-boots", &b_max, "N", 2, 1000, "boots per commit before an undecided one is skipped (default 8)"),
	OPT_INT(0, "end-boots", &b_ends, "N", 2, 1000, "boots a side of the two ends, measured first (default 2 * min-boots)"),
	OPT_JSON(), OPT_END(),
};
static const char *const start_usage[] = {
	"--tree TREE --good REF --bad REF --workload NAME [--metric METRIC] [--job JOB] [--alpha P]", NULL };
static const struct opt_spec start_spec = {
	"klab bisect start", start_usage, "queue a bisection of a performance change between two commits",
	"Every input is checked before anything is stored: the tree has git history, good and\n"
	"bad are different commits and bad descends from good, the workload exists and\n"
	"produces the metric. docs/bisect.md says how a step is classified.\n",
	start_opts,
};

static int bisect_start_cmd(int argc, char **argv, struct klab_ctx *ctx)
{
	struct bisect_start_opts o;
	struct klab_config *cfg;
	struct db *db;
	int64_t id;
	int st;

	if ((argc = cmd_parse(&start_spec, argc, argv, &st)) < 0)
		return st;
	if (argc)
		return cmd_usage_error(&start_spec, "unexpected argument '%s'", argv[0]);
	if (!b_tree || !b_good || !b_bad || !b_workload)
		return cmd_usage_error(&start_spec, "--tree, --good, --bad and --workload are needed");
	if (!(b_alpha > 0 && b_alpha < 0.5))
		return cmd_usage_error(&start_spec, "--alpha %g is not between 0 and 0.5", b_alpha);
	if (b_max < b_min)
		return cmd_usage_error(&start_spec, "--max-boots %ld is below --min-boots %ld", b_max, b_min);
	if (!(cfg = ctx_config(ctx)) || !(db = ctx_db(ctx)))
		return 1;
	memset(&o, 0, sizeof(o));
	o.tree = b_tree;
	o.good = b_good;
	o.bad = b_bad;
	o.workload = b_workload;
	o.metric = b_metric;
	o.job = b_job;
	o.alpha = b_alpha;
	o.min_boots = (int)b_min;
	o.max_boots = (int)b_max;
	o.end_boots = (int)b_ends;
	id = bisect_start(db, cfg, &o, NULL);
	if (id < 0)
		return 1;
	cmd_print_begin();
	print_obj_begin(NULL);
	print_int(PRINT_ANY, "id", "bisection %lld queued", (long long)id);
	print_str(PRINT_JSON, "state", "%s", "queued");
	print_text(" (klabd runs it, or `klab bisect run %lld`)\n", (long long)id);
	print_obj_end();
	return cmd_print_end();
}

static const char *const list_cols[] = {
	"id", "tree", "good", "bad", "workload", "metric", "state", "commits", "first_bad", "error", NULL };
static const struct opt list_opts[] = { OPT_JSON(), OPT_CSV(), OPT_END() };
static const char *const list_usage[] = { "[--json|--csv]", NULL };
static const struct opt_spec list_spec = {
	"klab bisect list", list_usage, "the bisections, newest first", NULL, list_opts,
};
static int s_mail;
static const struct opt show_opts[] = {
	OPT_BOOL(0, "mail", &s_mail, "the mail text of the answer, as the kernel test robot writes it"),
	OPT_JSON(), OPT_END() };
static const char *const show_usage[] = { "ID [--json|--mail]", NULL };
static const struct opt_spec show_spec = {
	"klab bisect show", show_usage, "one bisection and its steps", NULL, show_opts,
};

static void print_row(const struct bisection_row *b, void *data)
{
	print_int(PRINT_ANY, "id", "%-4lld ", (long long)b->id);
	print_str(PRINT_ANY, "tree", "%-12s ", b->tree);
	print_str(PRINT_ANY, "good", "%.12s ", b->good);
	print_str(PRINT_ANY, "bad", "%.12s ", b->bad);
	print_str(PRINT_ANY, "workload", "%s", b->workload);
	print_str(PRINT_ANY, "metric", ".%-10s ", b->metric);
	print_str(PRINT_ANY, "state", "%-9s ", b->state);
	print_int(PRINT_ANY, "commits", "%lld commits ", (long long)b->commits);
	print_str(PRINT_ANY, "first_bad", "%s ", b->first_bad ? b->first_bad : "-");
	print_str(PRINT_ANY, "error", "%s\n", b->error ? b->error : "");
}

static int list_row(const struct bisection_row *b, void *data)
{
	print_obj_begin(NULL);
	print_row(b, data);
	print_obj_end();
	return 0;
}

static int step_row(const struct bisect_step_row *s, void *data)
{
	print_obj_begin(NULL);
	print_int(PRINT_ANY, "seq", "  %-3lld ", (long long)s->seq);
	print_str(PRINT_ANY, "role", "%-5s ", s->role);
	print_str(PRINT_ANY, "commit", "%.12s ", s->commit);
	print_int(PRINT_ANY, "boots", "%lld boots ", (long long)s->boots);
	print_num(PRINT_ANY, "value", "%g ", s->value);
	print_str(PRINT_ANY, "verdict", "%-5s ", s->verdict ? s->verdict : "-");
	print_str(PRINT_ANY, "subject", "%s", s->subject);
	print_str(PRINT_ANY, "reason", " %s\n", s->reason);
	print_obj_end();
	return 0;
}

static int bisect_list_cmd(int argc, char **argv, struct klab_ctx *ctx)
{
	struct db *db;
	int st;

	if ((argc = cmd_parse(&list_spec, argc, argv, &st)) < 0)
		return st;
	if (argc)
		return cmd_usage_error(&list_spec, "unexpected argument '%s'", argv[0]);
	if (!(db = ctx_db(ctx)))
		return 1;
	cmd_print_begin();
	print_list_begin(NULL, list_cols);
	bisections_each(db, list_row, NULL);
	print_list_end();
	return cmd_print_end();
}

static int bisect_show_cmd(int argc, char **argv, struct klab_ctx *ctx)
{
	struct db *db;
	long id;
	int st, found = 0;

	if ((argc = cmd_parse(&show_spec, argc, argv, &st)) < 0)
		return st;
	if (argc != 1 || parse_long(argv[0], 1, 1L << 40, &id))
		return cmd_usage_error(&show_spec, "give one bisection id");
	if (!(db = ctx_db(ctx)))
		return 1;
	if (s_mail) {
		struct buf m = BUF_INIT;
		int r = bisect_mail_text(db, id, &m);
		if (r < 0) {
			buf_release(&m);
			return 1;
		}
		fputs(m.buf, r ? stderr : stdout);
		buf_release(&m);
		return r ? 1 : (fflush(stdout) || ferror(stdout));
	}
	cmd_print_begin();
	print_obj_begin(NULL);
	found = bisection_get(db, id, print_row, NULL) == 1;
	if (!found) {
		print_obj_end();
		cmd_print_end();
		return error("no bisection %ld (klab bisect list shows them)", id), 1;
	}
	print_list_begin("steps", NULL);
	bisect_steps_each(db, id, step_row, NULL);
	print_list_end();
	print_obj_end();
	return cmd_print_end();
}

static int r_quiet;
static const struct opt run_opts[] = {
	OPT_BOOL('q', "quiet", &r_quiet, "no progress lines"),
	OPT_END(),
};
static const char *const run_usage[] = { "ID [--quiet]", NULL };
static const struct opt_spec run_spec = {
	"klab bisect run", run_usage, "run (or resume) a bisection in the foreground",
	"Measures the two ends, then each commit the bisection proposes, each as a job of\n"
	"its own (klab job list shows them). A second SIGINT or SIGTERM stops at once; the\n"
	"first one after the current step: `klab bisect run ID` again resumes it.\n",
	run_opts,
};

static int bisect_run_cmd(int argc, char **argv, struct klab_ctx *ctx)
{
	struct job_run_opts o = JOB_RUN_OPTS_INIT;
	struct klab_config *cfg;
	struct db *db;
	long id;
	int st, ret;

	if ((argc = cmd_parse(&run_spec, argc, argv, &st)) < 0)
		return st;
	if (argc != 1 || parse_long(argv[0], 1, 1L << 40, &id))
		return cmd_usage_error(&run_spec, "give one bisection id");
	if (!(cfg = ctx_config(ctx)) || !(db = ctx_db(ctx)))
		return 1;
	o.progress = !r_quiet;
	o.wait_lease = 1;
	o.stop = cmd_stop_on_signals();
	o.report = report_job;
	ret = bisect_run(cfg, db, NULL, id, &o);
	if (ret >= 0 && !r_quiet) {
		char *state, *result, *fb, *subject;

		if (bisection_outcome(db, id, &state, &result, &fb, &subject) == 1) {
			int named = fb && strcmp(result, "no-regression");

			printf("bisection %ld: %s, %s%s%s%s%s\n", id, state, result, named ? ": " : "",
			       named ? fb : "", named ? " " : "", named ? subject : "");
		}
		free(state);
		free(result);
		free(fb);
		free(subject);
	}
	if (fflush(stdout) || ferror(stdout))
		return 1;
	return ret < 0 ? 1 : ret;
}

static const struct opt cancel_opts[] = { OPT_END() };
static const char *const cancel_usage[] = { "ID", NULL };
static const struct opt_spec cancel_spec = {
	"klab bisect cancel", cancel_usage, "cancel a queued or running bisection", NULL, cancel_opts,
};

static int bisect_cancel_cmd(int argc, char **argv, struct klab_ctx *ctx)
{
	struct db *db;
	long id;
	int st;

	if ((argc = cmd_parse(&cancel_spec, argc, argv, &st)) < 0)
		return st;
	if (argc != 1 || parse_long(argv[0], 1, 1L << 40, &id))
		return cmd_usage_error(&cancel_spec, "give one bisection id");
	if (!(db = ctx_db(ctx)))
		return 1;
	if (bisect_cancel(db, id))
		return 1;
	printf("bisection %ld cancelled\n", id);
	return 0;
}

static const struct klab_cmd bisect_start_c = { "start", bisect_start_cmd, &start_spec, NULL, 0 };
static const struct klab_cmd bisect_show_c = { "show", bisect_show_cmd, &show_spec, NULL, 0 };
static const struct klab_cmd bisect_list_c = { "list", bisect_list_cmd, &list_spec, NULL, CMD_LISTING };
static const struct klab_cmd bisect_cancel_c = { "cancel", bisect_cancel_cmd, &cancel_spec, NULL, 0 };
static const struct klab_cmd bisect_run_c = { "run", bisect_run_cmd, &run_spec, NULL, 0 };
static const struct klab_cmd *const bisect_subs[] = {
	&bisect_start_c, &bisect_run_c, &bisect_show_c, &bisect_list_c, &bisect_cancel_c, NULL };
static const struct opt_spec bisect_spec = {
	"klab bisect", NULL, "bisect a performance change to its commit (docs/bisect.md)", NULL, NULL,
};
const struct klab_cmd cmd_bisect = { "bisect", NULL, &bisect_spec, bisect_subs, 0 };
