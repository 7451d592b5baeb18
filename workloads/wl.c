/* wl.c: option parsing, addresses, CPU pinning, run control and JSON output for the generators. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include "log.h"
#include "util.h"
#include "wl.h"

volatile sig_atomic_t wl_stop;

static const struct wl_opt *find_opt(const struct wl_opt *opts, const char *name, size_t len)
{
	for (; opts->name; opts++)
		if (strlen(opts->name) == len && !strncmp(opts->name, name, len))
			return opts;
	return NULL;
}

int wl_parse_opts(int argc, char **argv, int first, const struct wl_opt *opts)
{
	int i;

	for (i = first; i < argc; i++) {
		const char *a = argv[i], *name, *eq;
		const struct wl_opt *o;
		size_t len;

		if (a[0] == '-' && a[1] == '-' && a[2]) {
			name = a + 2;
			eq = strchr(name, '=');
			len = eq ? (size_t)(eq - name) : strlen(name);
		} else if (a[0] == '-' && a[1] && !a[2]) {
			name = a + 1;
			eq = NULL;
			len = 1;
		} else if (a[0] == '-' && a[1]) {
			return error("unknown option '%s'", a);
		} else {
			return error("unexpected argument '%s'", a);
		}
		o = find_opt(opts, name, len);
		if (!o || (len == 1) != (a[1] != '-'))
			return error("unknown option '%s'", a);
		if (!o->has_arg) {
			if (eq)
				return error("option '%.*s' takes no value", (int)(eq - a), a);
			*o->value = "1";
		} else if (eq) {
			*o->value = eq + 1;
		} else {
			if (i + 1 >= argc)
				return error("option '%s' needs a value", a);
			*o->value = argv[++i];
		}
	}
	return 0;
}

int wl_gen_role(int argc, char **argv, const char *a, const char *b)
{
	const char *role = argc > 1 ? argv[1] : NULL;

	if (!role)
		return error("missing role: '%s' or '%s'", a, b);
	if (!strcmp(role, a))
		return 0;
	if (!strcmp(role, b))
		return 1;
	return error("unknown role '%s': expected '%s' or '%s'", role, a, b);
}

int wl_gen_only(const struct wl_opt *opts, const char *const *names, const char *role)
{
	for (; *names; names++) {
		const struct wl_opt *o = find_opt(opts, *names, strlen(*names));

		if (o && *o->value)
			return error("option '--%s' is for the %s only", *names, role);
	}
	return 0;
}

int wl_gen_times(struct wl_gen *g)
{
	g->v6 = g->arg.v6 != NULL;
	g->threads = 1;
	if (!g->arg.port)
		return error("missing --port");
	if (wl_arg_long("port", g->arg.port, g->listen ? 0 : 1, 65535, &g->port))
		return -1;
	if (!g->arg.duration)
		return error("missing --duration");
	if (wl_arg_duration("duration", g->arg.duration, 100, 86400000L, &g->duration_ms))
		return -1;
	if (g->arg.warmup && wl_arg_duration("warmup", g->arg.warmup, 0, 3600000L, &g->warmup_ms))
		return -1;
	if (g->arg.threads && wl_arg_long("threads", g->arg.threads, 1, 1024, &g->threads))
		return -1;
	return 0;
}

int wl_gen_listen(struct wl_gen *g)
{
	if (g->arg.ready_fd && wl_arg_ready_fd("ready-fd", g->arg.ready_fd, &g->ready_fd))
		return -1;
	if (g->arg.start_wait &&
	    wl_arg_duration("start-wait", g->arg.start_wait, 0, 3600000L, &g->start_wait_ms))
		return -1;
	return 0;
}

int wl_gen_where(struct wl_gen *g)
{
	if (g->cpus_s && wl_arg_cpus("cpus", g->cpus_s, &g->cpus))
		return -1;
	return wl_arg_addr("addr", g->addr_s, g->v6, (int)g->port, &g->addr, &g->addrlen);
}

struct json_object *wl_gen_params_json(const struct wl_gen *g)
{
	struct json_object *o = json_object_new_object();

	if (g->addr_s)
		json_object_object_add(o, "addr", json_object_new_string(g->addr_s));
	json_object_object_add(o, "port", wl_jint((uint64_t)g->port));
	json_object_object_add(o, "ipv6", json_object_new_boolean(g->v6));
	json_object_object_add(o, "threads", wl_jint((uint64_t)g->threads));
	return o;
}

int wl_gen_work(struct wl_gen *g, long nsock, long unit)
{
	const struct {
		const char *name, *val;
		int listen;	/* 1: the listening role's only */
	} only[] = {
		{ "ops", g->arg.ops, 0 }, { "warmup-ops", g->arg.warmup_ops, 0 }, { "seed", g->arg.seed, 0 },
		{ "src-ports", g->arg.src_ports, 0 }, { "idle-end", g->arg.idle_end, 1 },
		{ "window-fd", g->arg.window_fd, 0 }, { "window-ack-fd", g->arg.window_ack_fd, 0 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(only); i++)
		if (only[i].val && only[i].listen != g->listen)
			return error("option '--%s' is for the %s only", only[i].name,
				     only[i].listen ? "listening role (server, sink)" : "sending role (client, send)");
	if (g->arg.ops) {
		if (wl_arg_long("ops", g->arg.ops, 1, 1000000000000L, &g->ops))
			return -1;
		if (g->arg.warmup)
			return error("option '--warmup' does not go with '--ops': size the warm-up by work with '--warmup-ops'");
		if (g->ops % unit)
			return error("invalid --ops '%s': expected a multiple of %ld (the packets of one send)",
				     g->arg.ops, unit);
	}
	if (g->arg.warmup_ops) {
		if (!g->arg.ops)
			return error("option '--warmup-ops' needs '--ops'");
		if (wl_arg_long("warmup-ops", g->arg.warmup_ops, 0, 1000000000000L, &g->warmup_ops))
			return -1;
		if (g->warmup_ops % unit)
			return error("invalid --warmup-ops '%s': expected a multiple of %ld (the packets of one send)",
				     g->arg.warmup_ops, unit);
	}
	g->src_lo = WL_SRC_PORTS_LO;
	g->src_hi = WL_SRC_PORTS_HI;
	if (g->arg.seed) {
		long v;

		if (wl_arg_long("seed", g->arg.seed, 0, 4294967295L, &v))
			return -1;
		g->seed = (unsigned long)v;
		g->seeded = 1;
	}
	if (g->arg.src_ports) {
		char *end;
		long lo, hi;

		if (!g->arg.seed)
			return error("option '--src-ports' needs '--seed'");
		errno = 0;
		lo = strtol(g->arg.src_ports, &end, 10);
		if (end == g->arg.src_ports || *end != '-' || errno)
			goto bad_range;
		hi = strtol(end + 1, &end, 10);
		if (*end || errno || lo < 1 || hi > 65535 || hi < lo)
			goto bad_range;
		g->src_lo = lo;
		g->src_hi = hi;
	}
	if (g->seeded) {
		long span = g->src_hi - g->src_lo + 1;

		if (nsock > span)
			return error("invalid --src-ports '%ld-%ld': %ld sockets need %ld source ports, the range has %ld",
				     g->src_lo, g->src_hi, nsock, nsock, span);
	}
	if (g->arg.idle_end &&
	    wl_arg_duration("idle-end", g->arg.idle_end, 100, 3600000L, &g->idle_end_ms))
		return -1;
	if (g->arg.window_fd) {
		if (!g->arg.ops)
			return error("option '--window-fd' needs '--ops' (a timed run's edges are known ahead)");
		if (wl_arg_ready_fd("window-fd", g->arg.window_fd, &g->window_fd))
			return -1;
	}
	if (g->arg.window_ack_fd) {
		if (!g->arg.window_fd)
			return error("option '--window-ack-fd' needs '--window-fd' (it acknowledges the window's 'start' line)");
		if (wl_arg_ready_fd("window-ack-fd", g->arg.window_ack_fd, &g->window_ack_fd))
			return -1;
		if (g->window_ack_fd == g->window_fd)
			return error("invalid --window-ack-fd '%s': it is the --window-fd descriptor (one writes, the other reads)",
				     g->arg.window_ack_fd);
	}
	return 0;
bad_range:
	return error("invalid --src-ports '%s': expected a port range LO-HI within 1-65535", g->arg.src_ports);
}

