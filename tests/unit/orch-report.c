/* orch-report.c: the report API the job runner calls (report_job), file names from outside strings, the mail report. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "db.h"
#include "log.h"
#include "report.h"
#include "report_int.h"
#include "tap.h"
#include "util.h"

static char *slug(const char *s)
{
	struct buf b = BUF_INIT;

	rep_slug(&b, s);
	return buf_detach(&b, NULL);
}

static int exists(const char *dir, const char *name)
{
	char *p = xasprintf("%s/%s", dir, name);
	int ok = file_exists(p);

	free(p);
	return ok;
}

int main(void)
{
	struct buf sql = BUF_INIT, mail = BUF_INIT;
	const char *scratch = tap_scratch_dir();
	char *dbpath = xasprintf("%s/r.db", scratch), *out = xasprintf("%s/out", scratch);
	char *fixture = xasprintf("%s/report/fixture.sql", tap_data_dir());
	char *a, *b, *mailpath;
	struct db *db = NULL;
	FILE *f;

	log_init("orch-report", 0, LOG_WARNING);

	a = slug("udp_rr_500");
	is_str(a, "udp_rr_500", "a plain name stays as it is");
	free(a);
	a = slug("a/b");
	b = slug("a_b");
	ok(strcmp(a, b) != 0, "two names that differ only in unsafe bytes get different slugs (%s, %s)", a, b);
	ok(strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == strlen(a),
	   "a slug has only safe bytes");
	free(a);
	free(b);
	a = slug("../../etc/passwd");
	ok(a[0] != '.' && !strchr(a, '/'), "no path traversal through a slug (%s)", a);
	free(a);
	a = slug("");
	is_str(a, "_", "an empty name gets a placeholder");
	free(a);

	ok(db_open(dbpath, &db) == 0, "database opens");
	ok(buf_read_file(&sql, fixture) == 0, "fixture reads");
	ok(db_exec(db, sql.buf) == 0, "fixture loads");

	ok(report_job(db, out, 1) == 0, "report_job renders job 1");
	ok(exists(out, "job-1.html") && exists(out, "index.html") && exists(out, "style.css"),
	   "job page, index and style sheet written");
	ok(!exists(out, "job-2.html"), "no other job page");
	ok(exists(out, "history-udp_rr_500--tps.html"), "history page written");
	ok(report_job(db, out, 999) < 0, "an unknown job fails");

	{
		struct report_opts o = { 1, 0 };
		struct report_stats st;

		ok(report_write_all(db, out, &o, &st) == 0, "report_write_all without charts");
		ok(st.pages >= 14, "pages written: %d", st.pages);
		is_int(st.gnuplot_runs, 0, "no gnuplot with no_charts");
		ok(st.charts > 20 && st.charts_drawn == 0, "charts queued %d, drawn %d", st.charts, st.charts_drawn);
	}

	mailpath = xasprintf("%s/mail.txt", scratch);
	f = fopen(mailpath, "w");
	ok(f && report_mail(db, 1, f, NULL) == 0, "mail report of job 1");
	if (f)
		fclose(f);
	ok(buf_read_file(&mail, mailpath) == 0, "mail report reads back");
	ok(strstr(mail.buf, "+48.75% [+46.91%, +50.62%]") != NULL, "tx_pps change and CI from the fixture");
	ok(strstr(mail.buf, "\nTested-by: ") != NULL, "Tested-by when the claim holds");
	f = fopen(mailpath, "w");
	ok(f && report_mail(db, 3, f, NULL) < 0, "no mail report without comparisons");
	if (f)
		fclose(f);

	db_close(db);
	buf_release(&sql);
	buf_release(&mail);
	free(dbpath);
	free(out);
	free(fixture);
	free(mailpath);
	return done_testing();
}
