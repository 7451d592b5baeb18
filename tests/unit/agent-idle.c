/* agent-idle.c: unit tests of idle.c: /proc/timer_list's idle counters and the busy time between two reads. */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "idle.h"
#include "log.h"
#include "tap.h"
#include "util.h"

static char *fixture(const char *name, size_t *len)
{
	struct buf b = BUF_INIT;
	char *p = xasprintf("%s/agent/%s", tap_data_dir(), name);

	if (buf_read_file(&b, p))
		die("missing fixture '%s'", p);
	free(p);
	return buf_detach(&b, len);
}

int main(void)
{
	struct idle_snap a, b, one, two;
	struct idle_cpu c1 = { 0, 1000, 50 }, c2 = { 0, 1000 + 150000000, 50 + 1000 };
	uint64_t busy = 0;
	size_t la, lb;
	int rc;
	char *ta = fixture("timer_list-a.txt", &la), *tb = fixture("timer_list-b.txt", &lb), *cut, *p;

	log_init("agent-idle", 0, LOG_CRIT);
	/* two reads one second apart on the build host (Linux 6.18, 2 CPUs, both busy: load 18) */
	ok(!parse_timer_list_idle(ta, la, "a", &a), "a recorded /proc/timer_list parses");
	is_int(a.n, 2, "two cpu sections");
	ok(a.now_ns == 30254962489104ULL, "now at");
	ok(a.cpus[0].cpu == 0 && a.cpus[0].idle_ns == 19292406206005ULL && a.cpus[0].iowait_ns == 13517667065ULL,
	   "cpu 0's idle and iowait nanoseconds");
	ok(a.cpus[1].cpu == 1 && a.cpus[1].idle_ns == 19177304012862ULL && a.cpus[1].iowait_ns == 44383929149ULL,
	   "cpu 1's, not the timers' lines around them");
	ok(!parse_timer_list_idle(tb, lb, "b", &b), "the second read parses");
	ok(!idle_busy_ns(&a, &b, &busy) && busy == 2 * (30255973416767ULL - 30254962489104ULL),
	   "busy CPUs: 2 x the elapsed nanoseconds (%llu)", (unsigned long long)busy);
	ok(idle_busy_ns(&b, &a, &busy) < 0, "reads in the wrong order are refused");

	/* one CPU 0.2 s, of which 150 ms idle and 1000 ns iowait: busy is the rest, to the ns */
	one.now_ns = 5000000000ULL;
	one.cpus = &c1;
	one.n = 1;
	two.now_ns = 5200000000ULL;
	two.cpus = &c2;
	two.n = 1;
	ok(!idle_busy_ns(&one, &two, &busy) && busy == 200000000ULL - 150000000ULL - 1000ULL,
	   "one CPU: elapsed - idle - iowait = %llu ns", (unsigned long long)busy);
	ok(idle_busy_ns(&one, &a, &busy) < 0, "reads of other CPU sets are refused");

	/*
	 * The edges' clocks (idle.h): the first snapshot moves to the clock read
	 * after its read (later than its "now at"), the last to the one read
	 * before (earlier); the busy time then leaves both reads out. Here the
	 * reads took 156 us and 150 us, which would have been busy time.
	 */
	one.now_ns = 5000000000ULL;
	two.now_ns = 5200000000ULL;
	ok(idle_snap_at(&one, 5000000000ULL - 1, IDLE_EDGE_FIRST) < 0 && one.now_ns == 5000000000ULL,
	   "a first snapshot's clock before its 'now at' is refused, and moves nothing");
	ok(idle_snap_at(&two, 5200000000ULL + 1, IDLE_EDGE_LAST) < 0 && two.now_ns == 5200000000ULL,
	   "a last snapshot's clock after its 'now at' is refused");
	ok(!idle_snap_at(&one, 5000156000ULL, IDLE_EDGE_FIRST) && one.now_ns == 5000156000ULL,
	   "the first snapshot moves to the clock after its read");
	ok(!idle_snap_at(&two, 5199850000ULL, IDLE_EDGE_LAST) && two.now_ns == 5199850000ULL,
	   "the last snapshot moves to the clock before its read");
	rc = idle_busy_ns(&one, &two, &busy);
	ok(!rc && busy == 200000000ULL - 156000ULL - 150000ULL - 150000000ULL - 1000ULL,
	   "busy between the edges' clocks: the reads left out (%llu ns)", (unsigned long long)busy);
	ok(!idle_snap_at(&one, one.now_ns, IDLE_EDGE_FIRST) && !idle_snap_at(&two, two.now_ns, IDLE_EDGE_LAST),
	   "a clock equal to 'now at' is taken");

	/*
	 * The generator's window inside the snapshots' span (a run sized by work,
	 * its start acknowledged): the busy time over the window alone, the
	 * snapshots' counters unchanged; a window not inside is refused.
	 */
	rc = idle_busy_span_ns(&one, &two, 5000200000ULL, 5199800000ULL, &busy);
	ok(!rc && busy == 199600000ULL - 150000000ULL - 1000ULL && one.now_ns == 5000156000ULL &&
	   two.now_ns == 5199850000ULL, "busy over the generator's window: %llu ns", (unsigned long long)busy);
	ok(idle_busy_span_ns(&one, &two, 5000100000ULL, 5199800000ULL, &busy) < 0,
	   "a window that starts before the first snapshot is refused");
	ok(idle_busy_span_ns(&one, &two, 5000200000ULL, 5199900000ULL, &busy) < 0,
	   "a window that ends after the last snapshot is refused");
	ok(idle_busy_span_ns(&one, &two, 0, 5199800000ULL, &busy) < 0 &&
	   idle_busy_span_ns(&one, &two, 5100000000ULL, 5100000000ULL, &busy) < 0,
	   "no window (0) or an empty one is refused");

	/* a kernel without NO_HZ prints no idle counters */
	cut = xstrdup(ta);
	while ((p = strstr(cut, ".idle_sleeptime")))
		memcpy(p, ".idle_sleepXime", 15);
	ok(parse_timer_list_idle(cut, strlen(cut), "cut", &one) < 0, "no idle_sleeptime: refused");
	idle_snap_free(&one);
	ok(parse_timer_list_idle(ta, 40, "short", &one) < 0, "no cpu section: refused");
	idle_snap_free(&one);
	ok(parse_timer_list_idle("now at x nsecs\ncpu: 0\n", 22, "bad", &one) < 0, "a bad 'now at': refused");
	idle_snap_free(&one);
	free(cut);
	idle_snap_free(&a);
	idle_snap_free(&b);
	free(ta);
	free(tb);
	return done_testing();
}
