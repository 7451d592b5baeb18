/* wl.h: helpers shared by the traffic generators (options, addresses, CPUs, clocks, JSON). */
#ifndef KLAB_WL_H
#define KLAB_WL_H

#include <signal.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#include <json-c/json.h>

/*
 * Options. A table of wl_opt ends with a zero entry. Long options are
 * written "--name VALUE" or "--name=VALUE"; a one-letter name ("6") is
 * the flag "-6". A flag's value is set to "1"; a repeated option keeps the
 * last value.
 */
struct wl_opt {
	const char *name;
	int has_arg;
	const char **value;
};

/*
 * Parse argv[first..argc-1] against `opts`. Returns 0, or -1 after
 * printing "unknown option '--x'", "option '--x' needs a value" or
 * "unexpected argument 'x'" (the caller then prints its usage and exits 2).
 */
int wl_parse_opts(int argc, char **argv, int first, const struct wl_opt *opts);

/*
 * Converters for option values. `name` is the option without dashes and is
 * quoted in the message, e.g. "invalid --flows '0': expected an integer
 * from 1 to 100000". Return 0 or -1 (message printed).
 */
int wl_arg_long(const char *name, const char *val, long min, long max, long *out);
/* A duration ("10", "10s", "500ms", "2m") between min_ms and max_ms. */
int wl_arg_duration(const char *name, const char *val, long min_ms, long max_ms, long *out_ms);

/* A parsed CPU list ("0-3,6"): cpus[n]. */
struct wl_cpus {
	int *cpu;
	int n;
};
/* Parse a CPU list; each CPU must exist on this machine. 0 or -1 (message names --NAME). */
int wl_arg_cpus(const char *name, const char *val, struct wl_cpus *out);
void wl_cpus_release(struct wl_cpus *c);
/* Pin the calling thread to cpus[i % n] (no-op when the list is empty). 0 or -1 (logged). */
int wl_pin_self(const struct wl_cpus *c, int i);

/*
 * A numeric IPv4 or IPv6 address (no name lookup: the generators send only
 * where they are told). `val` NULL means the wildcard address. The family
 * is AF_INET6 when `v6` is set, else AF_INET; an address of the other
 * family is an error naming --NAME.
 */
int wl_arg_addr(const char *name, const char *val, int v6, int port,
		struct sockaddr_storage *ss, socklen_t *len);
/* "198.18.0.1:9000" or "[::1]:9000" into buf (at least 64 bytes). */
const char *wl_addr_str(const struct sockaddr_storage *ss, char *buf, size_t size);

/*
 * What both generators share. Each has a role that sends (udp-rr's client,
 * udp-tx's send) and one that binds and listens (server, sink), and the same
 * options for where, how long and on which CPUs. A generator's parameters
 * embed a struct wl_gen as `g`; its wl_opt table points the shared options
 * at g's fields (addr_s, cpus_s) and at g.arg (the rest, as given), and its
 * parse function calls the wl_gen_* checks below at the points its own
 * checks leave for them, so the first bad option is the one reported.
 */
struct wl_gen {
	int listen;			/* the listening role (server, sink) */
	int v6;
	const char *addr_s, *cpus_s;	/* as given (NULL: not given) */
	long port, threads;
	long duration_ms, warmup_ms;
	long start_wait_ms;		/* listener: the run starts with the first datagram, waited for at most this long (0: at once) */
	int ready_fd;			/* listener: where to say "ready" (-1: nowhere) */
	struct wl_cpus cpus;
	struct sockaddr_storage addr;
	socklen_t addrlen;
	/* the sending role: a run sized by work, seeded source ports (wl_gen_work) */
	long ops, warmup_ops;		/* --ops, --warmup-ops (0: the window is timed by --duration) */
	int seeded;			/* --seed was given */
	unsigned long seed;
	long src_lo, src_hi;		/* --src-ports LO-HI (default WL_SRC_PORTS_LO-HI) */
	long idle_end_ms;		/* listener: --idle-end (0: run to the deadline) */
	int window_fd;			/* --window-fd: where the window's edges are said (0: nowhere) */
	int window_ack_fd;		/* --window-ack-fd: where the window's start is acknowledged (0: not waited for) */
	struct {			/* the other shared options, as given */
		const char *port, *threads, *duration, *warmup, *v6, *ready_fd, *start_wait;
		const char *ops, *warmup_ops, *seed, *src_ports, *idle_end, *window_fd, *window_ack_fd;
	} arg;
};

/*
 * The role in argv[1]: 0 for `a`, 1 for `b`, or -1 after "missing role: 'a'
 * or 'b'" / "unknown role 'x': expected 'a' or 'b'".
 */
int wl_gen_role(int argc, char **argv, const char *a, const char *b);
/*
 * The first option of `names` (NULL-ended, names of `opts`) that was given:
 * -1 after "option '--NAME' is for the ROLE only"; 0 when none was.
 */
