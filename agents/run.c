/* run.c: `klab-agent run`, `fetch`, `ack`, `list`: one workload with its monitors, results kept until acked. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "cachemodel.h"
#include "jsonh.h"
#include "lock.h"
#include "log.h"
#include "monitor.h"
#include "run.h"
#include "strvec.h"
#include "util.h"

#define SPEC_MAX (1 << 20)
#define DEFAULT_PORT "9100"
#define DEFAULT_LINGER_S 3.0
/* How long a server or sink may take to bind before the agent stops waiting for it. */
#define READY_WAIT_MS 10000
/* A run sized by work: how long past its time limit the agent waits for the generator's window lines. */
#define WINDOW_SLACK_MS 5000
/* The most operations a run spec may ask for (the generators' own bound). */
#define OPS_MAX 1000000000000LL

/* Parameters each workload type accepts, and which roles take them. */
struct param_def {
	const char *type, *key, *roles;	/* roles: space-separated list */
};

static const struct param_def params[] = {
	{ "udp_rr", "flows", "client" },
	{ "udp_rr", "threads", "client server" },
	{ "udp_rr", "request_size", "client" },
	{ "udp_rr", "response_size", "client server" },
	{ "udp_rr", "burst", "client" },
	{ "udp_rr", "cpus", "client server" },
	{ "udp_rr", "busy_poll", "client" },
	{ "udp_rr", "rto_ms", "client" },
	{ "udp_rr", "port", "" },
	{ "udp_tx", "threads", "send sink" },
	{ "udp_tx", "size", "send" },
	{ "udp_tx", "engine", "send" },
	{ "udp_tx", "batch", "send" },
	{ "udp_tx", "gso", "send" },
	{ "udp_tx", "rate", "send" },
	{ "udp_tx", "poll_us", "sink" },
	{ "udp_tx", "cpus", "send sink" },
	{ "udp_tx", "port", "" },
	{ "udp_rr", "seed", "client" },
	{ "udp_rr", "src_ports", "client" },
	{ "udp_tx", "seed", "send" },
	{ "udp_tx", "src_ports", "send" },
};

static const struct param_def *param_find(const char *type, const char *key)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(params); i++)
		if (!strcmp(params[i].type, type) && !strcmp(params[i].key, key))
			return &params[i];
	return NULL;
}

static int role_in(const char *roles, const char *role)
{
	size_t n = strlen(role);
	const char *p = roles;

	while ((p = strstr(p, role))) {
		if ((p == roles || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return 1;
		p += n;
	}
	return 0;
}

/* A parameter value as text: strings as they are, numbers printed. NULL for other types. */
static char *value_text(struct json_object *v)
{
	switch (json_object_get_type(v)) {
	case json_type_string:
		return xstrdup(json_object_get_string(v));
	case json_type_int:
		return xasprintf("%lld", (long long)json_object_get_int64(v));
	case json_type_double:
		return xasprintf("%g", json_object_get_double(v));
	default:
		return NULL;
	}
}

struct spec {
	struct json_object *root;
	const char *run_id, *role, *type, *wl_name, *peer_addr, *bind_addr, *nic;
	const char *perf_events, *bpf_script, *results_dir;
	const char *profile_cpus;	/* perf-profile samples only these CPUs (NULL: all) */
	double duration_s, warmup_s, linger_s;
	double start_wait_s;		/* server or sink: how long it waits for the client's first datagram */
	double idle_end_s;		/* server or sink: end this long after the last datagram (0: at its deadline) */
	int64_t ops, warmup_ops;	/* client or sender: a run sized by work (0: timed by duration_s) */
	long profile_hz;		/* 0: the monitor's default */
	int monitors[MON_N];
	struct strvec gen_argv;	/* generator options */
	double wait_s;		/* how long the generator runs */
};

static long ms(double s)
{
	return (long)llround(s * 1000);
}

/* An integer field from MIN to OPS_MAX: 0 or -1 (logged, naming it). */
static int get_count(struct json_object *o, const char *key, int64_t min, int64_t *out)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v))
		return 0;
	if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < min ||
	    json_object_get_int64(v) > OPS_MAX)
		return error("run spec: '%s' must be an integer from %lld to %lld (operations)", key,
			     (long long)min, (long long)OPS_MAX);
	*out = json_object_get_int64(v);
	return 0;
}

static int get_seconds(struct json_object *o, const char *key, double *out, int required)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v)) {
		if (required)
			return error("run spec: missing '%s'", key);
		return 0;
	}
	if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
		return error("run spec: '%s' must be a number of seconds", key);
	*out = json_object_get_double(v);
	if (!isfinite(*out) || *out < 0 || *out > 86400)
		return error("run spec: '%s' out of range: %g", key, *out);
	return 0;
}

