/* opt.c: table-driven option parsing, with --help and man page text from the same table. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt.h"
#include "strvec.h"
#include "util.h"

#define HELP_COLUMN 28

static int takes_value(const struct opt *o)
{
	return o->type != OPT_T_FLAG && o->type != OPT_T_COUNT;
}

static int visible(const struct opt *o)
{
	return o->type != OPT_T_ELSEWHERE && !(o->flags & OPT_HIDDEN);
}

/* How the user writes the option: "--name", or "-x" when it has no long name. */
static const char *opt_name(const struct opt *o, char *buf, size_t n)
{
	if (o->long_name)
		snprintf(buf, n, "--%s", o->long_name);
	else
		snprintf(buf, n, "-%c", o->short_name);
	return buf;
}

static const struct opt *find_long(const struct opt *opts, const char *name, size_t len)
{
	for (const struct opt *o = opts; o && o->type != OPT_T_END; o++)
		if (o->type != OPT_T_ELSEWHERE && o->long_name && strlen(o->long_name) == len &&
		    !strncmp(o->long_name, name, len))
			return o;
	return NULL;
}

static const struct opt *find_short(const struct opt *opts, char c)
{
	for (const struct opt *o = opts; o && o->type != OPT_T_END; o++)
		if (o->type != OPT_T_ELSEWHERE && o->short_name && o->short_name == c)
			return o;
	return NULL;
}

/* The command an unknown option belongs to (an OPT_ELSEWHERE entry), or NULL. */
static const char *elsewhere(const struct opt *opts, const char *name, size_t len, char c)
{
	for (const struct opt *o = opts; o && o->type != OPT_T_END; o++) {
		const struct opt *other = o->value;

		if (o->type != OPT_T_ELSEWHERE)
			continue;
		if (name ? find_long(other, name, len) != NULL : find_short(other, c) != NULL)
			return o->help;
	}
	return NULL;
}

static int wants_help(const struct opt *opts, const char *name, size_t len, char c)
{
	if (name)
		return len == 4 && !strncmp(name, "help", 4) && !find_long(opts, "help", 4);
	return c == 'h' && !find_short(opts, 'h');
}

static void vfail(const struct opt_spec *spec, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", spec->prog);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	opt_usage(stderr, spec);
}

