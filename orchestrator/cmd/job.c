/* cmd/job.c: `klab submit`, `klab jobs`, `klab job show|log`, `klab cancel`, `klab run`. */
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd.h"
#include "compare.h"
#include "db.h"
#include "job.h"
#include "jsonh.h"
#include "log.h"
#include "util.h"

#pragma weak compare_load_job
#pragma weak compare_print
#pragma weak compare_result_free

/* Print a JSON document (pretty) and check stdout. */
static int print_json(struct json_object *o)
{
	struct buf b = BUF_INIT;

	json_to_buf(&b, o, 1);
	fputs(b.buf, stdout);
	fputc('\n', stdout);
	buf_release(&b);
	return 0;
}

static int check_stdout(void)
{
	if (fflush(stdout) || ferror(stdout))
		return error_errno("cannot write to standard output");
	return 0;
}

static const char *col_text(struct db_stmt *st, int i)
{
	const char *s = db_col_text(st, i);
	return s ? s : "";
}

static struct json_object *col_json(struct db_stmt *st, int i)
{
	switch (db_col_type(st, i)) {
	case DB_NULL: return NULL;
	case DB_INTEGER: return json_object_new_int64(db_col_int64(st, i));
	case DB_FLOAT: return json_object_new_double(db_col_double(st, i));
	default: return json_object_new_string(col_text(st, i));
	}
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

static void fmt_time(char *b, size_t n, double t)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (t <= 0) {
		snprintf(b, n, "-");
		return;
	}
	localtime_r(&tt, &tm);
	strftime(b, n, "%Y-%m-%d %H:%M:%S", &tm);
}

/* Steps done (or skipped) and planned for a job. */
static void job_progress(struct db *db, int64_t id, const char *spec_text, int64_t seed, int64_t *done, int64_t *total)
{
	struct json_object *spec = json_parse(spec_text, strlen(spec_text), "job spec");
	struct strvec plan = STRVEC_INIT;

	*done = 0;
	*total = 0;
	db_get_int(db, done, "SELECT count(*) FROM steps WHERE job_id = ? AND state IN ('done', 'skipped')", "i", id);
	if (spec && !job_plan(spec, seed, &plan))
		*total = (int64_t)plan.n;
	strvec_clear(&plan);
	if (spec)
		json_object_put(spec);
}

/* ---- submit ------------------------------------------------------------ */

int oldcmd_submit(int argc, char **argv, struct klab_ctx *ctx)
{
	static const struct option opts[] = {
		{ "job", required_argument, NULL, 'j' },
		{ "series", required_argument, NULL, 's' },
		{ "mbox", required_argument, NULL, 'm' },
		{ "base", required_argument, NULL, 'b' },
		{ "test", required_argument, NULL, 't' },
		{ "seed", required_argument, NULL, 'S' },
		{ "boots", required_argument, NULL, 'B' },
		{ "runs", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct job_submit_opts o = JOB_SUBMIT_OPTS_INIT;
	struct klab_config *cfg;
	struct db *db;
	char *mbox = NULL;
	int c, ret = 1;
	int64_t id;
	long v;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j': o.job = optarg; break;
		case 's': o.series = optarg; break;
		case 'm': free(mbox); mbox = xasprintf("mbox:%s", optarg); o.series = mbox; break;
		case 'b': o.base = optarg; break;
		case 't': o.test = optarg; break;
		case 'S':
			if (parse_long(optarg, 0, 0x7fffffffL, &v)) {
				error("--seed must be a number from 0 to 2147483647, not '%s'", optarg);
				goto usage;
			}
			o.seed = v;
			break;
		case 'B': case 'R':
			if (parse_long(optarg, 1, 1000, &v)) {
				error("--%s must be a number from 1 to 1000, not '%s'", c == 'B' ? "boots" : "runs", optarg);
				goto usage;
			}
			if (c == 'B')
				o.boots = (int)v;
			else
				o.runs = (int)v;
			break;
		case 'h': free(mbox); return cmd_usage("submit", 0);
		default: goto usage;
		}
	}
	if (!o.job && optind < argc)
		o.job = argv[optind++];
	if (!o.job || optind < argc) {
		error(!o.job ? "submit: --job NAME is required" : "submit: unexpected argument '%s'", argv[optind]);
		goto usage;
	}
	if (o.test && !o.base && 0)
		goto usage;
	cfg = ctx_config(ctx);
	if (!cfg)
		goto out;
	db = ctx_db(ctx);
	if (!db)
		goto out;
	id = job_submit(db, cfg, &o);
	if (id < 0)
		goto out;
	if (ctx->json) {
		struct json_object *j = json_object_new_object();
		json_object_object_add(j, "id", json_object_new_int64(id));
		json_object_object_add(j, "name", json_object_new_string(o.job));
		json_object_object_add(j, "state", json_object_new_string("queued"));
		print_json(j);
		json_object_put(j);
	} else {
		printf("submitted job %lld (%s); klabd runs it, or: klab run %lld\n", (long long)id, o.job,
		       (long long)id);
	}
	ret = check_stdout() ? 1 : 0;
out:
	free(mbox);
	return ret;
usage:
	free(mbox);
	return cmd_usage("submit", 2);
}

