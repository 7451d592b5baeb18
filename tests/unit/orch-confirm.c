/* orch-confirm.c: nightly changes confirmed before they count: a CHANGED night, a drift found only as a change point, once each. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "compare/compare.h"
#include "conf/conf.h"
#include "nightly/confirm.h"
#include "store/db.h"
#include "job/job.h"
#include "job/job_int.h"
#include "jsonh.h"
#include "log.h"
#include "report/report.h"
#include "store/result.h"
#include "store/runs.h"
#include "tap.h"
#include "util.h"

#define CONFIG_TEXT \
	"[lab]\n\tdb = %s/confirm.db\n" \
	"[machine \"dut\"]\n\thost = 198.18.255.2\n\trole = dut\n\tpeer = peer\n\tnic = wl0\n\taddr = 198.18.0.1\n\tboot = kexec\n" \
	"[machine \"peer\"]\n\thost = 198.18.255.6\n\trole = peer\n\tnic = wl1\n\taddr = 198.18.0.2\n\tboot = none\n" \
	"[tree \"t\"]\n\ttarball = /dev/null\n" \
	"[workload \"rr\"]\n\ttype = udp_rr\n\tflows = 8\n\tduration = 3s\n\twarmup = 1s\n" \
	"[job \"night\"]\n\ttree = t\n\tmachines = dut peer\n\tworkloads = rr\n\tboots = 2\n\truns = 2\n\twarmup_runs = 1\n" \
	"[schedule \"nightly\"]\n\tcron = 0 3 * * *\n\tjob = night\n"

static int64_t run_id = 1;

/* A formatted string that lives until 8 more calls (for SQL values and queries of the test). */
static const char *f(const char *fmt, ...) KLAB_PRINTF(1, 2);
static const char *f(const char *fmt, ...)
{
	static char bufs[8][256];
	static int k;
	va_list ap;

	k = (k + 1) % 8;
	va_start(ap, fmt);
	vsnprintf(bufs[k], sizeof(bufs[k]), fmt, ap);
	va_end(ap);
	return bufs[k];
}

/* The kernel of night N (its own commit). */
static int64_t kernel(struct db *db, int n)
{
	db_run(db, "INSERT INTO kernels (id, key, tree, commit_id, variant, state, created) "
	       "VALUES (?, ?, 't', ?, 'nightly', 'ok', 0) ON CONFLICT DO NOTHING", "iss", (int64_t)(100 + n),
	       f("k%d", n), f("%040d", n));
	return 100 + n;
}

/*
 * Runs of job ID: 2 boots a side (ABBA), a warm-up run (an absurd value:
 * it must be left out) and 2 measured runs each, tps at LA on side A and
 * LB on side B, spread 0.05% (deterministic).
 */
static void runs(struct db *db, int64_t id, double la, double lb)
{
	static const double wiggle[4] = { 1.0005, 0.9995, 1.0003, 0.9997 };
	const char *order = "ABBA";

	for (int b = 0; b < 4; b++) {
		int64_t boot;
		double level = order[b] == 'A' ? la : lb;

		if (order[b] == 'A' && la <= 0)
			continue;	/* a first night: side B only */
		db_run(db, "INSERT INTO boots (job_id, seq, side) VALUES (?, ?, ?)", "iis", id, (int64_t)b + 1,
		       order[b] == 'A' ? "A" : "B");
		boot = db_last_id(db);
		for (int seq = 0; seq < 3; seq++) {
			db_run(db, "INSERT INTO runs (id, uid, job_id, boot_id, side, workload, seq, status, created) "
			       "VALUES (?, ?, ?, ?, ?, 'rr', ?, 'ok', 0)", "isiisi", run_id, f("r%lld", (long long)run_id),
			       id, boot, order[b] == 'A' ? "A" : "B", (int64_t)seq);
			db_run(db, "INSERT INTO metrics (run_id, name, value, unit, better) VALUES (?, 'tps', ?, '1/s', 'higher')",
			       "id", run_id, seq ? level * wiggle[(b + seq) % 4] : 5.0);
			run_id++;
		}
		/*
		 * Its observation run (issue 34): a probe that halves side A's tps and
		 * doubles B's. Were it read by a comparison, a history point, a
		 * confirmation or the summaries, every verdict below would change.
		 */
		db_run(db, "INSERT INTO runs (id, uid, job_id, boot_id, side, workload, seq, status, created, kind, observes) "
		       "VALUES (?, ?, ?, ?, ?, 'rr', 3, 'ok', 0, 'observe', 'bpftrace')", "isiis", run_id,
		       f("r%lld", (long long)run_id), id, boot, order[b] == 'A' ? "A" : "B");
		db_run(db, "INSERT INTO metrics (run_id, name, value, unit, better) VALUES (?, 'tps', ?, '1/s', 'higher')",
		       "id", run_id, order[b] == 'A' ? level / 2 : level * 2);
		run_id++;
	}
	result_rebuild_summaries(db);	/* runs written by SQL: their per-boot summaries */
}

