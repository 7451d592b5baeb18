/* orch-job.c: the job engine without machines: ABBA order, plan, spec of each job kind, find and cancel. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf.h"
#include "store/db.h"
#include "job/job.h"
#include "job/job_int.h"
#include "jsonh.h"
#include "log.h"
#include "tap.h"
#include "util.h"

#define CONFIG_TEXT \
	"[lab]\n\tdb = %s/job.db\n" \
	"[machine \"dut\"]\n\thost = 198.18.255.2\n\trole = dut\n\tpeer = peer\n\tnic = wl0\n\taddr = 198.18.0.1\n\tboot = kexec\n" \
	"[machine \"peer\"]\n\thost = 198.18.255.6\n\trole = peer\n\tnic = wl1\n\taddr = 198.18.0.2\n\tboot = none\n" \
	"[machine \"ndut\"]\n\thost = 198.18.255.10\n\trole = dut\n\tpeer = npeer\n\tboot = none\n" \
	"[machine \"npeer\"]\n\thost = 198.18.255.14\n\trole = peer\n\tboot = none\n" \
	"[tree \"t\"]\n\ttarball = /dev/null\n" \
	"[profile \"a\"]\n\txps = off\n" \
	"[profile \"b\"]\n\txps = auto\n\tsysctl.net.core.busy_poll = 50\n" \
	"[workload \"rr\"]\n\ttype = udp_rr\n\tflows = 8\n\tduration = 3s\n\twarmup = 1s\n\tmonitors = cpu\n" \
	"[workload \"tx\"]\n\ttype = udp_tx\n\tpayload_size = 64\n\tduration = 2s\n\tmonitors = cpu perf-profile\n" \
	"[workload \"rw\"]\n\ttype = udp_rr\n\tflows = 8\n\tduration = 20s\n\tops = 5000\n\twarmup_ops = 500\n\tmonitors = cpu\n" \
	"[job \"work\"]\n\tprofile_a = a\n\tprofile_b = b\n\tmachines = ndut npeer\n\tworkloads = rw tx\n" \
	"[job \"tune\"]\n\tprofile_a = a\n\tprofile_b = b\n\tmachines = ndut npeer\n\tworkloads = rr tx\n\tboots = 2\n\truns = 2\n\twarmup_runs = 1\n\tseed = 42\n" \
	"[job \"refs\"]\n\ttree = t\n\tbase = v6.1\n\ttest = v6.2\n\tmachines = dut peer\n\tworkloads = rr\n" \
	"[job \"refs-none\"]\n\ttree = t\n\tbase = v6.1\n\ttest = v6.2\n\tmachines = ndut npeer\n\tworkloads = rr\n" \
	"[job \"night\"]\n\ttree = t\n\tmachines = dut peer\n\tworkloads = rr\n\tboots = 2\n" \
	"[job \"adapt\"]\n\tprofile_a = a\n\tprofile_b = b\n\tmachines = ndut npeer\n\tworkloads = rr\n\tboots = 2..7\n\truns = 1\n\twarmup_runs = 0\n" \
	"[job \"adapt1\"]\n\tprofile_a = a\n\tprofile_b = b\n\tmachines = ndut npeer\n\tworkloads = rr\n\tboots = 1..3\n\truns = 1\n\twarmup_runs = 0\n" \
	"[job \"refs-tx\"]\n\ttree = t\n\tbase = v6.1\n\ttest = v6.2\n\tmachines = dut peer\n\tworkloads = rr tx\n" \
	"[schedule \"nightly\"]\n\tcron = 0 3 * * *\n\tjob = night\n"


static struct json_object *job_spec(struct db *db, int64_t id)
{
	char *s = NULL;
	struct json_object *o;

	db_get_str(db, &s, "SELECT spec FROM jobs WHERE id = ?", "i", id);
	o = s ? json_parse(s, strlen(s), "spec") : NULL;
	free(s);
	return o;
}

/* The spec document as the job runner reads it. */
static void typed(struct json_object *spec, struct job_spec *js)
{
	job_spec_parse(json_object_to_json_string(spec), js);
}