/* ---- jobs --------------------------------------------------------------- */

int oldcmd_jobs(int argc, char **argv, struct klab_ctx *ctx)
{
	struct json_object *arr;
	struct db_stmt *st;
	struct db *db;
	const char *state = NULL;
	long limit = 50;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--state") && i + 1 < argc) {
			state = argv[++i];
		} else if (!strcmp(argv[i], "--limit") && i + 1 < argc) {
			if (parse_long(argv[++i], 1, 100000, &limit)) {
				error("--limit must be a number from 1 to 100000, not '%s'", argv[i]);
				return 2;
			}
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			return cmd_usage("jobs", 0);
		} else {
			error("jobs: unknown argument '%s' (--state STATE, --limit N)", argv[i]);
			return cmd_usage("jobs", 2);
		}
	}
	db = ctx_db(ctx);
	if (!db)
		return 1;
	st = db_prepare(db, "SELECT id, name, state, spec, order_seed, created, started, finished, dut, peer, "
			"schedule, error, pid FROM jobs WHERE ?1 IS NULL OR state = ?1 ORDER BY id DESC LIMIT ?",
			"si", state, (int64_t)limit);
	if (!st)
		return 1;
	arr = json_object_new_array();
	while (db_step(st) == DB_ROW) {
		struct json_object *o = json_object_new_object();
		int64_t id = db_col_int64(st, 0), done, total;
		double end = db_col_null(st, 7) ? now_wall() : db_col_double(st, 7);

		job_progress(db, id, col_text(st, 3), db_col_int64(st, 4), &done, &total);
		json_object_object_add(o, "id", json_object_new_int64(id));
		json_object_object_add(o, "name", col_json(st, 1));
		json_object_object_add(o, "state", col_json(st, 2));
		json_object_object_add(o, "steps_done", json_object_new_int64(done));
		json_object_object_add(o, "steps_total", json_object_new_int64(total));
		json_object_object_add(o, "created", col_json(st, 5));
		json_object_object_add(o, "started", col_json(st, 6));
		json_object_object_add(o, "finished", col_json(st, 7));
		json_object_object_add(o, "age_s", json_object_new_double(now_wall() - db_col_double(st, 5)));
		json_object_object_add(o, "duration_s", db_col_null(st, 6) ? NULL :
				       json_object_new_double(end - db_col_double(st, 6)));
		json_object_object_add(o, "dut", col_json(st, 8));
		json_object_object_add(o, "peer", col_json(st, 9));
		json_object_object_add(o, "schedule", col_json(st, 10));
		json_object_object_add(o, "error", col_json(st, 11));
		json_object_object_add(o, "pid", col_json(st, 12));
		json_object_array_add(arr, o);
	}
	db_finalize(st);
	if (ctx->json) {
		print_json(arr);
	} else {
		printf("%-5s %-20s %-10s %-9s %-6s %-17s %s\n", "ID", "NAME", "STATE", "PROGRESS", "AGE",
		       "MACHINES", "ERROR");
		for (size_t i = 0; i < json_object_array_length(arr); i++) {
			struct json_object *o = json_object_array_get_idx(arr, i), *v;
			char prog[32], age[16], mach[64];
			const char *err = NULL;

			snprintf(prog, sizeof(prog), "%lld/%lld",
				 (long long)json_object_get_int64(json_object_object_get(o, "steps_done")),
				 (long long)json_object_get_int64(json_object_object_get(o, "steps_total")));
			fmt_age(age, sizeof(age), json_object_get_double(json_object_object_get(o, "age_s")));
			v = json_object_object_get(o, "dut");
			snprintf(mach, sizeof(mach), "%s%s%s", v ? json_object_get_string(v) : "-",
				 v ? "+" : "", v ? json_object_get_string(json_object_object_get(o, "peer")) : "");
			if ((v = json_object_object_get(o, "error")))
				err = json_object_get_string(v);
			printf("%-5lld %-20s %-10s %-9s %-6s %-17s %.100s\n",
			       (long long)json_object_get_int64(json_object_object_get(o, "id")),
			       json_object_get_string(json_object_object_get(o, "name")),
			       json_object_get_string(json_object_object_get(o, "state")), prog, age, mach,
			       err ? err : "");
		}
	}
	json_object_put(arr);
	return check_stdout() ? 1 : 0;
}

