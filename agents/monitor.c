/* monitor.c: the monitors beside a workload: /proc/stat sampling, perf stat/record, bpftrace, NIC counters. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "agent.h"
#include "jsonh.h"
#include "log.h"
#include "monitor.h"
#include "strvec.h"
#include "util.h"

#define TRACEFS_MAGIC_NR 0x74726163
#define PROFILE_ROWS_MAX 200
#define PROFILE_STACKS_MAX 1000	/* folded stacks per run; the rest go to "COMM;[other stacks]" */

static const char *const mon_names[MON_N] = { "cpu", "perf-stat", "perf-profile", "bpftrace", "nic", "pmu" };

int monitor_index(const char *name)
{
	int i;

	for (i = 0; i < MON_N; i++)
		if (!strcmp(name, mon_names[i]))
			return i;
	return -1;
}

const char *monitor_name(int idx)
{
	return idx >= 0 && idx < MON_N ? mon_names[idx] : "?";
}

static void set_status(struct mon_ctx *m, int idx, const char *fmt, ...) KLAB_PRINTF(3, 4);
static void set_status(struct mon_ctx *m, int idx, const char *fmt, ...)
{
	va_list ap;
	struct buf b = BUF_INIT;

	va_start(ap, fmt);
	buf_vaddf(&b, fmt, ap);
	va_end(ap);
	free(m->status[idx]);
	m->status[idx] = buf_detach(&b, NULL);
}

/* Only the first reason a monitor became unavailable is kept. */
#define unavailable(m, idx, ...) do { \
	if (!(m)->status[idx] || !strncmp((m)->status[idx], "ok", 2)) \
		set_status(m, idx, "unavailable: " __VA_ARGS__); \
} while (0)

/* The last line of a tool's stderr that is not bpftrace's RLIMIT noise (malloc'd). */
static char *tool_error(const struct buf *b)
{
	const char *l = last_line_except(b->buf, "RLIMIT_MEMLOCK");

	return xstrdup(*l ? l : "no message");
}

void result_add_metric(struct json_object *result, const char *name, double value,
		       const char *unit, const char *better)
{
	struct json_object *a = NULL, *o;

	if (!json_object_object_get_ex(result, "metrics", &a)) {
		a = json_object_new_array();
		json_object_object_add(result, "metrics", a);
	}
	if (!isfinite(value))
		return;
	o = json_object_new_object();
	json_object_object_add(o, "name", json_object_new_string(name));
	json_object_object_add(o, "value", json_object_new_double(value));
	json_object_object_add(o, "unit", json_object_new_string(unit ? unit : ""));
	json_object_object_add(o, "better", json_object_new_string(better ? better : "none"));
	json_object_array_add(a, o);
}

static struct json_object *result_array(struct json_object *result, const char *key)
{
	struct json_object *a = NULL;

	if (!json_object_object_get_ex(result, key, &a)) {
		a = json_object_new_array();
		json_object_object_add(result, key, a);
	}
	return a;
}

void mon_init(struct mon_ctx *m)
{
	memset(m, 0, sizeof(*m));
	m->perf_events = "cpu-clock,task-clock,context-switches,cpu-migrations,page-faults";
	m->profile_hz = MON_PROFILE_HZ;
	m->perf_stat = (struct run_cmd)RUN_CMD_INIT;
	m->perf_rec = (struct run_cmd)RUN_CMD_INIT;
	m->bpf = (struct run_cmd)RUN_CMD_INIT;
	m->cpu_series = json_object_new_object();
	m->udp_in_delta = -1;
	m->stat_ctl = m->stat_ack = m->rec_ctl = m->rec_ack = -1;
}

/* --- cpu ------------------------------------------------------------------------ */

static int read_proc_stat(struct proc_stat *ps)
{
	struct buf b = BUF_INIT;
	int ret;

	if (buf_read_file(&b, "/proc/stat"))
		return -1;
	ret = parse_proc_stat(b.buf, b.len, "/proc/stat", ps);
	buf_release(&b);
	return ret;
}

static void series_point(struct json_object *series, const char *name, double t, double v)
{
	struct json_object *a, *p;

	if (!json_object_object_get_ex(series, name, &a)) {
		a = json_object_new_array();
		json_object_object_add(series, name, a);
	}
	p = json_object_new_array();
	json_object_array_add(p, json_object_new_double(t));
	json_object_array_add(p, json_object_new_double(round(v * 100) / 100));
	json_object_array_add(a, p);
}

static void proc_stat_copy(struct proc_stat *dst, const struct proc_stat *src)
{
	dst->n = src->n;
	dst->cpus = xmalloc(src->n * sizeof(*src->cpus));
	memcpy(dst->cpus, src->cpus, src->n * sizeof(*src->cpus));
}

/* A point of the per-second series from a new read of /proc/stat, which becomes cpu_prev: 0 or -1 (unavailable). */
static int cpu_sample(struct mon_ctx *m)
{
	struct proc_stat now;
	double t;
	size_t i;

	if (read_proc_stat(&now)) {
		unavailable(m, MON_CPU, "cannot read /proc/stat");
		return -1;
	}
	t = round((now_ms() - m->win_start_ms) / 100.0) / 10.0;
	for (i = 0; i < now.n; i++) {
		const struct cpu_times *prev = proc_stat_cpu(&m->cpu_prev, now.cpus[i].cpu);
		struct cpu_pct p;
		char name[64];
		if (!prev)
			continue;
		cpu_pct_between(prev, &now.cpus[i], &p);
		if (now.cpus[i].cpu < 0) {
			series_point(m->cpu_series, "cpu_busy_pct", t, 100.0 - p.idle - p.iowait);
		} else {
			snprintf(name, sizeof(name), "cpu%d.busy_pct", now.cpus[i].cpu);
			series_point(m->cpu_series, name, t, 100.0 - p.idle - p.iowait);
			snprintf(name, sizeof(name), "cpu%d.soft_pct", now.cpus[i].cpu);
			series_point(m->cpu_series, name, t, p.soft);
		}
	}
	proc_stat_free(&m->cpu_prev);
	m->cpu_prev = now;
	return 0;
}

