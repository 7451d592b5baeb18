/* job.c: the job state machine: find and cancel, the run lock, the step table, and the loop that runs and resumes it. */
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/db.h"
#include "store/jobs.h"
#include "store/machines.h"
#include "store/runs.h"
#include "job/job.h"
#include "job/job_int.h"
#include "jsonh.h"
#include "lab/lease.h"
#include "lock.h"
#include "log.h"
#include "progress.h"
#include "strvec.h"
#include "util.h"

int job_find(struct db *db, const char *name_or_id, int64_t *id)
{
	long v;
	int r;

	if (!parse_long(name_or_id, 1, LONG_MAX, &v)) {
		r = jobs_exists(db, v);
		if (r == 1) {
			*id = v;
			return 0;
		}
		return r < 0 ? -1 : error("no job %ld", v);
	}
	r = jobs_find_name(db, name_or_id, id);
	if (r == 1)
		return 0;
	return r < 0 ? -1 : error("no job named '%s' (klab jobs lists them)", name_or_id);
}

int job_cancel(struct db *db, int64_t id)
{
	char *state = NULL;
	int ret = -1;

	if (db_begin(db))
		return -1;
	if (jobs_get_str(db, id, JOB_STATE, &state) != 1) {
		db_rollback(db);
		return error("no job %lld", (long long)id);
	}
	if (!strcmp(state, "queued")) {
		if (jobs_cancel_queued(db, id, now_wall()))
			goto out;
	} else if (!strcmp(state, "running")) {
		if (jobs_request_cancel(db, id))
			goto out;
	} else {
		error("job %lld is already %s", (long long)id, state);
		goto out;
	}
	if (db_commit(db))
		goto out;
	free(state);
	return 0;
out:
	db_rollback(db);
	free(state);
	return ret;
}

int job_is_live(struct db *db, int64_t id)
{
	return db_run_lock_held(db, "job", id);
}

/* Before each step after the lease: extend it, or take the pair again if it was lost. */
static int keep_lease(struct job_ctx *j, struct buf *err)
{
	struct buf why = BUF_INIT;
	int ret = 0;

	if (!j->leased || !lease_renew(j->db, j->id, j->ttl_s))
		return 0;
	if (!j->dut || !j->peer)
		return error_to(err, "cannot renew the lease of job %lld, and its machines are not known",
				(long long)j->id);
	warn("job %lld lost its lease on '%s' and '%s'; taking them again", (long long)j->id,
	     j->dut->name, j->peer->name);
	for (;;) {
		buf_reset(&why);
		/* a child of a round takes its pair back as a pair more, the job's own pair stays */
		enum lease_status s = j->slot ? lease_acquire_extra(j->db, j->id, j->dut->name, j->peer->name, j->ttl_s, &why)
					      : lease_acquire(j->db, j->id, j->dut->name, j->peer->name, j->ttl_s, &why);
		if (s == LEASE_OK)
			break;
		if (s != LEASE_BUSY || (j->o->stop && *j->o->stop)) {
			ret = error_to(err, "cannot lease machines again: %s", why.buf);
			break;
		}
		sleep(1);
	}
	buf_release(&why);
	return ret;
}

/*
 * The step table, in plan order: which function runs a key of the plan
 * (job_plan.c makes the keys). A key matches an entry by its prefix, or
 * for "boot:N:SUFFIX" keys by the suffix. `machines` marks the steps that
 * need the leased pair, so a job resumed after the lease finds its
 * machines again before them. A new step is a row here, its function in
 * job_steps.c and its keys in job_plan().
 */
struct step_def {
	const char *prefix;	/* key prefix, or ":SUFFIX" of "boot:N:SUFFIX" */
	const char *name;	/* steps.name */
	int (*fn)(struct job_ctx *j, const char *key);
	int machines;		/* runs on the leased machines */
};

static const struct step_def step_table[] = {
	{ "intake", "intake", step_intake, 0 },
	{ "build:", "build", step_build, 0 },
	{ "lease", "lease", step_lease, 0 },
	{ ":deploy", "deploy", step_deploy, 1 },
	{ ":verify", "verify", step_verify, 1 },
	{ ":agent", "agent", step_agent, 1 },
	{ ":prepare", "prepare", step_prepare, 1 },
	{ "run:", "run", step_run, 1 },
	{ "obs:", "observe", step_run, 1 },
	{ ":restore", "restore", step_restore, 1 },
	{ "look:", "look", step_look, 0 },
	{ "release", "release", step_release, 0 },
	{ "compare", "compare", step_compare, 0 },
	{ "report", "report", step_report, 0 },
	{ "notify", "notify", step_notify, 0 },
};

