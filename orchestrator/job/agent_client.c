/* agent_client.c: the job's side of klab-agent: SSH to the machines, agent calls, run specs, the server of a run. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "job/agent_client.h"
#include "job/job_int.h"
#include "jsonh.h"
#include "lab/lab_qemu.h"
#include "log.h"
#include "run.h"
#include "ssh/ssh.h"
#include "strvec.h"
#include "util.h"

/* Connect to a machine (once per job run), with 3 tries 2 s apart for a passing outage. */
int connect_machine(struct job_ctx *j, const struct conf_machine *m, struct ssh_conn **c, struct buf *why)
{
	struct ssh_target t;
	struct buf last = BUF_INIT;
	int ret = 0;

	if (*c)
		return 0;
	ssh_target_from_conf(&t, j->cfg, m);
	for (int i = 1; ssh_connect(c, &t, &last); i++) {
		if (i == 3) {
			if (why) {
				buf_reset(why);
				buf_addstr(why, last.buf);
			}
			ret = -1;
			break;
		}
		warn("machine '%s' did not answer (try %d of 3); trying again in 2 s", m->name, i);
		sleep(2);
	}
	buf_release(&last);
	return ret;
}

void close_machines(struct job_ctx *j)
{
	ssh_close(j->cdut);
	ssh_close(j->cpeer);
	j->cdut = j->cpeer = NULL;
}

int agent_exec(struct ssh_conn *c, const char *agent, const char *state, const char *const *argv,
	       const char *in, struct buf *out, struct buf *err, long timeout_ms, int idempotent)
{
	return agent_exec_watch(c, agent, state, argv, in, out, err, timeout_ms, idempotent, NULL, NULL);
}

int agent_exec_watch(struct ssh_conn *c, const char *agent, const char *state, const char *const *argv,
		     const char *in, struct buf *out, struct buf *err, long timeout_ms, int idempotent,
		     void (*on_stderr)(void *arg, const struct buf *err, size_t old_len), void *arg)
{
	struct strvec av = STRVEC_INIT;
	int ret = -1;

	strvec_push(&av, agent);
	if (state) {
		strvec_push(&av, "--state");
		strvec_push(&av, state);
	}
	strvec_pushv(&av, argv);
	for (int attempt = 0; attempt < 2; attempt++) {
		struct ssh_exec x = SSH_EXEC_INIT;
		int dropped;

		x.argv = (const char *const *)av.v;
		x.in = in;
		x.in_len = in ? strlen(in) : 0;
		x.timeout_ms = timeout_ms;
		x.on_stderr = on_stderr;
		x.on_stderr_arg = arg;
		if (ssh_exec(c, &x) == 0) {
			if (out)
				buf_add(out, x.out.buf, x.out.len);
			if (err)
				buf_add(err, x.err.buf, x.err.len);
			ret = x.status;
			ssh_exec_release(&x);
			break;
		}
		dropped = x.dropped;
		ssh_exec_release(&x);
		if (!dropped || !idempotent || attempt || ssh_reconnect(c))
			break;
		warn("connection to '%s' dropped; reconnected, calling the agent again", ssh_name(c));
	}
	strvec_clear(&av);
	return ret;
}

int agent_call(struct job_ctx *j, int peer, const char *const *argv, const char *in,
	       struct buf *out, long timeout_ms, int idempotent, struct buf *err)
{
	struct ssh_conn **c = peer ? &j->cpeer : &j->cdut;
	int rc;

	if (connect_machine(j, peer ? j->peer : j->dut, c, err))
		return -1;
	rc = agent_exec(*c, j->agent_remote, peer ? j->state_peer : j->state_dut, argv, in, out, err,
			timeout_ms, idempotent);
	if (rc < 0 && err) {
		buf_reset(err);
		buf_addstr(err, ssh_error(*c));
	}
	return rc;
}