void wl_window_mark(const struct wl_gen *g, const char *what)
{
	static int failed;
	char line[16];
	int n = snprintf(line, sizeof(line), "%s\n", what);
	ssize_t r;

	if (g->window_fd <= 0)
		return;
	do
		r = write(g->window_fd, line, (size_t)n);
	while (r < 0 && errno == EINTR);
	if (r < 0 && !__atomic_exchange_n(&failed, 1, __ATOMIC_RELAXED))
		error_errno("cannot write the window's '%s' line to descriptor %d", what, g->window_fd);
}

/* The acknowledged start (wl_window_start()): one per run, so one per process. */
static struct {
	int pending;		/* a thread waits for the acknowledgement: the others hold (a futex word) */
	const char *status;	/* NULL: the window never started */
	uint64_t wait_ns;
} wl_edge;

static void futex_call(int *word, int op, int val)
{
	syscall(SYS_futex, word, op, val, NULL, NULL, 0);
}

void wl_window_hold(void)
{
	while (__atomic_load_n(&wl_edge.pending, __ATOMIC_ACQUIRE) && !wl_stop)
		futex_call(&wl_edge.pending, FUTEX_WAIT_PRIVATE, 1);	/* returns at once if no longer 1 */
}

/* Wait for one byte on FD, at most WL_WINDOW_ACK_MS: the outcome, as "window_ack" says it. */
static const char *window_ack_wait(int fd)
{
	uint64_t until = wl_now_ns() + (uint64_t)WL_WINDOW_ACK_MS * 1000000u;

	for (;;) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		uint64_t now = wl_now_ns();
		char c;
		ssize_t n;
		int r;

		if (wl_stop)
			return "stopped";
		if (now >= until)
			return "timed out";
		r = poll(&pfd, 1, (int)((until - now + 999999u) / 1000000u));
		if (r < 0 && errno != EINTR)
			return "closed";
		if (r <= 0)
			continue;
		n = read(fd, &c, 1);
		if (n == 1)
			return "acked";
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		return "closed";
	}
}