int wl_gen_only(const struct wl_opt *opts, const char *const *names, const char *role);
/*
 * Defaults (one thread) and, in this order: --port (0 allowed for a
 * listener), --duration (required, 100 ms to 24 h), --warmup (up to 1 h),
 * --threads (1 to 1024), -6. 0 or -1 (message printed).
 */
int wl_gen_times(struct wl_gen *g);
/* A listener's --ready-fd, then --start-wait (up to 1 h). 0 or -1 (message printed). */
int wl_gen_listen(struct wl_gen *g);
/* --cpus, then --addr (the wildcard for a listener without one). 0 or -1 (message printed). */
int wl_gen_where(struct wl_gen *g);
/* The shared head of a document's "params": addr (when given), port, ipv6, threads. */
struct json_object *wl_gen_params_json(const struct wl_gen *g);

/*
 * Work and seed (docs/workloads.md, "Runs sized by work" and "Seeded
 * ports"), checked after wl_gen_where(): --ops N and --warmup-ops W (the
 * sending role; with --ops the warm-up is W operations, so --warmup is
 * refused, and --duration is the time limit of the whole run), --seed S and
 * --src-ports LO-HI (the sending role: its `nsock` sockets bind source ports
 * drawn from LO-HI by S, wl_seed_ports(); `nsock` must fit in the range),
 * --idle-end S (the listening role), --window-fd N (the sending role, with
 * --ops), --window-ack-fd N (with --window-fd). `unit` is how many operations one send makes (GSO segments):
 * --ops and --warmup-ops must be multiples of it.
 * 0 or -1 (message printed).
 */
int wl_gen_work(struct wl_gen *g, long nsock, long unit);
/*
 * The window's edges of a run sized by work (--window-fd N): the line
 * "start" when the window starts (the completion of operation W, or the
 * run's start when W is 0) and "end" when it ends (operation W + N), each
 * written once to descriptor N by the thread that reached the edge, right
 * after it read the clock that times the window. Whoever started the
 * generator (klab-agent run) starts and stops its monitors on these lines,
 * so that what they count (CPU time, instructions) covers the operations the
 * document counts; a run that ends without "end" (its time limit, a signal)
 * closes N by exiting. A failed write is logged once and the run goes on.
 * No-op without --window-fd.
 */
void wl_window_mark(const struct wl_gen *g, const char *what);
/*
 * The window's start, acknowledged (--window-ack-fd A): whoever reads the
 * window's lines takes its snapshots (counters, idle time) while no
 * operation runs and outside the time the window is timed by, then says so
 * with one byte on A. wl_window_start() writes "start" as wl_window_mark()
 * does and, with A, waits until a byte can be read from A: at most
 * WL_WINDOW_ACK_MS, or until A's other end is closed, or a signal stops the
 * run (then it goes on, logs why once, and the document says so, see
 * wl_window_ack_json()). It returns the clock that times the window's
 * start: NOW without A (exactly as before), else the clock read after the
 * wait. While a thread waits, the other sending threads stop in
 * wl_window_hold() at their next operation (a futex: no spinning on the
 * reader's CPU); an operation already in a system call completes, and is
 * counted in the window, as it would be without A. wl_window_hold() returns
 * at once when no start is pending; call it only with A
 * (g->window_ack_fd > 0), so a run without A does what it did before.
 */
#define WL_WINDOW_ACK_MS 30000
uint64_t wl_window_start(const struct wl_gen *g, uint64_t now);
void wl_window_hold(void);
/*
 * With --window-ack-fd, "window_ack" in the document: {"status": "acked",
 * "timed out", "closed" (A's other end closed first), "stopped" (a signal) or
 * "not reached" (the window never started), "wait_s": how long the wait
 * took, "start_ns" and "end_ns": the CLOCK_MONOTONIC times that time the
 * window, START and END (0: not reached), to the nanosecond, so that the
 * reader can count its CPU's busy time over the same span}. Without the
 * option nothing, so documents keep their shape.
 */
void wl_window_ack_json(const struct wl_gen *g, struct json_object *doc, uint64_t start, uint64_t end);
/* Add what wl_gen_work() parsed to a document's "params", only the options given (so documents without them keep their shape). */
void wl_gen_params_work(const struct wl_gen *g, struct json_object *o);

/*
 * Seeded source ports. A sending socket bound by the kernel (connect()
 * without bind()) gets a random ephemeral port, so every run of a many-flow
 * workload lays its sockets out over different hash chains; under icount
 * that alone spreads udp_rr by 0.5-1.6% from run to run. With --seed the
 * generator binds the ports itself: n distinct ports of [lo, hi], the first n of a Fisher-Yates shuffle of
 * the range driven by splitmix64(seed): the same seed gives the same ports
 * in the same order, another seed other ports (the destination port is not
 * left out: on loopback a port the server holds fails to bind, naming it).
 * The default range lies just below Linux's ephemeral range (32768-60999),
 * where no autobind lands.
 * 0, or -1 when n ports do not fit (message printed).
 */
