/* orch-mbox.c: unit tests of the mail parser: formats, RFC 2047, quoted-printable, base64. */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "log.h"
#include "intake/mbox.h"
#include "tap.h"

static void test_decoders(void)
{
	struct buf b = BUF_INIT;
	char *s;

	is_int(mail_decode_base64("Zm9vYmFy", 8, &b), 0, "base64 decodes");
	is_str(b.buf, "foobar", "base64 text");
	buf_reset(&b);
	is_int(mail_decode_base64("Zm9v\nYg==\n", 10, &b), 0, "base64 with a newline and padding");
	is_str(b.buf, "foob", "base64 padded text");
	buf_reset(&b);
	is_int(mail_decode_base64("Zm9*", 4, &b), -1, "base64 bad character fails");
	buf_reset(&b);
	is_int(mail_decode_base64("Zm9vY", 5, &b), -1, "base64 bad length fails");
	buf_reset(&b);
	is_int(mail_decode_qp("a=3Db=\nc =C3=A9\n", 16, &b), 0, "QP decodes");
	is_str(b.buf, "a=bc \xc3\xa9\n", "QP soft break and escapes");
	buf_reset(&b);
	is_int(mail_decode_qp("x=ZZ", 4, &b), -1, "QP malformed escape reported");
	is_str(b.buf, "x=ZZ", "QP malformed escape kept as written");
	buf_release(&b);

	s = mail_decode_header("=?UTF-8?B?Zm9vOiBmaXJzdCDDpMO2w7w=?=");
	is_str(s, "foo: first \xc3\xa4\xc3\xb6\xc3\xbc", "RFC 2047 B, UTF-8");
	free(s);
	s = mail_decode_header("=?ISO-8859-1?Q?J=F6rg_M=FCller?= <jm@example.org>");
	is_str(s, "J\xc3\xb6rg M\xc3\xbcller <jm@example.org>", "RFC 2047 Q, ISO-8859-1 converted");
	free(s);
	s = mail_decode_header("=?UTF-8?Q?a?= =?UTF-8?Q?b?=\n =?UTF-8?Q?_c?=");
	is_str(s, "ab c", "white space between encoded words dropped, folding undone");
	free(s);
	s = mail_decode_header("[PATCH] =?X-UNKNOWN?B?Zm9v?= and =?UTF-8?Q?bad=ZZ?=");
	is_str(s, "[PATCH] =?X-UNKNOWN?B?Zm9v?= and =?UTF-8?Q?bad=ZZ?=", "malformed encoded words kept as written");
	free(s);
	s = mail_decode_header("plain\n\tfolded");
	is_str(s, "plain folded", "unfolding");
	free(s);
}

static void test_formats(void)
{
	struct mail_list l;
	const char *mbox =
		"From a@b Mon Sep 17 00:00:00 2001\nFrom: A <a@b>\nSubject: one\nMessage-ID: <1@b>\n\nbody 1\n>From here\n\n"
		"From a@b Mon Sep 17 00:00:00 2001\nFrom: B <b@b>\nSubject: =?UTF-8?Q?two_=C3=A9?=\nIn-Reply-To: <1@b>\n\nbody 2\n";
	const char *msg = "From: C <c@d>\r\nSubject: [PATCH] x\r\nDate: today\r\n\r\nhello\r\n";
	const char *thread = "[RFC 0/2] cover\n\n[RFC 0/2] cover\n\n[Ann]\n\ncover body\n\n"
			     "[RFC 1/2] one\n\n[Ann <a@b>]\n\nbody one\n[not an author]\n";
	const char *multi = "From: M <m@x>\nSubject: mime\nContent-Type: multipart/mixed; boundary=\"XX\"\n\n"
			    "preamble\n--XX\nContent-Type: text/plain\n\npart one\n--XX\nContent-Type: text/html\n\n<p>no</p>\n"
			    "--XX\nContent-Type: text/x-patch\nContent-Transfer-Encoding: base64\n\ncGFydCB0d28K\n--XX--\n";

	ok(mail_parse(mbox, strlen(mbox), "mbox", &l) == 0, "mbox parses");
	is_int(l.format, MAIL_MBOX, "mbox detected");
	is_int(l.n, 2, "two messages");
	is_str(l.v[0].message_id, "1@b", "Message-ID without brackets");
	is_str(l.v[0].body, "body 1\nFrom here\n\n", ">From unescaped");
	is_str(l.v[1].subject, "two \xc3\xa9", "encoded subject decoded");
	is_str(l.v[1].in_reply_to, "1@b", "In-Reply-To");
	is_int(l.v[1].line, 9, "second message starts at line 9");
	mail_list_free(&l);

	ok(mail_parse(msg, strlen(msg), "msg", &l) == 0, "single message parses");
	is_int(l.format, MAIL_MESSAGE, "message detected");
	is_str(l.v[0].body, "hello\n", "CRLF normalised");
	is_str(l.v[0].date, "today", "Date header");
	mail_list_free(&l);

	ok(mail_parse(thread, strlen(thread), "thread", &l) == 0, "thread text parses");
	is_int(l.format, MAIL_THREAD_TEXT, "thread text detected");
	is_int(l.n, 2, "two thread messages");
	is_str(l.v[0].from, "Ann", "author line");
	is_str(l.v[1].from, "Ann <a@b>", "author line with mail");
	is_str(l.v[1].body, "body one\n[not an author]\n", "body up to the end");
	mail_list_free(&l);

	ok(mail_parse(multi, strlen(multi), "multi", &l) == 0, "multipart parses");
	is_str(l.v[0].body, "part one\npart two\n", "text parts kept, html dropped, base64 part decoded");
	mail_list_free(&l);

	ok(mail_parse("just text\n", 10, "plain", &l) == 0, "plain text parses");
	is_int(l.format, MAIL_PLAIN, "plain detected");
	ok(l.v[0].subject == NULL, "plain has no subject");
	mail_list_free(&l);

	is_int(mail_parse("\n \n", 3, "'empty'", &l), -1, "empty input fails");
	is_int(mail_parse("a\0b", 3, "'bin'", &l), -1, "NUL byte fails");
	{
		const char *bad = "From: x\nSubject: y\nContent-Transfer-Encoding: base64\n\n!!!!\n";

		is_int(mail_parse(bad, strlen(bad), "'bad'", &l), -1, "bad base64 body fails");
	}
	{
		const char *bad = "From: x\nSubject: y\nContent-Transfer-Encoding: x-uuencode\n\nbegin\n";

		is_int(mail_parse(bad, strlen(bad), "'uu'", &l), -1, "unknown transfer encoding fails");
	}
}

int main(void)
{
	log_init("orch-mbox", 0, LOG_WARNING);
	test_decoders();
	test_formats();
	return done_testing();
}
