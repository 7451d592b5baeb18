/* monitor_cost.h: what each monitor costs a workload, from the observation runs beside the measurement runs of a boot. */
#ifndef KLAB_MONITOR_COST_H
#define KLAB_MONITOR_COST_H

#include <stddef.h>

#include "store/result.h"

/* One monitor's cost on one side: NaN where it could not be measured. */
struct mc_side {
	int boots;		/* observation boots that measured it */
	double rate_pct;	/* extra time per operation, in % of the measurement runs' */
	/*
	 * Half the approximate 95% interval of rate_pct from the run-to-run
	 * spread of the measured runs of its boot(s) (an observation run is one
	 * more run of that spread): t(.975, n - 1) * CoV * sqrt(1 + 1/n), in %.
	 * NaN with fewer than 2 measured runs a boot. Under icount it is parts
	 * per million; on a real clock it says whether a cost is told from noise.
	 */
	double rate_ci;
	double per_op;		/* extra cost per operation (insn or CPU us) */
	double per_op_pct;	/* the same in % of the measurement runs' cost per operation */
};

/*
 * One row of the table. For monitor "bare" the sign is turned round: its row
 * is what the measurement runs' own (edge) monitors cost against a run with
 * no monitor, the figure that must be negligible.
 */
struct mc_row {
	char monitor[32];
	struct mc_side a, b;
	int differs;		/* the sides' costs differ by more than the threshold */
};

/*
 * The cost table of one workload from its runs. Measurement runs with
 * seq < warmup are left out of the reference, which is the mean of a boot's
 * other measurement runs; an observation run is compared with the reference
 * of its own boot only. rate_better_higher says how the rate headline reads
 * (1 for tps or tx_pps). A row's sides differ when their rate_pct (else
 * per_op_pct) are both known and further apart than threshold_pct: the
 * monitor would have moved the comparison by more than what its verdict
 * treats as equal, and, where both have an interval (rate_ci), by more than
 * their combined interval (a single observation run on a noisy clock is not
 * flagged for its noise). Fills at most max rows in order of first appearance and
 * returns how many.
 */
size_t monitor_cost_table(const struct run_cost *runs, size_t n, int warmup, int rate_better_higher,
			  double threshold_pct, struct mc_row *rows, size_t max);

#endif
