/* job_eta.c: how long the rest of a job should take, from the durations its steps took before (this job's, its earlier runs', any job's). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "store/db.h"
#include "store/jobs.h"
#include "job/job.h"
#include "progress.h"
#include "util.h"

/* At most this many of the latest durations of a step's kind make its expectation (of the last 5000 steps). */
#define ETA_SAMPLES 10

void job_step_kind(const char *key, char *out, size_t n)
{
	size_t o = 0;

	for (const char *k = key; *k && o + 1 < n; k++) {
		if (isdigit((unsigned char)*k)) {
			while (isdigit((unsigned char)k[1]))
				k++;
			out[o++] = '#';
		} else {
			out[o++] = *k;
		}
	}
	out[o] = '\0';
}

struct kind_time {
	char kind[128];
	double sum;
	int n;
};

static struct kind_time *find_kind(struct kind_time *t, size_t n, const char *kind)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(t[i].kind, kind))
			return &t[i];
	return NULL;
}

struct kinds {
	struct kind_time *t;
	size_t n;
};

/* Add a step's duration (steps_durations()) to its kind in the kinds, when that has fewer than ETA_SAMPLES. */
static void add_duration(const char *key, double seconds, void *data)
{
	struct kinds *ks = data;
	char kind[128];
	struct kind_time *k;

	job_step_kind(key, kind, sizeof(kind));
	k = find_kind(ks->t, ks->n, kind);
	if (k && k->n < ETA_SAMPLES && seconds >= 0) {
		k->sum += seconds;
		k->n++;
	}
}

int job_expected(struct db *db, int64_t id, const struct strvec *plan, double *expected)
{
	struct kind_time *t = xcalloc(plan->n ? plan->n : 1, sizeof(*t));
	struct strvec finished = STRVEC_INIT;
	char *name = NULL;
	size_t nk = 0;
	int ret = -1;
	struct kinds ks;

	for (size_t i = 0; i < plan->n; i++) {
		char kind[128];

		job_step_kind(plan->v[i], kind, sizeof(kind));
		if (!find_kind(t, nk, kind))
			snprintf(t[nk++].kind, sizeof(t[0].kind), "%s", kind);
	}
	/* the steps this job has ended already take no more time */
	if (steps_ended_keys(db, id, &finished) < 0)
		goto out;
	jobs_get_str(db, id, JOB_NAME, &name);
	/* this job's own steps and its earlier runs (same name) first, then any job's */
	ks.t = t;
	ks.n = nk;
	if (steps_durations(db, id, name ? name : "", 0, add_duration, &ks) < 0 ||
	    steps_durations(db, id, name ? name : "", 1, add_duration, &ks) < 0)
		goto out;
	for (size_t i = 0; i < plan->n; i++) {
		char kind[128];
		const struct kind_time *k;

		job_step_kind(plan->v[i], kind, sizeof(kind));
		k = find_kind(t, nk, kind);
		expected[i] = strvec_find(&finished, plan->v[i]) >= 0 ? 0 : k && k->n ? k->sum / k->n : -1;
	}
	ret = 0;
out:
	strvec_clear(&finished);
	free(name);
	free(t);
	return ret;
}

double job_eta_s(struct db *db, int64_t id, const struct strvec *plan, size_t pos, double cur_s)
{
	double *e, left = -1;

	if (!plan->n)
		return -1;
	e = xcalloc(plan->n, sizeof(*e));
	if (job_expected(db, id, plan, e) == 0)
		left = progress_eta_items(e, plan->n, pos, cur_s);
	free(e);
	return left;
}
