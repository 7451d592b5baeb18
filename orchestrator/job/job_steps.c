/* job_steps.c: the steps of a job, one function each, in the order of the plan (the table is in job.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kbuild/build.h"
#include "compare/compare.h"
#include "compare/compare_fmt.h"
#include "store/db.h"
#include "store/machines.h"
#include "lab/deploy.h"
#include "job/job_int.h"
#include "jsonh.h"
#include "lab/lab_qemu.h"
#include "lab/lease.h"
#include "intake/intake.h"
#include "log.h"
#include "store/result.h"
#include "store/runs.h"
#include "run.h"
#include "intake/series.h"
#include "ssh/ssh.h"
#include "stats/stats.h"
#include "strvec.h"
#include "util.h"

int step_intake(struct job_ctx *j, const char *key)
{
	const char *src = j->spec.series;
	struct series *s = NULL;
	struct series_opts so = { .why = &j->err };
	int64_t sid = 0;
	int existed = 0;

	if (!src)
		return skip_step(j, "no series: %s", j->spec.kind);
	buf_reset(&j->err);
	if (series_load_sandboxed(j->cfg, src, &so, &s))
		return step_fail(j, "cannot load series '%s': %s", src, j->err.buf);
	if (series_store(j->db, s, &sid, &existed, &j->err)) {
		series_free(s);
		return step_fail(j, "cannot store series '%s': %s", src, j->err.buf);
	}
	json_object_object_add(j->detail, "series_id", json_object_new_int64(sid));
	json_object_object_add(j->detail, "subject", json_str(s->subject));
	json_object_object_add(j->detail, "patches", json_object_new_int((int)s->n_patches));
	series_free(s);
	if (jobs_set_series(j->db, j->id, sid))
		return step_fail(j, "cannot record the series of job %lld: %s", (long long)j->id, db_error(j->db));
	job_print(j, "  series %lld%s", (long long)sid, existed ? " (already stored)" : "");
	return DONE;
}

int step_build(struct job_ctx *j, const char *key)
{
	char side = key[6];
	const struct job_spec_side *s = job_spec_side(&j->spec, side);
	struct build_request req;
	struct kernel_artifact art;
	struct series *ser = NULL;
	struct buf why = BUF_INIT;
	int64_t sid = 0;
	int ret;

	if (!s)
		return step_fail(j, "job spec has no side %c", side);
	if (s->kernel_id)
		return skip_step(j, "side %c reuses kernel %lld (of job %lld)", side,
				 (long long)s->kernel_id, (long long)s->from_job);
	if (!s->build) {
		if (!strcmp(j->spec.kind, "tuning") && side == 'B' && side_kernel(j, 'A'))
			goto same_as_a;
		return skip_step(j, "side %c runs the machine's own kernel (boot = none or tuning only)", side);
	}
	memset(&req, 0, sizeof(req));
	req.tree = j->spec.tree;
	req.ref = s->ref;
	req.variant = s->variant;
	req.progress = j->o->progress;
	if (side == 'B' && j->spec.series) {
		jobs_get_int(j->db, j->id, JOB_SERIES_ID, &sid);
		if (!sid)
			return step_fail(j, "job %lld has no stored series (intake did not run)", (long long)j->id);
		if (series_load_db(j->db, sid, &ser, &j->err))
			return step_fail(j, "cannot load series %lld: %s", (long long)sid, j->err.buf);
		req.series = ser;
		req.series_id = sid;
		if (j->spec.local_patches.n)
			req.local_patches = (const char *const *)j->spec.local_patches.v;
	}
	memset(&art, 0, sizeof(art));
	ret = build_kernel(j->cfg, j->db, &req, &art, &why);
	if (ser)
		series_free(ser);
	if (ret) {
		step_fail(j, "build of side %c (%s) failed: %s", side, s->label, why.buf);
		buf_release(&why);
		return STEP_FAIL;
	}
	json_object_object_add(j->detail, "kernel_id", json_object_new_int64(art.id));
	json_object_object_add(j->detail, "release", json_str(art.release));
	json_object_object_add(j->detail, "cached", json_object_new_boolean(art.cached));
	json_object_object_add(j->detail, "duration_s", json_object_new_double(art.duration_s));
	job_print(j, "  kernel %lld %s%s", (long long)art.id, art.release, art.cached ? " (cached)" : "");
	if (job_sides_set_kernel(j->db, j->id, side == 'A' ? 'A' : 'B', art.id)) {
		kernel_artifact_release(&art);
		return step_fail(j, "cannot record the kernel of side %c: %s", side, db_error(j->db));
	}
	if (!strcmp(j->spec.kind, "tuning"))
		job_sides_set_kernel(j->db, j->id, 'B', art.id);
	kernel_artifact_release(&art);
	return DONE;
same_as_a:
	job_sides_set_kernel(j->db, j->id, 'B', side_kernel(j, 'A'));
	return skip_step(j, "side B boots the kernel of side A (tuning A/B)");
}

int step_lease(struct job_ctx *j, const char *key)
{
	const struct strvec *m = &j->spec.machines;
	const char *pool = j->spec.pool;
	int64_t waited = now_ms(), said = 0;

	if (lease_sync_machines(j->db, j->cfg))
		return step_fail(j, "cannot record the machines: %s", db_error(j->db));
	for (;;) {
		struct buf why = BUF_INIT;
		const char *dut = NULL, *peer = NULL;
		enum lease_status s;

		if (m->n == 2) {
			dut = m->v[0];
			peer = m->v[1];
			s = lease_acquire(j->db, j->id, dut, peer, j->ttl_s, &why);
		} else if (pool) {
			s = lease_acquire_pool(j->db, j->cfg, j->id, pool, j->ttl_s, &dut, &peer, &why);
		} else {
			return step_fail(j, "job spec names neither machines nor a pool");
		}
		if (s == LEASE_OK) {
			buf_release(&why);
			j->leased = 1;
			json_object_object_add(j->detail, "dut", json_str(dut));
			json_object_object_add(j->detail, "peer", json_str(peer));
			json_object_object_add(j->detail, "waited_s",
					       json_object_new_double((now_ms() - waited) / 1000.0));
			job_print(j, "  leased dut '%s' and peer '%s'", dut, peer);
			if (resolve_machines(j, &why)) {
				step_fail(j, "cannot use the leased machines: %s", why.buf);
				buf_release(&why);
				return STEP_FAIL;
			}
			return DONE;
		}
		if (s == LEASE_ERROR) {
			buf_release(&why);
			return step_fail(j, "cannot lease machines: %s", db_error(j->db));
		}
		if (s == LEASE_UNUSABLE) {
			step_fail(j, "cannot lease machines: %s", why.buf);
			buf_release(&why);
			return STEP_FAIL;
		}
		if (!j->o->wait_lease) {
			step_fail(j, "machines busy: %s", why.buf);
			buf_release(&why);
			return STEP_WAIT;
		}
		if (now_ms() - said > 60000) {
			job_print(j, "  waiting for machines: %s", why.buf);
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

/* The clock that times machine M's runs: its config's `clock`, "real" by default. */
static const char *machine_clock(const struct conf_machine *m)
{
	return m->clock ? m->clock : "real";
}

