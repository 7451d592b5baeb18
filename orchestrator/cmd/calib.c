/* cmd/calib.c: `klab calibrate list|learn|run|forget|export|import`: the calibrated noise model of the lab's instruments. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd.h"
#include "compare/noise.h"
#include "conf/conf.h"
#include "job/job.h"
#include "jsonh.h"
#include "log.h"
#include "nightly/after_job.h"
#include "report/report.h"
#include "store/calib.h"
#include "store/db.h"
#include "store/jobs.h"
#include "util.h"

static const char *const calib_cols[] = {
	"machine", "clock", "workload", "wl_key", "metric", "sd_ppm", "df", "run_sd_ppm", "run_df", "runs_per_boot",
	"boots", "aa_boots", "jobs", "created", "updated", "stale", "instrument", NULL,
};

static void date_of(double t, char out[16])
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!isfinite(t) || !gmtime_r(&tt, &tm) || !strftime(out, 16, "%Y-%m-%d", &tm))
		snprintf(out, 16, "?");
}

/* One calibration: text "dut1 icount udp_rr.instructions sd 17.3 ppm (7 df) ... 8 boots (8 A/A), jobs 1, 2026-12-07". */
static void print_calib(const struct calib_row *r, const char *stale, const char *added)
{
	char d[16];

	date_of(r->updated, d);
	print_str(PRINT_ANY, "machine", "%s ", r->machine);
	print_str(PRINT_ANY, "clock", "%s ", r->clock);
	print_str(PRINT_ANY, "workload", "%s", r->workload);
	print_str(PRINT_DATA, "wl_key", "%s", r->wl_key);
	print_str(PRINT_ANY, "metric", ".%s: ", r->metric);
	print_num(PRINT_ANY, "sd_ppm", "boot sd %.3g ppm", 1e6 * sqrt(r->boot_var));
	print_num(PRINT_ANY, "df", " (%.0f df", r->boot_df);
	if (!isnan(r->run_var))
		print_num(PRINT_ANY, "run_sd_ppm", "; run sd %.3g ppm", 1e6 * sqrt(r->run_var));
	else
		print_data_null("run_sd_ppm");
	print_num(PRINT_DATA, "run_df", "%g", r->run_df);
	print_num(PRINT_ANY, "runs_per_boot", ", %.3g runs a boot), ", r->runs_per_boot);
	print_int(PRINT_ANY, "boots", "%lld boots", (long long)r->boots);
	print_int(PRINT_ANY, "aa_boots", " (%lld A/A)", (long long)r->aa_boots);
	print_str(PRINT_ANY, "jobs", ", jobs %s", r->jobs);
	print_time(PRINT_DATA, "created", "%s", r->created);
	print_time(PRINT_DATA, "updated", "%s", r->updated);
	print_text(", %s", d);
	if (added)
		print_str(PRINT_ANY, "added", *added ? "; added job(s) %s" : "; nothing new%s", added);
	if (stale)
		print_str(PRINT_ANY, "stale", "\n    STALE: %s", stale);
	else
		print_data_null("stale");
	print_str(PRINT_ANY, "instrument", "\n    instrument %s\n", r->instrument);
}

/* ---- list ------------------------------------------------------------------ */

static const struct opt list_opts[] = { OPT_JSON(), OPT_CSV(), OPT_END() };
static const char *const list_usage[] = { "[--json|--csv]", NULL };
static const struct opt_spec list_spec = {
	"klab calibrate list", list_usage, "the calibrations, and which are stale",
	"A calibration is stale when the newest boot of its machine is on another\n"
	"instrument (another CPU, vCPU count, clock or lab setting): a job on the new\n"
	"instrument does not use it (docs/statistics.md, \"A calibrated instrument\").\n",
	list_opts,
};

