/* cmd/job.c: `klab submit`, `klab run`, `klab jobs`, `klab job show|log`, `klab cancel`. */
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "compare/compare.h"
#include "nightly/after_job.h"
#include "store/bisections.h"
#include "store/db.h"
#include "store/jobs.h"
#include "store/runs.h"
#include "job/job.h"
#include "jsonh.h"
#include "log.h"
#include "progress.h"
#include "report/report.h"
#include "util.h"

/* A text value, or null (JSON and CSV). */
static void data_str(const char *key, const char *s)
{
	if (s)
		print_data_str(key, s);
	else
		print_data_null(key);
}

/* An integer value, or null when IS_NULL. */
static void data_int(const char *key, int64_t v, int is_null)
{
	if (is_null)
		print_data_null(key);
	else
		print_data_int(key, v);
}

/* A time read NaN when NULL, as 0 (what the text reads of a NULL time). */
static double or0(double t)
{
	return isnan(t) ? 0 : t;
}

/* "35s", "12m", "3h", "2d" */
static void fmt_age(char *b, size_t n, double secs)
{
	if (secs < 0)
		secs = 0;
	if (secs < 120)
		snprintf(b, n, "%.0fs", secs);
	else if (secs < 7200)
		snprintf(b, n, "%.0fm", secs / 60);
	else if (secs < 172800)
		snprintf(b, n, "%.0fh", secs / 3600);
	else
		snprintf(b, n, "%.0fd", secs / 86400);
}

/* Local time for the text, "-" for none. */
static void fmt_time(char *b, size_t n, double t)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!(t > 0)) {
		snprintf(b, n, "-");
		return;
	}
	localtime_r(&tt, &tm);
	strftime(b, n, "%Y-%m-%d %H:%M:%S", &tm);
}

/* Steps done (or skipped) and planned for a job. */
static void job_progress(struct db *db, int64_t id, const char *spec_text, int64_t seed, int64_t *done, int64_t *total)
{
	struct job_spec spec;
	struct strvec plan = STRVEC_INIT;

	*done = 0;
	*total = 0;
	steps_count_ended(db, id, done);
	if (!job_spec_parse(spec_text, &spec) && !job_plan(&spec, seed, &plan))
		*total = (int64_t)plan.n;
	strvec_clear(&plan);
	job_spec_release(&spec);
}

/* ---- submit ------------------------------------------------------------ */

static const char *s_job, *s_series, *s_mbox, *s_base, *s_test;
static long s_seed = -1, s_boots, s_runs, s_pairs;

static const struct opt submit_opts[] = {
	OPT_STRING(0, "job", &s_job, "NAME", "the [job \"NAME\"] of the config (or give NAME as the argument)"),
	OPT_STRING(0, "series", &s_series, "SOURCE", "test this series instead of the job's: lore:MSGID, patchwork:ID, FILE"),
	OPT_STRING(0, "mbox", &s_mbox, "FILE", "test the series in this mbox file"),
	OPT_STRING(0, "base", &s_base, "REF", "the baseline ref instead of the job's"),
	OPT_STRING(0, "test", &s_test, "REF", "compare the baseline with this ref instead of a series"),
	OPT_INT(0, "seed", &s_seed, "N", 0, 0x7fffffffL, "the seed of the boot order (default: the job's, else random)"),
	OPT_INT(0, "boots", &s_boots, "N", 1, 1000, "boots per side instead of the job's"),
	OPT_INT(0, "pairs", &s_pairs, "N", 1, 64, "boots at once on pairs of the job's pool instead of the job's pairs"),
	OPT_INT(0, "runs", &s_runs, "N", 1, 1000, "measured runs per boot instead of the job's"),
	OPT_JSON(),
	OPT_END(),
};
static const char *const submit_usage[] = {
	"--job NAME [--series SOURCE | --mbox FILE] [--base REF --test REF] [--seed N] [--boots N] [--pairs N] [--runs N]",
	NULL,
};
static const struct opt_spec submit_spec = {
	"klab submit", submit_usage, "queue a job for klabd",
	"The job's spec is fixed at submission: a config changed later does not change it.\n", submit_opts,
};