static int boot_of(const char *key, int *b)
{
	return sscanf(key, "boot:%d:", b) == 1 ? 0 : -1;
}

int step_deploy(struct job_ctx *j, const char *key)
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
		return step_fail(j, "bad step key '%s'", key);
	side = j->order[b - 1];
	kid = side_kernel(j, side);
	boots_start(j->db, j->id, b, side == 'A' ? "A" : "B", kid, j->dut->name, now_wall(), machine_clock(j->dut));
	if (j->dut->boot == BOOT_NONE) {
		if (kid && strcmp(j->spec.kind, "tuning"))
			return step_fail(j, "machine '%s' has boot = none and cannot boot kernel %lld of side %c",
				    j->dut->name, (long long)kid, side);
		return skip_step(j, "boot = none: machine '%s' keeps its kernel", j->dut->name);
	}
	if (!kid)
		return step_fail(j, "side %c has no kernel to boot on machine '%s'", side, j->dut->name);
	memset(&art, 0, sizeof(art));
	if (kernel_artifact_load(j->db, kid, &art, &j->err))
		return step_fail(j, "cannot load kernel %lld: %s", (long long)kid, j->err.buf);
	memset(&da, 0, sizeof(da));
	da.image = art.image;
	da.modules = art.modules;
	da.system_map = art.system_map;
	da.config = art.config;
	da.release = art.release;
	da.build_id = art.build_id;
	memset(&dopt, 0, sizeof(dopt));
	dopt.progress = j->o->progress;
	memset(&res, 0, sizeof(res));
	if (connect_machine(j, j->dut, &j->cdut, &j->err)) {
		kernel_artifact_release(&art);
		return step_fail(j, "cannot reach machine '%s' to boot it: %s", j->dut->name, j->err.buf);
	}
	job_print(j, "  booting '%s' into %s (%s)", j->dut->name, art.release, boot_method_name(j->dut->boot));
	ret = deploy_boot(j->cdut, j->db, j->dut, &da, &dopt, &res);
	if (ret) {
		step_fail(j, "boot %d (side %c, kernel %s) on machine '%s' failed%s%s: %s", b, side, art.release,
			  j->dut->name, res.wrong_kernel ? ": it came back on another kernel" : "",
			  res.fenced ? "; the machine is fenced (broken)" : "", ssh_error(j->cdut));
	} else {
		/*
		 * The peer may live inside the dut (the qemu lab's peer namespace):
		 * its session ended with the old kernel. Connect again when used.
		 */
		ssh_close(j->cpeer);
		j->cpeer = NULL;
		json_object_object_add(j->detail, "release", json_str(res.release));
		json_object_object_add(j->detail, "boot_wait_s", json_object_new_double(res.boot_wait_ms / 1000.0));
	}
	deploy_result_release(&res);
	kernel_artifact_release(&art);
	return ret ? STEP_FAIL : DONE;
}

int step_verify(struct job_ctx *j, const char *key)
{
	const char *argv[] = { "uname", "-r", NULL };
	struct buf out = BUF_INIT;
	int b;

	if (boot_of(key, &b))
		return step_fail(j, "bad step key '%s'", key);
	if (connect_machine(j, j->dut, &j->cdut, &j->err))
		return step_fail(j, "cannot reach machine '%s': %s", j->dut->name, j->err.buf);
	if (ssh_run(j->cdut, argv, &out, 30000)) {
		buf_release(&out);
		return step_fail(j, "cannot read the kernel release of machine '%s': %s", j->dut->name,
				 ssh_error(j->cdut));
	}
	buf_trim(&out);
	{
		/* the boot's identity, which every run step checks again (boot_state_lost) */
		const char *bargv[] = { "cat", "/proc/sys/kernel/random/boot_id", NULL };
		struct buf bid = BUF_INIT;
		if (ssh_run(j->cdut, bargv, &bid, 30000)) {
			buf_release(&bid);
			buf_release(&out);
			return step_fail(j, "cannot read the boot id of machine '%s': %s", j->dut->name,
					 ssh_error(j->cdut));
		}
		buf_trim(&bid);
		boots_set(j->db, j->id, b, BOOT_MACHINE_BOOT_ID, bid.buf);
		json_object_object_add(j->detail, "boot_id", json_str(bid.buf));
		buf_release(&bid);
	}
	if (j->dut->boot != BOOT_NONE) {
		int64_t kid = side_kernel(j, j->order[b - 1]);
		struct kernel_artifact art;
		struct deploy_artifact da;
		struct deploy_result res;
		int rc;

		memset(&art, 0, sizeof(art));
		memset(&res, 0, sizeof(res));
		if (kid && !kernel_artifact_load(j->db, kid, &art, NULL)) {
			memset(&da, 0, sizeof(da));
			da.release = art.release;
			da.build_id = art.build_id;
			rc = deploy_verify(j->cdut, &da, 30000, &res);
			if (!rc)
				boots_set(j->db, j->id, b, BOOT_BUILD_ID, res.build_id);
			deploy_result_release(&res);
			kernel_artifact_release(&art);
			if (rc) {
				step_fail(j, "machine '%s' runs %s, not the kernel of boot %d", j->dut->name, out.buf, b);
				buf_release(&out);
				return STEP_FAIL;
			}
		}
	}
	boots_set(j->db, j->id, b, BOOT_RELEASE, out.buf);
	machines_put_seen(j->db, j->dut->name, out.buf, now_wall());
	json_object_object_add(j->detail, "release", json_str(out.buf));
	job_print(j, "  '%s' runs %s", j->dut->name, out.buf);
	buf_release(&out);
	return DONE;
}

