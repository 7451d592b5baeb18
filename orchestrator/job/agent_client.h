/* agent_client.h: calling klab-agent on a machine over an SSH connection. */
#ifndef KLAB_AGENT_CLIENT_H
#define KLAB_AGENT_CLIENT_H

#include "buf.h"

struct ssh_conn;

/*
 * Run klab-agent on the machine C is connected to: AGENT [--state STATE]
 * ARGV... (no --state when STATE is NULL), with IN (NULL: nothing) on its
 * stdin, for at most TIMEOUT_MS. Its stdout is appended to OUT and its
 * stderr to ERR (either may be NULL). When the connection drops and the
 * call is IDEMPOTENT, it reconnects and calls once more. Returns the
 * agent's exit status (0 ok), or -1 when it could not be run, was killed
 * by a signal or timed out (logged; OUT and ERR get what it printed when
 * it ran). The job's agent calls (job_int.h) and the run's server go
 * through here.
 */
int agent_exec(struct ssh_conn *c, const char *agent, const char *state, const char *const *argv,
	       const char *in, struct buf *out, struct buf *err, long timeout_ms, int idempotent);

/* agent_exec with a hook on stderr as it arrives (struct ssh_exec's on_stderr). */
int agent_exec_watch(struct ssh_conn *c, const char *agent, const char *state, const char *const *argv,
		     const char *in, struct buf *out, struct buf *err, long timeout_ms, int idempotent,
		     void (*on_stderr)(void *arg, const struct buf *err, size_t old_len), void *arg);

/*
 * The line a server or sink role of `klab-agent run` prints on stderr once
 * its generator is bound and serving (docs/protocol.md section 2).
 */
#define AGENT_READY_LINE "klab-agent: ready"

#endif
