/* udp_tx.c: UDP transmit generator (sendmmsg, sendto or io_uring senders) and a counting sink. */
#include <errno.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "util.h"
#include "wl.h"
#include "workloads.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif

#define TX_MAX_SIZE 65507L
#define TX_MAX_SEGS 64L		/* UDP_MAX_SEGMENTS of older kernels */
#define TX_MAX_BATCH 1024L
#define TX_SINK_BATCH 64
#define TX_SINK_BUF 2048
/*
 * The sink does not block in recvmmsg() by default: it drains its socket
 * without waiting and sleeps this long when the queue is empty. A receiver
 * that blocks makes every sender pay a cross-CPU wakeup for nearly every
 * datagram (sock_def_readable -> try_to_wake_up, an IPI: a VM exit on a
 * virtual machine); measured on the 2-CPU lab VM that was 15% of the sending
 * thread's CPU. 200 us of packets fit the 8 MiB receive buffer many times
 * over at any rate this machine reaches.
 */
#define TX_SINK_POLL_US 200

static const char tx_usage[] =
	"usage: klab-udp-tx send --addr A --port P [--threads T] [--size N]\n"
	"                        [--engine sendmmsg|sendto|io_uring] [--batch B] [--gso N]\n"
	"                        [--rate PPS] --duration S [--warmup S] [--cpus LIST] [-6]\n"
	"                        [--ops N [--warmup-ops N] [--window-fd N [--window-ack-fd N]]]\n"
	"                        [--seed S [--src-ports LO-HI]]\n"
	"       klab-udp-tx sink --port P [--addr A] [--threads T] --duration S [--warmup S]\n"
	"                        [--poll-us N] [--cpus LIST] [-6] [--ready-fd N] [--start-wait S]\n"
	"                        [--idle-end S]\n";

enum tx_engine { ENGINE_SENDMMSG, ENGINE_SENDTO, ENGINE_IO_URING };
static const char *const engine_names[] = { "sendmmsg", "sendto", "io_uring" };

struct tx_params {
	struct wl_gen g;	/* g.listen: the sink */
	long size, batch, gso, rate;
	long poll_us;		/* sink: 0 blocks in recvmmsg, else drain and sleep this long */
	enum tx_engine engine;
	long segs;		/* packets per send: ceil(size / gso) with GSO, else 1 */
};

