/* run.c: run a local program from argv: captured output, timeout on the process group, caps. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "run.h"
#include "strvec.h"
#include "util.h"

extern char **environ;

#define DEFAULT_CAP (64u << 20)

char *run_which(const char *prog)
{
	const char *path = getenv("PATH");
	struct strvec dirs = STRVEC_INIT;
	char *found = NULL;
	size_t i;

	if (!prog || !*prog)
		return NULL;
	if (strchr(prog, '/'))
		return access(prog, X_OK) == 0 ? xstrdup(prog) : NULL;
	strvec_split(&dirs, path ? path : "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin", ":");
	for (i = 0; i < dirs.n && !found; i++) {
		char *cand = xasprintf("%s/%s", dirs.v[i], prog);
		struct stat st;

		if (!stat(cand, &st) && S_ISREG(st.st_mode) && !access(cand, X_OK))
			found = cand;
		else
			free(cand);
	}
	strvec_clear(&dirs);
	return found;
}

/* The child's environment: ours with the "K=V" entries set and "K" entries removed. */
static char **build_env(const char *const *extra)
{
	struct strvec env = STRVEC_INIT;
	char **e;
	const char *const *x;

	for (e = environ; e && *e; e++) {
		int drop = 0;

		for (x = extra; x && *x; x++) {
			const char *eq = strchr(*x, '=');
			size_t klen = eq ? (size_t)(eq - *x) : strlen(*x);

			if (!strncmp(*e, *x, klen) && (*e)[klen] == '=')
				drop = 1;
		}
		if (!drop)
			strvec_push(&env, *e);
	}
	for (x = extra; x && *x; x++)
		if (strchr(*x, '='))
			strvec_push(&env, *x);
	return env.v;	/* owned by the child only; the parent frees below */
}

static void free_env(char **env)
{
	char **e;

	if (!env || env[0] == NULL)
		return;
	for (e = env; *e; e++)
		free(*e);
	free(env);
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

int run_start(struct run_cmd *c)
{
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, err[2] = { -1, -1 }, ex[2] = { -1, -1 };
	char *path = NULL;
	char **env = NULL;
	pid_t pid;
	int e, n;

	c->status = -1;
	c->signaled = c->timed_out = c->truncated = 0;
	c->pid = -1;
	c->fd_in = c->fd_out = c->fd_err = -1;
	c->in_off = 0;
	if (!c->argv || !c->argv[0])
		return error_to(c->why, "cannot run an empty command");
	path = run_which(c->argv[0]);
	if (!path)
		return error_to(c->why, "cannot run '%s': not found%s", c->argv[0],
			     strchr(c->argv[0], '/') ? "" : " in PATH");
	env = build_env(c->env);
	if ((c->in && pipe2(in, O_CLOEXEC)) ||
	    (!c->inherit_out && c->out_fd < 0 && pipe2(out, O_CLOEXEC)) ||
	    (!c->inherit_err && c->out_fd < 0 && pipe2(err, O_CLOEXEC)) ||
	    pipe2(ex, O_CLOEXEC)) {
		error_to(c->why, "cannot run '%s': pipe: %s", c->argv[0], strerror(errno));
		goto fail;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		error_to(c->why, "cannot run '%s': fork: %s", c->argv[0], strerror(errno));
		goto fail;
	}
	if (pid == 0) {
		int devnull;
		sigset_t none;

		if (!c->keep_group)
			setpgid(0, 0);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		if (c->in) {
			dup2(in[0], 0);
		} else {
			devnull = open("/dev/null", O_RDONLY);
			if (devnull >= 0)
				dup2(devnull, 0);
		}
		if (c->out_fd >= 0) {
			dup2(c->out_fd, 1);
			dup2(c->out_fd, 2);
		} else {
			if (!c->inherit_out)
				dup2(out[1], 1);
			if (!c->inherit_err)
				dup2(err[1], 2);
		}
		if (c->nice && setpriority(PRIO_PROCESS, 0, c->nice) < 0) {
			/* not fatal: the command runs at our priority */
		}
		/* a parent that only lowered its effective id (sandbox_enter) gets root back to drop it for good */
		if (c->as_user && geteuid() != 0 && getuid() == 0 && seteuid(0) < 0) {
			e = -errno;
			n = write(ex[1], &e, sizeof(e));
			(void)n;
			_exit(127);
		}
		if (c->as_user && (setgroups(1, &c->gid) || setresgid(c->gid, c->gid, c->gid) ||
				   setresuid(c->uid, c->uid, c->uid) || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))) {
			e = -errno;	/* negative: the user switch failed */
			n = write(ex[1], &e, sizeof(e));
			(void)n;
			_exit(127);
		}
		if (c->dir && chdir(c->dir)) {
			e = errno;
			n = write(ex[1], &e, sizeof(e));
			(void)n;
			_exit(127);
		}
		execve(path, (char *const *)c->argv, env);
		e = errno;
		n = write(ex[1], &e, sizeof(e));
		(void)n;
		_exit(127);
	}
	if (!c->keep_group)
		setpgid(pid, pid);	/* no race with the child's own setpgid */
	close_fd(&in[0]);
	close_fd(&out[1]);
	close_fd(&err[1]);
	close_fd(&ex[1]);
	for (;;) {
		n = (int)read(ex[0], &e, sizeof(e));
		if (n < 0 && errno == EINTR)
			continue;
		break;
	}
	close_fd(&ex[0]);
	if (n == (int)sizeof(e)) {
		waitpid(pid, NULL, 0);
		close_fd(&in[1]);
		close_fd(&out[0]);
		close_fd(&err[0]);
		if (e < 0)
			error_to(c->why, "cannot run '%s' as uid %d gid %d: %s", c->argv[0], (int)c->uid, (int)c->gid,
			      strerror(-e));
		else if (c->dir)
			error_to(c->why, "cannot run '%s' in '%s': %s", c->argv[0], c->dir, strerror(e));
		else
			error_to(c->why, "cannot run '%s': %s", c->argv[0], strerror(e));
		free(path);
		free_env(env);
		return -1;
	}
	c->pid = pid;
	c->fd_in = in[1];
	c->fd_out = out[0];
	c->fd_err = err[0];
	if (c->fd_in >= 0)
		fcntl(c->fd_in, F_SETFL, O_NONBLOCK);
	c->deadline = c->timeout_ms > 0 ? now_ms() + c->timeout_ms : 0;
	c->kill_at = 0;
	buf_set_cap(&c->out, c->out_cap ? c->out_cap : DEFAULT_CAP);
	buf_set_cap(&c->err, c->out_cap ? c->out_cap : DEFAULT_CAP);
	free(path);
	free_env(env);
	return 0;
fail:
	close_fd(&in[0]); close_fd(&in[1]);
	close_fd(&out[0]); close_fd(&out[1]);
	close_fd(&err[0]); close_fd(&err[1]);
	close_fd(&ex[0]); close_fd(&ex[1]);
	free(path);
	free_env(env);
	return -1;
}

