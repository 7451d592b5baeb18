/* job.c: the job state machine: spec and plan, steps recorded in sqlite, run/resume after a crash, cancel. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "build.h"
#include "compare.h"
#include "db.h"
#include "deploy.h"
#include "job.h"
#include "jsonh.h"
#include "lab_qemu.h"
#include "lease.h"
#include "lock.h"
#include "log.h"
#include "report.h"
#include "result.h"
#include "rng.h"
#include "run.h"
#include "series.h"
#include "ssh.h"
#include "strvec.h"
#include "util.h"

/* ---------------------------------------------------------------------- */
/* Order. */

void job_order(int boots, int64_t seed, int fixed, char *out)
{
	uint64_t r[4];
	int n = 0;

	xoshiro_seed(r, (uint64_t)seed);
	for (int pair = 0; pair < boots; pair += 2) {
		char x = 'A', y = 'B';
		if (!fixed && (xoshiro_next(r) >> 63)) {
			x = 'B';
			y = 'A';
		}
		out[n++] = x;
		out[n++] = y;
		if (pair + 1 < boots) {
			out[n++] = fixed ? x : y;
			out[n++] = fixed ? y : x;
		}
	}
	out[n] = '\0';
}

/* ---------------------------------------------------------------------- */
/* Spec and submit. */

static struct json_object *jstr(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

static const char *spec_str(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static int64_t spec_int(struct json_object *o, const char *key, int64_t def)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !v)
		return def;
	return json_object_get_int64(v);
}

static double spec_double(struct json_object *o, const char *key, double def)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !v)
		return def;
	return json_object_get_double(v);
}

static struct json_object *spec_get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	json_object_object_get_ex(o, key, &v);
	return v;
}

static struct json_object *profile_json(const struct conf_profile *p)
{
	struct json_object *o = json_object_new_object(), *sys = json_object_new_object();

	json_object_object_add(o, "name", jstr(p->name));
	if (p->channels)
		json_object_object_add(o, "channels", json_object_new_int(p->channels));
	if (p->xps)
		json_object_object_add(o, "xps", jstr(p->xps));
	if (p->rps)
		json_object_object_add(o, "rps", jstr(p->rps));
	if (p->irq_affinity)
		json_object_object_add(o, "irq_affinity", jstr(p->irq_affinity));
	if (p->governor)
		json_object_object_add(o, "governor", jstr(p->governor));
	if (p->qdisc)
		json_object_object_add(o, "qdisc", jstr(p->qdisc));
	for (size_t i = 0; i < p->n_sysctls; i++) {
		const char *k = p->sysctls[i].key;
		const char *s = skip_prefix(k, "sysctl.");
		json_object_object_add(sys, s ? s : k, jstr(p->sysctls[i].value));
	}
	json_object_object_add(o, "sysctls", sys);
	return o;
}

static int workload_json(const struct conf_workload *w, struct json_object **out)
{
	struct json_object *o = json_object_new_object(), *params = json_object_new_object();
	struct json_object *mon = json_object_new_array();
	long dur_ms = 10000, warm_ms = 2000;

	for (size_t i = 0; i < w->n_params; i++) {
		const char *k = w->params[i].key, *v = w->params[i].value;
		if (!strcmp(k, "duration")) {
			if (parse_duration_ms(v, &dur_ms))
				goto bad;
		} else if (!strcmp(k, "warmup")) {
			if (parse_duration_ms(v, &warm_ms))
				goto bad;
		} else {
			json_object_object_add(params, k, jstr(v));
		}
	}
	for (size_t i = 0; i < w->monitors.n; i++)
		json_object_array_add(mon, jstr(w->monitors.v[i]));
	json_object_object_add(o, "name", jstr(w->name));
	json_object_object_add(o, "type", jstr(w->type));
	json_object_object_add(o, "params", params);
	json_object_object_add(o, "duration_s", json_object_new_double(dur_ms / 1000.0));
	json_object_object_add(o, "warmup_s", json_object_new_double(warm_ms / 1000.0));
	json_object_object_add(o, "monitors", mon);
	if (w->perf_events)
		json_object_object_add(o, "perf_events", jstr(w->perf_events));
	if (w->bpftrace) {
		struct buf b = BUF_INIT;
		if (buf_read_file(&b, w->bpftrace)) {
			buf_release(&b);
			json_object_put(o);
			return error("workload '%s': cannot read its bpftrace script '%s'", w->name, w->bpftrace);
		}
		json_object_object_add(o, "bpftrace_script", jstr(b.buf));
		buf_release(&b);
	}
	json_object_object_add(o, "threshold_pct", json_object_new_double(w->threshold_pct));
	if (w->headline)
		json_object_object_add(o, "headline", jstr(w->headline));
	*out = o;
	return 0;
bad:
	json_object_put(o);
	return error("workload '%s': bad duration or warmup", w->name);
}

static int64_t random_seed(void)
{
	uint64_t x = 0;
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

	if (fd < 0 || read(fd, &x, sizeof(x)) != (ssize_t)sizeof(x))
		x = (uint64_t)now_ms() ^ ((uint64_t)getpid() << 32);
	if (fd >= 0)
		close(fd);
	return (int64_t)(x & 0x7fffffffLL);
}

/*
 * The kernel side A of a nightly: side B of the newest nightly of the same
 * schedule that ended done on the same machines (0: none).
 */
static int64_t previous_nightly_kernel(struct db *db, const char *schedule, const char *dut,
				       const char *peer, int64_t *job)
{
	struct db_stmt *st = db_prepare(db, "SELECT s.kernel_id, j.id FROM jobs j JOIN job_sides s ON "
				      "s.job_id = j.id AND s.side = 'B' WHERE j.schedule = ? AND j.state = 'done' "
				      "AND j.dut IS ? AND j.peer IS ? AND s.kernel_id IS NOT NULL "
				      "ORDER BY j.id DESC LIMIT 1", "sss", schedule, dut, peer);
	int64_t k = 0;

	if (!st)
		return 0;
	if (db_step(st) == DB_ROW) {
		k = db_col_int64(st, 0);
		*job = db_col_int64(st, 1);
	}
	db_finalize(st);
	return k;
}

static struct json_object *side_json(const char *side, const char *label, const char *ref,
				      const char *variant, const char *profile, int build)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "side", jstr(side));
	json_object_object_add(o, "label", jstr(label));
	json_object_object_add(o, "ref", jstr(ref));
	json_object_object_add(o, "variant", jstr(variant));
	json_object_object_add(o, "profile", jstr(profile));
	json_object_object_add(o, "build", json_object_new_boolean(build));
	return o;
}

