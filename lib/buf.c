/* buf.c: the growable, capped, always NUL-terminated byte buffer. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "log.h"

char buf_slopbuf[1];

void buf_init(struct buf *b, size_t hint)
{
	b->buf = buf_slopbuf;
	b->len = b->alloc = b->cap = 0;
	b->truncated = 0;
	if (hint)
		buf_grow(b, hint);
}

void buf_release(struct buf *b)
{
	size_t cap = b->cap;

	if (b->alloc)
		free(b->buf);
	buf_init(b, 0);
	b->cap = cap;
}

char *buf_detach(struct buf *b, size_t *len)
{
	char *s;

	if (len)
		*len = b->len;
	s = b->alloc ? b->buf : xstrdup("");
	b->buf = buf_slopbuf;
	b->len = b->alloc = 0;
	b->truncated = 0;
	return s;
}

void buf_set_cap(struct buf *b, size_t cap)
{
	b->cap = cap;
}

void buf_grow(struct buf *b, size_t extra)
{
	size_t want;

	if (extra > SIZE_MAX - b->len - 1)
		die("buffer size overflow");
	want = b->len + extra + 1;
	if (want <= b->alloc)
		return;
	if (want < b->alloc * 3 / 2)
		want = b->alloc * 3 / 2;
	if (want < 64)
		want = 64;
	if (!b->alloc) {
		b->buf = xmalloc(want);
		b->buf[0] = '\0';
	} else {
		b->buf = xrealloc(b->buf, want);
	}
	b->alloc = want;
}

void buf_reset(struct buf *b)
{
	buf_setlen(b, 0);
	b->truncated = 0;
}

void buf_setlen(struct buf *b, size_t len)
{
	if (len > b->len)
		die("buf_setlen beyond the end");
	b->len = len;
	if (b->alloc)
		b->buf[len] = '\0';
}

int buf_add(struct buf *b, const void *data, size_t len)
{
	int ret = 0;

	if (b->cap && b->len + len > b->cap) {
		len = b->cap > b->len ? b->cap - b->len : 0;
		b->truncated = 1;
		ret = -1;
	}
	if (!len)
		return ret;
	buf_grow(b, len);
	memcpy(b->buf + b->len, data, len);
	b->len += len;
	b->buf[b->len] = '\0';
	return ret;
}

int buf_addstr(struct buf *b, const char *s)
{
	return buf_add(b, s, strlen(s));
}

int buf_addch(struct buf *b, int c)
{
	char ch = (char)c;

	return buf_add(b, &ch, 1);
}

int buf_vaddf(struct buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n;
	char small[256];

	va_copy(cp, ap);
	n = vsnprintf(small, sizeof(small), fmt, cp);
	va_end(cp);
	if (n < 0)
		die("buf_vaddf: bad format '%s'", fmt);
	if ((size_t)n < sizeof(small))
		return buf_add(b, small, (size_t)n);
	{
		char *big = xmalloc((size_t)n + 1);
		int ret;

		vsnprintf(big, (size_t)n + 1, fmt, ap);
		ret = buf_add(b, big, (size_t)n);
		free(big);
		return ret;
	}
}

int error_to(struct buf *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (err) {
		buf_reset(err);
		buf_vaddf(err, fmt, ap);
	} else {
		log_vmsg(LOG_ERR, fmt, ap);
	}
	va_end(ap);
	return -1;
}

int buf_addf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = buf_vaddf(b, fmt, ap);
	va_end(ap);
	return ret;
}

void buf_rtrim(struct buf *b)
{
	while (b->len && isspace((unsigned char)b->buf[b->len - 1]))
		b->len--;
	if (b->alloc)
		b->buf[b->len] = '\0';
}

void buf_trim(struct buf *b)
{
	size_t i = 0;

	buf_rtrim(b);
	while (i < b->len && isspace((unsigned char)b->buf[i]))
		i++;
	if (i) {
		memmove(b->buf, b->buf + i, b->len - i);
		b->len -= i;
		b->buf[b->len] = '\0';
	}
}

int buf_read_fd(struct buf *b, int fd)
{
	char chunk[8192];

	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0)
			return 0;
		buf_add(b, chunk, (size_t)n);
	}
}

int buf_read_file(struct buf *b, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return error_errno("cannot read '%s'", path);
	ret = buf_read_fd(b, fd);
	if (ret)
		error_errno("cannot read '%s'", path);
	close(fd);
	return ret;
}