int step_agent(struct job_ctx *j, const char *key)
{
	const char *argv[] = { "sysinfo", "--no-tools", NULL };
	struct buf out = BUF_INIT, err = BUF_INIT;
	int up_dut = 0, up_peer = 0, b;

	if (boot_of(key, &b))
		return step_fail(j, "bad step key '%s'", key);
	if (!j->agent_local)
		return step_fail(j, "cannot find the klab-agent program to upload (set KLAB_AGENT)");
	if (connect_machine(j, j->dut, &j->cdut, &j->err) || connect_machine(j, j->peer, &j->cpeer, &j->err))
		return step_fail(j, "cannot reach the machines: %s", j->err.buf);
	if (deploy_agent(j->cdut, j->agent_local, j->agent_remote, &up_dut))
		return step_fail(j, "cannot put klab-agent on machine '%s': %s", j->dut->name, ssh_error(j->cdut));
	if (deploy_agent(j->cpeer, j->agent_local, j->agent_remote, &up_peer))
		return step_fail(j, "cannot put klab-agent on machine '%s': %s", j->peer->name, ssh_error(j->cpeer));
	{
		for (size_t i = 0; i < j->spec.n_workloads; i++) {
			const char *t = tx_target(&j->spec.workloads[i]);
			if (t && !strcmp(t, "blackhole"))
				return step_fail(j, "workload '%s': target = blackhole cannot be used: a connected UDP "
					    "socket cannot send into a blackhole route (use target = dummy)",
					    j->spec.workloads[i].name);
			if (t && !strcmp(t, "dummy") && qlab_dummy_target(j->cdut))
				return step_fail(j, "no udp_tx dummy target on machine '%s': %s", j->dut->name,
						 ssh_error(j->cdut));
		}
	}
	json_object_object_add(j->detail, "uploaded_dut", json_object_new_boolean(up_dut));
	json_object_object_add(j->detail, "uploaded_peer", json_object_new_boolean(up_peer));
	if (agent_call(j, 0, argv, NULL, &out, 60000, 1, &err) == 0) {
		boots_set(j->db, j->id, b, BOOT_SYSINFO, out.buf);
	} else {
		warn("klab-agent sysinfo failed on '%s': %s", j->dut->name, last_line(err.buf));
	}
	buf_release(&out);
	buf_release(&err);
	return DONE;
}

static const char *boot_profile(struct job_ctx *j, int b)
{
	const struct job_spec_side *s = job_spec_side(&j->spec, j->order[b - 1]);
	return s ? s->profile : NULL;
}

int step_prepare(struct job_ctx *j, const char *key)
{
	struct json_object *p;
	const char *name;
	struct buf in = BUF_INIT, out = BUF_INIT, err = BUF_INIT;
	int b, rc;

	if (boot_of(key, &b))
		return step_fail(j, "bad step key '%s'", key);
	name = boot_profile(j, b);
	if (!name)
		return skip_step(j, "no tuning profile for side %c", j->order[b - 1]);
	p = j->spec.profiles ? obj_get(j->spec.profiles, name) : NULL;
	if (!p)
		return step_fail(j, "profile '%s' is missing from the job spec", name);
	/*
	 * Run again after its process died (a klabd killed on another host, a
	 * crash): the earlier attempt may have applied the tuning before it
	 * could record the step done, and the agent refuses to stack a second
	 * one. Restoring first gives the machine back its saved state (or says
	 * "nothing to restore").
	 */
	if (j->attempt > 1) {
		const char *argv[] = { "restore", NULL };

		rc = agent_call(j, 0, argv, NULL, &out, 120000, 1, &err);
		if (rc) {
			step_fail(j, "klab-agent restore before preparing '%s' again failed on machine '%s': %s%s",
				  name, j->dut->name, rc < 0 ? "cannot run it: " : "", rc < 0 ? err.buf : last_line(err.buf));
			buf_release(&out);
			buf_release(&err);
			return STEP_FAIL;
		}
		buf_reset(&out);
		buf_reset(&err);
	}
	/* The agent gets the profile with the NIC it applies to. */
	p = json_object_get(p);
	json_object_object_add(p, "nic", json_str(j->dut->nic));
	json_to_buf(&in, p, 0);
	json_object_put(p);
	{
		const char *argv[] = { "prepare", name, NULL };
		rc = agent_call(j, 0, argv, in.buf, &out, 120000, 0, &err);
	}
	if (rc)
		step_fail(j, "klab-agent prepare '%s' failed on machine '%s': %s%s", name, j->dut->name,
			  rc < 0 ? "cannot run it: " : "", rc < 0 ? err.buf : last_line(err.buf));
	else
		job_print(j, "  tuning profile '%s' applied on '%s'", name, j->dut->name);
	buf_release(&in);
	buf_release(&out);
	buf_release(&err);
	return rc ? STEP_FAIL : DONE;
}