static int tx_parse(int argc, char **argv, struct wl_gen *g)
{
	static const char *const send_only[] = { "size", "engine", "batch", "gso", "rate", NULL };
	static const char *const sink_only[] = { "poll-us", "ready-fd", "start-wait", NULL };
	struct tx_params *p = container_of(g, struct tx_params, g);
	const char *size = NULL, *engine = NULL, *batch = NULL, *gso = NULL, *rate = NULL, *poll = NULL;
	struct wl_opt opts[] = {
		{ "addr", 1, &g->addr_s }, { "port", 1, &g->arg.port }, { "threads", 1, &g->arg.threads },
		{ "size", 1, &size }, { "engine", 1, &engine }, { "batch", 1, &batch },
		{ "gso", 1, &gso }, { "rate", 1, &rate }, { "duration", 1, &g->arg.duration },
		{ "warmup", 1, &g->arg.warmup }, { "cpus", 1, &g->cpus_s }, { "6", 0, &g->arg.v6 },
		{ "poll-us", 1, &poll }, { "ready-fd", 1, &g->arg.ready_fd },
		{ "start-wait", 1, &g->arg.start_wait },
		{ "ops", 1, &g->arg.ops }, { "warmup-ops", 1, &g->arg.warmup_ops }, { "seed", 1, &g->arg.seed },
		{ "src-ports", 1, &g->arg.src_ports }, { "idle-end", 1, &g->arg.idle_end },
		{ "window-fd", 1, &g->arg.window_fd }, { "window-ack-fd", 1, &g->arg.window_ack_fd },
		{ NULL, 0, NULL },
	};
	int role = wl_gen_role(argc, argv, "send", "sink");
	size_t i;

	if (role < 0)
		return -1;
	g->listen = role == 1;
	if (wl_parse_opts(argc, argv, 2, opts))
		return -1;
	if (wl_gen_only(opts, g->listen ? send_only : sink_only, g->listen ? "sender" : "sink"))
		return -1;
	p->size = 64;
	p->batch = 64;
	p->segs = 1;
	p->poll_us = TX_SINK_POLL_US;
	if (wl_gen_times(g))
		return -1;
	if (!g->listen && !g->addr_s)
		return error("missing --addr");
	if (size && wl_arg_long("size", size, 1, TX_MAX_SIZE, &p->size))
		return -1;
	if (batch && wl_arg_long("batch", batch, 1, TX_MAX_BATCH, &p->batch))
		return -1;
	if (rate && wl_arg_long("rate", rate, 0, 1000000000L, &p->rate))
		return -1;
	if (poll && wl_arg_long("poll-us", poll, 0, 100000L, &p->poll_us))
		return -1;
	if (wl_gen_listen(g))
		return -1;
	if (engine) {
		for (i = 0; i < ARRAY_SIZE(engine_names); i++)
			if (!strcmp(engine, engine_names[i]))
				break;
		if (i == ARRAY_SIZE(engine_names))
			return error("invalid --engine '%s': expected sendmmsg, sendto or io_uring", engine);
		p->engine = (enum tx_engine)i;
	}
	if (gso) {
		if (wl_arg_long("gso", gso, 1, TX_MAX_SIZE, &p->gso))
			return -1;
		p->segs = (p->size + p->gso - 1) / p->gso;
		if (p->segs > TX_MAX_SEGS)
			return error("invalid --gso '%s': --size %ld would make %ld segments (at most %ld)",
				     gso, p->size, p->segs, TX_MAX_SEGS);
	}
	if (wl_gen_where(g))
		return -1;
	return wl_gen_work(g, g->listen ? 0 : g->threads, p->segs);
}

static struct json_object *tx_params_json(const struct tx_params *p)
{
	struct json_object *o = wl_gen_params_json(&p->g);

	if (!p->g.listen) {
		json_object_object_add(o, "size", wl_jint((uint64_t)p->size));
		json_object_object_add(o, "engine", json_object_new_string(engine_names[p->engine]));
		json_object_object_add(o, "batch", wl_jint((uint64_t)p->batch));
		json_object_object_add(o, "gso", wl_jint((uint64_t)p->gso));
		json_object_object_add(o, "rate_pps", wl_jint((uint64_t)p->rate));
	} else {
		json_object_object_add(o, "poll_us", wl_jint((uint64_t)p->poll_us));
		json_object_object_add(o, "start_wait_s", wl_jdouble((double)p->g.start_wait_ms / 1000.0));
	}
	json_object_object_add(o, "duration_s", wl_jdouble((double)p->g.duration_ms / 1000.0));
	json_object_object_add(o, "warmup_s", wl_jdouble((double)p->g.warmup_ms / 1000.0));
	json_object_object_add(o, "cpus", p->g.cpus_s ? json_object_new_string(p->g.cpus_s) : NULL);
	wl_gen_params_work(&p->g, o);
	return o;
}

/* One worker (sender or sink) and its counters; *_win are the measured window's. */
struct tx_thread {
	pthread_t tid;
	int idx;
	int fd;
	const struct tx_params *p;
	uint64_t warm_ns, end_ns;	/* a sink's first packet may move them (--start-wait) */
	struct tx_run *run;
	struct wl_work *work;		/* --ops: the run's, shared */
	const int *stop;
	uint64_t pkts_all, bytes_all, calls_all;
	uint64_t pkts_win, bytes_win;	/* read by the main thread for the series */
	struct wl_errs errs_all, errs_win;
	struct io_uring ring;
	unsigned ring_entries;
	int ring_ok;
	char *buf;
	int failed;
};

