/* monitor.h: the monitors that run beside a workload (cpu, perf-stat, perf-profile, bpftrace, nic, pmu). */
#ifndef KLAB_AGENT_MONITOR_H
#define KLAB_AGENT_MONITOR_H

#include <json-c/json.h>

#include "agent.h"
#include "idle.h"
#include "parse.h"
#include "run.h"

/*
 * MON_PMU: the hardware counters alone (cycles, instructions, cache and
 * branch misses: no work per event, so a measurement run may carry it);
 * perf-stat adds them to its software events where the machine has a PMU.
 */
enum { MON_CPU, MON_PERF_STAT, MON_PERF_PROFILE, MON_BPFTRACE, MON_NIC, MON_PMU, MON_N };

/* "cpu", "perf-stat", ... -> MON_*, or -1. */
int monitor_index(const char *name);
const char *monitor_name(int idx);

/*
 * The monitors of one run. The caller (run.c) drives the timeline:
 *
 *	mon_start_early()      at t0, before the generator: bpftrace needs
 *	                       seconds to attach, so it starts first and the
 *	                       generator waits for its ready line (every
 *	                       probe attached; at most MON_BPF_ATTACH_MS);
 *	                       in a run sized by work perf stat and perf
 *	                       record too, events disabled (below)
 *	mon_window_start()     at warmup end: counter snapshots, perf stat
 *	mon_window_started()   last at the window's start: the idle snapshot,
 *	                       whose clock starts the busy time (idle.h); in a
 *	                       run sized by work the generator's window starts
 *	                       after it (run.c acknowledges the "start" line)
 *	mon_tick()             every second of the measured window
 *	mon_profile_start()    once, a quarter into the window
 *	mon_window_end()       at the deadline: snapshots, stop bpftrace
 *	mon_finish()           reap the tools, parse, add to the result
 *
 * A run sized by work (open_window) does not know its window's length
 * ahead: the generator says when the window starts and ends. perf stat and
 * perf record start in mon_start_early() with their events disabled (-D -1,
 * --control over two pipes) and answer a first command (so their start-up
 * is done before the workload's first operation); mon_window_start() and
 * mon_profile_start() enable them (perf acks), mon_window_end() stops them
 * (SIGINT: both print or write what they counted). So they count and sample
 * the window, not their own start (which, in a window of 0.6 s of guest
 * time, was most of perf record's cost: +1806 insn/op instead of +690).
 *
 * A monitor whose tool or kernel feature is missing sets its status to
 * "unavailable: reason"; nothing here fails the run.
 */
/*
 * perf record's default of 4000 samples per second per CPU with call
 * graphs cost the udp_rr benchmark several percent of its throughput on
 * the 2-CPU lab VM; 499 Hz (prime, so it does not beat with timer ticks)
 * still gives thousands of samples over a profile window. A run spec can
 * ask for another rate with "perf_profile_hz".
 */
#define MON_PROFILE_HZ 499

/*
 * bpftrace's ready probe (mon_start_early()): an interval probe that prints
 * MON_BPF_READY once, through a map that finish_bpftrace() leaves out of the
 * metrics. Under TCG the attach takes host seconds; a server on the peer
 * waits SERVER_START_WAIT_S (30 s) for the client's first datagram, so the
 * wait is shorter than that, and on its timeout the workload starts anyway.
 */
#define MON_BPF_READY "klab: probes attached"
#define MON_BPF_READY_MAP "@klab_attached"
#define MON_BPF_ATTACH_MS 20000
/* How long perf may take to answer a command on its control pipe (its start-up first). */
#define MON_PERF_READY_MS 20000	/* below the server's SERVER_START_WAIT_S (30 s) for the first datagram */

struct mon_ctx {
	/* configuration */
	int want[MON_N];
	const char *nic;		/* may be NULL */
	const char *perf_events;	/* comma list */
	const char *bpf_script;		/* may be NULL */
	const char *workdir;		/* scratch folder for perf.data */
	double window_s;		/* planned measured window (open_window: its time limit) */
	int open_window;		/* the window ends when mon_window_end() is called, not after window_s */
	double profile_s;		/* perf record length */
	long profile_hz;		/* perf record sampling frequency per CPU */
	const char *profile_cpus;	/* perf record -C LIST (NULL: -a, every CPU); perf stat's CPU set */
	double bpf_total_s;		/* from mon_start_early() to the window's end */