int agent_fetch(struct job_ctx *j, int peer, const char *uid, struct buf *out, struct buf *why)
{
	const char *argv[] = { "fetch", uid, NULL };
	struct buf err = BUF_INIT;
	int rc;

	buf_reset(out);
	rc = agent_call(j, peer, argv, NULL, out, 60000, 1, &err);
	if (rc == 0 && out->len) {
		buf_release(&err);
		return 0;
	}
	if (rc < 0) {
		if (why) {
			buf_reset(why);
			buf_addstr(why, err.buf);
		}
		buf_release(&err);
		return -1;
	}
	/* The agent exits non-zero when it keeps no such result, 3 while the run goes on. */
	buf_release(&err);
	return rc == AGENT_EXIT_RUNNING ? AGENT_FETCH_RUNNING : 1;
}

void agent_ack(struct job_ctx *j, int peer, const char *uid)
{
	const char *argv[] = { "ack", uid, NULL };
	struct buf out = BUF_INIT, err = BUF_INIT;

	if (agent_call(j, peer, argv, NULL, &out, 60000, 1, &err) != 0)
		warn("cannot ack run '%s' on machine '%s': %s", uid, peer ? j->peer->name : j->dut->name,
		     last_line(err.buf));
	buf_release(&out);
	buf_release(&err);
}

/* The local klab-agent binary: the option, $KLAB_AGENT, next to this program, or PATH. */
char *find_local_agent(const char *opt)
{
	char self[PATH_MAX];
	ssize_t n;

	if (opt)
		return xstrdup(opt);
	if (getenv("KLAB_AGENT") && *getenv("KLAB_AGENT"))
		return xstrdup(getenv("KLAB_AGENT"));
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		char *slash, *p;
		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			p = xasprintf("%s/klab-agent", self);
			if (access(p, X_OK) == 0)
				return p;
			free(p);
			p = xasprintf("%s/../agents/klab-agent", self);
			if (access(p, X_OK) == 0)
				return p;
			free(p);
			p = xasprintf("%s/../libexec/klab/klab-agent", self);
			if (access(p, X_OK) == 0)
				return p;
			free(p);
		}
	}
	return run_which("klab-agent");
}

static const char *role_client(const char *type)
{
	return !strcmp(type, "udp_tx") ? "send" : "client";
}

const char *role_server(const char *type)
{
	return !strcmp(type, "udp_tx") ? "sink" : "server";
}

/* The udp_tx target of a workload: "peer" (a sink on the peer), "dummy", "blackhole". */
const char *tx_target(const struct job_spec_workload *w)
{
	if (strcmp(w->type, "udp_tx"))
		return NULL;
	return w->target ? w->target : "peer";
}

/* Does this workload need a server (sink) on the peer? */
int needs_server(const struct job_spec_workload *w)
{
	const char *t = tx_target(w);

	return !t || !strcmp(t, "peer");
}

/*
 * The generator parameters of one role, renamed from the config's keys
 * (config.example) to the agent's (agents/run.c): server_threads and
 * server_cpus go to the server as threads and cpus, payload_size -> size,
 * gso_size -> gso, rate_pps -> rate, sink_threads and sink_poll_us -> threads and poll_us of the sink;
 * ipv6 is implied by the addresses; an udp_tx target replaces peer_addr.
 */
static struct json_object *role_params(struct json_object *params, const char *type, int server)
{
	static const struct {
		const char *type, *conf, *agent;
		int role;	/* 0 client/send, 1 server/sink, 2 both */
	} map[] = {
		{ "udp_rr", "flows", "flows", 0 }, { "udp_rr", "threads", "threads", 0 },
		{ "udp_rr", "request_size", "request_size", 0 }, { "udp_rr", "response_size", "response_size", 2 },
		{ "udp_rr", "burst", "burst", 0 }, { "udp_rr", "cpus", "cpus", 0 },
		{ "udp_rr", "busy_poll", "busy_poll", 0 }, { "udp_rr", "rto_ms", "rto_ms", 0 },
		{ "udp_rr", "port", "port", 2 }, { "udp_rr", "server_threads", "threads", 1 },
		{ "udp_rr", "server_cpus", "cpus", 1 },
		{ "udp_tx", "threads", "threads", 0 }, { "udp_tx", "payload_size", "size", 0 },
		{ "udp_tx", "engine", "engine", 0 }, { "udp_tx", "batch", "batch", 0 },
		{ "udp_tx", "gso_size", "gso", 0 }, { "udp_tx", "rate_pps", "rate", 0 },
		{ "udp_tx", "cpus", "cpus", 0 }, { "udp_tx", "port", "port", 2 },
		{ "udp_tx", "sink_threads", "threads", 1 }, { "udp_tx", "sink_poll_us", "poll_us", 1 },
		{ "udp_rr", "seed", "seed", 0 }, { "udp_rr", "src_ports", "src_ports", 0 },
		{ "udp_tx", "seed", "seed", 0 }, { "udp_tx", "src_ports", "src_ports", 0 },
	};
	struct json_object *out = json_object_new_object();

