/* idle.h: idle time to the nanosecond from /proc/timer_list, for a machine's busy time over a short window. */
#ifndef KLAB_AGENT_IDLE_H
#define KLAB_AGENT_IDLE_H

#include <stddef.h>
#include <stdint.h>

/*
 * /proc/stat counts CPU time in USER_HZ units (10 ms), and its busy columns
 * are sampled at the tick: over a window of 0.6 s that is a step of 1.7% in
 * the busy time, and under the icount clock (a guest nanosecond is one
 * instruction) a step of 1.7% in insn_per_op, where the workload itself
 * repeats to the ppm. With NO_HZ the kernel keeps each CPU's idle and iowait
 * time in nanoseconds (tick_sched: idle_sleeptime, iowait_sleeptime), and
 * /proc/timer_list prints them with the clock they are read against ("now
 * at"); busy time = elapsed - idle - iowait is then exact to the
 * nanosecond. The counters of an idle CPU are brought up to date only when
 * it leaves idle, and /proc/timer_list does not say whether a CPU is idle
 * now, so the figure is exact only for the CPU that reads the file: the
 * agent uses it when one CPU is online (the icount lab's measuring guest),
 * /proc/stat otherwise.
 */
struct idle_cpu {
	int cpu;
	uint64_t idle_ns, iowait_ns;
};

struct idle_snap {
	uint64_t now_ns;		/* "now at N nsecs": the clock the counters run on (idle_snap_at() moves it) */
	struct idle_cpu *cpus;		/* each "cpu: N" with its idle_sleeptime */
	size_t n;
};

/*
 * Parse /proc/timer_list's text: its "now at" line and, for each "cpu: N"
 * section, ".idle_sleeptime" and ".iowait_sleeptime" (a section without
 * them, a kernel without NO_HZ, is an error). 0, or -1 logged naming WHAT
 * and the line. *OUT is released with idle_snap_free() either way.
 */
int parse_timer_list_idle(const char *text, size_t len, const char *what, struct idle_snap *out);
/*
 * A window's busy time runs between two snapshots, and what the monitor
 * does to take them should not be in it: a read of /proc/timer_list costs
 * ~156,000 guest instructions (docs/observation.md). The snapshot's own
 * clock ("now at", ktime_get(): CLOCK_MONOTONIC) is read as the file is
 * generated, so the first snapshot's busy time would take in the rest of
 * its read and its parse, and the last one's the start of its read. Each
 * snapshot is therefore moved to a CLOCK_MONOTONIC time read beside it:
 * the first to the clock read right after its read ended (IDLE_EDGE_FIRST),
 * the last to the clock read right before its read began (IDLE_EDGE_LAST).
 * The counters are those of that time too: the reading CPU (the one CPU
 * online, the case this is used for) runs the reader from the clock read to
 * the file's generation or back, and a CPU that runs a task is not idle, so
 * its idle_sleeptime and iowait_sleeptime (brought up to date when it last
 * left idle) do not move in between. (Reading a proc file does not sleep;
 * were the reader to block there, for a page fault say, its idle time
 * would fall in the window and the busy time come out short by it.)
 * idle_snap_at() does the move, and refuses a clock on the wrong side of
 * "now at".
 */
enum idle_edge { IDLE_EDGE_FIRST, IDLE_EDGE_LAST };
/* Set S's now_ns to CLOCK_NS, the clock of EDGE (above): 0, or -1 when it lies on the wrong side of "now at". */
int idle_snap_at(struct idle_snap *s, uint64_t clock_ns, enum idle_edge edge);
/*
 * Read /proc/timer_list into *OUT, with the clock of EDGE (idle_snap_at()):
 * 0 or -1 (logged at debug level: the caller falls back to /proc/stat).
 */
int idle_snap_read(struct idle_snap *out, enum idle_edge edge);
void idle_snap_free(struct idle_snap *s);

/*
 * Busy nanoseconds of every CPU from A to B: elapsed (B's now minus A's) x
 * CPUs minus the idle and iowait time between them. 0 and *BUSY_NS set, or
 * -1 when the two do not list the same CPUs or a counter went backwards.
 */
int idle_busy_ns(const struct idle_snap *a, const struct idle_snap *b, uint64_t *busy_ns);
/*
 * Busy nanoseconds over [START, END], a span that lies between A and B
 * (CLOCK_MONOTONIC) and in whose margins (A to START, END to B) the CPU was
 * never idle, so that A's and B's counters are those of START and END: A
 * and B moved there (idle_snap_at()), then idle_busy_ns(). 0 and *BUSY_NS
 * set, or -1 when the span is empty or not between A and B.
 */
int idle_busy_span_ns(const struct idle_snap *a, const struct idle_snap *b, uint64_t start, uint64_t end,
		      uint64_t *busy_ns);

#endif