static int submit(int argc, char **argv, struct klab_ctx *ctx)
{
	struct job_submit_opts o = JOB_SUBMIT_OPTS_INIT;
	struct klab_config *cfg;
	char *mbox = NULL;
	struct db *db;
	int64_t id;
	int st;

	if ((argc = cmd_parse(&submit_spec, argc, argv, &st)) < 0)
		return st;
	o.job = s_job;
	if (!o.job && argc) {
		o.job = argv[0];
		argv++;
		argc--;
	}
	if (argc)
		return cmd_usage_error(&submit_spec, "unexpected argument '%s'", argv[0]);
	if (!o.job)
		return cmd_usage_error(&submit_spec, "--job NAME is required");
	if (s_series && s_mbox)
		return cmd_usage_error(&submit_spec, "give --series or --mbox, not both");
	if (s_mbox)
		mbox = xasprintf("mbox:%s", s_mbox);
	o.series = mbox ? mbox : s_series;
	o.base = s_base;
	o.test = s_test;
	o.seed = s_seed;
	o.boots = (int)s_boots;
	o.pairs = (int)s_pairs;
	o.runs = (int)s_runs;
	if (!(cfg = ctx_config(ctx)) || !(db = ctx_db(ctx)) || (id = job_submit(db, cfg, &o, NULL)) < 0) {
		free(mbox);
		return 1;
	}
	free(mbox);
	cmd_print_begin();
	print_int(PRINT_ANY, "id", "submitted job %lld", id);
	print_str(PRINT_ANY, "name", " (%s); klabd runs it, or: ", o.job);
	print_data_str("state", "queued");
	print_text("klab run %lld\n", (long long)id);
	return cmd_print_end();
}

/* ---- jobs --------------------------------------------------------------- */

static const char *j_state;
static long j_limit = 50;

static const struct opt jobs_opts[] = {
	OPT_STRING(0, "state", &j_state, "STATE", "only jobs in STATE (queued, running, done, failed, cancelled)"),
	OPT_INT(0, "limit", &j_limit, "N", 1, 100000, "the newest N jobs (default 50)"),
	OPT_JSON(),
	OPT_CSV(),
	OPT_END(),
};
static const char *const jobs_usage[] = { "[--state STATE] [--limit N] [--json|--csv]", NULL };
static const struct opt_spec jobs_spec = {
	"klab jobs", jobs_usage, "list jobs with state, progress and age", NULL, jobs_opts,
};
static const char *const jobs_cols[] = {
	"id", "name", "state", "steps_done", "steps_total", "created", "started", "finished", "age_s", "duration_s",
	"dut", "peer", "schedule", "error", "pid", NULL,
};

static int jobs(int argc, char **argv, struct klab_ctx *ctx)
{
	struct job_row *v;
	size_t nv;
	struct db *db;
	int s;

	if ((argc = cmd_parse(&jobs_spec, argc, argv, &s)) < 0)
		return s;
	if (argc)
		return cmd_usage_error(&jobs_spec, "unexpected argument '%s'", argv[0]);
	if (!(db = ctx_db(ctx)))
		return 1;
	if (jobs_list(db, j_state, (int64_t)j_limit, &v, &nv))
		return 1;
	cmd_print_begin();
	print_text("%-5s %-20s %-10s %-9s %-6s %-17s %s\n", "ID", "NAME", "STATE", "PROGRESS", "AGE", "MACHINES",
		   "ERROR");
	print_list_begin(NULL, jobs_cols);
	for (size_t i = 0; i < nv; i++) {
		const struct job_row *j = &v[i];
		int64_t id = j->id, done, total;
		double now = now_wall(), age = now - j->created;
		double end = isnan(j->finished) ? now : j->finished;
		const char *dut = j->dut, *err = j->error;
		char prog[48], agebuf[16], mach[64];

		job_progress(db, id, j->spec ? j->spec : "", j->order_seed, &done, &total);
		print_obj_begin(NULL);
		print_int(PRINT_ANY, "id", "%-5lld ", id);
		print_str(PRINT_ANY, "name", "%-20s ", j->name);
		print_str(PRINT_ANY, "state", "%-10s ", j->state);
		print_data_int("steps_done", done);
		print_data_int("steps_total", total);
		snprintf(prog, sizeof(prog), "%lld/%lld", (long long)done, (long long)total);
		print_text("%-9s ", prog);
		print_data_time("created", j->created);
		print_data_time("started", j->started);
		print_data_time("finished", j->finished);
		print_data_num("age_s", age);
		fmt_age(agebuf, sizeof(agebuf), age);
		print_text("%-6s ", agebuf);
		if (isnan(j->started))
			print_data_null("duration_s");
		else
			print_data_num("duration_s", end - j->started);
		data_str("dut", j->dut);
		data_str("peer", j->peer);
		snprintf(mach, sizeof(mach), "%s%s%s", dut ? dut : "-", dut ? "+" : "", dut && j->peer ? j->peer : "");
		print_text("%-17s ", mach);
		data_str("schedule", j->schedule);
		print_str(PRINT_DATA, "error", "%s", err);
		print_text("%.100s\n", err ? err : "");
		data_int("pid", j->pid, !j->pid);
		print_obj_end();
	}
	job_rows_free(v, nv);
	print_list_end();
	return cmd_print_end();
}