	json_object_object_foreach(params, k, v) {
		for (size_t i = 0; i < ARRAY_SIZE(map); i++) {
			if (strcmp(map[i].type, type) || strcmp(map[i].conf, k))
				continue;
			if (map[i].role == 2 || map[i].role == server)
				json_object_object_add(out, map[i].agent, json_object_get(v));
			break;
		}
	}
	return out;
}

/* The run spec (docs/protocol.md section 2) of one side of a run. */
/* The monitors of a client's run: the workload's measurement monitor (cpu), and in an observation run the one it observes. */
static struct json_object *run_monitors(const struct job_spec_workload *w, const char *observes)
{
	struct json_object *a = json_object_new_array();
	size_t n = w->monitors ? json_object_array_length(w->monitors) : 0;

	for (size_t i = 0; i < n && !(observes && !strcmp(observes, OBSERVE_BARE)); i++) {
		const char *m = json_object_get_string(json_object_array_get_idx(w->monitors, i));

		if (m && (!monitor_observes(m) || (observes && !strcmp(m, observes))))
			json_object_array_add(a, json_str(m));
	}
	return a;
}

char *run_spec(struct job_ctx *j, const struct job_spec_workload *w, const char *uid, int server,
	       const struct server_run *sr, const char *observes)
{
	struct json_object *o = json_object_new_object(), *wo = json_object_new_object();
	struct buf b = BUF_INIT;
	const char *type = w->type;
	const struct conf_machine *self = server ? j->peer : j->dut;
	const struct conf_machine *other = server ? j->dut : j->peer;

	json_object_object_add(o, "spec_version", json_object_new_int(1));
	json_object_object_add(o, "run_id", json_str(uid));
	json_object_object_add(o, "role", json_str(server ? role_server(type) : role_client(type)));
	json_object_object_add(wo, "name", json_str(w->name));
	json_object_object_add(wo, "type", json_str(type));
	struct json_object *params = role_params(w->params, type, server);
	struct job_work work;

	/*
	 * The bare observation run is sized as the measurement runs are, so that
	 * the cost of their cpu monitor compares like with like; an observation
	 * run with a monitor is too now (job_spec_work_observe(): the agent has
	 * bpftrace and perf ready before the workload's first operation).
	 */
	if (observes && strcmp(observes, OBSERVE_BARE))
		job_spec_work_observe(w, job_icount(j), &work);
	else
		job_spec_work(w, job_icount(j), &work);
	if (!server && work.seed)	/* seeded ports by default under icount: the same path every run */
		json_object_object_add(params, "seed", json_object_new_int64(work.seed));
	json_object_object_add(wo, "params", params);
	json_object_object_add(o, "workload", wo);
	if (!server && tx_target(w) && !strcmp(tx_target(w), "dummy"))
		json_object_object_add(o, "peer_addr", json_str(QLAB_DUMMY_TARGET));
	else if (!server && other->addr)
		json_object_object_add(o, "peer_addr", json_str(other->addr));
	if (self->addr)
		json_object_object_add(o, "bind_addr", json_str(self->addr));
	if (self->nic)
		json_object_object_add(o, "nic", json_str(self->nic));
	/* The server gets the client's times, counted from the client's first
	 * datagram (waited for start_wait_s), and outlives it by linger_s. */
	json_object_object_add(o, "duration_s", json_object_new_double(work.duration_s));
	json_object_object_add(o, "warmup_s", json_object_new_double(work.warmup_s));
	if (work.ops && !server) {	/* sized by work: duration_s is the time limit */
		json_object_object_add(o, "ops", json_object_new_int64(work.ops));
		json_object_object_add(o, "warmup_ops", json_object_new_int64(work.warmup_ops));
	} else if (work.ops) {		/* the server ends when the client is done */
		json_object_object_add(o, "idle_end_s", json_object_new_double(SERVER_IDLE_END_S));
	}
	if (server) {
		json_object_object_add(o, "linger_s", json_object_new_double(sr->linger_s));
		json_object_object_add(o, "start_wait_s", json_object_new_double(sr->start_wait_s));
		json_object_object_add(o, "monitors", json_object_new_array());
	} else {
		json_object_object_add(o, "monitors", run_monitors(w, observes));
		if (w->perf_events)
			json_object_object_add(o, "perf_events", json_str(w->perf_events));
		if (w->profile_cpus)
			json_object_object_add(o, "perf_profile_cpus", json_str(w->profile_cpus));
		if (w->bpftrace_script)
			json_object_object_add(o, "bpftrace_script", json_str(w->bpftrace_script));
	}
	json_to_buf(&b, o, 0);
	json_object_put(o);
	return buf_detach(&b, NULL);
}

