/* lib-run.c: running local programs: output, exit status, timeouts, caps, exec errors, waiting for a ready line. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "log.h"
#include "run.h"
#include "tap.h"
#include "util.h"

static int run_sh(struct run_cmd *c, const char *script)
{
	static const char *argv[4];

	argv[0] = "sh";
	argv[1] = "-c";
	argv[2] = script;
	argv[3] = NULL;
	c->argv = argv;
	return run_command(c);
}

/* Start sh -c SCRIPT with its output captured. */
static void start_sh(struct run_cmd *c, const char *script)
{
	static const char *argv[4];

	argv[0] = "/bin/sh";
	argv[1] = "-c";
	argv[2] = script;
	argv[3] = NULL;
	*c = (struct run_cmd)RUN_CMD_INIT;
	c->argv = argv;
	c->timeout_ms = 20000;
	ok(!run_start(c), "started: %s", script);
}

/* run_wait_output(): waiting for a running child's ready line (bpftrace's, in the agent). */
static void test_wait_output(void)
{
	struct run_cmd c;
	long long t0;

	start_sh(&c, "echo attaching; echo noise >&2; sleep 0.3; echo 'klab: ready'; sleep 0.3; echo after");
	t0 = now_ms();
	is_int(run_wait_output(&c, "klab: ready", 10000), 1, "the ready line is seen");
	ok(now_ms() - t0 >= 250 && now_ms() - t0 < 5000, "after the child printed it (%lld ms)",
	   (long long)(now_ms() - t0));
	ok(!run_finish(&c) && c.status == 0, "run_finish reaps the child afterwards");
	ok(strstr(c.out.buf, "attaching\n") && strstr(c.out.buf, "klab: ready\nafter\n"),
	   "stdout before and after the wait is all in c.out");
	ok(strstr(c.err.buf, "noise") != NULL, "stderr read meanwhile too");
	run_release(&c);

	start_sh(&c, "echo other; sleep 3");
	t0 = now_ms();
	is_int(run_wait_output(&c, "klab: ready", 300), 0, "no ready line: the wait times out");
	ok(now_ms() - t0 >= 250 && now_ms() - t0 < 2500, "after about its timeout (%lld ms)", (long long)(now_ms() - t0));
	run_signal(&c, 15);
	ok(!run_finish(&c) && c.signaled, "the child is still there to stop");
	run_release(&c);

	start_sh(&c, "echo failed >&2; exit 3");
	is_int(run_wait_output(&c, "klab: ready", 10000), -1, "a child that ends first: -1, not the full timeout");
	ok(!run_finish(&c) && c.status == 3 && strstr(c.err.buf, "failed"), "and run_finish says how it ended");
	run_release(&c);
}

