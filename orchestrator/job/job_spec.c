/* job_spec.c: the spec of a job (docs/jobs.md) from the config and the options, checked and submitted. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "store/db.h"
#include "job/job.h"
#include "job/job_int.h"
#include "jsonh.h"
#include "log.h"
#include "util.h"

static struct json_object *profile_json(const struct conf_profile *p)
{
	struct json_object *o = json_object_new_object(), *sys = json_object_new_object();

	json_object_object_add(o, "name", json_str(p->name));
	if (p->channels)
		json_object_object_add(o, "channels", json_object_new_int(p->channels));
	if (p->xps)
		json_object_object_add(o, "xps", json_str(p->xps));
	if (p->rps)
		json_object_object_add(o, "rps", json_str(p->rps));
	if (p->irq_affinity)
		json_object_object_add(o, "irq_affinity", json_str(p->irq_affinity));
	if (p->governor)
		json_object_object_add(o, "governor", json_str(p->governor));
	if (p->qdisc)
		json_object_object_add(o, "qdisc", json_str(p->qdisc));
	for (size_t i = 0; i < p->n_sysctls; i++) {
		const char *k = p->sysctls[i].key;
		const char *s = skip_prefix(k, "sysctl.");
		json_object_object_add(sys, s ? s : k, json_str(p->sysctls[i].value));
	}
	json_object_object_add(o, "sysctls", sys);
	return o;
}

static int workload_json(const struct conf_workload *w, struct json_object **out, struct buf *err)
{
	struct json_object *o = json_object_new_object(), *params = json_object_new_object();
	struct json_object *mon = json_object_new_array();
	long dur_ms = (long)(JOB_SPEC_DURATION_S * 1000), warm_ms = (long)(JOB_SPEC_WARMUP_S * 1000);
	long ops = -1, warmup_ops = 0;	/* ops -1: not given */

	for (size_t i = 0; i < w->n_params; i++) {
		const char *k = w->params[i].key, *v = w->params[i].value;
		if (!strcmp(k, "duration")) {
			if (parse_duration_ms(v, &dur_ms))
				goto bad;
		} else if (!strcmp(k, "warmup")) {
			if (parse_duration_ms(v, &warm_ms))
				goto bad;
		} else if (!strcmp(k, "ops")) {
			if (parse_long(v, 0, JOB_SPEC_OPS_MAX, &ops))
				goto bad;
		} else if (!strcmp(k, "warmup_ops")) {
			if (parse_long(v, 0, JOB_SPEC_OPS_MAX, &warmup_ops))
				goto bad;
		} else {
			json_object_object_add(params, k, json_str(v));
		}
	}
	for (size_t i = 0; i < w->monitors.n; i++)
		json_object_array_add(mon, json_str(w->monitors.v[i]));
	json_object_object_add(o, "name", json_str(w->name));
	json_object_object_add(o, "type", json_str(w->type));
	json_object_object_add(o, "params", params);
	json_object_object_add(o, "duration_s", json_object_new_double(dur_ms / 1000.0));
	/* sized by work: the duration is the time limit, the warm-up is warmup_ops (docs/jobs.md) */
	json_object_object_add(o, "warmup_s", json_object_new_double(ops > 0 ? 0 : warm_ms / 1000.0));
	if (ops >= 0)	/* 0: timed on every clock */
		json_object_object_add(o, "ops", json_object_new_int64(ops));
	if (ops > 0)
		json_object_object_add(o, "warmup_ops", json_object_new_int64(warmup_ops));
	json_object_object_add(o, "monitors", mon);
	if (w->perf_events)
		json_object_object_add(o, "perf_events", json_str(w->perf_events));
	if (w->profile_cpus)
		json_object_object_add(o, "profile_cpus", json_str(w->profile_cpus));
	if (w->bpftrace) {
		struct buf b = BUF_INIT;
		if (buf_read_file(&b, w->bpftrace)) {
			buf_release(&b);
			json_object_put(o);
			return error_to(err, "workload '%s': cannot read its bpftrace script '%s'", w->name,
					w->bpftrace);
		}
		json_object_object_add(o, "bpftrace_script", json_str(b.buf));
		buf_release(&b);
	}
	json_object_object_add(o, "threshold_pct", json_object_new_double(w->threshold_pct));
	if (w->headline)
		json_object_object_add(o, "headline", json_str(w->headline));
	*out = o;
	return 0;
