/* cmd/report.c: `klab report`: the static report pages, or a mail-style text report. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "store/db.h"
#include "store/jobs.h"
#include "log.h"
#include "report/report.h"
#include "util.h"

static const char *r_out, *r_format = "html", *r_tested_by;
static int r_no_charts;

static const struct opt report_opts[] = {
	OPT_STRING('o', "out", &r_out, "DIR", "the report folder (default: [lab] report_dir); mail: where the PNG charts go"),
	OPT_STRING('f', "format", &r_format, "html|mail", "the static pages (html, the default) or a mail-style text report"),
	OPT_BOOL('n', "no-charts", &r_no_charts, "no gnuplot: a note where each chart would be"),
	OPT_STRING(0, "tested-by", &r_tested_by, "'NAME <ADDR>'", "the Tested-by: line of the mail report"),
	OPT_JSON(),
	OPT_END(),
};
static const char *const report_usage[] = {
	"[--out DIR] [--no-charts] [JOB...]",
	"--format=mail [--out DIR] [--tested-by 'NAME <ADDR>'] JOB",
	NULL,
};
static const struct opt_spec report_spec = {
	"klab report", report_usage, "write the static report pages, or a mail-style text report",
	"Render the static report pages (index, one page per job, history pages,\n"
	"gnuplot charts) into DIR (default: [lab] report_dir). With JOB ids only\n"
	"those job pages are rendered, plus the index and history pages.\n"
	"--format=mail prints a plain-text report of JOB for a mailing list; with\n"
	"--out it also draws PNG charts there to attach.\n",
	report_opts,
};

static int report(int argc, char **argv, struct klab_ctx *ctx)
{
	struct report_opts o = { 0, 0, NULL };
	struct report_stats st;
	const char *out;
	int64_t *ids = NULL;
	size_t n = 0;
	struct db *db;
	int ret = 1, s;

	if ((argc = cmd_parse(&report_spec, argc, argv, &s)) < 0)
		return s;
	if (strcmp(r_format, "html") && strcmp(r_format, "mail"))
		return cmd_usage_error(&report_spec, "option '--format': unknown format '%s' (html or mail)", r_format);
	o.no_charts = r_no_charts;
	out = r_out;
	ids = xcalloc((size_t)argc + 1, sizeof(*ids));
	for (int i = 0; i < argc; i++) {
		long v;
		const char *a = argv[i];

		if (starts_with(a, "job-"))
			a += 4;
		if (parse_long(a, 1, INT64_MAX > LONG_MAX ? LONG_MAX : (long)INT64_MAX, &v) < 0) {
			free(ids);
			return cmd_usage_error(&report_spec, "'%s' is not a job id", argv[i]);
		}
		ids[n++] = v;
	}
	if (!strcmp(r_format, "mail")) {
		struct report_mail_opts mo = { r_tested_by, out };

		if (n != 1) {
			free(ids);
			return cmd_usage_error(&report_spec, "--format=mail takes exactly one JOB");
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
			if (jobs_exists(db, ids[i]) != 1) {
				error("cannot report job %lld: no such job", (long long)ids[i]);
				goto out;
			}
		}
		if (report_jobs(db, out, ids, n, &o, &st) < 0)
			goto out;
	} else if (report_write_all(db, out, &o, &st) < 0) {
		goto out;
	}
	cmd_print_begin();
	{
		char *index = xasprintf("%s/index.html", out);

		print_data_str("index", index);
		free(index);
	}
	print_int(PRINT_ANY, "pages", "report: %lld page(s), ", st.pages);
	print_int(PRINT_ANY, "charts_drawn", "%lld", st.charts_drawn);
	print_int(PRINT_ANY, "charts", "/%lld chart(s) drawn ", st.charts);
	print_int(PRINT_ANY, "gnuplot_processes", "by %lld gnuplot process(es)", st.gnuplot_runs);
	print_text(" in %s/index.html\n", out);
	ret = cmd_print_end();
out:
	free(ids);
	return ret;
}

const struct klab_cmd cmd_report = { "report", report, &report_spec, NULL, 0 };
