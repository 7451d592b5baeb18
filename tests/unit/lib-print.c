/* lib-print.c: unit tests of the printing layer: one set of calls as text, JSON and CSV. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "jsonh.h"
#include "print.h"
#include "tap.h"

static const char *const cols[] = { "id", "name", "value", "time", "ok", NULL };

struct row {
	long long id;
	const char *name;
	double value;
	double time;
	int ok;
};

static const struct row rows[] = {
	{ 1, "plain", 70387.2, 1796234067, 1 },
	{ 2, "with, comma and \"quotes\"", 0.1, NAN, 0 },
	{ 3, NULL, NAN, 0, 1 },
};

/* The same calls, in format F, into a string (caller frees). */
static char *listing(enum print_format f, size_t n_rows, int *rc)
{
	char *s = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&s, &len);

	print_begin(f, m);
	print_text("%-3s %-28s %s\n", "ID", "NAME", "VALUE");
	print_list_begin(NULL, cols);
	for (size_t i = 0; i < n_rows; i++) {
		const struct row *r = &rows[i];

		print_obj_begin(NULL);
		print_int(PRINT_ANY, "id", "%-3lld ", r->id);
		print_str(PRINT_DATA, "name", "%s", r->name);
		print_text("%-28s ", r->name ? r->name : "-");
		print_num(PRINT_ANY, "value", "%.1f\n", r->value);
		print_data_time("time", r->time);
		print_data_bool("ok", r->ok);
		print_data_str("not_a_column", "only in JSON");
		print_obj_end();
	}
	print_list_end();
	*rc = print_end();
	fclose(m);
	return s;
}

static void test_formats(void)
{
	struct json_object *j, *r;
	char *s;
	int rc;

	s = listing(PRINT_FMT_TEXT, 3, &rc);
	is_str(s, "ID  NAME                         VALUE\n"
		  "1   plain                        70387.2\n"
		  "2   with, comma and \"quotes\"     0.1\n"
		  "3   -                            nan\n", "text: the formats as given");
	is_int(rc, 0, "print_end says 0");
	free(s);

	s = listing(PRINT_FMT_CSV, 3, &rc);
	is_str(s, "id,name,value,time,ok\n"
		  "1,plain,70387.2,2026-12-02T17:54:27Z,true\n"
		  "2,\"with, comma and \"\"quotes\"\"\",0.1,,false\n"
		  "3,,,1970-01-01T00:00:00Z,true\n",
	       "CSV: header, RFC 4180 quoting, shortest numbers, ISO times, empty nulls");
	free(s);

	s = listing(PRINT_FMT_CSV, 0, &rc);
	is_str(s, "id,name,value,time,ok\n", "CSV: an empty listing still has its header");
	free(s);

	s = listing(PRINT_FMT_JSON, 3, &rc);
	j = json_parse(s, strlen(s), "listing");
	ok(j && json_object_is_type(j, json_type_array) && json_object_array_length(j) == 3, "JSON: an array of 3");
	r = j ? json_object_array_get_idx(j, 0) : NULL;
	ok(r && json_object_get_int64(json_object_object_get(r, "id")) == 1, "JSON: integers stay integers");
	ok(r && json_object_get_double(json_object_object_get(r, "value")) == 70387.2, "JSON: the value reads back");
	ok(strstr(s, "\"value\": 70387.2,") != NULL, "JSON: shortest form of 70387.2");
	ok(r && !strcmp(json_object_get_string(json_object_object_get(r, "time")), "2026-12-02T17:54:27Z"),
	   "JSON: times as ISO 8601 UTC");
	ok(r && !strcmp(json_object_get_string(json_object_object_get(r, "not_a_column")), "only in JSON"),
	   "JSON: keys that are not CSV columns are kept");
	r = j ? json_object_array_get_idx(j, 1) : NULL;
	ok(r && !strcmp(json_object_get_string(json_object_object_get(r, "name")), "with, comma and \"quotes\""),
	   "JSON: quotes escaped and read back");
	ok(r && json_object_object_get_ex(r, "time", NULL) && !json_object_object_get(r, "time"), "JSON: NaN time is null");
	r = j ? json_object_array_get_idx(j, 2) : NULL;
	ok(r && json_object_object_get_ex(r, "name", NULL) && !json_object_object_get(r, "name") &&
	   !json_object_object_get(r, "value"), "JSON: NULL string and NaN number are null");
	json_object_put(j);
	free(s);

	s = listing(PRINT_FMT_JSON, 0, &rc);
	is_str(s, "[\n]\n", "JSON: an empty listing is []");
	free(s);
}

static void test_numbers(void)
{
	char b[32];

	is_str(print_fmt_num(b, 70387.2), "70387.2", "70387.2, not 70387.199999999997");
	is_str(print_fmt_num(b, 0.1), "0.1", "0.1");
	is_str(print_fmt_num(b, 1.0 / 3), "0.3333333333333333", "1/3 needs 16 digits");
	is_str(print_fmt_num(b, 0.30000000000000004), "0.30000000000000004", "0.1 + 0.2 needs 17 digits");
	is_str(print_fmt_num(b, 2378247), "2378247", "integral values have no point");
	is_str(print_fmt_num(b, -0.0), "-0", "negative zero");
	for (double v = 1e-7; v < 1e17; v *= 7.3) {
		double x = v * 1.000000001;

		if (strtod(print_fmt_num(b, x), NULL) != x) {
			ok(0, "round trip of %.17g", x);
			return;
		}
	}
	ok(1, "every value of a sweep reads back as itself");
	is_str(print_fmt_time(b, 1796234067.9), "2026-12-02T17:54:27Z", "fractions of a second are dropped");
	is_str(print_fmt_time(b, NAN), "", "NaN is no time");
}

