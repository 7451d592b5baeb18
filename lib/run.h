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
 * (the rest is read and thrown away, and ->truncated is set), unless
 * `out_fd` sends both to a file (a build log) instead. With `as_user` the
 * child drops every group and sets its real, effective and saved ids to
 * `uid`/`gid` (PR_SET_NO_NEW_PRIVS too) before the exec; when it cannot,
 * the exec is not attempted and run_start() fails naming the user ids.
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
	int out_fd;			/* >= 0: stdout and stderr go to this fd (a log), nothing captured; -1 */
	int nice;			/* nonzero: the child's nice value (setpriority; a failure is ignored) */
	int quiet;			/* run_check(): a failure is not logged */
	int as_user;			/* 1: the child becomes uid/gid (no other groups, no new privileges) before exec */
	uid_t uid;
	gid_t gid;
	void (*tick)(void *arg);	/* called about every 250 ms while the child runs (progress) */
	void *tick_arg;
	struct buf *why;		/* non-NULL: why it could not start or be waited for (error_to), not logged */

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

#define RUN_CMD_INIT { .out_fd = -1, .out = BUF_INIT, .err = BUF_INIT, .fd_in = -1, .fd_out = -1, .fd_err = -1 }

/* Start the child: 0, or -1 (logged, or in c->why when set: "cannot run 'prog': ..."). */
int run_start(struct run_cmd *c);
/*
 * Feed stdin, drain output and wait for the child (honouring the timeout).
 * 0 when the child was reaped (whatever its exit status), -1 on an error
 * (logged, or in c->why when set).
 */
int run_finish(struct run_cmd *c);
/* run_start() + run_finish(). */
int run_command(struct run_cmd *c);
/*
 * run_command() and a check of how it ended: 0 when the child exited 0,
 * else -1 with the failure logged (unless c->quiet) as
 * "'PROG ARG...' failed (exit status 2): LAST LINE OF STDERR". Either way
 * c->out and c->err keep what it printed until run_release().
 */
int run_check(struct run_cmd *c);
/*
 * run_check() for a small command: ARGV, for at most TIMEOUT_MS (0: 30 s),
 * output capped at 1 MiB, stdout appended to OUT (may be NULL). 0 or -1
 * (logged unless QUIET).
 */
int run_argv(const char *const *argv, long timeout_ms, struct buf *out, int quiet);
/*
 * Why a child that ran did not succeed, for messages: how it ended when a
 * timeout or signal stopped it, else the last line of its stderr (of its
 * stdout when stderr is empty), else its exit status. A static buffer.
 */
const char *run_failure(const struct run_cmd *c);
/*
 * After run_start(), before run_finish(): read the child's stdout and stderr
 * (into c->out and c->err, as run_finish() would) until NEEDLE appears in
 * its stdout, for at most TIMEOUT_MS. 1 when it did, 0 on the timeout, -1
 * when the child closed both pipes first (it is ending: run_finish() says
 * how). For a tool that says when it is ready (a BEGIN line of bpftrace).
 * The child is not reaped and its stdin is not fed: give it none.
 */
int run_wait_output(struct run_cmd *c, const char *needle, long timeout_ms);
/* Send a signal to the child's process group (or the child with keep_group). */
int run_signal(struct run_cmd *c, int sig);
/* Free the captured output. */
void run_release(struct run_cmd *c);

/* Find `prog` in PATH (or take it as is if it has a '/'): malloc'd path or NULL. */
char *run_which(const char *prog);

/* A description of how the child ended, e.g. "exit status 2", "killed by signal 9", "timed out after 10 s". */
const char *run_describe(const struct run_cmd *c);

#endif