int restore_boot(struct job_ctx *j, int b, struct buf *why)
{
	const char *argv[] = { "restore", NULL };
	struct buf out = BUF_INIT, err = BUF_INIT;
	char *k = xasprintf("boot:%d:prepare", b), *st = NULL;
	int rc = 0;

	step_state(j, k, &st);
	if (st && (!strcmp(st, "done") || !strcmp(st, "running") || !strcmp(st, "failed"))) {
		rc = agent_call(j, 0, argv, NULL, &out, 120000, 1, &err);
		if (rc)
			rc = error_to(why, "klab-agent restore failed on machine '%s': %s%s", j->dut->name,
				      rc < 0 ? "cannot run it: " : "", rc < 0 ? err.buf : last_line(err.buf));
	} else {
		rc = 1;
	}
	free(k);
	free(st);
	buf_release(&out);
	buf_release(&err);
	return rc;
}

int step_restore(struct job_ctx *j, const char *key)
{
	struct buf why = BUF_INIT;
	int b, rc;

	if (boot_of(key, &b))
		return step_fail(j, "bad step key '%s'", key);
	rc = restore_boot(j, b, &why);
	if (rc == 1)
		rc = skip_step(j, "nothing was prepared");
	else if (rc)
		rc = step_fail(j, "cannot restore machine '%s': %s", j->dut->name, why.buf);
	else
		rc = DONE;
	buf_release(&why);
	return rc;
}

/*
 * Parse "run:B:WORKLOAD:R" (a measurement run, *observes set to NULL) or
 * "obs:B:WORKLOAD:MONITOR" (an observation run, *observes pointing at
 * MONITOR in KEY, *r 0).
 */
static int run_key(const char *key, int *b, char *wl, size_t wlen, int *r, const char **observes)
{
	const char *p = key + 4, *last = strrchr(key, ':');
	int obs = starts_with(key, "obs:");
	char *end;
	long v;

	if ((!starts_with(key, "run:") && !obs) || !last)
		return -1;
	v = strtol(p, &end, 10);
	if (end == p || *end != ':' || end + 1 >= last || !last[1])
		return -1;
	*b = (int)v;
	snprintf(wl, wlen, "%.*s", (int)(last - end - 1), end + 1);
	*r = obs ? 0 : atoi(last + 1);
	*observes = obs ? last + 1 : NULL;
	return 0;
}

/*
 * Store one agent result as run UID: one transaction, idempotent by uid.
 * Uses result_store() of orchestrator/result.c. 0 with *STORED its run id, or -1
 * with ERR saying why.
 */
static int store_run(struct job_ctx *j, const char *uid, const char *doc, int b, const char *wl, int r,
		     const char *observes, int64_t *stored, struct buf *err)
{
	struct result_meta m;
	struct json_object *o = NULL;
	char side[2] = { j->order[b - 1], 0 };
	char *what = xasprintf("result of run %s from machine '%s'", uid, j->dut->name);
	const char *doc_id;
	int64_t boot_id = 0, run_id = 0;
	int ret = -1;

	if (result_parse(doc, strlen(doc), what, &o, err))
		goto out;
	doc_id = obj_str(o, "run_id");
	if (!doc_id || strcmp(doc_id, uid)) {
		error_to(err, "%s: it is the result of run '%s'", what, doc_id ? doc_id : "?");
		goto out;
	}
	boots_id(j->db, j->id, b, &boot_id);
	memset(&m, 0, sizeof(m));
	m.job_id = j->id;
	m.boot_id = boot_id;
	m.side = side;
	m.kernel_id = side_kernel(j, side[0]);
	m.workload = wl;
	m.seq = r;
	m.observes = observes;
	m.machine = j->dut->name;
	m.peer = j->peer->name;
	m.profile = boot_profile(j, b);
	m.clock = machine_clock(j->dut);
	m.why = err;
	if (result_store(j->db, doc, strlen(doc), &m, &run_id))
		goto out;
	json_object_object_add(j->detail, "run_id", json_object_new_int64(run_id));
	*stored = run_id;
	ret = 0;
out:
	if (o)
		json_object_put(o);
	free(what);
	return ret;
}