static void test_nesting(void)
{
	static const char *const pcols[] = { "series", "idx", "value", NULL };
	char *s = NULL;
	size_t len = 0;
	FILE *m;
	struct json_object *j;

	/* two series, each with its points: JSON nests, CSV is one table of points */
	for (int f = PRINT_FMT_JSON; f <= PRINT_FMT_CSV; f++) {
		m = open_memstream(&s, &len);
		print_begin(f, m);
		print_list_begin(NULL, NULL);
		for (int k = 0; k < 2; k++) {
			print_obj_begin(NULL);
			print_str(PRINT_JSON, "series", "%s", k ? "b" : "a");
			print_list_begin("points", pcols);
			for (int i = 0; i < 2; i++) {
				print_obj_begin(NULL);
				print_str(PRINT_CSV, "series", "%s", k ? "b" : "a");
				print_int(PRINT_DATA, "idx", "%lld", i);
				print_num(PRINT_DATA, "value", "%g", i + k * 0.5);
				print_data_json("detail", json_tokener_parse("{\"x\": [1, 2]}"));
				print_obj_end();
			}
			print_list_end();
			print_obj_end();
		}
		print_list_end();
		ok(!print_end(), "print_end");
		fclose(m);
		if (f == PRINT_FMT_CSV) {
			is_str(s, "series,idx,value\na,0,0\na,1,1\nb,0,0.5\nb,1,1.5\n",
			       "CSV: one header, the records of both nested lists");
		} else {
			j = json_parse(s, strlen(s), "nested");
			ok(j && json_object_array_length(j) == 2, "JSON: two series");
			ok(j && !strcmp(json_object_get_string(json_object_object_get(json_object_array_get_idx(j, 1),
											"series")), "b"),
			   "JSON: series-level keys at the series");
			ok(strstr(s, "\"value\": 1.5") && strstr(s, "\"value\": 1.0") && strstr(s, "\"x\": ["),
			   "JSON: floats keep a point; embedded JSON kept");
			json_object_put(j);
		}
		free(s);
		s = NULL;
	}

	/* values outside any container make one object */
	m = open_memstream(&s, &len);
	print_begin(PRINT_FMT_JSON, m);
	print_data_int("id", 7);
	print_str(PRINT_ANY, "state", "%s\n", "queued");
	print_obj_begin("sides");
	print_data_str("A", "base");
	print_obj_end();
	print_end();
	fclose(m);
	is_str(s, "{\n  \"id\": 7,\n  \"state\": \"queued\",\n  \"sides\": {\n    \"A\": \"base\"\n  }\n}\n",
	       "JSON: loose values form the top-level object");
	free(s);
	s = NULL;

	/* a failing stream is reported */
	m = fopen("/dev/full", "w");
	if (m) {
		print_begin(PRINT_FMT_TEXT, m);
		for (int i = 0; i < 2000; i++)
			print_text("%s\n", "a line that fills the buffer of the stream before the flush");
		ok(print_end() == -1, "print_end: -1 when the output cannot be written");
		fclose(m);
	}
}

/*
 * A top-level list of N elements printed with the print_*() calls, and the
 * same document built as json-c objects and serialized whole: the two texts
 * must be the same byte for byte (above STREAM_AFTER the list is written as
 * it comes). The elements vary: objects with a nested list, an empty list
 * and object, strings and numbers, and plain values in the list itself.
 */
static void stream_case(size_t n)
{
	struct json_object *doc = json_object_new_array();
	char *s = NULL, *e;
	size_t len = 0;
	FILE *m = open_memstream(&s, &len);
	struct buf want = BUF_INIT;
	int rc;

	print_begin(PRINT_FMT_JSON, m);
	print_list_begin(NULL, cols);
	for (size_t i = 0; i < n; i++) {
		struct json_object *o, *l;

		if (i % 7 == 3) {	/* a plain value in the list */
			print_data_int(NULL, (int64_t)i);
			json_object_array_add(doc, json_object_new_int64((int64_t)i));
			continue;
		}
		o = json_object_new_object();
		print_obj_begin(NULL);
		print_data_int("id", (int64_t)i);
		json_object_object_add(o, "id", json_object_new_int64((int64_t)i));
		print_data_str("name", i % 2 ? "odd \"one\"\nwith a newline" : NULL);
		json_object_object_add(o, "name", i % 2 ? json_object_new_string("odd \"one\"\nwith a newline") : NULL);
		print_list_begin("xs", NULL);
		l = json_object_new_array();
		for (size_t k = 0; k < i % 3; k++) {
			print_data_int(NULL, (int64_t)k);
			json_object_array_add(l, json_object_new_int64((int64_t)k));
		}
		print_list_end();
		json_object_object_add(o, "xs", l);
		print_obj_begin("inner");
		print_obj_end();
		json_object_object_add(o, "inner", json_object_new_object());
		print_obj_end();
		json_object_array_add(doc, o);
	}
	print_list_end();
	rc = print_end();
	fclose(m);
	json_to_buf(&want, doc, 1);
	buf_addch(&want, '\n');
	e = want.buf;
	ok(!rc && s && !strcmp(s, e), "JSON list of %zu elements: the text json-c gives the whole document", n);
	if (s && strcmp(s, e))
		diag("got %zu bytes, want %zu", strlen(s), strlen(e));
	free(s);
	buf_release(&want);
	json_object_put(doc);
}

static void test_stream(void)
{
	static const size_t sizes[] = { 0, 1, 999, 1000, 1001, 2500, 10007 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		stream_case(sizes[i]);
}

int main(void)
{
	test_formats();
	test_numbers();
	test_nesting();
	test_stream();
	return done_testing();
}
