/* lib-quote.c: shell quoting proven by running the quoted string through sh -c. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "quote.h"
#include "run.h"
#include "tap.h"

/*
 * Quote argv, run `sh -c "printf '%s\0' QUOTED"` and compare what printf
 * received with argv, byte for byte.
 */
static void roundtrip(const char *const *argv, const char *name)
{
	struct buf cmd = BUF_INIT, want = BUF_INIT;
	struct run_cmd c = RUN_CMD_INIT;
	const char *sh[] = { "/bin/sh", "-c", NULL, NULL };

	buf_addstr(&cmd, "printf '%s\\0' ");
	sq_quote_argv(&cmd, argv);
	sh[2] = cmd.buf;
	c.argv = sh;
	c.timeout_ms = 10000;
	for (const char *const *a = argv; *a; a++)
		buf_add(&want, *a, strlen(*a) + 1);
	ok(run_command(&c) == 0 && c.status == 0 && c.out.len == want.len &&
	   !memcmp(c.out.buf, want.buf, want.len), "sh -c gets the exact argv back: %s", name);
	run_release(&c);
	buf_release(&cmd);
	buf_release(&want);
}

int main(void)
{
	struct buf b = BUF_INIT;
	char binary[255];

	sq_quote(&b, "plain");
	is_str(b.buf, "'plain'", "a plain word is single-quoted");
	buf_reset(&b);
	sq_quote(&b, "it's");
	is_str(b.buf, "'it'\\''s'", "an embedded quote is closed, escaped and reopened");
	buf_reset(&b);
	sq_quote(&b, "");
	is_str(b.buf, "''", "the empty word survives as ''");
	buf_reset(&b);
	{
		const char *const argv[] = { "a", "b c", NULL };

		sq_quote_argv(&b, argv);
		is_str(b.buf, "'a' 'b c'", "words are separated by one space");
	}
	buf_release(&b);

	{
		const char *const a1[] = { "simple", "two words", "", NULL };
		const char *const a2[] = { "'", "''", "it's", "'\\''", NULL };
		char *canary = xasprintf("%s/canary", tap_scratch_dir());
		char *subst = xasprintf("$(touch %s)", canary);
		char *bq = xasprintf("`touch %s`", canary);
		const char *const a3[] = { subst, bq, "$HOME", "${PATH}", NULL };
		const char *const a4[] = { "a;b", "a|b", "a&&b", "a>b", "<x", "*", "?", "[a]", "~", "#c", NULL };
		const char *const a5[] = { "line1\nline2", "\n", "\ttab", "back\\slash", "\"dq\"", "!bang", NULL };
		const char *const a6[] = { "--opt=\"x y\"", "-e", "-n", "%s%d", NULL };

		roundtrip(a1, "plain words and the empty string");
		roundtrip(a2, "single quotes");
		roundtrip(a3, "command substitution and variables");
		ok(!file_exists(canary), "$() and backticks inside a word run nothing");
		roundtrip(a4, "operators and globs");
		roundtrip(a5, "newlines, tabs, backslashes, double quotes");
		roundtrip(a6, "options and format strings");
		free(canary);
		free(subst);
		free(bq);
	}
	for (int i = 1; i < 256; i++)
		binary[i - 1] = (char)i;
	binary[254] = '\0';
	{
		const char *const a7[] = { binary, binary + 100, NULL };

		roundtrip(a7, "every byte value 1..255");
	}
	return done_testing();
}