static int calib_list_cmd(int argc, char **argv, struct klab_ctx *ctx)
{
	struct calib_row *rows = NULL;
	struct db *db;
	size_t n = 0;
	int st, ret = 1;

	if ((argc = cmd_parse(&list_spec, argc, argv, &st)) < 0)
		return st;
	if (argc)
		return cmd_usage_error(&list_spec, "unexpected argument '%s'", argv[0]);
	if (!(db = ctx_db(ctx)) || calib_list(db, &rows, &n))
		return 1;
	cmd_print_begin();
	print_list_begin(NULL, calib_cols);
	for (size_t i = 0; i < n; i++) {
		char *why = NULL;

		if (noise_stale(db, &rows[i], &why) < 0)
			goto out;
		print_obj_begin(NULL);
		print_calib(&rows[i], why, NULL);
		print_obj_end();
		free(why);
	}
	print_list_end();
	if (!n)
		print_text("(no calibrations: every comparison uses its own boots; klab calibrate learn JOB)\n");
	ret = 0;
out:
	calib_rows_free(rows, n);
	return cmd_print_end() || ret;
}

/* ---- learn ----------------------------------------------------------------- */

static int l_reset;
static const struct opt learn_opts[] = {
	OPT_BOOL(0, "reset", &l_reset, "start the calibrations these jobs touch again from these jobs alone"),
	OPT_JSON(), OPT_END(),
};
static const char *const learn_usage[] = { "JOB... [--reset] [--json]", NULL };
static const struct opt_spec learn_spec = {
	"klab calibrate learn", learn_usage, "learn the noise of an instrument from finished jobs",
	"Each JOB (id or name) must have ended done. An A/A job (one kernel on both sides,\n"
	"e.g. a tuning job whose two profiles are the same) gives the spread of its boots;\n"
	"an ordinary job gives the spread within each side's kernel. Per instrument (the\n"
	"machine, its clock, CPU and lab settings), workload definition and metric, the\n"
	"variances are pooled with what the calibration already had; a job it lists is\n"
	"not counted again. A later job on that instrument is compared with this noise:\n"
	"one boot a side can decide (docs/statistics.md, \"A calibrated instrument\").\n",
	learn_opts,
};

static int job_id_of(struct db *db, const char *s, int64_t *id)
{
	const char *p = s;

	while (*p && isdigit((unsigned char)*p))
		p++;
	if (*s && !*p) {
		*id = strtoll(s, NULL, 10);
		return 0;
	}
	if (jobs_find_name(db, s, id) != 1)
		return error("no job '%s' (give a job id or name; klab jobs lists them)", s);
	return 0;
}

static int calib_learn_cmd(int argc, char **argv, struct klab_ctx *ctx)
{
	struct noise_learnt *l = NULL;
	int64_t *jobs;
	struct db *db;
	size_t n = 0;
	int st, ret = 1;

	if ((argc = cmd_parse(&learn_spec, argc, argv, &st)) < 0)
		return st;
	if (argc < 1)
		return cmd_usage_error(&learn_spec, "give the jobs to learn from");
	if (!(db = ctx_db(ctx)))
		return 1;
	jobs = xcalloc((size_t)argc, sizeof(*jobs));
	for (int i = 0; i < argc; i++)
		if (job_id_of(db, argv[i], &jobs[i]))
			goto out;
	if (noise_learn(db, jobs, (size_t)argc, l_reset, &l, &n))
		goto out;
	cmd_print_begin();
	print_list_begin(NULL, NULL);
	for (size_t i = 0; i < n; i++) {
		print_obj_begin(NULL);
		print_bool(PRINT_JSON, "new", "%d", l[i].is_new);
		print_calib(&l[i].row, NULL, l[i].added);
		print_obj_end();
	}
	print_list_end();
	if (!n)
		print_text("nothing learnt: no boot of these jobs had another boot of its kernel on its instrument\n");
	ret = cmd_print_end();
out:
	noise_learnt_free(l, n);
	free(jobs);
	return ret;
}

/* ---- run ------------------------------------------------------------------- */