static const struct step_def *lookup_step(const char *key)
{
	for (size_t i = 0; i < ARRAY_SIZE(step_table); i++) {
		const char *p = step_table[i].prefix;
		if ((p[0] == ':' && starts_with(key, "boot:") && ends_with(key, p)) ||
		    (p[0] != ':' && starts_with(key, p)))
			return &step_table[i];
	}
	return NULL;
}

/* A boot's step after a look decided every headline verdict (boots = MIN..MAX). */
static int step_not_needed(struct job_ctx *j, const char *key)
{
	return skip_step(j, "not needed: every headline verdict was decided after %d boots per side", j->last_boot / 2);
}

/*
 * The expected seconds of step KEY (the current one) into *EXPECT_S
 * (job_expected(); a run's first time: its warmup and duration; <= 0 not
 * known) and the job's ETA as words for its progress line (" (job ETA
 * 4m10s)", or "").
 */
static void step_expect(struct job_ctx *j, const char *key, double *expect_s, char *eta, size_t n)
{
	double *e = xcalloc(j->plan.n, sizeof(*e));

	*expect_s = 0;
	eta[0] = '\0';
	if (job_expected(j->db, j->id, &j->plan, e) == 0) {
		double left;

		if (e[j->pos] < 0 && (starts_with(key, "run:") || starts_with(key, "obs:"))) {
			/* run:BOOT:WORKLOAD:N, obs:BOOT:WORKLOAD:MONITOR: no run of it ended yet; its time as the spec says, 3 s for the server and the agent */
			const char *w = strchr(key + 4, ':'), *end = w ? strrchr(w + 1, ':') : NULL;
			char *name = end ? xstrndup(w + 1, (size_t)(end - w - 1)) : NULL;
			const struct job_spec_workload *wo = name ? job_spec_workload(&j->spec, name) : NULL;

			if (wo)
				e[j->pos] = wo->warmup_s + wo->duration_s + 3;
			free(name);
		}
		*expect_s = e[j->pos];
		/* pairs = N: N boots go at once (job_pairs.c), so a boot's steps take 1/N of the job's time */
		for (size_t i = 0; j->spec.pairs > 1 && i < j->plan.n; i++)
			if (e[i] > 0 && step_boot(j->plan.v[i]))
				e[i] /= j->spec.pairs;
		left = progress_eta_items(e, j->plan.n, j->pos, 0);
		if (left >= 0) {
			char d[32];

			progress_fmt_duration(d, sizeof(d), left);
			snprintf(eta, n, " (job ETA %s)", d);
		}
	}
	free(e);
}

/*
 * Run step KEY of the plan (by S) unless it is done already: recorded as
 * running, run, recorded as it ended. Before it: a cancel or stop request
 * ends the job here, and the lease is renewed. STEP_OK or a STEP_*.
 */
