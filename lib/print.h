/* print.h: one printing layer for text, JSON and CSV output (after iproute2's print_*()). */
#ifndef KLAB_PRINT_H
#define KLAB_PRINT_H

#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

#include "util.h"

/*
 * A command prints through these calls once and gets all three formats:
 *
 *	static const char *const cols[] = { "id", "name", "created", NULL };
 *
 *	print_begin(format, stdout);
 *	print_text("%-5s %-20s %s\n", "ID", "NAME", "CREATED");
 *	print_list_begin(NULL, cols);
 *	for each row {
 *		print_obj_begin(NULL);
 *		print_int(PRINT_ANY, "id", "%-5lld ", id);
 *		print_str(PRINT_ANY, "name", "%-20s ", name);
 *		print_time(PRINT_DATA, "created", "%s", created);
 *		print_text("%s\n", local_time_text);
 *		print_obj_end();
 *	}
 *	print_list_end();
 *	return print_end() ? 1 : 0;
 *
 * Each value call names where it goes (PRINT_TEXT, PRINT_JSON, PRINT_CSV
 * or a union), its key in JSON and CSV, and the printf format of its text,
 * which the compiler checks against the value's type. Text goes straight
 * to the stream as the calls come; JSON is built and written (pretty) by
 * print_end(); CSV writes one record per object of the list that declared
 * columns, in the declared order, quoted as RFC 4180 says (records end in
 * "\n"), after a header line of the column names. Keys a record lacks are
 * empty; keys that are not columns, and anything outside that list, are
 * not in the CSV.
 *
 * Numbers are written in their shortest form that reads back as the same
 * double (70387.2, not 70387.199999999997); times (seconds since 1970) as
 * ISO 8601 in UTC, "2026-12-02T18:14:27Z"; NaN as null (empty in CSV).
 */

enum print_format { PRINT_FMT_TEXT, PRINT_FMT_JSON, PRINT_FMT_CSV };

#define PRINT_TEXT 1
#define PRINT_JSON 2
#define PRINT_CSV 4
#define PRINT_DATA (PRINT_JSON | PRINT_CSV)
#define PRINT_ANY (PRINT_TEXT | PRINT_DATA)

/* Start printing in format F to OUT (one document at a time). */
void print_begin(enum print_format f, FILE *out);
/* Write the JSON document, flush: 0, or -1 when OUT failed (nothing logged). */
int print_end(void);
/* The format given to print_begin(), and whether it is one of WHERE. */
enum print_format print_get_format(void);
int print_is(int where);

/*
 * Containers, nested as in the JSON: a list (array) or an object, under
 * KEY in the enclosing object (NULL in a list or at the top). A list that
 * gives CSV columns (NULL-terminated) is the CSV table; its objects are
 * the records. Values outside any container go into a top-level object.
 */
void print_list_begin(const char *key, const char *const *csv_columns);
void print_list_end(void);
void print_obj_begin(const char *key);
void print_obj_end(void);

/* Text only: printf to the stream when the format is text. */
void print_text(const char *fmt, ...) KLAB_PRINTF(1, 2);

void print_str_(int where, const char *key, const char *v, const char *fmt, ...) KLAB_PRINTF(4, 5);
void print_int_(int where, const char *key, int64_t v, const char *fmt, ...) KLAB_PRINTF(4, 5);
void print_num_(int where, const char *key, double v, const char *fmt, ...) KLAB_PRINTF(4, 5);
void print_bool_(int where, const char *key, int v, const char *fmt, ...) KLAB_PRINTF(4, 5);
void print_time_(int where, const char *key, double t, const char *fmt, ...) KLAB_PRINTF(4, 5);

/* A string; NULL is null (empty in CSV, "" in the text). fmt takes a const char *. */
#define print_str(where, key, fmt, v) \
	({ const char *str__ = (v); print_str_((where), (key), str__, fmt, str__ ? str__ : ""); })
/* A whole number; fmt takes a long long ("%-5lld"). */
#define print_int(where, key, fmt, v) \
	({ long long int__ = (v); print_int_((where), (key), int__, fmt, int__); })
/* A double; fmt takes a double ("%.1f"). */
#define print_num(where, key, fmt, v) \
	({ double num__ = (v); print_num_((where), (key), num__, fmt, num__); })
/* true/false; fmt takes an int. */
#define print_bool(where, key, fmt, v) \
	({ int bool__ = !!(v); print_bool_((where), (key), bool__, fmt, bool__); })
/* A time, seconds since 1970 (NaN: none); fmt takes the ISO 8601 text. */
#define print_time(where, key, fmt, v) \
	({ double time__ = (v); char tbuf__[32]; \
	   print_time_((where), (key), time__, fmt, print_fmt_time(tbuf__, time__)); })

/* The same for JSON and CSV only: no text. */
#define print_data_str(key, v) print_str(PRINT_DATA, (key), "%s", (v))
#define print_data_int(key, v) print_int(PRINT_DATA, (key), "%lld", (v))
#define print_data_num(key, v) print_num(PRINT_DATA, (key), "%g", (v))
#define print_data_bool(key, v) print_bool(PRINT_DATA, (key), "%d", (v))
#define print_data_time(key, v) print_time(PRINT_DATA, (key), "%s", (v))
/* null in JSON, an empty field in CSV. */
void print_data_null(const char *key);
/*
 * A JSON value (owned from now on) as it is; compact JSON text in a CSV
 * field. With KEY NULL before anything else it is the JSON document.
 */
void print_data_json(const char *key, struct json_object *v);

/* The shortest "%.15g".."%.17g" text that reads back as v (buf of 32). */
const char *print_fmt_num(char *buf, double v);
/* "2026-12-02T18:14:27Z" for t (whole seconds, UTC), "" for NaN (buf of 32). */
const char *print_fmt_time(char *buf, double t);
/* One CSV field as RFC 4180 quotes it (only when it holds a comma, quote, CR or LF). */
void print_csv_field(FILE *f, const char *s);

#endif
