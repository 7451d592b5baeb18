/* log.h: leveled logging to stderr or syslog, with an optional job prefix. */
#ifndef KLAB_LOG_H
#define KLAB_LOG_H

#include <stdarg.h>
#include <syslog.h>

#include "util.h"

/* Levels are syslog's: LOG_ERR, LOG_WARNING, LOG_NOTICE, LOG_INFO, LOG_DEBUG. */

/* Program name for messages, destination (0 stderr, 1 syslog), threshold. */
void log_init(const char *prog, int use_syslog, int level);
void log_set_level(int level);
int log_get_level(void);
/* "error", "warning", "notice", "info", "debug" -> level; -1 if unknown. */
int log_level_parse(const char *name);
const char *log_level_name(int level);
/* A prefix such as "job 12" put before every message; NULL clears it. */
void log_set_prefix(const char *prefix);
/*
 * FN is called before a message goes to stderr: progress.c sets it to
 * progress_clear() when a progress line starts, so a line shown in place
 * does not run into the message. log.c calls nothing above it in lib/.
 */
void log_set_before_stderr(void (*fn)(void));

void log_msg(int level, const char *fmt, ...) KLAB_PRINTF(2, 3);
void log_vmsg(int level, const char *fmt, va_list ap) KLAB_PRINTF(2, 0);

/* "prog: error: ..." and returns -1, so: return error("cannot open '%s'", p); */
int error(const char *fmt, ...) KLAB_PRINTF(1, 2);
/* Like error() and appends ": strerror(errno)". */
int error_errno(const char *fmt, ...) KLAB_PRINTF(1, 2);
void warn(const char *fmt, ...) KLAB_PRINTF(1, 2);
void info(const char *fmt, ...) KLAB_PRINTF(1, 2);
void debug(const char *fmt, ...) KLAB_PRINTF(1, 2);
/*
 * The text of the last message logged at LOG_ERR ("" if none since the
 * clear): for the unit tests that check a message (t0006 allows no reader
 * in the build but this file). A callee hands its message up with
 * error_to() (buf.h), not through this.
 */
const char *log_last_error(void);
void log_clear_error(void);

/* "prog: fatal: ..." and exit(1). */
void die(const char *fmt, ...) KLAB_PRINTF(1, 2) KLAB_NORETURN;
void die_errno(const char *fmt, ...) KLAB_PRINTF(1, 2) KLAB_NORETURN;

#endif
