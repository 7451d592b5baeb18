/* strvec.c: NULL-terminated vector of owned strings. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "strvec.h"

char *strvec_empty[1];

void strvec_init(struct strvec *sv)
{
	sv->v = strvec_empty;
	sv->n = sv->alloc = 0;
}

void strvec_clear(struct strvec *sv)
{
	size_t i;

	if (sv->alloc) {
		for (i = 0; i < sv->n; i++)
			free(sv->v[i]);
		free(sv->v);
	}
	strvec_init(sv);
}

static const char *push_owned(struct strvec *sv, char *s)
{
	if (sv->n + 2 > sv->alloc) {
		size_t want = sv->alloc ? sv->alloc * 2 : 8;

		if (!sv->alloc)
			sv->v = NULL;
		sv->v = xrealloc(sv->v, want * sizeof(*sv->v));
		sv->alloc = want;
	}
	sv->v[sv->n++] = s;
	sv->v[sv->n] = NULL;
	return s;
}

const char *strvec_push(struct strvec *sv, const char *s)
{
	return push_owned(sv, xstrdup(s));
}

const char *strvec_pushf(struct strvec *sv, const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	buf_vaddf(&b, fmt, ap);
	va_end(ap);
	return push_owned(sv, buf_detach(&b, NULL));
}

void strvec_pushv(struct strvec *sv, const char *const *argv)
{
	for (; argv && *argv; argv++)
		strvec_push(sv, *argv);
}

void strvec_split(struct strvec *sv, const char *s, const char *seps)
{
	while (s && *s) {
		size_t n;

		s += strspn(s, seps);
		n = strcspn(s, seps);
		if (n)
			push_owned(sv, xstrndup(s, n));
		s += n;
	}
}

void strvec_pop(struct strvec *sv)
{
	if (!sv->n)
		return;
	free(sv->v[--sv->n]);
	sv->v[sv->n] = NULL;
}

long strvec_find(const struct strvec *sv, const char *s)
{
	size_t i;

	for (i = 0; i < sv->n; i++)
		if (!strcmp(sv->v[i], s))
			return (long)i;
	return -1;
}

char *strvec_join(const struct strvec *sv, const char *sep)
{
	struct buf b = BUF_INIT;
	size_t i;

	for (i = 0; i < sv->n; i++) {
		if (i)
			buf_addstr(&b, sep);
		buf_addstr(&b, sv->v[i]);
	}
	return buf_detach(&b, NULL);
}