/* ---- job show | log ----------------------------------------------------- */

static int f_follow;
static long f_timeout_ms = 24L * 3600 * 1000;

static const struct opt job_opts[] = {
	OPT_BOOL('f', "follow", &f_follow, "follow the job as klabd (or klab run) runs it: each step as it starts "
		 "and ends, with the job's ETA, until the job is done, failed or cancelled"),
	OPT_DURATION(0, "timeout", &f_timeout_ms, "DURATION", 1, 30L * 24 * 3600 * 1000,
		     "with --follow: give up after this long (default 24h)"),
	OPT_JSON(),
	OPT_END(),
};
static const struct opt log_opts[] = { OPT_JSON(), OPT_CSV(), OPT_END() };
static const char *const id_usage[] = { "ID|NAME [--json]", "ID|NAME --follow [--timeout DURATION]", NULL };
static const char *const log_usage[] = { "ID|NAME [--json|--csv]", NULL };
static const struct opt_spec show_spec = {
	"klab job show", id_usage, "a job: its state, sides, every step with its error, the runs stored",
	"NAME is the newest job of that name. With --follow the output is text: a line per step as it\n"
	"starts (with the job's ETA from the durations of earlier steps of the same kind) and as it ends,\n"
	"and the running step's progress line; the exit status is 0 when the job ended done, 1 when it\n"
	"failed, was cancelled or was still running at the timeout.\n", job_opts,
};
static const struct opt_spec log_spec = {
	"klab job log", log_usage, "a job's history from its steps: when each started and ended", NULL, log_opts,
};

/*
 * The job named by the one argument, after parsing SPEC's options: 0 with
 * *db and *id, or -1 with *status the exit status (--help, a usage error,
 * no such job).
 */
static int job_arg(const struct opt_spec *spec, int argc, char **argv, struct klab_ctx *ctx, struct db **db,
		   int64_t *id, int *status)
{
	if ((argc = cmd_parse(spec, argc, argv, status)) < 0)
		return -1;
	if (argc != 1) {
		*status = argc ? cmd_usage_error(spec, "unexpected argument '%s'", argv[1])
			       : cmd_usage_error(spec, "needs a job id or name");
		return -1;
	}
	*status = 1;
	*db = ctx_db(ctx);
	if (!*db || job_find(*db, argv[0], id))
		return -1;
	return 0;
}

/* A step of a followed job as last seen. */
struct seen_step {
	char *key, *state;
	int64_t attempts;
};

static void clock_time(char *b, size_t n)
{
	time_t t = time(NULL);
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(b, n, "%H:%M:%S", &tm);
}

/*
 * Follow job ID until it ends or TIMEOUT_MS passes: a line for each step
 * that started or ended since the last look (every 500 ms), the running
 * step's clock line. 0 when it ended done, 1 otherwise.
 */