int boot_state_lost(struct job_ctx *j, int b, const char *doc, struct buf *why)
{
	const char *argv[] = { "prepare", "--check", NULL };
	struct buf out = BUF_INIT, err = BUF_INIT;
	struct json_object *o = NULL;
	char *boot = NULL, *rel = NULL, *pst = NULL, *pkey = xasprintf("boot:%d:prepare", b);
	const char *now_boot, *now_rel, *tuning;
	int rc, lost = 1, doc_boot = 0;

	boots_get(j->db, j->id, b, BOOT_MACHINE_BOOT_ID, &boot);
	boots_get(j->db, j->id, b, BOOT_RELEASE, &rel);
	step_state(j, pkey, &pst);
	if (!boot) {
		lost = 0;	/* a boot verified before boot ids were recorded: nothing to compare */
		goto out;
	}
	if (doc) {
		struct json_object *d = json_parse(doc, strlen(doc), "run result");
		const char *db_ = d ? obj_str(obj_get(d, "kernel"), "boot_id") : NULL;
		const char *dr = d ? obj_str(obj_get(d, "kernel"), "release") : NULL;
		if (db_ && strcmp(db_, boot)) {
			buf_addf(why, "the run ran in boot %s of machine '%s', not in boot %d's (%s)", db_,
				 j->dut->name, b, boot);
			if (d)
				json_object_put(d);
			goto out;
		}
		doc_boot = db_ && (!rel || (dr && !strcmp(dr, rel)));
		if (d)
			json_object_put(d);
	}
	/*
	 * A boot with no tuning prepared (its prepare step skipped: no
	 * profile) has nothing for `prepare --check` to find gone but the boot
	 * itself, and a run's document says which boot and kernel it ran in:
	 * the run is checked by that alone, with no SSH session before or after
	 * it (four a run fewer; a session costs an icount guest 0.1-0.2 s of
	 * its CPU and the job 0.5-1 s). A run in another boot is still caught,
	 * after it instead of before (t0522 keeps the tuned boots' checks).
	 */
	if (!(pst && !strcmp(pst, "done")) && (!doc || doc_boot)) {
		lost = 0;
		goto out;
	}
	rc = agent_call(j, 0, argv, NULL, &out, 60000, 1, &err);
	if (rc < 0 || !out.len || !(o = json_parse(out.buf, out.len, "klab-agent prepare --check"))) {
		/* no agent to ask (a machine that rebooted lost it with /var/lib): its boot id says why */
		const char *bid[] = { "cat", "/proc/sys/kernel/random/boot_id", NULL };
		struct buf nb = BUF_INIT;

		if (j->cdut && ssh_run(j->cdut, bid, &nb, 30000) == 0 && (buf_trim(&nb), nb.len) && strcmp(nb.buf, boot))
			buf_addf(why, "machine '%s' rebooted since boot %d (boot id %s, was %s; its klab-agent is gone)",
				 j->dut->name, b, nb.buf, boot);
		else
			buf_addf(why, "cannot ask klab-agent on machine '%s' whether it is still in boot %d's state%s%s",
				 j->dut->name, b, err.len ? ": " : "", last_line(err.buf));
		buf_release(&nb);
		goto out;
	}
	now_boot = obj_str(o, "boot_id");
	now_rel = obj_str(o, "release");
	tuning = obj_str(o, "tuning");
	if (now_boot && strcmp(now_boot, boot))
		buf_addf(why, "machine '%s' rebooted since boot %d (boot id %s, was %s)", j->dut->name, b, now_boot, boot);
	else if (rel && now_rel && strcmp(now_rel, rel))
		buf_addf(why, "machine '%s' runs %s, not %s of boot %d", j->dut->name, now_rel, rel, b);
	else if (rc != 0 || (tuning && !strcmp(tuning, "lost")))
		buf_addf(why, "the tuning of boot %d is gone from machine '%s': %s", b, j->dut->name,
			 obj_str(o, "why") ? obj_str(o, "why") : last_line(err.buf));
	else if (pst && !strcmp(pst, "done") && tuning && !strcmp(tuning, "none"))
		buf_addf(why, "the tuning of boot %d is gone from machine '%s' (no saved tuning there)", b,
			 j->dut->name);
	if (why->len)
		goto out;
	for (size_t i = 0; i < j->spec.n_workloads; i++) {
		const char *t = tx_target(&j->spec.workloads[i]);
		if (t && !strcmp(t, "dummy")) {
			const char *route[] = { "ip", "route", "get", QLAB_DUMMY_TARGET, NULL };
			int lvl = log_get_level();
			log_set_level(LOG_CRIT);
			rc = ssh_run(j->cdut, route, NULL, 10000);
			log_set_level(lvl);
			if (rc) {
				buf_addf(why, "the udp_tx dummy target %s has no route on machine '%s' any more",
					 QLAB_DUMMY_TARGET, j->dut->name);
				goto out;
			}
			break;
		}
	}
	lost = 0;
out:
	if (o)
		json_object_put(o);
	buf_release(&out);
	buf_release(&err);
	free(boot);
	free(rel);
	free(pst);
	free(pkey);
	return lost;
}

static int run_stored(struct job_ctx *j, const char *uid)
{
	return runs_uid_stored(j->db, uid);
}

/* One try: server on the peer, client on the dut. 0 with the client's document in doc. */
static int run_once(struct job_ctx *j, const struct job_spec_workload *w, const char *key, const char *uid,
		    const char *observes, int retry, struct buf *doc, struct buf *why)
{
	struct server_run sr = { 0, NULL, SERVER_LINGER_S, SERVER_START_WAIT_S };
	char *suid = xasprintf("%s-srv", uid);
	char *spec = NULL;
	struct buf err = BUF_INIT, sout = BUF_INIT;
	double warm = w->warmup_s, dur = w->duration_s;
	const char *argv[] = { "run", NULL };
	int rc, ret = -1;

	buf_reset(doc);
	if (connect_machine(j, j->dut, &j->cdut, &err)) {
		buf_addf(why, "cannot reach machine '%s': %s", j->dut->name, err.buf);
		goto out;
	}
	if (needs_server(w)) {
		/* The agent refuses a run id it keeps a result of: clear an earlier try's. */
		if (retry)
			agent_ack(j, 1, suid);
		if (server_start(j, w, suid, &sr)) {
			buf_addf(why, "cannot start the %s on machine '%s'", role_server(w->type),
				 j->peer->name);
			goto stop_server;
		}
		test_kill_point(j, key, "server-up");
	}
	spec = run_spec(j, w, uid, 0, NULL, observes);
	debug("run %s: client starts on '%s'", uid, j->dut->name);
	rc = agent_call(j, 0, argv, spec, doc, guest_ms(j, (long)((warm + dur) * 1000) + 60000), 0, &err);
	debug("run %s: client ended (status %d)", uid, rc);
	if (rc != 0) {
		if (rc < 0)
			buf_addf(why, "cannot run klab-agent on machine '%s': %s", j->dut->name, err.buf);
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
		debug("run %s: waiting for the %s", uid, role_server(w->type));
		if (server_finish(&sr, guest_ms(j, (long)((sr.start_wait_s + warm + dur + sr.linger_s) * 1000) + 30000), &sout) && ret == 0) {
			warn("run '%s': the %s on '%s' failed: %s", uid, role_server(w->type),
			     j->peer->name, last_line(sout.buf));
		} else if (ret == 0) {
			struct json_object *so = json_parse(sout.buf, sout.len, "server result");
			if (so) {
				json_object_object_add(j->detail, "server", so);
			}
		}
		debug("run %s: %s done", uid, role_server(w->type));
	}
out:
	free(suid);
	free(spec);
	buf_release(&err);
	buf_release(&sout);
	return ret;
}