int64_t job_submit(struct db *db, const struct klab_config *cfg, const struct job_submit_opts *o)
{
	const struct conf_job *cj = conf_job(cfg, o->job);
	struct json_object *spec = NULL, *sides, *wl, *profiles, *machines;
	const char *series, *base, *test, *kind, *dut_profile = NULL;
	const struct conf_machine *dut = NULL, *peer = NULL;
	int64_t id = -1, seed, prev_job = 0, prev_kernel = 0;
	int boot_none = 0;
	struct buf text = BUF_INIT;
	char prefix[64];

	if (!cj)
		return error("no job '%s' in the config (jobs are [job \"NAME\"] sections)", o->job);
	series = o->series ? o->series : cj->series;
	base = o->base ? o->base : cj->base;
	test = o->test ? o->test : cj->test;
	if (o->series && o->test)
		return error("job '%s': give a series or a test ref, not both", o->job);
	if (cj->machines.n) {
		if (cj->machines.n != 2)
			return error("job '%s': machines must name a dut and a peer, not %zu machine(s)",
				     o->job, cj->machines.n);
		dut = conf_machine(cfg, cj->machines.v[0]);
		peer = conf_machine(cfg, cj->machines.v[1]);
		if (!dut || !peer)
			return error("job '%s': machine '%s' is not in the config", o->job,
				     !dut ? cj->machines.v[0] : cj->machines.v[1]);
		boot_none = dut->boot == BOOT_NONE;
		dut_profile = dut->profile;
	} else if (!cj->pool) {
		return error("job '%s': give machines (dut peer) or a pool", o->job);
	} else {
		for (size_t i = 0; i < cfg->n_machines; i++)
			if (cfg->machines[i].pool && !strcmp(cfg->machines[i].pool, cj->pool) &&
			    cfg->machines[i].role == ROLE_DUT) {
				boot_none = cfg->machines[i].boot == BOOT_NONE;
				dut_profile = cfg->machines[i].profile;
				break;
			}
	}
	if (!cj->workloads.n)
		return error("job '%s': no workloads", o->job);

	spec = json_object_new_object();
	sides = json_object_new_array();
	json_object_object_add(spec, "sides", sides);	/* spec owns it from here */
	if ((cj->profile_a || cj->profile_b) && !series && !test) {
		const char *pa = cj->profile_a ? cj->profile_a : dut_profile;
		const char *pb = cj->profile_b ? cj->profile_b : dut_profile;
		kind = "tuning";
		json_object_array_add(sides, side_json("A", pa ? pa : "default", base, "base", pa, !boot_none));
		json_object_array_add(sides, side_json("B", pb ? pb : "default", base, "base", pb, 0));
	} else if (series) {
		kind = "series";
		json_object_array_add(sides, side_json("A", "base", base, "base", dut_profile, 1));
		json_object_array_add(sides, side_json("B", "patched", base, "patched", dut_profile, 1));
	} else if (test) {
		kind = "refs";
		json_object_array_add(sides, side_json("A", base ? base : "base", base, "base", dut_profile, 1));
		json_object_array_add(sides, side_json("B", test, test, "test", dut_profile, 1));
	} else {
		/*
		 * Nothing to compare with inside the job: a nightly. Side B is
		 * the tree's tip; side A is the previous nightly's kernel on the
		 * same machines, when there is one.
		 */
		kind = "nightly";
		if (o->schedule && dut)
			prev_kernel = previous_nightly_kernel(db, o->schedule, dut->name, peer->name, &prev_job);
		if (prev_kernel) {
			struct json_object *a = side_json("A", "previous", NULL, "base", dut_profile, 0);
			json_object_object_add(a, "kernel_id", json_object_new_int64(prev_kernel));
			json_object_object_add(a, "from_job", json_object_new_int64(prev_job));
			json_object_array_add(sides, a);
		}
		json_object_array_add(sides, side_json("B", "tip", base, "nightly", dut_profile, !boot_none));
	}
	if (boot_none && (!strcmp(kind, "series") || !strcmp(kind, "refs"))) {
		error("job '%s' compares two kernels, but its dut '%s' has boot = none and cannot change "
		      "kernel (use profile_a/profile_b for a tuning A/B, or a kexec or qemu machine)",
		      o->job, dut ? dut->name : cj->pool);
		goto out;
	}

	wl = json_object_new_array();
	json_object_object_add(spec, "workloads", wl);
	for (size_t i = 0; i < cj->workloads.n; i++) {
		const struct conf_workload *w = conf_workload(cfg, cj->workloads.v[i]);
		struct json_object *wj = NULL;
		if (!w) {
			error("job '%s': workload '%s' is not in the config", o->job, cj->workloads.v[i]);
			goto out;
		}
		if (workload_json(w, &wj)) {
			goto out;
		}
		json_object_array_add(wl, wj);
	}
	profiles = json_object_new_object();
	json_object_object_add(spec, "profiles", profiles);
	for (size_t i = 0; i < json_object_array_length(sides); i++) {
		const char *pn = spec_str(json_object_array_get_idx(sides, i), "profile");
		const struct conf_profile *p;
		if (!pn || json_object_object_get_ex(profiles, pn, NULL))
			continue;
		p = conf_profile(cfg, pn);
		if (!p) {
			error("job '%s': profile '%s' is not in the config", o->job, pn);
			goto out;
		}
		json_object_object_add(profiles, pn, profile_json(p));
	}

	seed = o->seed >= 0 ? o->seed : cj->seed >= 0 ? cj->seed : random_seed();
	json_object_object_add(spec, "version", json_object_new_int(1));
	json_object_object_add(spec, "name", jstr(cj->name));
	json_object_object_add(spec, "kind", jstr(kind));
	json_object_object_add(spec, "tree", jstr(cj->tree));
	json_object_object_add(spec, "base", jstr(base));
	json_object_object_add(spec, "test", jstr(test));
	json_object_object_add(spec, "series", jstr(series));
	{
		struct json_object *lp = json_object_new_array();
		for (size_t i = 0; i < cj->local_patches.n; i++)
			json_object_array_add(lp, jstr(cj->local_patches.v[i]));
		json_object_object_add(spec, "local_patches", lp);
	}
	machines = json_object_new_array();
	for (size_t i = 0; i < cj->machines.n; i++)
		json_object_array_add(machines, jstr(cj->machines.v[i]));
	json_object_object_add(spec, "machines", machines);
	json_object_object_add(spec, "pool", jstr(cj->pool));
	json_object_object_add(spec, "boots", json_object_new_int(o->boots > 0 ? o->boots : cj->boots));
	json_object_object_add(spec, "runs", json_object_new_int(o->runs > 0 ? o->runs : cj->runs));
	json_object_object_add(spec, "warmup_runs", json_object_new_int(cj->warmup_runs));
	json_object_object_add(spec, "order", jstr(cj->order ? cj->order : "abba"));
	json_object_object_add(spec, "seed", json_object_new_int64(seed));
	json_object_object_add(spec, "schedule", jstr(o->schedule));
	/* Run ids must be unique on a machine shared by several databases. */
	snprintf(prefix, sizeof(prefix), "k%08llx", (unsigned long long)(random_seed() & 0xffffffff));
	json_object_object_add(spec, "uid_salt", jstr(prefix));
	json_to_buf(&text, spec, 0);

	if (db_begin(db))
		goto out;
	if (db_run(db, "INSERT INTO jobs (name, state, spec, tree, schedule, order_seed, dut, peer, created) "
		   "VALUES (?, 'queued', ?, ?, ?, ?, ?, ?, ?)", "ssssissd", cj->name, text.buf, cj->tree,
		   o->schedule, seed, dut ? dut->name : NULL, peer ? peer->name : NULL, now_wall())) {
		db_rollback(db);
		goto out;
	}
	id = db_last_id(db);
	for (size_t i = 0; i < json_object_array_length(sides); i++) {
		struct json_object *s = json_object_array_get_idx(sides, i);
		int64_t k = spec_int(s, "kernel_id", 0);
		if (db_run(db, "INSERT INTO job_sides (job_id, side, label, kernel_id, profile) "
			   "VALUES (?, ?, ?, NULLIF(?, 0), ?)", "issis", id, spec_str(s, "side"),
			   spec_str(s, "label"), k, spec_str(s, "profile"))) {
			db_rollback(db);
			id = -1;
			goto out;
		}
	}
	if (db_commit(db)) {
		db_rollback(db);
		id = -1;
		goto out;
	}
	info("submitted job %lld '%s' (%s)", (long long)id, cj->name, kind);
out:
	json_object_put(spec);
	buf_release(&text);
	return id;
}

int64_t job_submit_schedule(void *arg, const struct conf_schedule *s)
{
	struct job_submit_opts o = JOB_SUBMIT_OPTS_INIT;
	void **a = arg;	/* { struct db *, const struct klab_config * } */

	o.job = s->job;
	o.schedule = s->name;
	return job_submit(a[0], a[1], &o);
}

/* ---------------------------------------------------------------------- */
/* Plan. */

static const char *side_letters(struct json_object *spec, char *buf)
{
	struct json_object *sides = spec_get(spec, "sides");
	size_t n = sides ? json_object_array_length(sides) : 0, k = 0;

	for (size_t i = 0; i < n && k < 2; i++) {
		const char *s = spec_str(json_object_array_get_idx(sides, i), "side");
		if (s)
			buf[k++] = s[0];
	}
	buf[k] = '\0';
	return buf;
}

/* The boot order of a spec, malloc'd ("ABBA..." or "BBB" for a one-sided job). */
static char *spec_order(struct json_object *spec, int64_t seed)
{
	int boots = (int)spec_int(spec, "boots", 1);
	char letters[3];
	char *out;

	side_letters(spec, letters);
	if (strlen(letters) < 2) {
		out = xmalloc((size_t)boots + 1);
		memset(out, letters[0] ? letters[0] : 'B', (size_t)boots);
		out[boots] = '\0';
		return out;
	}
	out = xmalloc(2 * (size_t)boots + 4);
	job_order(boots, seed, !strcmp(spec_str(spec, "order") ? spec_str(spec, "order") : "abba", "fixed"), out);
	return out;
}