static int job_follow(struct db *db, int64_t id, long timeout_ms)
{
	struct seen_step *seen = NULL;
	size_t n_seen = 0;
	struct strvec plan = STRVEC_INIT;
	struct progress_clock clock;
	char *shown_key = NULL, *spec_text = NULL, *state = NULL, *last_state = NULL, *err = NULL;
	int64_t seed = 0, deadline = now_ms() + timeout_ms, attempts_shown = 0;
	int clock_on = 0, ret = 1;
	double *expected = NULL;

	if (jobs_get_str(db, id, JOB_SPEC, &spec_text) != 1)
		return error("no job %lld", (long long)id), 1;
	jobs_get_int(db, id, JOB_ORDER_SEED, &seed);
	{
		struct job_spec spec;

		if (job_spec_parse(spec_text, &spec) || job_plan(&spec, seed, &plan)) {
			job_spec_release(&spec);
			free(spec_text);
			return 1;
		}
		job_spec_release(&spec);
	}
	expected = xcalloc(plan.n ? plan.n : 1, sizeof(*expected));
	for (;;) {
		struct step_info *sv;
		size_t nsv;
		const char *running = NULL;
		int64_t running_attempts = 0;
		char t[16];
		int ended;

		free(state);
		state = NULL;
		/* the state first: the steps read after it are at least as new */
		if (jobs_get_str(db, id, JOB_STATE, &state) != 1)
			break;
		ended = !strcmp(state, "done") || !strcmp(state, "failed") || !strcmp(state, "cancelled");
		clock_time(t, sizeof(t));
		if (!last_state || strcmp(last_state, state)) {
			if (clock_on) {
				progress_clock_stop(&clock);
				clock_on = 0;
			}
			if (!ended)
				printf("[%s] job %lld is %s\n", t, (long long)id, state);
			free(last_state);
			last_state = xstrdup(state);
		}
		if (steps_list(db, id, 1, &sv, &nsv))
			break;
		for (size_t si = 0; si < nsv; si++) {
			const struct step_info *sp = &sv[si];
			const char *key = sp->key, *sst = sp->state;
			int64_t att = sp->attempts;
			long pos = strvec_find(&plan, key);
			struct seen_step *k = NULL;

			for (size_t i = 0; i < n_seen; i++)
				if (!strcmp(seen[i].key, key))
					k = &seen[i];
			if (k && !strcmp(k->state, sst) && k->attempts == att)
				continue;
			if (!k) {
				seen = xrealloc(seen, (n_seen + 1) * sizeof(*seen));
				k = &seen[n_seen++];
				k->key = xstrdup(key);
				k->state = NULL;
			}
			free(k->state);
			k->state = xstrdup(sst);
			k->attempts = att;
			if (clock_on) {
				progress_clock_stop(&clock);
				clock_on = 0;
			}
			if (!strcmp(sst, "running")) {
				double left = -1;
				char eta[32] = "";

				if (pos >= 0 && job_expected(db, id, &plan, expected) == 0)
					left = progress_eta_items(expected, plan.n, (size_t)pos,
								  now_wall() - sp->started);
				if (left >= 0)
					progress_fmt_duration(eta, sizeof(eta), left);
				printf("[%s] %ld/%zu %s%s%s%s%s\n", t, pos + 1, plan.n, key, att > 1 ? " (resumed)" : "",
				       *eta ? " (job ETA " : "", eta, *eta ? ")" : "");
			} else if (!strcmp(sst, "done")) {
				printf("[%s] %ld/%zu %s done in %.1f s\n", t, pos + 1, plan.n, key,
				       or0(sp->finished) - sp->started);
			} else if (!strcmp(sst, "skipped")) {
				printf("[%s] %ld/%zu %s skipped: %s\n", t, pos + 1, plan.n, key, sp->error ? sp->error : "");
			} else {
				printf("[%s] %ld/%zu %s FAILED after %.1f s: %s\n", t, pos + 1, plan.n, key,
				       or0(sp->finished) - sp->started, sp->error ? sp->error : "");
			}
			fflush(stdout);
		}
		step_infos_free(sv, nsv);
		if (ended)
			break;
		/* the running step (the last one seen running) gets the clock line */
		for (size_t i = n_seen; i-- > 0;)
			if (!strcmp(seen[i].state, "running")) {
				running = seen[i].key;
				running_attempts = seen[i].attempts;
				break;
			}
		if (running && (!shown_key || strcmp(shown_key, running) || attempts_shown != running_attempts) &&
		    !clock_on) {
			long pos = strvec_find(&plan, running);
			char label[160];

			snprintf(label, sizeof(label), "%ld/%zu %s", pos + 1, plan.n, running);
			progress_clock_start(&clock, label,
					     pos >= 0 && job_expected(db, id, &plan, expected) == 0 ? expected[pos] : 0,
					     stdout);
			clock_on = 1;
			free(shown_key);
			shown_key = xstrdup(running);
			attempts_shown = running_attempts;
		}
		if (now_ms() >= deadline) {
			if (clock_on)
				progress_clock_stop(&clock);
			clock_on = 0;
			error("job %lld is still %s after --timeout %.0f s", (long long)id, state, timeout_ms / 1000.0);
			goto out;
		}
		usleep(500 * 1000);
	}
	if (clock_on)
		progress_clock_stop(&clock);
	clock_on = 0;
	if (state) {
		double took = 0;
		char t[16];

		if (jobs_took(db, id, &took) != 1)
			took = 0;
		jobs_get_str(db, id, JOB_ERROR, &err);
		clock_time(t, sizeof(t));
		if (!strcmp(state, "done")) {
			printf("[%s] job %lld done in %.1f s\n", t, (long long)id, took);
			ret = 0;
		} else {
			printf("[%s] job %lld %s%s%s\n", t, (long long)id, !strcmp(state, "failed") ? "FAILED" : state,
			       err ? ": " : "", err ? err : "");
		}
	}
out:
	if (fflush(stdout) || ferror(stdout))
		ret = 1;
	for (size_t i = 0; i < n_seen; i++) {
		free(seen[i].key);
		free(seen[i].state);
	}
	free(seen);
	free(expected);
	free(shown_key);
	free(spec_text);
	free(state);
	free(last_state);
	free(err);
	strvec_clear(&plan);
	return ret;
}