/* ---- job show | log ----------------------------------------------------- */

static struct json_object *job_json(struct db *db, int64_t id)
{
	struct json_object *o = NULL, *steps, *runs, *sides;
	struct db_stmt *st;
	int64_t done = 0, total = 0;

	st = db_prepare(db, "SELECT id, name, state, spec, order_seed, created, started, finished, dut, peer, "
			"schedule, error, pid, series_id, tree, cancel FROM jobs WHERE id = ?", "i", id);
	if (!st)
		return NULL;
	if (db_step(st) != DB_ROW) {
		db_finalize(st);
		error("no job %lld", (long long)id);
		return NULL;
	}
	o = json_object_new_object();
	static const char *const cols[] = { "id", "name", "state", NULL, "order_seed", "created", "started",
					    "finished", "dut", "peer", "schedule", "error", "pid", "series_id",
					    "tree", "cancel" };
	for (int i = 0; i < (int)ARRAY_SIZE(cols); i++)
		if (cols[i])
			json_object_object_add(o, cols[i], col_json(st, i));
	json_object_object_add(o, "spec", json_parse(col_text(st, 3), strlen(col_text(st, 3)), "job spec"));
	job_progress(db, id, col_text(st, 3), db_col_int64(st, 4), &done, &total);
	json_object_object_add(o, "steps_done", json_object_new_int64(done));
	json_object_object_add(o, "steps_total", json_object_new_int64(total));
	db_finalize(st);

	sides = json_object_new_array();
	st = db_prepare(db, "SELECT s.side, s.label, s.kernel_id, s.profile, k.release FROM job_sides s "
			"LEFT JOIN kernels k ON k.id = s.kernel_id WHERE s.job_id = ? ORDER BY s.side", "i", id);
	while (st && db_step(st) == DB_ROW) {
		struct json_object *s = json_object_new_object();
		json_object_object_add(s, "side", col_json(st, 0));
		json_object_object_add(s, "label", col_json(st, 1));
		json_object_object_add(s, "kernel_id", col_json(st, 2));
		json_object_object_add(s, "profile", col_json(st, 3));
		json_object_object_add(s, "release", col_json(st, 4));
		json_object_array_add(sides, s);
	}
	db_finalize(st);
	json_object_object_add(o, "sides", sides);

	steps = json_object_new_array();
	st = db_prepare(db, "SELECT key, name, state, attempts, started, finished, error, detail FROM steps "
			"WHERE job_id = ? ORDER BY id", "i", id);
	while (st && db_step(st) == DB_ROW) {
		struct json_object *s = json_object_new_object();
		json_object_object_add(s, "key", col_json(st, 0));
		json_object_object_add(s, "name", col_json(st, 1));
		json_object_object_add(s, "state", col_json(st, 2));
		json_object_object_add(s, "attempts", col_json(st, 3));
		json_object_object_add(s, "started", col_json(st, 4));
		json_object_object_add(s, "finished", col_json(st, 5));
		json_object_object_add(s, "error", col_json(st, 6));
		if (!db_col_null(st, 7))
			json_object_object_add(s, "detail", json_tokener_parse(col_text(st, 7)));
		json_object_array_add(steps, s);
	}
	db_finalize(st);
	json_object_object_add(o, "steps", steps);

