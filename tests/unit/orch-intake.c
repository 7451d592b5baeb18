/* orch-intake.c: unit tests of the intake helper's JSON: a series survives the trip exactly, and a bad answer is named. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "intake/intake.h"
#include "jsonh.h"
#include "intake/series.h"
#include "tap.h"
#include "util.h"

/* The series of a seed mail, sent through series_to_json(s, 1) and back: the same JSON both ways, claims exact. */
static void round_trip(const char *name)
{
	char *p = xasprintf("%s/series/%s%s", tap_data_dir(), strchr(name, '_') ? "seeds/" : "", name);
	struct series *s = NULL, *back = NULL;
	struct json_object *o, *o2;
	struct buf a = BUF_INIT, b = BUF_INIT;

	if (series_load(p, NULL, &s) < 0) {
		ok(0, "%s loads", name);
		free(p);
		return;
	}
	o = series_to_json(s, 1);
	json_to_buf(&a, o, 0);
	ok(intake_from_json(o, name, &back, NULL) == 0, "%s: the helper's answer reads back", name);
	if (back) {
		o2 = series_to_json(back, 1);
		json_to_buf(&b, o2, 0);
		json_object_put(o2);
		is_str(b.buf, a.buf, "%s: nothing lost on the way (%zu patches, %zu claims)", name, s->n_patches,
		       s->n_claims);
		for (size_t i = 0; i < s->n_claims && i < back->n_claims; i++)
			ok(back->claims[i].lo_pct == s->claims[i].lo_pct && back->claims[i].hi_pct == s->claims[i].hi_pct,
			   "%s: claim %zu exact (%.17g)", name, i + 1, s->claims[i].lo_pct);
	}
	json_object_put(o);
	series_free(s);
	series_free(back);
	buf_release(&a);
	buf_release(&b);
	free(p);
}

/* A helper that answers something else: named, not half read. */
static void bad_answers(void)
{
	static const char *const bad[][2] = {
		{ "{\"source\":\"x\"}", "no field 'source_url'" },
		{ "[]", "no field 'source'" },
	};
	struct series *s = NULL;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct json_object *o = json_parse(bad[i][0], strlen(bad[i][0]), "test");

		ok(o && intake_from_json(o, "test", &s, NULL) < 0 && !s, "refused: %s", bad[i][1]);
		if (o)
			json_object_put(o);
	}
	{
		/* a good answer with one field of the wrong type */
		char *p = xasprintf("%s/series/somaxconn.patch", tap_data_dir());
		struct series *g = NULL;

		if (series_load(p, NULL, &g) == 0) {
			struct json_object *o = series_to_json(g, 1);

			json_object_object_add(o, "version", json_object_new_string("two"));
			ok(intake_from_json(o, "test", &s, NULL) < 0 && !s, "refused: version given as text");
			json_object_put(o);
			o = series_to_json(g, 1);
			json_object_object_add(o, "content_sha256", json_object_new_string("../../etc"));
			ok(intake_from_json(o, "test", &s, NULL) < 0 && !s, "refused: a content hash that is no sha256");
			json_object_put(o);
			o = series_to_json(g, 1);
			json_object_object_add(o, "proposals", json_tokener_parse(
				"[{\"patch\": 1, \"name\": \"x\", \"type\": \"udp_rr\", \"command\": null,"
				" \"context\": null, \"params\": {\"a=b\": \"1\"}}]"));
			ok(intake_from_json(o, "test", &s, NULL) < 0 && !s, "refused: a parameter name with '='");
			json_object_put(o);
			series_free(g);
		} else {
			ok(0, "somaxconn.patch loads");
		}
		free(p);
	}
}

/* What klab hands its helper on stdin: a header per source ("-" or a byte count), then the text. */
static void texts(void)
{
	static const char in[] = "3\nabc-\n0\n2\n\n\n";
	static const char *const bad[][2] = {
		{ "3\nab", "a text shorter than its count" },
		{ "x\nabc", "a count that is not a number" },
		{ "-3\nabc", "a negative count" },
		{ "\nabc", "an empty header" },
		{ "-\n-\n-\n-\n", "more headers than sources" },
		{ "-\n", "fewer headers than sources" },
		{ "99999999999999999999\n", "a count out of range" },
	};
	struct series_text t[4];

	ok(intake_read_texts(in, sizeof(in) - 1, 4, t) == 0 && t[0].len == 3 && !memcmp(t[0].text, "abc", 3) &&
	   !t[1].text && t[2].text && t[2].len == 0 && t[3].len == 2 && !memcmp(t[3].text, "\n\n", 2),
	   "texts: a file, a fetched source, an empty file, a file of newlines");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ok(intake_read_texts(bad[i][0], strlen(bad[i][0]), 3, t) < 0, "texts refused: %s", bad[i][1]);
}

int main(void)
{
	texts();
	round_trip("000_951f765891bfd14f.txt");
	round_trip("thread-v2.mbox");
	round_trip("003_1ddf0ef0bfe7a1c4.txt");
	round_trip("004_94b9a7569baa50d4.txt");
	bad_answers();
	return done_testing();
}
