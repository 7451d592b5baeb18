/* bisect_db.h: bisections in the database (tables bisections, bisect_steps): start, cancel. */
#ifndef KLAB_BISECT_DB_H
#define KLAB_BISECT_DB_H

#include <stdint.h>

#include "conf.h"
#include "db.h"

struct bisect_start_opts {
	const char *tree, *good, *bad, *workload, *metric;	/* metric NULL: the workload's headline */
	double alpha;
	int min_boots, max_boots;
};

/*
 * Check everything before storing anything, each with its own error: the
 * tree is in the config and a local git work tree (not a tarball), the
 * workload exists, the metric is one the workload produced in its stored
 * runs (when it has any), good and bad are commits there, not the same one,
 * and bad descends from good. Then a 'queued' bisection with the commits of
 * rev-list --reverse --first-parent good..bad. The new id, or -1 (logged).
 */
int64_t bisect_start(struct db *db, const struct klab_config *cfg, const struct bisect_start_opts *o);

/* A queued or running bisection becomes cancelled: 0 or -1 (logged). */
int bisect_cancel(struct db *db, int64_t id);

#endif
