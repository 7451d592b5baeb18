/* orch-claims.c: unit tests of claim and benchmark-command extraction from commit messages. */
#include <math.h>
#include <string.h>

#include "intake/claims.h"
#include "log.h"
#include "tap.h"

struct res {
	struct claim *c;
	size_t nc;
	struct proposal *p;
	size_t np;
};

static void scan(const char *text, struct res *r)
{
	memset(r, 0, sizeof(*r));
	claims_scan(text, 1, &r->c, &r->nc, &r->p, &r->np);
}

static void done(struct res *r)
{
	claims_free(r->c, r->nc);
	proposals_free(r->p, r->np);
}

int main(void)
{
	struct res r;

	log_init("orch-claims", 0, LOG_WARNING);

	scan("I've got +5% to CPU bound\nthroughput (2268 Krps -> 2380). Profiles showed more.", &r);
	is_int(r.nc, 1, "before -> after across a line break; the +5%% of the same sentence not counted twice");
	if (r.nc) {
		is_str(r.c[0].metric, "tps", "Krps: tps");
		is_double(r.c[0].lo_pct, 4.938, 0.001, "+4.94%%");
		is_str(r.c[0].text, "I've got +5% to CPU bound throughput (2268 Krps -> 2380).", "the sentence");
	}
	done(&r);

	scan("With a dummy device io_uring benchmark I've got 2268 Krps -> 2380.", &r);
	is_int(r.nc, 1, "one claim");
	if (r.nc)
		is_str(r.c[0].metric, "tx_pps", "Krps of a benchmark on a dummy device: packets sent");
	done(&r);

	scan("UDP_RR over the NIC went from 900 Krps -> 950 Krps on the receive side.", &r);
	is_int(r.nc, 1, "one claim");
	if (r.nc)
		is_str(r.c[0].metric, "tps", "Krps of UDP_RR, even with 'receive' in the sentence: transactions");
	done(&r);

	scan("80 Mpps -> 120 Mpps.", &r);
	ok(r.nc == 1 && !strcmp(r.c[0].metric, "tx_pps") && fabs(r.c[0].lo_pct - 50) < 1e-9, "80 -> 120 Mpps: tx_pps +50%%");
	done(&r);

	scan("RX path: 10 Mpps \xe2\x86\x92 8 Mpps after the change.", &r);
	ok(r.nc == 1 && !strcmp(r.c[0].metric, "rx_pps") && !strcmp(r.c[0].direction, "lower") &&
	   fabs(r.c[0].lo_pct - 20) < 1e-9, "unicode arrow, rx, a drop: rx_pps lower 20%%");
	done(&r);

	scan("This patch saves between 10% and 20% of cycles, depending on luck.", &r);
	ok(r.nc == 1 && !strcmp(r.c[0].metric, "cpu_us_per_op") && r.c[0].lo_pct == 10 && r.c[0].hi_pct == 20,
	   "saves between 10%% and 20%% of cycles");
	done(&r);

	scan("This reduces cpu usage by 7-9% on the receiver.", &r);
	ok(r.nc == 1 && !strcmp(r.c[0].metric, "cpu_us_per_op") && r.c[0].lo_pct == 7 && r.c[0].hi_pct == 9,
	   "7-9%% less cpu usage");
	done(&r);

	scan("It brings +5% to UDP throughput with a CPU bound benchmark, and I observed\nit taking 0.5-2% in profiles.", &r);
	ok(r.nc == 1 && !strcmp(r.c[0].metric, "throughput") && r.c[0].lo_pct == 5 && r.c[0].hi_pct == 5,
	   "+5%% to UDP throughput: the percentage next to the word");
	done(&r);

	scan("After this patch, I get ~50% improvement for an UDP tx workload.", &r);
	ok(r.nc == 1 && !strcmp(r.c[0].metric, "tx_pps") && r.c[0].lo_pct == 50, "~50%% improvement, tx: tx_pps");
	done(&r);

	scan("We see a 3% regression in throughput for TCP_RR.", &r);
	ok(r.nc == 1 && !strcmp(r.c[0].direction, "lower"), "regression: lower");
	done(&r);

	scan("Fixes: 1234 (\"foo\")\nThe table [128, 256) -> 5 shows nothing.\n31.01%  ksoftirqd [k] x\n", &r);
	is_int(r.nc, 0, "no unit, no keyword: no claim");
	done(&r);

	scan("> This patch saves 10% of cycles.\n", &r);
	is_int(r.nc, 0, "quoted text of a reply is not a claim");
	done(&r);

	scan("Tested:\n  40 flows\n\n  super_netperf 40 -t UDP_RR -H h -l 30 -- -r 1,1 &\n  netperf -t UDP_STREAM -H h -l 10 -- -m 1400\n"
	     "  super_netperf 4 -t TCP_RR -H h\n", &r);
	is_int(r.np, 2, "two UDP commands, TCP_RR ignored");
	if (r.np == 2) {
		is_str(r.p[0].name, "udp_rr_40", "udp_rr_40");
		is_str(r.p[0].context, "40 flows", "context");
		is_str(r.p[1].type, "udp_tx", "UDP_STREAM: udp_tx");
		is_str(r.p[1].params.n ? r.p[1].params.v[0] : "", "threads=1", "netperf: one thread");
		is_str(r.p[1].params.n > 1 ? r.p[1].params.v[1] : "", "size=1400", "size");
	}
	done(&r);
	return done_testing();
}
