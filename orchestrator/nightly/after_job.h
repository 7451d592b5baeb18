/* after_job.h: what follows a job that ended done (its nightly history, its confirmation, a bisection), above the job runner. */
#ifndef KLAB_AFTER_JOB_H
#define KLAB_AFTER_JOB_H

#include <stdint.h>

#include "conf/conf.h"
#include "job/job.h"
#include "store/db.h"

/*
 * Run (or resume) job ID with job_run() and, when this run ended it done,
 * what follows a job, in this order: a scheduled job is a new point of its
 * nightly series (history_update_job(): change points), then
 * confirm_after_job() (a nightly's change queues its confirmation; a
 * confirmation decides it and a confirmed regression queues a bisection).
 * Their failures are warnings: the job stays done. klabd and `klab run`
 * run jobs through this; the job runner calls nothing of nightly/. The
 * jobs of a bisection (bisect_run()) are neither scheduled nor nightlies,
 * so nothing follows them. Returns what job_run() returned.
 */
int after_job_run(struct klab_config *cfg, struct db *db, const char *db_path, int64_t id,
		  const struct job_run_opts *o);

#endif
