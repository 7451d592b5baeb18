/* log.c: messages to stderr or syslog with levels and an optional job prefix. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"

static const char *log_prog = "klab";
static int log_syslog;
static int log_level = LOG_NOTICE;
static char log_prefix[128];
static char log_last[512];
static void (*log_before_stderr)(void);

void log_init(const char *prog, int use_syslog, int level)
{
	if (prog) {
		const char *slash = strrchr(prog, '/');

		log_prog = slash ? slash + 1 : prog;
	}
	if (log_syslog && !use_syslog)
		closelog();
	log_syslog = use_syslog;
	log_level = level;
	if (use_syslog)
		openlog(log_prog, LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

void log_set_level(int level)
{
	log_level = level;
}

int log_get_level(void)
{
	return log_level;
}

static const struct {
	const char *name;
	int level;
} levels[] = {
	{ "error", LOG_ERR }, { "warning", LOG_WARNING }, { "notice", LOG_NOTICE },
	{ "info", LOG_INFO }, { "debug", LOG_DEBUG },
};

int log_level_parse(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(levels); i++)
		if (!strcasecmp(name, levels[i].name))
			return levels[i].level;
	return -1;
}

const char *log_level_name(int level)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(levels); i++)
		if (levels[i].level == level)
			return levels[i].name;
	return level < LOG_ERR ? "error" : "debug";
}

void log_set_prefix(const char *prefix)
{
	if (!prefix)
		log_prefix[0] = '\0';
	else
		snprintf(log_prefix, sizeof(log_prefix), "%s", prefix);
}

void log_set_before_stderr(void (*fn)(void))
{
	log_before_stderr = fn;
}

void log_vmsg(int level, const char *fmt, va_list ap)
{
	char msg[4096];
	const char *tag = "";
	int saved = errno;

	if (level <= LOG_ERR) {
		va_list cp;

		va_copy(cp, ap);
		vsnprintf(log_last, sizeof(log_last), fmt, cp);
		va_end(cp);
	}
	if (level > log_level)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (log_syslog) {
		if (log_prefix[0])
			syslog(level, "%s: %s", log_prefix, msg);
		else
			syslog(level, "%s", msg);
		errno = saved;
		return;
	}
	switch (level) {
	case LOG_EMERG: case LOG_ALERT: case LOG_CRIT: case LOG_ERR: tag = "error: "; break;
	case LOG_WARNING: tag = "warning: "; break;
	case LOG_DEBUG: tag = "debug: "; break;
	default: break;
	}
	if (log_before_stderr)
		log_before_stderr();	/* a progress line in place would run into the message */
	fprintf(stderr, "%s: %s%s%s%s\n", log_prog, log_prefix, log_prefix[0] ? ": " : "", tag, msg);
	errno = saved;
}

void log_msg(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(level, fmt, ap);
	va_end(ap);
}

const char *log_last_error(void)
{
	return log_last;
}

void log_clear_error(void)
{
	log_last[0] = '\0';
}

int error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(LOG_ERR, fmt, ap);
	va_end(ap);
	return -1;
}

int error_errno(const char *fmt, ...)
{
	char msg[4096];
	int e = errno;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_msg(LOG_ERR, "%s: %s", msg, strerror(e));
	errno = e;
	return -1;
}

void warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(LOG_WARNING, fmt, ap);
	va_end(ap);
}

void info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(LOG_INFO, fmt, ap);
	va_end(ap);
}

void debug(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(LOG_DEBUG, fmt, ap);
	va_end(ap);
}

void die(const char *fmt, ...)
{
	char msg[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (log_syslog)
		syslog(LOG_CRIT, "fatal: %s", msg);
	else
		fprintf(stderr, "%s: fatal: %s\n", log_prog, msg);
	exit(1);
}

void die_errno(const char *fmt, ...)
{
	char msg[4096];
	int e = errno;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	die("%s: %s", msg, strerror(e));
}
