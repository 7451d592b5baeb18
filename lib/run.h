/* run.h: run a local program from an argv, with captured output, a timeout and caps. */
#ifndef KLAB_RUN_H
#define KLAB_RUN_H

#include <sys/types.h>

#include "buf.h"

/*
 * One child process. Fill in the inputs, call run_command() (or
 * run_start() then run_finish()), read the outputs, run_release().
 *
 * The child runs in its own process group; the timeout sends SIGTERM to
 * the whole group, then SIGKILL after `kill_grace_ms`. PATH is resolved
 * before fork, and an exec failure comes back through a CLOEXEC pipe as an
 * error that names the program. stdout and stderr are drained together by
 * poll(), so neither can deadlock; each is captured up to `out_cap` bytes
 * (the rest is read and thrown away, and ->truncated is set).
 */
struct run_cmd {
	/* inputs */
	const char *const *argv;	/* argv[0] is the program */
	const char *const *env;		/* extra "KEY=VALUE" entries (or "KEY" to unset), NULL-terminated */
	const char *dir;		/* working directory of the child, or NULL */
	const char *in;			/* data for stdin; NULL: /dev/null */
	size_t in_len;
	long timeout_ms;		/* 0: no timeout */
	long kill_grace_ms;		/* TERM -> KILL delay; 0: 2000 */
	size_t out_cap;			/* per stream; 0: 64 MiB */
	int inherit_out;		/* child writes to our stdout instead of a pipe */
	int inherit_err;		/* child writes to our stderr instead of a pipe */
	int keep_group;			/* 1: stay in our process group (no setpgid) */

	/* outputs */
	struct buf out;
	struct buf err;
	int status;			/* exit code, or 128 + signal number */
	int signaled;			/* killed by a signal (which: status - 128) */
	int timed_out;			/* the timeout fired */
	int truncated;			/* an output hit out_cap */

	/* private */
	pid_t pid;
	int fd_in, fd_out, fd_err;
	size_t in_off;
	long long deadline;
	long long kill_at;
};

#define RUN_CMD_INIT { .out = BUF_INIT, .err = BUF_INIT, .fd_in = -1, .fd_out = -1, .fd_err = -1 }

/* Start the child: 0, or -1 (logged: "cannot run 'prog': ..."). */
int run_start(struct run_cmd *c);
/*
 * Feed stdin, drain output and wait for the child (honouring the timeout).
 * 0 when the child was reaped (whatever its exit status), -1 on an error.
 */
int run_finish(struct run_cmd *c);
/* run_start() + run_finish(). */
int run_command(struct run_cmd *c);
/* Send a signal to the child's process group (or the child with keep_group). */
int run_signal(struct run_cmd *c, int sig);
/* Free the captured output. */
void run_release(struct run_cmd *c);

/* Find `prog` in PATH (or take it as is if it has a '/'): malloc'd path or NULL. */
char *run_which(const char *prog);

/* A description of how the child ended, e.g. "exit status 2", "killed by signal 9", "timed out after 10 s". */
const char *run_describe(const struct run_cmd *c);

#endif