/*
 * agent_fetch UID on the dut (PEER 0) or the peer again every second
 * while RC says the run goes on there (AGENT_FETCH_RUNNING), up to HARD, or
 * while it is not there yet (1), up to UNTIL: the last answer.
 */
static int fetch_while_running(struct job_ctx *j, int peer, const char *uid, struct buf *doc, int rc,
			       double until, double hard)
{
	while ((rc == 1 && now_wall() < until) || (rc == AGENT_FETCH_RUNNING && now_wall() < hard)) {
		sleep(1);
		rc = agent_fetch(j, peer, uid, doc, &j->err);
	}
	return rc;
}

/*
 * A resumed run step: the server (sink) an earlier attempt started on the
 * peer may still wait for its client or linger, holding the run id "UID-srv"
 * (the agent would refuse to start it again) and its port. Wait for it to
 * end, to its deadline at most, and forget its result. Nothing to do on a
 * first attempt.
 */
static void earlier_server_gone(struct job_ctx *j, const struct job_spec_workload *w, const char *uid)
{
	char *suid;
	struct buf doc = BUF_INIT;
	double hard;
	int rc;

	if (j->attempt <= 1 || !needs_server(w))
		return;
	suid = xasprintf("%s-srv", uid);
	hard = (j->step_started_prev > 0 ? j->step_started_prev : now_wall()) + SERVER_START_WAIT_S +
	       w->warmup_s + w->duration_s + SERVER_LINGER_S + 120;
	rc = agent_fetch(j, 1, suid, &doc, NULL);
	if (rc == AGENT_FETCH_RUNNING)
		job_print(j, "  the %s of an earlier attempt of %s still runs on '%s'; waiting for it to end",
			  role_server(w->type), uid, j->peer->name);
	rc = fetch_while_running(j, 1, suid, &doc, rc, 0, hard);
	if (rc == 0)
		agent_ack(j, 1, suid);
	buf_release(&doc);
	free(suid);
}

/*
 * A run that did work that is not the workload's (docs/qemu-icount.md, "A
 * run that did other work"): on a one-CPU icount machine a measurement run
 * whose insn_per_op is more than RUN_DISTURBED_PCT above the lowest of its
 * boot's other runs of the workload (the instrument's own spread is ppm) is
 * kept as RUN_DISTURBED, out of every comparison, and the step runs it again
 * as UID-againN, RUN_AGAIN_MAX times at most; the last take is kept whatever
 * it reads. 1 when run RUN_ID was set aside (*TAKES counted), else 0.
 */
#define RUN_DISTURBED_PCT 0.5
#define RUN_AGAIN_MAX 2

static int run_disturbed(struct job_ctx *j, int64_t run_id, const char *uid, int *takes)
{
	struct json_object *a;
	double pct;

	if (*takes >= RUN_AGAIN_MAX || runs_icount_excess(j->db, run_id, &pct) || !(pct > RUN_DISTURBED_PCT) ||
	    runs_set_status(j->db, run_id, RUN_DISTURBED))
		return 0;
	(*takes)++;
	job_print(j, "  run %s: insn_per_op %+.2f%% above the lowest of the boot's other runs (the instrument's spread "
		  "is ppm): work that was not the workload's; kept as %s, run again (%d of %d)", uid, pct,
		  RUN_DISTURBED, *takes, RUN_AGAIN_MAX);
	if (!json_object_object_get_ex(j->detail, RUN_DISTURBED, &a)) {
		a = json_object_new_array();
		json_object_object_add(j->detail, RUN_DISTURBED, a);
	}
	json_object_array_add(a, json_str(uid));
	return 1;
}

/* The run id of take TAKE (0 the first) of a measurement run BASE. */
static void run_take_uid(char *uid, size_t len, const char *base, int take)
{
	if (take)
		snprintf(uid, len, "%s-again%d", base, take);
	else
		snprintf(uid, len, "%s", base);
}