static void tx_work_edges(struct tx_thread *t, uint64_t now, int edges);

static void tx_count(struct tx_thread *t, uint64_t now, uint64_t pkts, uint64_t bytes)
{
	t->pkts_all += pkts;
	t->bytes_all += bytes;
	if (t->p->g.ops && !t->p->g.listen) {	/* the window is packets W+1 .. W+N, as they complete */
		int edges;
		uint64_t in = wl_work_done(t->work, pkts, &edges);

		if (in) {
			WL_ADD(&t->pkts_win, in);
			WL_ADD(&t->bytes_win, bytes * in / pkts);
		}
		if (edges)
			tx_work_edges(t, now, edges);
	} else if (now >= WL_LOAD(&t->warm_ns) && now < WL_LOAD(&t->end_ns)) {
		WL_ADD(&t->pkts_win, pkts);
		WL_ADD(&t->bytes_win, bytes);
	}
}

static void tx_error(struct tx_thread *t, uint64_t now, int err)
{
	wl_errs_add(&t->errs_all, err);
	if (now >= WL_LOAD(&t->warm_ns) && now < WL_LOAD(&t->end_ns))
		wl_errs_add(&t->errs_win, err);
}

/*
 * Rate cap: each thread sends rate/threads packets per second, paced per
 * batch against the time the packets sent so far were due.
 */
static void tx_pace(struct tx_thread *t, uint64_t start, uint64_t sent, double pps)
{
	uint64_t due, now;

	if (pps <= 0)
		return;
	due = start + (uint64_t)((double)sent * 1e9 / pps);
	now = wl_now_ns();
	if (due <= now)
		return;
	if (due > t->end_ns)
		due = t->end_ns;
	wl_sleep_until(due);
}