#define WL_SRC_PORTS_LO 16384
#define WL_SRC_PORTS_HI 32767
int wl_seed_ports(unsigned long seed, long lo, long hi, long n, uint16_t *out);
/*
 * Bind socket fd (family of g->addr) to source port `port` on the wildcard
 * address, before its connect(): 0, or -1 after "cannot bind WHAT to source
 * port P (--seed S, ports LO-HI): port in use; give another --seed or
 * --src-ports".
 */
int wl_bind_src(const struct wl_gen *g, int fd, uint16_t port, const char *what);

/*
 * A run sized by work: operations (transactions, packets) are numbered in
 * the order they complete, over all threads; operation k is in the measured
 * window when W < k <= W + N (W = --warmup-ops, N = --ops). The window is
 * timed from the completion of operation W (the run's start when W is 0)
 * to that of operation W + N, by the caller's clock.
 *
 * wl_work_done() counts n operations completed: the number of them in the
 * window, with WL_WORK_WARM / WL_WORK_END set in *edges when operation W /
 * W + N is among them (the caller then records its clock as that edge).
 * wl_work_take() reserves up to n operations not yet started (a sender that
 * must not send more than the budget): how many it may start, 0 when the
 * budget is spent; a reservation never straddles the end of the warm-up.
 * wl_work_give() returns reserved operations that were not done (a failed
 * send).
 */
struct wl_work {
	uint64_t warm, ops;	/* W, N */
	uint64_t done;		/* operations completed */
	uint64_t left;		/* operations not yet reserved (wl_work_take) */
};
#define WL_WORK_WARM 1
#define WL_WORK_END 2
void wl_work_init(struct wl_work *w, uint64_t warm, uint64_t ops);
uint64_t wl_work_done(struct wl_work *w, uint64_t n, int *edges);
uint64_t wl_work_take(struct wl_work *w, uint64_t n);
void wl_work_give(struct wl_work *w, uint64_t n);

/*
 * A generator's main: "--help", "-h" or "help" prints `usage` on stdout
 * (0); else parse(g) (on -1 the usage goes to stderr: 2), then run(g) under
 * the signal handlers and a hard deadline of start wait + warmup + duration
 * + 5 s, returning its exit status. `g` is zeroed but for ready_fd -1 by the
 * caller, which owns the struct around it.
 */
int wl_gen_main(int argc, char **argv, const char *usage, struct wl_gen *g,
		int (*parse)(int argc, char **argv, struct wl_gen *g),
		int (*run)(struct wl_gen *g));

/* Monotonic clock in nanoseconds. */
static inline uint64_t wl_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
/* Sleep until the monotonic time `t_ns` (returns early on a signal). */
void wl_sleep_until(uint64_t t_ns);

/*
 * Run control. wl_stop becomes 1 on SIGINT/SIGTERM (the run then ends
 * early and still prints its document). wl_hard_deadline() arms a timer
 * that, if the run has not finished `ms` from now, prints "hard deadline
 * of N s passed" and _exit(1)s: the backstop when a peer vanished or a
 * call blocks. wl_hard_deadline(0) disarms it.
 */
extern volatile sig_atomic_t wl_stop;
void wl_signals(void);
void wl_hard_deadline(long ms);

/*
 * The ready signal of a server or a sink (`--ready-fd N`): once its sockets
 * are bound and its threads are serving, it writes the line "ready\n" to
 * descriptor N and closes it. Whoever started it (a test, klab-agent) reads
 * that line and only then starts the client, instead of sleeping a guessed
 * while; a generator that fails before it is ready closes N by exiting, so
 * the reader sees end-of-file instead of the line.
 *
 * wl_arg_ready_fd() checks the value: a number from 3 up (0-2 are stdin,
 * stdout with the document, stderr) naming an open descriptor; 0 or -1
 * (message printed). wl_ready() writes and closes (no-op for fd < 0); a
 * failed write is logged and the run goes on.
 */
int wl_arg_ready_fd(const char *name, const char *val, int *out);
void wl_ready(int *fd);

/*
 * Start wait (--start-wait, docs/protocol.md): a server or sink counts its
 * times from the first datagram it receives. wl_first_datagram() records
 * NOW in *first_ns if no thread did before; it returns 1 when the caller's
 * times should start at NOW (it was the first, a start wait was asked
 * for, and NOW is not later than wait_end_ns), else 0.
 */
int wl_first_datagram(uint64_t *first_ns, uint64_t now, long start_wait_ms, uint64_t wait_end_ns);

