/* opt.h: command-line options from one table: parsing, --help and man page text (after git's parse-options). */
#ifndef KLAB_OPT_H
#define KLAB_OPT_H

#include <limits.h>
#include <stdio.h>

struct strvec;

/*
 * A command describes its options in a table that ends with OPT_END():
 *
 *	static const char *tree;
 *	static long jobs;
 *	static int force;
 *	static const struct opt build_opts[] = {
 *		OPT_STRING(0, "tree", &tree, "NAME", "the tree to build"),
 *		OPT_INT('j', "jobs", &jobs, "N", 1, 1024, "make -jN"),
 *		OPT_BOOL(0, "force", &force, "build even when a kernel is stored"),
 *		OPT_END(),
 *	};
 *	static const char *const build_usage[] = { "[--tree NAME] [-j N] [--force]", NULL };
 *	static const struct opt_spec spec = { "klab kernels build", build_usage,
 *					      "build a kernel", NULL, build_opts };
 *
 *	argc = opt_parse(&spec, argc, argv, 0);
 *	if (argc < 0)
 *		return argc == OPT_HELP ? 0 : 2;
 *
 * The values point at storage of static duration so that the tables can be
 * static too: `klab help --man` walks every table without running a
 * command. The pointer's type is checked against the option's type.
 *
 * Long options are "--name VALUE" or "--name=VALUE" and are matched
 * exactly (no abbreviations); short ones "-x VALUE", "-xVALUE", and flags
 * bundle ("-dn"). Options may come anywhere among the other words unless
 * OPT_STOP_AT_NON_OPTION is given; "--" ends them. "-h" and "--help" print
 * the help unless the table uses the name.
 */

enum opt_type {
	OPT_T_END,
	OPT_T_FLAG,		/* int *: set to `min` */
	OPT_T_COUNT,		/* int *: one more each time (-v -v) */
	OPT_T_STRING,		/* const char ** */
	OPT_T_LIST,		/* struct strvec *: each use appends a copy */
	OPT_T_INT,		/* long *: a whole number within [min, max] */
	OPT_T_DOUBLE,		/* double *: a finite number */
	OPT_T_DURATION,		/* long *: milliseconds ("30s", "500ms", "5m"), within [min, max] */
	OPT_T_CALLBACK,		/* cb(arg, value) says 0 or -1; `expect` names what it wants */
	OPT_T_ELSEWHERE,	/* no option: `value` is the table of the command named by `help` */
};

#define OPT_HIDDEN 1u		/* parsed, but left out of --help and the man page */
#define OPT_EXCLUSIVE 2u	/* FLAG: refused when another flag already set the int otherwise */

struct opt {
	enum opt_type type;
	char short_name;	/* 0: none */
	const char *long_name;	/* NULL: none */
	void *value;
	const char *metavar;	/* what the value is called in the help ("N", "FILE") */
	const char *help;
	long min, max;
	int (*cb)(const char *arg, void *value);
	const char *expect;	/* CALLBACK: "a time (YYYY-MM-DD, ...)" for "'x' is not ..." */
	unsigned flags;
};

#define OPT_PTR_(T, v) ((void *)(1 ? (v) : (T)0))

#define OPT_END() { OPT_T_END, 0, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, 0 }
#define OPT_BOOL(s, l, v, h) { OPT_T_FLAG, (s), (l), OPT_PTR_(int *, v), NULL, (h), 1, 0, NULL, NULL, 0 }
/* Store `val` into the int; with OPT_EXCLUSIVE two such flags on one int exclude each other. */
#define OPT_SET_INT_F(s, l, v, val, h, f) \
	{ OPT_T_FLAG, (s), (l), OPT_PTR_(int *, v), NULL, (h), (val), 0, NULL, NULL, (f) }