static int do_step(struct job_ctx *j, const char *key, const struct step_def *s)
{
	struct step_row row;
	struct progress_clock clock;
	double expect_s;
	char eta[48];
	int64_t t;
	int rc;
	const char *state_after;
	struct buf detail = BUF_INIT, why = BUF_INIT;

	rc = steps_get(j->db, j->id, key, &row);
	if (rc < 0)
		return step_fail(j, "cannot read step '%s': %s", key, db_error(j->db));
	j->attempt = 1;
	j->step_started_prev = 0;
	if (rc == 1) {
		if (!strcmp(row.state, "done") || !strcmp(row.state, "skipped")) {
			free(row.state);
			return STEP_OK;
		}
		j->attempt = row.attempts + 1;
		j->step_started_prev = row.started;
	}
	free(row.state);

	if (cancel_requested(j))
		return STEP_CANCEL;
	if (j->o->stop && *j->o->stop)
		return STEP_STOP;
	if (j->leased && keep_lease(j, &why)) {
		step_fail(j, "lost the machines: %s", why.buf);
		buf_release(&why);
		return STEP_FAIL;
	}

	if (steps_start(j->db, j->id, key, s->name, now_wall()))
		return step_fail(j, "cannot record step '%s': %s", key, db_error(j->db));
	step_expect(j, key, &expect_s, eta, sizeof(eta));
	job_print(j, "%zu/%zu %s%s%s", j->pos + 1, j->plan.n, key, j->attempt > 1 ? " (resumed)" : "", eta);
	test_kill_point(j, key, "start");

	buf_reset(&j->why);
	j->detail = json_object_new_object();
	t = now_ms();
	if (j->o->progress && !j->slot) {	/* the children of a round print lines, not one clock line each */
		char label[160];

		snprintf(label, sizeof(label), "%zu/%zu %s", j->pos + 1, j->plan.n, key);
		progress_clock_start(&clock, label, expect_s, stdout);
	}
	rc = s->fn(j, key);
	if (j->o->progress && !j->slot)
		progress_clock_stop(&clock);
	state_after = rc == DONE ? "done" : rc == SKIPPED ? "skipped" : rc == STEP_FAIL ? "failed" : NULL;
	json_to_buf(&detail, j->detail, 0);
	json_object_put(j->detail);
	j->detail = NULL;
	if (state_after) {
		steps_end(j->db, j->id, key, state_after, now_wall(), rc == DONE ? NULL : j->why.buf, detail.buf);
		if (rc == SKIPPED)
			job_print(j, "%zu/%zu %s skipped: %s", j->pos + 1, j->plan.n, key, j->why.buf);
		else if (rc == STEP_FAIL)
			job_print(j, "%zu/%zu %s FAILED after %.1f s: %s", j->pos + 1, j->plan.n, key,
				 (now_ms() - t) / 1000.0, j->why.buf);
		else if (now_ms() - t >= 1000)
			job_print(j, "%zu/%zu %s done in %.1f s", j->pos + 1, j->plan.n, key, (now_ms() - t) / 1000.0);
	} else {
		/* Interrupted (cancel, stop, busy): the step starts over next time. */
		steps_interrupted(j->db, j->id, key, now_wall(), rc == STEP_CANCEL ? "cancelled" :
				  rc == STEP_STOP ? "stopped" : j->why.buf);
	}
	buf_release(&detail);
	return rc == DONE || rc == SKIPPED ? STEP_OK : rc;
}

/*
 * A run step found the dut out of its boot's state (STEP_REBOOT): the
 * steps of boot B from deploy to prepare are marked failed, so that they
 * run again (deploy boots the kernel again; with boot = none it is skipped
 * again, and prepare applies the tuning again after a restore of whatever
 * is left of it), and the loop goes back to them. Runs stored in the boot
 * stay (each was checked before and after it); a boot redone twice in one
 * job run fails the job, as the machine does not keep a state.
 */
static int redo_boot(struct job_ctx *j, int *redone)
{
	static const char *const parts[] = { "deploy", "verify", "agent", "prepare" };
	char *first;
	int b;

	if (sscanf(j->plan.v[j->pos], "run:%d:", &b) != 1 && sscanf(j->plan.v[j->pos], "obs:%d:", &b) != 1)
		return step_fail(j, "bad step key '%s'", j->plan.v[j->pos]);
	if (++*redone > 2)
		return step_fail(j, "machine '%s' lost its boot's state again after boot %d was redone twice: %s",
				 j->dut->name, b, j->why.buf);
	warn("job %lld: %s; redoing boot %d", (long long)j->id, j->why.buf, b);
	if (restore_boot(j, b, NULL) < 0)
		warn("job %lld: cannot restore what is left of boot %d's tuning; prepare will say more",
		     (long long)j->id, b);
	for (size_t i = 0; i < ARRAY_SIZE(parts); i++) {
		char *k = xasprintf("boot:%d:%s", b, parts[i]);
		steps_redo(j->db, j->id, k, j->why.buf);
		free(k);
	}
	first = xasprintf("boot:%d:deploy", b);
	for (size_t i = 0; i < j->plan.n; i++)
		if (!strcmp(j->plan.v[i], first)) {
			j->pos = i - 1;	/* the loop steps to it */
			free(first);
			return STEP_OK;
		}
	free(first);
	return step_fail(j, "boot %d has no deploy step in the plan", b);
}

