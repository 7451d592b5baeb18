/* after_job.c: a job run, then what follows it when it ended done: its nightly history and its confirmation (after_job.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare/compare.h"
#include "job/job.h"
#include "log.h"
#include "nightly/after_job.h"
#include "nightly/confirm.h"
#include "store/jobs.h"

/* Job ID ended done: the history of a scheduled job, then its confirmation. */
static void after_job(struct db *db, const struct klab_config *cfg, int64_t id)
{
	struct job_spec spec;
	char *text = NULL;

	if (jobs_get_str(db, id, JOB_SPEC, &text) != 1 || !text) {
		warn("job %lld: cannot read its spec for what follows it", (long long)id);
		return;
	}
	if (job_spec_parse(text, &spec)) {
		warn("job %lld: cannot read its spec for what follows it", (long long)id);
		goto out;
	}
	/* A scheduled job (done) is a new point of its nightly series: look for change points. */
	if (spec.schedule && history_update_job(db, id, 1.0))
		warn("job %lld: cannot update the nightly history", (long long)id);
	/* a nightly's change is confirmed by a second job before it counts (confirm.h) */
	if (confirm_after_job(db, cfg, id, &spec))
		warn("job %lld: cannot queue or decide its confirmation", (long long)id);
out:
	job_spec_release(&spec);
	free(text);
}

int after_job_run(struct klab_config *cfg, struct db *db, const char *db_path, int64_t id,
		  const struct job_run_opts *o)
{
	char *state = NULL, prefix[32];
	int was_done, ret;

	/* a job done before this run (`klab run 5` again) is not followed twice */
	jobs_get_str(db, id, JOB_STATE, &state);
	was_done = state && !strcmp(state, "done");
	free(state);
	ret = job_run(cfg, db, db_path, id, o);
	if (ret != 0 || was_done)
		return ret;
	/* its lines under the job's prefix, as the runner's own (job_run) */
	snprintf(prefix, sizeof(prefix), "job %lld", (long long)id);
	if (!o->progress)
		log_set_prefix(prefix);
	after_job(db, cfg, id);
	if (!o->progress)
		log_set_prefix(NULL);
	return ret;
}
