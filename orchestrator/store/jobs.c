/* jobs.c: the jobs family of tables and a job's spec, parsed once with its defaults. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonh.h"
#include "log.h"
#include "store/db.h"
#include "store/jobs.h"
#include "util.h"

/* ---- the spec (jobs.spec) */

static struct json_object *get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (!o || !json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

static const char *str(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key);

	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static int is_number(struct json_object *v)
{
	return v && (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double));
}

static int64_t int_or(struct json_object *o, const char *key, int64_t def)
{
	struct json_object *v = get(o, key);

	return is_number(v) ? json_object_get_int64(v) : def;
}

static double double_or(struct json_object *o, const char *key, double def)
{
	struct json_object *v = get(o, key);

	return is_number(v) ? json_object_get_double(v) : def;
}

static struct json_object *array(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key);

	return v && json_object_is_type(v, json_type_array) ? v : NULL;
}

static void parse_side(struct json_object *o, struct job_spec_side *s)
{
	const char *l = str(o, "side");
	struct json_object *b = get(o, "build");

	s->side = l ? l[0] : '\0';
	s->label = str(o, "label");
	s->ref = str(o, "ref");
	s->variant = str(o, "variant");
	s->profile = str(o, "profile");
	s->build = b && json_object_get_boolean(b);
	s->kernel_id = int_or(o, "kernel_id", 0);
	s->from_job = int_or(o, "from_job", 0);
}

static void parse_workload(struct json_object *o, struct job_spec_workload *w)
{
	struct json_object *p = get(o, "params"), *m = get(o, "monitors");

	w->name = str(o, "name");
	w->type = str(o, "type");
	w->params = p && json_object_is_type(p, json_type_object) ? p : NULL;
	w->monitors = m && json_object_is_type(m, json_type_array) ? m : NULL;
	w->duration_s = double_or(o, "duration_s", JOB_SPEC_DURATION_S);
	w->warmup_s = double_or(o, "warmup_s", JOB_SPEC_WARMUP_S);
	w->perf_events = str(o, "perf_events");
	w->profile_cpus = str(o, "profile_cpus");
	w->bpftrace_script = str(o, "bpftrace_script");
	w->headline = str(o, "headline");
	if (w->headline && !*w->headline)
		w->headline = NULL;
	w->threshold_pct = double_or(o, "threshold_pct", 0);
	w->target = str(w->params, "target");
}

int job_spec_parse(const char *text, struct job_spec *spec)
{
	struct json_object *o, *a, *v;
	size_t n;

	memset(spec, 0, sizeof(*spec));
	strvec_init(&spec->local_patches);
	strvec_init(&spec->machines);
	/* the defaults, also of a spec that does not parse */
	spec->kind = "";
	spec->order = "abba";
	spec->boots = 1;
	spec->runs = 1;
	spec->warmup_runs = 1;
	spec->observe_boots = 1;
	o = text ? json_parse(text, strlen(text), "job spec") : NULL;
	if (!o)
		return -1;
	if (!json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return error("job spec: not a JSON object");
	}
	spec->doc = o;
	spec->name = str(o, "name");
	if (str(o, "kind"))
		spec->kind = str(o, "kind");
	spec->tree = str(o, "tree");
	spec->base = str(o, "base");
	spec->test = str(o, "test");
	spec->series = str(o, "series");
	spec->pool = str(o, "pool");
	spec->schedule = str(o, "schedule");
	spec->uid_salt = str(o, "uid_salt");
	if (str(o, "order"))
		spec->order = str(o, "order");
	if ((a = array(o, "local_patches")))
		for (size_t i = 0; i < json_object_array_length(a); i++)
			strvec_push(&spec->local_patches, json_object_get_string(json_object_array_get_idx(a, i)));
	if ((a = array(o, "machines")))
		for (size_t i = 0; i < json_object_array_length(a); i++)
			strvec_push(&spec->machines, json_object_get_string(json_object_array_get_idx(a, i)));
	spec->boots = (int)int_or(o, "boots", spec->boots);
	spec->boots_min = (int)int_or(o, "boots_min", 0);
	spec->runs = (int)int_or(o, "runs", spec->runs);
	if ((v = get(o, "warmup_runs")) && json_object_is_type(v, json_type_int))
		spec->warmup_runs = json_object_get_int(v);
	else if ((v = get(o, "warmup")) && json_object_is_type(v, json_type_int) && json_object_get_int(v) <= 100)
		spec->warmup_runs = json_object_get_int(v);
	if (spec->warmup_runs < 0)
		spec->warmup_runs = 0;
	if ((v = get(o, "observe_boots")) && json_object_is_type(v, json_type_int) && json_object_get_int(v) >= 0)
		spec->observe_boots = json_object_get_int(v);
	spec->seed = int_or(o, "seed", 0);
	spec->confirms = int_or(o, "confirms", 0);
	spec->bisection = int_or(o, "bisection", 0);
	spec->bisect_seq = (int)int_or(o, "bisect_seq", 0);
	if ((a = array(o, "sides")) && (n = json_object_array_length(a))) {
		spec->sides = xcalloc(n, sizeof(*spec->sides));
		for (size_t i = 0; i < n; i++) {
			struct job_spec_side *s = &spec->sides[spec->n_sides];

			parse_side(json_object_array_get_idx(a, i), s);
			if (!s->side)
				continue;
			if (spec->n_sides < 2)
				spec->letters[spec->n_sides] = s->side;
			spec->n_sides++;
		}
	}
	if ((a = array(o, "workloads")) && (n = json_object_array_length(a))) {
		spec->workloads = xcalloc(n, sizeof(*spec->workloads));
		for (size_t i = 0; i < n; i++)
			parse_workload(json_object_array_get_idx(a, i), &spec->workloads[spec->n_workloads++]);
	}
	if ((v = get(o, "profiles")) && json_object_is_type(v, json_type_object))
		spec->profiles = v;
	return 0;
}

void job_spec_release(struct job_spec *spec)
{
	if (spec->doc)
		json_object_put(spec->doc);
	strvec_clear(&spec->local_patches);
	strvec_clear(&spec->machines);
	free(spec->sides);
	free(spec->workloads);
	memset(spec, 0, sizeof(*spec));
}

const struct job_spec_side *job_spec_side(const struct job_spec *spec, char side)
{
	for (size_t i = 0; i < spec->n_sides; i++)
		if (spec->sides[i].side == side)
			return &spec->sides[i];
	return NULL;
}

const struct job_spec_workload *job_spec_workload(const struct job_spec *spec, const char *name)
{
	for (size_t i = 0; i < spec->n_workloads; i++)
		if (spec->workloads[i].name && !strcmp(spec->workloads[i].name, name))
			return &spec->workloads[i];
	return NULL;
}

/* ---- jobs */

int jobs_set_machines(struct db *db, int64_t id, const char *dut, const char *peer)
{
	return db_run(db, "UPDATE jobs SET dut = ?, peer = ? WHERE id = ?", "ssi", dut, peer, id);
}
