/* udp_rr.c: UDP request/response generator: a many-flow epoll client and an echo server. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hist.h"
#include "log.h"
#include "util.h"
#include "wl.h"
#include "workloads.h"

/*
 * Wire format: the first 8 bytes of a request are {slot, seq} (host byte
 * order; the server copies them back unread). A flow has `burst` slots,
 * each holding one transaction in flight; a response matches when its slot
 * is in flight with the same seq. A slot whose response has not come back
 * within the RTO is counted as a timeout and re-armed with a new seq, so a
 * lost datagram never stalls its flow; a response that arrives after its
 * slot moved on is counted as late (the loss count is timeouts - late).
 */
struct rr_hdr {
	uint32_t slot;
	uint32_t seq;
};

#define RR_MIN_SIZE ((long)sizeof(struct rr_hdr))
#define RR_MAX_SIZE 65507L
#define RR_SRV_BATCH 64

static const char rr_usage[] =
	"usage: klab-udp-rr server --port P [--addr A] [--threads T] [--response-size N]\n"
	"                          --duration S [--cpus LIST] [--busy-poll USEC] [-6]\n"
	"                          [--ready-fd N] [--start-wait S] [--idle-end S]\n"
	"       klab-udp-rr client --addr A --port P --flows F [--threads T] [--request-size N]\n"
	"                          [--response-size N] --duration S [--warmup S] [--burst K]\n"
	"                          [--cpus LIST] [--busy-poll USEC] [--rto-ms MS] [-6]\n"
	"                          [--ops N [--warmup-ops N] [--window-fd N [--window-ack-fd N]]]\n"
	"                          [--seed S [--src-ports LO-HI]]\n";

struct rr_params {
	struct wl_gen g;	/* g.listen: the server */
	long flows, req_size, resp_size, burst, busy_poll, rto_ms;
	int echo;		/* server: answer with the request's length */
};

/* Parse and check every option; 0, or -1 after a message naming the argument. */
static int rr_parse(int argc, char **argv, struct wl_gen *g)
{
	static const char *const client_only[] = { "flows", "request-size", "warmup", "burst", "rto-ms", NULL };
	static const char *const server_only[] = { "ready-fd", "start-wait", NULL };
	struct rr_params *p = container_of(g, struct rr_params, g);
	const char *flows = NULL, *req = NULL, *resp = NULL, *burst = NULL, *bp = NULL, *rto = NULL;
	struct wl_opt opts[] = {
		{ "addr", 1, &g->addr_s }, { "port", 1, &g->arg.port }, { "flows", 1, &flows },
		{ "threads", 1, &g->arg.threads }, { "request-size", 1, &req },
		{ "response-size", 1, &resp }, { "duration", 1, &g->arg.duration },
		{ "warmup", 1, &g->arg.warmup }, { "burst", 1, &burst }, { "cpus", 1, &g->cpus_s },
		{ "busy-poll", 1, &bp }, { "rto-ms", 1, &rto }, { "6", 0, &g->arg.v6 },
		{ "ready-fd", 1, &g->arg.ready_fd }, { "start-wait", 1, &g->arg.start_wait },
		{ "ops", 1, &g->arg.ops }, { "warmup-ops", 1, &g->arg.warmup_ops }, { "seed", 1, &g->arg.seed },
		{ "src-ports", 1, &g->arg.src_ports }, { "idle-end", 1, &g->arg.idle_end },
		{ "window-fd", 1, &g->arg.window_fd }, { "window-ack-fd", 1, &g->arg.window_ack_fd },
		{ NULL, 0, NULL },
	};
	int role = wl_gen_role(argc, argv, "server", "client");

	if (role < 0)
		return -1;
	g->listen = role == 0;
	if (wl_parse_opts(argc, argv, 2, opts))
		return -1;
	if (wl_gen_only(opts, g->listen ? client_only : server_only, g->listen ? "client" : "server"))
		return -1;
	p->flows = p->burst = 1;
	p->req_size = p->resp_size = 100;
	p->rto_ms = 100;
	if (wl_gen_times(g) || wl_gen_listen(g))
		return -1;
	if (g->listen) {
		p->echo = !resp;
	} else {
		if (!g->addr_s)
			return error("missing --addr");
		if (!flows)
			return error("missing --flows");
		if (wl_arg_long("flows", flows, 1, 65536, &p->flows))
			return -1;
	}
	if (req && wl_arg_long("request-size", req, RR_MIN_SIZE, RR_MAX_SIZE, &p->req_size))
		return -1;
	if (resp && wl_arg_long("response-size", resp, RR_MIN_SIZE, RR_MAX_SIZE, &p->resp_size))
		return -1;
	if (burst && wl_arg_long("burst", burst, 1, 1024, &p->burst))
		return -1;
	if (rto && wl_arg_long("rto-ms", rto, 1, 60000, &p->rto_ms))
		return -1;
	if (bp && wl_arg_long("busy-poll", bp, 0, 1000000, &p->busy_poll))
		return -1;
	if (wl_gen_where(g))
		return -1;
	if (!g->listen && !g->arg.threads) {
		/* one thread per CPU (of --cpus, else online): a single client
		 * thread caps many flows at what one CPU can send */
		long n = g->cpus.n ? g->cpus.n : sysconf(_SC_NPROCESSORS_ONLN);

		g->threads = n < 1 ? 1 : n > 64 ? 64 : n;
	}
	if (!g->listen && g->threads > p->flows)
		g->threads = p->flows;
	return wl_gen_work(g, g->listen ? 0 : p->flows, 1);
}