/* --- nic -------------------------------------------------------------------------- */

static void nic_snapshot(struct mon_ctx *m, struct counters *c)
{
	struct buf b = BUF_INIT;
	struct counters snmp = COUNTERS_INIT;
	size_t i;

	if (m->nic) {
		char *dir = xasprintf("/sys/class/net/%s/statistics", m->nic);
		DIR *d = opendir(dir);
		struct dirent *e;
		if (!d) {
			unavailable(m, MON_NIC, "no interface '%s' (%s)", m->nic, strerror(errno));
		} else {
			while ((e = readdir(d))) {
				char *p, *name;
				long v;
				if (e->d_name[0] == '.')
					continue;
				p = xasprintf("%s/%s", dir, e->d_name);
				if (!read_small_file(p, &b) && !parse_long(b.buf, 0, LONG_MAX, &v)) {
					name = xasprintf("nic.%s", e->d_name);
					counters_add(c, name, v);
					free(name);
				}
				free(p);
			}
			closedir(d);
		}
		free(dir);
	}
	buf_reset(&b);
	if (!buf_read_file(&b, "/proc/net/snmp") &&
	    !parse_snmp(b.buf, b.len, "/proc/net/snmp", &snmp)) {
		for (i = 0; i < snmp.n; i++)
			if (starts_with(snmp.v[i].name, "Udp.")) {
				char *name = xasprintf("udp.%s", snmp.v[i].name + 4);
				counters_add(c, name, snmp.v[i].value);
				free(name);
			}
	}
	counters_free(&snmp);
	buf_reset(&b);
	if (!buf_read_file(&b, "/proc/net/softnet_stat"))
		parse_softnet(b.buf, b.len, "/proc/net/softnet_stat", c);
	/* ethtool forks: last, so the counters above are read close together */
	if (m->nic) {
		char *eth = run_which("ethtool");
		if (eth) {
			const char *argv[] = { eth, "-S", m->nic, NULL };
			struct run_cmd rc = RUN_CMD_INIT;
			rc.argv = argv;
			rc.timeout_ms = 5000;
			rc.out_cap = 1 << 20;
			if (!run_command(&rc) && rc.status == 0)
				parse_ethtool_stats(rc.out.buf, rc.out.len, "ethtool -S output", c);
			run_release(&rc);
			free(eth);
		}
	}
	buf_release(&b);
}

/* --- perf and bpftrace ------------------------------------------------------------ */

static int start_tool(struct mon_ctx *m, int idx, struct run_cmd *c, struct strvec *argv,
		      long timeout_ms)
{
	c->argv = (const char *const *)argv->v;
	c->timeout_ms = timeout_ms;
	c->out_cap = 16 << 20;
	if (run_start(c)) {
		unavailable(m, idx, "cannot run '%s'", argv->v[0]);
		return -1;
	}
	return 0;
}

static char *tool_path(struct mon_ctx *m, int idx, const char *prog)
{
	char *p = run_which(prog);

	if (!p)
		unavailable(m, idx, "%s not found", prog);
	return p;
}

/*
 * perf's --control: two pipes, ours in *CTL and *ACK, the tool's ends
 * inherited (their numbers in the option, after -D -1: events disabled at
 * the start) and returned in CHILD to close once it runs. 0 or -1.
 */
static int perf_ctl_open(struct strvec *argv, int *ctl, int *ack, int child[2])
{
	int c[2], a[2];

	if (pipe2(c, O_CLOEXEC))
		return -1;
	if (pipe2(a, O_CLOEXEC)) {
		close(c[0]);
		close(c[1]);
		return -1;
	}
	fcntl(c[0], F_SETFD, 0);	/* the tool's ends survive its exec */
	fcntl(a[1], F_SETFD, 0);
	*ctl = c[1];
	*ack = a[0];
	child[0] = c[0];
	child[1] = a[1];
	strvec_pushv(argv, (const char *const[]){ "-D", "-1", NULL });
	strvec_pushf(argv, "--control=fd:%d,%d", c[0], a[1]);
	return 0;
}

/* Close the tool's ends in the agent (after its start, or when it did not start). */
static void perf_ctl_child_close(int child[2])
{
	for (int i = 0; i < 2; i++)
		if (child[i] >= 0)
			close(child[i]);
	child[0] = child[1] = -1;
}

/* Send CMD ("enable", "disable") and wait up to TIMEOUT_MS for perf's "ack": 0, or -1. */
static int perf_ctl_cmd(int ctl, int ack, const char *cmd, long timeout_ms)
{
	char line[64];
	size_t got = 0;
	int64_t until = now_ms() + timeout_ms;

	if (ctl < 0 || ack < 0 || dprintf(ctl, "%s\n", cmd) < 0)
		return -1;
	for (;;) {
		struct pollfd p = { ack, POLLIN, 0 };
		int64_t left = until - now_ms();
		ssize_t n;

		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			return -1;
		n = read(ack, line + got, sizeof(line) - 1 - got);
		if (n <= 0)
			return -1;
		got += (size_t)n;
		line[got] = 0;
		if (strstr(line, "ack\n"))
			return 0;
		if (got >= sizeof(line) - 1)
			return -1;
	}
}

static void perf_ctl_close(int *ctl, int *ack)
{
	if (*ctl >= 0)
		close(*ctl);
	if (*ack >= 0)
		close(*ack);
	*ctl = *ack = -1;
}

static int start_tool(struct mon_ctx *m, int idx, struct run_cmd *c, struct strvec *argv, long timeout_ms);
static char *tool_path(struct mon_ctx *m, int idx, const char *prog);
static void perf_stat_argv(struct mon_ctx *m, struct strvec *argv, const char *perf);
static void perf_record_argv(struct mon_ctx *m, struct strvec *argv, const char *perf);

/*
 * A perf of a run sized by work, started before the workload, events off:
 * ARGV's tool with --control; its first "disable" is acked once perf is set
 * up (its start-up before the workload's first operation). 1 started and
 * ready, 0 not started (the caller starts it the old way at the window), -1
 * started but not ready (stopped; unavailable).
 */