static const char *r_ref;
static long r_boots, r_runs;
static int r_wait, r_quiet;
static const struct opt run_opts[] = {
	OPT_STRING(0, "ref", &r_ref, "REF", "both sides on this commit of the job's tree (a kernel A/A)"),
	OPT_INT(0, "boots", &r_boots, "N", 2, 1000, "boots per side instead of the job's"),
	OPT_INT(0, "runs", &r_runs, "N", 1, 1000, "measured runs per boot instead of the job's"),
	OPT_BOOL(0, "wait", &r_wait, "wait for busy machines (default: the job stays queued, exit 2)"),
	OPT_BOOL('q', "quiet", &r_quiet, "no progress lines"),
	OPT_JSON(), OPT_END(),
};
static const char *const run_usage[] = { "JOB_NAME [--ref REF] [--boots N] [--runs N] [--wait] [--quiet]", NULL };
static const struct opt_spec run_spec = {
	"klab calibrate run", run_usage, "run an A/A job and learn the noise of its instrument from it",
	"Submits [job \"JOB_NAME\"] as an A/A job (both sides the same: with --ref REF both\n"
	"sides run that commit of the job's tree; without it the job must be A/A itself, a\n"
	"tuning job whose two profiles are the same or a refs job whose base is its test),\n"
	"runs it in the foreground as klab run does, and when it ends done learns from it as\n"
	"klab calibrate learn does.\n",
	run_opts,
};

/* Why [job] CJ is not an A/A job without --ref (NULL: it is). */
static const char *not_aa(const struct conf_job *cj)
{
	const char *pa = cj->profile_a, *pb = cj->profile_b;

	if (cj->series)
		return "it tests a series";
	if (cj->test)
		return cj->base && !strcmp(cj->base, cj->test) ? NULL : "its test ref is not its base";
	if (!pa && !pb)
		return "it is a nightly (one kernel against the previous night's)";
	if (!pa || !pb || strcmp(pa, pb))
		return "its two tuning profiles differ";
	return NULL;
}

static int calib_run_cmd(int argc, char **argv, struct klab_ctx *ctx)
{
	struct job_submit_opts so = JOB_SUBMIT_OPTS_INIT;
	struct job_run_opts o = JOB_RUN_OPTS_INIT;
	const struct conf_job *cj;
	struct klab_config *cfg;
	struct noise_learnt *l = NULL;
	struct db *db;
	const char *why;
	char *state = NULL;
	size_t n = 0;
	int64_t id;
	int st, ret;

	if ((argc = cmd_parse(&run_spec, argc, argv, &st)) < 0)
		return st;
	if (argc != 1)
		return cmd_usage_error(&run_spec, "give one job name");
	if (!(cfg = ctx_config(ctx)) || !(db = ctx_db(ctx)))
		return 1;
	if (!(cj = conf_job(cfg, argv[0])))
		return error("no job '%s' in the config (jobs are [job \"NAME\"] sections)", argv[0]), 1;
	if (!r_ref && (why = not_aa(cj)))
		return error("job '%s' is not an A/A job: %s (give --ref REF to run both sides on one commit, "
			     "or name a job whose two sides are the same)", argv[0], why), 1;
	so.job = argv[0];
	if (r_ref)
		so.base = so.test = r_ref;
	so.boots = (int)r_boots;
	so.runs = (int)r_runs;
	id = job_submit(db, cfg, &so, NULL);
	if (id < 0)
		return 1;
	if (!r_quiet)
		printf("submitted job %lld (%s) as an A/A job\n", (long long)id, argv[0]);
	o.progress = !r_quiet;
	o.wait_lease = r_wait;
	o.stop = cmd_stop_on_signals();
	o.report = report_job;
	ret = after_job_run(cfg, db, NULL, id, &o);
	if (ret != 0 || jobs_get_str(db, id, JOB_STATE, &state) != 1 || strcmp(state, "done")) {
		error("job %lld did not end done (%s): nothing learnt (klab job show %lld; klab calibrate learn %lld "
		      "once it is done)", (long long)id, state ? state : "?", (long long)id, (long long)id);
		free(state);
		return ret == 2 ? 2 : 1;
	}
	free(state);
	if (noise_learn(db, &id, 1, 0, &l, &n))
		return 1;
	cmd_print_begin();
	print_list_begin(NULL, NULL);
	for (size_t i = 0; i < n; i++) {
		print_obj_begin(NULL);
		print_int(PRINT_JSON, "job", "%lld", (long long)id);
		print_calib(&l[i].row, NULL, l[i].added);
		print_obj_end();
	}
	print_list_end();
	if (!n)
		print_text("nothing learnt: job %lld has no side of 2 boots with positive values\n", (long long)id);
	noise_learnt_free(l, n);
	return cmd_print_end();
}