	runs = json_object_new_array();
	st = db_prepare(db, "SELECT r.id, r.uid, r.side, r.workload, r.seq, b.seq, r.status, r.machine, r.profile, "
			"(SELECT value FROM metrics m WHERE m.run_id = r.id AND m.name IN ('tps', 'tx_pps') LIMIT 1) "
			"FROM runs r LEFT JOIN boots b ON b.id = r.boot_id WHERE r.job_id = ? ORDER BY r.id", "i", id);
	while (st && db_step(st) == DB_ROW) {
		struct json_object *r = json_object_new_object();
		static const char *const rc[] = { "id", "uid", "side", "workload", "seq", "boot", "status",
						  "machine", "profile", "headline" };
		for (int i = 0; i < (int)ARRAY_SIZE(rc); i++)
			json_object_object_add(r, rc[i], col_json(st, i));
		json_object_array_add(runs, r);
	}
	db_finalize(st);
	json_object_object_add(o, "runs", runs);
	return o;
}

static const char *jget(struct json_object *o, const char *k)
{
	struct json_object *v = json_object_object_get(o, k);
	return v ? json_object_get_string(v) : NULL;
}

static double jnum(struct json_object *o, const char *k)
{
	struct json_object *v = json_object_object_get(o, k);
	return v ? json_object_get_double(v) : 0;
}

static void print_job(struct json_object *o)
{
	struct json_object *a;
	char t1[32], t2[32];

	printf("job %s '%s': %s, %lld/%lld steps\n", jget(o, "id"), jget(o, "name"), jget(o, "state"),
	       (long long)jnum(o, "steps_done"), (long long)jnum(o, "steps_total"));
	if (jget(o, "error"))
		printf("  error: %s\n", jget(o, "error"));
	fmt_time(t1, sizeof(t1), jnum(o, "created"));
	fmt_time(t2, sizeof(t2), jnum(o, "finished"));
	printf("  created %s, finished %s, order seed %s, machines %s+%s%s%s\n", t1, t2,
	       jget(o, "order_seed") ? jget(o, "order_seed") : "-", jget(o, "dut") ? jget(o, "dut") : "-",
	       jget(o, "peer") ? jget(o, "peer") : "-", jget(o, "schedule") ? ", schedule " : "",
	       jget(o, "schedule") ? jget(o, "schedule") : "");
	a = json_object_object_get(o, "sides");
	for (size_t i = 0; a && i < json_object_array_length(a); i++) {
		struct json_object *s = json_object_array_get_idx(a, i);
		printf("  side %s: %s%s%s%s%s\n", jget(s, "side"), jget(s, "label"),
		       jget(s, "release") ? ", kernel " : "", jget(s, "release") ? jget(s, "release") : "",
		       jget(s, "profile") ? ", profile " : "", jget(s, "profile") ? jget(s, "profile") : "");
	}
	printf("\n  %-28s %-8s %-3s %-19s %8s  %s\n", "STEP", "STATE", "TRY", "STARTED", "SECONDS", "ERROR");
	a = json_object_object_get(o, "steps");
	for (size_t i = 0; a && i < json_object_array_length(a); i++) {
		struct json_object *s = json_object_array_get_idx(a, i);
		char secs[16] = "-";
		fmt_time(t1, sizeof(t1), jnum(s, "started"));
		if (jnum(s, "finished") > 0)
			snprintf(secs, sizeof(secs), "%.1f", jnum(s, "finished") - jnum(s, "started"));
		printf("  %-28s %-8s %-3s %-19s %8s  %s\n", jget(s, "key"), jget(s, "state"), jget(s, "attempts"),
		       t1, secs, jget(s, "error") ? jget(s, "error") : "");
	}
	a = json_object_object_get(o, "runs");
	printf("\n  %zu runs stored\n", a ? json_object_array_length(a) : 0);
	if (a && json_object_array_length(a))
		printf("  %-6s %-44s %-4s %-16s %-4s %-4s %-7s %s\n", "RUN", "UID", "SIDE", "WORKLOAD", "BOOT",
		       "SEQ", "STATUS", "HEADLINE");
	for (size_t i = 0; a && i < json_object_array_length(a); i++) {
		struct json_object *r = json_object_array_get_idx(a, i);
		printf("  %-6s %-44s %-4s %-16s %-4s %-4s %-7s %s\n", jget(r, "id"), jget(r, "uid"),
		       jget(r, "side") ? jget(r, "side") : "-", jget(r, "workload"),
		       jget(r, "boot") ? jget(r, "boot") : "-", jget(r, "seq"), jget(r, "status"),
		       jget(r, "headline") ? jget(r, "headline") : "-");
	}
}

