/*
 * conf_read.c: the reader of the git-config-style configuration: lines,
 * sections, quoting, [include]; every key kept with its file and line for
 * the typed pass (conf.c).
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "conf/conf_int.h"
#include "log.h"

void conf_perr(struct parser *p, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	p->errors++;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* Parse a value: quotes, escapes, comments. NULL on a syntax error (*why set). */
static char *parse_value(const char *s, const char **why)
{
	struct buf b = BUF_INIT;
	int quoted = 0;
	size_t trail = 0;	/* length up to the last byte that was not unquoted space */

	while (isspace((unsigned char)*s))
		s++;
	for (; *s; s++) {
		if (!quoted && (*s == '#' || *s == ';'))
			break;
		if (*s == '"') {
			quoted = !quoted;
			trail = b.len;
			continue;
		}
		if (*s == '\\') {
			s++;
			switch (*s) {
			case '"': case '\\': buf_addch(&b, *s); break;
			case 'n': buf_addch(&b, '\n'); break;
			case 't': buf_addch(&b, '\t'); break;
			default:
				*why = "bad escape sequence in value (use \\\\, \\\", \\n or \\t)";
				buf_release(&b);
				return NULL;
			}
			trail = b.len;
			continue;
		}
		buf_addch(&b, *s);
		if (quoted || !isspace((unsigned char)*s))
			trail = b.len;
	}
	if (quoted) {
		*why = "unterminated quoted value";
		buf_release(&b);
		return NULL;
	}
	buf_setlen(&b, trail);
	return buf_detach(&b, NULL);
}

static struct raw_section *new_section(struct parser *p, const char *type, const char *name,
				       const char *file, int line)
{
	struct raw_section *s;

	if (p->n == p->alloc) {
		p->alloc = p->alloc ? p->alloc * 2 : 16;
		p->sec = xrealloc(p->sec, p->alloc * sizeof(*p->sec));
	}
	s = &p->sec[p->n++];
	memset(s, 0, sizeof(*s));
	s->type = xstrdup(type);
	s->name = name ? xstrdup(name) : NULL;
	s->file = file;
	s->line = line;
	return s;
}

static void add_kv(struct parser *p, struct raw_section *s, const char *key, char *value, int line)
{
	for (size_t i = 0; i < s->n; i++) {
		if (!strcmp(s->kv[i].key, key)) {
			conf_perr(p, s->file, line, "key '%s' given twice in this section (first at line %d)",
			     key, s->kv[i].line);
			free(value);
			return;
		}
	}
	if (s->n == s->alloc) {
		s->alloc = s->alloc ? s->alloc * 2 : 8;
		s->kv = xrealloc(s->kv, s->alloc * sizeof(*s->kv));
	}
	s->kv[s->n].key = xstrdup(key);
	s->kv[s->n].value = value;
	s->kv[s->n].line = line;
	s->n++;
}

char *conf_relative_to(const char *file, const char *path)
{
	char *real, *slash, *out;

	if (path[0] == '/')
		return xstrdup(path);
	real = realpath(file, NULL);
	if (!real) {
		const char *s = strrchr(file, '/');

		return s ? xasprintf("%.*s/%s", (int)(s - file), file, path) : xstrdup(path);
	}
	slash = strrchr(real, '/');
	*slash = '\0';
	out = xasprintf("%s/%s", *real ? real : "", path);
	free(real);
	return out;
}

static void parse_header(struct parser *p, char *line, const char *file, int lineno,
			 struct raw_section **cur)
{
	char *end = strrchr(line, ']');
	char *inner, *q;

