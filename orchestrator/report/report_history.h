/* report_history.h: the nightly history pages of a report run, and their tiles on the index. */
#ifndef KLAB_REPORT_HISTORY_H
#define KLAB_REPORT_HISTORY_H

#include "buf.h"
#include "report/report_site.h"

/*
 * One history-WORKLOAD--METRIC.html per (workload, metric) that was
 * compared or has change points: the nightly series with its change
 * points and segment means, and every comparison of that metric. TILES
 * receives the index tile of each series that has nightly points, LIST
 * the links to every history page (both HTML). 0, or -1 when a page could
 * not be made (the others still are).
 */
int report_history_pages(struct rep *r, struct buf *tiles, struct buf *list);

#endif