static int fail(const struct opt_spec *spec, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(const struct opt_spec *spec, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(spec, fmt, ap);
	va_end(ap);
	return OPT_ERROR;
}

int opt_usage_error(const struct opt_spec *spec, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(spec, fmt, ap);
	va_end(ap);
	return 2;
}

/* "30s" for 30000, "2m", "1h", "500ms": a bound of a duration in the words of the parser. */
static void fmt_ms(char *buf, size_t n, long ms)
{
	if (ms && ms % 3600000 == 0)
		snprintf(buf, n, "%ldh", ms / 3600000);
	else if (ms && ms % 60000 == 0)
		snprintf(buf, n, "%ldm", ms / 60000);
	else if (ms % 1000 == 0)
		snprintf(buf, n, "%lds", ms / 1000);
	else
		snprintf(buf, n, "%ldms", ms);
}

/* Store ARG (NULL for a flag) as option O says; SHORT_FORM: the user wrote "-x", named so in errors. */
static int apply(const struct opt_spec *spec, const struct opt *o, const char *arg, int short_form)
{
	char name[64], lo[32], hi[32];
	double d;
	long l;

	if (short_form)
		snprintf(name, sizeof(name), "-%c", o->short_name);
	else
		opt_name(o, name, sizeof(name));
	switch (o->type) {
	case OPT_T_FLAG: {
		int *p = o->value;

		if ((o->flags & OPT_EXCLUSIVE) && *p && *p != (int)o->min) {
			char other[64] = "another option";

			for (const struct opt *x = spec->opts; x->type != OPT_T_END; x++)
				if (x->type == OPT_T_FLAG && x->value == o->value && (int)x->min == *p)
					opt_name(x, other, sizeof(other));
			return fail(spec, "options '%s' and '%s' exclude each other", other, name);
		}
		*p = (int)o->min;
		return 0;
	}
	case OPT_T_COUNT:
		(*(int *)o->value)++;
		return 0;
	case OPT_T_STRING:
		*(const char **)o->value = arg;
		return 0;
	case OPT_T_LIST:
		strvec_push(o->value, arg);
		return 0;
	case OPT_T_INT:
		if (parse_long(arg, o->min, o->max, &l)) {
			if (o->max == LONG_MAX)
				return fail(spec, "option '%s': '%s' is not a number of at least %ld", name, arg, o->min);
			return fail(spec, "option '%s': '%s' is not a number from %ld to %ld", name, arg, o->min,
				    o->max);
		}
		*(long *)o->value = l;
		return 0;
	case OPT_T_DOUBLE:
		if (parse_double(arg, &d))
			return fail(spec, "option '%s': '%s' is not a number", name, arg);
		*(double *)o->value = d;
		return 0;
	case OPT_T_DURATION:
		if (parse_duration_ms(arg, &l) || l < o->min || l > o->max) {
			if (o->max == LONG_MAX)
				return fail(spec, "option '%s': '%s' is not a duration (such as 30s, 500ms, 5m, 2h)",
					    name, arg);
			fmt_ms(lo, sizeof(lo), o->min);
			fmt_ms(hi, sizeof(hi), o->max);
			return fail(spec, "option '%s': '%s' is not a duration from %s to %s (such as 30s, 500ms, 5m)",
				    name, arg, lo, hi);
		}
		*(long *)o->value = l;
		return 0;
	case OPT_T_CALLBACK:
		if (o->cb(arg, o->value))
			return fail(spec, "option '%s': '%s' is not %s", name, arg, o->expect ? o->expect : "valid");
		return 0;
	case OPT_T_END:
	case OPT_T_ELSEWHERE:
		break;
	}
	return fail(spec, "option '%s': not an option", name);
}

static int long_option(const struct opt_spec *spec, int argc, char **argv, int *i)
{
	const char *a = argv[*i] + 2, *eq = strchr(a, '=');
	size_t len = eq ? (size_t)(eq - a) : strlen(a);
	const struct opt *o = find_long(spec->opts, a, len);
	const char *where;

	if (!o) {
		if (wants_help(spec->opts, a, len, 0) && !eq) {
			opt_help(stdout, spec);
			return OPT_HELP;
		}
		where = elsewhere(spec->opts, a, len, 0);
		if (where)
			return fail(spec, "option '--%.*s' is only for '%s'", (int)len, a, where);
		return fail(spec, "unknown option '--%.*s'", (int)len, a);
	}
	if (!takes_value(o)) {
		if (eq)
			return fail(spec, "option '--%s' takes no value", o->long_name);
		return apply(spec, o, NULL, 0);
	}
	if (eq)
		return apply(spec, o, eq + 1, 0);
	if (*i + 1 >= argc)
		return fail(spec, "option '--%s' needs a value", o->long_name);
	return apply(spec, o, argv[++*i], 0);
}

static int short_options(const struct opt_spec *spec, int argc, char **argv, int *i)
{
	for (const char *p = argv[*i] + 1; *p; p++) {
		const struct opt *o = find_short(spec->opts, *p);
		const char *where;

		if (!o) {
			if (wants_help(spec->opts, NULL, 0, *p)) {
				opt_help(stdout, spec);
				return OPT_HELP;
			}
			where = elsewhere(spec->opts, NULL, 0, *p);
			if (where)
				return fail(spec, "option '-%c' is only for '%s'", *p, where);
			return fail(spec, "unknown option '-%c'", *p);
		}
		if (!takes_value(o)) {
			if (apply(spec, o, NULL, 1))
				return OPT_ERROR;
			continue;
		}
		if (p[1])
			return apply(spec, o, p + 1, 1);
		if (*i + 1 >= argc)
			return fail(spec, "option '-%c' needs a value", *p);
		return apply(spec, o, argv[++*i], 1);
	}
	return 0;
}

int opt_parse(const struct opt_spec *spec, int argc, char **argv, unsigned flags)
{
	int i, n = 0, r;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--")) {
			while (++i < argc)
				argv[n++] = argv[i];
			break;
		}
		if (a[0] != '-' || !a[1]) {
			argv[n++] = argv[i];
			if (flags & OPT_STOP_AT_NON_OPTION) {
				while (++i < argc)
					argv[n++] = argv[i];
				break;
			}
			continue;
		}
		r = a[1] == '-' ? long_option(spec, argc, argv, &i) : short_options(spec, argc, argv, &i);
		if (r < 0)
			return r;
	}
	argv[n] = NULL;
	return n;
}

