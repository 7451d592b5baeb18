/* cmd/report.c: `klab report`: the static report pages, or a mail-style text report. */
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "buf.h"
#include "cmd.h"
#include "db.h"
#include "jsonh.h"
#include "log.h"
#include "report.h"
#include "util.h"

static int report_usage(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: klab report [--out DIR] [--no-charts] [JOB...]\n"
		"       klab report --format=mail [--out DIR] [--tested-by 'NAME <ADDR>'] JOB\n"
		"\n"
		"Render the static report pages (index, one page per job, history pages,\n"
		"gnuplot charts) into DIR (default: [lab] report_dir). With JOB ids only\n"
		"those job pages are rendered, plus the index and history pages.\n"
		"--format=mail prints a plain-text report of JOB for a mailing list; with\n"
		"--out it also draws PNG charts there to attach.\n");
	return status;
}

int oldcmd_report(int argc, char **argv, struct klab_ctx *ctx)
{
	static const struct option longopts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'f' },
		{ "no-charts", no_argument, NULL, 'n' },
		{ "tested-by", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL, *format = "html", *tested_by = NULL;
	struct report_opts o = { 0, 0 };
	struct report_stats st;
	int64_t *ids = NULL;
	size_t n = 0;
	struct db *db;
	int c, ret = 1;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+o:f:nth", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'f': format = optarg; break;
		case 'n': o.no_charts = 1; break;
		case 't': tested_by = optarg; break;
		case 'h': return report_usage(0);
		default:
			fprintf(stderr, "klab report: unknown option '%s'\n", argv[optind - 1]);
			return report_usage(2);
		}
	}
	if (strcmp(format, "html") && strcmp(format, "mail")) {
		fprintf(stderr, "klab report: unknown format '%s' (html or mail)\n", format);
		return 2;
	}
	ids = xcalloc((size_t)argc + 1, sizeof(*ids));
	for (int i = optind; i < argc; i++) {
		long v;
		const char *s = argv[i];

		if (starts_with(s, "job-"))
			s += 4;
		if (parse_long(s, 1, INT64_MAX > LONG_MAX ? LONG_MAX : (long)INT64_MAX, &v) < 0) {
			fprintf(stderr, "klab report: '%s' is not a job id\n", argv[i]);
			free(ids);
			return 2;
		}
		ids[n++] = v;
	}
	if (!strcmp(format, "mail")) {
		struct report_mail_opts mo = { tested_by, out };

		if (n != 1) {
			fprintf(stderr, "klab report: --format=mail takes exactly one JOB\n");
			free(ids);
			return 2;
		}
		if (!(db = ctx_db(ctx)))
			goto out;
		if (report_mail(db, ids[0], stdout, &mo) < 0)
			goto out;
		if (fflush(stdout) || ferror(stdout)) {
			error_errno("cannot write the mail report to stdout");
			goto out;
		}
		ret = 0;
		goto out;
	}
	if (!out) {
		struct klab_config *cfg = ctx_config(ctx);

		if (!cfg)
			goto out;
		out = cfg->lab.report_dir;
		if (!out || !*out) {
			error("no report folder: give --out DIR or set report_dir in [lab]");
			goto out;
		}
	}
	if (!(db = ctx_db(ctx)))
		goto out;
	if (n) {
		for (size_t i = 0; i < n; i++) {
			int64_t dummy;

			if (db_get_int(db, &dummy, "SELECT id FROM jobs WHERE id = ?", "i", ids[i]) != 1) {
				error("cannot report job %lld: no such job", (long long)ids[i]);
				goto out;
			}
		}
		if (report_jobs(db, out, ids, n, &o, &st) < 0)
			goto out;
	} else if (report_write_all(db, out, &o, &st) < 0) {
		goto out;
	}
	if (ctx->json) {
		struct json_object *jo = json_object_new_object();
		struct buf b = BUF_INIT;
		char *index = xasprintf("%s/index.html", out);

		json_object_object_add(jo, "index", json_object_new_string(index));
		json_object_object_add(jo, "pages", json_object_new_int(st.pages));
		json_object_object_add(jo, "charts", json_object_new_int(st.charts));
		json_object_object_add(jo, "charts_drawn", json_object_new_int(st.charts_drawn));
		json_object_object_add(jo, "gnuplot_processes", json_object_new_int(st.gnuplot_runs));
		json_to_buf(&b, jo, 0);
		printf("%s\n", b.buf);
		buf_release(&b);
		json_object_put(jo);
		free(index);
	} else {
		printf("report: %d page(s), %d/%d chart(s) drawn by %d gnuplot process(es) in %s/index.html\n",
		       st.pages, st.charts_drawn, st.charts, st.gnuplot_runs, out);
	}
	if (fflush(stdout) || ferror(stdout)) {
		error_errno("cannot write to stdout");
		goto out;
	}
	ret = 0;
out:
	free(ids);
	return ret;
}