static int tx_send_loop(struct tx_thread *t)
{
	const struct tx_params *p = t->p;
	struct mmsghdr *msgs = NULL;
	struct iovec iov = { t->buf, (size_t)p->size };
	double pps = p->rate > 0 ? (double)p->rate / (double)p->g.threads : 0;
	unsigned batch = (unsigned)p->batch, inflight = 0;
	uint64_t start = wl_now_ns(), sent = 0, now = start;
	long i;

	if (pps > 0 && batch > 1 && pps / 1000.0 < batch)	/* at most ~1 ms of packets per batch */
		batch = pps / 1000.0 < 1 ? 1 : (unsigned)(pps / 1000.0);
	if (p->engine == ENGINE_SENDMMSG) {
		msgs = xcalloc(batch, sizeof(*msgs));
		for (i = 0; i < (long)batch; i++) {
			msgs[i].msg_hdr.msg_iov = &iov;
			msgs[i].msg_hdr.msg_iovlen = 1;
		}
	}
	while (!wl_stop && !WL_LOAD(t->stop) && now < WL_LOAD(&t->end_ns)) {
		int r;

		if (p->g.window_ack_fd > 0)	/* another thread's window start is being acknowledged */
			wl_window_hold();
		tx_pace(t, start, sent, pps);
		if (p->engine == ENGINE_SENDMMSG) {
			unsigned n = batch;

			if (p->g.ops) {	/* never more than the budget: the last batch is cut */
				n = (unsigned)(wl_work_take(t->work, (uint64_t)batch * (uint64_t)p->segs) /
					       (uint64_t)p->segs);
				if (!n)
					break;
			}
			r = sendmmsg(t->fd, msgs, n, 0);
			now = wl_now_ns();
			t->calls_all++;
			if (p->g.ops && (unsigned)(r < 0 ? 0 : r) < n)
				wl_work_give(t->work, (uint64_t)(n - (unsigned)(r < 0 ? 0 : r)) * (uint64_t)p->segs);
			if (r < 0) {
				tx_error(t, now, errno);
				continue;
			}
			sent += (uint64_t)r * (uint64_t)p->segs;
			tx_count(t, now, (uint64_t)r * (uint64_t)p->segs, (uint64_t)r * (uint64_t)p->size);
		} else if (p->engine == ENGINE_SENDTO) {
			unsigned k;

			for (k = 0; k < batch; k++) {
				ssize_t n;

				if (p->g.ops && !wl_work_take(t->work, (uint64_t)p->segs))
					goto done;
				n = sendto(t->fd, t->buf, (size_t)p->size, 0, NULL, 0);
				now = wl_now_ns();
				t->calls_all++;
				if (n < 0) {
					if (p->g.ops)
						wl_work_give(t->work, (uint64_t)p->segs);
					tx_error(t, now, errno);
					continue;
				}
				sent += (uint64_t)p->segs;
				tx_count(t, now, (uint64_t)p->segs, (uint64_t)n);
			}
		} else {
			struct io_uring_cqe *cqe;
			struct io_uring_sqe *sqe;
			unsigned head, seen = 0, want = t->ring_entries - inflight, k, bad = 0;
			uint64_t okb = 0;

			/*
			 * Keep `ring_entries` sends in flight (a send that waits for
			 * buffer space completes later: never more than the ring).
			 * The budget is reserved for the whole refill and the
			 * completions are counted once per reap, all at the same
			 * clock: two atomic updates per refill and per reap, not
			 * per packet, so --ops adds little to the path it times.
			 */
			if (p->g.ops && want)
				want = (unsigned)(wl_work_take(t->work, (uint64_t)want * (uint64_t)p->segs) /
						  (uint64_t)p->segs);
			for (k = 0; k < want; k++) {
				if (!(sqe = io_uring_get_sqe(&t->ring))) {
					if (p->g.ops)
						wl_work_give(t->work, (uint64_t)(want - k) * (uint64_t)p->segs);
					break;
				}
				io_uring_prep_send(sqe, 0, t->buf, (size_t)p->size, 0);
				sqe->flags |= IOSQE_FIXED_FILE;
				inflight++;
			}
			if (!inflight)
				break;	/* --ops: the budget is spent and every send completed */
			r = io_uring_submit_and_wait(&t->ring, 1);
			now = wl_now_ns();
			t->calls_all++;
			if (r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY) {
				error("io_uring submit failed in thread %d: %s", t->idx, strerror(-r));
				t->failed = 1;
				break;
			}
			io_uring_for_each_cqe(&t->ring, head, cqe) {
				seen++;
				if (cqe->res < 0) {
					bad++;
					tx_error(t, now, -cqe->res);
				} else {
					okb += (uint64_t)cqe->res;
				}
			}
			io_uring_cq_advance(&t->ring, seen);
			inflight -= seen;
			if (p->g.ops && bad)
				wl_work_give(t->work, (uint64_t)bad * (uint64_t)p->segs);
			if (seen > bad) {
				sent += (uint64_t)(seen - bad) * (uint64_t)p->segs;
				tx_count(t, now, (uint64_t)(seen - bad) * (uint64_t)p->segs, okb);
			}
		}
	}
done:
	if (p->engine == ENGINE_IO_URING) {
		/* drain what is still in flight so every counted send completed */
		struct io_uring_cqe *cqe;
		struct __kernel_timespec ts = { 0, 200000000 };

		while (inflight > 0 && io_uring_wait_cqe_timeout(&t->ring, &cqe, &ts) == 0) {
			inflight--;
			if (cqe->res >= 0)
				tx_count(t, wl_now_ns(), (uint64_t)p->segs, (uint64_t)cqe->res);
			io_uring_cqe_seen(&t->ring, cqe);
		}
	}
	free(msgs);
	return t->failed ? -1 : 0;
}

static void *tx_send_thread(void *arg)
{
	struct tx_thread *t = arg;

	if (wl_pin_self(&t->p->g.cpus, t->idx) || tx_send_loop(t))
		t->failed = 1;
	return NULL;
}

