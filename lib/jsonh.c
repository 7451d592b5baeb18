/* jsonh.c: json-c parsing with located errors, typed getters, serialisation. */
#include <stdio.h>
#include <string.h>

#include "jsonh.h"
#include "log.h"

static void locate(const char *text, size_t off, int *line, int *col)
{
	size_t i;

	*line = 1;
	*col = 1;
	for (i = 0; i < off && text[i]; i++) {
		if (text[i] == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

struct json_object *json_parse(const char *text, size_t len, const char *what)
{
	return json_parse_to(text, len, what, NULL);
}

struct json_object *json_parse_to(const char *text, size_t len, const char *what, struct buf *err)
{
	struct json_tokener *tok;
	struct json_object *o;
	enum json_tokener_error jerr;
	size_t off, i;
	int line, col;

	if (len > (size_t)1 << 30)
		return error_to(err, "%s: JSON document too large (%zu bytes)", what, len), NULL;
	if (memchr(text, '\0', len)) {
		error_to(err, "%s: malformed JSON: NUL byte at offset %zu", what,
			 (size_t)((const char *)memchr(text, '\0', len) - text));
		return NULL;
	}
	tok = json_tokener_new_ex(64);
	if (!tok)
		die("out of memory");
	o = json_tokener_parse_ex(tok, text, (int)len);
	jerr = json_tokener_get_error(tok);
	off = json_tokener_get_parse_end(tok);
	if (jerr == json_tokener_continue || (!o && jerr == json_tokener_success)) {
		locate(text, len, &line, &col);
		error_to(err, "%s: malformed JSON at line %d, column %d: unexpected end of input", what, line, col);
		json_tokener_free(tok);
		return NULL;
	}
	if (jerr != json_tokener_success) {
		locate(text, off, &line, &col);
		error_to(err, "%s: malformed JSON at line %d, column %d: %s", what, line, col,
			 json_tokener_error_desc(jerr));
		json_tokener_free(tok);
		return NULL;
	}
	for (i = off; i < len; i++) {
		if (!strchr(" \t\r\n", text[i])) {
			locate(text, i, &line, &col);
			error_to(err, "%s: malformed JSON at line %d, column %d: trailing data after the document",
				 what, line, col);
			json_object_put(o);
			json_tokener_free(tok);
			return NULL;
		}
	}
	json_tokener_free(tok);
	return o;
}

struct json_object *json_parse_file(const char *path)
{
	struct buf b = BUF_INIT;
	struct json_object *o;

	if (buf_read_file(&b, path))
		return NULL;
	o = json_parse(b.buf, b.len, path);
	buf_release(&b);
	return o;
}

static int get(struct json_object *o, const char *key, enum json_type want, int alt_int,
	       struct json_object **val, const char *what, struct buf *err)
{
	struct json_object *v;
	enum json_type t;

	if (!o || !json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v) || !v)
		return 1;
	t = json_object_get_type(v);
	if (t != want && !(alt_int && t == json_type_int))
		return error_to(err, "%s: field '%s' must be %s, not %s", what, key,
				json_type_to_name(want), json_type_to_name(t));
	*val = v;
	return 0;
}

int json_get_str(struct json_object *o, const char *key, const char **out, const char *what)
{
	struct json_object *v;
	int r = get(o, key, json_type_string, 0, &v, what, NULL);

	if (!r)
		*out = json_object_get_string(v);
	return r;
}

int json_get_int(struct json_object *o, const char *key, int64_t *out, const char *what)
{
	struct json_object *v;
	int r = get(o, key, json_type_int, 0, &v, what, NULL);

	if (!r)
		*out = json_object_get_int64(v);
	return r;
}

int json_get_double(struct json_object *o, const char *key, double *out, const char *what)
{
	struct json_object *v;
	int r = get(o, key, json_type_double, 1, &v, what, NULL);

	if (!r)
		*out = json_object_get_double(v);
	return r;
}

int json_get_bool(struct json_object *o, const char *key, int *out, const char *what)
{
	struct json_object *v;
	int r = get(o, key, json_type_boolean, 0, &v, what, NULL);

	if (!r)
		*out = json_object_get_boolean(v);
	return r;
}

int json_get_obj(struct json_object *o, const char *key, struct json_object **out, const char *what)
{
	return get(o, key, json_type_object, 0, out, what, NULL);
}

int json_get_array(struct json_object *o, const char *key, struct json_object **out, const char *what)
{
	return get(o, key, json_type_array, 0, out, what, NULL);
}

int json_get_to(struct json_object *o, const char *key, enum json_type want, struct json_object **val,
		const char *what, struct buf *err)
{
	return get(o, key, want, 0, val, what, err);
}

void json_to_buf(struct buf *b, struct json_object *o, int pretty)
{
	size_t len;
	const char *s = json_object_to_json_string_length(o,
		(pretty ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED : JSON_C_TO_STRING_PLAIN) |
		JSON_C_TO_STRING_NOSLASHESCAPE, &len);

	buf_add(b, s, len);
}

struct json_object *json_str(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}