/* The job's history from its steps, in time order. */
static void print_log(struct json_object *o, int json)
{
	struct json_object *a = json_object_object_get(o, "steps"), *ev = json_object_new_array();
	char t[32];

	for (size_t i = 0; a && i < json_object_array_length(a); i++) {
		struct json_object *s = json_object_array_get_idx(a, i), *e;
		e = json_object_new_object();
		json_object_object_add(e, "time", json_object_new_double(jnum(s, "started")));
		json_object_object_add(e, "step", json_object_new_string(jget(s, "key")));
		json_object_object_add(e, "event", json_object_new_string("started"));
		json_object_object_add(e, "attempt", json_object_new_int((int)jnum(s, "attempts")));
		json_object_array_add(ev, e);
		if (jnum(s, "finished") > 0) {
			e = json_object_new_object();
			json_object_object_add(e, "time", json_object_new_double(jnum(s, "finished")));
			json_object_object_add(e, "step", json_object_new_string(jget(s, "key")));
			json_object_object_add(e, "event", json_object_new_string(jget(s, "state")));
			json_object_object_add(e, "seconds",
					       json_object_new_double(jnum(s, "finished") - jnum(s, "started")));
			if (jget(s, "error"))
				json_object_object_add(e, "error", json_object_new_string(jget(s, "error")));
			json_object_array_add(ev, e);
		}
	}
	if (json) {
		print_json(ev);
	} else {
		fmt_time(t, sizeof(t), jnum(o, "created"));
		printf("%s job %s '%s' submitted\n", t, jget(o, "id"), jget(o, "name"));
		for (size_t i = 0; i < json_object_array_length(ev); i++) {
			struct json_object *e = json_object_array_get_idx(ev, i);
			fmt_time(t, sizeof(t), jnum(e, "time"));
			if (!strcmp(jget(e, "event"), "started"))
				printf("%s %s started%s%s\n", t, jget(e, "step"), jnum(e, "attempt") > 1 ? ", attempt " : "",
				       jnum(e, "attempt") > 1 ? jget(e, "attempt") : "");
			else
				printf("%s %s %s after %.1f s%s%s\n", t, jget(e, "step"), jget(e, "event"),
				       jnum(e, "seconds"), jget(e, "error") ? ": " : "",
				       jget(e, "error") ? jget(e, "error") : "");
		}
		if (jnum(o, "finished") > 0) {
			fmt_time(t, sizeof(t), jnum(o, "finished"));
			printf("%s job %s %s%s%s\n", t, jget(o, "id"), jget(o, "state"), jget(o, "error") ? ": " : "",
			       jget(o, "error") ? jget(o, "error") : "");
		}
	}
	json_object_put(ev);
}