/* Validate the spec and build the generator's options. 0 or -1 (logged, naming the field). */
static int spec_load(struct spec *s, const char *text, size_t len)
{
	struct json_object *wl, *p, *mons, *v;
	const char *w = "run spec";
	int64_t ver = 0;
	const char *port = DEFAULT_PORT;
	char *port_own = NULL;
	int ret = -1, client;

	memset(s, 0, sizeof(*s));
	strvec_init(&s->gen_argv);
	s->linger_s = DEFAULT_LINGER_S;
	if (!(s->root = json_parse(text, len, w)))
		return -1;
	if (!json_object_is_type(s->root, json_type_object))
		return error("run spec: not a JSON object");
	if (json_get_int(s->root, "spec_version", &ver, w) < 0)
		return -1;
	if (ver != RUN_SPEC_VERSION)
		return error("run spec: unknown spec_version %lld (this agent reads version %d)",
			     (long long)ver, RUN_SPEC_VERSION);
	if (json_get_str(s->root, "run_id", &s->run_id, w))
		return s->run_id ? -1 : error("run spec: missing 'run_id'");
	if (!run_id_valid(s->run_id))
		return error("run spec: bad run_id '%s' (letters, digits, '.', '_', '-'; at most 128)", s->run_id);
	if (json_get_str(s->root, "role", &s->role, w))
		return error("run spec: missing 'role'");
	if (json_get_obj(s->root, "workload", &wl, w))
		return error("run spec: missing 'workload'");
	if (json_get_str(wl, "type", &s->type, "run spec workload"))
		return error("run spec: missing 'workload.type'");
	if (json_get_str(wl, "name", &s->wl_name, "run spec workload") < 0)
		return -1;
	if (strcmp(s->type, "udp_rr") && strcmp(s->type, "udp_tx"))
		return error("run spec: unknown workload type '%s' (udp_rr or udp_tx)", s->type);
	if (!strcmp(s->type, "udp_rr") ? strcmp(s->role, "client") && strcmp(s->role, "server")
				       : strcmp(s->role, "send") && strcmp(s->role, "sink"))
		return error("run spec: role '%s' does not fit workload type '%s'", s->role, s->type);
	client = !strcmp(s->role, "client") || !strcmp(s->role, "send");
	if (json_get_str(s->root, "peer_addr", &s->peer_addr, w) < 0 ||
	    json_get_str(s->root, "bind_addr", &s->bind_addr, w) < 0 ||
	    json_get_str(s->root, "nic", &s->nic, w) < 0 ||
	    json_get_str(s->root, "perf_events", &s->perf_events, w) < 0 ||
	    json_get_str(s->root, "perf_profile_cpus", &s->profile_cpus, w) < 0 ||
	    json_get_str(s->root, "bpftrace_script", &s->bpf_script, w) < 0 ||
	    json_get_str(s->root, "results_dir", &s->results_dir, w) < 0)
		return -1;
	if (client && !s->peer_addr)
		return error("run spec: role '%s' needs 'peer_addr'", s->role);
	if (get_seconds(s->root, "duration_s", &s->duration_s, 1) ||
	    get_seconds(s->root, "warmup_s", &s->warmup_s, 0) ||
	    get_seconds(s->root, "linger_s", &s->linger_s, 0) ||
	    get_seconds(s->root, "start_wait_s", &s->start_wait_s, 0))
		return -1;
	if (client && s->start_wait_s > 0)
		return error("run spec: 'start_wait_s' is for a server or a sink, not role '%s'", s->role);
	if (get_seconds(s->root, "idle_end_s", &s->idle_end_s, 0) ||
	    get_count(s->root, "ops", 1, &s->ops) || get_count(s->root, "warmup_ops", 0, &s->warmup_ops))
		return -1;
	if (client && s->idle_end_s > 0)
		return error("run spec: 'idle_end_s' is for a server or a sink, not role '%s'", s->role);
	if (s->idle_end_s > 0 && s->idle_end_s < 0.1)
		return error("run spec: 'idle_end_s' must be at least 0.1 (got %g)", s->idle_end_s);
	if (!client && (json_object_object_get_ex(s->root, "ops", NULL) ||
			json_object_object_get_ex(s->root, "warmup_ops", NULL)))
		return error("run spec: 'ops' and 'warmup_ops' are for a client or a sender, not role '%s'", s->role);
	if (!s->ops && json_object_object_get_ex(s->root, "warmup_ops", NULL))
		return error("run spec: 'warmup_ops' needs 'ops'");
	if (s->ops && s->warmup_s > 0)
		return error("run spec: 'warmup_s' does not go with 'ops': the warm-up is 'warmup_ops' operations");
	if (s->duration_s < 1)
		return error("run spec: 'duration_s' must be at least 1 (got %g)", s->duration_s);
	if (s->profile_cpus && !cpu_list_ok(s->profile_cpus))
		return error("run spec: 'perf_profile_cpus' must be a CPU list such as 1 or 0-3,8, not '%s'",
			     s->profile_cpus);
	if (json_object_object_get_ex(s->root, "perf_profile_hz", &v)) {
		if (!json_object_is_type(v, json_type_int) ||
		    json_object_get_int64(v) < 1 || json_object_get_int64(v) > 20000)
			return error("run spec: 'perf_profile_hz' must be an integer from 1 to 20000 (samples per second per CPU)");
		s->profile_hz = (long)json_object_get_int64(v);
	}
	if (json_object_object_get_ex(s->root, "monitors", &mons)) {
		size_t i;
		if (!json_object_is_type(mons, json_type_array))
			return error("run spec: 'monitors' must be an array of names");
		for (i = 0; i < json_object_array_length(mons); i++) {
			struct json_object *e = json_object_array_get_idx(mons, i);
			int k = json_object_is_type(e, json_type_string) ?
				monitor_index(json_object_get_string(e)) : -1;
			if (k < 0)
				return error("run spec: unknown monitor '%s' (cpu, perf-stat, perf-profile, bpftrace, nic, pmu)",
					     json_object_get_string(e));
			s->monitors[k] = 1;
		}
	}

	/* the generator's options */
	if (json_object_object_get_ex(wl, "params", &p)) {
		struct json_object_iterator it, end;
		if (!json_object_is_type(p, json_type_object))
			return error("run spec: 'workload.params' must be an object");
		it = json_object_iter_begin(p);
		end = json_object_iter_end(p);
		for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
			const char *key = json_object_iter_peek_name(&it);
			const struct param_def *d = param_find(s->type, key);
			char *val = value_text(json_object_iter_peek_value(&it)), *opt, *q;
			if (!d) {
				free(val);
				error("run spec: unknown parameter '%s' for workload type '%s'", key, s->type);
				goto out;
			}
			if (!val) {
				error("run spec: parameter '%s' must be a string or a number", key);
				goto out;
			}
			if (!strcmp(key, "port")) {
				free(port_own);
				port = port_own = val;
				continue;
			}
			if (!role_in(d->roles, s->role)) {
				free(val);
				continue;	/* e.g. flows: a client parameter, the server ignores it */
			}
			opt = xasprintf("--%s", key);
			for (q = opt; *q; q++)
				if (*q == '_')
					*q = '-';
			strvec_push(&s->gen_argv, opt);
			strvec_push(&s->gen_argv, val);
			free(opt);
			free(val);
		}
	}
	strvec_push(&s->gen_argv, "--port");
	strvec_push(&s->gen_argv, port);
	if (client) {
		strvec_push(&s->gen_argv, "--addr");
		strvec_push(&s->gen_argv, s->peer_addr);
	} else if (s->bind_addr) {
		strvec_push(&s->gen_argv, "--addr");
		strvec_push(&s->gen_argv, s->bind_addr);
	}
	if (strchr(client ? s->peer_addr : s->bind_addr ? s->bind_addr : "", ':'))
		strvec_push(&s->gen_argv, "-6");
	/* servers and sinks outlive the client by linger_s */
	s->wait_s = s->warmup_s + s->duration_s + (client ? 0 : s->linger_s);
	strvec_push(&s->gen_argv, "--duration");
	if (s->ops) {	/* sized by work: duration_s is the time limit (docs/protocol.md) */
		strvec_pushf(&s->gen_argv, "%ldms", ms(s->duration_s));
		strvec_push(&s->gen_argv, "--ops");
		strvec_pushf(&s->gen_argv, "%lld", (long long)s->ops);
		strvec_push(&s->gen_argv, "--warmup-ops");
		strvec_pushf(&s->gen_argv, "%lld", (long long)s->warmup_ops);
	} else if (client || !strcmp(s->role, "sink")) {
		strvec_pushf(&s->gen_argv, "%ldms", ms(client ? s->duration_s : s->duration_s + s->linger_s));
		strvec_push(&s->gen_argv, "--warmup");
		strvec_pushf(&s->gen_argv, "%ldms", ms(s->warmup_s));
	} else {
		strvec_pushf(&s->gen_argv, "%ldms", ms(s->wait_s));
	}
	/* the server's or sink's times run from the client's first datagram,
	 * however late its agent starts (docs/protocol.md, start_wait_s) */
	if (!client && s->start_wait_s > 0) {
		strvec_push(&s->gen_argv, "--start-wait");
		strvec_pushf(&s->gen_argv, "%ldms", ms(s->start_wait_s));
		s->wait_s += s->start_wait_s;
	}
	if (s->idle_end_s > 0) {	/* the client is sized by work: end when it is done */
		strvec_push(&s->gen_argv, "--idle-end");
		strvec_pushf(&s->gen_argv, "%ldms", ms(s->idle_end_s));
	}
	ret = 0;