bad:
	json_object_put(o);
	return error_to(err, "workload '%s': bad duration, warmup, ops or warmup_ops", w->name);
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
	int64_t k = 0;

	if (jobs_last_nightly_kernel(db, schedule, dut, peer, &k, job) != 1)
		return 0;
	return k;
}

static struct json_object *side_json(const char *side, const char *label, const char *ref,
				      const char *variant, const char *profile, int build)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "side", json_str(side));
	json_object_object_add(o, "label", json_str(label));
	json_object_object_add(o, "ref", json_str(ref));
	json_object_object_add(o, "variant", json_str(variant));
	json_object_object_add(o, "profile", json_str(profile));
	json_object_object_add(o, "build", json_object_new_boolean(build));
	return o;
}

/* The store logged why the job was not stored; a caller that keeps the text gets it in ERR too. */
static void not_stored(struct db *db, const char *job, struct buf *err)
{
	if (err)
		error_to(err, "job '%s': cannot store it: %s", job, db_errmsg(db));
}

int64_t job_submit(struct db *db, const struct klab_config *cfg, const struct job_submit_opts *o,
		   struct buf *err)
{
	const struct conf_job *cj = conf_job(cfg, o->job);
	struct json_object *spec = NULL, *sides, *wl, *profiles, *machines;
	const char *series, *base, *test, *kind, *dut_profile = NULL;
	const struct conf_machine *dut = NULL, *peer = NULL;
	int64_t id = -1, seed, prev_job = 0, prev_kernel = 0;
	struct job_new nj;
	int boot_none = 0, pairs;
	struct buf text = BUF_INIT;
	struct job_spec js = { 0 };
	char prefix[64];

