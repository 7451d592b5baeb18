/* parse.h: parsers of the monitors' raw output (/proc/stat, mpstat, perf, bpftrace, snmp, softnet, ethtool). */
#ifndef KLAB_AGENT_PARSE_H
#define KLAB_AGENT_PARSE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Every parser takes the whole text (not necessarily NUL-terminated: `len`
 * bytes are read, never more) and fills a caller-owned output, which the
 * matching _free function releases (also after an error). A parser returns
 * 0, or -1 after logging one line that names `what` (the source, e.g.
 * "perf report output") and the line number, and never reads past `len`.
 */

/* --- counters: a flat list of named 64-bit counters ----------------------- */

struct counter {
	char *name;
	int64_t value;
};

struct counters {
	struct counter *v;
	size_t n, alloc;
};

#define COUNTERS_INIT { NULL, 0, 0 }

void counters_add(struct counters *c, const char *name, int64_t value);
/* Pointer to the counter called `name`, or NULL. */
const struct counter *counters_find(const struct counters *c, const char *name);
void counters_free(struct counters *c);
/*
 * out = after - before, for every counter of `after` also present in
 * `before` (a counter that only one side has is left out).
 */
void counters_delta(const struct counters *before, const struct counters *after,
		    struct counters *out);

/* --- /proc/stat and mpstat ------------------------------------------------- */

/* The ten jiffy columns of a "cpu" line of /proc/stat, in the kernel's order. */
enum { CT_USER, CT_NICE, CT_SYSTEM, CT_IDLE, CT_IOWAIT, CT_IRQ, CT_SOFTIRQ,
       CT_STEAL, CT_GUEST, CT_GUEST_NICE, CT_N };

struct cpu_times {
	int cpu;		/* -1: the "cpu" line (all CPUs) */
	uint64_t t[CT_N];
};

struct proc_stat {
	struct cpu_times *cpus;	/* cpus[0] is the "cpu" line when present */
	size_t n;
};

/*
 * Parse the cpu lines of /proc/stat (other lines are ignored). Kernels
 * older than 2.6.33 print fewer columns; missing ones are 0. At least one
 * cpu line is required.
 */
int parse_proc_stat(const char *text, size_t len, const char *what, struct proc_stat *out);
void proc_stat_free(struct proc_stat *ps);
/* The cpu_times of CPU `cpu` (-1: all), or NULL. */
const struct cpu_times *proc_stat_cpu(const struct proc_stat *ps, int cpu);

/*
 * Percentages as `mpstat -P ALL` prints them, except that guest time is
 * counted inside usr (and guest_nice inside nice) so that the eight
 * columns add up to 100.
 */
struct cpu_pct {
	int cpu;		/* -1: all CPUs */
	double usr, nice, sys, iowait, irq, soft, steal, idle;
};

/*
 * Percentages between two samples of one CPU. A counter that went
 * backwards (CPU hotplug) counts as 0. With no elapsed jiffies at all,
 * everything is 0 and idle is 100.
 */
void cpu_pct_between(const struct cpu_times *a, const struct cpu_times *b, struct cpu_pct *out);
/* Busy jiffies between two samples: everything but idle and iowait. */
uint64_t cpu_busy_jiffies(const struct cpu_times *a, const struct cpu_times *b);
/* All jiffies between two samples. */
uint64_t cpu_total_jiffies(const struct cpu_times *a, const struct cpu_times *b);

/*
 * Parse the text `mpstat` prints (sysstat 10 to 12): a header line with
 * "CPU" and "%usr" ... "%idle" names the columns, data lines follow. When
 * "Average:" lines exist only they are returned, otherwise every data
 * line. "all" is cpu -1; %guest and %gnice are added to usr and nice.
 */
int parse_mpstat(const char *text, size_t len, const char *what,
		 struct cpu_pct **rows, size_t *n);

/* --- perf --------------------------------------------------------------- */

struct prof_row {
	double percent;
	char *comm;
	char *dso;
	char *symbol;		/* without the "[k] " / "[.] " marker */
	char kind;		/* the marker's letter: 'k', '.', 'g', 'u', 'H' */
};