void opt_usage_line(FILE *f, int n, const char *prog, const char *line)
{
	if (*line == ' ')
		fprintf(f, "%*s%s\n", (int)strlen(prog) + 7, "", line);
	else
		fprintf(f, "%s %s%s%s\n", n ? "   or:" : "usage:", prog, *line ? " " : "", line);
}

void opt_usage(FILE *f, const struct opt_spec *spec)
{
	const char *const *u = spec->usage;

	if (!u || !*u) {
		fprintf(f, "usage: %s%s\n", spec->prog, spec->opts ? " [options]" : "");
		return;
	}
	for (size_t i = 0; u[i]; i++)
		opt_usage_line(f, (int)i, spec->prog, u[i]);
}

/* "  -c, --config FILE" */
static int opt_label(char *buf, size_t n, const struct opt *o)
{
	const char *mv = takes_value(o) ? (o->metavar ? o->metavar : "VALUE") : NULL;

	if (o->short_name && o->long_name)
		return snprintf(buf, n, "  -%c, --%s%s%s", o->short_name, o->long_name, mv ? " " : "", mv ? mv : "");
	if (o->long_name)
		return snprintf(buf, n, "      --%s%s%s", o->long_name, mv ? " " : "", mv ? mv : "");
	return snprintf(buf, n, "  -%c%s%s", o->short_name, mv ? " " : "", mv ? mv : "");
}

void opt_help(FILE *f, const struct opt_spec *spec)
{
	opt_usage(f, spec);
	if (spec->summary && *spec->summary)
		fprintf(f, "\n%s\n", spec->summary);
	if (spec->doc && *spec->doc)
		fprintf(f, "\n%s%s", spec->doc, spec->doc[strlen(spec->doc) - 1] == '\n' ? "" : "\n");
	opt_list(f, spec->opts);
}

void opt_list(FILE *f, const struct opt *opts)
{
	int any = 0;

	for (const struct opt *o = opts; o && o->type != OPT_T_END; o++) {
		char label[128];
		int len;

		if (!visible(o))
			continue;
		if (!any++)
			fputc('\n', f);
		len = opt_label(label, sizeof(label), o);
		fputs(label, f);
		if (len >= HELP_COLUMN - 1)
			fprintf(f, "\n%*s", HELP_COLUMN, "");
		else
			fprintf(f, "%*s", HELP_COLUMN - len, "");
		/* continuation lines of a long help line up under its first one */
		for (const char *h = o->help ? o->help : ""; *h; h++) {
			fputc(*h, f);
			if (*h == '\n' && h[1])
				fprintf(f, "%*s", HELP_COLUMN, "");
		}
		fputc('\n', f);
	}
}

void opt_man_text(FILE *f, const char *text)
{
	int bol = 1;

	for (const char *p = text ? text : ""; *p; p++) {
		if (bol && (*p == '.' || *p == '\''))
			fputs("\\&", f);
		if (*p == '\\')
			fputs("\\e", f);
		else if (*p == '-')
			fputs("\\-", f);
		else
			fputc(*p, f);
		bol = *p == '\n';
	}
}

void opt_man(FILE *f, const struct opt *opts)
{
	for (const struct opt *o = opts; o && o->type != OPT_T_END; o++) {
		if (!visible(o))
			continue;
		fputs(".TP\n", f);
		if (o->short_name) {
			fprintf(f, "\\fB\\-%c\\fR", o->short_name);
			if (o->long_name)
				fputs(", ", f);
		}
		if (o->long_name) {
			fputs("\\fB\\-\\-", f);
			opt_man_text(f, o->long_name);
			fputs("\\fR", f);
		}
		if (takes_value(o)) {
			fputs(" \\fI", f);
			opt_man_text(f, o->metavar ? o->metavar : "VALUE");
			fputs("\\fR", f);
		}
		fputc('\n', f);
		opt_man_text(f, o->help);
		fputc('\n', f);
	}
}