uint64_t wl_window_start(const struct wl_gen *g, uint64_t now)
{
	uint64_t t;

	if (g->window_ack_fd <= 0) {
		wl_window_mark(g, "start");
		return now;
	}
	__atomic_store_n(&wl_edge.pending, 1, __ATOMIC_RELEASE);
	wl_window_mark(g, "start");
	wl_edge.status = window_ack_wait(g->window_ack_fd);
	t = wl_now_ns();
	wl_edge.wait_ns = t - now;
	__atomic_store_n(&wl_edge.pending, 0, __ATOMIC_RELEASE);
	futex_call(&wl_edge.pending, FUTEX_WAKE_PRIVATE, INT32_MAX);
	if (strcmp(wl_edge.status, "acked"))
		error("no acknowledgement of the window's start on descriptor %d (%s after %.3f s): "
		      "the window starts without it", g->window_ack_fd, wl_edge.status, (double)(t - now) / 1e9);
	return t;
}

void wl_window_ack_json(const struct wl_gen *g, struct json_object *doc, uint64_t start, uint64_t end)
{
	struct json_object *o;

	if (g->window_ack_fd <= 0)
		return;
	o = json_object_new_object();
	json_object_object_add(o, "status", json_object_new_string(wl_edge.status ? wl_edge.status : "not reached"));
	json_object_object_add(o, "wait_s", wl_jdouble((double)wl_edge.wait_ns / 1e9));
	json_object_object_add(o, "start_ns", wl_jint(start));
	json_object_object_add(o, "end_ns", wl_jint(end));
	json_object_object_add(doc, "window_ack", o);
}

void wl_gen_params_work(const struct wl_gen *g, struct json_object *o)
{
	if (g->ops) {
		json_object_object_add(o, "ops", wl_jint((uint64_t)g->ops));
		json_object_object_add(o, "warmup_ops", wl_jint((uint64_t)g->warmup_ops));
	}
	if (g->seeded) {
		char r[32];

		snprintf(r, sizeof(r), "%ld-%ld", g->src_lo, g->src_hi);
		json_object_object_add(o, "seed", wl_jint(g->seed));
		json_object_object_add(o, "src_ports", json_object_new_string(r));
	}
	if (g->idle_end_ms)
		json_object_object_add(o, "idle_end_s", wl_jdouble((double)g->idle_end_ms / 1000.0));
}

/* splitmix64: a fixed, portable sequence from one 64-bit state */
static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