static const char *jstr(struct json_object *o, const char *path1, int idx, const char *path2)
{
	struct json_object *v = NULL;

	if (!json_object_object_get_ex(o, path1, &v))
		return NULL;
	if (idx >= 0)
		v = json_object_array_get_idx(v, (size_t)idx);
	if (path2 && !json_object_object_get_ex(v, path2, &v))
		return NULL;
	return v ? json_object_get_string(v) : NULL;
}

/* The monitors of a run spec as one string ("cpu nic"). */
static void spec_monitors(const char *spec_text, char *out, size_t n)
{
	struct json_object *o = json_tokener_parse(spec_text), *m = NULL;

	out[0] = '\0';
	if (o && json_object_object_get_ex(o, "monitors", &m))
		for (size_t i = 0; i < json_object_array_length(m); i++)
			snprintf(out + strlen(out), n - strlen(out), "%s%s", i ? " " : "",
				 json_object_get_string(json_object_array_get_idx(m, i)));
	json_object_put(o);
}

/*
 * Measurement runs carry only the monitors read at the window's edges;
 * an observation run adds the one it observes, a bare one none; the
 * server never runs a monitor (issue 34, docs/observation.md).
 */
static void test_run_monitors(void)
{
	struct conf_machine dut = { .name = "d", .addr = "198.18.0.1" }, peer = { .name = "p", .addr = "198.18.0.2" };
	struct job_ctx j;
	struct job_spec_workload w;
	struct server_run sr = { 0, NULL, 2, 30 };
	struct json_object *mon = json_tokener_parse("[\"cpu\", \"perf-profile\", \"nic\", \"bpftrace\", \"perf-stat\", \"pmu\"]");
	char got[256], *spec;

	memset(&j, 0, sizeof(j));
	memset(&w, 0, sizeof(w));
	j.dut = &dut;
	j.peer = &peer;
	w.name = "rr";
	w.type = "udp_rr";
	w.monitors = mon;
	w.params = json_object_new_object();
	w.duration_s = 2;
	w.warmup_s = 1;
	ok(monitor_observes("bpftrace") && monitor_observes("perf-profile"), "probes and samplers observe");
	ok(monitor_observes("perf-stat") && monitor_observes("nic"), "so do per-event counters and reads in the window");
	ok(!monitor_observes("cpu"), "the cpu monitor (/proc/stat at the window's edges) measures");
	ok(!monitor_observes("pmu"), "so do the hardware counters (no work per event)");
	spec = run_spec(&j, &w, "u1", 0, NULL, NULL);
	spec_monitors(spec, got, sizeof(got));
	is_str(got, "cpu pmu", "a measurement run carries the cpu monitor and the hardware counters only");
	free(spec);
	spec = run_spec(&j, &w, "u2", 0, NULL, "bpftrace");
	spec_monitors(spec, got, sizeof(got));
	is_str(got, "cpu bpftrace pmu", "an observation run adds the monitor it observes");
	free(spec);
	spec = run_spec(&j, &w, "u3", 0, NULL, OBSERVE_BARE);
	spec_monitors(spec, got, sizeof(got));
	is_str(got, "", "a bare observation run has no monitor");
	free(spec);
	spec = run_spec(&j, &w, "u4", 1, &sr, "bpftrace");
	spec_monitors(spec, got, sizeof(got));
	is_str(got, "", "the server runs no monitor");
	free(spec);
	json_object_put(mon);
	json_object_put(w.params);
}

/* A number of a run spec's JSON (NaN when absent); a param's text into *PARAM when asked. */
static double spec_num(const char *spec_text, const char *key, const char *param, char *out, size_t n)
{
	struct json_object *o = json_tokener_parse(spec_text), *v = NULL, *wl = NULL, *p = NULL;
	double d = NAN;

	if (out)
		snprintf(out, n, "(none)");
	if (o && key && json_object_object_get_ex(o, key, &v))
		d = json_object_get_double(v);
	if (o && param && json_object_object_get_ex(o, "workload", &wl) && json_object_object_get_ex(wl, "params", &p) &&
	    json_object_object_get_ex(p, param, &v) && out)
		snprintf(out, n, "%s", json_object_get_string(v));
	json_object_put(o);
	return d;
}