static struct json_object *rr_params_json(const struct rr_params *p)
{
	struct json_object *o = wl_gen_params_json(&p->g);

	if (!p->g.listen) {
		json_object_object_add(o, "flows", wl_jint((uint64_t)p->flows));
		json_object_object_add(o, "request_size", wl_jint((uint64_t)p->req_size));
		json_object_object_add(o, "burst", wl_jint((uint64_t)p->burst));
		json_object_object_add(o, "rto_ms", wl_jint((uint64_t)p->rto_ms));
		json_object_object_add(o, "warmup_s", wl_jdouble((double)p->g.warmup_ms / 1000.0));
	}
	if (!p->echo)
		json_object_object_add(o, "response_size", wl_jint((uint64_t)p->resp_size));
	else
		json_object_object_add(o, "response_size", json_object_new_string("echo"));
	json_object_object_add(o, "duration_s", wl_jdouble((double)p->g.duration_ms / 1000.0));
	if (p->g.listen)
		json_object_object_add(o, "start_wait_s", wl_jdouble((double)p->g.start_wait_ms / 1000.0));
	json_object_object_add(o, "busy_poll_us", wl_jint((uint64_t)p->busy_poll));
	json_object_object_add(o, "cpus", p->g.cpus_s ? json_object_new_string(p->g.cpus_s) : NULL);
	wl_gen_params_work(&p->g, o);
	return o;
}

/* ---- client ------------------------------------------------------------ */

struct rr_slot {
	uint64_t t_sent;	/* ns, monotonic */
	uint32_t seq;
	int active;
};

struct rr_count {		/* one set for the whole run, one for the measured window */
	uint64_t done, sent, received, timeouts, late, bad;
};

struct rr_flow {
	int fd;
	uint32_t next_seq;
	uint64_t done_win;	/* transactions completed in the measured window */
	struct rr_slot *slots;
};

struct rr_client;

struct rr_cthread {
	pthread_t tid;
	int idx;
	struct rr_client *c;
	struct rr_flow *flows;
	int nflows;
	int ep;
	struct rr_count all, win;	/* all.done and win.done are read by the main thread */
	struct wl_errs errs_all, errs_win;
	struct hist hist;
	char *buf;
	size_t bufsize;
	int failed;
};

struct rr_client {
	struct rr_params *p;
	/*
	 * The measured window [warm_ns, end_ns). A run sized by work (--ops)
	 * does not know its edges ahead: warm_ns is UINT64_MAX until the
	 * warm-up's last transaction, end_ns the time limit until the window's
	 * last one; the thread that completes it stores the edge (WL_STORE).
	 */
	uint64_t start_ns, warm_ns, end_ns, rto_ns;
	struct wl_work work;	/* --ops */
	uint64_t win_start, win_end;	/* --ops: the window's edges as reached (0: not yet) */
	int stop;		/* set by the main thread */
	struct rr_flow *flows;
	struct rr_cthread *th;
	uint16_t *src_ports;	/* --seed: flow i's source port */
};

static inline int in_window(const struct rr_client *c, uint64_t now)
{
	return now >= WL_LOAD(&c->warm_ns) && now < WL_LOAD(&c->end_ns);
}

/* Start a new transaction on a slot (a fresh seq); a failed send stays armed for the RTO. */
static void rr_send(struct rr_cthread *t, struct rr_flow *f, uint32_t slot, uint64_t now)
{
	struct rr_client *c = t->c;
	struct rr_slot *s = &f->slots[slot];
	struct rr_hdr h = { slot, f->next_seq++ };
	ssize_t r;

	memcpy(t->buf, &h, sizeof(h));
	s->seq = h.seq;
	s->t_sent = now;
	s->active = 1;
	do
		r = send(f->fd, t->buf, (size_t)c->p->req_size, 0);
	while (r < 0 && errno == EINTR);
	if (r < 0) {
		wl_errs_add(&t->errs_all, errno);
		if (in_window(c, now))
			wl_errs_add(&t->errs_win, errno);
		return;
	}
	t->all.sent++;
	if (in_window(c, now))
		t->win.sent++;
}