int wl_seed_ports(unsigned long seed, long lo, long hi, long n, uint16_t *out)
{
	long span = hi - lo + 1, m = 0, i;
	uint16_t *all = xcalloc((size_t)span, sizeof(*all));
	uint64_t x = seed;

	for (i = 0; i < span; i++)
		all[m++] = (uint16_t)(lo + i);
	if (n > m) {
		free(all);
		return error("%ld source ports do not fit in %ld-%ld", n, lo, hi);
	}
	for (i = 0; i < n; i++) {
		long j = i + (long)(splitmix64(&x) % (uint64_t)(m - i));
		uint16_t t = all[i];

		all[i] = all[j];
		all[j] = t;
		out[i] = all[i];
	}
	free(all);
	return 0;
}

int wl_bind_src(const struct wl_gen *g, int fd, uint16_t port, const char *what)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int one = 1;

	wl_arg_addr("addr", NULL, g->v6, port, &ss, &len);	/* the wildcard: cannot fail */
	if (g->v6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (!bind(fd, (struct sockaddr *)&ss, len))
		return 0;
	if (errno == EADDRINUSE)
		return error("cannot bind %s to source port %u (--seed %lu, ports %ld-%ld): port in use; "
			     "give another --seed or --src-ports", what, port, g->seed, g->src_lo, g->src_hi);
	return error_errno("cannot bind %s to source port %u", what, port);
}

void wl_work_init(struct wl_work *w, uint64_t warm, uint64_t ops)
{
	w->warm = warm;
	w->ops = ops;
	w->done = 0;
	w->left = warm + ops;
}

uint64_t wl_work_done(struct wl_work *w, uint64_t n, int *edges)
{
	uint64_t old = __atomic_fetch_add(&w->done, n, __ATOMIC_RELAXED), new = old + n;
	uint64_t lo = old > w->warm ? old : w->warm, hi = new < w->warm + w->ops ? new : w->warm + w->ops;

	*edges = 0;
	if (w->warm && old < w->warm && w->warm <= new)
		*edges |= WL_WORK_WARM;
	if (old < w->warm + w->ops && w->warm + w->ops <= new)
		*edges |= WL_WORK_END;
	return hi > lo ? hi - lo : 0;
}

uint64_t wl_work_take(struct wl_work *w, uint64_t n)
{
	uint64_t r = __atomic_load_n(&w->left, __ATOMIC_RELAXED), take;

	do {
		uint64_t lim = r > w->ops ? r - w->ops : r;

		if (!r)
			return 0;
		take = n < lim ? n : lim;
	} while (!__atomic_compare_exchange_n(&w->left, &r, r - take, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	return take;
}

void wl_work_give(struct wl_work *w, uint64_t n)
{
	__atomic_fetch_add(&w->left, n, __ATOMIC_RELAXED);
}

/* How long past its planned end a run may take before the hard deadline ends it. */
#define WL_HARD_MARGIN_MS 5000L

int wl_gen_main(int argc, char **argv, const char *usage, struct wl_gen *g,
		int (*parse)(int argc, char **argv, struct wl_gen *g),
		int (*run)(struct wl_gen *g))
{
	int rc;

	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
			 !strcmp(argv[1], "help"))) {
		fputs(usage, stdout);
		return 0;
	}
	if (parse(argc, argv, g)) {
		fputs(usage, stderr);
		wl_cpus_release(&g->cpus);
		return 2;
	}
	wl_stop = 0;
	wl_signals();
	wl_hard_deadline(g->start_wait_ms + g->warmup_ms + g->duration_ms + WL_HARD_MARGIN_MS);
	rc = run(g);
	wl_hard_deadline(0);
	wl_cpus_release(&g->cpus);
	return rc;
}

int wl_arg_long(const char *name, const char *val, long min, long max, long *out)
{
	if (parse_long(val, min, max, out))
		return error("invalid --%s '%s': expected an integer from %ld to %ld",
			     name, val, min, max);
	return 0;
}

int wl_arg_duration(const char *name, const char *val, long min_ms, long max_ms, long *out_ms)
{
	long ms;

	if (parse_duration_ms(val, &ms) || ms < min_ms || ms > max_ms)
		return error("invalid --%s '%s': expected a duration from %ld ms to %ld s (e.g. 10s, 500ms)",
			     name, val, min_ms, max_ms / 1000);
	*out_ms = ms;
	return 0;
}

