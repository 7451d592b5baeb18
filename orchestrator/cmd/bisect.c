/* cmd/bisect.c: `klab bisect start|show|list|cancel`: bisections of a performance change between two commits. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisect/bisect_db.h"
#include "cmd.h"
#include "job/job.h"
#include "buf.h"
#include "store/db.h"
#include "log.h"
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
	id = bisect_start(db, cfg, &o);
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

static void print_row(struct db_stmt *q)
{
	print_int(PRINT_ANY, "id", "%-4lld ", (long long)db_col_int(q, 0));
	print_str(PRINT_ANY, "tree", "%-12s ", db_col_text(q, 1));
	print_str(PRINT_ANY, "good", "%.12s ", db_col_text(q, 2));
	print_str(PRINT_ANY, "bad", "%.12s ", db_col_text(q, 3));
	print_str(PRINT_ANY, "workload", "%s", db_col_text(q, 4));
	print_str(PRINT_ANY, "metric", ".%-10s ", db_col_text(q, 5));
	print_str(PRINT_ANY, "state", "%-9s ", db_col_text(q, 6));
	print_int(PRINT_ANY, "commits", "%lld commits ", (long long)db_col_int(q, 7));
	print_str(PRINT_ANY, "first_bad", "%s ", db_col_text(q, 8) ? db_col_text(q, 8) : "-");
	print_str(PRINT_ANY, "error", "%s\n", db_col_text(q, 9) ? db_col_text(q, 9) : "");
}

#define ROW_SQL "SELECT id, tree, good, bad, workload, metric, state, " \
	"json_array_length(json_extract(spec, '$.commits')), first_bad, error FROM bisections "

static int bisect_list_cmd(int argc, char **argv, struct klab_ctx *ctx)
{
	struct db *db;
	struct db_stmt *q;
	int st;

	if ((argc = cmd_parse(&list_spec, argc, argv, &st)) < 0)
		return st;
	if (argc)
		return cmd_usage_error(&list_spec, "unexpected argument '%s'", argv[0]);
	if (!(db = ctx_db(ctx)))
		return 1;
	cmd_print_begin();
	print_list_begin(NULL, list_cols);
	q = db_prepare(db, ROW_SQL "ORDER BY id DESC", "");
	while (q && db_step(q) == DB_ROW) {
		print_obj_begin(NULL);
		print_row(q);
		print_obj_end();
	}
	db_finalize(q);
	print_list_end();
	return cmd_print_end();
}

static int bisect_show_cmd(int argc, char **argv, struct klab_ctx *ctx)
{
	struct db *db;
	struct db_stmt *q;
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
	q = db_prepare(db, ROW_SQL "WHERE id = ?", "i", (int64_t)id);
	if (q && db_step(q) == DB_ROW) {
		found = 1;
		print_row(q);
	}
	db_finalize(q);
	if (!found) {
		print_obj_end();
		cmd_print_end();
		return error("no bisection %ld (klab bisect list shows them)", id), 1;
	}
	print_list_begin("steps", NULL);
	q = db_prepare(db, "SELECT seq, role, commit_id, coalesce(subject, ''), boots, value, verdict, "
		       "coalesce(reason, '') FROM bisect_steps WHERE bisection_id = ? ORDER BY seq", "i", (int64_t)id);
	while (q && db_step(q) == DB_ROW) {
		print_obj_begin(NULL);
		print_int(PRINT_ANY, "seq", "  %-3lld ", (long long)db_col_int(q, 0));
		print_str(PRINT_ANY, "role", "%-5s ", db_col_text(q, 1));
		print_str(PRINT_ANY, "commit", "%.12s ", db_col_text(q, 2));
		print_int(PRINT_ANY, "boots", "%lld boots ", (long long)db_col_int(q, 4));
		print_num(PRINT_ANY, "value", "%g ", db_col_null(q, 5) ? NAN : db_col_double(q, 5));
		print_str(PRINT_ANY, "verdict", "%-5s ", db_col_text(q, 6) ? db_col_text(q, 6) : "-");
		print_str(PRINT_ANY, "subject", "%s", db_col_text(q, 3));
		print_str(PRINT_ANY, "reason", " %s\n", db_col_text(q, 7));
		print_obj_end();
	}
	db_finalize(q);
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
	ret = bisect_run(cfg, db, NULL, id, &o);
	if (ret >= 0 && !r_quiet) {
		struct db_stmt *q = db_prepare(db, "SELECT state, COALESCE(result, '-'), first_bad, "
					       "COALESCE(first_bad_subject, '') FROM bisections WHERE id = ?", "i", (int64_t)id);
		if (q && db_step(q) == DB_ROW) {
			const char *result = db_col_text(q, 1), *fb = db_col_text(q, 2);
			int named = fb && strcmp(result, "no-regression");

			printf("bisection %ld: %s, %s%s%s%s%s\n", id, db_col_text(q, 0), result, named ? ": " : "",
			       named ? fb : "", named ? " " : "", named ? db_col_text(q, 3) : "");
		}
		db_finalize(q);
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