/* A nightly's change of `klab job ID` and how its confirmation stands (confirm.h). */
static int confirmation_print(const struct confirmation_row *c, void *data)
{
	struct db *db = data;
	struct buf t = BUF_INIT;

	print_obj_begin(NULL);
	print_data_str("workload", c->workload);
	print_data_str("metric", c->metric);
	if (!isnan(c->change_pct))
		print_data_num("change_pct", c->change_pct);
	else
		print_data_null("change_pct");
	print_data_str("state", c->state);
	if (c->confirm_job)
		print_data_int("confirm_job", c->confirm_job);
	else
		print_data_null("confirm_job");
	if (c->bisection_id)
		print_data_int("bisection_id", c->bisection_id);
	else
		print_data_null("bisection_id");
	print_obj_end();
	confirm_text(db, c->job_id, c->workload ? c->workload : "", c->metric ? c->metric : "", &t);
	print_text("  %s.%s %+.2f%%: %s\n", c->workload ? c->workload : "", c->metric ? c->metric : "",
		   isnan(c->change_pct) ? 0 : c->change_pct, t.buf);
	buf_release(&t);
	return 0;
}

/* A run of `klab job ID`: its row in JSON and CSV, its line in the text. */
static int run_print(const struct job_run *r, void *data)
{
	char hl[40] = "-", seq[24], boot[24] = "-";

	print_obj_begin(NULL);
	print_data_int("id", r->id);
	print_data_str("uid", r->uid);
	print_data_str("side", r->side);
	print_data_str("workload", r->workload);
	print_data_int("seq", r->seq);
	if (r->boot_seq >= 0)
		print_data_int("boot", r->boot_seq);
	else
		print_data_null("boot");
	print_data_str("status", r->status);
	print_data_str("machine", r->machine);
	print_data_str("profile", r->profile);
	if (!isnan(r->headline))
		print_data_num("headline", r->headline);
	else
		print_data_null("headline");
	print_obj_end();
	if (!isnan(r->headline))
		print_fmt_num(hl, r->headline);
	snprintf(seq, sizeof(seq), "%lld", (long long)r->seq);
	if (r->boot_seq >= 0)
		snprintf(boot, sizeof(boot), "%lld", (long long)r->boot_seq);
	print_text("  %-6lld %-44s %-4s %-16s %-4s %-4s %-7s %s\n", (long long)r->id, r->uid ? r->uid : "",
		   r->side ? r->side : "-", r->workload ? r->workload : "", boot, seq, r->status ? r->status : "", hl);
	return 0;
}