int oldcmd_job(int argc, char **argv, struct klab_ctx *ctx)
{
	struct json_object *o;
	struct db *db;
	int64_t id;

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))
		return cmd_usage("job", 0);
	if (argc != 3 || (strcmp(argv[1], "show") && strcmp(argv[1], "log"))) {
		if (argc >= 2 && strcmp(argv[1], "show") && strcmp(argv[1], "log"))
			error("unknown job subcommand '%s' (show, log)", argv[1]);
		return cmd_usage("job", 2);
	}
	db = ctx_db(ctx);
	if (!db || job_find(db, argv[2], &id))
		return 1;
	o = job_json(db, id);
	if (!o)
		return 1;
	if (!strcmp(argv[1], "log"))
		print_log(o, ctx->json);
	else if (ctx->json)
		print_json(o);
	else
		print_job(o);
	json_object_put(o);
	return check_stdout() ? 1 : 0;
}

/* ---- cancel --------------------------------------------------------------- */

int oldcmd_cancel(int argc, char **argv, struct klab_ctx *ctx)
{
	struct db *db;
	int64_t id;
	char *state = NULL;

	if (argc != 2)
		return cmd_usage("cancel", 2);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))
		return cmd_usage("cancel", 0);
	db = ctx_db(ctx);
	if (!db || job_find(db, argv[1], &id) || job_cancel(db, id))
		return 1;
	db_get_str(db, &state, "SELECT state FROM jobs WHERE id = ?", "i", id);
	if (ctx->json)
		printf("{\"id\": %lld, \"state\": \"%s\", \"cancel\": true}\n", (long long)id, state ? state : "");
	else if (state && !strcmp(state, "cancelled"))
		printf("job %lld cancelled\n", (long long)id);
	else
		printf("job %lld will stop at its next safe point and release its machines\n", (long long)id);
	free(state);
	return check_stdout() ? 1 : 0;
}

/* ---- run ------------------------------------------------------------------ */

static volatile sig_atomic_t run_stop;

static void on_stop(int sig)
{
	if (run_stop) {
		/* A second signal: stop now. */
		signal(sig, SIG_DFL);
		raise(sig);
	}
	run_stop = 1;
}

int oldcmd_run(int argc, char **argv, struct klab_ctx *ctx)
{
	struct job_run_opts o = JOB_RUN_OPTS_INIT;
	struct klab_config *cfg;
	struct sigaction sa;
	const char *what = NULL;
	struct db *db;
	int64_t id = 0;
	int ret, quiet = 0;

	o.wait_lease = 0;	/* busy machines: the job stays queued, unless --wait */
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--wait"))
			o.wait_lease = 1;
		else if (!strcmp(argv[i], "--no-wait"))
			o.wait_lease = 0;
		else if (!strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q"))
			quiet = 1;
		else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return cmd_usage("run", 0);
		else if (argv[i][0] == '-' || what) {
			error("run: unexpected argument '%s'", argv[i]);
			return cmd_usage("run", 2);
		} else
			what = argv[i];
	}
	if (!what)
		return cmd_usage("run", 2);
	cfg = ctx_config(ctx);
	if (!cfg)
		return 1;
	db = ctx_db(ctx);
	if (!db)
		return 1;
	{
		long v;
		int64_t found = 0;
		if (!parse_long(what, 1, LONG_MAX, &v)) {
			if (job_find(db, what, &id))
				return 1;
		} else if (db_get_int(db, &found, "SELECT id FROM jobs WHERE name = ? AND state IN ('queued', 'running') "
				      "ORDER BY id LIMIT 1", "s", what) == 1) {
			id = found;	/* resume the unfinished job of that name */
		} else {
			struct job_submit_opts so = JOB_SUBMIT_OPTS_INIT;
			so.job = what;
			id = job_submit(db, cfg, &so);
			if (id < 0)
				return 1;
			if (!quiet)
				printf("submitted job %lld (%s)\n", (long long)id, what);
		}
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	o.progress = !quiet;
	o.stop = &run_stop;
	ret = job_run(cfg, db, NULL, id, &o);
	if (ret == 0 && !quiet && compare_load_job && compare_print && compare_result_free) {
		struct compare_result res;
		memset(&res, 0, sizeof(res));
		if (compare_load_job(db, id, &res) == 1) {
			printf("\n");
			compare_print(stdout, &res);
		}
		compare_result_free(&res);
	}
	if (check_stdout())
		return 1;
	return ret < 0 ? 1 : ret;
}
