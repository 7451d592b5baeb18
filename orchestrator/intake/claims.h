/* claims.h: performance claims and "Tested:" commands of a commit message -> expectations and proposed workloads. */
#ifndef KLAB_CLAIMS_H
#define KLAB_CLAIMS_H

#include <stddef.h>

#include "strvec.h"

/*
 * An expected change of a klab metric. Metric names are the agent's
 * (docs/protocol.md): tps, tx_pps, rx_pps, tx_bps, cpu_us_per_op, and
 * "throughput" when the text names no unit (the workload's headline metric:
 * tps for udp_rr, tx_pps for udp_tx).
 */
struct claim {
	int patch_seq;		/* 0: cover letter */
	char *metric;
	char *direction;	/* "higher" | "lower" */
	double lo_pct;		/* magnitude range of the change, in percent (>= 0) */
	double hi_pct;
	double before;		/* NAN when the text gives no figures */
	double after;
	char *unit;		/* as written ("Krps", "Mpps"), or NULL */
	char *text;		/* the sentence it came from */
};

/* A workload proposed from a benchmark command of the message. */
struct proposal {
	int patch_seq;
	char *type;		/* udp_rr | udp_tx */
	char *name;		/* suggested workload name, e.g. udp_rr_500 */
	struct strvec params;	/* "key=value" in the workload's parameter names */
	char *command;		/* the command line it came from */
	char *context;		/* the "Tested:" paragraph's description, or NULL */
};

/*
 * Scan TEXT (a commit message or cover letter, patch number SEQ) and append
 * what it finds. Recognised claims:
 *   "2268 Krps -> 2380", "80 Mpps -> 120 Mpps"   (before -> after; unit -> metric)
 *   "saves between 10% and 20% of cycles", "saves 5% of cpu"    (cpu_us_per_op lower)
 *   "+5% to UDP throughput", "~50% improvement for an UDP tx workload"
 * and commands: super_netperf/netperf -t UDP_RR|UDP_STREAM (flows, sizes,
 * duration). A percentage in a sentence that also has a before -> after pair
 * is not counted twice; equal claims of one message are merged.
 */
void claims_scan(const char *text, int seq, struct claim **claims, size_t *n_claims,
		 struct proposal **props, size_t *n_props);

void claims_free(struct claim *c, size_t n);
void proposals_free(struct proposal *p, size_t n);

#endif
