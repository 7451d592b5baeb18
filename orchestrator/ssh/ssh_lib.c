/* ssh_lib.c: libssh2 itself: its one-time set-up and its last error as text, and a connection's last failure (the bottom of the SSH files). */
#include <stdarg.h>

#include <libssh2.h>

#include "log.h"
#include "ssh/ssh_int.h"

static int libssh2_ready;

void ssh_global_init(void)
{
	if (!libssh2_ready) {
		if (libssh2_init(0))
			die("cannot initialise libssh2");
		libssh2_ready = 1;
	}
}

const char *ssh_errmsg(LIBSSH2_SESSION *s)
{
	char *msg = NULL;

	if (!s)
		return "no session";
	libssh2_session_last_error(s, &msg, NULL, 0);
	return msg && *msg ? msg : "unknown libssh2 error";
}

int ssh_fail(struct ssh_conn *c, const char *fmt, ...)
{
	va_list ap;

	buf_reset(&c->err);
	va_start(ap, fmt);
	buf_vaddf(&c->err, fmt, ap);
	va_end(ap);
	return error("%s", c->err.buf);
}

const char *ssh_error(const struct ssh_conn *c)
{
	return c->err.buf;
}