static int perf_start_ready(struct mon_ctx *m, int idx, struct run_cmd *c, struct strvec *argv, int *ctl, int *ack)
{
	int child[2] = { -1, -1 };

	if (perf_ctl_open(argv, ctl, ack, child)) {
		unavailable(m, idx, "cannot make perf's control pipes");
		return 0;
	}
	if (start_tool(m, idx, c, argv, (long)(m->window_s * 1000) + 60000 + MON_PERF_READY_MS)) {
		perf_ctl_child_close(child);
		perf_ctl_close(ctl, ack);
		return 0;
	}
	perf_ctl_child_close(child);
	if (perf_ctl_cmd(*ctl, *ack, "disable", MON_PERF_READY_MS)) {
		run_signal(c, SIGKILL);
		unavailable(m, idx, "perf did not answer its control pipe within %d s", MON_PERF_READY_MS / 1000);
		perf_ctl_close(ctl, ack);
		return -1;
	}
	return 1;
}

/* perf stat and perf record of a run sized by work, ready before its workload (monitor.h). */
static void perf_start_early(struct mon_ctx *m)
{
	char *perf;

	if (!m->open_window)
		return;
	m->perf_early = 1;
	if (m->want[MON_PERF_STAT] || m->want[MON_PMU]) {
		pmu_detect("", &m->pmu);
		if (m->want[MON_PMU] && !m->pmu.usable)
			unavailable(m, MON_PMU, "%s", m->pmu.reason);
	}
	if (m->want[MON_PERF_STAT] || (m->want[MON_PMU] && m->pmu.usable)) {
		int idx = m->want[MON_PERF_STAT] ? MON_PERF_STAT : MON_PMU, r;

		if ((perf = tool_path(m, idx, "perf"))) {
			struct strvec argv = STRVEC_INIT;

			perf_stat_argv(m, &argv, perf);
			r = perf_start_ready(m, idx, &m->perf_stat, &argv, &m->stat_ctl, &m->stat_ack);
			m->perf_stat_on = r != 0;
			strvec_clear(&argv);
			free(perf);
		}
	}
	if (m->want[MON_PERF_PROFILE] && (perf = tool_path(m, MON_PERF_PROFILE, "perf"))) {
		struct strvec argv = STRVEC_INIT;

		perf_record_argv(m, &argv, perf);
		m->perf_rec_on = perf_start_ready(m, MON_PERF_PROFILE, &m->perf_rec, &argv, &m->rec_ctl,
						  &m->rec_ack) != 0;
		strvec_clear(&argv);
		free(perf);
	}
}

/* bpftrace, attached when it returns (or after MON_BPF_ATTACH_MS). */
static void bpf_start_early(struct mon_ctx *m)
{
	struct strvec argv = STRVEC_INIT;
	char *path;

	if (!m->want[MON_BPFTRACE])
		return;
	if (!m->bpf_script || !*m->bpf_script) {
		unavailable(m, MON_BPFTRACE, "no bpftrace_script in the run spec");
		return;
	}
	if (!(path = tool_path(m, MON_BPFTRACE, "bpftrace")))
		return;
	strvec_push(&argv, agent_self_exe());
	strvec_push(&argv, "_tracefs-exec");
	strvec_push(&argv, path);
	strvec_pushv(&argv, (const char *const[]){ "-B", "line", "-e", NULL });
	/*
	 * bpftrace prints its maps when SIGINT arrives at the window's end.
	 * A SIGINT that lands while it is still attaching can be lost, so
	 * the script also ends itself a little after the window, and a
	 * timeout is the last resort. Its output reaches us only once every
	 * probe is attached (the event loop starts then), so the first line
	 * of the ready probe says that it is: the workload starts after it
	 * (cmd_run), and a run sized by work has its probes from the first
	 * operation on. The ready probe's map is not a metric (finish_bpftrace).
	 */
	strvec_pushf(&argv, "%s\ninterval:s:%ld { exit(); }\n"
		     "interval:ms:20 /" MON_BPF_READY_MAP " == 0/ { " MON_BPF_READY_MAP " = 1; printf(\"%s\\n\"); }",
		     m->bpf_script, (long)ceil(m->bpf_total_s) + 2, MON_BPF_READY);
	if (!start_tool(m, MON_BPFTRACE, &m->bpf, &argv,
			(long)(m->bpf_total_s * 1000) + 60000 + MON_BPF_ATTACH_MS)) {
		int64_t t = now_ms();
		int r = run_wait_output(&m->bpf, MON_BPF_READY, MON_BPF_ATTACH_MS);

		m->bpf_on = 1;
		if (r == 0)
			warn("bpftrace did not say its probes were attached within %d s: the workload starts "
			     "anyway, its counts may miss the start", MON_BPF_ATTACH_MS / 1000);
		else
			debug("bpftrace: %s after %lld ms", r > 0 ? "attached" : "ended", (long long)(now_ms() - t));
	}
	strvec_clear(&argv);
	free(path);
}

void mon_start_early(struct mon_ctx *m)
{
	bpf_start_early(m);
	perf_start_early(m);
}

/*
 * perf stat's events: the run spec's (or the software default), then the
 * hardware events of perf_hw_events[] the list does not name yet, when
 * the machine has a PMU the agent may count system-wide (pmu_detect()).
 * A PMU that lacks one (ARM cores without LLC-load-misses) answers
 * "<not supported>" for it and counts the rest.
 */
static char *perf_stat_event_list(struct mon_ctx *m)
{
	struct buf b = BUF_INIT;
	int k;

	if (m->want[MON_PERF_STAT])
		buf_addstr(&b, m->perf_events);
	for (k = 0; m->pmu.usable && k < PERF_HW_N; k++) {
		const char *e = perf_hw_events[k];
		size_t n = strlen(e);
		const char *p;
		int named = 0;

		/* the list so far: perf-stat's events (a spec's perf_events may name cycles), or none */
		for (p = b.buf; (p = strstr(p, e)); p += n)
			named |= (p == b.buf || p[-1] == ',') && (!p[n] || p[n] == ',');
		if (!named)
			buf_addf(&b, "%s%s", b.len ? "," : "", e);
	}
	return buf_detach(&b, NULL);
}