int wl_arg_cpus(const char *name, const char *val, struct wl_cpus *out)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	const char *p = val;

	out->cpu = NULL;
	out->n = 0;
	if (ncpu < 1)
		ncpu = 1;
	while (*p) {
		char *end;
		long a, b;

		errno = 0;
		a = strtol(p, &end, 10);
		if (end == p || errno || a < 0)
			goto bad;
		b = a;
		if (*end == '-') {
			p = end + 1;
			b = strtol(p, &end, 10);
			if (end == p || errno || b < a)
				goto bad;
		}
		if (b >= ncpu || b >= CPU_SETSIZE) {
			wl_cpus_release(out);
			return error("invalid --%s '%s': CPU %ld does not exist (this machine has %ld)",
				     name, val, b, ncpu);
		}
		for (; a <= b; a++) {
			if (out->n >= 4096)
				goto bad;
			out->cpu = xrealloc(out->cpu, (size_t)(out->n + 1) * sizeof(int));
			out->cpu[out->n++] = (int)a;
		}
		if (*end == ',' && end[1])
			end++;
		else if (*end)
			goto bad;
		p = end;
	}
	if (!out->n)
		goto bad;
	return 0;
bad:
	wl_cpus_release(out);
	return error("invalid --%s '%s': expected a CPU list such as 0-3,6", name, val);
}

void wl_cpus_release(struct wl_cpus *c)
{
	free(c->cpu);
	c->cpu = NULL;
	c->n = 0;
}

int wl_pin_self(const struct wl_cpus *c, int i)
{
	cpu_set_t set;
	int cpu, err;

	if (!c->n)
		return 0;
	cpu = c->cpu[i % c->n];
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (err)
		return error("cannot pin thread %d to CPU %d: %s", i, cpu, strerror(err));
	return 0;
}

int wl_arg_addr(const char *name, const char *val, int v6, int port,
		struct sockaddr_storage *ss, socklen_t *len)
{
	memset(ss, 0, sizeof(*ss));
	if (v6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		if (val && inet_pton(AF_INET6, val, &s6->sin6_addr) != 1)
			return error("invalid --%s '%s': expected a numeric IPv6 address (with -6)", name, val);
		*len = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		s4->sin_addr.s_addr = htonl(INADDR_ANY);
		if (val && inet_pton(AF_INET, val, &s4->sin_addr) != 1)
			return error("invalid --%s '%s': expected a numeric IPv4 address%s", name, val,
				     strchr(val, ':') ? " (add -6 for IPv6)" : "");
		*len = sizeof(*s4);
	}
	return 0;
}

const char *wl_addr_str(const struct sockaddr_storage *ss, char *buf, size_t size)
{
	char a[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;

		inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
		snprintf(buf, size, "[%s]:%u", a, ntohs(s6->sin6_port));
	} else {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;

		inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a));
		snprintf(buf, size, "%s:%u", a, ntohs(s4->sin_port));
	}
	return buf;
}

void wl_sleep_until(uint64_t t_ns)
{
	struct timespec ts = { .tv_sec = (time_t)(t_ns / 1000000000u), .tv_nsec = (long)(t_ns % 1000000000u) };

	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

static void on_stop(int sig)
{
	wl_stop = 1;
}

static long hard_ms;

static void on_alarm(int sig)
{
	char msg[128];
	int n = snprintf(msg, sizeof(msg), "fatal: hard deadline of %.1f s passed; exiting\n",
			 (double)hard_ms / 1000.0);

	if (n > 0 && write(2, msg, (size_t)n) < 0)
		_exit(1);
	_exit(1);
}

void wl_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
}

void wl_hard_deadline(long ms)
{
	struct itimerval it;

	memset(&it, 0, sizeof(it));
	hard_ms = ms;
	it.it_value.tv_sec = ms / 1000;
	it.it_value.tv_usec = (ms % 1000) * 1000;
	setitimer(ITIMER_REAL, &it, NULL);
}

int wl_arg_ready_fd(const char *name, const char *val, int *out)
{
	long fd;

	if (parse_long(val, 3, 1 << 20, &fd))
		return error("invalid --%s '%s': expected a descriptor number from 3 up "
			     "(0, 1 and 2 are stdin, stdout and stderr)", name, val);
	if (fcntl((int)fd, F_GETFD) < 0)
		return error("invalid --%s '%s': descriptor %ld is not open", name, val, fd);
	*out = (int)fd;
	return 0;
}

void wl_ready(int *fd)
{
	static const char line[] = "ready\n";
	ssize_t r;

	if (*fd < 0)
		return;
	do
		r = write(*fd, line, sizeof(line) - 1);
	while (r < 0 && errno == EINTR);
	if (r < 0)	/* 6 bytes: never a short write */
		error_errno("cannot write the ready line to descriptor %d", *fd);
	close(*fd);
	*fd = -1;
}