/* ---- forget ---------------------------------------------------------------- */

static const char *f_machine, *f_workload;
static int f_all;
static const struct opt forget_opts[] = {
	OPT_STRING(0, "machine", &f_machine, "M", "the calibrations of machine M"),
	OPT_STRING(0, "workload", &f_workload, "W", "the calibrations of workload W"),
	OPT_BOOL(0, "all", &f_all, "every calibration"),
	OPT_JSON(), OPT_END(),
};
static const char *const forget_usage[] = { "--machine M [--workload W]", "--workload W", "--all", NULL };
static const struct opt_spec forget_spec = {
	"klab calibrate forget", forget_usage, "delete calibrations (their comparisons use their own boots again)",
	NULL, forget_opts,
};

static int calib_forget_cmd(int argc, char **argv, struct klab_ctx *ctx)
{
	struct db *db;
	int64_t n = 0;
	int st;

	if ((argc = cmd_parse(&forget_spec, argc, argv, &st)) < 0)
		return st;
	if (argc)
		return cmd_usage_error(&forget_spec, "unexpected argument '%s'", argv[0]);
	if (!f_all == !(f_machine || f_workload))
		return cmd_usage_error(&forget_spec, "give --machine and/or --workload, or --all");
	if (!(db = ctx_db(ctx)) || calib_delete(db, f_machine, f_workload, &n))
		return 1;
	cmd_print_begin();
	print_obj_begin(NULL);
	print_int(PRINT_ANY, "deleted", "%lld calibration(s) deleted\n", (long long)n);
	print_obj_end();
	return cmd_print_end();
}

/* ---- export, import ----------------------------------------------------------- */

static const struct opt export_opts[] = { OPT_JSON(), OPT_END() };
static const char *const export_usage[] = { "FILE", NULL };
static const struct opt_spec export_spec = {
	"klab calibrate export", export_usage, "write every calibration to a file (for another database)",
	"FILE gets the calibrations as JSON (written atomically). `klab calibrate import FILE`\n"
	"takes them into another database: a calibration is of an instrument, not of a\n"
	"database, and a job there uses it only when its own boots have the same\n"
	"instrument key (docs/statistics.md, \"A calibrated instrument\").\n",
	export_opts,
};

static int calib_export_cmd(int argc, char **argv, struct klab_ctx *ctx)
{
	struct calib_row *rows = NULL;
	struct json_object *doc;
	struct buf b = BUF_INIT;
	struct db *db;
	size_t n = 0;
	int st, ret = 1;

	if ((argc = cmd_parse(&export_spec, argc, argv, &st)) < 0)
		return st;
	if (argc != 1)
		return cmd_usage_error(&export_spec, "give the file to write");
	if (!(db = ctx_db(ctx)) || calib_list(db, &rows, &n))
		return 1;
	doc = calib_rows_json(rows, n);
	json_to_buf(&b, doc, 1);
	buf_addch(&b, '\n');
	json_object_put(doc);
	if (write_file_atomic(argv[0], b.buf, b.len, 0644))
		goto out;
	cmd_print_begin();
	print_obj_begin(NULL);
	print_int(PRINT_ANY, "exported", "%lld calibration(s) written to ", (long long)n);
	print_str(PRINT_ANY, "file", "%s\n", argv[0]);
	print_obj_end();
	ret = cmd_print_end();
out:
	buf_release(&b);
	calib_rows_free(rows, n);
	return ret;
}