void mon_window_start(struct mon_ctx *m)
{
	m->win_start_ms = now_ms();
	if (m->want[MON_CPU]) {
		if (read_proc_stat(&m->cpu_first)) {
			unavailable(m, MON_CPU, "cannot read /proc/stat");
		} else {	/* one read: the series' first point is the same data */
			m->have_cpu_first = 1;
			proc_stat_copy(&m->cpu_prev, &m->cpu_first);
		}
	}
	if (m->want[MON_NIC])
		nic_snapshot(m, &m->nic_before);
	if (m->perf_early) {	/* started before the workload (perf_start_early()): enable its events */
		int idx = m->want[MON_PERF_STAT] ? MON_PERF_STAT : MON_PMU;

		if (m->stat_ctl >= 0 && perf_ctl_cmd(m->stat_ctl, m->stat_ack, "enable", MON_PERF_READY_MS))
			unavailable(m, idx, "perf stat did not enable its events within %d s", MON_PERF_READY_MS / 1000);
		return;
	}
	if (m->want[MON_PERF_STAT] || m->want[MON_PMU]) {
		pmu_detect("", &m->pmu);
		if (m->want[MON_PMU] && !m->pmu.usable)
			unavailable(m, MON_PMU, "%s", m->pmu.reason);
	}
	/* one perf stat for both: perf-stat's software events and, with a PMU, the hardware ones */
	if (m->want[MON_PERF_STAT] || (m->want[MON_PMU] && m->pmu.usable)) {
		int idx = m->want[MON_PERF_STAT] ? MON_PERF_STAT : MON_PMU;
		char *perf = tool_path(m, idx, "perf");
		if (perf) {
			struct strvec argv = STRVEC_INIT;

			perf_stat_argv(m, &argv, perf);
			if (!start_tool(m, idx, &m->perf_stat, &argv,
					(long)(m->window_s * 1000) + 30000))
				m->perf_stat_on = 1;
			strvec_clear(&argv);
			free(perf);
		}
	}
}

/* perf stat's argv (the events into m->perf_stat_events); a timed window's runs `sleep` for it. */
static void perf_stat_argv(struct mon_ctx *m, struct strvec *argv, const char *perf)
{
	free(m->perf_stat_events);
	m->perf_stat_events = perf_stat_event_list(m);
	strvec_push(argv, perf);
	strvec_push(argv, "stat");
	strvec_push(argv, "-a");
	strvec_push(argv, "-A");	/* per CPU: the CPU set's counts are a part of the same count */
	strvec_push(argv, "-x,");
	strvec_push(argv, "-e");
	strvec_push(argv, m->perf_stat_events);
	if (!m->open_window) {	/* else until mon_window_end()'s SIGINT */
		strvec_push(argv, "--");
		strvec_push(argv, "sleep");
		strvec_pushf(argv, "%.3f", m->window_s);
	}
}

/* perf record's argv; a timed window's runs `sleep` for profile_s. */
static void perf_record_argv(struct mon_ctx *m, struct strvec *argv, const char *perf)
{
	strvec_push(argv, perf);
	strvec_push(argv, "record");
	if (m->profile_cpus) {	/* e.g. the CPU that services the NIC's interrupts (seed 004) */
		strvec_push(argv, "-C");
		strvec_push(argv, m->profile_cpus);
	} else {
		strvec_push(argv, "-a");
	}
	strvec_push(argv, "-g");
	strvec_push(argv, "-e");
	strvec_push(argv, "cpu-clock");	/* the one sampling event every machine has */
	strvec_push(argv, "-F");
	strvec_pushf(argv, "%ld", m->profile_hz);
	strvec_push(argv, "-q");
	strvec_push(argv, "-o");
	strvec_pushf(argv, "%s/perf.data", m->workdir);
	if (!m->open_window) {	/* else until mon_window_end()'s SIGINT */
		strvec_push(argv, "--");
		strvec_push(argv, "sleep");
		strvec_pushf(argv, "%.3f", m->profile_s);
	}
}

void mon_window_started(struct mon_ctx *m)
{
	/* the "cpu" line and one CPU: its idle time to the ns is exact (idle.h) */
	if (m->want[MON_CPU] && m->have_cpu_first && m->cpu_first.n == 2 &&
	    !idle_snap_read(&m->idle_first, IDLE_EDGE_FIRST))
		m->have_idle = 1;
}

void mon_tick(struct mon_ctx *m)
{
	if (m->want[MON_CPU] && m->have_cpu_first)
		(void)cpu_sample(m);
}

void mon_profile_start(struct mon_ctx *m)
{
	char *perf;
	struct strvec argv = STRVEC_INIT;

	if (m->perf_early) {	/* started before the workload (perf_start_early()): enable its events */
		m->profile_start_ms = now_ms();
		if (m->rec_ctl >= 0 && perf_ctl_cmd(m->rec_ctl, m->rec_ack, "enable", MON_PERF_READY_MS))
			unavailable(m, MON_PERF_PROFILE, "perf record did not enable its events within %d s",
				    MON_PERF_READY_MS / 1000);
		return;
	}
	if (!m->want[MON_PERF_PROFILE] || m->perf_rec_on)
		return;
	if (!(perf = tool_path(m, MON_PERF_PROFILE, "perf")))
		return;
	perf_record_argv(m, &argv, perf);
	m->profile_start_ms = now_ms();
	if (!start_tool(m, MON_PERF_PROFILE, &m->perf_rec, &argv, (long)(m->profile_s * 1000) + 60000))
		m->perf_rec_on = 1;
	strvec_clear(&argv);
	free(perf);
}

