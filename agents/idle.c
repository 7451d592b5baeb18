/* idle.c: per-CPU idle time to the nanosecond from /proc/timer_list (idle.h says why). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "idle.h"
#include "log.h"
#include "util.h"

/* The file is a few kB a CPU; a machine with thousands of CPUs is read whole up to this. */
#define TIMER_LIST_MAX (16u << 20)

void idle_snap_free(struct idle_snap *s)
{
	free(s->cpus);
	memset(s, 0, sizeof(*s));
}

/* "KEY : N nsecs" with any spaces around the colon: N into *OUT, 1; 0 when LINE is not KEY's. */
static int ns_field(const char *line, const char *key, uint64_t *out)
{
	size_t k = strlen(key);
	char *end;

	while (*line == ' ')
		line++;
	if (strncmp(line, key, k))
		return 0;
	line += k;
	while (*line == ' ')
		line++;
	if (*line++ != ':')
		return 0;
	while (*line == ' ')
		line++;
	if (*line < '0' || *line > '9')
		return -1;
	errno = 0;
	*out = strtoull(line, &end, 10);
	if (errno || strncmp(end, " nsecs", 6))
		return -1;
	return 1;
}

int parse_timer_list_idle(const char *text, size_t len, const char *what, struct idle_snap *out)
{
	const char *p = text, *end = text + len;
	struct idle_cpu *cur = NULL;
	int lineno = 0, have_now = 0, have_idle = 0, have_iowait = 0;
	char line[256];

	memset(out, 0, sizeof(*out));
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = (size_t)((nl ? nl : end) - p);
		uint64_t v;
		int r;

		lineno++;
		if (l >= sizeof(line))
			l = sizeof(line) - 1;	/* a long timer line: only its start matters */
		memcpy(line, p, l);
		line[l] = '\0';
		p = nl ? nl + 1 : end;
		if (!strncmp(line, "cpu: ", 5)) {
			long c;

			if (cur && (!have_idle || !have_iowait))
				goto no_idle;
			if (parse_long(line + 5, 0, 1 << 20, &c))
				return error("%s:%d: bad cpu line '%s'", what, lineno, line);
			out->cpus = xrealloc(out->cpus, (out->n + 1) * sizeof(*out->cpus));
			cur = &out->cpus[out->n++];
			memset(cur, 0, sizeof(*cur));
			cur->cpu = (int)c;
			have_idle = have_iowait = 0;
			continue;
		}
		if (!strncmp(line, "now at ", 7)) {	/* "now at N nsecs": no colon */
			char *e;

			errno = 0;
			v = strtoull(line + 7, &e, 10);
			if (errno || e == line + 7 || strncmp(e, " nsecs", 6))
				return error("%s:%d: bad 'now at' line '%s'", what, lineno, line);
			if (!have_now)
				out->now_ns = v;
			have_now = 1;
			continue;
		}
		if (!cur || !strncmp(line, "Tick Device", 11))
			continue;
		if ((r = ns_field(line, ".idle_sleeptime", &v))) {
			if (r < 0)
				return error("%s:%d: bad idle_sleeptime line '%s'", what, lineno, line);
			if (!have_idle)
				cur->idle_ns = v;
			have_idle = 1;
		} else if ((r = ns_field(line, ".iowait_sleeptime", &v))) {
			if (r < 0)
				return error("%s:%d: bad iowait_sleeptime line '%s'", what, lineno, line);
			if (!have_iowait)
				cur->iowait_ns = v;
			have_iowait = 1;
		}
	}
	if (!have_now)
		return error("%s: no 'now at' line", what);
	if (!out->n)
		return error("%s: no 'cpu:' section", what);
	if (!have_idle || !have_iowait)
		goto no_idle;
	return 0;
no_idle:
	return error("%s: cpu %d has no .idle_sleeptime and .iowait_sleeptime (a kernel without NO_HZ)", what,
		     cur->cpu);
}

int idle_snap_at(struct idle_snap *s, uint64_t clock_ns, enum idle_edge edge)
{
	if (edge == IDLE_EDGE_FIRST ? clock_ns < s->now_ns : clock_ns > s->now_ns)
		return -1;
	s->now_ns = clock_ns;
	return 0;
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int idle_snap_read(struct idle_snap *out, enum idle_edge edge)
{
	struct buf b = BUF_INIT;
	uint64_t before = edge == IDLE_EDGE_LAST ? monotonic_ns() : 0, after;
	int ret, lvl = log_get_level();

	memset(out, 0, sizeof(*out));
	if (buf_read_file(&b, "/proc/timer_list") || b.len > TIMER_LIST_MAX) {
		debug("cannot read /proc/timer_list: the cpu monitor counts busy time from /proc/stat");
		buf_release(&b);
		return -1;
	}
	after = monotonic_ns();	/* before the parse: it is the snapshot's cost too */
	if (lvl < LOG_DEBUG)	/* a kernel without it is no error: /proc/stat is used */
		log_set_level(LOG_CRIT);
	ret = parse_timer_list_idle(b.buf, b.len, "/proc/timer_list", out);
	log_set_level(lvl);
	buf_release(&b);
	if (!ret && idle_snap_at(out, edge == IDLE_EDGE_LAST ? before : after, edge)) {
		debug("/proc/timer_list's 'now at' %llu ns is not between the clock's %llu and %llu ns: "
		      "the cpu monitor counts busy time from /proc/stat", (unsigned long long)out->now_ns,
		      (unsigned long long)before, (unsigned long long)after);
		ret = -1;
	}
	return ret;
}

int idle_busy_ns(const struct idle_snap *a, const struct idle_snap *b, uint64_t *busy_ns)
{
	uint64_t el, idle = 0;
	size_t i;

	if (a->n != b->n || !a->n || b->now_ns < a->now_ns)
		return -1;
	el = b->now_ns - a->now_ns;
	for (i = 0; i < a->n; i++) {
		const struct idle_cpu *x = &a->cpus[i], *y = &b->cpus[i];

		if (x->cpu != y->cpu || y->idle_ns < x->idle_ns || y->iowait_ns < x->iowait_ns)
			return -1;
		idle += (y->idle_ns - x->idle_ns) + (y->iowait_ns - x->iowait_ns);
	}
	if (idle > el * a->n)
		return -1;
	*busy_ns = el * a->n - idle;
	return 0;
}

int idle_busy_span_ns(const struct idle_snap *a, const struct idle_snap *b, uint64_t start, uint64_t end,
		      uint64_t *busy_ns)
{
	struct idle_snap x = *a, y = *b;	/* copies: only now_ns moves */

	if (!start || end <= start || idle_snap_at(&x, start, IDLE_EDGE_FIRST) || idle_snap_at(&y, end, IDLE_EDGE_LAST))
		return -1;
	return idle_busy_ns(&x, &y, busy_ns);
}