static int i_replace;
static const struct opt import_opts[] = {
	OPT_BOOL(0, "replace", &i_replace, "replace a calibration of the same key (default: keep the database's)"),
	OPT_JSON(), OPT_END(),
};
static const char *const import_usage[] = { "FILE [--replace]", NULL };
static const struct opt_spec import_spec = {
	"klab calibrate import", import_usage, "take the calibrations of a file (klab calibrate export)",
	"Each calibration of FILE is stored unless the database has one of the same key\n"
	"(instrument, workload definition, metric): that one is kept, or replaced with\n"
	"--replace. An imported calibration lists no jobs (their ids were another\n"
	"database's); later learning adds this database's. A stale one (another\n"
	"instrument than the lab's now) is stored too and used by no job.\n",
	import_opts,
};

static int calib_import_cmd(int argc, char **argv, struct klab_ctx *ctx)
{
	struct calib_row *rows = NULL;
	struct json_object *doc;
	struct db *db;
	size_t n = 0, added = 0, kept = 0;
	int st, ret = 1;

	if ((argc = cmd_parse(&import_spec, argc, argv, &st)) < 0)
		return st;
	if (argc != 1)
		return cmd_usage_error(&import_spec, "give the file to read");
	if (!(doc = json_parse_file(argv[0])))
		return 1;
	if (calib_rows_from_json(doc, argv[0], &rows, &n) || !(db = ctx_db(ctx)))
		goto out;
	if (db_begin(db))
		goto out;
	for (size_t i = 0; i < n; i++) {
		struct calib_row old;
		int have = calib_get(db, rows[i].instrument, rows[i].workload, rows[i].wl_key, rows[i].metric, &old);

		if (have < 0)
			goto rollback;
		if (have)
			calib_row_release(&old);
		if (have && !i_replace) {
			kept++;
			continue;
		}
		if (calib_put(db, &rows[i]))
			goto rollback;
		added++;
	}
	if (db_commit(db))
		goto out;
	cmd_print_begin();
	print_obj_begin(NULL);
	print_int(PRINT_ANY, "imported", "%lld calibration(s) imported", (long long)added);
	print_int(PRINT_ANY, "kept", ", %lld kept (the database had their key)", (long long)kept);
	print_str(PRINT_ANY, "file", " from %s\n", argv[0]);
	print_obj_end();
	ret = cmd_print_end();
	goto out;
rollback:
	db_rollback(db);
out:
	calib_rows_free(rows, n);
	json_object_put(doc);
	return ret;
}

static const struct klab_cmd calib_list_c = { "list", calib_list_cmd, &list_spec, NULL, CMD_LISTING };
static const struct klab_cmd calib_learn_c = { "learn", calib_learn_cmd, &learn_spec, NULL, 0 };
static const struct klab_cmd calib_forget_c = { "forget", calib_forget_cmd, &forget_spec, NULL, 0 };
static const struct klab_cmd calib_run_c = { "run", calib_run_cmd, &run_spec, NULL, 0 };
static const struct klab_cmd calib_export_c = { "export", calib_export_cmd, &export_spec, NULL, 0 };
static const struct klab_cmd calib_import_c = { "import", calib_import_cmd, &import_spec, NULL, 0 };
static const struct klab_cmd *const calib_subs[] = { &calib_list_c, &calib_learn_c, &calib_run_c, &calib_forget_c,
						     &calib_export_c, &calib_import_c, NULL };
static const struct opt_spec calib_spec = {
	"klab calibrate", NULL, "the noise of each instrument, learnt from A/A jobs (docs/statistics.md)", NULL, NULL,
};
const struct klab_cmd cmd_calibrate = { "calibrate", NULL, &calib_spec, calib_subs, CMD_DEFAULT_SUB };
