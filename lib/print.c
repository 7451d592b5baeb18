/* print.c: text, JSON (json-c) and CSV output from the same print_*() calls. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "jsonh.h"
#include "print.h"

#define MAX_DEPTH 16
/*
 * JSON: the elements of a top-level list held before they are written.
 * A listing (`klab query --json` of a workload's history: 200k rows at 100M
 * metric rows) held every row as json-c objects, 653 MB for 200k; beyond
 * this many it is written as it comes, in the layout json-c gives the whole
 * document (a list of fewer is printed whole at the end, as before).
 */
#define STREAM_AFTER 1000

static struct {
	enum print_format fmt;
	FILE *out;
	/* JSON: the open containers; stack[0] is the document */
	struct json_object *stack[MAX_DEPTH];
	int depth;
	/* CSV: the table's columns, the depth of its list, the record being filled */
	const char *const *cols;
	const char *const *header_of;
	size_t ncols;
	int csv_depth;		/* depth inside the CSV list, 0 when there is none */
	char **cells;
	int in_record;
	/* JSON: stack[0] is a list whose elements are written STREAM_AFTER at a time; how many were */
	int stream;
	size_t streamed;
} P = { PRINT_FMT_TEXT, NULL, { NULL }, 0, NULL, NULL, 0, 0, NULL, 0, 0, 0 };

const char *print_fmt_num(char *buf, double v)
{
	snprintf(buf, 32, "%.15g", v);
	if (strtod(buf, NULL) == v || !isfinite(v))
		return buf;
	snprintf(buf, 32, "%.16g", v);
	if (strtod(buf, NULL) == v)
		return buf;
	snprintf(buf, 32, "%.17g", v);
	return buf;
}

const char *print_fmt_time(char *buf, double t)
{
	time_t tt;
	struct tm tm;

	buf[0] = '\0';
	if (!isfinite(t))
		return buf;
	tt = (time_t)floor(t);
	if (gmtime_r(&tt, &tm))
		strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return buf;
}

