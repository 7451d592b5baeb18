/* base64.h: base64 (RFC 4648, the standard alphabet) for mail bodies and SSH keys. */
#ifndef KLAB_BASE64_H
#define KLAB_BASE64_H

#include <stddef.h>

#include "buf.h"

/* Append the base64 of N bytes at P to OUT, with '=' padding when `pad` (fingerprints have none). */
void base64_encode(struct buf *out, const void *p, size_t n, int pad);

/*
 * Decode base64 text into OUT (appended); white space in it is skipped.
 * With `strict` (mail bodies), the text must come in whole groups of four
 * ('=' padded); without it, padding may be missing (key blobs). Returns 0,
 * or -1 on a character outside the alphabet or data after the padding
 * (OUT may then hold part of the data).
 */
int base64_decode(struct buf *out, const char *in, size_t len, int strict);

#endif