void mon_window_end(struct mon_ctx *m)
{
	m->win_end_ms = now_ms();
	if (m->want[MON_CPU] && m->have_cpu_first) {
		/* first: its clock ends the busy time (idle.h) */
		if (m->have_idle && idle_snap_read(&m->idle_last, IDLE_EDGE_LAST))
			m->have_idle = 0;
		if (!cpu_sample(m))	/* one read for the series' last point and the window's */
			proc_stat_copy(&m->cpu_last, &m->cpu_prev);
	}
	if (m->want[MON_NIC])
		nic_snapshot(m, &m->nic_after);
	if (m->bpf_on)
		run_signal(&m->bpf, SIGINT);
	if (m->open_window && m->perf_stat_on)
		run_signal(&m->perf_stat, SIGINT);
	if (m->open_window && m->perf_rec_on) {
		run_signal(&m->perf_rec, SIGINT);
		m->profile_s = (double)(m->win_end_ms - m->profile_start_ms) / 1000.0;
	}
}

/* --- finish: reap and parse ------------------------------------------------------- */

/*
 * The exact busy time (one CPU online, idle.h): over the generator's window
 * when it gave its clocks and they lie between the idle snapshots' (*SPAN
 * "window"), else between the snapshots' clocks ("snapshots"). The CPU is
 * never idle between the first snapshot and the window's start, nor between
 * its end and the last snapshot: the agent runs until it acknowledges the
 * start, then the generator it woke until it reads its clock; at the end
 * the generator runs until it writes "end", then the agent it woke until it
 * reads its clock. So the snapshots' counters are those of the window's
 * edges too, and the busy time leaves out the acknowledgement and both
 * wake-ups (73-80 ppm of udp_tx_dummy's insn_per_op, docs/observation.md).
 */
static int cpu_busy_exact(const struct mon_ctx *m, uint64_t *busy_ns, const char **span)
{
	*span = "window";
	if (!idle_busy_span_ns(&m->idle_first, &m->idle_last, m->gen_start_ns, m->gen_end_ns, busy_ns))
		return 0;
	*span = "snapshots";
	return idle_busy_ns(&m->idle_first, &m->idle_last, busy_ns);
}

static void finish_cpu(struct mon_ctx *m, struct json_object *result, double ops, double win_s)
{
	struct json_object *cpus = result_array(result, "cpus");
	struct json_object *series = result_array(result, "series");
	const struct cpu_times *a, *b;
	struct json_object_iterator it, end;
	long hz = sysconf(_SC_CLK_TCK);
	size_t i;

	if (!m->have_cpu_first || !m->cpu_last.n)
		return;
	for (i = 0; i < m->cpu_last.n; i++) {
		struct cpu_pct p;
		struct json_object *o;
		b = &m->cpu_last.cpus[i];
		a = proc_stat_cpu(&m->cpu_first, b->cpu);
		if (!a)
			continue;
		cpu_pct_between(a, b, &p);
		o = json_object_new_object();
		json_object_object_add(o, "cpu", json_object_new_int(p.cpu));
#define F(k) json_object_object_add(o, #k, json_object_new_double(round(p.k * 100) / 100))
		F(usr); F(nice); F(sys); F(iowait); F(irq); F(soft); F(steal); F(idle);
#undef F
		json_object_array_add(cpus, o);
		if (p.cpu == -1) {
			uint64_t busy = cpu_busy_jiffies(a, b), busy_ns;
			double busy_us = (double)busy * 1e6 / (hz > 0 ? hz : 100);
			const char *span = NULL;
			int exact = m->have_idle && !cpu_busy_exact(m, &busy_ns, &span);

			if (exact) {
				busy_us = (double)busy_ns / 1e3;
				json_object_object_add(result, "cpu_busy_span", json_object_new_string(span));
			}
			json_object_object_add(result, "cpu_busy_source",
					       json_object_new_string(exact ? "timer_list" : "proc_stat"));
			result_add_metric(result, "cpu_busy_pct", 100.0 - p.idle - p.iowait, "%", "none");
			result_add_metric(result, "cpu_busy_s", busy_us / 1e6, "s", "lower");
			if (ops > 0)
				result_add_metric(result, "cpu_us_per_op", busy_us / ops, "us", "lower");
		}
	}
	it = json_object_iter_begin(m->cpu_series);
	end = json_object_iter_end(m->cpu_series);
	for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
		struct json_object *s = json_object_new_object();
		json_object_object_add(s, "metric", json_object_new_string(json_object_iter_peek_name(&it)));
		json_object_object_add(s, "unit", json_object_new_string("%"));
		json_object_object_add(s, "points", json_object_get(json_object_iter_peek_value(&it)));
		json_object_array_add(series, s);
	}
	(void)win_s;
}

static void finish_nic(struct mon_ctx *m, struct json_object *result, double win_s)
{
	struct counters dlt = COUNTERS_INIT;
	struct json_object *cnt = json_object_new_object();
	size_t i;

	counters_delta(&m->nic_before, &m->nic_after, &dlt);
	if (counters_find(&dlt, "udp.InDatagrams"))
		m->udp_in_delta = counters_find(&dlt, "udp.InDatagrams")->value;
	for (i = 0; i < dlt.n; i++) {
		const char *n = dlt.v[i].name;
		char *name;
		if (starts_with(n, "ethtool.") && !dlt.v[i].value)
			continue;	/* dozens of per-queue zeros on most NICs */
		json_object_object_add(cnt, n, json_object_new_int64(dlt.v[i].value));
		name = xstrdup(n);
		if (win_s > 0)
			result_add_metric(result, name, dlt.v[i].value / win_s, "1/s", "none");
		free(name);
	}
	json_object_object_add(result, "counters", cnt);
	json_object_object_add(result, "counters_window_s", json_object_new_double(win_s));
	if (!dlt.n)
		unavailable(m, MON_NIC, "no counters could be read");
	counters_free(&dlt);
}

/* A tool that exited 0, or one that an open window's end stopped (perf dies of the SIGINT it handled). */
static int tool_ended_well(const struct mon_ctx *m, const struct run_cmd *c)
{
	return !c->status || (m->open_window && c->signaled && !c->timed_out && c->status == 128 + SIGINT);
}