struct tx_run {
	struct tx_thread *th;
	long n;
	int stop;
	struct wl_work work;	/* --ops */
	long idle;		/* sink threads ended by --idle-end */
	uint64_t win_start, win_end;	/* --ops: the window's edges as reached (0: not yet) */
	uint64_t first_ns;	/* a sink's first packet (0: none yet) */
	uint64_t wait_end_ns;	/* --start-wait: a first packet after this moves nothing */
};

/*
 * A sink's first packet, whichever thread saw it. With --start-wait the
 * warmup and the duration run from it: a sender whose agent started late
 * still finds the sink there, and the sink's window covers its packets.
 */
static void tx_first_packet(struct tx_thread *t, uint64_t now)
{
	struct tx_run *r = t->run;
	uint64_t warm = now + (uint64_t)t->p->g.warmup_ms * 1000000u;

	if (!wl_first_datagram(&r->first_ns, now, t->p->g.start_wait_ms, r->wait_end_ns))
		return;
	for (long i = 0; i < r->n; i++) {
		WL_STORE(&r->th[i].warm_ns, warm);
		WL_STORE(&r->th[i].end_ns, warm + (uint64_t)t->p->g.duration_ms * 1000000u);
	}
}

/* --ops: the thread that completed packet W or W + N records the edge; at the end every sender stops. */
static void tx_work_edges(struct tx_thread *t, uint64_t now, int edges)
{
	struct tx_run *r = t->run;
	long i;

	if (edges & WL_WORK_WARM) {
		now = wl_window_start(&t->p->g, now);	/* with --window-ack-fd, the clock after the ack */
		WL_STORE(&r->win_start, now);
		for (i = 0; i < r->n; i++)
			WL_STORE(&r->th[i].warm_ns, now);
	}
	if (edges & WL_WORK_END) {
		WL_STORE(&r->win_end, now);
		for (i = 0; i < r->n; i++)
			WL_STORE(&r->th[i].end_ns, now);
		wl_window_mark(&t->p->g, "end");
	}
}

