/* db_fail.c: a connection's last failure, kept as logged (below db.c and its backends, which all report through it). */
#include <stdarg.h>

#include "buf.h"
#include "log.h"
#include "store/db_int.h"

int db_fail(struct db *db, const char *fmt, ...)
{
	va_list ap;

	buf_reset(&db->err);
	va_start(ap, fmt);
	buf_vaddf(&db->err, fmt, ap);
	va_end(ap);
	return error("%s", db->err.buf);
}

const char *db_error(struct db *db)
{
	return db->err.buf;
}

int db_error_to(struct db *db, struct buf *err)
{
	if (err) {
		buf_reset(err);
		buf_addstr(err, db->err.buf);
	}
	return -1;
}