/* One received datagram (length r) on flow f. */
static void rr_response(struct rr_cthread *t, struct rr_flow *f, ssize_t r, uint64_t now)
{
	struct rr_client *c = t->c;
	int win = in_window(c, now), done_win;
	struct rr_hdr h;
	struct rr_slot *s;

	t->all.received++;
	if (win)
		t->win.received++;
	if (r < RR_MIN_SIZE) {
		t->all.bad++;
		t->win.bad += win;
		return;
	}
	memcpy(&h, t->buf, sizeof(h));
	if (h.slot >= (uint32_t)c->p->burst || !f->slots[h.slot].active ||
	    f->slots[h.slot].seq != h.seq) {
		t->all.late++;
		t->win.late += win;
		return;
	}
	if (r != c->p->resp_size) {
		t->all.bad++;
		t->win.bad += win;
	}
	s = &f->slots[h.slot];
	WL_ADD(&t->all.done, 1);
	done_win = win;
	if (c->p->g.ops) {	/* the window is operations W+1 .. W+N, in completion order */
		int edges;

		done_win = wl_work_done(&c->work, 1, &edges) > 0;
		if (edges & WL_WORK_WARM) {
			/* with --window-ack-fd, the clock after the ack: the next request is sent then */
			now = wl_window_start(&c->p->g, now);
			WL_STORE(&c->win_start, now);
			WL_STORE(&c->warm_ns, now);
		}
		if (edges & WL_WORK_END) {
			WL_STORE(&c->win_end, now);
			WL_STORE(&c->end_ns, now);	/* every thread stops at its next look */
			wl_window_mark(&c->p->g, "end");
		}
	}
	if (done_win) {
		WL_ADD(&t->win.done, 1);
		WL_ADD(&f->done_win, 1);
		hist_add(&t->hist, now - s->t_sent);
	}
	rr_send(t, f, h.slot, now);
}

/*
 * Read what is queued on a flow, at most `max` datagrams; only the first
 * recv() may block (flags 0 on a socket with a receive timeout). Returns the
 * time read after the last recv() (the caller's clock for its own checks, so
 * a transaction reads the clock once), 0 when it read none.
 */
static uint64_t rr_drain(struct rr_cthread *t, struct rr_flow *f, int max, int flags)
{
	uint64_t now = 0;
	int i;

	for (i = 0; i < max; i++) {
		ssize_t r = recv(f->fd, t->buf, t->bufsize, i ? flags | MSG_DONTWAIT : flags);

		now = wl_now_ns();
		if (r < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return now;
			if (errno == EINTR)
				continue;
			/* ECONNREFUSED (no server): count it; the slot's RTO resends */
			wl_errs_add(&t->errs_all, errno);
			if (in_window(t->c, now))
				wl_errs_add(&t->errs_win, errno);
			return now;
		}
		rr_response(t, f, r, now);
	}
	return now;
}

/* Re-arm every slot whose response is overdue. */
static void rr_scan(struct rr_cthread *t, uint64_t now)
{
	struct rr_client *c = t->c;
	int i;
	uint32_t k;

	for (i = 0; i < t->nflows; i++) {
		struct rr_flow *f = &t->flows[i];

		for (k = 0; k < (uint32_t)c->p->burst; k++) {
			struct rr_slot *s = &f->slots[k];

			if (s->active && now - s->t_sent >= c->rto_ns) {
				t->all.timeouts++;
				if (in_window(c, now))
					t->win.timeouts++;
				rr_send(t, f, k, now);
			}
		}
	}
}

/*
 * A client thread. With one flow it blocks in recv() (a receive timeout
 * of one tick bounds the wait): one syscall less per transaction than
 * epoll, which matters at one flow. With more flows, level-triggered
 * epoll over all of the thread's sockets.
 */
static void *rr_client_thread(void *arg)
{
	struct rr_cthread *t = arg;
	struct rr_client *c = t->c;
	uint64_t tick_ns = c->rto_ns / 4, next_scan;
	struct epoll_event evs[256];
	int i;
	uint32_t k;

	if (tick_ns > 10000000u)
		tick_ns = 10000000u;
	if (tick_ns < 1000000u)
		tick_ns = 1000000u;
	if (wl_pin_self(&c->p->g.cpus, t->idx)) {
		t->failed = 1;
		return NULL;
	}
	for (i = 0; i < t->nflows; i++)
		for (k = 0; k < (uint32_t)c->p->burst; k++)
			rr_send(t, &t->flows[i], k, wl_now_ns());
	next_scan = wl_now_ns() + tick_ns;
	while (!WL_LOAD(&c->stop) && !wl_stop) {
		uint64_t now = 0;

		if (c->p->g.window_ack_fd > 0)	/* another thread's window start is being acknowledged */
			wl_window_hold();

		if (t->nflows == 1) {
			now = rr_drain(t, &t->flows[0], (int)c->p->burst, 0);
		} else {
			int n = epoll_wait(t->ep, evs, (int)ARRAY_SIZE(evs), (int)(tick_ns / 1000000u));

			for (i = 0; i < n; i++)
				now = rr_drain(t, evs[i].data.ptr, (int)c->p->burst, MSG_DONTWAIT);
		}
		if (!now)
			now = wl_now_ns();
		if (now >= WL_LOAD(&c->end_ns))
			break;
		if (now >= next_scan) {
			rr_scan(t, now);
			next_scan = now + tick_ns;
		}
	}
	return NULL;
}