/*
 * The server child's stderr hook: one byte on the ready pipe as soon as a
 * whole line AGENT_READY_LINE arrives (other lines, warnings, may come
 * first), then the pipe is closed.
 */
struct ready_watch {
	int fd;
};

static void ready_seen(void *arg, const struct buf *err, size_t old_len)
{
	struct ready_watch *rw = arg;
	const char *p = err->buf;

	if (rw->fd < 0)
		return;
	(void)old_len;	/* a line may have begun before old_len: look at all of it */
	for (;;) {
		const char *nl = strchr(p, '\n');
		size_t n;

		if (!nl)
			return;
		n = (size_t)(nl - p);
		if (n == strlen(AGENT_READY_LINE) && !memcmp(p, AGENT_READY_LINE, n)) {
			ssize_t w = write(rw->fd, "r", 1);

			(void)w;	/* the parent gave up waiting: nothing to tell */
			close(rw->fd);
			rw->fd = -1;
			return;
		}
		p = nl + 1;
	}
}

/*
 * Wait up to timeout_ms for one byte on fd: 1 when it came, 0 on EOF or
 * timeout. A signal (klabd's SIGTERM asks the job to finish its step) is no
 * reason to give up: the wait goes on for the time that is left.
 */
static int wait_ready_byte(int fd, long timeout_ms)
{
	int64_t end = now_ms() + timeout_ms;
	struct pollfd pfd = { fd, POLLIN, 0 };
	char ch;
	ssize_t n;

	for (;;) {
		int64_t left = end - now_ms();
		int r;

		if (left < 0)
			left = 0;
		r = poll(&pfd, 1, (int)left);
		if (r > 0)
			break;
		if (r == 0 || errno != EINTR)
			return 0;
	}
	do
		n = read(fd, &ch, 1);
	while (n < 0 && errno == EINTR);
	return n == 1;
}

/*
 * Start the server (or sink) on the peer in a child process with its own
 * SSH connection, so that the client can run on the dut meanwhile. The
 * child tells the parent through a pipe when the agent said its generator
 * is bound and serving (AGENT_READY_LINE on stderr); the client starts
 * only then. The child dies with us (PDEATHSIG); the remote server stops
 * at its deadline.
 */