	if (!cj)
		return error_to(err, "no job '%s' in the config (jobs are [job \"NAME\"] sections)", o->job);
	pairs = o->pairs > 0 ? o->pairs : cj->pairs;
	series = o->series ? o->series : cj->series;
	base = o->base ? o->base : cj->base;
	test = o->test ? o->test : cj->test;
	if (o->series && o->test)
		return error_to(err, "job '%s': give a series or a test ref, not both", o->job);
	if (o->commit && (o->series || o->test))
		return error_to(err, "job '%s': a bisection step measures one commit, without a series or a test ref",
				o->job);
	if (pairs > 1 && !cj->pool)
		return error_to(err, "job '%s': --pairs %d runs boots on several pairs of a pool, and the job names "
				"machines, not a pool", o->job, pairs);
	if (cj->machines.n) {
		if (cj->machines.n != 2)
			return error_to(err, "job '%s': machines must name a dut and a peer, not %zu machine(s)",
					o->job, cj->machines.n);
		dut = conf_machine(cfg, cj->machines.v[0]);
		peer = conf_machine(cfg, cj->machines.v[1]);
		if (!dut || !peer)
			return error_to(err, "job '%s': machine '%s' is not in the config", o->job,
					!dut ? cj->machines.v[0] : cj->machines.v[1]);
		boot_none = dut->boot == BOOT_NONE;
		dut_profile = dut->profile;
	} else if (!cj->pool) {
		return error_to(err, "job '%s': give machines (dut peer) or a pool", o->job);
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
		return error_to(err, "job '%s': no workloads", o->job);

	spec = json_object_new_object();
	sides = json_object_new_array();
	json_object_object_add(spec, "sides", sides);	/* spec owns it from here */
	if ((cj->profile_a || cj->profile_b) && !series && !test) {
		const char *pa = cj->profile_a ? cj->profile_a : dut_profile;
		const char *pb = cj->profile_b ? cj->profile_b : dut_profile;
		kind = "tuning";
		json_object_array_add(sides, side_json("A", pa ? pa : "default", base, "base", pa, !boot_none));
		json_object_array_add(sides, side_json("B", pb ? pb : "default", base, "base", pb, 0));
	} else if (o->confirms) {
		/* a nightly's change measured again: its two kernels, fresh boots */
		struct json_object *a = side_json("A", "previous", NULL, "base", dut_profile, 0);
		struct json_object *b = side_json("B", "tip", NULL, "nightly", dut_profile, 0);
		kind = "confirm";
		json_object_object_add(a, "kernel_id", json_object_new_int64(o->kernel_a));
		json_object_object_add(a, "from_job", json_object_new_int64(o->confirms));
		json_object_object_add(b, "kernel_id", json_object_new_int64(o->kernel_b));
		json_object_object_add(b, "from_job", json_object_new_int64(o->confirms));
		json_object_array_add(sides, a);
		json_object_array_add(sides, b);
	} else if (o->commit) {
		/* a bisection's step: one side, the commit, compared by the bisection (not the job) */
		char label[16];
		snprintf(label, sizeof(label), "%.12s", o->commit);
		kind = "bisect";
		json_object_array_add(sides, side_json("B", label, o->commit, "bisect", dut_profile, 1));
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
	if (boot_none && (!strcmp(kind, "series") || !strcmp(kind, "refs") || !strcmp(kind, "bisect"))) {
		error_to(err, "job '%s' compares two kernels, but its dut '%s' has boot = none and cannot change "
			 "kernel (use profile_a/profile_b for a tuning A/B, or a kexec or qemu machine)",
			 o->job, dut ? dut->name : cj->pool);
		goto out;
	}

	wl = json_object_new_array();
	json_object_object_add(spec, "workloads", wl);
	for (size_t i = 0; i < cj->workloads.n; i++) {
		const struct conf_workload *w = conf_workload(cfg, cj->workloads.v[i]);
		struct json_object *wj = NULL;
		if (o->workload && strcmp(o->workload, cj->workloads.v[i]))
			continue;
		if (!w) {
			error_to(err, "job '%s': workload '%s' is not in the config", o->job, cj->workloads.v[i]);
			goto out;
		}
		if (workload_json(w, &wj, err)) {
			goto out;
		}
		json_object_array_add(wl, wj);
	}
	if (o->workload && !json_object_array_length(wl)) {
		error_to(err, "job '%s' does not run workload '%s' (its workloads: %s ...)", o->job, o->workload,
			 cj->workloads.v[0]);
		goto out;
	}
	profiles = json_object_new_object();
	json_object_object_add(spec, "profiles", profiles);
	for (size_t i = 0; i < json_object_array_length(sides); i++) {
		struct json_object *pv = NULL;
		const char *pn = json_object_object_get_ex(json_object_array_get_idx(sides, i), "profile", &pv) &&
				 json_object_is_type(pv, json_type_string) ? json_object_get_string(pv) : NULL;
		const struct conf_profile *p;
		if (!pn || json_object_object_get_ex(profiles, pn, NULL))
			continue;
		p = conf_profile(cfg, pn);
		if (!p) {
			error_to(err, "job '%s': profile '%s' is not in the config", o->job, pn);
			goto out;
		}
		json_object_object_add(profiles, pn, profile_json(p));
	}

	seed = o->seed >= 0 ? o->seed : cj->seed >= 0 ? cj->seed : random_seed();
	json_object_object_add(spec, "version", json_object_new_int(1));
	json_object_object_add(spec, "name", json_str(cj->name));
	json_object_object_add(spec, "kind", json_str(kind));
	json_object_object_add(spec, "tree", json_str(cj->tree));
	json_object_object_add(spec, "base", json_str(base));
	json_object_object_add(spec, "test", json_str(test));
	json_object_object_add(spec, "series", json_str(series));
	{
		struct json_object *lp = json_object_new_array();
		for (size_t i = 0; i < cj->local_patches.n; i++)
			json_object_array_add(lp, json_str(cj->local_patches.v[i]));
		json_object_object_add(spec, "local_patches", lp);
	}
	machines = json_object_new_array();
	for (size_t i = 0; i < cj->machines.n; i++)
		json_object_array_add(machines, json_str(cj->machines.v[i]));
	json_object_object_add(spec, "machines", machines);
	json_object_object_add(spec, "pool", json_str(cj->pool));
	if (cj->pool && pairs > 1)
		json_object_object_add(spec, "pairs", json_object_new_int(pairs));
	json_object_object_add(spec, "boots", json_object_new_int(o->boots > 0 ? o->boots : cj->boots));
	/* boots = MIN..MAX: "boots" is the maximum, "boots_min" the first look (a plain --boots N has none) */
	if (!(o->boots > 0) && cj->boots_min > 0)
		json_object_object_add(spec, "boots_min", json_object_new_int(cj->boots_min));
	json_object_object_add(spec, "runs", json_object_new_int(o->runs > 0 ? o->runs : cj->runs));
	json_object_object_add(spec, "warmup_runs", json_object_new_int(cj->warmup_runs));
	/* a confirmation's and a bisection's answer is a statistic: no observation runs (docs/observation.md) */
	json_object_object_add(spec, "observe_boots",
			       json_object_new_int(o->confirms || o->bisection ? 0 : cj->observe_boots));
	json_object_object_add(spec, "order", json_str(cj->order ? cj->order : "abba"));
	json_object_object_add(spec, "seed", json_object_new_int64(seed));
	json_object_object_add(spec, "schedule", json_str(o->schedule));
	if (o->confirms)
		json_object_object_add(spec, "confirms", json_object_new_int64(o->confirms));
	if (o->bisection) {
		json_object_object_add(spec, "bisection", json_object_new_int64(o->bisection));
		json_object_object_add(spec, "bisect_seq", json_object_new_int(o->bisect_seq));
	}
	/* Run ids must be unique on a machine shared by several databases. */
	snprintf(prefix, sizeof(prefix), "k%08llx", (unsigned long long)(random_seed() & 0xffffffff));
	json_object_object_add(spec, "uid_salt", json_str(prefix));
	json_to_buf(&text, spec, 0);
	if (job_spec_parse(text.buf, &js)) {
		if (err)	/* job_spec_parse() logged why */
			error_to(err, "job '%s': cannot read back the spec made for it", o->job);
		goto out;
	}

	if (db_begin(db)) {
		not_stored(db, o->job, err);
		goto out;
	}
	memset(&nj, 0, sizeof(nj));
	nj.name = cj->name;
	nj.spec = text.buf;
	nj.tree = cj->tree;
	nj.schedule = o->schedule;
	nj.order_seed = seed;
	nj.dut = dut ? dut->name : NULL;
	nj.peer = peer ? peer->name : NULL;
	nj.created = now_wall();
	nj.bisection = o->bisection;
	nj.bisect_seq = o->bisection ? (int64_t)o->bisect_seq : -1;
	if (jobs_add(db, &nj, &id)) {
		id = -1;
		not_stored(db, o->job, err);
		db_rollback(db);
		goto out;
	}
	for (size_t i = 0; i < js.n_sides; i++) {
		const struct job_spec_side *s = &js.sides[i];
		char side[2] = { s->side, '\0' };
		if (job_sides_add(db, id, side, s->label, s->kernel_id, s->profile)) {
			not_stored(db, o->job, err);
			db_rollback(db);
			id = -1;
			goto out;
		}
	}
	if (db_commit(db)) {
		not_stored(db, o->job, err);
		db_rollback(db);
		id = -1;
		goto out;
	}
	info("submitted job %lld '%s' (%s)", (long long)id, cj->name, kind);
out:
	json_object_put(spec);
	job_spec_release(&js);
	buf_release(&text);
	return id;
}

int64_t job_submit_schedule(void *arg, const struct conf_schedule *s)
{
	struct job_submit_opts o = JOB_SUBMIT_OPTS_INIT;
	void **a = arg;	/* { struct db *, const struct klab_config * } */

	o.job = s->job;
	o.schedule = s->name;
	return job_submit(a[0], a[1], &o, NULL);
}
