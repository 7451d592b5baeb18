/* quote.h: the single place that turns an argv into a POSIX shell command string. */
#ifndef KLAB_QUOTE_H
#define KLAB_QUOTE_H

#include "buf.h"

/*
 * Append `src` as one shell word: wrapped in single quotes, each embedded
 * single quote written as '\'' . Any byte other than NUL survives `sh -c`
 * unchanged (newlines, $(), backticks, binary bytes). The empty string
 * becomes ''.
 */
void sq_quote(struct buf *dst, const char *src);

/*
 * Append each word of the NULL-terminated argv, quoted and separated by
 * single spaces. This is the only way klab builds the command string that
 * SSH sends: no caller formats a command with printf.
 */
void sq_quote_argv(struct buf *dst, const char *const *argv);

#endif
