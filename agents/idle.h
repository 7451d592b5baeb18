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
	uint64_t now_ns;		/* "now at N nsecs": the clock the counters run on */
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
/* Read /proc/timer_list into *OUT: 0 or -1 (logged at debug level: the caller falls back to /proc/stat). */
int idle_snap_read(struct idle_snap *out);
void idle_snap_free(struct idle_snap *s);

/*
 * Busy nanoseconds of every CPU from A to B: elapsed (B's now minus A's) x
 * CPUs minus the idle and iowait time between them. 0 and *BUSY_NS set, or
 * -1 when the two do not list the same CPUs or a counter went backwards.
 */
int idle_busy_ns(const struct idle_snap *a, const struct idle_snap *b, uint64_t *busy_ns);

#endif