#define OPT_SET_INT(s, l, v, val, h) OPT_SET_INT_F(s, l, v, val, h, 0)
#define OPT_COUNT(s, l, v, h) { OPT_T_COUNT, (s), (l), OPT_PTR_(int *, v), NULL, (h), 0, 0, NULL, NULL, 0 }
#define OPT_STRING_F(s, l, v, m, h, f) \
	{ OPT_T_STRING, (s), (l), OPT_PTR_(const char **, v), (m), (h), 0, 0, NULL, NULL, (f) }
#define OPT_STRING(s, l, v, m, h) OPT_STRING_F(s, l, v, m, h, 0)
#define OPT_LIST(s, l, v, m, h) { OPT_T_LIST, (s), (l), OPT_PTR_(struct strvec *, v), (m), (h), 0, 0, NULL, NULL, 0 }
#define OPT_INT(s, l, v, m, lo, hi, h) { OPT_T_INT, (s), (l), OPT_PTR_(long *, v), (m), (h), (lo), (hi), NULL, NULL, 0 }
#define OPT_DOUBLE(s, l, v, m, h) { OPT_T_DOUBLE, (s), (l), OPT_PTR_(double *, v), (m), (h), 0, 0, NULL, NULL, 0 }
#define OPT_DURATION(s, l, v, m, lo_ms, hi_ms, h) \
	{ OPT_T_DURATION, (s), (l), OPT_PTR_(long *, v), (m), (h), (lo_ms), (hi_ms), NULL, NULL, 0 }
#define OPT_CALLBACK(s, l, v, m, fn, what, h) \
	{ OPT_T_CALLBACK, (s), (l), (v), (m), (h), 0, 0, (fn), (what), 0 }
/* The options of TABLE are not for this command but for CMD: say so instead of "unknown". */
#define OPT_ELSEWHERE(table, cmd) { OPT_T_ELSEWHERE, 0, NULL, (void *)(table), NULL, (cmd), 0, 0, NULL, NULL, OPT_HIDDEN }

/* A command's options with the words that describe it. */
struct opt_spec {
	const char *prog;		/* "klab kernels build": messages and usage lines begin with it */
	const char *const *usage;	/* what follows prog in each synopsis line; NULL-terminated */
	const char *summary;		/* one line: what the command does, or NULL */
	const char *doc;		/* more text --help prints after the summary, or NULL */
	const struct opt *opts;		/* NULL: no options */
};

#define OPT_ERROR (-1)
#define OPT_HELP (-2)

#define OPT_STOP_AT_NON_OPTION 1u	/* the first word that is not an option ends the options */

/*
 * Parse argv[1..argc-1] (argv[0] is the command's name) against spec->opts.
 * The words that are not options are moved to argv[0..n-1] (argv[n] is
 * set to NULL) and n is returned. --help prints opt_help() on stdout and
 * returns OPT_HELP; a bad option prints "PROG: option '--x' needs a value"
 * (or is unknown, takes no value, "'v' is not a number from 1 to 8", ...)
 * and the synopsis on stderr and returns OPT_ERROR. A command turns these
 * into exit status 0 and 2.
 */
int opt_parse(const struct opt_spec *spec, int argc, char **argv, unsigned flags);

/* "PROG: " and the message on stderr, then the synopsis: for a command's own checks. 2. */
int opt_usage_error(const struct opt_spec *spec, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * The synopsis lines: "usage: PROG USAGE" and "   or: PROG USAGE"; a
 * usage line that begins with a space continues the one before it.
 */
void opt_usage(FILE *f, const struct opt_spec *spec);
/* One synopsis line, the Nth (0: "usage:") of PROG. */
void opt_usage_line(FILE *f, int n, const char *prog, const char *line);
/* The synopsis, the summary, the doc and the options (opt_list). */
void opt_help(FILE *f, const struct opt_spec *spec);
/* Every visible option with its help, one per line (after a blank line, if there are any). */
void opt_list(FILE *f, const struct opt *opts);
/* The visible options as roff .TP paragraphs (for a man page). */
void opt_man(FILE *f, const struct opt *opts);
/* Text for roff: backslashes and dashes escaped, a leading '.' or '\'' guarded. */
void opt_man_text(FILE *f, const char *text);

#endif
