/* buf.h: the one growable byte buffer (git strbuf style), never NULL, always NUL-terminated. */
#ifndef KLAB_BUF_H
#define KLAB_BUF_H

#include <stdarg.h>
#include <stddef.h>

#include "util.h"

/*
 * A buffer of bytes that is always NUL-terminated (b->buf[b->len] == 0) and
 * whose ->buf is never NULL, even before the first allocation.
 *
 * An optional cap bounds the length: output from a child or a socket cannot
 * grow without limit. Appending past the cap stores what fits, sets
 * ->truncated and returns -1; the buffer stays valid.
 */
struct buf {
	char *buf;
	size_t len;
	size_t alloc;
	size_t cap;		/* 0: no cap */
	int truncated;		/* an append was cut short by the cap */
};

extern char buf_slopbuf[];
#define BUF_INIT { buf_slopbuf, 0, 0, 0, 0 }

/* Initialise with room for `hint` bytes (0: allocate lazily). */
void buf_init(struct buf *b, size_t hint);
/* Free the memory and reset to the empty state (the cap is kept). */
void buf_release(struct buf *b);
/* Hand the string to the caller (who frees it); the buffer is reset. */
char *buf_detach(struct buf *b, size_t *len);
/* Set a cap on the length; 0 removes it. */
void buf_set_cap(struct buf *b, size_t cap);
/* Make room for `extra` more bytes beyond ->len. */
void buf_grow(struct buf *b, size_t extra);
/* Set the length to 0 (memory kept). */
void buf_reset(struct buf *b);
/* Set the length to `len` (<= current length). */
void buf_setlen(struct buf *b, size_t len);

/* Appenders: 0 on success, -1 when the cap cut the data short. */
int buf_add(struct buf *b, const void *data, size_t len);
int buf_addstr(struct buf *b, const char *s);
int buf_addch(struct buf *b, int c);
int buf_addf(struct buf *b, const char *fmt, ...) KLAB_PRINTF(2, 3);
int buf_vaddf(struct buf *b, const char *fmt, va_list ap) KLAB_PRINTF(2, 0);
/*
 * How a callee hands its failure up to a caller that keeps the text (a
 * row's error column, a step's reason): the message goes into ERR (reset
 * first) and is not logged; ERR NULL: logged as error(). Returns -1, so
 * `return error_to(err, "cannot open '%s'", p);`. The caller logs or stores
 * err.buf; nobody reads the log back.
 */
int error_to(struct buf *err, const char *fmt, ...) KLAB_PRINTF(2, 3);

/* Remove leading and trailing white space. */
void buf_trim(struct buf *b);
/* Remove trailing white space (newlines included). */
void buf_rtrim(struct buf *b);

/* Read all of fd until EOF into the buffer: 0, or -1 with errno set. */
int buf_read_fd(struct buf *b, int fd);
/* Read a whole file: 0, or -1 after logging "cannot read 'PATH': ...". */
int buf_read_file(struct buf *b, const char *path);

#endif