int wl_first_datagram(uint64_t *first_ns, uint64_t now, long start_wait_ms, uint64_t wait_end_ns)
{
	uint64_t none = 0;

	return __atomic_compare_exchange_n(first_ns, &none, now, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED) &&
	       start_wait_ms && now <= wait_end_ns;
}

void wl_raise_nofile(long need)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return;
	if (rl.rlim_cur != RLIM_INFINITY && (rlim_t)need > rl.rlim_cur) {
		rl.rlim_cur = (rl.rlim_max == RLIM_INFINITY || (rlim_t)need < rl.rlim_max) ?
			(rlim_t)need : rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

void wl_errs_merge(struct wl_errs *dst, const struct wl_errs *src)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(dst->n); i++)
		dst->n[i] += src->n[i];
}

uint64_t wl_errs_total(const struct wl_errs *e)
{
	uint64_t t = 0;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(e->n); i++)
		t += e->n[i];
	return t;
}

#define E(x) { x, #x }
static const struct {
	int err;
	const char *name;
} errno_names[] = {
	E(EPERM), E(ENOENT), E(EINTR), E(EIO), E(EBADF), E(EAGAIN), E(ENOMEM),
	E(EACCES), E(EFAULT), E(EBUSY), E(EINVAL), E(ENFILE), E(EMFILE), E(ENOSPC),
	E(EPIPE), E(ENOSYS), E(EMSGSIZE), E(EPROTOTYPE), E(ENOPROTOOPT),
	E(EPROTONOSUPPORT), E(EOPNOTSUPP), E(EAFNOSUPPORT), E(EADDRINUSE),
	E(EADDRNOTAVAIL), E(ENETDOWN), E(ENETUNREACH), E(ENETRESET),
	E(ECONNABORTED), E(ECONNRESET), E(ENOBUFS), E(EISCONN), E(ENOTCONN),
	E(ETIMEDOUT), E(ECONNREFUSED), E(EHOSTDOWN), E(EHOSTUNREACH),
	E(EALREADY), E(EINPROGRESS), E(ECANCELED), E(ENOTSOCK), E(EDESTADDRREQ),
};
#undef E

const char *wl_errno_name(int err, char *buf, size_t size)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(errno_names); i++)
		if (errno_names[i].err == err)
			return errno_names[i].name;
	snprintf(buf, size, "errno %d", err);
	return buf;
}

struct json_object *wl_errs_json(const struct wl_errs *e)
{
	struct json_object *o = json_object_new_object();
	char tmp[32];
	int i;

	for (i = 1; i < WL_MAX_ERRNO; i++)
		if (e->n[i])
			json_object_object_add(o, wl_errno_name(i, tmp, sizeof(tmp)), wl_jint(e->n[i]));
	if (e->n[WL_MAX_ERRNO])
		json_object_object_add(o, "other", wl_jint(e->n[WL_MAX_ERRNO]));
	return o;
}

struct json_object *wl_jdouble(double v)
{
	char s[64];
	size_t n;

	if (!isfinite(v))
		v = 0;
	snprintf(s, sizeof(s), "%.3f", v);
	n = strlen(s);
	while (n > 1 && s[n - 1] == '0')
		s[--n] = 0;
	if (n > 1 && s[n - 1] == '.')
		s[--n] = 0;
	if (!strcmp(s, "-0"))
		strcpy(s, "0");
	return json_object_new_double_s(v, s);
}

struct json_object *wl_jint(uint64_t v)
{
	return json_object_new_int64(v > INT64_MAX ? INT64_MAX : (int64_t)v);
}

int wl_print_doc(struct json_object *doc)
{
	const char *s = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY |
						       JSON_C_TO_STRING_SPACED |
						       JSON_C_TO_STRING_NOSLASHESCAPE);
	int rc = 0;

	if (fputs(s, stdout) < 0 || fputc('\n', stdout) < 0 || fflush(stdout) || ferror(stdout))
		rc = error_errno("cannot write the result to stdout");
	json_object_put(doc);
	return rc;
}