/*
 * Parse `perf report --stdio --no-children --sort comm,dso,sym` output,
 * with or without call graphs (-g lines are skipped). When the
 * "# ........  ......" ruler is present it gives the column widths, so a
 * comm or dso with spaces is read right; without it (text pasted in a
 * mail) the first word is the comm and the words up to the [x] marker the
 * dso. Zero rows is an error unless the text has a "# Samples:" header.
 */
int parse_perf_report(const char *text, size_t len, const char *what,
		      struct prof_row **rows, size_t *n);
void prof_rows_free(struct prof_row *rows, size_t n);

/*
 * Call stacks folded: one line of the flame graph format per distinct
 * stack, "comm;outermost frame;...;leaf frame", with its sample count.
 */
struct folded_stack {
	char *stack;
	uint64_t count;
};

#define FOLDED_STACK_MAX 2048	/* bytes of one stack; deeper frames become "[truncated]" */
#define FOLDED_DEPTH_MAX 127	/* frames read per sample (perf's default --max-stack) */

/*
 * Fold `perf script -F comm,ip,sym,dso` output (a sample is a line with
 * the comm, then one "\tADDRESS SYMBOL (DSO)" line per frame, leaf first,
 * then a blank line) into distinct stacks with their counts, sorted by
 * count (largest first), then by stack. A frame is its symbol without a
 * "+0x.." offset; an unknown symbol is named by its dso's file name
 * ("[libc.so.6]"), else "[unknown]"; ';' in a name becomes ':'. A last
 * sample the text cuts off (no final newline) is left out. *samples: the
 * samples read. Zero samples is not an error (an idle profile).
 */
int parse_perf_script(const char *text, size_t len, const char *what, struct folded_stack **out, size_t *n,
		      uint64_t *samples);
void folded_stacks_free(struct folded_stack *v, size_t n);
/*
 * Keep the MAX largest stacks of a sorted array; the samples of the rest
 * go to one "COMM;[other stacks]" stack per command, so no sample is lost
 * and the result has at most MAX plus one stack per command.
 */
void folded_stacks_cap(struct folded_stack **v, size_t *n, size_t max);

struct perf_stat_row {
	int cpu;		/* perf stat -A: the line's CPU ("CPU3,..."); -1 for a system-wide sum */
	char *event;		/* as perf prints it: "cycles", "cpu_core/cycles/", "armv8_pmuv3_0/cycles/" */
	double value;		/* 0 when not supported / not counted */
	char *unit;		/* "msec", "" ... */
	int supported;		/* 0: "<not supported>" */
	int counted;		/* 0: "<not counted>" or not supported */
	double running_pct;	/* share of the time the counter ran: below 100 perf multiplexed it and scaled the value */
};

/*
 * Parse `perf stat -x,` output (CSV on stderr): value, unit, event, run
 * time, running share, metric value, metric unit, each line optionally
 * after its CPU ("CPU3," with -A); '#' lines and blank lines are skipped.
 */
int parse_perf_stat(const char *text, size_t len, const char *what,
		    struct perf_stat_row **rows, size_t *n);
void perf_stat_rows_free(struct perf_stat_row *rows, size_t n);

/* The hardware events the agent counts where the machine has a PMU; perf's names in perf_hw_events[]. */
enum { PERF_HW_CYCLES, PERF_HW_INSN, PERF_HW_CACHE_MISSES, PERF_HW_LLC_MISSES, PERF_HW_L1D_MISSES,
       PERF_HW_BRANCH_MISSES, PERF_HW_N };
extern const char *const perf_hw_events[PERF_HW_N];

struct perf_hw_count {
	double value;		/* the sum of the counted rows (perf's values, scaled when multiplexed) */
	int rows;		/* rows summed: 0, no count */
	double min_running_pct;	/* the lowest running share of a summed row (100: never multiplexed) */
	char *missing;		/* the first row that was not counted: "cpu_atom/cycles/ <not counted>", or NULL */
};

/*
 * Sum each hardware event's rows: a hybrid machine's PMUs (cpu_core/cycles/
 * and cpu_atom/cycles/) and, from perf stat -A, the CPUs of list CPUS
 * ("1", "0-3,8"; NULL: every row). A sum with a missing part is no count:
 * the caller gives no figure when `missing` is set.
 */