out:
	free(port_own);
	return ret;
}

static void spec_release(struct spec *s)
{
	json_object_put(s->root);
	s->root = NULL;
	strvec_clear(&s->gen_argv);
}

static char *results_dir_of(const char *given)
{
	return given ? xstrdup(given) : xasprintf("%s/results", agent_state_dir());
}

static void sleep_until(int64_t t_ms)
{
	int64_t d;

	while ((d = t_ms - now_ms()) > 0) {
		struct timespec ts = { d / 1000, (d % 1000) * 1000000L };
		nanosleep(&ts, NULL);
	}
}

static void add_series(struct json_object *result, const char *metric, const char *unit,
		       struct json_object *doc_series, const char *key)
{
	struct json_object *series = NULL, *s, *pts;
	size_t i, n;

	if (!doc_series || !json_object_is_type(doc_series, json_type_array))
		return;
	if (!json_object_object_get_ex(result, "series", &series)) {
		series = json_object_new_array();
		json_object_object_add(result, "series", series);
	}
	s = json_object_new_object();
	pts = json_object_new_array();
	n = json_object_array_length(doc_series);
	for (i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(doc_series, i), *t, *v, *pt;
		if (!json_object_object_get_ex(e, "t", &t) || !json_object_object_get_ex(e, key, &v))
			continue;
		pt = json_object_new_array();
		json_object_array_add(pt, json_object_new_double(json_object_get_double(t)));
		json_object_array_add(pt, json_object_new_double(json_object_get_double(v)));
		json_object_array_add(pts, pt);
	}
	json_object_object_add(s, "metric", json_object_new_string(metric));
	json_object_object_add(s, "unit", json_object_new_string(unit));
	json_object_object_add(s, "points", pts);
	json_object_array_add(series, s);
}