/* The mail text of job ID (report_mail()), malloc'd, or NULL. */
static char *mail_of(struct db *db, int64_t id)
{
	char *text = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&text, &len);

	if (!fp)
		return NULL;
	if (report_mail(db, id, fp, NULL)) {
		fclose(fp);
		free(text);
		return NULL;
	}
	fclose(fp);
	return text;
}

/* The mail of the last job finish() ended, as it was before its confirmation was queued or decided. */
static char *mail;

static void spec_of(struct db *db, int64_t id, struct job_spec *spec)
{
	char *s = NULL;

	db_get_str(db, &s, "SELECT spec FROM jobs WHERE id = ?", "i", id);
	job_spec_parse(s, spec);
	free(s);
}

/* Job ID ended done: compared, its history updated, its confirmation queued or decided (as job.c does). */
static int finish(struct db *db, const struct klab_config *cfg, int64_t id)
{
	struct compare_opts co = COMPARE_OPTS_INIT;
	struct job_spec spec;
	int ret = 0;
	int64_t sides = 0;

	spec_of(db, id, &spec);
	co.warmup_runs = 1;
	db_run(db, "UPDATE jobs SET state = 'done' WHERE id = ?", "i", id);
	db_get_int(db, &sides, "SELECT count(*) FROM job_sides WHERE job_id = ?", "i", id);
	if (sides == 2 && compare_job(db, id, &co, NULL))
		ret = -1;
	if (spec.schedule && history_update_job(db, id, 1.0))
		ret = -1;
	free(mail);
	mail = sides == 2 ? mail_of(db, id) : NULL;	/* what the job's own notify would send */
	if (confirm_after_job(db, cfg, id, &spec))
		ret = -1;
	job_spec_release(&spec);
	return ret;
}

/* Night N: the tip's kernel of night N on side B at LB; side A the previous night's kernel at LA. */
static int64_t night(struct db *db, const struct klab_config *cfg, int n, double la, double lb)
{
	struct job_submit_opts o = JOB_SUBMIT_OPTS_INIT;
	int64_t id;

	o.job = "night";
	o.schedule = "nightly";
	id = job_submit(db, cfg, &o, NULL);
	if (id < 0)
		return -1;
	db_run(db, "UPDATE job_sides SET kernel_id = ? WHERE job_id = ? AND side = 'B'", "ii", kernel(db, n), id);
	runs(db, id, la, lb);
	return finish(db, cfg, id) ? -1 : id;
}

static int64_t count(struct db *db, const char *sql)
{
	int64_t n = -1;

	db_get_int(db, &n, sql, "");
	return n;
}