/* A child of a round (job_pairs.c): boot B's steps alone, in plan order. */
static int run_boot_steps(struct job_ctx *j, int b)
{
	int rc = STEP_OK, redone = 0;

	for (j->pos = 0; j->pos < j->plan.n; j->pos++) {
		const char *key = j->plan.v[j->pos];
		const struct step_def *s;

		if (step_boot(key) != b)
			continue;
		if (!(s = lookup_step(key)))
			return step_fail(j, "unknown step '%s' in the plan", key);
		rc = do_step(j, key, s);
		if (rc == STEP_REBOOT)
			rc = redo_boot(j, &redone);
		if (rc != STEP_OK)
			break;
	}
	return rc;
}

/* After a failure or cancel: put the machine back and let the machines go. */
static void cleanup(struct job_ctx *j)
{
	if (!j->dut && j->leased)
		resolve_machines(j, NULL);
	if (j->dut) {
		const struct conf_machine *own_dut = j->dut, *own_peer = j->peer;

		for (size_t b = 1; b <= strlen(j->order); b++) {
			char *k = xasprintf("boot:%zu:restore", b), *st = NULL, *on = NULL;
			const struct conf_machine *m = NULL;

			/* a boot of a round ran on another pair of the pool (job_pairs.c): restored there */
			boots_get(j->db, j->id, (int)b, BOOT_MACHINE, &on);
			if (on && strcmp(on, j->dut->name) && (m = conf_machine(j->cfg, on)) && m->peer &&
			    conf_machine(j->cfg, m->peer)) {
				close_machines(j);
				use_machines(j, m, conf_machine(j->cfg, m->peer));
			}
			step_state(j, k, &st);
			if (!st || strcmp(st, "done"))
				if (restore_boot(j, (int)b, NULL) == 0)
					info("restored machine '%s' after boot %zu", j->dut->name, b);
			if (j->dut != own_dut) {
				close_machines(j);
				use_machines(j, own_dut, own_peer);
			}
			free(on);
			free(st);
			free(k);
		}
	}
	close_machines(j);
	lease_release(j->db, j->id);
	j->leased = 0;
}

static int finish(struct job_ctx *j, const char *state, const char *err)
{
	return jobs_finish(j->db, j->id, state, err, now_wall());
}