/* A number of the generator's document: 1 found, 0 not. */
static int doc_num(struct json_object *o, const char *key, double *out)
{
	struct json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) ||
	    !(json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)))
		return 0;
	*out = json_object_get_double(v);
	return 1;
}

static void metric_from(struct json_object *res, struct json_object *doc, const char *key,
			const char *name, const char *unit, const char *better)
{
	double v;

	if (doc_num(doc, key, &v))
		result_add_metric(res, name, v, unit, better);
}

/*
 * Metrics, series and histograms from the generator's document. Returns
 * the number of operations in the measured window (for cpu_us_per_op), or
 * -1 when the window's count must come from the UDP counters (servers and
 * sinks run longer than the window).
 */
static double workload_metrics(struct json_object *res, const struct spec *s, struct json_object *doc)
{
	struct json_object *lat = NULL, *hist = NULL, *series = NULL;
	double ops = 0;

	json_object_object_get_ex(doc, "series", &series);
	if (!strcmp(s->role, "client")) {
		metric_from(res, doc, "tps", "tps", "1/s", "higher");
		metric_from(res, doc, "transactions", "transactions", "", "none");
		if (json_object_object_get_ex(doc, "latency_us", &lat)) {
			metric_from(res, lat, "mean", "latency_mean_us", "us", "lower");
			metric_from(res, lat, "p50", "latency_p50_us", "us", "lower");
			metric_from(res, lat, "p90", "latency_p90_us", "us", "lower");
			metric_from(res, lat, "p99", "latency_p99_us", "us", "lower");
			metric_from(res, lat, "p999", "latency_p999_us", "us", "lower");
		}
		metric_from(res, doc, "losses", "losses", "", "lower");
		metric_from(res, doc, "timeouts", "timeouts", "", "lower");
		add_series(res, "tps", "1/s", series, "tps");
		doc_num(doc, "transactions", &ops);
		if (json_object_object_get_ex(doc, "histogram", &hist)) {
			struct json_object *h = json_object_new_object(), *b, *hs = NULL;
			const char *name = "rtt_us", *unit = "us";
			struct json_object *v;
			if (json_object_object_get_ex(hist, "name", &v))
				name = json_object_get_string(v);
			if (json_object_object_get_ex(hist, "unit", &v))
				unit = json_object_get_string(v);
			json_object_object_add(h, "name", json_object_new_string(name));
			json_object_object_add(h, "unit", json_object_new_string(unit));
			json_object_object_add(h, "source", json_object_new_string("udp_rr"));
			json_object_object_add(h, "buckets", json_object_object_get_ex(hist, "buckets", &b) ?
					       json_object_get(b) : json_object_new_array());
			if (!json_object_object_get_ex(res, "histograms", &hs)) {
				hs = json_object_new_array();
				json_object_object_add(res, "histograms", hs);
			}
			json_object_array_add(hs, h);
		}
	} else if (!strcmp(s->role, "server")) {
		double rx, dur;
		metric_from(res, doc, "echoed", "echoed", "", "none");
		if (doc_num(doc, "received", &rx) && doc_num(doc, "duration_s", &dur) && dur > 0)
			result_add_metric(res, "rx_pps", rx / dur, "1/s", "higher");
		ops = -1;
	} else if (!strcmp(s->role, "send")) {
		metric_from(res, doc, "pps", "tx_pps", "1/s", "higher");
		metric_from(res, doc, "bps", "tx_bps", "bit/s", "higher");
		metric_from(res, doc, "packets", "packets", "", "none");
		add_series(res, "tx_pps", "1/s", series, "pps");
		doc_num(doc, "packets", &ops);
	} else {
		metric_from(res, doc, "pps", "rx_pps", "1/s", "higher");
		metric_from(res, doc, "bps", "rx_bps", "bit/s", "higher");
		metric_from(res, doc, "packets", "packets", "", "none");
		add_series(res, "rx_pps", "1/s", series, "pps");
		ops = -1;
	}
	return ops;
}

/*
 * Wait until the generator of a server or sink writes its --ready-fd line
 * (docs/workloads.md), at most READY_WAIT_MS, and pass it on as the line
 * "klab-agent: ready" on stderr: whoever runs the server role (the
 * orchestrator over SSH, a test) starts the client once it reads that line
 * (docs/protocol.md section 2). A generator that fails before it is ready
 * closes the pipe by exiting: no line then, and its error is reported when
 * it is reaped.
 */
/*
 * Pass the generator's ready line on. -1 when the line could not be written
 * because nobody reads our stderr any more (EPIPE): the orchestrator gave up
 * waiting and went away, so nobody will use this server, and it must not
 * hold its port for the rest of its run (a retry would find it in use).
 */
static int pass_ready(int fd)
{
	char b[16];
	size_t got = 0;
	int64_t end = now_ms() + READY_WAIT_MS;

	while (got < sizeof(b) && !memchr(b, '\n', got)) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		int64_t left = end - now_ms();
		ssize_t r;

		if (left <= 0) {
			warn("the generator did not say it was ready within %d s", READY_WAIT_MS / 1000);
			return 0;
		}
		if (poll(&pfd, 1, (int)left) < 0 && errno != EINTR)
			return 0;
		if (!pfd.revents)
			continue;
		r = read(fd, b + got, sizeof(b) - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return 0;
		got += (size_t)r;
	}
	if (got == 6 && !memcmp(b, "ready\n", 6)) {
		static const char line[] = "klab-agent: ready\n";

		fflush(stderr);
		if (write(STDERR_FILENO, line, sizeof(line) - 1) < 0 && errno == EPIPE)
			return -1;
	}
	return 0;
}