static void *tx_sink_thread(void *arg)
{
	struct tx_thread *t = arg;
	struct mmsghdr msgs[TX_SINK_BATCH];
	struct iovec iov[TX_SINK_BATCH];
	struct timespec poll = { t->p->poll_us / 1000000, t->p->poll_us % 1000000 * 1000 };
	uint64_t last = 0;	/* the last datagram (--idle-end) */
	int i;

	if (wl_pin_self(&t->p->g.cpus, t->idx)) {
		t->failed = 1;
		return NULL;
	}
	memset(msgs, 0, sizeof(msgs));
	for (i = 0; i < TX_SINK_BATCH; i++) {
		iov[i].iov_base = t->buf + (size_t)i * TX_SINK_BUF;
		iov[i].iov_len = TX_SINK_BUF;
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	while (!wl_stop && wl_now_ns() < WL_LOAD(&t->end_ns)) {
		uint64_t bytes = 0, now;
		int n = recvmmsg(t->fd, msgs, TX_SINK_BATCH,
				 MSG_TRUNC | (poll.tv_nsec ? MSG_DONTWAIT : MSG_WAITFORONE), NULL);

		now = wl_now_ns();
		t->calls_all++;
		if (n < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				tx_error(t, now, errno);
			else if (t->p->g.idle_end_ms && last &&
				 now - last >= (uint64_t)t->p->g.idle_end_ms * 1000000u) {
				/* --idle-end: the sender is done; the last thread to see it ends the series */
				if (__atomic_add_fetch(&t->run->idle, 1, __ATOMIC_RELAXED) == t->run->n)
					WL_STORE(&t->run->stop, 1);
				break;
			}
			else if (poll.tv_nsec)
				nanosleep(&poll, NULL);
			continue;
		}
		last = now;
		if (n > 0 && !WL_LOAD(&t->run->first_ns))
			tx_first_packet(t, now);
		for (i = 0; i < n; i++)
			bytes += msgs[i].msg_len;
		tx_count(t, now, (uint64_t)n, bytes);
	}
	return NULL;
}

/* Open and connect a sender's socket (and its ring), bound to src_port when not 0: 0 or -1 (logged). */
static int tx_open_sender(struct tx_thread *t, uint16_t src_port)
{
	const struct tx_params *p = t->p;
	char as[80];
	int ret;

	t->fd = socket(p->g.addr.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (t->fd < 0)
		return error_errno("cannot open a UDP socket");
	if (src_port) {
		char what[32];

		snprintf(what, sizeof(what), "sender thread %d", t->idx);
		if (wl_bind_src(&p->g, t->fd, src_port, what))
			return -1;
	}
	if (connect(t->fd, (const struct sockaddr *)&p->g.addr, p->g.addrlen))
		return error_errno("cannot connect to %s%s", wl_addr_str(&p->g.addr, as, sizeof(as)),
				   errno == EINVAL ? " (a blackhole or prohibit route?)" : "");
	if (p->gso) {
		int g = (int)p->gso;

		if (setsockopt(t->fd, SOL_UDP, UDP_SEGMENT, &g, sizeof(g)))
			return error_errno("cannot set UDP_SEGMENT (--gso %ld)", p->gso);
	}
	if (p->engine == ENGINE_IO_URING) {
		struct io_uring_probe *probe;
		unsigned entries = (unsigned)p->batch < 8 ? 8 : (unsigned)p->batch;

		t->ring_entries = entries;
		ret = io_uring_queue_init(entries, &t->ring, 0);
		if (ret < 0)
			return error("io_uring is not available here: %s%s", strerror(-ret),
				     ret == -EPERM || ret == -ENOSYS ?
				     " (disabled by sysctl kernel.io_uring_disabled or not built in)" : "");
		t->ring_ok = 1;
		probe = io_uring_get_probe_ring(&t->ring);
		if (!probe || !io_uring_opcode_supported(probe, IORING_OP_SEND)) {
			if (probe)
				io_uring_free_probe(probe);
			return error("io_uring on this kernel has no IORING_OP_SEND (needs Linux 5.6)");
		}
		io_uring_free_probe(probe);
		ret = io_uring_register_files(&t->ring, &t->fd, 1);
		if (ret < 0)
			return error("cannot register the socket with io_uring: %s", strerror(-ret));
	}
	return 0;
}

static uint64_t tx_sum_pkts(void *ctx)
{
	struct tx_run *r = ctx;
	uint64_t s = 0;
	long i;

	for (i = 0; i < r->n; i++)
		s += WL_LOAD(&r->th[i].pkts_win);
	return s;
}

static int tx_run(struct tx_params *p)
{
	struct tx_run run = { 0 };
	struct tx_thread *th = xcalloc((size_t)p->g.threads, sizeof(*th));
	struct wl_errs *errs_all = xcalloc(1, sizeof(*errs_all)), *errs_win = xcalloc(1, sizeof(*errs_win));
	struct json_object *doc = NULL, *series = NULL, *o;
	uint64_t start, warm, end, first = 0, pkts = 0, bytes = 0, pkts_all = 0, bytes_all = 0, calls = 0, now;
	int *fds = xcalloc((size_t)p->g.threads, sizeof(int));
	uint16_t *ports = NULL;	/* --seed: thread i's source port */
	long i, started = 0;
	int rc = 1;
	double secs;

	run.th = th;
	run.n = p->g.threads;
	if (p->g.ops)
		wl_work_init(&run.work, (uint64_t)p->g.warmup_ops, (uint64_t)p->g.ops);
	if (p->g.seeded && !p->g.listen) {
		ports = xcalloc((size_t)p->g.threads, sizeof(*ports));
		if (wl_seed_ports(p->g.seed, p->g.src_lo, p->g.src_hi, p->g.threads, ports))
			goto out;
	}
	for (i = 0; i < p->g.threads; i++)
		th[i].fd = fds[i] = -1;
	if (p->g.listen) {
		if (wl_bind_group(&p->g.addr, p->g.addrlen, (int)p->g.threads, fds))
			goto out;
		for (i = 0; i < p->g.threads; i++)
			th[i].fd = fds[i];
	}
	for (i = 0; i < p->g.threads; i++) {
		struct tx_thread *t = &th[i];

		t->idx = (int)i;
		t->p = p;
		t->run = &run;
		t->work = &run.work;
		t->stop = &run.stop;
		if (p->g.listen) {
			t->buf = xcalloc(TX_SINK_BATCH, TX_SINK_BUF);
			wl_set_rcvbuf(t->fd, 8 << 20);
			if (wl_set_timeouts(t->fd, 100, 0))
				goto out;
		} else {
			t->buf = xcalloc(1, (size_t)p->size);
			if (tx_open_sender(t, ports ? ports[i] : 0))
				goto out;
		}
	}
	start = wl_now_ns();
	run.wait_end_ns = start + (uint64_t)p->g.start_wait_ms * 1000000u;
	/* a sink with --start-wait: this window if no packet comes, else its first packet's */
	warm = start + (uint64_t)(p->g.start_wait_ms + p->g.warmup_ms) * 1000000u;
	end = warm + (uint64_t)p->g.duration_ms * 1000000u;
	if (p->g.ops) {		/* --duration is the limit; the edges come with the work */
		run.win_start = p->g.warmup_ops ? 0 : wl_window_start(&p->g, start);
		warm = p->g.warmup_ops ? UINT64_MAX : run.win_start;
		end = start + (uint64_t)p->g.duration_ms * 1000000u;
	}
	for (i = 0; i < p->g.threads; i++) {
		th[i].warm_ns = warm;
		th[i].end_ns = end;
	}
	for (i = 0; i < p->g.threads; i++, started++) {
		int err = pthread_create(&th[i].tid, NULL, p->g.listen ? tx_sink_thread : tx_send_thread, &th[i]);

		if (err) {
			error("cannot start thread %ld: %s", i, strerror(err));
			WL_STORE(&run.stop, 1);
			break;
		}
	}
	if (started == p->g.threads) {
		wl_ready(&p->g.ready_fd);	/* a sink is bound and every thread receives */
		if (p->g.start_wait_ms) {
			while (!wl_stop && !WL_LOAD(&run.first_ns) && wl_now_ns() < run.wait_end_ns)
				wl_sleep_until(wl_now_ns() + 1000000u);
			/* the same window tx_first_packet() gave the threads */
			first = WL_LOAD(&run.first_ns);
			if (first && first <= run.wait_end_ns) {
				warm = first + (uint64_t)p->g.warmup_ms * 1000000u;
				end = warm + (uint64_t)p->g.duration_ms * 1000000u;
			}
		}
		/* a run sized by work has no series: its edges are not known ahead */
		if (!p->g.ops)
			series = wl_series(warm, end, "pps", tx_sum_pkts, &run, &run.stop);
	}
	if (!p->g.ops || started < p->g.threads)
		WL_STORE(&run.stop, 1);	/* (a run sized by work ends by itself) */
	for (i = 0; i < started; i++)
		pthread_join(th[i].tid, NULL);
	if (started < p->g.threads)
		goto out;
	for (i = 0; i < p->g.threads; i++) {
		if (th[i].failed)
			goto out;
		pkts += th[i].pkts_win;
		bytes += th[i].bytes_win;
		pkts_all += th[i].pkts_all;
		bytes_all += th[i].bytes_all;
		calls += th[i].calls_all;
		wl_errs_merge(errs_all, &th[i].errs_all);
		wl_errs_merge(errs_win, &th[i].errs_win);
	}
	now = wl_now_ns();
	if (p->g.ops) {		/* from the warm-up's last packet to the window's last */
		uint64_t a = run.win_start, b = run.win_end ? run.win_end : now < end ? now : end;

		secs = a && b > a ? (double)(b - a) / 1e9 : 0;
	} else {
		now = now > end ? end : now;
		secs = now > warm ? (double)(now - warm) / 1e9 : 0;
	}

	doc = json_object_new_object();
	json_object_object_add(doc, "schema", json_object_new_string("klab-udp-tx/1"));
	json_object_object_add(doc, "role", json_object_new_string(p->g.listen ? "sink" : "send"));
	json_object_object_add(doc, "params", tx_params_json(p));
	wl_window_ack_json(&p->g, doc, WL_LOAD(&run.win_start), WL_LOAD(&run.win_end));
	json_object_object_add(doc, "warmup_s", wl_jdouble((double)p->g.warmup_ms / 1000.0));
	if (p->g.listen) {
		/* how long after the sink was ready its first packet came (null: none came) */
		first = WL_LOAD(&run.first_ns);
		json_object_object_add(doc, "first_packet_s", first ? wl_jdouble((double)(first - start) / 1e9) : NULL);
	}
	json_object_object_add(doc, "duration_s", wl_jdouble(secs));
	json_object_object_add(doc, "packets", wl_jint(pkts));
	json_object_object_add(doc, "bytes", wl_jint(bytes));
	json_object_object_add(doc, "pps", wl_jdouble(secs > 0 ? (double)pkts / secs : 0));
	json_object_object_add(doc, "bps", wl_jdouble(secs > 0 ? (double)bytes * 8 / secs : 0));
	json_object_object_add(doc, "errors", wl_errs_json(errs_win));
	json_object_object_add(doc, "errors_total", wl_jint(wl_errs_total(errs_win)));
	json_object_object_add(doc, "series", series ? series : json_object_new_array());
	series = NULL;
	o = json_object_new_object();
	json_object_object_add(o, "packets", wl_jint(pkts_all));
	json_object_object_add(o, "bytes", wl_jint(bytes_all));
	json_object_object_add(o, "calls", wl_jint(calls));
	json_object_object_add(o, "errors", wl_errs_json(errs_all));
	json_object_object_add(o, "errors_total", wl_jint(wl_errs_total(errs_all)));
	json_object_object_add(doc, "total", o);
	json_object_object_add(doc, "stopped_early", json_object_new_boolean(wl_stop != 0));
	rc = wl_print_doc(doc) ? 1 : 0;
	doc = NULL;
	if (!rc && !p->g.listen && !pkts_all) {
		char as[80];

		error("no packet could be sent to %s: %llu errors",
		      wl_addr_str(&p->g.addr, as, sizeof(as)),
		      (unsigned long long)wl_errs_total(errs_all));
		rc = 1;
	} else if (!rc && p->g.ops && !run.win_end && !wl_stop) {
		error("the run sent %llu of %ld packets before its time limit of %.1f s",
		      (unsigned long long)pkts, p->g.ops, (double)p->g.duration_ms / 1000.0);
		rc = 1;
	}
out:
	free(ports);
	json_object_put(series);
	json_object_put(doc);
	for (i = 0; i < p->g.threads; i++) {
		if (th[i].ring_ok)
			io_uring_queue_exit(&th[i].ring);
		if (th[i].fd >= 0)
			close(th[i].fd);
		free(th[i].buf);
	}
	free(th);
	free(fds);
	free(errs_all);
	free(errs_win);
	return rc;
}

static int tx_main_run(struct wl_gen *g)
{
	return tx_run(container_of(g, struct tx_params, g));
}

int udp_tx_main(int argc, char **argv)
{
	struct tx_params p = { .g.ready_fd = -1 };

	return wl_gen_main(argc, argv, tx_usage, &p.g, tx_parse, tx_main_run);
}