int job_plan(struct json_object *spec, int64_t seed, struct strvec *keys)
{
	struct json_object *wl = spec_get(spec, "workloads");
	int runs = (int)spec_int(spec, "runs", 1) + (int)spec_int(spec, "warmup_runs", 0);
	char letters[3];
	char *order;

	if (!wl || !json_object_is_type(wl, json_type_array))
		return error("job spec has no workloads");
	side_letters(spec, letters);
	order = spec_order(spec, seed);
	strvec_push(keys, "intake");
	for (const char *l = letters; *l; l++)
		strvec_pushf(keys, "build:%c", *l);
	strvec_push(keys, "lease");
	for (size_t b = 1; b <= strlen(order); b++) {
		strvec_pushf(keys, "boot:%zu:deploy", b);
		strvec_pushf(keys, "boot:%zu:verify", b);
		strvec_pushf(keys, "boot:%zu:agent", b);
		strvec_pushf(keys, "boot:%zu:prepare", b);
		for (int r = 0; r < runs; r++)
			for (size_t w = 0; w < json_object_array_length(wl); w++)
				strvec_pushf(keys, "run:%zu:%s:%d", b,
					     spec_str(json_object_array_get_idx(wl, w), "name"), r);
		strvec_pushf(keys, "boot:%zu:restore", b);
	}
	strvec_push(keys, "release");
	strvec_push(keys, "compare");
	strvec_push(keys, "report");
	strvec_push(keys, "notify");
	free(order);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Finding, cancelling, liveness. */

int job_find(struct db *db, const char *name_or_id, int64_t *id)
{
	long v;
	int r;

	if (!parse_long(name_or_id, 1, LONG_MAX, &v)) {
		r = db_get_int(db, id, "SELECT id FROM jobs WHERE id = ?", "i", (int64_t)v);
		if (r == 1)
			return 0;
		return r < 0 ? -1 : error("no job %ld", v);
	}
	r = db_get_int(db, id, "SELECT id FROM jobs WHERE name = ? ORDER BY id DESC LIMIT 1", "s", name_or_id);
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
	if (db_get_str(db, &state, "SELECT state FROM jobs WHERE id = ?", "i", id) != 1) {
		db_rollback(db);
		return error("no job %lld", (long long)id);
	}
	if (!strcmp(state, "queued")) {
		if (db_run(db, "UPDATE jobs SET state = 'cancelled', cancel = 1, finished = ?, "
			   "error = 'cancelled before it started' WHERE id = ?", "di", now_wall(), id))
			goto out;
	} else if (!strcmp(state, "running")) {
		if (db_run(db, "UPDATE jobs SET cancel = 1 WHERE id = ?", "i", id))
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

static char *lock_path(struct db *db, int64_t id)
{
	const char *p = db_file(db);

	return xasprintf("%s.job-%lld.lock", p && *p ? p : "klab", (long long)id);
}

/* The job's run lock: fd, LOCK_FILE_BUSY (another runner), or -1. */
static int lock_job(struct db *db, int64_t id)
{
	char *p = lock_path(db, id);
	int fd = lock_file(p, 0);

	free(p);
	return fd;
}

int job_is_live(const char *db_path, int64_t id)
{
	char *p = xasprintf("%s.job-%lld.lock", db_path, (long long)id);
	int ret = lock_held(p);

	free(p);
	return ret;
}

/* ---------------------------------------------------------------------- */
/* The runner. */

enum { STEP_OK = 0, STEP_FAIL = -1, STEP_CANCEL = -2, STEP_STOP = -3, STEP_WAIT = -4 };
enum { DONE = 0, SKIPPED = 1 };

struct job_ctx {
	struct klab_config *cfg;
	struct db *db;
	int64_t id;
	const struct job_run_opts *o;
	struct json_object *spec;
	int64_t seed;
	char *order;
	struct strvec plan;
	size_t pos;			/* index of the current step in the plan */
	int64_t t0;
	const struct conf_machine *dut, *peer;
	struct ssh_conn *cdut, *cpeer;
	char *agent_local;
	char *agent_remote;
	char *state_dut, *state_peer;
	int ttl_s;
	int leased;
	int attempt;			/* attempts of the current step (1 = first) */
	double step_started_prev;	/* start time of the previous attempt (0: none) */
	struct buf why;			/* failure or skip reason of the current step */
	struct json_object *detail;	/* detail of the current step */
};

static int fail(struct job_ctx *j, const char *fmt, ...) KLAB_PRINTF(2, 3);
static int fail(struct job_ctx *j, const char *fmt, ...)
{
	va_list ap;

	buf_reset(&j->why);
	va_start(ap, fmt);
	buf_vaddf(&j->why, fmt, ap);
	va_end(ap);
	if (*log_last_error() && !strstr(j->why.buf, log_last_error()))
		buf_addf(&j->why, ": %s", log_last_error());
	return STEP_FAIL;
}

static int skip_step(struct job_ctx *j, const char *fmt, ...) KLAB_PRINTF(2, 3);
static int skip_step(struct job_ctx *j, const char *fmt, ...)
{
	va_list ap;

	buf_reset(&j->why);
	va_start(ap, fmt);
	buf_vaddf(&j->why, fmt, ap);
	va_end(ap);
	return SKIPPED;
}

static void progress(struct job_ctx *j, const char *fmt, ...) KLAB_PRINTF(2, 3);
static void progress(struct job_ctx *j, const char *fmt, ...)
{
	va_list ap;
	char msg[1024];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (j->o->progress) {
		printf("[%7.1fs] %s\n", (now_ms() - j->t0) / 1000.0, msg);
		fflush(stdout);
	} else {
		info("%s", msg);
	}
}

static struct json_object *side_obj(struct job_ctx *j, char side)
{
	struct json_object *sides = spec_get(j->spec, "sides");

	for (size_t i = 0; sides && i < json_object_array_length(sides); i++) {
		struct json_object *s = json_object_array_get_idx(sides, i);
		const char *l = spec_str(s, "side");
		if (l && l[0] == side)
			return s;
	}
	return NULL;
}

static struct json_object *workload_obj(struct job_ctx *j, const char *name)
{
	struct json_object *wl = spec_get(j->spec, "workloads");

	for (size_t i = 0; wl && i < json_object_array_length(wl); i++) {
		struct json_object *w = json_object_array_get_idx(wl, i);
		if (!strcmp(spec_str(w, "name"), name))
			return w;
	}
	return NULL;
}

static int64_t side_kernel(struct job_ctx *j, char side)
{
	int64_t k = 0;
	char s[2] = { side, 0 };

	if (db_get_int(j->db, &k, "SELECT kernel_id FROM job_sides WHERE job_id = ? AND side = ?", "is",
		       j->id, s) != 1)
		return 0;
	return k;
}

/* Test hook: KLAB_TEST_KILL_AT=KEY[@PHASE] kills this process on the first attempt of KEY. */
static void test_kill_point(struct job_ctx *j, const char *key, const char *phase)
{
	const char *spec = getenv("KLAB_TEST_KILL_AT");
	const char *at;
	size_t n;

	if (!spec || j->attempt != 1)
		return;
	at = strchr(spec, '@');
	n = at ? (size_t)(at - spec) : strlen(spec);
	if (strlen(key) != n || strncmp(spec, key, n))
		return;
	if (strcmp(at ? at + 1 : "start", phase))
		return;
	fprintf(stderr, "klab: test hook: SIGKILL at step %s (%s)\n", key, phase);
	fflush(NULL);
	raise(SIGKILL);
}

/* ---- SSH and agent -------------------------------------------------- */

/* Connect to a machine (once per job run), with 3 tries 2 s apart for a passing outage. */
static int connect_machine(struct job_ctx *j, const struct conf_machine *m, struct ssh_conn **c)
{
	struct ssh_target t;

	if (*c)
		return 0;
	ssh_target_from_conf(&t, j->cfg, m);
	for (int i = 1;; i++) {
		if (!ssh_connect(c, &t))
			return 0;
		if (i == 3)
			return -1;
		warn("machine '%s' did not answer (try %d of 3); trying again in 2 s", m->name, i);
		sleep(2);
	}
}

/*
 * Call the agent on a machine: [agent, --state, DIR, argv...]. A dropped
 * connection is reconnected and the call retried once when `idempotent`.
 * Returns the agent's exit status (0 ok), or -1 when it could not be run.
 */
static int agent_call(struct job_ctx *j, int peer, const char *const *argv, const char *in,
		      struct buf *out, long timeout_ms, int idempotent, struct buf *err)
{
	struct ssh_conn **c = peer ? &j->cpeer : &j->cdut;
	const struct conf_machine *m = peer ? j->peer : j->dut;
	struct strvec av = STRVEC_INIT;
	int ret = -1;

	if (connect_machine(j, m, c))
		return -1;
	strvec_push(&av, j->agent_remote);
	strvec_push(&av, "--state");
	strvec_push(&av, peer ? j->state_peer : j->state_dut);
	strvec_pushv(&av, argv);
	for (int attempt = 0; attempt < 2; attempt++) {
		struct ssh_exec x = SSH_EXEC_INIT;
		x.argv = (const char *const *)av.v;
		x.in = in;
		x.in_len = in ? strlen(in) : 0;
		x.timeout_ms = timeout_ms;
		if (ssh_exec(*c, &x) == 0) {
			buf_add(out, x.out.buf, x.out.len);
			if (err)
				buf_add(err, x.err.buf, x.err.len);
			ret = x.status;
			ssh_exec_release(&x);
			break;
		}
		int dropped = x.dropped;
		ssh_exec_release(&x);
		if (!dropped || !idempotent || attempt || ssh_reconnect(*c))
			break;
		warn("connection to '%s' dropped; reconnected, calling the agent again", m->name);
	}
	strvec_clear(&av);
	return ret;
}

/* klab-agent fetch UID on a machine: 0 found (doc in out), 1 not there, -1 error. */
static int agent_fetch(struct job_ctx *j, int peer, const char *uid, struct buf *out)
{
	const char *argv[] = { "fetch", uid, NULL };
	struct buf err = BUF_INIT;
	int rc;

	buf_reset(out);
	rc = agent_call(j, peer, argv, NULL, out, 60000, 1, &err);
	if (rc == 0 && out->len) {
		buf_release(&err);
		return 0;
	}
	if (rc < 0) {
		buf_release(&err);
		return -1;
	}
	/* The agent exits non-zero when it keeps no such result. */
	buf_release(&err);
	return 1;
}

static void agent_ack(struct job_ctx *j, int peer, const char *uid)
{
	const char *argv[] = { "ack", uid, NULL };
	struct buf out = BUF_INIT, err = BUF_INIT;

	if (agent_call(j, peer, argv, NULL, &out, 60000, 1, &err) != 0)
		warn("cannot ack run '%s' on machine '%s': %s", uid, peer ? j->peer->name : j->dut->name,
		     last_line(err.buf));
	buf_release(&out);
	buf_release(&err);
}

/* ---- steps ------------------------------------------------------------ */

static const char *tx_target(struct json_object *w);

static int step_intake(struct job_ctx *j, const char *key)
{
	const char *src = spec_str(j->spec, "series");
	struct series *s = NULL;
	int64_t sid = 0;
	int existed = 0;

	if (!src)
		return skip_step(j, "no series: %s", spec_str(j->spec, "kind"));
	if (series_load(src, NULL, &s))
		return fail(j, "cannot load series '%s'", src);
	if (series_store(j->db, s, &sid, &existed)) {
		series_free(s);
		return fail(j, "cannot store series '%s'", src);
	}
	json_object_object_add(j->detail, "series_id", json_object_new_int64(sid));
	json_object_object_add(j->detail, "subject", jstr(s->subject));
	json_object_object_add(j->detail, "patches", json_object_new_int((int)s->n_patches));
	series_free(s);
	if (db_run(j->db, "UPDATE jobs SET series_id = ? WHERE id = ?", "ii", sid, j->id))
		return fail(j, "cannot record the series of job %lld", (long long)j->id);
	progress(j, "  series %lld%s", (long long)sid, existed ? " (already stored)" : "");
	return DONE;
}

static int step_build(struct job_ctx *j, const char *key)
{
	char side = key[6];
	struct json_object *s = side_obj(j, side);
	struct build_request req;
	struct kernel_artifact art;
	struct series *ser = NULL;
	struct strvec lp = STRVEC_INIT;
	int64_t sid = 0;
	int ret;

	if (!s)
		return fail(j, "job spec has no side %c", side);
	if (spec_int(s, "kernel_id", 0))
		return skip_step(j, "side %c reuses kernel %lld (of job %lld)", side,
				 (long long)spec_int(s, "kernel_id", 0), (long long)spec_int(s, "from_job", 0));
	if (!json_object_get_boolean(spec_get(s, "build"))) {
		if (!strcmp(spec_str(j->spec, "kind"), "tuning") && side == 'B' && side_kernel(j, 'A'))
			goto same_as_a;
		return skip_step(j, "side %c runs the machine's own kernel (boot = none or tuning only)", side);
	}
	memset(&req, 0, sizeof(req));
	req.tree = spec_str(j->spec, "tree");
	req.ref = spec_str(s, "ref");
	req.variant = spec_str(s, "variant");
	req.progress = j->o->progress;
	if (side == 'B' && spec_str(j->spec, "series")) {
		struct json_object *p = spec_get(j->spec, "local_patches");
		db_get_int(j->db, &sid, "SELECT series_id FROM jobs WHERE id = ?", "i", j->id);
		if (!sid)
			return fail(j, "job %lld has no stored series (intake did not run)", (long long)j->id);
		if (series_load_db(j->db, sid, &ser))
			return fail(j, "cannot load series %lld", (long long)sid);
		req.series = ser;
		req.series_id = sid;
		for (size_t i = 0; p && i < json_object_array_length(p); i++)
			strvec_push(&lp, json_object_get_string(json_object_array_get_idx(p, i)));
		if (lp.n)
			req.local_patches = (const char *const *)lp.v;
	}
	memset(&art, 0, sizeof(art));
	ret = build_kernel(j->cfg, j->db, &req, &art);
	if (ser)
		series_free(ser);
	strvec_clear(&lp);
	if (ret)
		return fail(j, "build of side %c (%s) failed", side, spec_str(s, "label"));
	json_object_object_add(j->detail, "kernel_id", json_object_new_int64(art.id));
	json_object_object_add(j->detail, "release", jstr(art.release));
	json_object_object_add(j->detail, "cached", json_object_new_boolean(art.cached));
	json_object_object_add(j->detail, "duration_s", json_object_new_double(art.duration_s));
	progress(j, "  kernel %lld %s%s", (long long)art.id, art.release, art.cached ? " (cached)" : "");
	if (db_run(j->db, "UPDATE job_sides SET kernel_id = ? WHERE job_id = ? AND side = ?", "iis",
		   art.id, j->id, side == 'A' ? "A" : "B")) {
		kernel_artifact_release(&art);
		return fail(j, "cannot record the kernel of side %c", side);
	}
	if (!strcmp(spec_str(j->spec, "kind"), "tuning"))
		db_run(j->db, "UPDATE job_sides SET kernel_id = ? WHERE job_id = ? AND side = 'B'", "ii",
		       art.id, j->id);
	kernel_artifact_release(&art);
	return DONE;
same_as_a:
	db_run(j->db, "UPDATE job_sides SET kernel_id = ? WHERE job_id = ? AND side = 'B'", "ii",
	       side_kernel(j, 'A'), j->id);
	return skip_step(j, "side B boots the kernel of side A (tuning A/B)");
}

/* Resolve dut and peer from the config (after the lease, from the job row). */
static int resolve_machines(struct job_ctx *j)
{
	char *dut = NULL, *peer = NULL;
	int ret = -1;

	if (j->dut)
		return 0;
	db_get_str(j->db, &dut, "SELECT dut FROM jobs WHERE id = ?", "i", j->id);
	db_get_str(j->db, &peer, "SELECT peer FROM jobs WHERE id = ?", "i", j->id);
	if (!dut || !peer) {
		ret = error("job %lld has no machines yet", (long long)j->id);
		goto out;
	}
	j->dut = conf_machine(j->cfg, dut);
	j->peer = conf_machine(j->cfg, peer);
	if (!j->dut || !j->peer) {
		ret = error("machine '%s' of job %lld is no longer in the config", !j->dut ? dut : peer,
			    (long long)j->id);
		goto out;
	}
	j->state_dut = xasprintf("%s/state-%s", j->cfg->lab.agent_dir, j->dut->name);
	j->state_peer = xasprintf("%s/state-%s", j->cfg->lab.agent_dir, j->peer->name);
	ret = 0;
out:
	free(dut);
	free(peer);
	return ret;
}

static int cancel_requested(struct job_ctx *j)
{
	int64_t c = 0;

	db_get_int(j->db, &c, "SELECT cancel FROM jobs WHERE id = ?", "i", j->id);
	return c != 0;
}

static int step_lease(struct job_ctx *j, const char *key)
{
	struct json_object *m = spec_get(j->spec, "machines");
	const char *pool = spec_str(j->spec, "pool");
	int64_t waited = now_ms(), said = 0;

	if (lease_sync_machines(j->db, j->cfg))
		return fail(j, "cannot record the machines");
	for (;;) {
		struct buf why = BUF_INIT;
		const char *dut = NULL, *peer = NULL;
		enum lease_status s;

		if (m && json_object_array_length(m) == 2) {
			dut = json_object_get_string(json_object_array_get_idx(m, 0));
			peer = json_object_get_string(json_object_array_get_idx(m, 1));
			s = lease_acquire(j->db, j->id, dut, peer, j->ttl_s, &why);
		} else if (pool) {
			s = lease_acquire_pool(j->db, j->cfg, j->id, pool, j->ttl_s, &dut, &peer, &why);
		} else {
			return fail(j, "job spec names neither machines nor a pool");
		}
		if (s == LEASE_OK) {
			buf_release(&why);
			j->leased = 1;
			json_object_object_add(j->detail, "dut", jstr(dut));
			json_object_object_add(j->detail, "peer", jstr(peer));
			json_object_object_add(j->detail, "waited_s",
					       json_object_new_double((now_ms() - waited) / 1000.0));
			progress(j, "  leased dut '%s' and peer '%s'", dut, peer);
			return resolve_machines(j) ? fail(j, "cannot use the leased machines") : DONE;
		}
		if (s == LEASE_ERROR) {
			buf_release(&why);
			return fail(j, "cannot lease machines (database error)");
		}
		if (s == LEASE_UNUSABLE) {
			fail(j, "cannot lease machines: %s", why.buf);
			buf_release(&why);
			return STEP_FAIL;
		}
		if (!j->o->wait_lease) {
			fail(j, "machines busy: %s", why.buf);
			buf_release(&why);
			return STEP_WAIT;
		}
		if (now_ms() - said > 60000) {
			progress(j, "  waiting for machines: %s", why.buf);
			said = now_ms();
		}
		buf_release(&why);
		if (cancel_requested(j))
			return STEP_CANCEL;
		if (j->o->stop && *j->o->stop)
			return STEP_STOP;
		usleep(500 * 1000);
	}
}

/* Before each step after the lease: extend it, or take the pair again if it was lost. */
static int keep_lease(struct job_ctx *j)
{
	struct buf why = BUF_INIT;
	int ret = 0;

	if (!j->leased || !lease_renew(j->db, j->id, j->ttl_s))
		return 0;
	if (!j->dut || !j->peer)
		return -1;
	warn("job %lld lost its lease on '%s' and '%s'; taking them again", (long long)j->id,
	     j->dut->name, j->peer->name);
	for (;;) {
		buf_reset(&why);
		enum lease_status s = lease_acquire(j->db, j->id, j->dut->name, j->peer->name, j->ttl_s, &why);
		if (s == LEASE_OK)
			break;
		if (s != LEASE_BUSY || (j->o->stop && *j->o->stop)) {
			ret = error("cannot lease machines again: %s", why.buf);
			break;
		}
		sleep(1);
	}
	buf_release(&why);
	return ret;
}

static int boot_of(const char *key, int *b)
{
	return sscanf(key, "boot:%d:", b) == 1 ? 0 : -1;
}

static int step_deploy(struct job_ctx *j, const char *key)
{
	int b;
	char side;
	int64_t kid;
	struct kernel_artifact art;
	struct deploy_artifact da;
	struct deploy_opts dopt;
	struct deploy_result res;
	int ret;

	if (boot_of(key, &b))
		return fail(j, "bad step key '%s'", key);
	side = j->order[b - 1];
	kid = side_kernel(j, side);
	db_run(j->db, "INSERT INTO boots (job_id, seq, side, kernel_id, machine, started) "
	       "VALUES (?, ?, ?, NULLIF(?, 0), ?, ?) "
	       "ON CONFLICT (job_id, seq) DO UPDATE SET kernel_id = excluded.kernel_id, "
	       "machine = excluded.machine, started = excluded.started",
	       "iisisd", j->id, (int64_t)b, side == 'A' ? "A" : "B", kid, j->dut->name, now_wall());
	if (j->dut->boot == BOOT_NONE) {
		if (kid && strcmp(spec_str(j->spec, "kind"), "tuning"))
			return fail(j, "machine '%s' has boot = none and cannot boot kernel %lld of side %c",
				    j->dut->name, (long long)kid, side);
		return skip_step(j, "boot = none: machine '%s' keeps its kernel", j->dut->name);
	}
	if (!kid)
		return fail(j, "side %c has no kernel to boot on machine '%s'", side, j->dut->name);
	memset(&art, 0, sizeof(art));
	if (kernel_artifact_load(j->db, kid, &art))
		return fail(j, "cannot load kernel %lld", (long long)kid);
	memset(&da, 0, sizeof(da));
	da.image = art.image;
	da.modules = art.modules;
	da.system_map = art.system_map;
	da.config = art.config;
	da.release = art.release;
	da.build_id = art.build_id;
	memset(&dopt, 0, sizeof(dopt));
	memset(&res, 0, sizeof(res));
	if (connect_machine(j, j->dut, &j->cdut)) {
		kernel_artifact_release(&art);
		return fail(j, "cannot reach machine '%s' to boot it", j->dut->name);
	}
	progress(j, "  booting '%s' into %s (%s)", j->dut->name, art.release, boot_method_name(j->dut->boot));
	ret = deploy_boot(j->cdut, j->db, j->dut, &da, &dopt, &res);
	if (ret) {
		fail(j, "boot %d (side %c, kernel %s) on machine '%s' failed%s%s", b, side, art.release,
		     j->dut->name, res.wrong_kernel ? ": it came back on another kernel" : "",
		     res.fenced ? "; the machine is fenced (broken)" : "");
	} else {
		json_object_object_add(j->detail, "release", jstr(res.release));
		json_object_object_add(j->detail, "boot_wait_s", json_object_new_double(res.boot_wait_ms / 1000.0));
	}
	deploy_result_release(&res);
	kernel_artifact_release(&art);
	return ret ? STEP_FAIL : DONE;
}

static int step_verify(struct job_ctx *j, const char *key)
{
	const char *argv[] = { "uname", "-r", NULL };
	struct buf out = BUF_INIT;
	int b;

	if (boot_of(key, &b))
		return fail(j, "bad step key '%s'", key);
	if (connect_machine(j, j->dut, &j->cdut))
		return fail(j, "cannot reach machine '%s'", j->dut->name);
	if (ssh_run(j->cdut, argv, &out, 30000)) {
		buf_release(&out);
		return fail(j, "cannot read the kernel release of machine '%s'", j->dut->name);
	}
	buf_trim(&out);
	if (j->dut->boot != BOOT_NONE) {
		int64_t kid = side_kernel(j, j->order[b - 1]);
		struct kernel_artifact art;
		struct deploy_artifact da;
		struct deploy_result res;
		int rc;

		memset(&art, 0, sizeof(art));
		memset(&res, 0, sizeof(res));
		if (kid && !kernel_artifact_load(j->db, kid, &art)) {
			memset(&da, 0, sizeof(da));
			da.release = art.release;
			da.build_id = art.build_id;
			rc = deploy_verify(j->cdut, &da, 30000, &res);
			if (!rc)
				db_run(j->db, "UPDATE boots SET build_id = ? WHERE job_id = ? AND seq = ?", "sii",
				       res.build_id, j->id, (int64_t)b);
			deploy_result_release(&res);
			kernel_artifact_release(&art);
			if (rc) {
				fail(j, "machine '%s' runs %s, not the kernel of boot %d", j->dut->name, out.buf, b);
				buf_release(&out);
				return STEP_FAIL;
			}
		}
	}
	db_run(j->db, "UPDATE boots SET release = ? WHERE job_id = ? AND seq = ?", "sii", out.buf, j->id, (int64_t)b);
	db_run(j->db, "UPDATE machines SET last_kernel = ?, last_seen = ? WHERE name = ?", "sds", out.buf,
	       now_wall(), j->dut->name);
	json_object_object_add(j->detail, "release", jstr(out.buf));
	progress(j, "  '%s' runs %s", j->dut->name, out.buf);
	buf_release(&out);
	return DONE;
}

/* The local klab-agent binary: the option, $KLAB_AGENT, next to this program, or PATH. */
static char *find_local_agent(const char *opt)
{
	char self[PATH_MAX];
	ssize_t n;

	if (opt)
		return xstrdup(opt);
	if (getenv("KLAB_AGENT") && *getenv("KLAB_AGENT"))
		return xstrdup(getenv("KLAB_AGENT"));
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		char *slash, *p;
		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			p = xasprintf("%s/klab-agent", self);
			if (access(p, X_OK) == 0)
				return p;
			free(p);
			p = xasprintf("%s/../agents/klab-agent", self);
			if (access(p, X_OK) == 0)
				return p;
			free(p);
			p = xasprintf("%s/../libexec/klab/klab-agent", self);
			if (access(p, X_OK) == 0)
				return p;
			free(p);
		}
	}
	return run_which("klab-agent");
}

static int step_agent(struct job_ctx *j, const char *key)
{
	const char *argv[] = { "sysinfo", "--no-tools", NULL };
	struct buf out = BUF_INIT, err = BUF_INIT;
	int up_dut = 0, up_peer = 0, b;

	if (boot_of(key, &b))
		return fail(j, "bad step key '%s'", key);
	if (!j->agent_local)
		return fail(j, "cannot find the klab-agent program to upload (set KLAB_AGENT)");
	if (connect_machine(j, j->dut, &j->cdut) || connect_machine(j, j->peer, &j->cpeer))
		return fail(j, "cannot reach the machines");
	if (deploy_agent(j->cdut, j->agent_local, j->agent_remote, &up_dut))
		return fail(j, "cannot put klab-agent on machine '%s'", j->dut->name);
	if (deploy_agent(j->cpeer, j->agent_local, j->agent_remote, &up_peer))
		return fail(j, "cannot put klab-agent on machine '%s'", j->peer->name);
	{
		struct json_object *wl = spec_get(j->spec, "workloads");
		for (size_t i = 0; wl && i < json_object_array_length(wl); i++) {
			const char *t = tx_target(json_object_array_get_idx(wl, i));
			if (t && !strcmp(t, "blackhole"))
				return fail(j, "workload '%s': target = blackhole cannot be used: a connected UDP "
					    "socket cannot send into a blackhole route (use target = dummy)",
					    spec_str(json_object_array_get_idx(wl, i), "name"));
			if (t && !strcmp(t, "dummy") && qlab_dummy_target(j->cdut))
				return fail(j, "no udp_tx dummy target on machine '%s'", j->dut->name);
		}
	}
	json_object_object_add(j->detail, "uploaded_dut", json_object_new_boolean(up_dut));
	json_object_object_add(j->detail, "uploaded_peer", json_object_new_boolean(up_peer));
	if (agent_call(j, 0, argv, NULL, &out, 60000, 1, &err) == 0) {
		db_run(j->db, "UPDATE boots SET sysinfo = ? WHERE job_id = ? AND seq = ?", "sii", out.buf,
		       j->id, (int64_t)b);
	} else {
		warn("klab-agent sysinfo failed on '%s': %s", j->dut->name, last_line(err.buf));
	}
	buf_release(&out);
	buf_release(&err);
	return DONE;
}

static const char *boot_profile(struct job_ctx *j, int b)
{
	struct json_object *s = side_obj(j, j->order[b - 1]);
	return s ? spec_str(s, "profile") : NULL;
}

static int step_prepare(struct job_ctx *j, const char *key)
{
	struct json_object *p;
	const char *name;
	struct buf in = BUF_INIT, out = BUF_INIT, err = BUF_INIT;
	int b, rc;

	if (boot_of(key, &b))
		return fail(j, "bad step key '%s'", key);
	name = boot_profile(j, b);
	if (!name)
		return skip_step(j, "no tuning profile for side %c", j->order[b - 1]);
	p = spec_get(spec_get(j->spec, "profiles"), name);
	if (!p)
		return fail(j, "profile '%s' is missing from the job spec", name);
	/* The agent gets the profile with the NIC it applies to. */
	p = json_object_get(p);
	json_object_object_add(p, "nic", jstr(j->dut->nic));
	json_to_buf(&in, p, 0);
	json_object_put(p);
	{
		const char *argv[] = { "prepare", name, NULL };
		rc = agent_call(j, 0, argv, in.buf, &out, 120000, 0, &err);
	}
	if (rc)
		fail(j, "klab-agent prepare '%s' failed on machine '%s': %s", name, j->dut->name,
		     rc < 0 ? "cannot run it" : last_line(err.buf));
	else
		progress(j, "  tuning profile '%s' applied on '%s'", name, j->dut->name);
	buf_release(&in);
	buf_release(&out);
	buf_release(&err);
	return rc ? STEP_FAIL : DONE;
}

static int step_state(struct job_ctx *j, const char *key, char **state)
{
	*state = NULL;
	return db_get_str(j->db, state, "SELECT state FROM steps WHERE job_id = ? AND key = ?", "is", j->id, key);
}

static int restore_boot(struct job_ctx *j, int b)
{
	const char *argv[] = { "restore", NULL };
	struct buf out = BUF_INIT, err = BUF_INIT;
	char *k = xasprintf("boot:%d:prepare", b), *st = NULL;
	int rc = 0;

	step_state(j, k, &st);
	if (st && (!strcmp(st, "done") || !strcmp(st, "running") || !strcmp(st, "failed"))) {
		rc = agent_call(j, 0, argv, NULL, &out, 120000, 1, &err);
		if (rc)
			error("klab-agent restore failed on machine '%s': %s", j->dut->name,
			      rc < 0 ? "cannot run it" : last_line(err.buf));
	} else {
		rc = 1;
	}
	free(k);
	free(st);
	buf_release(&out);
	buf_release(&err);
	return rc;
}

static int step_restore(struct job_ctx *j, const char *key)
{
	int b, rc;

	if (boot_of(key, &b))
		return fail(j, "bad step key '%s'", key);
	rc = restore_boot(j, b);
	if (rc == 1)
		return skip_step(j, "nothing was prepared");
	if (rc)
		return fail(j, "cannot restore machine '%s'", j->dut->name);
	return DONE;
}

/* ---- runs ------------------------------------------------------------- */

/* How long a server or sink keeps running after the client's end. */
#define SERVER_LINGER_S 2.0
/* From the server's SSH connection to starting the client. */
#define SERVER_START_MS 400

/* Parse "run:B:WORKLOAD:R". */
static int run_key(const char *key, int *b, char *wl, size_t wlen, int *r)
{
	const char *p = key + 4, *last = strrchr(key, ':');
	char *end;
	long v;

	if (!starts_with(key, "run:") || !last)
		return -1;
	v = strtol(p, &end, 10);
	if (end == p || *end != ':' || end + 1 >= last)
		return -1;
	*b = (int)v;
	snprintf(wl, wlen, "%.*s", (int)(last - end - 1), end + 1);
	*r = atoi(last + 1);
	return 0;
}

static const char *role_client(const char *type)
{
	return !strcmp(type, "udp_tx") ? "send" : "client";
}

static const char *role_server(const char *type)
{
	return !strcmp(type, "udp_tx") ? "sink" : "server";
}

/* The udp_tx target of a workload: "peer" (a sink on the peer), "dummy", "blackhole". */
static const char *tx_target(struct json_object *w)
{
	const char *t = spec_str(spec_get(w, "params"), "target");

	if (strcmp(spec_str(w, "type"), "udp_tx"))
		return NULL;
	return t ? t : "peer";
}

/* Does this workload need a server (sink) on the peer? */
static int needs_server(struct json_object *w)
{
	const char *t = tx_target(w);

	return !t || !strcmp(t, "peer");
}

/*
 * The generator parameters of one role, renamed from the config's keys
 * (config.example) to the agent's (agents/run.c): server_threads and
 * server_cpus go to the server as threads and cpus, payload_size -> size,
 * gso_size -> gso, rate_pps -> rate, sink_threads and sink_poll_us -> threads and poll_us of the sink;
 * ipv6 is implied by the addresses; an udp_tx target replaces peer_addr.
 */
static struct json_object *role_params(struct json_object *params, const char *type, int server)
{
	static const struct {
		const char *type, *conf, *agent;
		int role;	/* 0 client/send, 1 server/sink, 2 both */
	} map[] = {
		{ "udp_rr", "flows", "flows", 0 }, { "udp_rr", "threads", "threads", 0 },
		{ "udp_rr", "request_size", "request_size", 0 }, { "udp_rr", "response_size", "response_size", 2 },
		{ "udp_rr", "burst", "burst", 0 }, { "udp_rr", "cpus", "cpus", 0 },
		{ "udp_rr", "busy_poll", "busy_poll", 0 }, { "udp_rr", "rto_ms", "rto_ms", 0 },
		{ "udp_rr", "port", "port", 2 }, { "udp_rr", "server_threads", "threads", 1 },
		{ "udp_rr", "server_cpus", "cpus", 1 },
		{ "udp_tx", "threads", "threads", 0 }, { "udp_tx", "payload_size", "size", 0 },
		{ "udp_tx", "engine", "engine", 0 }, { "udp_tx", "batch", "batch", 0 },
		{ "udp_tx", "gso_size", "gso", 0 }, { "udp_tx", "rate_pps", "rate", 0 },
		{ "udp_tx", "cpus", "cpus", 0 }, { "udp_tx", "port", "port", 2 },
		{ "udp_tx", "sink_threads", "threads", 1 }, { "udp_tx", "sink_poll_us", "poll_us", 1 },
	};
	struct json_object *out = json_object_new_object();

	json_object_object_foreach(params, k, v) {
		for (size_t i = 0; i < ARRAY_SIZE(map); i++) {
			if (strcmp(map[i].type, type) || strcmp(map[i].conf, k))
				continue;
			if (map[i].role == 2 || map[i].role == server)
				json_object_object_add(out, map[i].agent, json_object_get(v));
			break;
		}
	}
	return out;
}

/* The run spec (docs/protocol.md section 2) of one side of a run. */
static char *run_spec(struct job_ctx *j, struct json_object *w, const char *uid, int server)
{
	struct json_object *o = json_object_new_object(), *wo = json_object_new_object();
	struct buf b = BUF_INIT;
	const char *type = spec_str(w, "type");
	const struct conf_machine *self = server ? j->peer : j->dut;
	const struct conf_machine *other = server ? j->dut : j->peer;

	json_object_object_add(o, "spec_version", json_object_new_int(1));
	json_object_object_add(o, "run_id", jstr(uid));
	json_object_object_add(o, "role", jstr(server ? role_server(type) : role_client(type)));
	json_object_object_add(wo, "name", jstr(spec_str(w, "name")));
	json_object_object_add(wo, "type", jstr(type));
	json_object_object_add(wo, "params", role_params(spec_get(w, "params"), type, server));
	json_object_object_add(o, "workload", wo);
	if (!server && tx_target(w) && !strcmp(tx_target(w), "dummy"))
		json_object_object_add(o, "peer_addr", jstr(QLAB_DUMMY_TARGET));
	else if (!server && other->addr)
		json_object_object_add(o, "peer_addr", jstr(other->addr));
	if (self->addr)
		json_object_object_add(o, "bind_addr", jstr(self->addr));
	if (self->nic)
		json_object_object_add(o, "nic", jstr(self->nic));
	/* The server gets the client's times and outlives it by linger_s. */
	json_object_object_add(o, "duration_s", json_object_new_double(spec_double(w, "duration_s", 10)));
	json_object_object_add(o, "warmup_s", json_object_new_double(spec_double(w, "warmup_s", 2)));
	if (server) {
		json_object_object_add(o, "linger_s", json_object_new_double(SERVER_LINGER_S));
		json_object_object_add(o, "monitors", json_object_new_array());
	} else {
		json_object_object_add(o, "monitors", json_object_get(spec_get(w, "monitors")));
		if (spec_str(w, "perf_events"))
			json_object_object_add(o, "perf_events", jstr(spec_str(w, "perf_events")));
		if (spec_str(w, "bpftrace_script"))
			json_object_object_add(o, "bpftrace_script", jstr(spec_str(w, "bpftrace_script")));
	}
	json_to_buf(&b, o, 0);
	json_object_put(o);
	return buf_detach(&b, NULL);
}

struct server_run {
	pid_t pid;
	char *outfile;
};

/*
 * Start the server (or sink) on the peer in a child process with its own
 * SSH connection, so that the client can run on the dut meanwhile. The
 * child dies with us (PDEATHSIG); the remote server stops at its deadline.
 */
static int server_start(struct job_ctx *j, struct json_object *w, const char *uid, struct server_run *sr)
{
	char *spec = run_spec(j, w, uid, 1);
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char *path = xasprintf("%s/klab-server-XXXXXX", tmp);
	int fd = mkstemp(path), ready[2];
	pid_t pid;

	if (fd < 0) {
		free(spec);
		error_errno("cannot make a temporary file '%s'", path);
		free(path);
		return -1;
	}
	if (pipe2(ready, O_CLOEXEC)) {
		close(fd);
		unlink(path);
		free(path);
		free(spec);
		return error_errno("cannot make a pipe");
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(fd);
		close(ready[0]);
		close(ready[1]);
		unlink(path);
		free(path);
		free(spec);
		return error_errno("cannot fork");
	}
	if (pid == 0) {
		struct ssh_conn *c = NULL;
		struct ssh_target t;
		struct strvec av = STRVEC_INIT;
		struct ssh_exec x = SSH_EXEC_INIT;
		double warm = spec_double(w, "warmup_s", 2), dur = spec_double(w, "duration_s", 10);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		signal(SIGTERM, SIG_DFL);
		ssh_target_from_conf(&t, j->cfg, j->peer);
		close(ready[0]);
		if (ssh_connect(&c, &t))
			_exit(3);
		/* Connected: the parent starts the client a moment after this. */
		if (write(ready[1], "c", 1) != 1)
			_exit(3);
		close(ready[1]);
		strvec_push(&av, j->agent_remote);
		strvec_push(&av, "--state");
		strvec_push(&av, j->state_peer);
		strvec_push(&av, "run");
		x.argv = (const char *const *)av.v;
		x.in = spec;
		x.in_len = strlen(spec);
		x.timeout_ms = (long)((warm + dur + SERVER_LINGER_S) * 1000) + 60000;
		if (ssh_exec(c, &x))
			_exit(4);
		write_all(fd, x.out.buf, x.out.len);
		if (x.status)
			dprintf(fd, "%s", x.err.buf);
		close(fd);
		{
			/* The server's document is not stored: forget it on the peer now. */
			struct ssh_exec a = SSH_EXEC_INIT;
			strvec_pop(&av);
			strvec_push(&av, "ack");
			strvec_push(&av, uid);
			a.argv = (const char *const *)av.v;
			a.timeout_ms = 30000;
			ssh_exec(c, &a);
			ssh_exec_release(&a);
		}
		_exit(x.status == 0 ? 0 : 5);
	}
	close(fd);
	close(ready[1]);
	free(spec);
	sr->pid = pid;
	sr->outfile = path;
	{
		/* Wait until the child is connected (or gave up), at most 30 s. */
		struct pollfd pfd = { ready[0], POLLIN, 0 };
		char ch;
		int ok = poll(&pfd, 1, 30000) == 1 && read(ready[0], &ch, 1) == 1;
		close(ready[0]);
		if (!ok)
			return error("the %s on machine '%s' did not start (no SSH connection)",
				     role_server(spec_str(w, "type")), j->peer->name);
	}
	/* klab-agent starts the generator: give it a moment to bind. */
	usleep(SERVER_START_MS * 1000);
	return 0;
}

/* Wait for the server child (at most timeout_ms, then kill it); its output into out. 0 ok, -1 failed. */
static int server_finish(struct server_run *sr, long timeout_ms, struct buf *out)
{
	int64_t end = now_ms() + timeout_ms;
	int st = 0, ret = -1;

	if (!sr->pid)
		return 0;
	for (;;) {
		pid_t p = waitpid(sr->pid, &st, WNOHANG);
		if (p == sr->pid)
			break;
		if (p < 0 && errno != EINTR)
			break;
		if (now_ms() > end) {
			kill(sr->pid, SIGKILL);
			waitpid(sr->pid, &st, 0);
			st = -1;
			break;
		}
		usleep(50 * 1000);
	}
	buf_read_file(out, sr->outfile);
	unlink(sr->outfile);
	free(sr->outfile);
	sr->outfile = NULL;
	sr->pid = 0;
	if (st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0)
		ret = 0;
	return ret;
}

/* Does the document say the run failed? Sets why. */
static int result_failed(const char *doc, struct buf *why)
{
	struct json_object *o = json_parse(doc, strlen(doc), "agent result");
	const char *status, *err;
	int ret = 0;

	if (!o) {
		buf_addstr(why, "the agent's result is not valid JSON");
		return 1;
	}
	status = spec_str(o, "status");
	if (status && strcmp(status, "ok")) {
		err = spec_str(o, "error");
		buf_addf(why, "the run %s: %s", status, err ? err : "no reason given");
		ret = 1;
	}
	json_object_put(o);
	return ret;
}

/*
 * Store one agent result as run UID: one transaction, idempotent by uid.
 * Uses result_store() of orchestrator/result.c.
 */
static int store_run(struct job_ctx *j, const char *uid, const char *doc, int b, const char *wl, int r)
{
	struct result_meta m;
	struct json_object *o = NULL;
	char side[2] = { j->order[b - 1], 0 };
	char *what = xasprintf("result of run %s from machine '%s'", uid, j->dut->name);
	const char *doc_id;
	int64_t boot_id = 0, run_id = 0;
	int ret = -1;

	if (result_parse(doc, strlen(doc), what, &o))
		goto out;
	doc_id = spec_str(o, "run_id");
	if (!doc_id || strcmp(doc_id, uid)) {
		error("%s: it is the result of run '%s'", what, doc_id ? doc_id : "?");
		goto out;
	}
	db_get_int(j->db, &boot_id, "SELECT id FROM boots WHERE job_id = ? AND seq = ?", "ii", j->id, (int64_t)b);
	memset(&m, 0, sizeof(m));
	m.job_id = j->id;
	m.boot_id = boot_id;
	m.side = side;
	m.kernel_id = side_kernel(j, side[0]);
	m.workload = wl;
	m.seq = r;
	m.machine = j->dut->name;
	m.peer = j->peer->name;
	m.profile = boot_profile(j, b);
	if (result_store(j->db, doc, strlen(doc), &m, &run_id))
		goto out;
	json_object_object_add(j->detail, "run_id", json_object_new_int64(run_id));
	ret = 0;
out:
	if (o)
		json_object_put(o);
	free(what);
	return ret;
}

static int run_stored(struct job_ctx *j, const char *uid)
{
	int64_t n = 0;
	db_get_int(j->db, &n, "SELECT count(*) FROM runs WHERE uid = ?", "s", uid);
	return n > 0;
}

/* One try: server on the peer, client on the dut. 0 with the client's document in doc. */
static int run_once(struct job_ctx *j, struct json_object *w, const char *uid, int retry,
		    struct buf *doc, struct buf *why)
{
	struct server_run sr = { 0, NULL };
	char *suid = xasprintf("%s-srv", uid);
	char *spec = NULL;
	struct buf err = BUF_INIT, sout = BUF_INIT;
	double warm = spec_double(w, "warmup_s", 2), dur = spec_double(w, "duration_s", 10);
	const char *argv[] = { "run", NULL };
	int rc, ret = -1;

	buf_reset(doc);
	if (connect_machine(j, j->dut, &j->cdut)) {
		buf_addf(why, "cannot reach machine '%s'", j->dut->name);
		goto out;
	}
	if (needs_server(w)) {
		/* The agent refuses a run id it keeps a result of: clear an earlier try's. */
		if (retry)
			agent_ack(j, 1, suid);
		if (server_start(j, w, suid, &sr)) {
			buf_addf(why, "cannot start the %s on machine '%s'", role_server(spec_str(w, "type")),
				 j->peer->name);
			goto stop_server;
		}
	}
	spec = run_spec(j, w, uid, 0);
	debug("run %s: client starts on '%s'", uid, j->dut->name);
	rc = agent_call(j, 0, argv, spec, doc, (long)((warm + dur) * 1000) + 60000, 0, &err);
	debug("run %s: client ended (status %d)", uid, rc);
	if (rc != 0) {
		if (rc < 0)
			buf_addf(why, "cannot run klab-agent on machine '%s'", j->dut->name);
		else if (doc->len && result_failed(doc->buf, why))
			;	/* why filled */
		else
			buf_addf(why, "klab-agent run exited with status %d on '%s': %s", rc, j->dut->name,
				 last_line(err.buf));
		goto stop_server;
	}
	if (result_failed(doc->buf, why))
		goto stop_server;
	ret = 0;
stop_server:
	if (sr.pid) {
		debug("run %s: waiting for the %s", uid, role_server(spec_str(w, "type")));
		if (server_finish(&sr, (long)((warm + dur + SERVER_LINGER_S) * 1000) + 30000, &sout) && ret == 0) {
			warn("run '%s': the %s on '%s' failed: %s", uid, role_server(spec_str(w, "type")),
			     j->peer->name, last_line(sout.buf));
		} else if (ret == 0) {
			struct json_object *so = json_parse(sout.buf, sout.len, "server result");
			if (so) {
				json_object_object_add(j->detail, "server", so);
			}
		}
		debug("run %s: %s done", uid, role_server(spec_str(w, "type")));
	}
out:
	free(suid);
	free(spec);
	buf_release(&err);
	buf_release(&sout);
	return ret;
}

static int step_run(struct job_ctx *j, const char *key)
{
	char wl[256], uid[400];
	int b, r, rc;
	struct json_object *w;
	struct buf doc = BUF_INIT, why = BUF_INIT;
	int ret = STEP_FAIL;

	if (run_key(key, &b, wl, sizeof(wl), &r) || b < 1 || (size_t)b > strlen(j->order))
		return fail(j, "bad step key '%s'", key);
	w = workload_obj(j, wl);
	if (!w)
		return fail(j, "workload '%s' is missing from the job spec", wl);
	snprintf(uid, sizeof(uid), "j%lld-%s-b%d-%s-r%d", (long long)j->id, spec_str(j->spec, "uid_salt"),
		 b, wl, r);
	json_object_object_add(j->detail, "uid", jstr(uid));

	/* 1. Stored already (the process died between store and step end)? */
	if (run_stored(j, uid)) {
		agent_ack(j, 0, uid);
		json_object_object_add(j->detail, "recovered", jstr("database"));
		progress(j, "  run %s was already stored", uid);
		return DONE;
	}
	/*
	 * 2. Still on the agent (the process died after the run)? Only an
	 * earlier attempt of this step can have left it there.
	 */
	rc = j->attempt > 1 ? agent_fetch(j, 0, uid, &doc) : 1;
	if (rc == 1 && j->step_started_prev > 0) {
		/*
		 * An earlier attempt may still be running on the machine (we died
		 * mid-run): wait for its result until it must have ended.
		 */
		double until = j->step_started_prev + spec_double(w, "warmup_s", 2) +
			       spec_double(w, "duration_s", 10) + 20;
		if (now_wall() < until)
			progress(j, "  an earlier attempt of %s may still be running; waiting up to %.0f s for it",
				 uid, until - now_wall());
		while (rc == 1 && now_wall() < until) {
			sleep(1);
			rc = agent_fetch(j, 0, uid, &doc);
		}
	}
	if (rc == 0 && !result_failed(doc.buf, &why)) {
		json_object_object_add(j->detail, "recovered", jstr("agent"));
		progress(j, "  run %s recovered from the agent on '%s'", uid, j->dut->name);
		goto store;
	}
	if (rc == 0)
		agent_ack(j, 0, uid);	/* a failed result: run it again */
	if (rc < 0)
		return fail(j, "cannot ask the agent on '%s' for run %s", j->dut->name, uid);

	/* 3. Run it, retried once. */
	for (int attempt = 1; attempt <= 2; attempt++) {
		buf_reset(&why);
		if (run_once(j, w, uid, attempt > 1 || j->attempt > 1, &doc, &why) == 0)
			break;
		if (attempt == 2) {
			fail(j, "run %s failed twice: %s", uid, why.buf);
			goto out;
		}
		warn("run %s failed: %s; retrying once", uid, why.buf);
		json_object_object_add(j->detail, "first_failure", jstr(why.buf));
		agent_ack(j, 0, uid);
		sleep(1);
	}
store:
	test_kill_point(j, key, "before-store");
	if (store_run(j, uid, doc.buf, b, wl, r)) {
		fail(j, "cannot store run %s", uid);
		goto out;
	}
	test_kill_point(j, key, "after-store");
	agent_ack(j, 0, uid);
	ret = DONE;
out:
	buf_release(&doc);
	buf_release(&why);
	return ret;
}

/* ---- the end of a job ---------------------------------------------- */

static void close_machines(struct job_ctx *j)
{
	ssh_close(j->cdut);
	ssh_close(j->cpeer);
	j->cdut = j->cpeer = NULL;
}

static int step_release(struct job_ctx *j, const char *key)
{
	close_machines(j);
	if (lease_release(j->db, j->id))
		return fail(j, "cannot release the machines");
	j->leased = 0;
	return DONE;
}

/* compare_opts.workload_info from the job's own spec (what the config said at submit). */
static double spec_workload_info(void *arg, const char *workload, const char **headline)
{
	struct json_object *w = workload_obj(arg, workload), *v;

	*headline = w ? spec_str(w, "headline") : NULL;
	if (*headline && !**headline)
		*headline = NULL;
	if (w && json_object_object_get_ex(w, "threshold_pct", &v) && v)
		return json_object_get_double(v);
	return 0;
}

static int step_compare(struct job_ctx *j, const char *key)
{
	struct compare_opts co = COMPARE_OPTS_INIT;
	char letters[3];

	if (strlen(side_letters(j->spec, letters)) < 2)
		return skip_step(j, "one side only (first nightly: nothing to compare with yet)");
	co.warmup_runs = (int)spec_int(j->spec, "warmup_runs", 1);
	co.workload_info = spec_workload_info;	/* the same T and headline as `klab compare` */
	co.workload_arg = j;
	if (compare_job(j->db, j->id, &co, NULL))
		return fail(j, "cannot compare the sides of job %lld", (long long)j->id);
	return DONE;
}

static int step_report(struct job_ctx *j, const char *key)
{
	const char *dir = j->cfg->lab.report_dir;

	if (!dir)
		return skip_step(j, "no report_dir in [lab]");
	if (report_job(j->db, dir, j->id))
		return fail(j, "cannot write the report pages of job %lld", (long long)j->id);
	{
		char *p = xasprintf("%s/job-%lld.html", dir, (long long)j->id);
		json_object_object_add(j->detail, "page", jstr(p));
		progress(j, "  report: %s", p);
		free(p);
	}
	return DONE;
}

/*
 * The optional notify command: $KLAB_NOTIFY_CMD, split on white space and
 * run (no shell) with KLAB_JOB_ID, KLAB_JOB_NAME, KLAB_JOB_STATE and
 * KLAB_JOB_ERROR in its environment, for at most 60 s. Its failure is
 * logged; it never changes the job's outcome.
 */
static void notify_command(struct job_ctx *j, const char *state, const char *err)
{
	const char *cmd = getenv("KLAB_NOTIFY_CMD");
	struct strvec argv = STRVEC_INIT, env = STRVEC_INIT;
	struct run_cmd c = RUN_CMD_INIT;

	if (!cmd || !*cmd)
		return;
	strvec_split(&argv, cmd, " \t");
	strvec_pushf(&env, "KLAB_JOB_ID=%lld", (long long)j->id);
	strvec_pushf(&env, "KLAB_JOB_NAME=%s", spec_str(j->spec, "name"));
	strvec_pushf(&env, "KLAB_JOB_STATE=%s", state);
	strvec_pushf(&env, "KLAB_JOB_ERROR=%s", err ? err : "");
	c.argv = (const char *const *)argv.v;
	c.env = (const char *const *)env.v;
	c.timeout_ms = 60000;
	if (argv.n && (run_command(&c) || c.status))
		warn("notify command '%s' for job %lld failed: %s", cmd, (long long)j->id, run_describe(&c));
	run_release(&c);
	strvec_clear(&argv);
	strvec_clear(&env);
}

static int step_notify(struct job_ctx *j, const char *key)
{
	int64_t runs = 0, changed = 0;

	db_get_int(j->db, &runs, "SELECT count(*) FROM runs WHERE job_id = ?", "i", j->id);
	db_get_int(j->db, &changed, "SELECT count(*) FROM comparisons WHERE job_id = ? AND verdict = 'CHANGED'",
		   "i", j->id);
	log_msg(j->o->progress ? LOG_INFO : LOG_NOTICE, "job %lld '%s' finished: %lld runs stored, %lld metrics CHANGED",
		(long long)j->id, spec_str(j->spec, "name"), (long long)runs, (long long)changed);
	json_object_object_add(j->detail, "runs", json_object_new_int64(runs));
	json_object_object_add(j->detail, "changed", json_object_new_int64(changed));
	notify_command(j, "done", NULL);
	return DONE;
}

/* ---- the loop --------------------------------------------------------- */

typedef int (*step_fn)(struct job_ctx *j, const char *key);

static const struct {
	const char *prefix;	/* key prefix, or "boot:*:SUFFIX" */
	const char *name;
	step_fn fn;
} step_table[] = {
	{ "intake", "intake", step_intake },
	{ "build:", "build", step_build },
	{ "lease", "lease", step_lease },
	{ ":deploy", "deploy", step_deploy },
	{ ":verify", "verify", step_verify },
	{ ":agent", "agent", step_agent },
	{ ":prepare", "prepare", step_prepare },
	{ "run:", "run", step_run },
	{ ":restore", "restore", step_restore },
	{ "release", "release", step_release },
	{ "compare", "compare", step_compare },
	{ "report", "report", step_report },
	{ "notify", "notify", step_notify },
};

static int lookup_step(const char *key, const char **name, step_fn *fn)
{
	for (size_t i = 0; i < ARRAY_SIZE(step_table); i++) {
		const char *p = step_table[i].prefix;
		if ((p[0] == ':' && starts_with(key, "boot:") && ends_with(key, p)) ||
		    (p[0] != ':' && starts_with(key, p))) {
			*name = step_table[i].name;
			*fn = step_table[i].fn;
			return 0;
		}
	}
	return -1;
}

/* Run one step of the plan unless it is done already. */
static int do_step(struct job_ctx *j, const char *key)
{
	struct db_stmt *st;
	const char *name;
	step_fn fn;
	int64_t t;
	int rc;
	const char *state_after;
	struct buf detail = BUF_INIT;

	if (lookup_step(key, &name, &fn))
		return fail(j, "unknown step '%s' in the plan", key);
	st = db_prepare(j->db, "SELECT state, attempts, started FROM steps WHERE job_id = ? AND key = ?", "is",
			j->id, key);
	if (!st)
		return fail(j, "cannot read step '%s'", key);
	j->attempt = 1;
	j->step_started_prev = 0;
	if (db_step(st) == DB_ROW) {
		const char *s = db_col_text(st, 0);
		if (!strcmp(s, "done") || !strcmp(s, "skipped")) {
			db_finalize(st);
			return STEP_OK;
		}
		j->attempt = db_col_int(st, 1) + 1;
		j->step_started_prev = db_col_double(st, 2);
	}
	db_finalize(st);

	if (cancel_requested(j))
		return STEP_CANCEL;
	if (j->o->stop && *j->o->stop)
		return STEP_STOP;
	if (j->leased && keep_lease(j))
		return fail(j, "lost the machines");

	log_clear_error();	/* fail() adds the error logged during this step only */
	if (db_run(j->db, "INSERT INTO steps (job_id, key, name, state, attempts, started) "
		   "VALUES (?, ?, ?, 'running', 1, ?) ON CONFLICT (job_id, key) DO UPDATE SET "
		   "state = 'running', attempts = attempts + 1, started = excluded.started, "
		   "finished = NULL, error = NULL", "issd", j->id, key, name, now_wall()))
		return fail(j, "cannot record step '%s'", key);
	progress(j, "%zu/%zu %s%s", j->pos + 1, j->plan.n, key,
		 j->attempt > 1 ? " (resumed)" : "");
	test_kill_point(j, key, "start");

	buf_reset(&j->why);
	j->detail = json_object_new_object();
	t = now_ms();
	rc = fn(j, key);
	state_after = rc == DONE ? "done" : rc == SKIPPED ? "skipped" : rc == STEP_FAIL ? "failed" : NULL;
	json_to_buf(&detail, j->detail, 0);
	json_object_put(j->detail);
	j->detail = NULL;
	if (state_after) {
		db_run(j->db, "UPDATE steps SET state = ?, finished = ?, error = ?, detail = ? "
		       "WHERE job_id = ? AND key = ?", "sdssis", state_after, now_wall(),
		       rc == DONE ? NULL : j->why.buf, detail.buf, j->id, key);
		if (rc == SKIPPED)
			progress(j, "%zu/%zu %s skipped: %s", j->pos + 1, j->plan.n, key, j->why.buf);
		else if (rc == STEP_FAIL)
			progress(j, "%zu/%zu %s FAILED after %.1f s: %s", j->pos + 1, j->plan.n, key,
				 (now_ms() - t) / 1000.0, j->why.buf);
		else if (now_ms() - t >= 1000)
			progress(j, "%zu/%zu %s done in %.1f s", j->pos + 1, j->plan.n, key, (now_ms() - t) / 1000.0);
	} else {
		/* Interrupted (cancel, stop, busy): the step starts over next time. */
		db_run(j->db, "UPDATE steps SET state = 'failed', finished = ?, error = ? WHERE job_id = ? AND key = ?",
		       "dsis", now_wall(), rc == STEP_CANCEL ? "cancelled" : rc == STEP_STOP ? "stopped" :
		       j->why.buf, j->id, key);
	}
	buf_release(&detail);
	return rc == DONE || rc == SKIPPED ? STEP_OK : rc;
}

/* After a failure or cancel: put the machine back and let the machines go. */
static void cleanup(struct job_ctx *j)
{
	if (!j->dut && j->leased)
		resolve_machines(j);
	if (j->dut) {
		for (size_t b = 1; b <= strlen(j->order); b++) {
			char *k = xasprintf("boot:%zu:restore", b), *st = NULL;
			step_state(j, k, &st);
			if (!st || strcmp(st, "done"))
				if (restore_boot(j, (int)b) == 0)
					info("restored machine '%s' after boot %zu", j->dut->name, b);
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
	return db_run(j->db, "UPDATE jobs SET state = ?, error = ?, finished = ?, pid = NULL WHERE id = ?",
		      "ssdi", state, err, now_wall(), j->id);
}

int job_run(struct klab_config *cfg, struct db *db, const char *db_path, int64_t id,
	    const struct job_run_opts *o)
{
	struct job_ctx j;
	char *state = NULL, *spec = NULL, *err = NULL;
	int lockfd, ret = -1, rc = STEP_OK;
	int64_t leases = 0, seed = 0;
	char prefix[32];

	(void)db_path;
	memset(&j, 0, sizeof(j));
	j.cfg = cfg;
	j.db = db;
	j.id = id;
	j.o = o;
	j.t0 = now_ms();
	strvec_init(&j.plan);

	lockfd = lock_job(db, id);
	if (lockfd == LOCK_FILE_BUSY)
		return error("job %lld is being run by another process", (long long)id);
	if (lockfd < 0)
		return -1;
	if (db_get_str(db, &state, "SELECT state FROM jobs WHERE id = ?", "i", id) != 1 ||
	    db_get_str(db, &spec, "SELECT spec FROM jobs WHERE id = ?", "i", id) != 1) {
		error("no job %lld", (long long)id);
		goto out;
	}
	if (strcmp(state, "queued") && strcmp(state, "running")) {
		db_get_str(db, &err, "SELECT error FROM jobs WHERE id = ?", "i", id);
		printf("job %lld is already %s%s%s\n", (long long)id, state, err ? ": " : "", err ? err : "");
		ret = !strcmp(state, "done") ? 0 : 1;
		goto out;
	}
	j.spec = json_parse(spec, strlen(spec), "job spec");
	if (!j.spec)
		goto out;
	db_get_int(db, &seed, "SELECT order_seed FROM jobs WHERE id = ?", "i", id);
	j.seed = seed;
	j.order = spec_order(j.spec, seed);
	if (job_plan(j.spec, seed, &j.plan))
		goto out;
	j.agent_local = find_local_agent(o->agent_local);
	j.agent_remote = xasprintf("%s/klab-agent", cfg->lab.agent_dir ? cfg->lab.agent_dir : "/var/lib/klab-agent");
	{
		/* A lease outlives the longest step: a boot, or a run with its slack. */
		long longest = cfg->lab.boot_timeout_ms > 0 ? cfg->lab.boot_timeout_ms / 1000 : 300;
		struct json_object *wl = spec_get(j.spec, "workloads");
		for (size_t i = 0; wl && i < json_object_array_length(wl); i++) {
			struct json_object *w = json_object_array_get_idx(wl, i);
			long t = (long)(spec_double(w, "warmup_s", 2) + spec_double(w, "duration_s", 10)) + 90;
			if (t > longest)
				longest = t;
		}
		j.ttl_s = (int)(2 * longest + 120);
	}
	snprintf(prefix, sizeof(prefix), "job %lld", (long long)id);
	if (!o->progress)
		log_set_prefix(prefix);
	if (db_run(db, "UPDATE jobs SET state = 'running', pid = ?, started = coalesce(started, ?) WHERE id = ?",
		   "idi", (int64_t)getpid(), now_wall(), id))
		goto out;
	db_get_int(db, &leases, "SELECT count(*) FROM leases WHERE job_id = ?", "i", id);
	if (leases) {
		j.leased = 1;
		resolve_machines(&j);
	}
	progress(&j, "job %lld '%s' (%s): %zu steps, boot order %s, seed %lld%s", (long long)id,
		 spec_str(j.spec, "name"), spec_str(j.spec, "kind"), j.plan.n, j.order, (long long)seed,
		 !strcmp(state, "running") ? ", resuming" : "");

	for (j.pos = 0; j.pos < j.plan.n; j.pos++) {
		const char *key = j.plan.v[j.pos];
		/* Steps after the lease need the machines (also when resuming). */
		if (strcmp(key, "intake") && !starts_with(key, "build:") && strcmp(key, "lease") &&
		    strcmp(key, "compare") && strcmp(key, "report") && strcmp(key, "notify") &&
		    strcmp(key, "release") && !j.dut && resolve_machines(&j)) {
			fail(&j, "step %s: the job has no machines", key);
			rc = STEP_FAIL;
			break;
		}
		rc = do_step(&j, key);
		if (rc != STEP_OK)
			break;
	}

	switch (rc) {
	case STEP_OK:
		finish(&j, "done", NULL);
		/* A scheduled job (done) is a new point of its nightly series: look for change points. */
		if (spec_str(j.spec, "schedule") &&
		    history_update_job(db, id, 1.0))
			warn("job %lld: cannot update the nightly history", (long long)id);
		progress(&j, "job %lld done in %.1f s", (long long)id, (now_ms() - j.t0) / 1000.0);
		ret = 0;
		break;
	case STEP_FAIL: {
		char *reason = xasprintf("step %s failed: %s", j.plan.v[j.pos < j.plan.n ? j.pos : 0], j.why.buf);
		cleanup(&j);
		finish(&j, "failed", reason);
		if (!o->progress)
			log_msg(LOG_NOTICE, "job %lld '%s' failed: %s", (long long)id, spec_str(j.spec, "name"), reason);
		notify_command(&j, "failed", reason);
		progress(&j, "job %lld FAILED: %s", (long long)id, reason);
		free(reason);
		ret = 1;
		break;
	}
	case STEP_CANCEL:
		cleanup(&j);
		finish(&j, "cancelled", "cancelled by request");
		progress(&j, "job %lld cancelled; machines released", (long long)id);
		ret = 1;
		break;
	case STEP_WAIT:
		/* Machines busy and no waiting: the job goes back to the queue. */
		db_run(db, "UPDATE jobs SET state = 'queued', pid = NULL WHERE id = ?", "i", id);
		progress(&j, "job %lld stays queued: %s", (long long)id, j.why.buf);
		ret = 2;
		break;
	case STEP_STOP:
	default:
		close_machines(&j);
		db_run(db, "UPDATE jobs SET pid = NULL WHERE id = ?", "i", id);
		progress(&j, "job %lld stopped; it resumes from step %s", (long long)id,
			 j.plan.v[j.pos < j.plan.n ? j.pos : 0]);
		ret = 2;
		break;
	}
out:
	close_machines(&j);
	if (j.spec)
		json_object_put(j.spec);
	strvec_clear(&j.plan);
	free(j.order);
	free(j.agent_local);
	free(j.agent_remote);
	free(j.state_dut);
	free(j.state_peer);
	buf_release(&j.why);
	free(state);
	free(spec);
	free(err);
	if (!o->progress)
		log_set_prefix(NULL);
	close(lockfd);
	return ret;
}