static void note(struct json_object *notes, const char *fmt, ...) KLAB_PRINTF(2, 3);
static void note(struct json_object *notes, const char *fmt, ...)
{
	va_list ap;
	struct buf b = BUF_INIT;

	va_start(ap, fmt);
	buf_vaddf(&b, fmt, ap);
	va_end(ap);
	json_object_array_add(notes, json_object_new_string(b.buf));
	buf_release(&b);
}

/* "cpus" + LIST with ',' as '+': "cpus1", "cpus0-3+8" (the prefix of a CPU set's metrics). */
static char *cpu_set_prefix(const char *list)
{
	char *s = xasprintf("cpus%s", list), *p;

	for (p = s; *p; p++)
		if (*p == ',')
			*p = '+';
	return s;
}

void perf_hw_metrics(struct json_object *result, struct json_object *pmu, const struct perf_stat_row *rows,
		       size_t n, const char *cpus, double ops)
{
	static const char *const per_op[PERF_HW_N] = {
		"cycles_per_op", "hw_insn_per_op", "cache_misses_per_op", "llc_load_misses_per_op",
		"l1d_load_misses_per_op", "branch_misses_per_op",
	};
	static const char *const unit[PERF_HW_N] = { "cycle", "insn", "miss", "miss", "miss", "miss" };
	struct perf_hw_count c[PERF_HW_N];
	struct json_object *notes = result_array(pmu, "notes"), *scaled;
	char *pre = cpus ? cpu_set_prefix(cpus) : NULL;
	const char *where = cpus ? cpus : "all";
	int k;

	if (!json_object_object_get_ex(pmu, "scaled", &scaled)) {
		scaled = json_object_new_object();
		json_object_object_add(pmu, "scaled", scaled);
	}
	perf_hw_sum(rows, n, cpus, c);
	for (k = 0; k < PERF_HW_N; k++) {
		char *name = pre ? xasprintf("%s.%s", pre, per_op[k]) : xstrdup(per_op[k]);

		if (c[k].missing) {
			note(notes, "CPUs %s: %s, so no %s", where, c[k].missing, name);
			c[k].rows = 0;
		} else if (!c[k].rows) {
			note(notes, "CPUs %s: perf printed no %s count, so no %s", where, perf_hw_events[k], name);
		} else {
			if (c[k].min_running_pct < 100) {
				char *key = pre ? xasprintf("%s.%s", pre, perf_hw_events[k]) : xstrdup(perf_hw_events[k]);
				json_object_object_add(scaled, key, json_object_new_double(c[k].min_running_pct));
				note(notes, "CPUs %s: %s multiplexed, counted %.2f%% of the time and scaled by perf",
					where, perf_hw_events[k], c[k].min_running_pct);
				free(key);
			}
			if (ops > 0)
				result_add_metric(result, name, c[k].value / ops, unit[k], "lower");
		}
		free(name);
	}
	if (c[PERF_HW_CYCLES].rows && c[PERF_HW_INSN].rows && c[PERF_HW_CYCLES].value > 0) {
		char *name = pre ? xasprintf("%s.ipc", pre) : xstrdup("ipc");
		result_add_metric(result, name, c[PERF_HW_INSN].value / c[PERF_HW_CYCLES].value, "insn/cycle", "none");
		free(name);
	}
	if (ops <= 0)
		note(notes, "CPUs %s: the run counted no operations, so no per-operation figure", where);
	perf_hw_release(c);
	free(pre);
}

/* Sum -A's per-CPU rows per event, in first-seen order: what "perf_stat" and the perf.* metrics hold. */
static void perf_stat_by_event(const struct perf_stat_row *rows, size_t n, struct perf_stat_row **out,
			       size_t *nout)
{
	size_t i, j;

	*out = xcalloc(n ? n : 1, sizeof(**out));
	*nout = 0;
	for (i = 0; i < n; i++) {
		struct perf_stat_row *e = NULL;

		for (j = 0; j < *nout && !e; j++)
			if (!strcmp((*out)[j].event, rows[i].event))
				e = &(*out)[j];
		if (!e) {
			e = &(*out)[(*nout)++];
			*e = rows[i];
			e->cpu = -1;
			e->event = xstrdup(rows[i].event);
			e->unit = xstrdup(rows[i].unit);
			continue;
		}
		e->supported &= rows[i].supported;
		e->counted &= rows[i].counted;
		e->value += rows[i].value;
		if (rows[i].running_pct < e->running_pct)
			e->running_pct = rows[i].running_pct;
	}
}

static void finish_perf_stat(struct mon_ctx *m, struct json_object *result, double ops)
{
	struct perf_stat_row *cpu_rows = NULL, *rows = NULL;
	struct json_object *arr, *pmu;
	size_t n_cpu = 0, n = 0, i;
	int idx = m->want[MON_PERF_STAT] ? MON_PERF_STAT : MON_PMU;

	if (!m->perf_stat_on)
		return;
	if (run_finish(&m->perf_stat) || !tool_ended_well(m, &m->perf_stat)) {
		char *l = tool_error(&m->perf_stat.err);
		unavailable(m, idx, "perf stat: %s (%s)", l, run_describe(&m->perf_stat));
		free(l);
		return;
	}
	if (parse_perf_stat(m->perf_stat.err.buf, m->perf_stat.err.len, "perf stat output", &cpu_rows, &n_cpu)) {
		unavailable(m, idx, "cannot parse perf stat output");
		return;
	}
	perf_stat_drop_foreign(cpu_rows, &n_cpu);
	perf_stat_by_event(cpu_rows, n_cpu, &rows, &n);
	pmu = pmu_json(&m->pmu);
	json_object_object_add(result, "pmu", pmu);
	json_object_object_add(pmu, "events", json_object_new_string(m->perf_stat_events));
	if (m->pmu.usable) {
		perf_hw_metrics(result, pmu, cpu_rows, n_cpu, NULL, ops);
		if (m->profile_cpus)
			perf_hw_metrics(result, pmu, cpu_rows, n_cpu, m->profile_cpus, ops);
	}
	arr = result_array(result, "perf_stat");
	for (i = 0; i < n; i++) {
		struct json_object *o = json_object_new_object();
		json_object_object_add(o, "event", json_object_new_string(rows[i].event));
		json_object_object_add(o, "supported", json_object_new_boolean(rows[i].supported));
		json_object_object_add(o, "counted", json_object_new_boolean(rows[i].counted));
		if (rows[i].counted) {
			char *name = xasprintf("perf.%s", rows[i].event);
			json_object_object_add(o, "value", json_object_new_double(rows[i].value));
			json_object_object_add(o, "unit", json_object_new_string(rows[i].unit));
			if (rows[i].running_pct < 100)
				json_object_object_add(o, "running_pct", json_object_new_double(rows[i].running_pct));
			result_add_metric(result, name, rows[i].value, rows[i].unit, "none");
			free(name);
		}
		json_object_array_add(arr, o);
	}
	perf_stat_rows_free(rows, n);
	perf_stat_rows_free(cpu_rows, n_cpu);
}