int wl_bind_group(const struct sockaddr_storage *a, socklen_t len, int n, int *fds)
{
	char as[80];
	int i, one = 1, probe;

	wl_addr_str(a, as, sizeof(as));
	for (i = 0; i < n; i++)
		fds[i] = -1;
	if (n > 1) {
		probe = socket(a->ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (probe < 0)
			return error_errno("cannot open a UDP socket");
		if (bind(probe, (const struct sockaddr *)a, len)) {
			int e = errno;

			close(probe);
			errno = e;
			goto bind_failed;
		}
		close(probe);
	}
	for (i = 0; i < n; i++) {
		fds[i] = socket(a->ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fds[i] < 0) {
			error_errno("cannot open a UDP socket");
			goto fail;
		}
		if (a->ss_family == AF_INET6)
			setsockopt(fds[i], IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		if (n > 1 && setsockopt(fds[i], SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one))) {
			error_errno("cannot set SO_REUSEPORT");
			goto fail;
		}
		if (bind(fds[i], (const struct sockaddr *)a, len))
			goto bind_failed;
	}
	return 0;
bind_failed:
	if (errno == EADDRINUSE)
		error("cannot bind to %s: port in use", as);
	else if (errno == EADDRNOTAVAIL)
		error("cannot bind to %s: no such local address", as);
	else
		error_errno("cannot bind to %s", as);
fail:
	for (i = 0; i < n; i++)
		if (fds[i] >= 0) {
			close(fds[i]);
			fds[i] = -1;
		}
	return -1;
}

int wl_set_busy_poll(int fd, long usec)
{
	int v = (int)usec;

	if (usec > 0 && setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &v, sizeof(v)))
		return error_errno("cannot set SO_BUSY_POLL to %ld us", usec);
	return 0;
}

int wl_set_timeouts(int fd, long rcv_ms, long snd_ms)
{
	struct timeval tv;

	if (rcv_ms > 0) {
		tv.tv_sec = rcv_ms / 1000;
		tv.tv_usec = (rcv_ms % 1000) * 1000;
		if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
			return error_errno("cannot set SO_RCVTIMEO");
	}
	if (snd_ms > 0) {
		tv.tv_sec = snd_ms / 1000;
		tv.tv_usec = (snd_ms % 1000) * 1000;
		if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)))
			return error_errno("cannot set SO_SNDTIMEO");
	}
	return 0;
}

void wl_set_rcvbuf(int fd, int bytes)
{
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof(bytes)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes));
}

struct json_object *wl_series(uint64_t warm_ns, uint64_t end_ns, const char *key,
			      uint64_t (*sum)(void *ctx), void *ctx, const int *stop)
{
	struct json_object *series = json_object_new_array();
	uint64_t t_prev = warm_ns, prev = 0;

	wl_sleep_until(warm_ns);
	while (!wl_stop && !__atomic_load_n(stop, __ATOMIC_RELAXED) && t_prev < end_ns) {
		uint64_t target = t_prev + 1000000000u, now, s;

		if (target > end_ns)
			target = end_ns;
		wl_sleep_until(target);
		now = wl_now_ns();
		if (now < target)
			continue;	/* a signal woke us early */
		s = sum(ctx);
		if (now > target)
			now = target;
		if (now > t_prev) {
			struct json_object *o = json_object_new_object();

			json_object_object_add(o, "t", wl_jdouble((double)(now - warm_ns) / 1e9));
			json_object_object_add(o, key, wl_jdouble((double)(s - prev) * 1e9 /
								   (double)(now - t_prev)));
			json_object_array_add(series, o);
		}
		prev = s;
		t_prev = now;
	}
	return series;
}

unsigned wl_rxbatch_next(const struct wl_rxbatch *b, unsigned max)
{
	return b->single && b->calls % WL_RXBATCH_PROBE ? 1 : max;
}

void wl_rxbatch_saw(struct wl_rxbatch *b, unsigned asked, int n)
{
	if (n < 1)
		return;
	b->receives++;
	b->singles += asked == 1;
	if (b->single) {
		b->calls++;
		if (asked > 1 && n > 1) {	/* a probe found a queue */
			b->single = 0;
			b->ones = 0;
			b->need = b->need ? b->need * 2 : 2 * WL_RXBATCH_ONES;
			if (b->need > WL_RXBATCH_ONES_MAX)
				b->need = WL_RXBATCH_ONES_MAX;
		}
		return;
	}
	if (n > 1) {
		b->ones = 0;
	} else if (++b->ones >= (b->need ? b->need : WL_RXBATCH_ONES)) {
		b->single = 1;
		b->calls = 1;
	}
}
