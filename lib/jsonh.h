/* jsonh.h: small helpers over json-c for reading documents with clear errors. */
#ifndef KLAB_JSONH_H
#define KLAB_JSONH_H

#include <stdint.h>
#include <json-c/json.h>

#include "buf.h"

/*
 * Parse a whole JSON document. On error logs "WHAT: malformed JSON at
 * line L, column C: reason" (WHAT names the source, e.g. a file or
 * "result of run 12 from dut1") and returns NULL. Trailing garbage after
 * the document is an error too.
 */
struct json_object *json_parse(const char *text, size_t len, const char *what);
/* json_parse() with the message in ERR (error_to(): not logged; logged when ERR is NULL). */
struct json_object *json_parse_to(const char *text, size_t len, const char *what, struct buf *err);
struct json_object *json_parse_file(const char *path);

/*
 * Typed getters. Return 0 when the key exists with the right type, 1 when
 * it is missing (out untouched), -1 (logged, naming WHAT and the key)
 * when it has the wrong type.
 */
int json_get_str(struct json_object *o, const char *key, const char **out, const char *what);
int json_get_int(struct json_object *o, const char *key, int64_t *out, const char *what);
int json_get_double(struct json_object *o, const char *key, double *out, const char *what);
int json_get_bool(struct json_object *o, const char *key, int *out, const char *what);
int json_get_obj(struct json_object *o, const char *key, struct json_object **out, const char *what);
int json_get_array(struct json_object *o, const char *key, struct json_object **out, const char *what);
/* The value of KEY of type WANT into *VAL, as the getters above, with a wrong type's message in ERR (error_to()). */
int json_get_to(struct json_object *o, const char *key, enum json_type want, struct json_object **val,
		const char *what, struct buf *err);

/* Serialise pretty (1) or compact (0) into a buffer. */
void json_to_buf(struct buf *b, struct json_object *o, int pretty);
/* A JSON string of S, or NULL (JSON null when added to an object) for NULL. */
struct json_object *json_str(const char *s);

#endif