/*
 * The call stacks of the profile, folded (parse_perf_script): what the
 * report's differential flame graph is drawn from. perf script runs after
 * the measured window, so it costs the run time (0.2 s for a 1 s profile of
 * two CPUs here), not throughput. A failure leaves the top-symbol rows in
 * place and marks the monitor unavailable with perf script's reason.
 */
static void perf_profile_stacks(struct mon_ctx *m, struct json_object *result)
{
	struct strvec argv = STRVEC_INIT;
	struct run_cmd sc = RUN_CMD_INIT;
	struct folded_stack *v = NULL;
	struct json_object *arr;
	uint64_t samples = 0;
	size_t n = 0, i;
	char *perf = run_which("perf");

	strvec_push(&argv, perf ? perf : "perf");
	strvec_push(&argv, "script");
	strvec_push(&argv, "-i");
	strvec_pushf(&argv, "%s/perf.data", m->workdir);
	strvec_push(&argv, "-F");
	strvec_push(&argv, "comm,ip,sym,dso");
	free(perf);
	sc.argv = (const char *const *)argv.v;
	sc.timeout_ms = 120000;
	sc.out_cap = 256 << 20;
	if (run_command(&sc) || sc.status) {
		unavailable(m, MON_PERF_PROFILE, "perf script: %s (%s)", last_line(sc.err.buf), run_describe(&sc));
		goto out;
	}
	if (sc.truncated)
		warn("perf script printed more than %zu bytes: the stacks of the rest are left out", sc.out_cap);
	if (parse_perf_script(sc.out.buf, sc.out.len, "perf script output", &v, &n, &samples)) {
		unavailable(m, MON_PERF_PROFILE, "cannot fold perf script output");
		goto out;
	}
	folded_stacks_cap(&v, &n, PROFILE_STACKS_MAX);
	arr = result_array(result, "profile_stacks");
	for (i = 0; i < n; i++) {
		struct json_object *o = json_object_new_object();
		json_object_object_add(o, "stack", json_object_new_string(v[i].stack));
		json_object_object_add(o, "count", json_object_new_int64((int64_t)v[i].count));
		json_object_array_add(arr, o);
	}
	json_object_object_add(result, "profile_samples", json_object_new_int64((int64_t)samples));
out:
	folded_stacks_free(v, n);
	run_release(&sc);
	strvec_clear(&argv);
}

static void finish_perf_profile(struct mon_ctx *m, struct json_object *result)
{
	struct strvec argv = STRVEC_INIT;
	struct run_cmd rep = RUN_CMD_INIT;
	struct prof_row *rows = NULL;
	struct json_object *arr;
	size_t n = 0, i;
	char *perf;

	if (!m->perf_rec_on)
		return;
	if (run_finish(&m->perf_rec) || !tool_ended_well(m, &m->perf_rec)) {
		char *l = tool_error(&m->perf_rec.err);
		unavailable(m, MON_PERF_PROFILE, "perf record: %s (%s)", l, run_describe(&m->perf_rec));
		free(l);
		return;
	}
	perf = run_which("perf");
	strvec_push(&argv, perf ? perf : "perf");
	strvec_push(&argv, "report");
	strvec_push(&argv, "-i");
	strvec_pushf(&argv, "%s/perf.data", m->workdir);
	strvec_push(&argv, "--stdio");
	strvec_push(&argv, "--no-children");
	strvec_push(&argv, "-g");
	strvec_push(&argv, "none");
	strvec_push(&argv, "--sort");
	strvec_push(&argv, "comm,dso,sym");
	free(perf);
	rep.argv = (const char *const *)argv.v;
	rep.timeout_ms = 120000;
	rep.out_cap = 32 << 20;
	if (run_command(&rep) || rep.status) {
		char *l = tool_error(&rep.err);
		unavailable(m, MON_PERF_PROFILE, "perf report: %s (%s)", l, run_describe(&rep));
		free(l);
		goto out;
	}
	if (parse_perf_report(rep.out.buf, rep.out.len, "perf report output", &rows, &n)) {
		unavailable(m, MON_PERF_PROFILE, "cannot parse perf report output");
		goto out;
	}
	arr = result_array(result, "profile");
	for (i = 0; i < n && i < PROFILE_ROWS_MAX; i++) {
		struct json_object *o = json_object_new_object();
		json_object_object_add(o, "percent", json_object_new_double(rows[i].percent));
		json_object_object_add(o, "comm", json_object_new_string(rows[i].comm));
		json_object_object_add(o, "dso", json_object_new_string(rows[i].dso));
		json_object_object_add(o, "symbol", json_object_new_string(rows[i].symbol));
		json_object_array_add(arr, o);
	}
	json_object_object_add(result, "profile_window_s", json_object_new_double(m->profile_s));
	json_object_object_add(result, "profile_hz", json_object_new_int64(m->profile_hz));
	json_object_object_add(result, "profile_cpus", m->profile_cpus ? json_object_new_string(m->profile_cpus) : NULL);
	perf_profile_stacks(m, result);
out:
	prof_rows_free(rows, n);
	run_release(&rep);
	strvec_clear(&argv);
}