/* Raise RLIMIT_NOFILE so that `need` descriptors fit (up to the hard limit). */
void wl_raise_nofile(long need);

/*
 * Counters with one writer (a worker thread) that the main thread reads
 * while the run goes on: relaxed atomics, no read-modify-write needed.
 */
#define WL_LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define WL_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define WL_ADD(p, v) __atomic_store_n((p), __atomic_load_n((p), __ATOMIC_RELAXED) + (v), __ATOMIC_RELAXED)

/*
 * Errors counted by errno value, one table per thread (no locking); merged
 * and printed as {"ENOBUFS": 12, ...} with only non-zero entries.
 */
#define WL_MAX_ERRNO 160
struct wl_errs {
	uint64_t n[WL_MAX_ERRNO + 1];	/* the last slot counts errno values beyond the table */
};
static inline void wl_errs_add(struct wl_errs *e, int err)
{
	uint64_t *p = &e->n[err > 0 && err < WL_MAX_ERRNO ? err : WL_MAX_ERRNO];

	__atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}
void wl_errs_merge(struct wl_errs *dst, const struct wl_errs *src);
uint64_t wl_errs_total(const struct wl_errs *e);
struct json_object *wl_errs_json(const struct wl_errs *e);
/* "ENOBUFS" for ENOBUFS; "errno 200" for values without a name here. */
const char *wl_errno_name(int err, char *buf, size_t size);

/* JSON numbers: a double printed with at most 3 decimals, an exact integer. */
struct json_object *wl_jdouble(double v);
struct json_object *wl_jint(uint64_t v);
/* Print the document on stdout (pretty) and free it: 0, or -1 when stdout failed. */
int wl_print_doc(struct json_object *doc);

/*
 * How many datagrams a server's next receive asks for. recvmmsg() with
 * MSG_WAITFORONE for a batch blocks for the first datagram and then tries
 * once more without blocking; when requests come one at a time (one flow, or
 * a few) that second try finds the queue empty: a socket lock and a queue
 * check per transaction that a plain blocking recvmsg() does not pay. After
 * WL_RXBATCH_ONES batches in a row that each brought one datagram, the server
 * asks for one at a time; every WL_RXBATCH_PROBE-th receive asks for a whole
 * batch again, and when that finds more than one queued it goes back to
 * batches, and the run of batches of one it takes to leave them again doubles
 * (up to WL_RXBATCH_ONES_MAX): a queue that comes and goes (many flows) keeps
 * the server on batches, one flow never leaves one at a time. next() gives
 * the count to ask for (1 or max), saw() takes what the receive asked for and
 * what it returned (n < 1: nothing received).
 */
#define WL_RXBATCH_ONES 16
#define WL_RXBATCH_ONES_MAX 4096
#define WL_RXBATCH_PROBE 64

struct wl_rxbatch {
	int single;		/* asking for one datagram at a time */
	unsigned ones;		/* batches in a row that brought one */
	unsigned need;		/* how many it takes (0: WL_RXBATCH_ONES) */
	unsigned calls;		/* receives since single mode began */
	uint64_t receives, singles;	/* receives in all, and those that asked for one */
};

unsigned wl_rxbatch_next(const struct wl_rxbatch *b, unsigned max);
void wl_rxbatch_saw(struct wl_rxbatch *b, unsigned asked, int n);

/*
 * Bind `n` UDP sockets of the address's family to `a`, into fds[]: one
 * plain socket when n is 1, else an SO_REUSEPORT group (after a probe bind
 * without SO_REUSEPORT, so a port that another program holds is reported
 * as "port in use" rather than silently shared). 0, or -1 (logged, with
 * every socket closed).
 */
int wl_bind_group(const struct sockaddr_storage *a, socklen_t len, int n, int *fds);
/* Set SO_BUSY_POLL (usec > 0), a receive/send timeout (ms > 0): 0 or -1 (logged). */
int wl_set_busy_poll(int fd, long usec);
int wl_set_timeouts(int fd, long rcv_ms, long snd_ms);
/* Ask for a receive buffer of `bytes` (SO_RCVBUFFORCE when allowed, else SO_RCVBUF); best effort. */
void wl_set_rcvbuf(int fd, int bytes);

/*
 * The per-second series of a measured window [warm_ns, end_ns): sleeps to
 * each second boundary (the last interval may be shorter), calls sum(ctx)
 * for the running total of a counter and appends {"t": seconds since
 * warm_ns, KEY: rate per second over the interval}. Returns early when
 * wl_stop is set or *stop becomes non-zero.
 */
struct json_object *wl_series(uint64_t warm_ns, uint64_t end_ns, const char *key,
			      uint64_t (*sum)(void *ctx), void *ctx, const int *stop);

#endif