static int job_show(int argc, char **argv, struct klab_ctx *ctx)
{
	struct db *db;
	struct job_row job;
	struct job_side_row *sides = NULL;
	struct step_info *steps = NULL;
	size_t n_sides = 0, n_steps = 0;
	int64_t id, done = 0, total = 0, n_runs = 0;
	char t1[32], t2[32], seed[24];
	int r;

	if (job_arg(&show_spec, argc, argv, ctx, &db, &id, &r))
		return r;
	if (f_follow) {
		if (cmd_format != PRINT_FMT_TEXT)
			return cmd_usage_error(&show_spec, "--follow prints text, not --json");
		return job_follow(db, id, f_timeout_ms);
	}
	r = job_get(db, id, &job);
	if (r < 0)
		return 1;
	if (!r)
		return error("no job %lld", (long long)id), 1;
	cmd_print_begin();
	print_data_int("id", job.id);
	print_data_str("name", job.name);
	print_data_str("state", job.state);
	data_int("order_seed", job.order_seed, job.order_seed_null);
	print_data_time("created", job.created);
	print_data_time("started", job.started);
	print_data_time("finished", job.finished);
	data_str("dut", job.dut);
	data_str("peer", job.peer);
	data_str("schedule", job.schedule);
	data_str("error", job.error);
	data_int("pid", job.pid, !job.pid);
	data_int("series_id", job.series_id, !job.series_id);
	data_str("tree", job.tree);
	print_data_int("cancel", job.cancel);
	print_data_json("spec", json_parse(job.spec, strlen(job.spec), "job spec"));
	job_progress(db, id, job.spec, job.order_seed, &done, &total);
	print_data_int("steps_done", done);
	print_data_int("steps_total", total);
	print_text("job %lld '%s': %s, %lld/%lld steps\n", (long long)id, job.name, job.state,
		   (long long)done, (long long)total);
	if (job.error)
		print_text("  error: %s\n", job.error);
	fmt_time(t1, sizeof(t1), or0(job.created));
	fmt_time(t2, sizeof(t2), or0(job.finished));
	snprintf(seed, sizeof(seed), "%lld", (long long)job.order_seed);
	print_text("  created %s, finished %s, order seed %s, machines %s+%s%s%s\n", t1, t2,
		   job.order_seed_null ? "-" : seed, job.dut ? job.dut : "-",
		   job.peer ? job.peer : "-", job.schedule ? ", schedule " : "",
		   job.schedule ? job.schedule : "");
	job_row_release(&job);

	print_list_begin("sides", NULL);
	if (!job_sides_list(db, id, &sides, &n_sides))
		for (size_t i = 0; i < n_sides; i++) {
			const struct job_side_row *s = &sides[i];
			const char *rel = s->release, *prof = s->profile;

			print_obj_begin(NULL);
			data_str("side", s->side);
			data_str("label", s->label);
			data_int("kernel_id", s->kernel_id, !s->kernel_id);
			data_str("profile", s->profile);
			data_str("release", s->release);
			print_obj_end();
			print_text("  side %s: %s%s%s%s%s\n", s->side, s->label, rel ? ", kernel " : "",
				   rel ? rel : "", prof ? ", profile " : "", prof ? prof : "");
		}
	job_side_rows_free(sides, n_sides);
	print_list_end();

	/* a nightly's changes: confirmed, not confirmed, or waiting for their confirmation (confirm.h) */
	print_list_begin("confirmations", NULL);
	confirmations_of_job_each(db, id, confirmation_print, db);
	print_list_end();

	print_text("\n  %-28s %-8s %-3s %-19s %8s  %s\n", "STEP", "STATE", "TRY", "STARTED", "SECONDS", "ERROR");
	print_list_begin("steps", NULL);
	if (!steps_list(db, id, 0, &steps, &n_steps))
		for (size_t i = 0; i < n_steps; i++) {
			const struct step_info *s = &steps[i];
			double started = s->started, finished = s->finished;
			char secs[16] = "-", att[24];

			print_obj_begin(NULL);
			data_str("key", s->key);
			data_str("name", s->name);
			data_str("state", s->state);
			print_data_int("attempts", s->attempts);
			print_data_time("started", started);
			print_data_time("finished", finished);
			data_str("error", s->error);
			if (s->detail)
				print_data_json("detail", json_tokener_parse(s->detail));
			print_obj_end();
			fmt_time(t1, sizeof(t1), started);
			if (finished > 0)
				snprintf(secs, sizeof(secs), "%.1f", finished - started);
			snprintf(att, sizeof(att), "%lld", (long long)s->attempts);
			print_text("  %-28s %-8s %-3s %-19s %8s  %s\n", s->key, s->state, att, t1,
				   secs, s->error ? s->error : "");
		}
	step_infos_free(steps, n_steps);
	print_list_end();

	n_runs = runs_count_of_job(db, id);
	print_text("\n  %lld runs stored\n", (long long)n_runs);
	if (n_runs)
		print_text("  %-6s %-44s %-4s %-16s %-4s %-4s %-7s %s\n", "RUN", "UID", "SIDE", "WORKLOAD", "BOOT",
			   "SEQ", "STATUS", "HEADLINE");
	print_list_begin("runs", NULL);
	runs_of_job_each(db, id, run_print, NULL);
	print_list_end();
	return cmd_print_end();
}