int main(void)
{
	/*
	 * A drift down: -0.6% a night for nights 6-10 (each night EQUIVALENT
	 * against the one before, threshold 1%), then flat: the change point
	 * is what finds it.
	 */
	static const double level[] = { 100000, 100000, 100000, 100000, 100000, 100000, 99400, 98800, 98200,
					 97600, 97000, 97000, 97000, 97000, 97000, 97000 };
	const int nights = (int)(sizeof(level) / sizeof(level[0]));
	char path[512], *text;
	struct klab_config cfg;
	struct db *db;
	int first_cp_night = 0;
	int64_t id = 0, cj = 0, cp_job = 0, ka = 0, kb = 0, cid;

	log_init("orch-confirm", 0, LOG_ERR);
	snprintf(path, sizeof(path), "%s/klab.conf", tap_scratch_dir());
	text = xasprintf(CONFIG_TEXT, tap_scratch_dir());
	write_file_atomic(path, text, strlen(text), 0644);
	free(text);
	memset(&cfg, 0, sizeof(cfg));
	if (!ok(!conf_load(&cfg, path), "config loads"))
		return done_testing();
	free(cfg.lab.db);
	cfg.lab.db = tap_db_path("klab.db");
	if (!ok(!db_open(cfg.lab.db, &db), "database opens"))
		return done_testing();

	/* the first night has nothing to compare with */
	ok(night(db, &cfg, 0, 0, level[0]) > 0, "night 0 done (side B only: nothing to compare with)");
	for (int n = 1; n < nights; n++) {
		int64_t before = count(db, "SELECT count(*) FROM confirmations");

		id = night(db, &cfg, n, level[n - 1], level[n]);
		if (!ok(id > 0, "night %d done", n))
			return done_testing();
		if (!first_cp_night && count(db, "SELECT count(*) FROM confirmations") > before)
			first_cp_night = n;
	}
	is_int(count(db, "SELECT count(*) FROM comparisons WHERE metric = 'tps' AND verdict = 'CHANGED' "
			 "AND job_id IN (SELECT id FROM jobs WHERE schedule IS NOT NULL)"), 0,
	       "no night is CHANGED against the night before (0.6%% a night, threshold 1%%)");
	ok(count(db, "SELECT count(*) FROM changepoints WHERE metric = 'tps'") >= 1, "the drift is a change point");
	is_int(count(db, "SELECT count(*) FROM confirmations"), 1,
	       "one confirmation, queued once although the change point is found again every later night");
	ok(first_cp_night > 6, "queued on the night the change point was first found (night %d)", first_cp_night);
	{
		struct db_stmt *st = db_prepare(db, "SELECT c.id, c.confirm_job, c.cp_job, c.change_pct, c.state, "
						"(SELECT kernel_id FROM job_sides WHERE job_id = c.confirm_job AND side = 'A'), "
						"(SELECT kernel_id FROM job_sides WHERE job_id = c.confirm_job AND side = 'B'), "
						"(SELECT kernel_id FROM job_sides WHERE job_id = c.cp_job AND side = 'A') "
						"FROM confirmations c", "");
		if (st && db_step(st) == DB_ROW) {
			int64_t cp_before = db_col_int64(st, 7);

			cid = db_col_int64(st, 0);
			cj = db_col_int64(st, 1);
			cp_job = db_col_int64(st, 2);
			ok(cp_job > 0, "the row names its change point's job (%lld)", (long long)cp_job);
			ok(db_col_double(st, 3) < -1.0, "with the change point's change (%+.2f%%)", db_col_double(st, 3));
			is_str(db_col_text(st, 4), "pending", "pending until the confirmation job ends");
			ka = db_col_int64(st, 5);
			kb = db_col_int64(st, 6);
			is_int(ka, cp_before, "side A: the kernel of the night before the change point");
			is_int(kb, 100 + first_cp_night, "side B: the kernel of the night it was found");
		} else {
			ok(0, "a confirmation row");
			cid = 0;
		}
		db_finalize(st);
	}
	{
		struct job_spec spec;

		spec_of(db, cj, &spec);
		is_str(spec.kind, "confirm", "the queued job is a confirmation");
		is_int(spec.observe_boots, 0, "it has no observation run: its answer is a statistic (its job's is 1)");
		is_int(spec.confirms, count(db, f("SELECT job_id FROM confirmations WHERE id = %lld",
								  (long long)cid)),
		       "of the nightly that found the change point");
		job_spec_release(&spec);
	}
	{
		struct buf t = BUF_INIT;
		int64_t nj = count(db, f("SELECT job_id FROM confirmations WHERE id = %lld", (long long)cid));

		ok(confirm_text(db, nj, "rr", "tps", &t), "the nightly's page has a confirmation line");
		ok(strstr(t.buf, "change point at job ") && strstr(t.buf, "not reported yet: confirmation job"),
		   "it says the change point queued it and that nothing is reported yet: %s", t.buf);
		buf_release(&t);
		{
			char *m = mail_of(db, nj);

			ok(m && strstr(m, "change point at job "), "and so does its mail");
			free(m);
		}
	}

	/* the confirmation measures the two kernels again: the same -3% */
	runs(db, cj, level[0], level[first_cp_night]);
	ok(!finish(db, &cfg, cj), "the confirmation job ends done");
	{
		char *state = NULL, *err = NULL;

		db_get_str(db, &state, "SELECT state FROM confirmations WHERE id = ?", "i", cid);
		db_get_str(db, &err, "SELECT error FROM confirmations WHERE id = ?", "i", cid);
		is_str(state, "confirmed", "the drift is confirmed");
		/* a regression is bisected; this tree is a tarball, so the reason is kept instead */
		ok(err && *err, "the bisection that could not start says why: %s", err ? err : "(none)");
		free(state);
		free(err);
	}

	/* a step the night-to-night comparison sees: CHANGED, confirmed as its own night's change */
	{
		int64_t before = count(db, "SELECT count(*) FROM confirmations"), step;

		step = night(db, &cfg, nights, level[nights - 1], level[nights - 1] * 0.95);
		ok(step > 0, "a night with a -5%% step");
		is_int(count(db, "SELECT count(*) FROM confirmations") - before, 1, "queues one confirmation");
		ok(mail && strstr(mail, "not reported yet: a confirmation job measures it again before it counts"),
		   "the night's mail says its change does not count until it is confirmed");
		{
			char *after = mail_of(db, step);

			ok(after && strstr(after, "not reported yet: confirmation job "),
			   "once queued, the mail names the confirmation job");
			free(after);
		}
		is_int(count(db, f("SELECT count(*) FROM confirmations WHERE job_id = %lld AND cp_job IS NULL "
					       "AND change_pct < -4", (long long)step)), 1,
		       "of the night's own CHANGED verdict (no change point named)");
	}
	/*
	 * A history point is the mean of its night's side-B boots, each the mean
	 * of the boot's measured runs: the observation runs (tps halved on A,
	 * doubled on B) are not among them.
	 */
	{
		struct history_series *hs = NULL;
		size_t nhs = 0, off = 0, pts = 0;

		ok(!history_analyse(db, "rr", "tps", NULL, NULL, 1.0, &hs, &nhs) && nhs == 1, "one history series");
		for (size_t i = 0; nhs == 1 && i < hs->n && i < (size_t)nights; i++) {
			pts++;
			if (hs->pts[i].n_boots != 2 || fabs(hs->pts[i].value / level[i] - 1) > 0.001)
				off++;
		}
		ok(pts == (size_t)nights && !off, "its %zu nights' points are their measured runs' level, "
		   "2 boots each (%zu off)", pts, off);
		history_free(hs, nhs);
	}
	/*
	 * A bisection step's values (bisect_run.c classifies a commit by them): one
	 * per boot, the mean of its measured runs, never its observation run.
	 */
	{
		double *x = NULL;
		size_t nx = 0, off = 0;
		int64_t bj = 900;

		db_exec(db, "INSERT INTO bisections (id, tree, good, bad, good_ref, bad_ref, workload, metric, alpha, "
			    "spec, created) VALUES (5, 't', 'g', 'b', 'g', 'b', 'rr', 'tps', 0.01, '{}', 0)");
		db_run(db, "INSERT INTO jobs (id, name, state, spec, created, bisection_id, bisect_seq) "
		       "VALUES (?, 'night', 'done', '{\"warmup_runs\": 1}', 0, 5, 2)", "i", bj);
		runs(db, bj, 80000, 90000);
		ok(!runs_bisect_step_values(db, 5, 2, "B", "rr", "tps", &x, &nx), "the step's values load");
		for (size_t i = 0; i < nx; i++)
			off += fabs(x[i] / 90000 - 1) > 0.001;
		ok(nx == 2 && !off, "side B of the step: 2 boot values at its measured level (%zu of %zu off)", off, nx);
		free(x);
		ok(!runs_bisect_step_values(db, 5, 2, "A", "rr", "tps", &x, &nx) && nx == 2 &&
		   fabs(x[0] / 80000 - 1) < 0.001 && fabs(x[1] / 80000 - 1) < 0.001, "and so is side A");
		free(x);
	}
	free(mail);
	db_close(db);
	conf_free(&cfg);
	return done_testing();
}
