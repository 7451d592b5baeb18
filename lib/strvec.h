/* strvec.h: a NULL-terminated vector of owned strings, usable as an argv. */
#ifndef KLAB_STRVEC_H
#define KLAB_STRVEC_H

#include <stddef.h>

#include "util.h"

/* v[n] is always NULL, so sv.v can be passed to execv() as it is. */
struct strvec {
	char **v;
	size_t n;
	size_t alloc;
};

extern char *strvec_empty[];
#define STRVEC_INIT { strvec_empty, 0, 0 }

void strvec_init(struct strvec *sv);
void strvec_clear(struct strvec *sv);
/* Append a copy of s; returns the copy. */
const char *strvec_push(struct strvec *sv, const char *s);
const char *strvec_pushf(struct strvec *sv, const char *fmt, ...) KLAB_PRINTF(2, 3);
/* Append copies of every string of a NULL-terminated array. */
void strvec_pushv(struct strvec *sv, const char *const *argv);
/* Append the words of s split on any of the bytes in `seps` (empty words skipped). */
void strvec_split(struct strvec *sv, const char *s, const char *seps);
/* Drop the last string. */
void strvec_pop(struct strvec *sv);
/* Index of s, or -1. */
long strvec_find(const struct strvec *sv, const char *s);
/* Join with `sep` into a new string (caller frees). */
char *strvec_join(const struct strvec *sv, const char *sep);

#endif
