/* confirm.h: confirmation of a nightly's change by a second job, and the bisection of a confirmed regression. */
#ifndef KLAB_CONFIRM_H
#define KLAB_CONFIRM_H

#include <json-c/json.h>
#include <stdint.h>

#include "conf/conf.h"
#include "store/db.h"
#include "store/jobs.h"

/*
 * Called when job ID (its spec SPEC) ended done (docs/bisect.md,
 * "Confirmation"):
 * - a nightly with two sides whose headline comparison of a workload is
 *   CHANGED queues one confirmation job (kind 'confirm': the same two
 *   kernels, fresh boots, ABBA, the nightly's boots) and a pending row of
 *   `confirmations` per changed headline;
 * - a headline that is not CHANGED but whose nightly series has a change
 *   point that alerts, not confirmed before, queues a confirmation of the
 *   kernel of the night before the change point against tonight's
 *   (confirmations.cp_job: the change point's first job after it);
 * - a confirmation decides each row: 'confirmed' when the metric is
 *   CHANGED the same way again, else 'not confirmed' (kept, shown, not
 *   reported); a confirmed regression queues a bisection between the two
 *   kernels' commits, measured by the nightly's job.
 * 0, or -1 on an error (logged; the job stays done).
 */
int confirm_after_job(struct db *db, const struct klab_config *cfg, int64_t id, const struct job_spec *spec);

#endif