int server_start(struct job_ctx *j, const struct job_spec_workload *w, const char *uid, struct server_run *sr)
{
	char *spec = run_spec(j, w, uid, 1, sr, NULL);
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char *path = xasprintf("%s/klab-server-XXXXXX", tmp);
	int fd = mkstemp(path), ready[2];
	pid_t pid;

	if (fd < 0) {
		free(spec);
		error_errno("cannot make a temporary file '%s'", path);
		free(path);
		return -1;
	}
	if (pipe2(ready, O_CLOEXEC)) {
		close(fd);
		unlink(path);
		free(path);
		free(spec);
		return error_errno("cannot make a pipe");
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(fd);
		close(ready[0]);
		close(ready[1]);
		unlink(path);
		free(path);
		free(spec);
		return error_errno("cannot fork");
	}
	if (pid == 0) {
		const char *run[] = { "run", NULL }, *ack[] = { "ack", uid, NULL };
		struct ssh_conn *c = NULL;
		struct ssh_target t;
		struct buf out = BUF_INIT, err = BUF_INIT;
		double warm = w->warmup_s, dur = w->duration_s;
		int rc;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		signal(SIGTERM, SIG_DFL);
		ssh_target_from_conf(&t, j->cfg, j->peer);
		struct ready_watch rw;

		close(ready[0]);
		if (ssh_connect(&c, &t, NULL))
			_exit(3);
		rw.fd = ready[1];
		rc = agent_exec_watch(c, j->agent_remote, j->state_peer, run, spec, &out, &err,
				      guest_ms(j, (long)((sr->start_wait_s + warm + dur + sr->linger_s) * 1000) + 60000), 0,
				      ready_seen, &rw);
		if (rc < 0 && !out.len && !err.len)
			_exit(4);	/* it did not run */
		write_all(fd, out.buf, out.len);
		if (rc)
			dprintf(fd, "%s", err.buf);
		close(fd);
		if (rw.fd >= 0)
			close(rw.fd);	/* it ended without the ready line: the parent sees EOF (and the file) */
		/* The server's document is not stored: forget it on the peer now. */
		agent_exec(c, j->agent_remote, j->state_peer, ack, NULL, NULL, NULL, 30000, 0);
		_exit(rc == 0 ? 0 : 5);
	}
	close(fd);
	close(ready[1]);
	free(spec);
	sr->pid = pid;
	sr->outfile = path;
	{
		/*
		 * Wait for the ready byte: the SSH connection, the agent's start
		 * and its generator's bind (the agent waits at most 10 s for it),
		 * at most SERVER_READY_MS. EOF or the timeout: it did not start.
		 */
		int ok = wait_ready_byte(ready[0], guest_ms(j, SERVER_READY_MS));

		close(ready[0]);
		if (!ok) {
			struct buf why = BUF_INIT;
			int st;

			if (!waitpid(pid, &st, WNOHANG)) {
				kill(pid, SIGKILL);
				waitpid(pid, &st, 0);
			}
			buf_read_file(&why, path);
			unlink(path);
			free(path);
			sr->pid = 0;
			sr->outfile = NULL;
			buf_trim(&why);
			error("the %s on machine '%s' did not become ready%s%s", role_server(w->type),
			      j->peer->name, why.len ? ": " : " (no SSH connection, or no answer within 60 s)",
			      why.len ? last_line(why.buf) : "");
			buf_release(&why);
			return -1;
		}
	}
	return 0;
}

/* Wait for the server child (at most timeout_ms, then kill it); its output into out. 0 ok, -1 failed. */
int server_finish(struct server_run *sr, long timeout_ms, struct buf *out)
{
	int64_t end = now_ms() + timeout_ms;
	int st = 0, ret = -1;

	if (!sr->pid)
		return 0;
	for (;;) {
		pid_t p = waitpid(sr->pid, &st, WNOHANG);
		if (p == sr->pid)
			break;
		if (p < 0 && errno != EINTR)
			break;
		if (now_ms() > end) {
			kill(sr->pid, SIGKILL);
			waitpid(sr->pid, &st, 0);
			st = -1;
			break;
		}
		usleep(50 * 1000);
	}
	buf_read_file(out, sr->outfile);
	unlink(sr->outfile);
	free(sr->outfile);
	sr->outfile = NULL;
	sr->pid = 0;
	if (st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0)
		ret = 0;
	return ret;
}

/* Does the document say the run failed? Sets why. */
int result_failed(const char *doc, struct buf *why)
{
	struct json_object *o = json_parse(doc, strlen(doc), "agent result");
	const char *status, *err;
	int ret = 0;

	if (!o) {
		buf_addstr(why, "the agent's result is not valid JSON");
		return 1;
	}
	status = obj_str(o, "status");
	if (status && strcmp(status, "ok")) {
		err = obj_str(o, "error");
		buf_addf(why, "the run %s: %s", status, err ? err : "no reason given");
		ret = 1;
	}
	json_object_put(o);
	return ret;
}
