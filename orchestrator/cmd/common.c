/* cmd/common.c: what every command does alike: subcommand dispatch, option parsing, help, output. */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "cmd.h"

/* Every synopsis line of C: its own, or those of its subcommands. */
static void usage_lines(FILE *f, const struct klab_cmd *c, int *n)
{
	const struct opt_spec *s = c->spec;

	if (c->subs) {
		for (const struct klab_cmd *const *sub = c->subs; *sub; sub++)
			usage_lines(f, *sub, n);
		return;
	}
	if (!s->usage || !*s->usage) {
		fprintf(f, "%s %s%s\n", (*n)++ ? "   or:" : "usage:", s->prog, s->opts ? " [options]" : "");
		return;
	}
	for (const char *const *u = s->usage; *u; u++)
		opt_usage_line(f, (*n)++, s->prog, *u);
}

void cmd_help(FILE *f, const struct klab_cmd *c)
{
	int n = 0;

	if (!c->subs) {
		opt_help(f, c->spec);
		return;
	}
	usage_lines(f, c, &n);
	if (c->spec->summary)
		fprintf(f, "\n%s\n", c->spec->summary);
	if (c->spec->doc)
		fprintf(f, "\n%s%s", c->spec->doc, c->spec->doc[strlen(c->spec->doc) - 1] == '\n' ? "" : "\n");
	fputc('\n', f);
	for (const struct klab_cmd *const *sub = c->subs; *sub; sub++)
		if (!((*sub)->flags & CMD_HELP_ONLY))
			fprintf(f, "  %-10s %s\n", (*sub)->name, (*sub)->spec->summary ? (*sub)->spec->summary : "");
	fprintf(f, "\n'%s SUBCOMMAND --help' shows the options of one.\n", c->spec->prog);
}

int cmd_usage_error(const struct opt_spec *spec, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", spec->prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	opt_usage(stderr, spec);
	return 2;
}

int cmd_parse(const struct opt_spec *spec, int argc, char **argv, int *status)
{
	int n = opt_parse(spec, argc, argv, 0);

	*status = n == OPT_HELP ? 0 : 2;
	return n;
}

int cmd_run(const struct klab_cmd *c, int argc, char **argv, struct klab_ctx *ctx)
{
	const struct klab_cmd *const *sub;
	struct buf names = BUF_INIT;
	int n = 0;

	if (!c->subs) {
		if (cmd_format == PRINT_FMT_CSV && !(c->flags & CMD_LISTING))
			return cmd_usage_error(c->spec, "--csv is for listings; this command prints text or --json");
		return c->fn(argc, argv, ctx);
	}
	if (argc < 2) {
		if (c->flags & CMD_DEFAULT_SUB)
			return cmd_run(c->subs[0], argc, argv, ctx);
		usage_lines(stderr, c, &n);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		cmd_help(stdout, c);
		return 0;
	}
	for (sub = c->subs; *sub; sub++)
		if (!((*sub)->flags & CMD_HELP_ONLY) && !strcmp((*sub)->name, argv[1]))
			return cmd_run(*sub, argc - 1, argv + 1, ctx);
	for (sub = c->subs; *sub; sub++)
		if (!((*sub)->flags & CMD_HELP_ONLY))
			buf_addf(&names, "%s%s", names.len ? ", " : "", (*sub)->name);
	fprintf(stderr, "%s: unknown subcommand '%s' (%s)\n", c->spec->prog, argv[1], names.buf);
	buf_release(&names);
	usage_lines(stderr, c, &n);
	return 2;
}

void cmd_print_begin(void)
{
	print_begin(cmd_format, stdout);
}

int cmd_print_end(void)
{
	return print_end() ? 1 : 0;
}

static volatile sig_atomic_t stop_flag;

static void on_stop(int sig)
{
	if (stop_flag) {
		/* A second signal: stop now. */
		signal(sig, SIG_DFL);
		raise(sig);
	}
	stop_flag = 1;
}

volatile sig_atomic_t *cmd_stop_on_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	return &stop_flag;
}