void print_csv_field(FILE *f, const char *s)
{
	if (!s)
		return;
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void csv_clear(void)
{
	for (size_t i = 0; i < P.ncols; i++) {
		free(P.cells[i]);
		P.cells[i] = NULL;
	}
}

static void csv_reset(void)
{
	csv_clear();
	free(P.cells);
	P.cells = NULL;
	P.cols = NULL;
	P.ncols = 0;
	P.csv_depth = 0;
	P.in_record = 0;
}

void print_begin(enum print_format f, FILE *out)
{
	for (int i = 0; i < P.depth; i++)
		json_object_put(P.stack[i]);
	csv_reset();
	P.depth = 0;
	P.stack[0] = NULL;
	P.header_of = NULL;
	P.fmt = f;
	P.out = out;
	P.stream = 0;
	P.streamed = 0;
}

enum print_format print_get_format(void)
{
	return P.fmt;
}

int print_is(int where)
{
	return (P.fmt == PRINT_FMT_TEXT && (where & PRINT_TEXT)) || (P.fmt == PRINT_FMT_JSON && (where & PRINT_JSON)) ||
	       (P.fmt == PRINT_FMT_CSV && (where & PRINT_CSV));
}

static FILE *out(void)
{
	return P.out ? P.out : stdout;
}

/*
 * JSON: write the top-level list's elements held so far (ALL: however few)
 * as json-c would inside the whole list: "[", then each after "\n  " (",\n  "
 * from the second on), its lines indented by two more spaces.
 */
static void stream_flush(int all)
{
	struct json_object *a;
	size_t n;
	FILE *f = out();

	if (!P.stream || P.depth != 1)
		return;
	a = P.stack[0];
	n = json_object_array_length(a);
	if (!n || (!all && n < STREAM_AFTER))
		return;
	for (size_t i = 0; i < n; i++) {
		const char *e = json_object_to_json_string_ext(json_object_array_get_idx(a, i),
			JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE);
		const char *nl;

		fputs(P.streamed++ ? ",\n  " : "[\n  ", f);
		while ((nl = strchr(e, '\n'))) {
			fwrite(e, 1, (size_t)(nl - e), f);
			fputs("\n  ", f);
			e = nl + 1;
		}
		fputs(e, f);
	}
	json_object_array_del_idx(a, 0, n);
}

int print_end(void)
{
	FILE *f = out();

	if (P.fmt == PRINT_FMT_JSON && P.streamed) {
		stream_flush(1);
		fputs("\n]\n", f);
	} else if (P.fmt == PRINT_FMT_JSON && P.depth > 0 && P.stack[0]) {
		struct buf b = BUF_INIT;

		json_to_buf(&b, P.stack[0], 1);
		fputs(b.buf, f);
		fputc('\n', f);
		buf_release(&b);
	}
	for (int i = 0; i < P.depth; i++)
		json_object_put(P.stack[i]);
	P.depth = 0;
	P.stream = 0;
	P.streamed = 0;
	csv_reset();
	if (fflush(f) || ferror(f))
		return -1;
	return 0;
}

/* JSON: the container values go into; the top-level object is made on first use. */
static struct json_object *top(void)
{
	if (!P.depth) {
		P.stack[0] = json_object_new_object();
		P.depth = 1;
	}
	return P.stack[P.depth - 1];
}

/* JSON: add v under key (in an object) or at the end (in a list); takes v. */
static void json_add(const char *key, struct json_object *v)
{
	struct json_object *t = top();

	if (json_object_is_type(t, json_type_array))
		json_object_array_add(t, v);
	else
		json_object_object_add(t, key ? key : "", v);
}

/* json_add() of a whole value, which a streamed list may write now */
static void json_put(const char *key, struct json_object *v)
{
	json_add(key, v);
	stream_flush(0);
}

static void push(const char *key, struct json_object *c)
{
	if (!P.depth && !key) {
		P.stack[0] = c;
		P.depth = 1;
		return;
	}
	json_add(key, json_object_get(c));	/* filled after: not written yet */
	if (P.depth >= MAX_DEPTH)
		abort();	/* a programming error: containers nest this deep nowhere */
	P.stack[P.depth++] = c;
}

static void pop(void)
{
	if (P.depth > 1) {
		json_object_put(P.stack[P.depth - 1]);
		P.depth--;
		stream_flush(0);
	}
}

static void csv_header(void)
{
	FILE *f = out();

	if (P.header_of == P.cols)
		return;
	for (size_t i = 0; i < P.ncols; i++) {
		if (i)
			fputc(',', f);
		print_csv_field(f, P.cols[i]);
	}
	fputc('\n', f);
	P.header_of = P.cols;
}

void print_list_begin(const char *key, const char *const *csv_columns)
{
	if (P.fmt == PRINT_FMT_JSON) {
		P.stream = P.stream || (!P.depth && !key);
		push(key, json_object_new_array());
		return;
	}
	if (P.fmt != PRINT_FMT_CSV)
		return;
	if (P.csv_depth) {
		P.csv_depth++;
		return;
	}
	if (csv_columns) {
		P.cols = csv_columns;
		for (P.ncols = 0; csv_columns[P.ncols]; P.ncols++)
			;
		P.cells = xcalloc(P.ncols ? P.ncols : 1, sizeof(*P.cells));
		P.csv_depth = 1;
		csv_header();
	}
}

void print_list_end(void)
{
	if (P.fmt == PRINT_FMT_JSON) {
		pop();
		return;
	}
	if (P.fmt == PRINT_FMT_CSV && P.csv_depth && --P.csv_depth == 0)
		csv_reset();
}

void print_obj_begin(const char *key)
{
	if (P.fmt == PRINT_FMT_JSON) {
		push(key, json_object_new_object());
		return;
	}
	if (P.fmt != PRINT_FMT_CSV || !P.csv_depth)
		return;
	if (++P.csv_depth == 2) {
		csv_clear();
		P.in_record = 1;
	}
}

void print_obj_end(void)
{
	FILE *f = out();

	if (P.fmt == PRINT_FMT_JSON) {
		pop();
		return;
	}
	if (P.fmt != PRINT_FMT_CSV || !P.csv_depth)
		return;
	if (P.csv_depth-- == 2 && P.in_record) {
		for (size_t i = 0; i < P.ncols; i++) {
			if (i)
				fputc(',', f);
			print_csv_field(f, P.cells[i]);
		}
		fputc('\n', f);
		P.in_record = 0;
	}
}

/* CSV: keep s as the field of column KEY of the current record. */
static void csv_put(const char *key, const char *s)
{
	if (!P.in_record || P.csv_depth != 2 || !key)
		return;
	for (size_t i = 0; i < P.ncols; i++) {
		if (!strcmp(P.cols[i], key)) {
			free(P.cells[i]);
			P.cells[i] = s ? xstrdup(s) : NULL;
			return;
		}
	}
}

static void text(int where, const char *fmt, va_list ap)
{
	if (P.fmt == PRINT_FMT_TEXT && (where & PRINT_TEXT) && fmt)
		vfprintf(out(), fmt, ap);
}

void print_text(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	text(PRINT_TEXT, fmt, ap);
	va_end(ap);
}

void print_str_(int where, const char *key, const char *v, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	text(where, fmt, ap);
	va_end(ap);
	if (P.fmt == PRINT_FMT_JSON && (where & PRINT_JSON))
		json_put(key, v ? json_object_new_string(v) : NULL);
	else if (P.fmt == PRINT_FMT_CSV && (where & PRINT_CSV))
		csv_put(key, v);
}

void print_int_(int where, const char *key, int64_t v, const char *fmt, ...)
{
	va_list ap;
	char b[32];

	va_start(ap, fmt);
	text(where, fmt, ap);
	va_end(ap);
	if (P.fmt == PRINT_FMT_JSON && (where & PRINT_JSON)) {
		json_put(key, json_object_new_int64(v));
	} else if (P.fmt == PRINT_FMT_CSV && (where & PRINT_CSV)) {
		snprintf(b, sizeof(b), "%lld", (long long)v);
		csv_put(key, b);
	}
}

void print_num_(int where, const char *key, double v, const char *fmt, ...)
{
	va_list ap;
	char b[40];

	va_start(ap, fmt);
	text(where, fmt, ap);
	va_end(ap);
	if (P.fmt == PRINT_FMT_JSON && (where & PRINT_JSON)) {
		if (!isfinite(v)) {
			json_put(key, NULL);
			return;
		}
		print_fmt_num(b, v);
		/* keep it a JSON number that reads as a float: 3.0, not 3 */
		if (!strpbrk(b, ".eE"))
			strcat(b, ".0");
		json_put(key, json_object_new_double_s(v, b));
	} else if (P.fmt == PRINT_FMT_CSV && (where & PRINT_CSV)) {
		csv_put(key, isfinite(v) ? print_fmt_num(b, v) : NULL);
	}
}

void print_bool_(int where, const char *key, int v, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	text(where, fmt, ap);
	va_end(ap);
	if (P.fmt == PRINT_FMT_JSON && (where & PRINT_JSON))
		json_put(key, json_object_new_boolean(v));
	else if (P.fmt == PRINT_FMT_CSV && (where & PRINT_CSV))
		csv_put(key, v ? "true" : "false");
}

void print_time_(int where, const char *key, double t, const char *fmt, ...)
{
	va_list ap;
	char b[32];

	va_start(ap, fmt);
	text(where, fmt, ap);
	va_end(ap);
	print_fmt_time(b, t);
	if (P.fmt == PRINT_FMT_JSON && (where & PRINT_JSON))
		json_put(key, *b ? json_object_new_string(b) : NULL);
	else if (P.fmt == PRINT_FMT_CSV && (where & PRINT_CSV))
		csv_put(key, *b ? b : NULL);
}

void print_data_null(const char *key)
{
	if (P.fmt == PRINT_FMT_JSON)
		json_put(key, NULL);
	else if (P.fmt == PRINT_FMT_CSV)
		csv_put(key, NULL);
}

void print_data_json(const char *key, struct json_object *v)
{
	if (P.fmt == PRINT_FMT_JSON && !P.depth && !key) {
		/* the document itself; later values go into it */
		P.stack[0] = v ? v : json_object_new_object();
		P.depth = 1;
		return;
	}
	if (P.fmt == PRINT_FMT_JSON) {
		json_put(key, v);
		return;
	}
	if (P.fmt == PRINT_FMT_CSV && v)
		csv_put(key, json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(v);
}