static const char *const log_cols[] = { "time", "step", "event", "attempt", "seconds", "error", NULL };

/* The job's history from its steps: each step's start and, when it ended, its end. */
static int job_log(int argc, char **argv, struct klab_ctx *ctx)
{
	struct job_row job;
	struct step_info *steps = NULL;
	size_t n_steps = 0;
	struct db *db;
	int64_t id;
	double created = 0, finished = 0;
	char *name = NULL, *state = NULL, *err = NULL, t[32];
	int r;

	if (job_arg(&log_spec, argc, argv, ctx, &db, &id, &r))
		return r;
	r = job_get(db, id, &job);
	if (r < 0)
		return 1;
	if (!r)
		return error("no job %lld", (long long)id), 1;
	name = xstrdup(job.name);
	state = xstrdup(job.state);
	err = job.error ? xstrdup(job.error) : NULL;
	created = or0(job.created);
	finished = or0(job.finished);
	job_row_release(&job);

	cmd_print_begin();
	fmt_time(t, sizeof(t), created);
	print_text("%s job %lld '%s' submitted\n", t, (long long)id, name);
	print_list_begin(NULL, log_cols);
	if (steps_list(db, id, 0, &steps, &n_steps))
		n_steps = 0;
	for (size_t i = 0; i < n_steps; i++) {
		const char *key = steps[i].key, *e = steps[i].error;
		int attempts = (int)steps[i].attempts;
		double s0 = steps[i].started, s1 = or0(steps[i].finished);

		print_obj_begin(NULL);
		print_data_time("time", s0);
		print_data_str("step", key);
		print_data_str("event", "started");
		print_data_int("attempt", attempts);
		print_obj_end();
		fmt_time(t, sizeof(t), s0);
		if (attempts > 1)
			print_text("%s %s started, attempt %d\n", t, key, attempts);
		else
			print_text("%s %s started\n", t, key);
		if (!(s1 > 0))
			continue;
		print_obj_begin(NULL);
		print_data_time("time", s1);
		print_data_str("step", key);
		print_data_str("event", steps[i].state);
		print_data_num("seconds", s1 - s0);
		if (e)
			print_data_str("error", e);
		print_obj_end();
		fmt_time(t, sizeof(t), s1);
		print_text("%s %s %s after %.1f s%s%s\n", t, key, steps[i].state, s1 - s0, e ? ": " : "", e ? e : "");
	}
	step_infos_free(steps, n_steps);
	print_list_end();
	if (finished > 0) {
		fmt_time(t, sizeof(t), finished);
		print_text("%s job %lld %s%s%s\n", t, (long long)id, state, err ? ": " : "", err ? err : "");
	}
	free(name);
	free(state);
	free(err);
	return cmd_print_end();
}

static const struct klab_cmd job_cmds[] = {
	{ "show", job_show, &show_spec, NULL, 0 },
	{ "log", job_log, &log_spec, NULL, CMD_LISTING },
};
static const struct klab_cmd *const job_subs[] = { &job_cmds[0], &job_cmds[1], NULL };
static const struct opt_spec job_spec = {
	"klab job", NULL, "a job's steps, errors and runs, or its log", NULL, NULL,
};

/* ---- cancel --------------------------------------------------------------- */

static const struct opt cancel_opts[] = { OPT_JSON(), OPT_END() };
static const struct opt_spec cancel_spec = {
	"klab cancel", id_usage, "stop a job at the next safe point and release its machines",
	"A queued job is cancelled at once; a running one stops after its current step.\n", cancel_opts,
};