/*
 * Runs sized by work (issue 35 items 2, 3): the spec's ops as given, the
 * icount defaults with seeded ports where the workload names none, and a
 * timed run on a real clock.
 */
static void test_run_work(void)
{
	struct conf_machine dut = { .name = "d", .addr = "198.18.0.1" }, peer = { .name = "p", .addr = "198.18.0.2" };
	struct job_ctx j;
	struct job_spec_workload w;
	struct server_run sr = { 0, NULL, 2, 30 };
	struct job_work work;
	char seed[32], *spec;

	memset(&j, 0, sizeof(j));
	memset(&w, 0, sizeof(w));
	j.dut = &dut;
	j.peer = &peer;
	w.name = "rr";
	w.type = "udp_rr";
	w.params = json_object_new_object();
	w.duration_s = 2;
	w.warmup_s = 0.5;
	w.ops = -1;	/* not given */

	spec = run_spec(&j, &w, "r1", 0, NULL, NULL);
	ok(isnan(spec_num(spec, "ops", "seed", seed, sizeof(seed))) && spec_num(spec, "duration_s", NULL, NULL, 0) == 2 &&
	   spec_num(spec, "warmup_s", NULL, NULL, 0) == 0.5, "real clock, no ops: a timed run of 0.5 + 2 s");
	is_str(seed, "(none)", "real clock: no seed added");
	free(spec);

	dut.clock = "icount";
	spec = run_spec(&j, &w, "r2", 0, NULL, NULL);
	is_int((long long)spec_num(spec, "ops", "seed", seed, sizeof(seed)), JOB_SPEC_ICOUNT_OPS_UDP_RR,
	       "icount, no ops: the default transactions");
	is_int((long long)spec_num(spec, "warmup_ops", NULL, NULL, 0), JOB_SPEC_ICOUNT_WARMUP_OPS_UDP_RR, "and its warm-up");
	ok(spec_num(spec, "warmup_s", NULL, NULL, 0) == 0 && spec_num(spec, "duration_s", NULL, NULL, 0) == 2.5,
	   "no warm-up in seconds; warm-up + duration is the time limit");
	is_str(seed, "1", "icount: the client's ports seeded by default");
	free(spec);
	spec = run_spec(&j, &w, "r2o", 0, NULL, "bpftrace");
	is_int((long long)spec_num(spec, "ops", "seed", seed, sizeof(seed)), JOB_SPEC_ICOUNT_OPS_UDP_RR,
	       "icount, an observation run: sized by work as the measurement runs (the agent waits for bpftrace)");
	ok(spec_num(spec, "warmup_s", NULL, NULL, 0) == 0 && spec_num(spec, "duration_s", NULL, NULL, 0) == 2.5,
	   "and the same time limit");
	is_str(seed, "1", "with the seeded ports");
	free(spec);
	spec = run_spec(&j, &w, "r2b", 0, NULL, OBSERVE_BARE);
	is_int((long long)spec_num(spec, "ops", "seed", seed, sizeof(seed)), JOB_SPEC_ICOUNT_OPS_UDP_RR,
	       "icount, the bare observation run: sized by work as the measurement runs are");
	ok(spec_num(spec, "warmup_s", NULL, NULL, 0) == 0 && spec_num(spec, "duration_s", NULL, NULL, 0) == 2.5,
	   "the bare run: the same warm-up in ops and time limit as a measurement run");
	free(spec);
	spec = run_spec(&j, &w, "r3", 1, &sr, NULL);
	ok(isnan(spec_num(spec, "ops", "seed", seed, sizeof(seed))) && spec_num(spec, "idle_end_s", NULL, NULL, 0) == 0.5,
	   "the server gets no work but ends idle_end_s after the client");
	is_str(seed, "(none)", "the server draws no ports");
	free(spec);
	w.ops = 0;
	spec = run_spec(&j, &w, "r5", 0, NULL, NULL);
	ok(isnan(spec_num(spec, "ops", "seed", seed, sizeof(seed))) && spec_num(spec, "warmup_s", NULL, NULL, 0) == 0.5,
	   "icount, ops = 0: a timed run as before");
	is_str(seed, "(none)", "and the kernel picks the ports");
	free(spec);

	json_object_object_add(w.params, "seed", json_object_new_string("7"));
	w.ops = 3000;
	w.warmup_ops = 100;
	w.warmup_s = 0;
	w.duration_s = 20;
	spec = run_spec(&j, &w, "r4", 0, NULL, NULL);
	ok(spec_num(spec, "ops", "seed", seed, sizeof(seed)) == 3000 && spec_num(spec, "warmup_ops", NULL, NULL, 0) == 100 &&
	   spec_num(spec, "duration_s", NULL, NULL, 0) == 20, "the workload's own ops, its duration the limit");
	is_str(seed, "7", "the workload's own seed is kept");
	free(spec);

	json_object_put(w.params);
	w.params = json_tokener_parse("{\"gso_size\": \"1400\"}");
	w.type = "udp_tx";
	w.ops = -1;
	w.warmup_ops = 0;
	w.warmup_s = 1;
	w.duration_s = 3;
	job_spec_work(&w, 1, &work);
	ok(!work.ops && work.duration_s == 3 && work.warmup_s == 1 && work.seed == 1,
	   "udp_tx with gso_size keeps its timed run under icount (ops must be multiples of its segments)");
	json_object_put(w.params);
	w.params = json_tokener_parse("{\"rate_pps\": \"20000\"}");
	job_spec_work(&w, 1, &work);
	ok(!work.ops && work.duration_s == 3, "so does udp_tx with rate_pps (the default work would outlast its limit)");
	json_object_put(w.params);
	w.params = NULL;
	job_spec_work(&w, 1, &work);
	ok(work.ops == JOB_SPEC_ICOUNT_OPS_UDP_TX && work.warmup_ops == JOB_SPEC_ICOUNT_WARMUP_OPS_UDP_TX &&
	   work.limit_s == 4, "udp_tx under icount: the default packets, limit 4 s");
}