	*cur = NULL;
	if (!end) {
		conf_perr(p, file, lineno, "section header without ']'");
		return;
	}
	if (*trim(end + 1) && end[1] != '#' && end[1] != ';') {
		char *rest = trim(end + 1);

		if (*rest != '#' && *rest != ';') {
			conf_perr(p, file, lineno, "unexpected text after the section header");
			return;
		}
	}
	*end = '\0';
	inner = trim(line + 1);
	q = strchr(inner, '"');
	if (!q) {
		for (char *c = inner; *c; c++) {
			if (!isalnum((unsigned char)*c) && *c != '_' && *c != '-') {
				conf_perr(p, file, lineno, "bad section name '%s'", inner);
				return;
			}
		}
		*cur = new_section(p, inner, NULL, file, lineno);
		return;
	}
	{
		char *type = inner, *name = q + 1, *close = strrchr(name, '"');

		if (!close || close == q) {
			conf_perr(p, file, lineno, "unterminated section name in header");
			return;
		}
		*q = '\0';
		*close = '\0';
		type = trim(type);
		if (*trim(close + 1)) {
			conf_perr(p, file, lineno, "unexpected text after the section name");
			return;
		}
		if (!*name) {
			conf_perr(p, file, lineno, "empty section name in [%s \"\"]", type);
			return;
		}
		for (char *c = name; *c; c++) {
			if (!isalnum((unsigned char)*c) && !strchr("_-.+:@", *c)) {
				conf_perr(p, file, lineno, "bad %s name '%s' (letters, digits and _-.+:@ only)",
				     type, name);
				return;
			}
		}
		*cur = new_section(p, type, name, file, lineno);
	}
}

int conf_read_file(struct parser *p, const char *path, const char *from, int from_line)
{
	FILE *f;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int lineno = 0;
	struct raw_section *cur = NULL;
	const char *file;

	if (p->depth > 8) {
		conf_perr(p, from, from_line, "includes nested too deeply at '%s'", path);
		return -1;
	}
	f = fopen(path, "r");
	if (!f) {
		if (from)
			conf_perr(p, from, from_line, "cannot read included file '%s': %s", path, strerror(errno));
		else
			error("cannot read configuration '%s': %s", path, strerror(errno)), p->errors++;
		return -1;
	}
	file = strvec_push(&p->files, path);
	p->depth++;
	while ((len = getline(&line, &cap, f)) >= 0) {
		char *s, *eq, *key;

		lineno++;
		if (memchr(line, '\0', (size_t)len)) {
			conf_perr(p, file, lineno, "NUL byte in the file");
			continue;
		}
		s = trim(line);
		if (!*s || *s == '#' || *s == ';')
			continue;
		if (*s == '[') {
			parse_header(p, s, file, lineno, &cur);
			continue;
		}
		if (!cur) {
			conf_perr(p, file, lineno, "key outside of any section");
			continue;
		}
		eq = strchr(s, '=');
		key = s;
		if (eq)
			*eq = '\0';
		key = trim(key);
		for (char *c = key; *c; c++) {
			if (!isalnum((unsigned char)*c) && *c != '_' && *c != '-' && *c != '.') {
				conf_perr(p, file, lineno, "bad key name '%s'", key);
				key = NULL;
				break;
			}
		}
		if (!key)
			continue;
		if (!*key) {
			conf_perr(p, file, lineno, "missing key name before '='");
			continue;
		}
		{
			const char *why = NULL;
			char *value = eq ? parse_value(eq + 1, &why) : xstrdup("true");

			if (!value) {
				conf_perr(p, file, lineno, "%s", why);
				continue;
			}
			if (!strcmp(cur->type, "include")) {
				if (strcmp(key, "path")) {
					conf_perr(p, file, lineno, "unknown key '%s' in [include] (path)", key);
					free(value);
					continue;
				}
				{
					char *inc = conf_relative_to(file, value);

					conf_read_file(p, inc, file, lineno);
					free(inc);
					free(value);
					/* sections of the included file end the current one */
					cur = NULL;
					continue;
				}
			}
			add_kv(p, cur, key, value, lineno);
		}
	}
	p->depth--;
	free(line);
	fclose(f);
	return 0;
}

void conf_parser_free(struct parser *p)
{
	for (size_t i = 0; i < p->n; i++) {
		struct raw_section *s = &p->sec[i];

		for (size_t k = 0; k < s->n; k++) {
			free(s->kv[k].key);
			free(s->kv[k].value);
		}
		free(s->kv);
		free(s->type);
		free(s->name);
	}
	free(p->sec);
	strvec_clear(&p->files);
}
