/* lib-buf.c: unit tests of the growable buffer and the string vector. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "strvec.h"
#include "tap.h"

static void test_buf(void)
{
	struct buf b = BUF_INIT;
	char *s;
	size_t len;

	ok(b.buf != NULL && b.buf[0] == '\0' && b.len == 0, "a fresh buffer is an empty string, never NULL");
	buf_addstr(&b, "hello");
	buf_addch(&b, ' ');
	buf_addf(&b, "%s %d", "world", 42);
	is_str(b.buf, "hello world 42", "appenders concatenate");
	is_int(b.len, 14, "length is tracked");
	buf_reset(&b);
	for (int i = 0; i < 10000; i++)
		buf_addf(&b, "%04d", i % 10000);
	is_int(b.len, 40000, "grows past many reallocations");
	ok(b.buf[b.len] == '\0', "stays NUL-terminated after growth");
	ok(!memcmp(b.buf + 39996, "9999", 4), "keeps the data");
	buf_reset(&b);
	buf_addf(&b, "%s", "a very long formatted string that does not fit in the small stack buffer "
		 "of buf_vaddf because it is well over two hundred and fifty six bytes long, "
		 "so the second formatting path must be taken and must produce exactly the "
		 "same bytes as the first path would have produced for a short string end");
	ok(b.len > 256 && !strcmp(b.buf + b.len - 3, "end"), "long formats take the second path");
	buf_add(&b, "\0binary\0", 8);
	ok(b.buf[b.len - 1] == '\0' && b.buf[b.len - 8] == '\0', "embedded NUL bytes are kept");
	s = buf_detach(&b, &len);
	ok(s && len > 264 && b.buf == buf_slopbuf && b.len == 0, "detach hands over and resets");
	free(s);
	s = buf_detach(&b, &len);
	is_str(s, "", "detach of an empty buffer gives an allocated empty string");
	free(s);

	buf_set_cap(&b, 10);
	is_int(buf_addstr(&b, "12345"), 0, "append within the cap succeeds");
	is_int(buf_addstr(&b, "6789012345"), -1, "append past the cap fails");
	is_str(b.buf, "1234567890", "what fits is kept up to the cap");
	ok(b.truncated, "truncation is flagged");
	is_int(buf_addch(&b, 'x'), -1, "a full buffer refuses more");
	buf_release(&b);
	is_int(b.cap, 10, "release keeps the cap");
	buf_set_cap(&b, 0);

	buf_addstr(&b, "  \t trim me \n\n");
	buf_trim(&b);
	is_str(b.buf, "trim me", "trim removes white space at both ends");
	buf_release(&b);
}

static void test_read(void)
{
	struct buf b = BUF_INIT;
	const char *dir = tap_scratch_dir();
	char *path = xasprintf("%s/f", dir);
	int fd = open(path, O_WRONLY | O_CREAT, 0644);

	ok(fd >= 0 && write(fd, "abc\ndef", 7) == 7, "write a file");
	close(fd);
	is_int(buf_read_file(&b, path), 0, "read a file");
	is_str(b.buf, "abc\ndef", "file content read back");
	buf_reset(&b);
	is_int(buf_read_file(&b, "/nonexistent/x"), -1, "a missing file is an error");
	buf_release(&b);
	free(path);
}

static void test_strvec(void)
{
	struct strvec sv = STRVEC_INIT;
	char *j;

	ok(sv.v && sv.v[0] == NULL && sv.n == 0, "an empty vector is a valid empty argv");
	strvec_push(&sv, "a");
	strvec_pushf(&sv, "%s-%d", "b", 2);
	{
		const char *const more[] = { "c", "d", NULL };

		strvec_pushv(&sv, more);
	}
	is_int(sv.n, 4, "four strings");
	ok(sv.v[4] == NULL, "NULL-terminated");
	is_int(strvec_find(&sv, "b-2"), 1, "find");
	is_int(strvec_find(&sv, "zz"), -1, "find a missing string");
	j = strvec_join(&sv, ",");
	is_str(j, "a,b-2,c,d", "join");
	free(j);
	strvec_pop(&sv);
	is_int(sv.n, 3, "pop");
	ok(sv.v[3] == NULL, "still NULL-terminated after pop");
	strvec_clear(&sv);
	strvec_split(&sv, "  one two\tthree  ", " \t");
	is_int(sv.n, 3, "split skips empty words");
	is_str(sv.v[2], "three", "split keeps order");
	strvec_clear(&sv);
	for (int i = 0; i < 1000; i++)
		strvec_pushf(&sv, "%d", i);
	is_str(sv.v[999], "999", "grows to a thousand");
	strvec_clear(&sv);
	is_int(sv.n, 0, "clear empties");
}

int main(void)
{
	test_buf();
	test_read();
	test_strvec();
	return done_testing();
}