/*
 * The window lines of a run sized by work: the generator writes "start"
 * and "end" to its --window-fd as its window starts and ends
 * (docs/workloads.md), and the monitors start and stop on them, so that the
 * CPU time (and under icount the instructions) of the window covers the
 * operations the generator counted in it.
 */
enum { WIN_NONE, WIN_START, WIN_END, WIN_EOF };

struct win_reader {
	int fd;
	char b[64];
	size_t got;
	int ack;	/* the generator's --window-ack-fd, our end (-1: none) */
};

/*
 * The window's start is acknowledged: the monitors took their snapshots,
 * and the generator, which waited with its other threads held, times its
 * window from now on (docs/observation.md, "The cpu monitor's own cost").
 * A generator gone (EPIPE) is no error here: its exit says what happened.
 */
static void window_ack(struct win_reader *r)
{
	ssize_t n;

	if (r->ack < 0)
		return;
	do
		n = write(r->ack, "k", 1);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		debug("cannot acknowledge the window's start to the generator: %s", strerror(errno));
}

/* The next line until UNTIL (now_ms()): WIN_START, WIN_END, WIN_NONE (the time came), WIN_EOF (the generator ended). */
static int window_line(struct win_reader *r, int64_t until)
{
	for (;;) {
		char *nl = memchr(r->b, '\n', r->got);
		struct pollfd pfd = { r->fd, POLLIN, 0 };
		int64_t left;
		ssize_t n;

		if (nl) {
			size_t len = (size_t)(nl - r->b) + 1;
			int what = len == 6 && !memcmp(r->b, "start\n", 6) ? WIN_START :
				   len == 4 && !memcmp(r->b, "end\n", 4) ? WIN_END : WIN_NONE;

			memmove(r->b, nl + 1, r->got - len);
			r->got -= len;
			if (what != WIN_NONE)
				return what;
			continue;	/* not a line of ours */
		}
		if (r->got == sizeof(r->b))
			r->got = 0;
		left = until - now_ms();
		if (left <= 0)
			return WIN_NONE;
		if (poll(&pfd, 1, (int)left) < 0 && errno != EINTR)
			return WIN_EOF;
		if (!pfd.revents)
			continue;
		n = read(r->fd, r->b + r->got, sizeof(r->b) - r->got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return WIN_EOF;
		r->got += (size_t)n;
	}
}

/*
 * The window's edges as the generator timed them (its document's
 * "window_ack", when the start was acknowledged), for the cpu monitor's
 * busy time over the same span (monitor.h).
 */
static void window_clocks(struct json_object *doc, struct mon_ctx *m)
{
	struct json_object *a, *v;
	const char *st;
	int64_t x;

	if (!json_object_object_get_ex(doc, "window_ack", &a) || !json_object_object_get_ex(a, "status", &v) ||
	    !(st = json_object_get_string(v)) || strcmp(st, "acked"))
		return;
	if (json_object_object_get_ex(a, "start_ns", &v) && (x = json_object_get_int64(v)) > 0)
		m->gen_start_ns = (uint64_t)x;
	if (json_object_object_get_ex(a, "end_ns", &v) && (x = json_object_get_int64(v)) > 0)
		m->gen_end_ns = (uint64_t)x;
}

/*
 * The measured window of a run sized by work: from the generator's "start"
 * to its "end" (or its exit, or its time limit and WINDOW_SLACK_MS), with
 * the cpu monitor's tick every second and the profile over the whole window.
 */
static void window_of_work(struct mon_ctx *m, struct cm_ctx *cm, const struct spec *s, int64_t t0,
			   struct win_reader *wr, int stopping)
{
	int64_t limit = t0 + ms(s->duration_s) + WINDOW_SLACK_MS, next_tick;
	int w = stopping ? WIN_EOF : window_line(wr, limit);

	cm_window_start(cm);
	mon_window_start(m);
	if (w == WIN_START && m->want[MON_PERF_PROFILE])
		mon_profile_start(m);
	mon_window_started(m);
	if (w == WIN_START)
		window_ack(wr);
	next_tick = m->win_start_ms + 1000;
	while (w == WIN_START) {
		int e = window_line(wr, next_tick < limit ? next_tick : limit);
		int64_t now = now_ms();

		if (e == WIN_END || e == WIN_EOF || now >= limit)
			break;
		if (now >= next_tick) {
			mon_tick(m);
			next_tick += 1000;
		}
	}
	mon_window_end(m);
	cm_window_end(cm);
}

/*
 * The measured window of a timed run: warmup_s after the start for
 * duration_s, with the cpu monitor's tick every second and the profile in
 * the middle. A server or sink that ends by itself (idle_end_s) and a
 * generator already stopping (STOPPING) do not wait.
 */
static void window_timed(struct mon_ctx *m, struct cm_ctx *cm, const struct spec *s, int64_t t0, int stopping)
{
	int64_t planned_end = t0 + (int64_t)llround((s->warmup_s + s->duration_s) * 1000), profile_at, next_tick;

	if (stopping || s->idle_end_s > 0)
		planned_end = t0;
	profile_at = t0 + (int64_t)llround((s->warmup_s + (s->duration_s - m->profile_s) / 2) * 1000);
	if (planned_end > t0)
		sleep_until(t0 + (int64_t)llround(s->warmup_s * 1000));
	cm_window_start(cm);
	mon_window_start(m);
	mon_window_started(m);
	next_tick = m->win_start_ms + 1000;
	for (;;) {
		int64_t now = now_ms(), target = planned_end;
		if (now >= planned_end)
			break;
		if (next_tick < planned_end - 500 && next_tick < target)
			target = next_tick;
		if (!m->perf_rec_on && m->want[MON_PERF_PROFILE] && profile_at < target && !m->status[MON_PERF_PROFILE])
			target = profile_at;
		sleep_until(target);
		now = now_ms();
		if (!m->perf_rec_on && m->want[MON_PERF_PROFILE] && now >= profile_at &&
		    !m->status[MON_PERF_PROFILE])
			mon_profile_start(m);
		if (now >= next_tick && next_tick < planned_end - 500) {
			mon_tick(m);
			next_tick += 1000;
		}
	}
	mon_window_end(m);
	cm_window_end(cm);
}

static char *first_error_line(const struct buf *b)
{
	const char *p = b->buf, *e;

	while (*p == '\n')
		p++;
	e = strchr(p, '\n');
	return *p ? (e ? xstrndup(p, e - p) : xstrdup(p)) : xstrdup("no message on stderr");
}

/* A pipe whose end CHILD (0 or 1) the generator inherits, named to it as OPTION N: 0, or -1 logged naming WHAT. */
static int gen_pipe(int p[2], int child, struct strvec *argv, const char *option, const char *what)
{
	if (pipe2(p, O_CLOEXEC) || fcntl(p[child], F_SETFD, 0))
		return error_errno("cannot make the pipe of %s", what);
	strvec_push(argv, option);
	strvec_pushf(argv, "%d", p[child]);
	return 0;
}

int cmd_run(int argc, char **argv)
{
	struct spec s;
	struct buf in = BUF_INIT, out = BUF_INIT, sib = BUF_INIT;
	struct mon_ctx m;
	struct cm_ctx cm = { 0 };
	struct run_cmd gen = RUN_CMD_INIT;
	struct strvec gargv = STRVEC_INIT;
	struct json_object *res = NULL, *si, *k, *timing, *doc = NULL, *v;
	char *dir = NULL, *path = NULL, *workdir = NULL, *lockpath = NULL, *err = NULL;
	char digest[65], host[256] = "";
	struct win_reader wr = { -1, "", 0, -1 };
	double start, end, ops = 0;
	int64_t t0;
	int rc = 1, gen_started = 0, mon_inited = 0, serves, ready[2] = { -1, -1 }, win[2] = { -1, -1 };
	int ack[2] = { -1, -1 }, lockfd = -1;
	size_t i;

	if (argc != 1) {
		fprintf(stderr, "usage: klab-agent run < SPEC.json\n");
		return 2;
	}
	/*
	 * A dropped SSH connection must not lose the run: it goes on to the
	 * end and its result is kept for `fetch`. The generator and the tools
	 * inherit the ignored SIGHUP.
	 */
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	buf_set_cap(&in, SPEC_MAX);
	if (buf_read_fd(&in, 0) || in.truncated) {
		error("cannot read the run spec from stdin%s", in.truncated ? ": larger than 1 MiB" : "");
		goto out_nospec;
	}
	if (spec_load(&s, in.buf, in.len))
		goto out;
	dir = results_dir_of(s.results_dir);
	path = xasprintf("%s/%s.json", dir, s.run_id);
	workdir = xasprintf("%s/.work-%s", dir, s.run_id);
	if (mkdir_p(dir))
		goto out;
	if (file_exists(path)) {
		error("run '%s' already has a result in '%s': fetch or ack it first", s.run_id, dir);
		goto out;
	}
	/*
	 * The run lock, WORKDIR/lock, is held to the end (the fd is
	 * close-on-exec: the tools do not hold it). An earlier run of this id
	 * that still goes on (its orchestrator died and a resumed job asks
	 * again) is not disturbed: it keeps its folder and this run is refused.
	 */
	lockpath = xasprintf("%s/lock", workdir);
	if (lock_held(lockpath) == 1) {
		error("run '%s' is being run now by an earlier call: fetch its result when it ends", s.run_id);
		rc = AGENT_EXIT_RUNNING;
		goto out_keep;
	}
	if (file_exists(workdir) && remove_tree(workdir))
		goto out;
	if (mkdir_p(workdir))
		goto out;
	lockfd = lock_file(lockpath, 0);
	if (lockfd == LOCK_FILE_BUSY) {
		error("run '%s' is being run now by another call", s.run_id);
		rc = AGENT_EXIT_RUNNING;
		goto out_keep;
	}
	if (lockfd < 0)
		goto out;

	/* the document's head */
	res = json_object_new_object();
	si = sysinfo_collect(1);
	json_to_buf(&sib, si, 0);
	sha256_hex(sib.buf, sib.len, digest);
	gethostname(host, sizeof(host) - 1);
	json_object_object_add(res, "schema_version", json_object_new_int(RESULT_SCHEMA_VERSION));
	json_object_object_add(res, "agent_version", json_object_new_string(KLAB_VERSION));
	json_object_object_add(res, "run_id", json_object_new_string(s.run_id));
	json_object_object_add(res, "host", json_object_new_string(host));
	json_object_object_add(res, "role", json_object_new_string(s.role));
	k = json_object_new_object();
	if (json_object_object_get_ex(si, "kernel", &v)) {
		struct json_object *x;
		if (json_object_object_get_ex(v, "release", &x))
			json_object_object_add(k, "release", json_object_get(x));
		if (json_object_object_get_ex(v, "build_id", &x))
			json_object_object_add(k, "build_id", json_object_get(x));
		if (json_object_object_get_ex(v, "boot_id", &x))
			json_object_object_add(k, "boot_id", json_object_get(x));
	}
	json_object_put(si);
	json_object_object_add(res, "kernel", k);
	json_object_object_add(res, "sysinfo_digest", json_object_new_string(digest));
	json_object_object_add(res, "spec", json_object_get(s.root));

	mon_init(&m);
	mon_inited = 1;
	for (i = 0; i < MON_N; i++)
		m.want[i] = s.monitors[i];
	m.nic = s.nic;
	if (s.perf_events)
		m.perf_events = s.perf_events;
	if (s.profile_hz)
		m.profile_hz = s.profile_hz;
	m.profile_cpus = s.profile_cpus;
	m.bpf_script = s.bpf_script;
	m.workdir = workdir;
	m.window_s = s.duration_s;
	m.open_window = s.ops > 0;
	m.bpf_total_s = s.warmup_s + s.duration_s;
	m.profile_s = s.ops || s.duration_s < 2 ? s.duration_s : s.duration_s / 2;

	strvec_push(&gargv, agent_self_exe());
	strvec_push(&gargv, !strcmp(s.type, "udp_rr") ? "udp-rr" : "udp-tx");
	strvec_push(&gargv, s.role);
	strvec_pushv(&gargv, (const char *const *)s.gen_argv.v);
	/* a server or sink says when it is bound, through a pipe only it inherits */
	serves = !strcmp(s.role, "server") || !strcmp(s.role, "sink");
	if (serves) {
		if (gen_pipe(ready, 1, &gargv, "--ready-fd", "the generator's ready line"))
			goto out;
	}
	/* a run sized by work says when its window starts and ends */
	if (s.ops) {
		if (gen_pipe(win, 1, &gargv, "--window-fd", "the generator's window lines"))
			goto out;
		wr.fd = win[0];
		/* and waits at its start until the monitors took their snapshots (window_ack()) */
		if (gen_pipe(ack, 0, &gargv, "--window-ack-fd", "the window's acknowledgement"))
			goto out;
		wr.ack = ack[1];
	}
	if (log_get_level() >= LOG_DEBUG) {
		char *line = strvec_join(&gargv, " ");
		debug("generator: %s", line);
		free(line);
	}

	mon_start_early(&m);	/* bpftrace: attached when it returns (monitor.h) */
	start = now_wall();
	t0 = now_ms();
	gen.argv = (const char *const *)gargv.v;
	gen.timeout_ms = (long)(s.wait_s * 1000) + 30000;
	gen.out_cap = 16 << 20;
	if (run_start(&gen)) {
		err = xstrdup("cannot start the generator");
	} else {
		gen_started = 1;
	}
	if (win[1] >= 0) {
		close(win[1]);	/* only the generator holds the write end now */
		win[1] = -1;
	}
	if (ack[0] >= 0) {
		close(ack[0]);	/* and the read end of the acknowledgement */
		ack[0] = -1;
	}
	if (serves) {
		close(ready[1]);	/* only the generator holds the write end now */
		ready[1] = -1;
		if (gen_started && pass_ready(ready[0]) < 0) {
			err = xstrdup("stopped: nobody reads the ready line (the orchestrator went away before the server was ready)");
			run_signal(&gen, SIGTERM);
		}
		close(ready[0]);
		ready[0] = -1;
	}
	/* err: the generator is stopping, do not wait out the run */
	if (s.ops) {
		window_of_work(&m, &cm, &s, t0, &wr, err != NULL);
		/* a generator still waiting for the acknowledgement (no "start" seen in time) reads end-of-file */
		close(ack[1]);
		ack[1] = wr.ack = -1;
	} else
		window_timed(&m, &cm, &s, t0, err != NULL);
	if (gen_started && err) {
		run_finish(&gen);
	} else if (gen_started) {
		if (run_finish(&gen)) {
			err = xstrdup("lost the generator");
		} else if (gen.status) {
			char *l = first_error_line(&gen.err);
			err = xasprintf("generator failed (%s): %s", run_describe(&gen), l);
			free(l);
		} else if (!(doc = json_parse(gen.out.buf, gen.out.len, "generator output"))) {
			err = xstrdup("generator printed no valid JSON document");
		}
	}
	end = now_wall();
	if (doc) {
		ops = workload_metrics(res, &s, doc);
		window_clocks(doc, &m);
	}
	cm_finish(&cm, res, ops);
	mon_finish(&m, res, ops);

	timing = json_object_new_object();
	json_object_object_add(timing, "start", json_object_new_double(start));
	json_object_object_add(timing, "end", json_object_new_double(end));
	json_object_object_add(timing, "warmup_s", json_object_new_double(s.warmup_s));
	/* a run sized by work: its window as it was, not the time limit */
	json_object_object_add(timing, "duration_s", json_object_new_double(s.ops ?
			       (m.win_end_ms - m.win_start_ms) / 1000.0 : s.duration_s));
	json_object_object_add(timing, "window_s",
			       json_object_new_double((m.win_end_ms - m.win_start_ms) / 1000.0));
	if (s.ops) {
		json_object_object_add(timing, "ops", json_object_new_int64(s.ops));
		json_object_object_add(timing, "warmup_ops", json_object_new_int64(s.warmup_ops));
	}
	json_object_object_add(res, "timing", timing);
	json_object_object_add(res, "status", json_object_new_string(err ? "failed" : "ok"));
	if (err)
		json_object_object_add(res, "error", json_object_new_string(err));
	json_object_object_add(res, "workload", doc ? doc : NULL);
	doc = NULL;

	json_to_buf(&out, res, 0);
	buf_addch(&out, '\n');
	if (write_file_atomic(path, out.buf, out.len, 0644))
		goto out;
	if (write_all(1, out.buf, out.len))
		error_errno("cannot write the result to stdout (kept in '%s')", path);
	if (err)
		error("run '%s' failed: %s", s.run_id, err);
	rc = err ? 1 : 0;
out:
	for (i = 0; i < 2; i++) {
		if (ready[i] >= 0)
			close(ready[i]);
		if (win[i] >= 0)
			close(win[i]);
		if (ack[i] >= 0)
			close(ack[i]);
	}
	if (mon_inited)
		mon_release(&m);
	if (workdir && file_exists(workdir))
		remove_tree(workdir);
out_keep:
	if (lockfd >= 0)
		close(lockfd);
	free(lockpath);
	spec_release(&s);
out_nospec:
	run_release(&gen);
	strvec_clear(&gargv);
	json_object_put(res);
	json_object_put(doc);
	buf_release(&in);
	buf_release(&out);
	buf_release(&sib);
	free(dir);
	free(path);
	free(workdir);
	free(err);
	return rc;
}

/* --- fetch, ack, list --------------------------------------------------------------- */

/* Parse "[--results-dir D] [RUN_ID]": 0, or 2 on a usage error. */
static int kept_args(int argc, char **argv, int want_id, char **dir, const char **id)
{
	const char *d = NULL;
	int i = 1;

	*id = NULL;
	if (i + 1 < argc && !strcmp(argv[i], "--results-dir")) {
		d = argv[i + 1];
		i += 2;
	}
	if (want_id) {
		if (i + 1 != argc) {
			fprintf(stderr, "usage: klab-agent %s [--results-dir DIR] RUN_ID\n", argv[0]);
			return 2;
		}
		*id = argv[i];
	} else if (i != argc) {
		fprintf(stderr, "usage: klab-agent %s [--results-dir DIR]\n", argv[0]);
		return 2;
	}
	*dir = results_dir_of(d);
	return 0;
}

int cmd_fetch(int argc, char **argv)
{
	char *dir, *path, *lockpath;
	const char *id;
	struct buf b = BUF_INIT;
	int rc = 1;

	if (kept_args(argc, argv, 1, &dir, &id))
		return 2;
	if (!run_id_valid(id)) {
		error("bad run id '%s'", id);
		free(dir);
		return 2;
	}
	path = xasprintf("%s/%s.json", dir, id);
	lockpath = xasprintf("%s/.work-%s/lock", dir, id);
	if (!file_exists(path) && lock_held(lockpath) == 1) {
		error("run '%s' is still running: no result yet", id);
		rc = AGENT_EXIT_RUNNING;
	} else if (!file_exists(path)) {
		error("no kept result for run '%s' in '%s' (never run, or already acked)", id, dir);
	} else if (!buf_read_file(&b, path)) {
		if (!write_all(1, b.buf, b.len))
			rc = 0;
	}
	buf_release(&b);
	free(lockpath);
	free(path);
	free(dir);
	return rc;
}

int cmd_ack(int argc, char **argv)
{
	char *dir, *path;
	const char *id;
	int rc = 0;

	if (kept_args(argc, argv, 1, &dir, &id))
		return 2;
	if (!run_id_valid(id)) {
		error("bad run id '%s'", id);
		free(dir);
		return 2;
	}
	path = xasprintf("%s/%s.json", dir, id);
	if (unlink(path)) {
		if (errno == ENOENT) {
			info("no kept result for run '%s' (already acked)", id);
		} else {
			error_errno("cannot remove '%s'", path);
			rc = 1;
		}
	}
	free(path);
	free(dir);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int cmd_list(int argc, char **argv)
{
	char *dir;
	const char *id;
	DIR *d;
	struct dirent *e;
	struct strvec ids = STRVEC_INIT;
	size_t i;

	if (kept_args(argc, argv, 0, &dir, &id))
		return 2;
	d = opendir(dir);
	if (!d) {
		int rc = errno == ENOENT ? 0 : 1;
		if (rc)
			error_errno("cannot read '%s'", dir);
		free(dir);
		return rc;
	}
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		char *id2;
		if (n < 6 || strcmp(e->d_name + n - 5, ".json"))
			continue;
		id2 = xstrndup(e->d_name, n - 5);
		if (run_id_valid(id2))
			strvec_push(&ids, id2);
		free(id2);
	}
	closedir(d);
	qsort(ids.v, ids.n, sizeof(*ids.v), cmp_str);
	for (i = 0; i < ids.n; i++)
		printf("%s\n", ids.v[i]);
	strvec_clear(&ids);
	free(dir);
	return 0;
}