int main(void)
{
	test_run_monitors();
	char order[64], order2[64], path[512], *text;
	struct klab_config cfg;
	struct db *db;
	int64_t id;

	log_init("orch-job", 0, LOG_ERR);

	/* ---- ABBA order ---- */
	for (int boots = 1; boots <= 7; boots++) {
		int na = 0, nb = 0, quads_ok = 1;
		job_order(boots, 12345, 0, order);
		for (char *p = order; *p; p++)
			*p == 'A' ? na++ : nb++;
		for (int q = 0; q + 3 < 2 * boots; q += 4)
			if (order[q] != order[q + 3] || order[q + 1] != order[q + 2] || order[q] == order[q + 1])
				quads_ok = 0;
		is_int((long)strlen(order), 2 * boots, "boots %d: %d letters", boots, 2 * boots);
		ok(na == boots && nb == boots, "boots %d: balanced (%s)", boots, order);
		ok(quads_ok, "boots %d: each quad is XYYX (%s)", boots, order);
	}
	job_order(4, 99, 0, order);
	job_order(4, 99, 0, order2);
	is_str(order, order2, "the same seed gives the same order");
	{
		int seen_ab = 0, seen_ba = 0;
		for (int s = 0; s < 64; s++) {
			job_order(1, s, 0, order);
			if (!strcmp(order, "AB"))
				seen_ab++;
			else if (!strcmp(order, "BA"))
				seen_ba++;
		}
		ok(seen_ab > 10 && seen_ba > 10 && seen_ab + seen_ba == 64,
		   "seeds 0..63 start with A %d times and with B %d times", seen_ab, seen_ba);
	}
	job_order(3, 7, 1, order);
	is_str(order, "ABABAB", "order = fixed is ABAB...");

	/* ---- submit: spec of each kind ---- */
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

	{
		struct job_submit_opts o = JOB_SUBMIT_OPTS_INIT;
		struct json_object *spec;
		struct strvec plan = STRVEC_INIT;
		o.job = "tune";
		id = job_submit(db, &cfg, &o, NULL);
		ok(id == 1, "tuning job submitted as job 1");
		spec = job_spec(db, id);
		is_str(jstr(spec, "kind", -1, NULL), "tuning", "kind tuning");
		is_str(jstr(spec, "sides", 0, "profile"), "a", "side A has profile a");
		is_str(jstr(spec, "sides", 1, "profile"), "b", "side B has profile b");
		is_str(jstr(spec, "seed", -1, NULL), "42", "the job's seed");
		is_str(jstr(spec, "workloads", 0, "duration_s"), "3.0", "duration in seconds");
		is_str(jstr(spec, "workloads", 1, "type"), "udp_tx", "second workload");
		ok(strstr(json_object_to_json_string_ext(spec, JSON_C_TO_STRING_PLAIN), "\"net.core.busy_poll\":\"50\"") != NULL, "profile b's sysctls in the spec");
		struct job_spec js;
		typed(spec, &js);
		ok(!job_plan(&js, 42, &plan), "plan");
		job_spec_release(&js);
		/*
		 * 3 (intake, 2 builds) + lease + 4 boots x (4 + 3 runs x 2 workloads + restore) + 4,
		 * and in the first boot of each side (ABBA or BAAB: boots 1 and 2) the observation
		 * runs of tx (perf-profile, then bare); rr lists only the cpu monitor: none
		 */
		is_int(plan.n, 3 + 1 + 4 * (4 + 6 + 1) + 2 * 2 + 4, "plan has every step");
		is_str(plan.v[0], "intake", "first step");
		is_str(plan.v[3], "lease", "lease after the builds");
		is_str(plan.v[4], "boot:1:deploy", "then boot 1");
		is_str(plan.v[8], "run:1:rr:0", "runs: warm-up run first");
		is_str(plan.v[9], "run:1:tx:0", "workloads interleaved within a run index");
		is_str(plan.v[14], "obs:1:tx:perf-profile", "observation runs after the measurement runs");
		is_str(plan.v[15], "obs:1:tx:bare", "then the bare one");
		is_str(plan.v[16], "boot:1:restore", "restore closes the boot");
		is_str(plan.v[17 + 11], "obs:2:tx:bare", "the first boot of the other side observes too");
		is_str(plan.v[17 + 13 + 10], "boot:3:restore", "boot 3 has no observation run");
		is_str(plan.v[plan.n - 1], "notify", "notify last");
		strvec_clear(&plan);
		json_object_put(spec);
		is_int(id, 1, "id");
		{
			int64_t n = 0;
			db_get_int(db, &n, "SELECT count(*) FROM job_sides WHERE job_id = 1 AND profile IS NOT NULL", "");
			is_int(n, 2, "job_sides rows with profiles");
		}
	}
	{
		struct job_submit_opts o = JOB_SUBMIT_OPTS_INIT;
		struct json_object *spec;
		o.job = "refs";
		o.seed = 5;
		o.boots = 3;
		id = job_submit(db, &cfg, &o, NULL);
		spec = job_spec(db, id);
		is_str(jstr(spec, "kind", -1, NULL), "refs", "kind refs");
		is_str(jstr(spec, "sides", 0, "ref"), "v6.1", "side A builds v6.1");
		is_str(jstr(spec, "sides", 1, "ref"), "v6.2", "side B builds v6.2");
		is_str(jstr(spec, "boots", -1, NULL), "3", "--boots override");
		is_str(jstr(spec, "seed", -1, NULL), "5", "--seed override");
		json_object_put(spec);

		o.job = "refs";
		o.test = NULL;
		o.series = "mbox:/dev/null";
		id = job_submit(db, &cfg, &o, NULL);
		spec = job_spec(db, id);
		is_str(jstr(spec, "kind", -1, NULL), "series", "a --series override makes a series job");
		is_str(jstr(spec, "sides", 1, "variant"), "patched", "side B is the patched kernel");
		json_object_put(spec);

		o.job = "refs-none";
		o.series = NULL;
		{
			struct buf why = BUF_INIT;

			ok(job_submit(db, &cfg, &o, &why) == -1 && strstr(why.buf, "job 'refs-none' compares two kernels"),
			   "comparing kernels on boot = none machines is refused, the reason handed up: %s", why.buf);
			o.job = "nosuch";
			ok(job_submit(db, &cfg, &o, &why) == -1 &&
			   !strcmp(why.buf, "no job 'nosuch' in the config (jobs are [job \"NAME\"] sections)"),
			   "unknown job refused, the reason handed up: %s", why.buf);
			buf_release(&why);
		}
	}
	{
		/* nightlies: the first has one side; the next compares with its kernel */
		struct conf_schedule s = { (char *)"nightly", (char *)"0 3 * * *", (char *)"night", 0 };
		void *arg[2] = { db, &cfg };
		struct json_object *spec;
		struct strvec plan = STRVEC_INIT;
		int64_t first = job_submit_schedule(arg, &s), second;

		spec = job_spec(db, first);
		is_str(jstr(spec, "kind", -1, NULL), "nightly", "kind nightly");
		is_int(json_object_array_length(json_object_object_get(spec, "sides")), 1, "first nightly: one side");
		{
			struct job_spec js;
			typed(spec, &js);
			job_plan(&js, 1, &plan);
			job_spec_release(&js);
		}
		is_int(strvec_find(&plan, "build:A"), -1, "no build:A");
		ok(strvec_find(&plan, "boot:2:deploy") > 0 && strvec_find(&plan, "boot:3:deploy") == -1,
		   "boots of side B only");
		strvec_clear(&plan);
		json_object_put(spec);
		db_exec(db, "INSERT INTO kernels (id, key, variant, state, created) VALUES (77, 'k', 'nightly', 'ok', 0)");
		db_run(db, "UPDATE job_sides SET kernel_id = 77 WHERE job_id = ?", "i", first);
		db_run(db, "UPDATE jobs SET state = 'done' WHERE id = ?", "i", first);
		second = job_submit_schedule(arg, &s);
		spec = job_spec(db, second);
		is_str(jstr(spec, "sides", 0, "label"), "previous", "second nightly: side A is the previous one");
		is_str(jstr(spec, "sides", 0, "kernel_id"), "77", "... with its kernel");
		is_str(jstr(spec, "sides", 0, "from_job"), "4", "... of job 4");
		json_object_put(spec);
		{
			char *sched = NULL;
			db_get_str(db, &sched, "SELECT schedule FROM jobs WHERE id = ?", "i", second);
			is_str(sched, "nightly", "the job records its schedule");
			free(sched);
		}
	}

	/* ---- find, cancel ---- */
	{
		int64_t f = 0;
		ok(!job_find(db, "1", &f) && f == 1, "find by id");
		ok(!job_find(db, "refs", &f) && f == 3, "find by name: the newest");
		ok(job_find(db, "99", &f) == -1, "no job 99");
		ok(!job_cancel(db, 2), "cancel a queued job");
		{
			char *st = NULL;
			db_get_str(db, &st, "SELECT state FROM jobs WHERE id = 2", "");
			is_str(st, "cancelled", "queued -> cancelled at once");
			free(st);
		}
		ok(job_cancel(db, 2) == -1, "cannot cancel twice");
		db_exec(db, "UPDATE jobs SET state = 'running' WHERE id = 1");
		ok(!job_cancel(db, 1), "cancel a running job");
		{
			int64_t c = 0;
			db_get_int(db, &c, "SELECT cancel FROM jobs WHERE id = 1", "");
			is_int(c, 1, "running: the flag is set for the next safe point");
		}
		is_int(job_is_live(db, 1), 0, "nobody runs job 1");
	}
	{
		/* boots = 2..7: looks after each ABBA round (2, 4, 6 boots per side) and at the maximum 7 */
		struct job_submit_opts o = JOB_SUBMIT_OPTS_INIT;
		struct json_object *spec;
		struct job_spec js;
		struct strvec plan = STRVEC_INIT;
		int lmin, lmax;
		size_t at = 0, looks = 0;

		o.job = "adapt";
		id = job_submit(db, &cfg, &o, NULL);
		spec = job_spec(db, id);
		is_str(jstr(spec, "boots", -1, NULL), "7", "boots = 2..7: boots is the maximum");
		is_str(jstr(spec, "boots_min", -1, NULL), "2", "and boots_min the first look");
		typed(spec, &js);
		is_int(spec_looks(&js, &lmin, &lmax), 4, "4 looks");
		ok(!job_plan(&js, 1, &plan), "plan");
		job_spec_release(&js);
		for (size_t i = 0; i < plan.n; i++)
			if (starts_with(plan.v[i], "look:")) {
				looks++;
				if (!strcmp(plan.v[i], "look:2"))
					at = i;
			}
		is_int(looks, 4, "4 look steps");
		ok(at > 0 && !strcmp(plan.v[at - 1], "boot:4:restore") && !strcmp(plan.v[at + 1], "boot:5:deploy"),
		   "look:2 comes after boot 4 (AB BA: 2 per side), before boot 5");
		ok(strvec_find(&plan, "look:4") >= 0 && strvec_find(&plan, "look:6") >= 0 &&
		   strvec_find(&plan, "look:7") >= 0 && strvec_find(&plan, "look:3") < 0 &&
		   strvec_find(&plan, "look:5") < 0, "looks at 2, 4, 6 and 7 boots per side only");
		is_str(plan.v[plan.n - 4], "release", "release after the last look");
		is_str(plan.v[plan.n - 5], "look:7", "the last look follows the last boot");
		strvec_clear(&plan);
		json_object_put(spec);
		{
			/* boots = 1..3 (a calibrated instrument): a look after boots 1-2 (A and B once), then at 3 */
			struct job_submit_opts o1 = JOB_SUBMIT_OPTS_INIT;
			struct json_object *s1;
			char *ord1;

			o1.job = "adapt1";
			id = job_submit(db, &cfg, &o1, NULL);
			s1 = job_spec(db, id);
			is_str(jstr(s1, "boots_min", -1, NULL), "1", "boots = 1..3: boots_min 1");
			typed(s1, &js);
			is_int(spec_looks(&js, &lmin, &lmax), 2, "boots = 1..3: 2 looks");
			ok(!job_plan(&js, 7, &plan), "plan of boots = 1..3");
			ord1 = spec_order(&js, 7);
			at = (size_t)strvec_find(&plan, "look:1");
			ok(strvec_find(&plan, "look:1") > 0 && !strcmp(plan.v[at - 1], "boot:2:restore") &&
			   !strcmp(plan.v[at + 1], "boot:3:deploy"), "look:1 comes after boot 2, before boot 3");
			ok(strlen(ord1) == 6 && ord1[0] != ord1[1], "the first two boots are one of each side (%s)",
			   ord1);
			ok(strvec_find(&plan, "look:3") >= 0 && strvec_find(&plan, "look:2") < 0,
			   "looks at 1 and 3 boots per side only");
			free(ord1);
			job_spec_release(&js);
			strvec_clear(&plan);
			json_object_put(s1);
		}
		o.boots = 3;
		id = job_submit(db, &cfg, &o, NULL);
		spec = job_spec(db, id);
		ok(!json_object_object_get_ex(spec, "boots_min", NULL), "--boots 3 is a plain count: no range");
		typed(spec, &js);
		is_int(spec_looks(&js, &lmin, &lmax), 0, "and no looks");
		job_spec_release(&js);
		json_object_put(spec);
	}
	{
		/*
		 * Observation runs only where a person reads them (docs/observation.md): a
		 * confirmation's and a bisection's jobs (its ends, its steps) answer with a
		 * statistic of their measurement runs and observe nothing, whatever their
		 * template's observe_boots; the same template submitted by hand observes.
		 */
		static const char *const what[] = { "by hand", "a bisection's ends", "a bisection's step",
						     "a confirmation" };
		const char *kind[] = { "refs", "refs", "bisect", "confirm" };

		db_exec(db, "INSERT INTO bisections (id, tree, good, bad, good_ref, bad_ref, workload, metric, alpha, "
			    "spec, created) VALUES (9, 't', 'g', 'b', 'v6.1', 'v6.2', 'tx', 'tx_pps', 0.01, '{}', 0)");
		for (int k = 0; k < 4; k++) {
			struct job_submit_opts o = JOB_SUBMIT_OPTS_INIT;
			struct json_object *spec;
			struct job_spec js;
			struct strvec plan = STRVEC_INIT;
			size_t obs = 0;

			o.job = "refs-tx";
			if (k == 1 || k == 2) {
				o.workload = "tx";
				o.bisection = 9;
				o.bisect_seq = k == 1 ? 0 : 2;
			}
			if (k == 2) {
				o.base = o.test = NULL;
				o.commit = "0123456789abcdef";
			}
			if (k == 3) {
				o.kernel_a = 77;
				o.kernel_b = 77;
				o.confirms = 4;
			}
			id = job_submit(db, &cfg, &o, NULL);
			if (!ok(id > 0, "%s: submitted", what[k]))
				continue;
			spec = job_spec(db, id);
			is_str(jstr(spec, "kind", -1, NULL), kind[k], "%s: kind %s", what[k], kind[k]);
			is_str(jstr(spec, "observe_boots", -1, NULL), k ? "0" : "1", "%s: observe_boots %d", what[k],
			       k ? 0 : 1);
			typed(spec, &js);
			ok(!job_plan(&js, 3, &plan), "%s: plan", what[k]);
			job_spec_release(&js);
			for (size_t i = 0; i < plan.n; i++)
				obs += starts_with(plan.v[i], "obs:");
			/* tx lists perf-profile: its observation and its bare run in the first boot of each side */
			is_int(obs, k ? 0 : 2 * 2, "%s: %d observation runs", what[k], k ? 0 : 2 * 2);
			strvec_clear(&plan);
			json_object_put(spec);
		}
	}
	{
		/* ops and warmup_ops through the spec: the warm-up in seconds is 0, the duration the limit */
		struct job_submit_opts o = JOB_SUBMIT_OPTS_INIT;
		struct json_object *spec;
		struct job_spec js;

		o.job = "work";
		id = job_submit(db, &cfg, &o, NULL);
		if (ok(id > 0, "a job with a workload sized by work submitted")) {
			spec = job_spec(db, id);
			is_str(jstr(spec, "workloads", 0, "ops"), "5000", "ops in the spec");
			is_str(jstr(spec, "workloads", 0, "warmup_ops"), "500", "warmup_ops in the spec");
			is_str(jstr(spec, "workloads", 0, "warmup_s"), "0.0", "no warm-up in seconds");
			is_str(jstr(spec, "workloads", 0, "duration_s"), "20.0", "duration: the time limit");
			ok(!jstr(spec, "workloads", 1, "ops"), "a workload without ops has none in the spec");
			is_str(jstr(spec, "workloads", 1, "warmup_s"), "2.0", "and keeps the default warm-up");
			typed(spec, &js);
			ok(js.workloads[0].ops == 5000 && js.workloads[0].warmup_ops == 500 && js.workloads[1].ops == -1,
			   "job_spec_parse reads them");
			job_spec_release(&js);
			json_object_put(spec);
		}
	}
	test_run_work();
	db_close(db);
	conf_free(&cfg);
	return done_testing();
}