static void finish_bpftrace(struct mon_ctx *m, struct json_object *result)
{
	struct bpf_output o;
	struct json_object *hists;
	size_t i, j;

	if (!m->bpf_on)
		return;
	if (run_finish(&m->bpf)) {
		unavailable(m, MON_BPFTRACE, "bpftrace could not be reaped");
		return;
	}
	if (parse_bpftrace(m->bpf.out.buf, m->bpf.out.len, "bpftrace output", &o)) {
		unavailable(m, MON_BPFTRACE, "cannot parse bpftrace output");
		return;
	}
	if (!o.error) {
		/* errors go to stderr */
		struct bpf_output e;
		if (!parse_bpftrace(m->bpf.err.buf, m->bpf.err.len, "bpftrace errors", &e)) {
			o.error = e.error;
			e.error = NULL;
			bpf_output_free(&e);
		}
	}
	if (o.error || (m->bpf.status && !o.n_hists && !o.n_values)) {
		char *l = o.error ? xstrdup(o.error) : tool_error(&m->bpf.err);
		unavailable(m, MON_BPFTRACE, "bpftrace: %s", l);
		free(l);
		bpf_output_free(&o);
		return;
	}
	hists = result_array(result, "histograms");
	for (i = 0; i < o.n_hists; i++) {
		struct json_object *h = json_object_new_object(), *bk = json_object_new_array();
		json_object_object_add(h, "name", json_object_new_string(o.hists[i].name));
		json_object_object_add(h, "unit", json_object_new_string(""));
		json_object_object_add(h, "source", json_object_new_string("bpftrace"));
		for (j = 0; j < o.hists[i].n; j++) {
			struct json_object *b = json_object_new_object();
			json_object_object_add(b, "lo", json_object_new_double(o.hists[i].b[j].lo));
			json_object_object_add(b, "hi", json_object_new_double(o.hists[i].b[j].hi));
			json_object_object_add(b, "count", json_object_new_int64((int64_t)o.hists[i].b[j].count));
			json_object_array_add(bk, b);
		}
		json_object_object_add(h, "buckets", bk);
		json_object_array_add(hists, h);
	}
	for (i = 0; i < o.n_values; i++) {
		char *name;

		if (!strcmp(o.values[i].name, MON_BPF_READY_MAP))
			continue;
		name = xasprintf("bpf.%s", o.values[i].name);
		result_add_metric(result, name, o.values[i].value, "", "none");
		free(name);
	}
	bpf_output_free(&o);
}

void mon_finish(struct mon_ctx *m, struct json_object *result, double ops)
{
	struct json_object *mons = json_object_new_object();
	double win_s = (m->win_end_ms - m->win_start_ms) / 1000.0;
	int i;

	for (i = 0; i < MON_N; i++)
		if (m->want[i] && !m->status[i])
			set_status(m, i, "ok");
	if (m->want[MON_NIC])
		finish_nic(m, result, win_s);
	if (ops < 0)
		ops = m->udp_in_delta > 0 ? (double)m->udp_in_delta : 0;
	if (m->want[MON_CPU])
		finish_cpu(m, result, ops, win_s);
	finish_perf_stat(m, result, ops);
	if (m->want[MON_PMU] && !json_object_object_get_ex(result, "pmu", NULL))
		json_object_object_add(result, "pmu", pmu_json(&m->pmu));	/* no perf stat: why, in "reason" */
	finish_perf_profile(m, result);
	finish_bpftrace(m, result);
	for (i = 0; i < MON_N; i++)
		if (m->want[i])
			json_object_object_add(mons, mon_names[i], json_object_new_string(m->status[i]));
	/*
	 * The hardware counters as a monitor of their own: perf-stat ran, and
	 * "pmu" says whether it counted cycles too or why not, so the job page
	 * and the mail name the reason where the cycles_per_op figures are missing.
	 */
	if (json_object_object_get_ex(result, "pmu", NULL) && !m->want[MON_PMU]) {
		char *st = m->pmu.usable ? xstrdup("ok") : xasprintf("unavailable: %s", m->pmu.reason);
		json_object_object_add(mons, "pmu", json_object_new_string(st));
		free(st);
	}
	json_object_object_add(result, "monitors", mons);
}

void mon_release(struct mon_ctx *m)
{
	int i;

	perf_ctl_close(&m->stat_ctl, &m->stat_ack);
	perf_ctl_close(&m->rec_ctl, &m->rec_ack);
	/* tools still running after an error: stop them */
	if (m->bpf_on && m->bpf.pid > 0)
		run_signal(&m->bpf, SIGKILL);
	for (i = 0; i < MON_N; i++)
		free(m->status[i]);
	proc_stat_free(&m->cpu_first);
	idle_snap_free(&m->idle_first);
	idle_snap_free(&m->idle_last);
	proc_stat_free(&m->cpu_prev);
	proc_stat_free(&m->cpu_last);
	counters_free(&m->nic_before);
	counters_free(&m->nic_after);
	run_release(&m->perf_stat);
	free(m->perf_stat_events);
	run_release(&m->perf_rec);
	run_release(&m->bpf);
	json_object_put(m->cpu_series);
}

/* --- _tracefs-exec ---------------------------------------------------------------- */

int cmd_tracefs_exec(int argc, char **argv)
{
	struct statfs sf;

	if (argc < 2) {
		fprintf(stderr, "usage: klab-agent _tracefs-exec PROG [ARGS...]\n");
		return 2;
	}
	if (statfs("/sys/kernel/tracing", &sf) || sf.f_type != TRACEFS_MAGIC_NR) {
		if (unshare(CLONE_NEWNS))
			return error_errno("cannot enter a private mount namespace"), 1;
		if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
			return error_errno("cannot make mounts private"), 1;
		if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL))
			warn("cannot mount tracefs on /sys/kernel/tracing: %s (tracepoints may be missing)",
			     strerror(errno));
	}
	execv(argv[1], argv + 1);
	error_errno("cannot run '%s'", argv[1]);
	return 127;
}
