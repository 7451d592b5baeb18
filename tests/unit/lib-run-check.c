/* lib-run-check.c: run_cmd's log fd, nice value and progress tick; run_check, run_argv and run_failure. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "log.h"
#include "run.h"
#include "tap.h"
#include "util.h"

static void count_tick(void *arg)
{
	(*(int *)arg)++;
}

int main(void)
{
	char *logpath = xasprintf("%s/a.log", tap_scratch_dir());
	struct run_cmd c = RUN_CMD_INIT;
	struct buf b = BUF_INIT;
	int fd, ticks = 0;

	/* out_fd: both streams go to the log, appended, nothing captured */
	fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (write(fd, "before\n", 7) != 7)
		diag("cannot write the log");
	{
		const char *argv[] = { "sh", "-c", "echo out; echo err >&2; sleep 0.6; exit 4", NULL };

		c.argv = argv;
		c.out_fd = fd;
		c.tick = count_tick;
		c.tick_arg = &ticks;
		is_int(run_command(&c), 0, "a logged command runs");
		is_int(c.status, 4, "its exit status");
		ok(c.out.len == 0 && c.err.len == 0, "nothing captured");
		ok(ticks >= 1 && ticks <= 4, "the tick came every 250 ms or so (%d times in 0.6 s)", ticks);
		run_release(&c);
	}
	close(fd);
	buf_read_file(&b, logpath);
	ok(strstr(b.buf, "before\nout\n") && strstr(b.buf, "err\n"), "the log has both streams after what it held");

	/* nice: the child's priority */
	{
		const char *argv[] = { "sh", "-c", "cut -d' ' -f19 /proc/self/stat", NULL };

		c = (struct run_cmd)RUN_CMD_INIT;
		c.argv = argv;
		c.nice = 19;
		is_int(run_command(&c), 0, "a command with a nice value runs");
		is_int(atoi(c.out.buf), 19, "at nice 19");
		run_release(&c);
	}

	/* run_check and run_failure */
	{
		const char *argv[] = { "sh", "-c", "echo partial; echo first >&2; echo 'the reason' >&2; exit 2", NULL };

		c = (struct run_cmd)RUN_CMD_INIT;
		c.argv = argv;
		log_clear_error();
		log_set_level(LOG_CRIT);
		is_int(run_check(&c), -1, "run_check: a non-zero exit is a failure");
		log_set_level(LOG_NOTICE);
		is_str(log_last_error(), "'sh -c echo partial; echo first >&2; echo 'the reason' >&2; exit 2' failed "
		       "(exit status 2): the reason", "logged with the command and the last stderr line");
		is_str(c.out.buf, "partial\n", "the output is kept for the caller");
		is_str(run_failure(&c), "the reason", "run_failure: the last stderr line");
		run_release(&c);
	}
	{
		const char *argv[] = { "sh", "-c", "echo only-stdout; exit 1", NULL };

		c = (struct run_cmd)RUN_CMD_INIT;
		c.argv = argv;
		c.quiet = 1;
		log_clear_error();
		ok(run_check(&c) == -1 && !*log_last_error(), "quiet: the failure is not logged");
		is_str(run_failure(&c), "only-stdout", "run_failure falls back to stdout");
		run_release(&c);
	}
	{
		const char *argv[] = { "sleep", "5", NULL };

		c = (struct run_cmd)RUN_CMD_INIT;
		c.argv = argv;
		c.timeout_ms = 200;
		c.quiet = 1;
		ok(run_check(&c) == -1 && c.timed_out, "a timeout is a failure");
		ok(starts_with(run_failure(&c), "timed out after"), "run_failure says it timed out: %s", run_failure(&c));
		run_release(&c);
	}
	{
		const char *ok_argv[] = { "echo", "hello", NULL };
		const char *bad_argv[] = { "false", NULL };

		buf_reset(&b);
		ok(run_argv(ok_argv, 0, &b, 0) == 0 && !strcmp(b.buf, "hello\n"), "run_argv appends stdout");
		log_clear_error();
		log_set_level(LOG_CRIT);
		ok(run_argv(bad_argv, 0, &b, 0) == -1 && !strcmp(log_last_error(), "'false' failed (exit status 1)"),
		   "run_argv logs a failure: %s", log_last_error());
		log_set_level(LOG_NOTICE);
		is_str(b.buf, "hello\n", "and leaves OUT alone after one");
	}
	buf_release(&b);
	free(logpath);
	return done_testing();
}
