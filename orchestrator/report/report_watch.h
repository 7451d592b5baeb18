/* report_watch.h: the patchwork watcher's status page of the report site (docs/patchwork.md). */
#ifndef KLAB_REPORT_WATCH_H
#define KLAB_REPORT_WATCH_H

#include "conf/conf.h"
#include "store/db.h"

/*
 * Write OUTDIR/patchwork.html: per [patchwork] section of CFG, every series
 * its watcher saw in arrival order (state, reason, job with a link to its
 * page, outcome, lag to the final check), and, when the oldest series still
 * waiting completed longer ago than max_lag, that the lab is behind. Every
 * string from the database or patchwork goes through html_escape(). 0 or -1.
 */
int report_watch_page(struct db *db, const struct klab_config *cfg, const char *outdir);

#endif