/* Open and connect one socket per flow, and an epoll set per thread. */
static int rr_client_setup(struct rr_client *c)
{
	struct rr_params *p = c->p;
	long i, per = p->flows / p->g.threads, extra = p->flows % p->g.threads, next = 0;
	long tick_ms = p->rto_ms / 4 < 1 ? 1 : p->rto_ms / 4 > 10 ? 10 : p->rto_ms / 4;
	char as[80];

	wl_addr_str(&p->g.addr, as, sizeof(as));
	wl_raise_nofile(p->flows + p->g.threads + 64);
	if (p->g.seeded) {
		c->src_ports = xcalloc((size_t)p->flows, sizeof(*c->src_ports));
		if (wl_seed_ports(p->g.seed, p->g.src_lo, p->g.src_hi, p->flows, c->src_ports))
			return -1;
	}
	for (i = 0; i < p->flows; i++) {
		struct rr_flow *f = &c->flows[i];

		f->slots = xcalloc((size_t)p->burst, sizeof(*f->slots));
		f->fd = socket(p->g.addr.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (f->fd < 0)
			return error_errno("cannot open the socket of flow %ld of %ld", i + 1, p->flows);
		if (c->src_ports) {
			char what[32];

			snprintf(what, sizeof(what), "flow %ld", i + 1);
			if (wl_bind_src(&p->g, f->fd, c->src_ports[i], what))
				return -1;
		}
		if (connect(f->fd, (struct sockaddr *)&p->g.addr, p->g.addrlen))
			return error_errno("cannot connect flow %ld to %s", i + 1, as);
		if (wl_set_busy_poll(f->fd, p->busy_poll) || wl_set_timeouts(f->fd, tick_ms, 1000))
			return -1;
	}
	for (i = 0; i < p->g.threads; i++) {
		struct rr_cthread *t = &c->th[i];
		long j;

		t->idx = (int)i;
		t->c = c;
		t->flows = &c->flows[next];
		t->nflows = (int)(per + (i < extra));
		next += t->nflows;
		t->bufsize = (size_t)(p->req_size > p->resp_size ? p->req_size : p->resp_size) + 64;
		t->buf = xcalloc(1, t->bufsize);
		hist_init(&t->hist);
		t->ep = epoll_create1(EPOLL_CLOEXEC);
		if (t->ep < 0)
			return error_errno("cannot create an epoll set");
		for (j = 0; j < t->nflows && t->nflows > 1; j++) {
			struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &t->flows[j] };

			if (epoll_ctl(t->ep, EPOLL_CTL_ADD, t->flows[j].fd, &ev))
				return error_errno("cannot add flow %ld to the epoll set", j + 1);
		}
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static struct json_object *rr_hist_json(const struct hist *h)
{
	struct json_object *o = json_object_new_object(), *b = json_object_new_array();
	unsigned i;

	json_object_object_add(o, "name", json_object_new_string("rtt_us"));
	json_object_object_add(o, "unit", json_object_new_string("us"));
	for (i = 0; i < HIST_BUCKETS; i++) {
		struct json_object *e;
		uint64_t lo, hi;

		if (!h->count[i])
			continue;
		hist_bucket_range(i, &lo, &hi);
		e = json_object_new_object();
		json_object_object_add(e, "lo", wl_jdouble((double)lo / 1000.0));
		json_object_object_add(e, "hi", wl_jdouble((double)hi / 1000.0));
		json_object_object_add(e, "count", wl_jint(h->count[i]));
		json_object_array_add(b, e);
	}
	json_object_object_add(o, "buckets", b);
	return o;
}

static void add_count(struct rr_count *d, const struct rr_count *s)
{
	d->done += s->done;
	d->sent += s->sent;
	d->received += s->received;
	d->timeouts += s->timeouts;
	d->late += s->late;
	d->bad += s->bad;
}

static uint64_t rr_sum_done(void *ctx)
{
	struct rr_client *c = ctx;
	uint64_t sum = 0;
	long i;

	for (i = 0; i < c->p->g.threads; i++)
		sum += WL_LOAD(&c->th[i].win.done);
	return sum;
}

static int rr_client(struct rr_params *p)
{
	struct rr_client c;
	struct json_object *doc = NULL, *series = json_object_new_array(), *o;
	struct rr_count all = { 0 }, win = { 0 };
	struct wl_errs *errs_all = xcalloc(1, sizeof(*errs_all)), *errs_win = xcalloc(1, sizeof(*errs_win));
	struct hist *h = xmalloc(sizeof(*h));
	uint64_t *per_flow = NULL, measured_ns, losses;
	long i, started = 0;
	int rc = 1, stopped_early = 0;
	double secs;
	char as[80];

	memset(&c, 0, sizeof(c));
	c.p = p;
	c.rto_ns = (uint64_t)p->rto_ms * 1000000u;
	c.flows = xcalloc((size_t)p->flows, sizeof(*c.flows));
	c.th = xcalloc((size_t)p->g.threads, sizeof(*c.th));
	for (i = 0; i < p->flows; i++)
		c.flows[i].fd = -1;
	for (i = 0; i < p->g.threads; i++)
		c.th[i].ep = -1;
	hist_init(h);
	if (rr_client_setup(&c))
		goto out;

	c.start_ns = wl_now_ns();
	c.warm_ns = c.start_ns + (uint64_t)p->g.warmup_ms * 1000000u;
	c.end_ns = c.warm_ns + (uint64_t)p->g.duration_ms * 1000000u;
	if (p->g.ops) {		/* --duration is the limit; the edges come with the work */
		wl_work_init(&c.work, (uint64_t)p->g.warmup_ops, (uint64_t)p->g.ops);
		c.win_start = p->g.warmup_ops ? 0 : wl_window_start(&p->g, c.start_ns);
		c.warm_ns = p->g.warmup_ops ? UINT64_MAX : c.win_start;
	}
	for (i = 0; i < p->g.threads; i++, started++) {
		int err = pthread_create(&c.th[i].tid, NULL, rr_client_thread, &c.th[i]);

		if (err) {
			error("cannot start client thread %ld: %s", i, strerror(err));
			WL_STORE(&c.stop, 1);
			break;
		}
	}

	/* per-second series of the measured window, sampled by this thread; a
	 * run sized by work has none (its window's edges are not known ahead,
	 * and this thread stays asleep in pthread_join meanwhile) */
	if (started == p->g.threads && !p->g.ops) {
		json_object_put(series);
		series = wl_series(c.warm_ns, c.end_ns, "tps", rr_sum_done, &c, &c.stop);
	}
	if (!p->g.ops || started < p->g.threads)
		WL_STORE(&c.stop, 1);	/* (a run sized by work ends by itself) */
	for (i = 0; i < started; i++)
		pthread_join(c.th[i].tid, NULL);
	if (wl_stop)
		stopped_early = 1;
	for (i = 0; i < started; i++)
		if (c.th[i].failed)
			goto out;
	if (started < p->g.threads)
		goto out;

	for (i = 0; i < p->g.threads; i++) {
		add_count(&all, &c.th[i].all);
		add_count(&win, &c.th[i].win);
		wl_errs_merge(errs_all, &c.th[i].errs_all);
		wl_errs_merge(errs_win, &c.th[i].errs_win);
		hist_merge(h, &c.th[i].hist);
	}
	measured_ns = wl_now_ns();
	if (p->g.ops) {		/* the window from the warm-up's last transaction to its own last */
		uint64_t a = c.win_start, b = c.win_end ? c.win_end : measured_ns < c.end_ns ? measured_ns : c.end_ns;

		measured_ns = a && b > a ? b - a : 0;
	} else {
		measured_ns = measured_ns > c.end_ns ? c.end_ns : measured_ns;
		measured_ns = measured_ns > c.warm_ns ? measured_ns - c.warm_ns : 0;
	}
	secs = (double)measured_ns / 1e9;
	per_flow = xcalloc((size_t)p->flows, sizeof(*per_flow));
	for (i = 0; i < p->flows; i++)
		per_flow[i] = c.flows[i].done_win;
	qsort(per_flow, (size_t)p->flows, sizeof(*per_flow), cmp_u64);
	losses = win.timeouts > win.late ? win.timeouts - win.late : 0;

	doc = json_object_new_object();
	json_object_object_add(doc, "schema", json_object_new_string("klab-udp-rr/1"));
	json_object_object_add(doc, "role", json_object_new_string("client"));
	json_object_object_add(doc, "params", rr_params_json(p));
	wl_window_ack_json(&p->g, doc, WL_LOAD(&c.win_start), WL_LOAD(&c.win_end));
	json_object_object_add(doc, "warmup_s", wl_jdouble((double)p->g.warmup_ms / 1000.0));
	json_object_object_add(doc, "duration_s", wl_jdouble(secs));
	json_object_object_add(doc, "transactions", wl_jint(win.done));
	json_object_object_add(doc, "tps", wl_jdouble(secs > 0 ? (double)win.done / secs : 0));
	json_object_object_add(doc, "sent", wl_jint(win.sent));
	json_object_object_add(doc, "received", wl_jint(win.received));
	json_object_object_add(doc, "losses", wl_jint(losses));
	json_object_object_add(doc, "timeouts", wl_jint(win.timeouts));
	json_object_object_add(doc, "late", wl_jint(win.late));
	json_object_object_add(doc, "bad_responses", wl_jint(win.bad));
	json_object_object_add(doc, "errors", wl_jint(wl_errs_total(errs_win)));
	json_object_object_add(doc, "errors_by_errno", wl_errs_json(errs_win));
	o = json_object_new_object();
	json_object_object_add(o, "min", wl_jdouble(secs > 0 ? (double)per_flow[0] / secs : 0));
	json_object_object_add(o, "median", wl_jdouble(secs > 0 ? (p->flows % 2 ?
		(double)per_flow[p->flows / 2] :
		((double)per_flow[p->flows / 2 - 1] + (double)per_flow[p->flows / 2]) / 2) / secs : 0));
	json_object_object_add(o, "max", wl_jdouble(secs > 0 ? (double)per_flow[p->flows - 1] / secs : 0));
	json_object_object_add(doc, "per_flow_tps", o);
	o = json_object_new_object();
	json_object_object_add(o, "mean", wl_jdouble(hist_mean(h) / 1000.0));
	json_object_object_add(o, "min", wl_jdouble(h->n ? (double)h->min / 1000.0 : 0));
	json_object_object_add(o, "p50", wl_jdouble(hist_percentile(h, 50) / 1000.0));
	json_object_object_add(o, "p90", wl_jdouble(hist_percentile(h, 90) / 1000.0));
	json_object_object_add(o, "p99", wl_jdouble(hist_percentile(h, 99) / 1000.0));
	json_object_object_add(o, "p999", wl_jdouble(hist_percentile(h, 99.9) / 1000.0));
	json_object_object_add(o, "max", wl_jdouble(h->n ? (double)h->max / 1000.0 : 0));
	json_object_object_add(doc, "latency_us", o);
	json_object_object_add(doc, "histogram", rr_hist_json(h));
	json_object_object_add(doc, "series", series);
	series = NULL;
	o = json_object_new_object();
	json_object_object_add(o, "transactions", wl_jint(all.done));
	json_object_object_add(o, "sent", wl_jint(all.sent));
	json_object_object_add(o, "received", wl_jint(all.received));
	json_object_object_add(o, "timeouts", wl_jint(all.timeouts));
	json_object_object_add(o, "late", wl_jint(all.late));
	json_object_object_add(o, "bad_responses", wl_jint(all.bad));
	json_object_object_add(o, "errors", wl_jint(wl_errs_total(errs_all)));
	json_object_object_add(o, "errors_by_errno", wl_errs_json(errs_all));
	json_object_object_add(doc, "total", o);
	json_object_object_add(doc, "stopped_early", json_object_new_boolean(stopped_early));
	rc = wl_print_doc(doc) ? 1 : 0;
	doc = NULL;
	if (!rc && !all.done) {
		char en[32];
		int e, top = 0;

		for (e = 1; e < WL_MAX_ERRNO; e++)
			if (errs_all->n[e] > errs_all->n[top])
				top = e;
		if (top)
			error("no response from %s in %.1f s: %llu send/receive errors, mostly %s (%s)",
			      wl_addr_str(&p->g.addr, as, sizeof(as)),
			      (double)(p->g.warmup_ms + p->g.duration_ms) / 1000.0,
			      (unsigned long long)wl_errs_total(errs_all),
			      wl_errno_name(top, en, sizeof(en)), strerror(top));
		else
			error("no response from %s in %.1f s (%llu requests sent)",
			      wl_addr_str(&p->g.addr, as, sizeof(as)),
			      (double)(p->g.warmup_ms + p->g.duration_ms) / 1000.0,
			      (unsigned long long)all.sent);
		rc = 1;
	}
	if (!rc && p->g.ops && !c.win_end && !stopped_early)
	{
		error("the run did %llu of %ld transactions before its time limit of %.1f s",
		      (unsigned long long)win.done, p->g.ops, (double)p->g.duration_ms / 1000.0);
		rc = 1;
	}
out:
	json_object_put(series);
	json_object_put(doc);
	free(c.src_ports);
	for (i = 0; i < p->flows; i++) {
		if (c.flows[i].fd >= 0)
			close(c.flows[i].fd);
		free(c.flows[i].slots);
	}
	for (i = 0; i < p->g.threads; i++) {
		if (c.th[i].ep >= 0)
			close(c.th[i].ep);
		free(c.th[i].buf);
	}
	free(c.flows);
	free(c.th);
	free(per_flow);
	free(errs_all);
	free(errs_win);
	free(h);
	return rc;
}

/* ---- server ------------------------------------------------------------ */

struct rr_sthread {
	pthread_t tid;
	int idx;
	int fd;
	const struct rr_params *p;
	uint64_t *end_ns;		/* shared: the first request may move it (--start-wait) */
	uint64_t *first_ns;		/* shared: when the first request came (0: none yet) */
	uint64_t wait_end_ns;		/* --start-wait: a first request after this moves nothing */
	uint64_t received, echoed;
	uint64_t receives, singles;	/* receive calls that brought data, and those of one */
	struct wl_errs errs;
	char *bufs;
	size_t bufsize;
	int failed;
};

/*
 * The first request of the run, whichever thread saw it. With --start-wait
 * the duration runs from it: a client whose agent started late (a loaded
 * machine, a slow SSH exec) still finds the server there for its whole run.
 */
static void rr_first_request(struct rr_sthread *t)
{
	uint64_t now = wl_now_ns();

	if (wl_first_datagram(t->first_ns, now, t->p->g.start_wait_ms, t->wait_end_ns))
		WL_STORE(t->end_ns, now + (uint64_t)t->p->g.duration_ms * 1000000u);
}

/* Receive a batch, answer each datagram to its sender; until the deadline. */
static void *rr_server_thread(void *arg)
{
	struct rr_sthread *t = arg;
	struct mmsghdr rx[RR_SRV_BATCH], tx[RR_SRV_BATCH];
	struct iovec rxv[RR_SRV_BATCH], txv[RR_SRV_BATCH];
	struct sockaddr_storage from[RR_SRV_BATCH];
	struct wl_rxbatch bt = { 0 };
	int i, used = RR_SRV_BATCH;
	unsigned iter = 0, idle = 0;	/* receive timeouts (100 ms) in a row */

	if (wl_pin_self(&t->p->g.cpus, t->idx)) {
		t->failed = 1;
		return NULL;
	}
	memset(rx, 0, sizeof(rx));
	memset(tx, 0, sizeof(tx));
	for (i = 0; i < RR_SRV_BATCH; i++) {
		rxv[i].iov_base = t->bufs + (size_t)i * t->bufsize;
		txv[i].iov_base = rxv[i].iov_base;
		rx[i].msg_hdr.msg_name = &from[i];
		rx[i].msg_hdr.msg_iov = &rxv[i];
		rx[i].msg_hdr.msg_iovlen = 1;
		tx[i].msg_hdr.msg_name = &from[i];
		tx[i].msg_hdr.msg_iov = &txv[i];
		tx[i].msg_hdr.msg_iovlen = 1;
	}
	/* the deadline is read every 32nd receive and after every timeout (each
	 * 100 ms of silence), not once per request */
	while (!wl_stop && (++iter % 32 || wl_now_ns() < WL_LOAD(t->end_ns))) {
		unsigned ask = wl_rxbatch_next(&bt, RR_SRV_BATCH);
		int n, done = 0;

		/* the kernel wrote the name length and flags of those it filled */
		for (i = 0; i < used; i++) {
			rxv[i].iov_len = t->bufsize;
			rx[i].msg_hdr.msg_namelen = sizeof(from[i]);
			rx[i].msg_hdr.msg_flags = 0;
		}
		if (ask == 1) {		/* recvmmsg of one, without its loop */
			ssize_t r = recvmsg(t->fd, &rx[0].msg_hdr, 0);

			n = r < 0 ? -1 : 1;
			rx[0].msg_len = r < 0 ? 0 : (unsigned)r;
		} else {
			n = recvmmsg(t->fd, rx, ask, MSG_WAITFORONE, NULL);
		}
		if (n < 0) {
			used = 0;
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				wl_errs_add(&t->errs, errno);
			else if (errno != EINTR && t->p->g.idle_end_ms && WL_LOAD(t->first_ns) &&
				 (long)++idle * 100 >= t->p->g.idle_end_ms)
				break;	/* --idle-end: the client is done */
			iter = 31;	/* read the deadline next */
			continue;
		}
		idle = 0;
		used = n;
		if (!WL_LOAD(t->first_ns))
			rr_first_request(t);
		wl_rxbatch_saw(&bt, ask, n);
		WL_ADD(&t->received, (uint64_t)n);
		for (i = 0; i < n; i++) {
			size_t len = t->p->echo ? rx[i].msg_len : (size_t)t->p->resp_size;

			txv[i].iov_len = len > t->bufsize ? t->bufsize : len;
			tx[i].msg_hdr.msg_namelen = rx[i].msg_hdr.msg_namelen;
		}
		while (done < n) {
			int r = n - done == 1 ?
				(sendmsg(t->fd, &tx[done].msg_hdr, 0) < 0 ? -1 : 1) :
				sendmmsg(t->fd, tx + done, (unsigned)(n - done), 0);

			if (r < 0) {
				if (errno == EINTR)
					continue;
				wl_errs_add(&t->errs, errno);
				done++;		/* drop the one that failed, answer the rest */
				continue;
			}
			WL_ADD(&t->echoed, (uint64_t)r);
			done += r;
		}
	}
	t->receives = bt.receives;
	t->singles = bt.singles;
	return NULL;
}

static int rr_server(struct rr_params *p)
{
	struct rr_sthread *th = xcalloc((size_t)p->g.threads, sizeof(*th));
	int *fds = xcalloc((size_t)p->g.threads, sizeof(int));
	struct wl_errs *errs = xcalloc(1, sizeof(*errs));
	uint64_t start, end, first = 0, received = 0, echoed = 0, receives = 0, singles = 0;
	struct json_object *doc;
	long i, started = 0;
	int rc = 1;

	if (wl_bind_group(&p->g.addr, p->g.addrlen, (int)p->g.threads, fds))
		goto out;
	start = wl_now_ns();
	/* without a request, the server waits start_wait for the first, then runs its duration */
	end = start + (uint64_t)(p->g.start_wait_ms + p->g.duration_ms) * 1000000u;
	for (i = 0; i < p->g.threads; i++) {
		struct rr_sthread *t = &th[i];

		t->idx = (int)i;
		t->fd = fds[i];
		t->p = p;
		t->end_ns = &end;
		t->first_ns = &first;
		t->wait_end_ns = start + (uint64_t)p->g.start_wait_ms * 1000000u;
		/* echo needs the whole request; else only its header is read */
		t->bufsize = p->echo ? 65536 : p->resp_size < 2048 ? 2048 : (size_t)p->resp_size;
		t->bufs = xcalloc(RR_SRV_BATCH, t->bufsize);
		wl_set_rcvbuf(t->fd, 4 << 20);
		if (wl_set_busy_poll(t->fd, p->busy_poll) || wl_set_timeouts(t->fd, 100, 100))
			goto out;
	}
	for (i = 0; i < p->g.threads; i++, started++) {
		int err = pthread_create(&th[i].tid, NULL, rr_server_thread, &th[i]);

		if (err) {
			error("cannot start server thread %ld: %s", i, strerror(err));
			wl_stop = 1;
			break;
		}
	}
	if (started == p->g.threads)
		wl_ready(&p->g.ready_fd);	/* bound, and every thread is serving */
	for (i = 0; i < started; i++)
		pthread_join(th[i].tid, NULL);
	if (started < p->g.threads)
		goto out;
	for (i = 0; i < p->g.threads; i++) {
		if (th[i].failed)
			goto out;
		received += th[i].received;
		echoed += th[i].echoed;
		receives += th[i].receives;
		singles += th[i].singles;
		wl_errs_merge(errs, &th[i].errs);
	}
	end = wl_now_ns();
	doc = json_object_new_object();
	json_object_object_add(doc, "schema", json_object_new_string("klab-udp-rr/1"));
	json_object_object_add(doc, "role", json_object_new_string("server"));
	json_object_object_add(doc, "params", rr_params_json(p));
	json_object_object_add(doc, "duration_s", wl_jdouble((double)(end - start) / 1e9));
	/* how long after the server was ready its first request came (null: none came) */
	json_object_object_add(doc, "first_request_s", first ? wl_jdouble((double)(first - start) / 1e9) : NULL);
	json_object_object_add(doc, "received", wl_jint(received));
	json_object_object_add(doc, "echoed", wl_jint(echoed));
	/* receive calls that brought data, and how many of them asked for one
	 * datagram (wl_rxbatch: requests arriving one at a time) */
	json_object_object_add(doc, "receive_calls", wl_jint(receives));
	json_object_object_add(doc, "single_receives", wl_jint(singles));
	json_object_object_add(doc, "errors", wl_jint(wl_errs_total(errs)));
	json_object_object_add(doc, "errors_by_errno", wl_errs_json(errs));
	json_object_object_add(doc, "stopped_early", json_object_new_boolean(wl_stop != 0));
	rc = wl_print_doc(doc) ? 1 : 0;
out:
	for (i = 0; i < p->g.threads; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
		free(th[i].bufs);
	}
	free(th);
	free(fds);
	free(errs);
	return rc;
}

static int rr_run(struct wl_gen *g)
{
	struct rr_params *p = container_of(g, struct rr_params, g);

	return g->listen ? rr_server(p) : rr_client(p);
}

int udp_rr_main(int argc, char **argv)
{
	struct rr_params p = { .g.ready_fd = -1 };

	return wl_gen_main(argc, argv, rr_usage, &p.g, rr_parse, rr_run);
}
