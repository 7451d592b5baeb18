/* mbox.h: split mail text (mbox, single messages, thread renderings, bare patches) into decoded messages. */
#ifndef KLAB_MBOX_H
#define KLAB_MBOX_H

#include <stddef.h>

#include "buf.h"

/* One message, headers decoded (RFC 2047) and body decoded (QP, base64, charset). */
struct mail_msg {
	char *subject;		/* NULL when the input had none */
	char *from;
	char *date;
	char *message_id;	/* without the angle brackets */
	char *in_reply_to;	/* without the angle brackets */
	char *references;	/* as given */
	char *body;		/* text/plain parts, UTF-8, never NULL */
	int line;		/* line of the input where the message starts (1-based) */
	int body_line;		/* line of the input where the body starts, when its lines are the
				 * input's (not base64, quoted-printable or several parts); else 0 */
};

enum mail_format { MAIL_MBOX, MAIL_MESSAGE, MAIL_THREAD_TEXT, MAIL_PLAIN };

struct mail_list {
	struct mail_msg *v;
	size_t n;
	enum mail_format format;
};

/*
 * Parse TEXT (LEN bytes) into messages. Formats, detected in this order:
 *   mbox          "From " lines separate the messages (mboxo/mboxrd
 *                 ">From " unescaped); git format-patch output is this;
 *   message       one RFC 5322 message (headers, blank line, body);
 *   thread text   a thread rendered as text: each message starts with a
 *                 bracketed subject line ("[RFC 1/2] udp: ..." or
 *                 "Re: [PATCH ...] ..."), then a bracketed author line
 *                 ("[Name <mail>]"), then the body;
 *   plain         anything else: one message with no headers (a commit
 *                 message and a diff).
 * WHAT names the input in errors ("'FILE'"). A body that cannot be decoded
 * (bad base64, unknown transfer encoding) or an empty input fails with
 * "WHAT:LINE: ..."; a malformed RFC 2047 word is kept as written.
 * 0 (out filled; free with mail_list_free) or -1 (logged).
 */
int mail_parse(const char *text, size_t len, const char *what, struct mail_list *out);
void mail_list_free(struct mail_list *l);

const char *mail_format_name(enum mail_format f);

/*
 * Decode RFC 2047 encoded words (=?charset?B|Q?...?=) in a header value and
 * unfold it (CRLF/LF + white space -> one space). Charsets other than UTF-8
 * and US-ASCII are converted with iconv; a word that does not decode is
 * kept as written. Returns a new string.
 */
char *mail_decode_header(const char *value);

/* Quoted-printable decode of LEN bytes appended to OUT: 0, or -1 on a malformed escape (data kept as written). */
int mail_decode_qp(const char *in, size_t len, struct buf *out);
/* Base64 decode (white space ignored) appended to OUT: 0, or -1 on a bad character or length. */
int mail_decode_base64(const char *in, size_t len, struct buf *out);

#endif