int step_run(struct job_ctx *j, const char *key)
{
	char wl[256], base[400], uid[420];
	const char *observes;
	int b, r, rc, takes, stored = 0;
	int64_t run_id = 0;
	const struct job_spec_workload *w;
	struct buf doc = BUF_INIT, why = BUF_INIT;
	int ret = STEP_FAIL;

	if (run_key(key, &b, wl, sizeof(wl), &r, &observes) || b < 1 || (size_t)b > strlen(j->order))
		return step_fail(j, "bad step key '%s'", key);
	w = job_spec_workload(&j->spec, wl);
	if (!w)
		return step_fail(j, "workload '%s' is missing from the job spec", wl);
	if (observes)
		snprintf(base, sizeof(base), "j%lld-%s-b%d-%s-obs-%s", (long long)j->id, j->spec.uid_salt,
			 b, wl, observes);
	else
		snprintf(base, sizeof(base), "j%lld-%s-b%d-%s-r%d", (long long)j->id, j->spec.uid_salt,
			 b, wl, r);
	/* the take to go on with: past those stored as disturbed */
	for (takes = 0;; takes++) {
		run_take_uid(uid, sizeof(uid), base, takes);
		stored = run_stored(j, uid);
		if (stored != 2 || takes == RUN_AGAIN_MAX)
			break;
	}
	json_object_object_add(j->detail, "uid", json_str(uid));

	/* 1. Stored already (the process died between store and step end)? */
	if (stored == 1) {
		agent_ack(j, 0, uid);
		json_object_object_add(j->detail, "recovered", json_str("database"));
		job_print(j, "  run %s was already stored", uid);
		return DONE;
	}
	/*
	 * 2. Still on the agent (the process died after the run)? Only an
	 * earlier attempt of this step can have left it there.
	 */
	rc = j->attempt > 1 ? agent_fetch(j, 0, uid, &doc, &j->err) : 1;
	if ((rc == 1 && j->step_started_prev > 0) || rc == AGENT_FETCH_RUNNING) {
		/*
		 * An earlier attempt may still be running on the machine (we died
		 * mid-run): wait for its result. The agent says so while its run
		 * holds the run lock (AGENT_FETCH_RUNNING), to the end of the
		 * agent's own deadline at most; a result not there and no lock
		 * held is waited for until the run must have ended (an agent
		 * from before the lock, or one that has not started yet).
		 */
		double t0 = j->step_started_prev > 0 ? j->step_started_prev : now_wall(),
		       len = w->warmup_s + w->duration_s,
		       until = t0 + len + 20, hard = t0 + SERVER_START_WAIT_S + len + 120;
		if (now_wall() < until || rc == AGENT_FETCH_RUNNING)
			job_print(j, "  an earlier attempt of %s %s; waiting up to %.0f s for it", uid,
				  rc == AGENT_FETCH_RUNNING ? "is still running" : "may still be running",
				  (rc == AGENT_FETCH_RUNNING ? hard : until) - now_wall());
		rc = fetch_while_running(j, 0, uid, &doc, rc, until, hard);
		if (rc == AGENT_FETCH_RUNNING)
			return step_fail(j, "an earlier attempt of run %s still runs on '%s' %.0f s after it started",
					 uid, j->dut->name, now_wall() - t0);
	}
	if (rc == 0 || rc == 1)
		earlier_server_gone(j, w, uid);
	if (rc == 0 && boot_state_lost(j, b, doc.buf, &why)) {
		agent_ack(j, 0, uid);	/* measured outside the boot's state: never stored */
		goto lost;
	}
	buf_reset(&why);
	if (rc == 0 && !result_failed(doc.buf, &why)) {
		json_object_object_add(j->detail, "recovered", json_str("agent"));
		job_print(j, "  run %s recovered from the agent on '%s'", uid, j->dut->name);
		goto store;
	}
	if (rc == 0)
		agent_ack(j, 0, uid);	/* a failed result: run it again */
	if (rc < 0)
		return step_fail(j, "cannot ask the agent on '%s' for run %s: %s", j->dut->name, uid, j->err.buf);

	/* 3. Run it, retried once, on a machine still in its boot's state. */
	buf_reset(&why);
	if (boot_state_lost(j, b, NULL, &why))
		goto lost;
again:
	for (int attempt = 1; attempt <= 2; attempt++) {
		buf_reset(&why);
		if (run_once(j, w, key, uid, observes, attempt > 1 || j->attempt > 1, &doc, &why) == 0)
			break;
		if (attempt == 2) {
			step_fail(j, "run %s failed twice: %s", uid, why.buf);
			goto out;
		}
		warn("run %s failed: %s; retrying once", uid, why.buf);
		json_object_object_add(j->detail, "first_failure", json_str(why.buf));
		agent_ack(j, 0, uid);
		sleep(1);
	}
	buf_reset(&why);
	if (boot_state_lost(j, b, doc.buf, &why)) {
		agent_ack(j, 0, uid);
		goto lost;
	}
store:
	test_kill_point(j, key, "before-store");
	if (store_run(j, uid, doc.buf, b, wl, r, observes, &run_id, &j->err)) {
		step_fail(j, "cannot store run %s: %s", uid, j->err.buf);
		goto out;
	}
	test_kill_point(j, key, "after-store");
	agent_ack(j, 0, uid);
	if (!observes && run_disturbed(j, run_id, uid, &takes)) {
		run_take_uid(uid, sizeof(uid), base, takes);
		json_object_object_add(j->detail, "uid", json_str(uid));
		goto again;
	}
	ret = DONE;
	goto out;
lost:
	buf_reset(&j->why);
	buf_addstr(&j->why, why.buf);
	json_object_object_add(j->detail, "boot_state_lost", json_str(why.buf));
	job_print(j, "  run %s not stored: %s; boot %d is redone", uid, why.buf, b);
	ret = STEP_REBOOT;
out:
	buf_release(&doc);
	buf_release(&why);
	return ret;
}

int step_release(struct job_ctx *j, const char *key)
{
	close_machines(j);
	if (lease_release(j->db, j->id))
		return step_fail(j, "cannot release the machines: %s", db_error(j->db));
	j->leased = 0;
	return DONE;
}

/* compare_opts.workload_info from the job's own spec (what the config said at submit). */
static double spec_workload_info(void *arg, const char *workload, const char **headline)
{
	const struct job_spec_workload *w = job_spec_workload(arg, workload);

	*headline = w ? w->headline : NULL;
	return w ? w->threshold_pct : 0;
}

int decided_last_boot(struct job_ctx *j)
{
	int64_t n = 0;

	if (looks_decided_boots(j->db, j->id, &n) <= 0)
		return 0;
	return (int)(2 * n);
}