int job_run(struct klab_config *cfg, struct db *db, const char *db_path, int64_t id,
	    const struct job_run_opts *o)
{
	struct job_ctx j;
	char *state = NULL, *spec = NULL, *err = NULL;
	int lock, ret = -1, rc = STEP_OK, redone = 0;
	int64_t leases = 0, seed = 0;
	char prefix[32];

	(void)db_path;
	memset(&j, 0, sizeof(j));
	j.cfg = cfg;
	j.db = db;
	j.id = id;
	j.o = o;
	j.t0 = now_ms();
	buf_init(&j.err, 0);
	strvec_init(&j.plan);

	lock = db_run_lock(db, "job", id);
	if (lock == 1 && o->taken_quiet)
		return JOB_RUN_TAKEN;
	if (lock == 1)
		return error("job %lld is being run by another process", (long long)id);
	if (lock < 0)
		return -1;
	if (jobs_get_str(db, id, JOB_STATE, &state) != 1 || jobs_get_str(db, id, JOB_SPEC, &spec) != 1) {
		error("no job %lld", (long long)id);
		goto out;
	}
	if (strcmp(state, "queued") && strcmp(state, "running")) {
		jobs_get_str(db, id, JOB_ERROR, &err);
		printf("job %lld is already %s%s%s\n", (long long)id, state, err ? ": " : "", err ? err : "");
		ret = !strcmp(state, "done") ? 0 : 1;
		goto out;
	}
	if (job_spec_parse(spec, &j.spec))
		goto out;
	jobs_get_int(db, id, JOB_ORDER_SEED, &seed);
	j.seed = seed;
	j.order = spec_order(&j.spec, seed);
	if (job_plan(&j.spec, seed, &j.plan))
		goto out;
	j.agent_local = find_local_agent(o->agent_local);
	j.agent_remote = xasprintf("%s/klab-agent", cfg->lab.agent_dir ? cfg->lab.agent_dir : "/var/lib/klab-agent");
	{
		/* A lease outlives the longest step: a boot, or a run with its slack. */
		long longest = cfg->lab.boot_timeout_ms > 0 ? cfg->lab.boot_timeout_ms / 1000 : 300;
		for (size_t i = 0; i < j.spec.n_workloads; i++) {
			const struct job_spec_workload *w = &j.spec.workloads[i];
			long t = (long)(w->warmup_s + w->duration_s) + 90;
			if (t > longest)
				longest = t;
		}
		j.ttl_s = (int)(2 * longest + 120);
	}
	snprintf(prefix, sizeof(prefix), "job %lld", (long long)id);
	if (!o->progress)
		log_set_prefix(prefix);
	if (jobs_set_running(db, id, (int64_t)getpid(), now_wall()))
		goto out;
	j.last_boot = decided_last_boot(&j);
	leases_count_job(db, id, &leases);
	if (leases) {
		j.leased = 1;
		resolve_machines(&j, NULL);
	}
	job_print(&j, "job %lld '%s' (%s): %zu steps, boot order %s, seed %lld%s", (long long)id,
		 j.spec.name, j.spec.kind, j.plan.n, j.order, (long long)seed,
		 !strcmp(state, "running") ? ", resuming" : "");

	for (j.pos = 0; j.pos < j.plan.n; j.pos++) {
		const char *key = j.plan.v[j.pos];
		const struct step_def *s = lookup_step(key);

		if (!s) {
			rc = step_fail(&j, "unknown step '%s' in the plan", key);
			break;
		}
		if (j.last_boot && key_boot(key) > j.last_boot) {
			/* a look decided: the later boots are skipped, recorded like any step (a resume skips them too) */
			struct step_def skip = *s;

			skip.fn = step_not_needed;
			rc = do_step(&j, key, &skip);
			if (rc != STEP_OK)
				break;
			continue;
		}
		if (j.spec.pairs > 1 && starts_with(key, "boot:") && ends_with(key, ":deploy")) {
			/* boots on several pairs at once; boot B's steps are then done, or the loop runs them here */
			rc = run_round(&j, key_boot(key), run_boot_steps);
			if (rc != STEP_OK)
				break;
		}
		if (s->machines && !j.dut) {
			struct buf why = BUF_INIT;

			if (resolve_machines(&j, &why)) {
				rc = step_fail(&j, "step %s: the job has no machines: %s", key, why.buf);
				buf_release(&why);
				break;
			}
			buf_release(&why);
		}
		rc = do_step(&j, key, s);
		if (rc == STEP_REBOOT)
			rc = redo_boot(&j, &redone);
		if (rc != STEP_OK)
			break;
	}

	switch (rc) {
	case STEP_OK:
		finish(&j, "done", NULL);	/* what follows a job done: after_job_run() */
		job_print(&j, "job %lld done in %.1f s", (long long)id, (now_ms() - j.t0) / 1000.0);
		ret = 0;
		break;
	case STEP_FAIL: {
		char *reason = xasprintf("step %s failed: %s", j.plan.v[j.pos < j.plan.n ? j.pos : 0], j.why.buf);
		cleanup(&j);
		finish(&j, "failed", reason);
		if (!o->progress)
			log_msg(LOG_NOTICE, "job %lld '%s' failed: %s", (long long)id, j.spec.name, reason);
		notify_command(&j, "failed", reason);
		job_print(&j, "job %lld FAILED: %s", (long long)id, reason);
		free(reason);
		ret = 1;
		break;
	}
	case STEP_CANCEL:
		cleanup(&j);
		finish(&j, "cancelled", "cancelled by request");
		job_print(&j, "job %lld cancelled; machines released", (long long)id);
		ret = 1;
		break;
	case STEP_WAIT:
		/* Machines busy and no waiting: the job goes back to the queue. */
		jobs_requeue(db, id);
		job_print(&j, "job %lld stays queued: %s", (long long)id, j.why.buf);
		ret = 2;
		break;
	case STEP_STOP:
	default:
		close_machines(&j);
		jobs_clear_pid(db, id);
		job_print(&j, "job %lld stopped; it resumes from step %s", (long long)id,
			 j.plan.v[j.pos < j.plan.n ? j.pos : 0]);
		ret = 2;
		break;
	}
out:
	close_machines(&j);
	job_spec_release(&j.spec);
	strvec_clear(&j.plan);
	free(j.order);
	free(j.agent_local);
	free(j.agent_remote);
	free(j.state_dut);
	free(j.state_peer);
	buf_release(&j.why);
	buf_release(&j.err);
	free(state);
	free(spec);
	free(err);
	if (!o->progress)
		log_set_prefix(NULL);
	db_run_unlock(db, "job", id);
	return ret;
}