int run_signal(struct run_cmd *c, int sig)
{
	if (c->pid <= 0)
		return -1;
	if (!c->keep_group && kill(-c->pid, sig) == 0)
		return 0;
	return kill(c->pid, sig);
}

static void drain(int *fd, struct buf *b, int *truncated)
{
	char chunk[16384];
	ssize_t n = read(*fd, chunk, sizeof(chunk));

	if (n > 0) {
		if (buf_add(b, chunk, (size_t)n))
			*truncated = 1;
	} else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
		close_fd(fd);
	}
}

/* Add the child's open output pipes to P[NP..]: the new count. */
static int poll_out_err(const struct run_cmd *c, struct pollfd *p, int np)
{
	if (c->fd_out >= 0) {
		p[np].fd = c->fd_out;
		p[np++].events = POLLIN;
	}
	if (c->fd_err >= 0) {
		p[np].fd = c->fd_err;
		p[np++].events = POLLIN;
	}
	return np;
}

/* Read what output pipe P, ready, holds into the child's out or err. */
static void drain_polled(struct run_cmd *c, const struct pollfd *p)
{
	if (p->fd == c->fd_out)
		drain(&c->fd_out, &c->out, &c->truncated);
	else if (p->fd == c->fd_err)
		drain(&c->fd_err, &c->err, &c->truncated);
}

int run_wait_output(struct run_cmd *c, const char *needle, long timeout_ms)
{
	long long until = now_ms() + timeout_ms;

	for (;;) {
		struct pollfd p[2];
		int np = 0;
		long long left;

		if (c->out.len && memmem(c->out.buf, c->out.len, needle, strlen(needle)))
			return 1;
		if (c->fd_out < 0 && c->fd_err < 0)
			return -1;
		left = until - now_ms();
		if (left <= 0)
			return 0;
		np = poll_out_err(c, p, np);
		if (poll(p, (nfds_t)np, left > 1000 ? 1000 : (int)left) < 0 && errno != EINTR)
			return -1;
		for (int i = 0; i < np; i++)
			if (p[i].revents)
				drain_polled(c, &p[i]);
	}
}