	/* state */
	char *status[MON_N];
	int64_t win_start_ms, win_end_ms;
	int64_t profile_start_ms;	/* open_window: when perf record began */
	struct proc_stat cpu_first, cpu_prev, cpu_last;
	int have_cpu_first;
	struct idle_snap idle_first, idle_last;	/* one CPU online: busy time to the ns (idle.h) */
	/*
	 * A run sized by work whose start was acknowledged: the generator's
	 * window, its CLOCK_MONOTONIC edges (its document's "window_ack"; 0:
	 * unknown), set by the caller before mon_finish(). The busy time is
	 * then counted over the window itself (finish_cpu()).
	 */
	uint64_t gen_start_ns, gen_end_ns;
	int have_idle;
	struct json_object *cpu_series;	/* { "cpu_busy_pct": [[t, v]...], "cpu0.busy_pct": ... } */
	struct counters nic_before, nic_after;
	struct run_cmd perf_stat, perf_rec, bpf;
	int perf_stat_on, perf_rec_on, bpf_on;
	/*
	 * A run sized by work: perf stat and perf record start before the
	 * workload with their events disabled (perf -D -1 --control), and the
	 * window's start enables them; ctl/ack are our ends of the pipes (-1).
	 */
	int stat_ctl, stat_ack, rec_ctl, rec_ack;
	int perf_early;			/* 1: perf_start_early() started them (or tried), not the window */
	struct pmu_info pmu;		/* found at the window's start when perf-stat runs */
	char *perf_stat_events;		/* what perf stat was asked for: perf_events, then the hardware events */
	int64_t udp_in_delta;		/* Udp.InDatagrams over the window, -1: unknown */
};

void mon_init(struct mon_ctx *m);
void mon_start_early(struct mon_ctx *m);
void mon_window_start(struct mon_ctx *m);
void mon_window_started(struct mon_ctx *m);
void mon_tick(struct mon_ctx *m);
void mon_profile_start(struct mon_ctx *m);
void mon_window_end(struct mon_ctx *m);
/*
 * Reap and parse; add metrics, series, cpus, histograms, profile,
 * counters, perf_stat and monitors to `result`. `ops` is the number of
 * operations the workload did in the window (transactions or packets;
 * 0: unknown; -1: take the UDP datagrams received in the window, for
 * servers and sinks that run longer than the window), for cpu_us_per_op.
 */
void mon_finish(struct mon_ctx *m, struct json_object *result, double ops);
void mon_release(struct mon_ctx *m);

/*
 * The hardware metrics of one CPU set from perf stat -A's rows (CPUS NULL:
 * every CPU, names without a prefix; "0-3,8": names "cpus0-3+8.NAME"):
 * cycles_per_op, hw_insn_per_op (instructions the PMU counted, not the
 * icount lab's insn_per_op), the cache and branch misses per operation
 * (ops > 0), ipc. A count with a part perf did not count ("<not counted>",
 * "<not supported>") gives no metric and a line in PMU's "notes", never a
 * zero; a count perf multiplexed (and scaled to the whole window) keeps
 * its figure and is flagged: PMU's "scaled" {event: lowest running %} and
 * a note.
 */
void perf_hw_metrics(struct json_object *result, struct json_object *pmu, const struct perf_stat_row *rows,
		     size_t n, const char *cpus, double ops);

/* Append {"name","value","unit","better"} to the result's "metrics" array. */
void result_add_metric(struct json_object *result, const char *name, double value,
		       const char *unit, const char *better);

/*
 * `klab-agent _tracefs-exec PROG ARGS...`: enter a private mount
 * namespace, mount tracefs on /sys/kernel/tracing if it is not there, and
 * exec PROG. This is how bpftrace gets tracepoints without touching the
 * host's mounts.
 */
int cmd_tracefs_exec(int argc, char **argv);

#endif