static int cancel(int argc, char **argv, struct klab_ctx *ctx)
{
	struct db *db;
	int64_t id;
	char *state = NULL;
	int r;

	if (job_arg(&cancel_spec, argc, argv, ctx, &db, &id, &r))
		return r;
	if (job_cancel(db, id))
		return 1;
	jobs_get_str(db, id, JOB_STATE, &state);
	cmd_print_begin();
	print_data_int("id", id);
	print_data_str("state", state ? state : "");
	print_data_bool("cancel", 1);
	if (state && !strcmp(state, "cancelled"))
		print_text("job %lld cancelled\n", (long long)id);
	else
		print_text("job %lld will stop at its next safe point and release its machines\n", (long long)id);
	free(state);
	return cmd_print_end();
}

/* ---- run ------------------------------------------------------------------ */

static int r_wait, r_quiet;

static const struct opt run_opts[] = {
	OPT_BOOL(0, "wait", &r_wait, "wait for busy machines (default: the job stays queued, exit 2)"),
	OPT_SET_INT(0, "no-wait", &r_wait, 0, "do not wait for busy machines (the default)"),
	OPT_BOOL('q', "quiet", &r_quiet, "no progress lines, no comparison at the end"),
	OPT_END(),
};
static const char *const run_usage[] = { "JOB_NAME|ID [--wait] [--quiet]", NULL };
static const struct opt_spec run_spec = {
	"klab run", run_usage, "run (or resume) a job in the foreground",
	"A job name submits that job (or resumes its unfinished one); an id runs or resumes\n"
	"that job. The progress lines and the comparison at the end are text.\n",
	run_opts,
};

static int run(int argc, char **argv, struct klab_ctx *ctx)
{
	struct job_run_opts o = JOB_RUN_OPTS_INIT;
	struct klab_config *cfg;
	const char *what;
	struct db *db;
	int64_t id = 0, found = 0;
	long v;
	int ret, st;

	if ((argc = cmd_parse(&run_spec, argc, argv, &st)) < 0)
		return st;
	if (argc != 1)
		return argc ? cmd_usage_error(&run_spec, "unexpected argument '%s'", argv[1])
			    : cmd_usage_error(&run_spec, "needs a job name or id");
	what = argv[0];
	o.wait_lease = r_wait;	/* busy machines: the job stays queued, unless --wait */
	cfg = ctx_config(ctx);
	if (!cfg)
		return 1;
	db = ctx_db(ctx);
	if (!db)
		return 1;
	if (!parse_long(what, 1, LONG_MAX, &v)) {
		if (job_find(db, what, &id))
			return 1;
	} else if (jobs_find_unfinished(db, what, &found) == 1) {
		id = found;	/* resume the unfinished job of that name */
	} else {
		struct job_submit_opts so = JOB_SUBMIT_OPTS_INIT;

		so.job = what;
		id = job_submit(db, cfg, &so, NULL);
		if (id < 0)
			return 1;
		if (!r_quiet)
			printf("submitted job %lld (%s)\n", (long long)id, what);
	}
	o.progress = !r_quiet;
	o.stop = cmd_stop_on_signals();
	o.report = report_job;
	ret = after_job_run(cfg, db, NULL, id, &o);
	if (ret == 0 && !r_quiet) {
		struct compare_result res;

		memset(&res, 0, sizeof(res));
		if (compare_load_job(db, id, &res) == 1) {
			printf("\n");
			print_begin(PRINT_FMT_TEXT, stdout);
			compare_print(&res);
			print_end();
		}
		compare_result_free(&res);
	}
	if (fflush(stdout) || ferror(stdout))
		return 1;
	return ret < 0 ? 1 : ret;
}

const struct klab_cmd cmd_submit = { "submit", submit, &submit_spec, NULL, 0 };
const struct klab_cmd cmd_run_job = { "run", run, &run_spec, NULL, 0 };
const struct klab_cmd cmd_jobs = { "jobs", jobs, &jobs_spec, NULL, CMD_LISTING };
const struct klab_cmd cmd_job = { "job", NULL, &job_spec, job_subs, 0 };
const struct klab_cmd cmd_cancel = { "cancel", cancel, &cancel_spec, NULL, 0 };