int run_finish(struct run_cmd *c)
{
	int wstatus = 0, reaped = 0, idle_ms = 1;
	long long drain_until = 0, next_tick = c->tick ? now_ms() + 250 : 0;
	void (*old_pipe)(int) = signal(SIGPIPE, SIG_IGN);

	if (c->pid <= 0) {
		signal(SIGPIPE, old_pipe);
		return error_to(c->why, "run_finish: no child");
	}
	if (c->fd_in >= 0 && c->in_len == 0)
		close_fd(&c->fd_in);
	while (!reaped || c->fd_out >= 0 || c->fd_err >= 0) {
		struct pollfd p[3];
		int np = 0, timeout = 100, r;
		long long now = now_ms();

		if (!reaped) {
			if (c->deadline && !c->timed_out && now >= c->deadline) {
				c->timed_out = 1;
				run_signal(c, SIGTERM);
				c->kill_at = now + (c->kill_grace_ms > 0 ? c->kill_grace_ms : 2000);
				close_fd(&c->fd_in);
			}
			if (c->kill_at && now >= c->kill_at) {
				run_signal(c, SIGKILL);
				c->kill_at = 0;
			}
			r = waitpid(c->pid, &wstatus, WNOHANG);
			if (r == c->pid) {
				reaped = 1;
				close_fd(&c->fd_in);
				/* A grandchild may hold the pipes open: read what
				 * comes for 2 s more, then stop. */
				drain_until = now + 2000;
				continue;
			}
			if (c->deadline && !c->timed_out && c->deadline - now < timeout)
				timeout = (int)(c->deadline - now);
			if (c->kill_at && c->kill_at - now < timeout)
				timeout = (int)(c->kill_at - now);
			if (next_tick && now >= next_tick) {
				c->tick(c->tick_arg);
				next_tick = now + 250;
			}
			if (timeout < 0)
				timeout = 0;
		} else if (now >= drain_until) {
			close_fd(&c->fd_out);
			close_fd(&c->fd_err);
			break;
		}
		if (c->fd_in >= 0) {
			p[np].fd = c->fd_in;
			p[np++].events = POLLOUT;
		}
		np = poll_out_err(c, p, np);
		/*
		 * No pipe left to wake us: the child closed them and is
		 * exiting, most likely. Look again after 1 ms, 2, 4, ... up
		 * to the 100 ms tick, not 100 ms at once (every short command
		 * cost 100 ms: 1.3 s of the 13 `ip` calls of a lab machine).
		 */
		if (np == 0) {
			if (idle_ms < timeout)
				timeout = idle_ms;
			if (idle_ms < 100)
				idle_ms *= 2;
		}
		r = poll(p, (nfds_t)np, timeout);
		if (r < 0 && errno != EINTR) {
			signal(SIGPIPE, old_pipe);
			return error_to(c->why, "cannot wait for '%s': %s", c->argv[0], strerror(errno));
		}
		for (int i = 0; r > 0 && i < np; i++) {
			if (!p[i].revents)
				continue;
			if (p[i].fd == c->fd_in) {
				ssize_t n = write(c->fd_in, c->in + c->in_off, c->in_len - c->in_off);

				if (n > 0)
					c->in_off += (size_t)n;
				if ((n < 0 && errno != EAGAIN && errno != EINTR) || c->in_off >= c->in_len ||
				    (p[i].revents & (POLLERR | POLLHUP)))
					close_fd(&c->fd_in);
			} else {
				drain_polled(c, &p[i]);
			}
		}
	}
	signal(SIGPIPE, old_pipe);
	if (WIFEXITED(wstatus)) {
		c->status = WEXITSTATUS(wstatus);
	} else if (WIFSIGNALED(wstatus)) {
		c->signaled = 1;
		c->status = 128 + WTERMSIG(wstatus);
	}
	c->pid = -1;
	return 0;
}

int run_command(struct run_cmd *c)
{
	if (run_start(c))
		return -1;
	return run_finish(c);
}

void run_release(struct run_cmd *c)
{
	buf_release(&c->out);
	buf_release(&c->err);
	close_fd(&c->fd_in);
	close_fd(&c->fd_out);
	close_fd(&c->fd_err);
}

int run_check(struct run_cmd *c)
{
	struct strvec cmd = STRVEC_INIT;
	char *line;

	if (run_command(c) < 0)
		return -1;
	if (c->status == 0 && !c->timed_out)
		return 0;
	if (!c->quiet) {
		strvec_pushv(&cmd, c->argv);
		line = strvec_join(&cmd, " ");
		if (c->timed_out || c->signaled || (!c->err.len && !c->out.len))
			error("'%s' failed (%s)", line, run_describe(c));
		else
			error("'%s' failed (%s): %s", line, run_describe(c), run_failure(c));
		free(line);
		strvec_clear(&cmd);
	}
	return -1;
}

int run_argv(const char *const *argv, long timeout_ms, struct buf *out, int quiet)
{
	struct run_cmd c = RUN_CMD_INIT;
	int ret;

	c.argv = argv;
	c.timeout_ms = timeout_ms ? timeout_ms : 30000;
	c.out_cap = 1 << 20;
	c.quiet = quiet;
	ret = run_check(&c);
	if (ret == 0 && out)
		buf_add(out, c.out.buf, c.out.len);
	run_release(&c);
	return ret;
}

const char *run_failure(const struct run_cmd *c)
{
	const char *l;

	if (c->timed_out || c->signaled)
		return run_describe(c);
	l = last_line(c->err.buf);
	if (!*l)
		l = last_line(c->out.buf);
	return *l ? l : run_describe(c);
}

const char *run_describe(const struct run_cmd *c)
{
	static char msg[96];

	if (c->timed_out)
		snprintf(msg, sizeof(msg), "timed out after %.1f s", c->timeout_ms / 1000.0);
	else if (c->signaled)
		snprintf(msg, sizeof(msg), "killed by signal %d", c->status - 128);
	else
		snprintf(msg, sizeof(msg), "exit status %d", c->status);
	return msg;
}
