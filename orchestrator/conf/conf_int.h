/*
 * conf_int.h: what the parts of conf/ share and nobody else sees: the raw
 * sections of the reader (conf_read.c: syntax, [include], file and line of
 * every key) that the typed pass (conf.c) turns into struct klab_config.
 * conf_print.c needs only conf.h.
 */
#ifndef KLAB_CONF_INT_H
#define KLAB_CONF_INT_H

#include <stddef.h>

#include "strvec.h"
#include "util.h"

struct raw_kv {
	char *key, *value;
	int line;
};

struct raw_section {
	char *type, *name;	/* name NULL for [lab] */
	const char *file;	/* owned by the parser's file list */
	int line;
	struct raw_kv *kv;
	size_t n, alloc;
};

struct parser {
	struct raw_section *sec;
	size_t n, alloc;
	struct strvec files;	/* every file read, for messages and includes */
	int errors;
	int depth;
};


/* "FILE:LINE: message" on stderr, and one more error counted. */
void conf_perr(struct parser *p, const char *file, int line, const char *fmt, ...) KLAB_PRINTF(4, 5);
/*
 * Read PATH (and what it includes) into P's raw sections; FROM and
 * FROM_LINE name the [include] that asked for it (NULL for a file given
 * on the command line). Every error is counted (conf_perr(), error())
 * and reading goes on where it can: 0, or -1 when PATH could not be read
 * or includes nest too deeply.
 */
int conf_read_file(struct parser *p, const char *path, const char *from, int from_line);
/* PATH as written in FILE: relative to FILE's folder, made absolute so later chdir()s do not matter (malloc'd). */
char *conf_relative_to(const char *file, const char *path);
/* Free P's sections and file list (not P). */
void conf_parser_free(struct parser *p);

#endif
