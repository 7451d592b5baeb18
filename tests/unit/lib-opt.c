/* lib-opt.c: unit tests of the option parser: values, errors, --help and man text from one table. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "opt.h"
#include "strvec.h"
#include "tap.h"

static const char *tree, *when;
static long jobs = 4, timeout_ms = 30000;
static double ratio;
static int force, verbose, format;
static struct strvec patches = STRVEC_INIT;

static int parse_when(const char *arg, void *value)
{
	if (strcmp(arg, "today") && strcmp(arg, "yesterday"))
		return -1;
	*(const char **)value = arg;
	return 0;
}

static const struct opt up_only[] = {
	OPT_INT(0, "smp", &jobs, "N", 1, 8, "vCPUs"),
	OPT_END(),
};

static const struct opt opts[] = {
	OPT_STRING('t', "tree", &tree, "NAME", "the tree to build"),
	OPT_INT('j', "jobs", &jobs, "N", 1, 1024, "make -jN"),
	OPT_BOOL('f', "force", &force, "build even when a kernel is stored"),
	OPT_COUNT('v', "verbose", &verbose, "say more (twice: debug)"),
	OPT_LIST(0, "local-patch", &patches, "FILE", "a patch applied after the series;\nmay be repeated"),
	OPT_DOUBLE(0, "ratio", &ratio, "X", "a ratio"),
	OPT_DURATION(0, "timeout", &timeout_ms, "DURATION", 1000, 3600000, "give up after DURATION"),
	OPT_CALLBACK(0, "when", &when, "WHEN", parse_when, "a day (today or yesterday)", "which day"),
	OPT_SET_INT_F(0, "json", &format, 1, "print JSON", OPT_EXCLUSIVE),
	OPT_SET_INT_F(0, "csv", &format, 2, "print CSV", OPT_EXCLUSIVE),
	OPT_SET_INT_F(0, "secret", &force, 1, "not shown", OPT_HIDDEN),
	OPT_ELSEWHERE(up_only, "klab lab up"),
	OPT_END(),
};

static const char *const usage[] = { "[--tree NAME] [-j N] [--force]", "--when WHEN", NULL };
static const struct opt_spec spec = { "klab kernels build", usage, "build a kernel", "Builds a kernel.", opts };

static void reset(void)
{
	tree = when = NULL;
	jobs = 4;
	timeout_ms = 30000;
	ratio = 0;
	force = verbose = format = 0;
	strvec_clear(&patches);
}

/* Parse the words of LINE (split on spaces); stderr and stdout of the parser into err/out. */
static struct strvec words = STRVEC_INIT;	/* the values point into it until the next parse */