int main(void)
{
	struct run_cmd c = RUN_CMD_INIT;
	long long t0;

	ok(run_sh(&c, "echo out; echo err >&2; exit 3") == 0, "run a shell");
	is_str(c.out.buf, "out\n", "stdout captured");
	is_str(c.err.buf, "err\n", "stderr captured");
	is_int(c.status, 3, "exit status");
	ok(!c.signaled && !c.timed_out, "not signaled, not timed out");
	run_release(&c);

	c = (struct run_cmd)RUN_CMD_INIT;
	c.in = "line one\nline two\n";
	c.in_len = strlen(c.in);
	ok(run_sh(&c, "cat") == 0 && !strcmp(c.out.buf, "line one\nline two\n"), "stdin is fed");
	run_release(&c);

	/* big stdin and big stdout together: no deadlock */
	{
		size_t n = 4 << 20;
		char *big = xmalloc(n);

		memset(big, 'x', n);
		c = (struct run_cmd)RUN_CMD_INIT;
		c.in = big;
		c.in_len = n;
		c.timeout_ms = 30000;
		ok(run_sh(&c, "cat; cat /dev/null >&2") == 0 && c.out.len == n && c.status == 0,
		   "4 MiB through stdin and stdout without deadlock");
		run_release(&c);
		free(big);
	}

	c = (struct run_cmd)RUN_CMD_INIT;
	c.out_cap = 1000;
	ok(run_sh(&c, "head -c 100000 /dev/zero | tr '\\0' y") == 0, "capped run");
	is_int(c.out.len, 1000, "output is capped");
	ok(c.truncated && c.status == 0, "truncation flagged, child still exits normally");
	run_release(&c);

	c = (struct run_cmd)RUN_CMD_INIT;
	c.timeout_ms = 300;
	c.kill_grace_ms = 300;
	t0 = now_ms();
	ok(run_sh(&c, "sleep 30 & sleep 30; echo never") == 0, "a timed-out run returns");
	ok(c.timed_out && c.signaled, "timeout kills: %s", run_describe(&c));
	ok(now_ms() - t0 < 10000, "the timeout is honoured (also with a grandchild holding the pipes)");
	ok(strstr(run_describe(&c), "timed out") != NULL, "described as timed out");
	run_release(&c);

	c = (struct run_cmd)RUN_CMD_INIT;
	c.timeout_ms = 300;
	c.kill_grace_ms = 200;
	t0 = now_ms();
	ok(run_sh(&c, "trap '' TERM; sleep 30") == 0 && c.timed_out, "a child ignoring TERM");
	ok(c.signaled && c.status == 128 + SIGKILL, "is killed with KILL after the grace period");
	run_release(&c);

	{
		const char *argv[] = { "/nonexistent/prog", NULL };

		c = (struct run_cmd)RUN_CMD_INIT;
		c.argv = argv;
		is_int(run_command(&c), -1, "a missing program is an error before fork");
		run_release(&c);
	}
	{
		const char *argv[] = { "klab-no-such-program-xyz", NULL };

		c = (struct run_cmd)RUN_CMD_INIT;
		c.argv = argv;
		is_int(run_command(&c), -1, "a program not in PATH is an error");
		run_release(&c);
	}
	{
		const char *argv[] = { "pwd", NULL };

		c = (struct run_cmd)RUN_CMD_INIT;
		c.argv = argv;
		c.dir = "/tmp";
		ok(run_command(&c) == 0 && !strcmp(c.out.buf, "/tmp\n"), "working directory");
		run_release(&c);
		c = (struct run_cmd)RUN_CMD_INIT;
		c.argv = argv;
		c.dir = "/nonexistent-dir";
		is_int(run_command(&c), -1, "a missing working directory is reported through the exec pipe");
		run_release(&c);
	}
	{
		/* c.why set: the caller gets why it did not start, and nothing is logged */
		const char *nope[] = { "klab-no-such-program", NULL }, *pwd[] = { "pwd", NULL };
		struct buf why = BUF_INIT;
		int rc;

		c = (struct run_cmd)RUN_CMD_INIT;
		c.argv = nope;
		c.why = &why;
		log_clear_error();
		rc = run_command(&c);
		ok(rc == -1 && !strcmp(why.buf, "cannot run 'klab-no-such-program': not found in PATH") &&
		   !*log_last_error(), "not in PATH: the reason in c.why, not logged: %s", why.buf);
		run_release(&c);
		c = (struct run_cmd)RUN_CMD_INIT;
		c.argv = pwd;
		c.dir = "/nonexistent-dir";
		c.why = &why;
		rc = run_command(&c);
		ok(rc == -1 && !strcmp(why.buf, "cannot run 'pwd' in '/nonexistent-dir': No such file or directory") &&
		   !*log_last_error(), "a missing working directory: the exec pipe's reason in c.why: %s", why.buf);
		run_release(&c);
		c = (struct run_cmd)RUN_CMD_INIT;
		c.argv = nope;
		rc = run_command(&c);
		ok(rc == -1 && !strcmp(log_last_error(), "cannot run 'klab-no-such-program': not found in PATH"),
		   "without c.why it is logged: %s", log_last_error());
		run_release(&c);
		buf_release(&why);
	}
	{
		const char *env[] = { "KLAB_T1=hello", "HOME", NULL };

		c = (struct run_cmd)RUN_CMD_INIT;
		c.env = env;
		ok(run_sh(&c, "echo \"$KLAB_T1:${HOME-unset}\"") == 0 && !strcmp(c.out.buf, "hello:unset\n"),
		   "environment entries set and removed");
		run_release(&c);
	}
	{
		char *p = run_which("sh");

		ok(p && p[0] == '/', "which finds sh in PATH: %s", p ? p : "(null)");
		free(p);
	}
	/* start, signal the group, finish: how monitors are stopped */
	c = (struct run_cmd)RUN_CMD_INIT;
	{
		const char *argv[] = { "sh", "-c", "trap 'echo stopped; exit 0' INT; echo ready >&2; "
				       "while :; do sleep 0.05; done", NULL };
		char ch;
		ssize_t n;

		c.argv = argv;
		c.timeout_ms = 10000;
		ok(run_start(&c) == 0, "start a background child");
		/* wait for the trap to be set: the child says so on stderr */
		while ((n = read(c.fd_err, &ch, 1)) < 0 && errno == EINTR)
			;
		ok(n == 1 && ch == 'r', "the child is ready");
		ok(run_signal(&c, SIGINT) == 0, "signal its process group");
		ok(run_finish(&c) == 0 && c.status == 0 && strstr(c.out.buf, "stopped"), "it stopped cleanly");
		run_release(&c);
	}
	test_wait_output();
	return done_testing();
}
