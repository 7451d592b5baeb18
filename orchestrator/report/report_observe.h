/* report_observe.h: the monitor-cost table of a workload for the pages and the mail (docs/observation.md). */
#ifndef KLAB_REPORT_OBSERVE_H
#define KLAB_REPORT_OBSERVE_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "compare/compare.h"
#include "compare/monitor_cost.h"
#include "store/db.h"

/*
 * The monitor-cost rows of workload WL of job JOB into ROWS (at most MAX):
 * the rate headline is HEAD's metric when it is a rate (tps, tx_pps,
 * rx_pps), else the first of them the runs have; the cost per operation is
 * insn_per_op on the icount clock, cpu_us_per_op otherwise (*PER_OP says
 * which); the threshold that flags a monitor is HEAD's verdict threshold,
 * else the clock's default. HEAD may be NULL. Returns the number of rows
 * (0: the job has no observation runs of WL, or a database error, logged).
 */
size_t rep_monitor_costs(struct db *db, int64_t job, const char *wl, const struct compare_row *head,
			 struct mc_row *rows, size_t max, const char **per_op);

/* One row in words: "bpftrace: +3573 insn/op (+115.97%) on A, +3165 insn/op (+103.30%) on B; observation only, in no verdict". */
void rep_monitor_cost_line(struct buf *b, const struct mc_row *row, const char *per_op);

/* The page's "Monitor cost" section of workload WL (HTML into H). */
void rep_monitor_cost_section(struct db *db, int64_t job, const char *wl, const struct compare_row *head,
			      struct buf *h);

#endif