static int parse(const char *line, struct strvec *rest, struct buf *err, struct buf *out)
{
	char **argv;
	char path_err[4096], path_out[4096];
	int n, fd_err, fd_out, save_err, save_out;

	snprintf(path_err, sizeof(path_err), "%s/err", tap_scratch_dir());
	snprintf(path_out, sizeof(path_out), "%s/out", tap_scratch_dir());
	strvec_clear(&words);
	strvec_push(&words, "build");
	strvec_split(&words, line, " ");
	argv = xcalloc(words.n + 1, sizeof(*argv));
	for (size_t i = 0; i < words.n; i++)
		argv[i] = words.v[i];
	fflush(stdout);
	fflush(stderr);
	fd_err = open(path_err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	fd_out = open(path_out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	save_err = dup(2);
	save_out = dup(1);
	dup2(fd_err, 2);
	dup2(fd_out, 1);
	n = opt_parse(&spec, (int)words.n, argv, 0);
	fflush(stdout);
	fflush(stderr);
	dup2(save_err, 2);
	dup2(save_out, 1);
	close(fd_err);
	close(fd_out);
	close(save_err);
	close(save_out);
	buf_reset(err);
	buf_reset(out);
	buf_read_file(err, path_err);
	buf_read_file(out, path_out);
	strvec_clear(rest);
	for (int i = 0; i < n; i++)
		strvec_push(rest, argv[i]);
	ok(n < 0 || argv[n] == NULL, "argv[n] is NULL after '%s'", line);
	free(argv);
	return n;
}

static void test_values(void)
{
	struct strvec rest = STRVEC_INIT;
	struct buf err = BUF_INIT, out = BUF_INIT;
	int n;

	reset();
	n = parse("a --tree net-next b -j 8 --force -vv --local-patch x.patch --local-patch=y.patch c", &rest, &err,
		  &out);
	is_int(n, 3, "three words are not options");
	ok(n == 3 && !strcmp(rest.v[0], "a") && !strcmp(rest.v[1], "b") && !strcmp(rest.v[2], "c"),
	   "the other words keep their order");
	is_str(tree, "net-next", "--tree VALUE");
	is_int(jobs, 8, "-j VALUE");
	ok(force == 1 && verbose == 2, "a flag, and a count bundled (-vv)");
	ok(patches.n == 2 && !strcmp(patches.v[1], "y.patch"), "a repeated list, with --name=VALUE");
	is_str(err.buf, "", "nothing on stderr");

	reset();
	n = parse("-tfoo -fj16 --timeout 5m --ratio=-2.5 --when today -- --force", &rest, &err, &out);
	ok(n == 1 && !strcmp(rest.v[0], "--force"), "after --, options are words");
	ok(tree && !strcmp(tree, "foo") && jobs == 16, "-xVALUE, and a value after bundled flags");
	ok(timeout_ms == 300000 && ratio == -2.5 && when && !strcmp(when, "today"), "duration, double, callback");

	reset();
	n = opt_parse(&spec, 1, (char *[]){ "build", NULL }, 0);
	is_int(n, 0, "no words at all");

	reset();
	{
		char *argv[] = { "klab", "--json", "query", "--csv", NULL };

		n = opt_parse(&spec, 4, argv, OPT_STOP_AT_NON_OPTION);
		ok(n == 2 && !strcmp(argv[0], "query") && !strcmp(argv[1], "--csv") && format == 1,
		   "OPT_STOP_AT_NON_OPTION leaves the rest alone");
	}
	strvec_clear(&rest);
	buf_release(&err);
	buf_release(&out);
}

static void test_errors(void)
{
	static const struct {
		const char *line;
		const char *msg;
	} cases[] = {
		{ "--bogus", "klab kernels build: unknown option '--bogus'\n" },
		{ "-x", "klab kernels build: unknown option '-x'\n" },
		{ "--tree", "klab kernels build: option '--tree' needs a value\n" },
		{ "-t", "klab kernels build: option '-t' needs a value\n" },
		{ "--force=1", "klab kernels build: option '--force' takes no value\n" },
		{ "-j 0", "klab kernels build: option '-j': '0' is not a number from 1 to 1024\n" },
		{ "--jobs=8x", "klab kernels build: option '--jobs': '8x' is not a number from 1 to 1024\n" },
		{ "--ratio abc", "klab kernels build: option '--ratio': 'abc' is not a number\n" },
		{ "--timeout 2h", "klab kernels build: option '--timeout': '2h' is not a duration from 1s to 1h "
				  "(such as 30s, 500ms, 5m)\n" },
		{ "--when tomorrow", "klab kernels build: option '--when': 'tomorrow' is not a day (today or yesterday)\n" },
		{ "--json --csv", "klab kernels build: options '--json' and '--csv' exclude each other\n" },
		{ "--smp 2", "klab kernels build: option '--smp' is only for 'klab lab up'\n" },
		{ "--forc", "klab kernels build: unknown option '--forc'\n" },
	};
	struct strvec rest = STRVEC_INIT;
	struct buf err = BUF_INIT, out = BUF_INIT;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		size_t len = strlen(cases[i].msg);

		reset();
		is_int(parse(cases[i].line, &rest, &err, &out), OPT_ERROR, "'%s' is an error", cases[i].line);
		ok(err.len > len && !strncmp(err.buf, cases[i].msg, len) &&
		   !strncmp(err.buf + len, "usage: klab kernels build [--tree NAME]", 39),
		   "'%s': the message, then the usage", cases[i].line);
		if (strncmp(err.buf, cases[i].msg, len))
			diag("got: %s", err.buf);
	}
	reset();
	parse("--json --json", &rest, &err, &out);
	ok(format == 1 && !err.len, "the same exclusive flag twice is fine");
	strvec_clear(&rest);
	buf_release(&err);
	buf_release(&out);
}

static void test_help(void)
{
	struct strvec rest = STRVEC_INIT;
	struct buf err = BUF_INIT, out = BUF_INIT;
	char *man = NULL;
	size_t len = 0;
	FILE *m;

	reset();
	is_int(parse("--tree x --help", &rest, &err, &out), OPT_HELP, "--help");
	is_str(out.buf,
	       "usage: klab kernels build [--tree NAME] [-j N] [--force]\n"
	       "   or: klab kernels build --when WHEN\n"
	       "\n"
	       "build a kernel\n"
	       "\n"
	       "Builds a kernel.\n"
	       "\n"
	       "  -t, --tree NAME           the tree to build\n"
	       "  -j, --jobs N              make -jN\n"
	       "  -f, --force               build even when a kernel is stored\n"
	       "  -v, --verbose             say more (twice: debug)\n"
	       "      --local-patch FILE    a patch applied after the series;\n"
	       "                            may be repeated\n"
	       "      --ratio X             a ratio\n"
	       "      --timeout DURATION    give up after DURATION\n"
	       "      --when WHEN           which day\n"
	       "      --json                print JSON\n"
	       "      --csv                 print CSV\n",
	       "the help: synopsis, doc, options from the table");
	is_int(parse("-h", &rest, &err, &out), OPT_HELP, "-h");
	is_str(err.buf, "", "help goes to stdout only");

	m = open_memstream(&man, &len);
	opt_man(m, up_only);
	opt_man_text(m, ".start -x \\ 'q'\n.next");
	fclose(m);
	is_str(man, ".TP\n\\fB\\-\\-smp\\fR \\fIN\\fR\nvCPUs\n\\&.start \\-x \\e 'q'\n\\&.next",
	       "man text: escaped dashes and backslashes, guarded leading dots");
	free(man);
	strvec_clear(&rest);
	buf_release(&err);
	buf_release(&out);
}

int main(void)
{
	test_values();
	test_errors();
	test_help();
	reset();
	strvec_clear(&words);
	return done_testing();
}