/*
 * look:N (boots = MIN..MAX): each side has N boots. The headline verdicts at
 * the level of a look (0.05 / K), stored in `looks`; when every one is CHANGED
 * or EQUIVALENT the job stops adding boots (the boots after 2N are skipped).
 */
int step_look(struct job_ctx *j, const char *key)
{
	struct compare_opts co = COMPARE_OPTS_INIT;
	struct compare_result res = { 0 };
	int n = atoi(key + strlen("look:")), lmin, lmax, looks = spec_looks(&j->spec, &lmin, &lmax);
	int look = stats_seq_look(lmin, lmax, COMPARE_LOOK_STEP, n), decided;
	const struct compare_row *uncal = NULL;	/* a headline of one boot a side without a calibration */
	size_t heads = 0;

	if (!looks || !look)
		return step_fail(j, "step %s is not a look of boots = %d..%d", key, lmin, lmax);
	co.warmup_runs = j->spec.warmup_runs;
	co.workload_info = spec_workload_info;
	co.workload_arg = &j->spec;
	co.alpha = stats_seq_alpha(looks);
	co.why = &j->err;
	if (compare_job(j->db, j->id, &co, &res))
		return step_fail(j, "cannot compare the sides of job %lld at look %d: %s", (long long)j->id, look,
				 j->err.buf);
	decided = compare_decided(&res);
	if (compare_store_look(j->db, j->id, look, looks, n, co.alpha, &res)) {
		compare_result_free(&res);
		return step_fail(j, "cannot store look %d: %s", look, db_error(j->db));
	}
	test_kill_point(j, key, "after-store");
	for (size_t i = 0; i < res.n_rows; i++) {
		struct buf t = BUF_INIT;
		const struct compare_row *r = &res.rows[i];

		if (!r->headline)
			continue;
		heads++;
		if ((r->st.n_a < 2 || r->st.n_b < 2) && r->st.cal != STATS_CAL_USED && !uncal)
			uncal = r;
		compare_fmt_verdict(&t, r);
		buf_addch(&t, ' ');
		compare_fmt_change_ci(&t, r);
		job_print(j, "  look %d/%d (%d boots per side, alpha %.4g): %s %s %s", look, looks, n, co.alpha,
			  r->workload, r->metric, t.buf);
		buf_release(&t);
	}
	json_object_object_add(j->detail, "look", json_object_new_int(look));
	json_object_object_add(j->detail, "looks", json_object_new_int(looks));
	json_object_object_add(j->detail, "alpha", json_object_new_double(co.alpha));
	json_object_object_add(j->detail, "decided", json_object_new_boolean(decided));
	if (uncal && n < lmax)
		job_print(j, "  look %d/%d: one boot a side decides only on a calibrated instrument, and %s %s "
			  "has no calibration here (klab calibrate)", look, looks, uncal->workload, uncal->metric);
	compare_result_free(&res);
	if (decided && n < lmax) {
		j->last_boot = 2 * n;
		job_print(j, "  look %d/%d: every headline verdict is decided after %d boots per side; "
			  "the boots up to %d are not needed", look, looks, n, lmax);
	} else if (!decided && n < lmax) {
		job_print(j, "  look %d/%d: %s; adding boots", look, looks,
			  heads ? "not every headline verdict is decided" : "no headline metric yet");
	}
	return DONE;
}

int step_compare(struct job_ctx *j, const char *key)
{
	struct compare_opts co = COMPARE_OPTS_INIT;
	if (strlen(j->spec.letters) < 2)
		return skip_step(j, "one side only (first nightly: nothing to compare with yet)");
	co.warmup_runs = j->spec.warmup_runs;
	co.workload_info = spec_workload_info;	/* the same T and headline as `klab compare` */
	co.workload_arg = &j->spec;
	co.why = &j->err;
	if (compare_job(j->db, j->id, &co, NULL))
		return step_fail(j, "cannot compare the sides of job %lld: %s", (long long)j->id, j->err.buf);
	return DONE;
}

int step_report(struct job_ctx *j, const char *key)
{
	const char *dir = j->cfg->lab.report_dir;

	if (!dir)
		return skip_step(j, "no report_dir in [lab]");
	if (!j->o->report)
		return skip_step(j, "no report writer given to the job runner");
	if (j->o->report(j->db, dir, j->id, &j->err))
		return step_fail(j, "cannot write the report pages of job %lld into '%s': %s", (long long)j->id, dir,
				 j->err.buf);
	{
		char *p = xasprintf("%s/job-%lld.html", dir, (long long)j->id);
		json_object_object_add(j->detail, "page", json_str(p));
		job_print(j, "  report: %s", p);
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
void notify_command(struct job_ctx *j, const char *state, const char *err)
{
	const char *cmd = getenv("KLAB_NOTIFY_CMD");
	struct strvec argv = STRVEC_INIT, env = STRVEC_INIT;
	struct run_cmd c = RUN_CMD_INIT;

	if (!cmd || !*cmd)
		return;
	strvec_split(&argv, cmd, " \t");
	strvec_pushf(&env, "KLAB_JOB_ID=%lld", (long long)j->id);
	strvec_pushf(&env, "KLAB_JOB_NAME=%s", j->spec.name);
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

int step_notify(struct job_ctx *j, const char *key)
{
	int64_t runs = 0, changed = 0;

	runs = runs_count_of_job(j->db, j->id);
	comparisons_count_changed(j->db, j->id, &changed);
	log_msg(j->o->progress ? LOG_INFO : LOG_NOTICE, "job %lld '%s' finished: %lld runs stored, %lld metrics CHANGED",
		(long long)j->id, j->spec.name, (long long)runs, (long long)changed);
	json_object_object_add(j->detail, "runs", json_object_new_int64(runs));
	json_object_object_add(j->detail, "changed", json_object_new_int64(changed));
	notify_command(j, "done", NULL);
	return DONE;
}
