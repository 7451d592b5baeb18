/* orch-result.c: unit tests of result_parse() and result_store() on a real temporary sqlite database. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "store/db.h"
#include "log.h"
#include "store/result.h"
#include "tap.h"
#include "util.h"

static int64_t count(struct db *db, const char *sql, int64_t id)
{
	int64_t n = -1;

	db_get_int(db, &n, sql, "i", id);
	return n;
}

static char *replace(const char *s, const char *from, const char *to)
{
	const char *p = strstr(s, from);
	struct buf b = BUF_INIT;

	if (!p)
		return xstrdup(s);
	buf_add(&b, s, p - s);
	buf_addstr(&b, to);
	buf_addstr(&b, p + strlen(from));
	return buf_detach(&b, NULL);
}

int main(void)
{
	struct buf doc = BUF_INIT;
	char *path = xasprintf("%s/agent/result-rr-client.json", tap_data_dir());
	char *dbp = tap_db_path("klab.db");
	struct result_meta meta = { 0 };
	struct json_object *o;
	struct db *db;
	int64_t id = 0, id2 = 0, n = 0;
	char *bad, *other;
	double v = 0;

	log_init("orch-result", 0, LOG_CRIT);
	if (buf_read_file(&doc, path) || db_open(dbp, &db))
		die("cannot set up");

	ok(!result_parse(doc.buf, doc.len, "fixture", &o, NULL), "the agent's udp_rr client result parses");
	json_object_put(o);

	/* found by tests/fuzz/orch-result (corpus crash-series-without-points): a series
	 * without "points" or a histogram without "buckets" read an unset pointer */
	bad = replace(doc.buf, "\"points\":", "\"metricpoints\":");
	other = replace(bad, "\"buckets\":", "\"bucketz\":");
	ok(strstr(other, "\"metricpoints\":") && strstr(other, "\"bucketz\":") &&
	   !result_parse(other, strlen(other), "no points", &o, NULL), "a series without points, a histogram without buckets parse");
	json_object_put(o);
	free(other);
	free(bad);

	bad = replace(doc.buf, "\"schema_version\":1", "\"schema_version\":7");
	ok(result_parse(bad, strlen(bad), "v7", &o, NULL) < 0 && !o, "unknown schema_version is refused");
	ok(result_store(db, bad, strlen(bad), NULL, &id) < 0, "... and not stored");
	free(bad);
	bad = replace(doc.buf, "\"schema_version\":1,", "");
	ok(result_parse(bad, strlen(bad), "none", &o, NULL) < 0, "missing schema_version is refused");
	free(bad);
	bad = replace(doc.buf, "\"better\":\"higher\"", "\"better\":\"sideways\"");
	ok(result_parse(bad, strlen(bad), "better", &o, NULL) < 0, "bad 'better' is refused");
	free(bad);
	bad = replace(doc.buf, "\"points\":[[", "\"points\":[[\"x\",");
	ok(result_parse(bad, strlen(bad), "points", &o, NULL) < 0, "bad series point is refused");
	free(bad);
	ok(result_parse(doc.buf, doc.len / 2, "cut", &o, NULL) < 0, "truncated document is refused");
	ok(result_parse("[1]", 3, "array", &o, NULL) < 0, "an array is refused");
	{
		/* the reason handed up to a caller that keeps it (a job's run step), not logged */
		struct buf why = BUF_INIT;
		struct result_meta m = { 0 };

		log_clear_error();
		ok(result_parse("{\"schema_version\": \"1\"}", 23, "text", &o, &why) < 0 && !*log_last_error(),
		   "a wrong type is refused, not logged");
		is_str(why.buf, "text: field 'schema_version' must be int, not string", "... with the field named");
		ok(result_parse("{\"schema", 8, "cut", &o, &why) < 0, "a cut document is refused");
		is_str(why.buf, "cut: malformed JSON at line 1, column 9: unexpected end of input", "... where it ends");
		m.why = &why;
		bad = replace(doc.buf, "\"schema_version\":1", "\"schema_version\":7");
		ok(result_store(db, bad, strlen(bad), &m, &id) < 0, "result_store refuses it too");
		ok(strstr(why.buf, "unknown result schema_version 7") != NULL, "... saying why in meta.why: %s", why.buf);
		free(bad);
		buf_release(&why);
	}
	db_get_int(db, &n, "SELECT count(*) FROM runs", "");
	is_int(n, 0, "nothing stored by the refusals");

	meta.job_id = 0;
	meta.side = "A";
	meta.seq = 3;
	meta.peer = "peer1";
	meta.profile = "xps-on";
	ok(!result_store(db, doc.buf, doc.len, &meta, &id) && id > 0, "stored as run %lld", (long long)id);
	is_int(count(db, "SELECT count(*) FROM metrics WHERE run_id = ?", id), 47, "47 metrics");
	is_int(count(db, "SELECT count(*) FROM cpu_stats WHERE run_id = ?", id), 3, "cpu_stats: all + 2 CPUs");
	is_int(count(db, "SELECT count(*) FROM samples WHERE run_id = ?", id), 24, "24 samples from the series");
	is_int(count(db, "SELECT count(*) FROM profile_rows WHERE run_id = ?", id), 20, "20 profile rows");
	ok(count(db, "SELECT count(*) FROM histograms WHERE run_id = ?", id) > 100, "histogram buckets stored");
	{
		char *s = NULL;
		db_get_str(db, &s, "SELECT uid || '|' || workload || '|' || side || '|' || seq || '|' || peer || '|' || profile"
			   " || '|' || COALESCE(CAST(job_id AS TEXT), 'null') || '|' || status FROM runs WHERE id = ?", "i", id);
		is_str(s, "cl1|rr|A|3|peer1|xps-on|null|ok", "runs row: uid, workload from the spec, meta fields");
		free(s);
		db_get_str(db, &s, "SELECT result FROM runs WHERE id = ?", "i", id);
		ok(s && strlen(s) == doc.len && !memcmp(s, doc.buf, doc.len), "document kept verbatim");
		free(s);
		db_get_str(db, &s, "SELECT machine || '|' || kernel_label FROM runs WHERE id = ?", "i", id);
		ok(s && starts_with(s, "vm|6."), "machine and kernel label from the document (%s)", s ? s : "NULL");
		free(s);
	}
	{
		struct db_stmt *st = db_prepare(db, "SELECT value FROM metrics WHERE run_id = ? AND name = 'tps'", "i", id);
		if (st && db_step(st) == DB_ROW)
			v = db_col_double(st, 0);
		db_finalize(st);
		is_double(v, 51977.0, 1e-6, "tps value");
		st = db_prepare(db, "SELECT soft FROM cpu_stats WHERE run_id = ? AND cpu = -1", "i", id);
		v = -1;
		if (st && db_step(st) == DB_ROW)
			v = db_col_double(st, 0);
		db_finalize(st);
		is_double(v, 10.78, 1e-9, "%%soft of all CPUs");
	}

	ok(!result_store(db, doc.buf, doc.len, &meta, &id2) && id2 == id, "storing the same uid again returns the same id");
	db_get_int(db, &n, "SELECT count(*) FROM runs", "");
	is_int(n, 1, "still one run");
	is_int(count(db, "SELECT count(*) FROM metrics WHERE run_id = ?", id), 47, "metrics not doubled");
	is_int(count(db, "SELECT count(*) FROM profile_rows WHERE run_id = ?", id), 20, "profile rows not doubled");

	other = replace(doc.buf, "\"run_id\":\"cl1\"", "\"run_id\":\"cl2\"");
	meta.workload = "udp_rr_500";
	ok(!result_store(db, other, strlen(other), &meta, &id2) && id2 != id, "a second uid is a second run");
	{
		char *s = NULL;
		db_get_str(db, &s, "SELECT workload FROM runs WHERE id = ?", "i", id2);
		is_str(s, "udp_rr_500", "meta workload wins over the spec's");
		free(s);
	}
	free(other);
	ok(count(db, "SELECT count(*) FROM runs WHERE id = ? AND ops IS NULL AND warmup_ops IS NULL", id2) == 1,
	   "a timed run has no ops");
	{
		/* a run sized by work keeps its operations (migration 0023) */
		char *t = replace(doc.buf, "\"run_id\":\"cl1\"", "\"run_id\":\"cl-ops\"");
		char *w = replace(t, "\"window_s\":4.0}", "\"window_s\":0.6,\"ops\":40000,\"warmup_ops\":8000}");
		int64_t id3 = 0;

		ok(!result_store(db, w, strlen(w), &meta, &id3) && id3 > 0, "a run sized by work is stored");
		is_int(count(db, "SELECT ops FROM runs WHERE id = ?", id3), 40000, "runs.ops from its timing");
		is_int(count(db, "SELECT warmup_ops FROM runs WHERE id = ?", id3), 8000, "runs.warmup_ops from its timing");
		free(t);
		free(w);
	}

	/* monitor statuses with their reasons, and folded call stacks */
	is_int(count(db, "SELECT count(*) FROM run_monitors WHERE run_id = ? AND status = 'ok' AND reason IS NULL", id), 5,
	       "five monitors ok, no reason");
	{
		char *t = replace(doc.buf, "\"bpftrace\":\"ok\"",
				  "\"bpftrace\":\"unavailable: bpftrace: ERROR: __dev_queue_xmit is not traceable\"");
		char *u = replace(t, "\"run_id\":\"cl1\"", "\"run_id\":\"cl4\"");
		char *w = replace(u, "\"monitors\":{", "\"profile_stacks\":[{\"stack\":\"klab-udp-rr;a;b\",\"count\":7},"
				  "{\"stack\":\"swapper;idle\",\"count\":3}],\"monitors\":{");
		char *s = NULL;
		int64_t id4 = 0;

		ok(!result_store(db, w, strlen(w), NULL, &id4) && id4 > 0, "a run with an unavailable monitor and stacks");
		db_get_str(db, &s, "SELECT status || '|' || reason FROM run_monitors WHERE run_id = ? AND monitor = 'bpftrace'",
			   "i", id4);
		is_str(s, "unavailable|bpftrace: ERROR: __dev_queue_xmit is not traceable", "the reason is stored without the prefix");
		free(s);
		is_int(count(db, "SELECT sum(count) FROM profile_stacks WHERE run_id = ?", id4), 10, "stacks stored with counts");
		is_int(count(db, "SELECT count FROM profile_stacks WHERE run_id = ? AND stack = 'klab-udp-rr;a;b'", id4), 7,
		       "a stack as sent");
		free(t);
		free(u);
		t = replace(w, "\"count\":7", "\"count\":\"x\"");
		ok(result_parse(t, strlen(t), "stacks", &o, NULL) < 0, "a stack without a numeric count is refused");
		free(t);
		t = replace(doc.buf, "\"cpu\":\"ok\"", "\"cpu\":1");
		ok(result_parse(t, strlen(t), "monitors", &o, NULL) < 0, "a monitor status that is not a string is refused");
		free(t);
		free(w);
	}

	/* a failure inside the transaction leaves nothing behind: make profile_rows unwritable */
	if (db_is_server(db))
		db_exec(db, "CREATE FUNCTION no_prof() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
			"RAISE EXCEPTION 'test says no'; END $$; CREATE TRIGGER no_prof BEFORE INSERT ON profile_rows "
			"FOR EACH ROW EXECUTE FUNCTION no_prof();");
	else
		db_exec(db, "CREATE TRIGGER no_prof BEFORE INSERT ON profile_rows BEGIN SELECT RAISE(ABORT, 'test says no'); END;");
	other = replace(doc.buf, "\"run_id\":\"cl1\"", "\"run_id\":\"cl3\"");
	ok(result_store(db, other, strlen(other), NULL, &id2) < 0, "a failing insert fails the store");
	db_get_int(db, &n, "SELECT count(*) FROM runs WHERE uid = 'cl3'", "");
	is_int(n, 0, "... and the run row was rolled back");
	db_get_int(db, &n, "SELECT count(*) FROM metrics WHERE run_id NOT IN (SELECT id FROM runs)", "");
	is_int(n, 0, "... with its metrics");
	free(other);

	db_close(db);
	buf_release(&doc);
	free(path);
	free(dbp);
	return done_testing();
}