void perf_hw_sum(const struct perf_stat_row *rows, size_t n, const char *cpus,
		 struct perf_hw_count out[PERF_HW_N]);
void perf_hw_release(struct perf_hw_count c[PERF_HW_N]);

/*
 * perf stat -A on a hybrid machine: some perf versions print each PMU's
 * event on every CPU, "<not counted>" on the other PMU's CPUs (pmu-tools
 * issue 469 saw it; others print a PMU's CPUs only). Drop such a row: one
 * of PMU P ("cpu_atom/cycles/") not counted on a CPU where P counted
 * nothing and another PMU counted something, so the CPU is not P's and the
 * row is no missing part of a count. A CPU where no PMU counted keeps its
 * rows (a real gap). Frees the dropped rows' strings, shrinks *N and
 * returns how many it dropped.
 */
size_t perf_stat_drop_foreign(struct perf_stat_row *rows, size_t *n);

/* --- bpftrace ------------------------------------------------------------- */

/* Open bucket ends ("(..., 0)" and "[8K, ...)") are written as -/+ BPF_OPEN. */
#define BPF_OPEN 1e308

struct bpf_bucket {
	double lo, hi;		/* [lo, hi); "[5]" is [5, 6) */
	uint64_t count;
};

struct bpf_hist {
	char *name;		/* as printed, e.g. "@__dev_queue_xmit_ns" or "@lat[sshd]" */
	struct bpf_bucket *b;
	size_t n;
};

struct bpf_value {
	char *name;		/* "@s[bash]", "@a", "@x.count" (from stats()) */
	double value;
};

struct bpf_output {
	struct bpf_hist *hists;
	size_t n_hists;
	struct bpf_value *values;
	size_t n_values;
	char *error;		/* the first "ERROR:" line bpftrace printed (not RLIMIT noise), or NULL */
};

/*
 * Parse what bpftrace prints at exit: maps as "@name: value" (count, sum,
 * avg, min, max), "@name: count N, average A, total T" (stats) and
 * histograms ("@name:" then bucket lines "[lo, hi)  count |@@@|", log2 or
 * linear, with K/M/G/T suffixes, "[N]" single values and open ends)
 * until a blank line. Other lines (printf output, "Attaching N probes")
 * are ignored. A malformed or cut bucket line is an error.
 */
int parse_bpftrace(const char *text, size_t len, const char *what, struct bpf_output *out);
void bpf_output_free(struct bpf_output *o);

/*
 * A number as bpftrace prints it in a bucket bound: "512", "1K", "16M",
 * "-4" (K/M/G/T/P are powers of 1024). 0 or -1.
 */
int parse_bpf_number(const char *s, size_t len, double *out);

/* --- network counters ------------------------------------------------------ */

/*
 * /proc/net/snmp (or netstat): pairs of "Proto: Name Name..." and
 * "Proto: value value..." lines into counters named "Proto.Name"
 * (e.g. "Udp.InDatagrams"). A value line whose count differs from its
 * header is an error.
 */
int parse_snmp(const char *text, size_t len, const char *what, struct counters *out);

/*
 * /proc/net/softnet_stat: one line per CPU of hex columns. Adds the sums
 * over CPUs as softnet.processed, softnet.dropped, softnet.time_squeeze,
 * softnet.received_rps, softnet.flow_limit_count (the last two when the
 * kernel prints them).
 */
int parse_softnet(const char *text, size_t len, const char *what, struct counters *out);

/* `ethtool -S IF`: "     name: value" lines into counters named "ethtool.name". */
int parse_ethtool_stats(const char *text, size_t len, const char *what, struct counters *out);

/*
 * `ethtool -l IF`: the "Current hardware settings" block. -1 for a value
 * printed as "n/a". Returns -1 when the block is missing.
 */
struct channels {
	long max_rx, max_tx, max_combined;
	long rx, tx, combined;
};
int parse_ethtool_channels(const char *text, size_t len, const char *what, struct channels *out);

#endif
