/* orch-report.c: the report API the job runner calls (report_job), the data side (report_data.h), file names from outside strings, the mail report. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "compare/compare.h"
#include "compare/compare_fmt.h"
#include "store/db.h"
#include "report/flamegraph.h"
#include "log.h"
#include "report/report.h"
#include "report/report_data.h"
#include "strvec.h"
#include "tap.h"
#include "util.h"

static char *slug(const char *s)
{
	struct buf b = BUF_INIT;

	rep_slug(&b, s);
	return buf_detach(&b, NULL);
}

/* The data side the pages and the mail share, on the fixture job 1. */
static void test_data(struct db *db)
{
	struct rep_job j;
	struct rep_sysinfo si;
	struct rep_count *c;
	struct rep_hist *h;
	size_t n;

	ok(rep_job_load(db, 1, &j) == 0, "job 1 loads");
	is_str(j.side[0].label, "6.1.192-klab-base", "side A label");
	ok(j.side[1].present && j.side[1].commit != NULL, "side B with its kernel");
	ok(j.s_subject && strstr(j.s_subject, "alien skbs"), "the series subject");
	ok(j.have_seed && j.order_seed == 20251016, "the order seed");
	rep_sysinfo_load(db, &j, &si);
	is_str(si.spec_nic, "eth1", "the NIC the run spec names");
	ok(si.n_nics == 1 && si.nics[0].driver && !strcmp(si.nics[0].driver, "idpf") && si.nics[0].tx_queues == 32,
	   "only that NIC, with its driver and queues");
	ok(si.cmdline[0] && strstr(si.cmdline[0], "mitigations=off"), "the boot's cmdline");
	rep_sysinfo_free(&si);
	rep_counts_load(db, 1, &c, &n);
	ok(n == 4 && !strcmp(c[0].workload, "udp_rr_500") && c[0].side == 'A' && c[0].boots == 4 && c[0].runs == 12,
	   "4 boots x 3 runs per side and workload");
	rep_counts_free(c, n);
	rep_hists_load(db, 1, "udp_rr_500", &h, &n);
	ok(n == 2 && !strcmp(h[0].name, "__dev_queue_xmit_ns") && !strcmp(h[1].name, "rtt_us"),
	   "two histograms of udp_rr_500, by name");
	if (n == 2)
		ok(h[1].n == 4 && !strcmp(h[1].bk[0].label, "[8, 16)") && !strcmp(h[0].bk[h[0].n - 1].label, "[128K, 256K)"),
		   "buckets labelled as bpftrace prints them (%s, %s)", h[1].bk[0].label, h[0].bk[h[0].n - 1].label);
	rep_hists_free(h, n);
	rep_job_free(&j);
	ok(rep_job_load(db, 999, &j) < 0, "no job 999");
}

/* Monitor gaps and folded stacks of fixture job 1, as the pages read them. */
static void test_gaps_stacks(struct db *db)
{
	struct rep_gaps g;
	struct flame_stack *v;
	size_t n;
	int ra, rb, sorted = 1;
	double sa = 0, sb = 0;

	rep_gaps_load(db, 1, "udp_rr_500", &g);
	ok(g.runs[0] == 12 && g.runs[1] == 12 && g.recorded[0] == 12 && g.recorded[1] == 12,
	   "12 runs per side, every one with its monitors' statuses");
	ok(g.n == 1 && g.v[0].side == 'B' && !strcmp(g.v[0].monitor, "bpftrace") && g.v[0].runs == 12 &&
	   !strcmp(g.v[0].status, "unavailable") && g.v[0].reason && strstr(g.v[0].reason, "is not traceable"),
	   "one gap: bpftrace on the 12 runs of B, with the agent's reason");
	rep_gaps_free(&g);
	rep_gaps_load(db, 1, "udp_tx_dummy_iouring", &g);
	ok(g.n == 1 && g.v[0].side == 'A' && !strcmp(g.v[0].monitor, "perf-stat") && g.v[0].runs == 1,
	   "perf-stat missed one run of A");
	rep_gaps_free(&g);

	ok(rep_stacks_load(db, 1, "udp_tx_dummy_iouring", &v, &n, &ra, &rb) == 0 && ra == 12 && rb == 12,
	   "stacks of 12 profiled runs per side");
	for (size_t i = 0; i < n; i++) {
		sa += v[i].a;
		sb += v[i].b;
		if (i && strcmp(v[i - 1].stack, v[i].stack) >= 0)
			sorted = 0;
	}
	ok(n == 16 && sorted, "16 distinct stacks (10 of A, 11 of B, 5 shared), sorted, one entry each (%zu)", n);
	ok(fabs(sa - 1) < 1e-9 && fabs(sb - 1) < 1e-9, "each side's shares add up to 1 (%.12f, %.12f)", sa, sb);
	{
		struct buf svg = BUF_INIT;
		struct strvec gone = STRVEC_INIT;
		struct flame_opts o = { "t<i>", "A<b>", "B&", 0, 0 };
		size_t drawn = flame_svg(&svg, v, n, &o, &gone);

		ok(drawn > 20 && o.height > 100, "flame graph drawn: %zu frames, %d px high", drawn, o.height);
		ok(strstr(svg.buf, "t&lt;i&gt;") && strstr(svg.buf, "(A&lt;b&gt;)") && !strstr(svg.buf, "<i>"),
		   "title and labels escaped");
		ok(gone.n == 1 && starts_with(gone.v[0], "ksoftirqd/0 (A 68."), "the frame B lost entirely: %s",
		   gone.n ? gone.v[0] : "none");
		buf_release(&svg);
		strvec_clear(&gone);
	}
	rep_stacks_free(v, n);
	{
		struct flame_stack one[] = { { (char *)"x;y", 1, 0 } };
		struct buf svg = BUF_INIT;
		struct flame_opts o = { NULL, NULL, NULL, 0, 0 };

		ok(flame_svg(&svg, one, 1, &o, NULL) == 0 && strstr(svg.buf, "no data: B has no profiled samples"),
		   "no B samples: an SVG that says so");
		buf_release(&svg);
	}
	ok(rep_stacks_load(db, 2, "udp_rr_500", &v, &n, &ra, &rb) == 0 && n == 0 && !ra && !rb, "no stacks, no error");
	rep_stacks_free(v, n);
}

/* The answer line of klab compare and the mail, and the phrase saying what measured it. */
static void test_answer(struct db *db)
{
	struct compare_result res;
	const struct compare_row *h;
	struct buf b = BUF_INIT;

	ok(compare_load(db, 1, 0, &res) == 1, "job 1's comparisons load");
	h = compare_headline_row(&res, "udp_rr_500");
	ok(h && !strcmp(h->metric, "tps"), "the headline of udp_rr_500 is tps");
	compare_fmt_measured_by(&b, h);
	is_str(b.buf, "measured in real time (wall-clock rates, per-CPU time)", "what measured it");
	buf_reset(&b);
	compare_fmt_answer(&b, &res, h);
	is_str(b.buf, "tps CHANGED (better) +4.94% [95% CI +3.12%, +6.79%], measured in real time (wall-clock rates, "
		      "per-CPU time); claim on cpu_us_per_op (-15.0%, CPU time: no run counted cycles): consistent with the claim",
	       "the answer line: a claim on cycles checked on CPU time, and it says so");
	ok(compare_headline_row(&res, "nope") == NULL, "no headline for a workload without rows");
	compare_result_free(&res);
	ok(compare_load(db, 2, 0, &res) == 1, "the A/A job's comparison loads");
	buf_reset(&b);
	compare_fmt_answer(&b, &res, compare_headline_row(&res, "udp_rr_500"));
	ok(ends_with(b.buf, "; no claim checked") && starts_with(b.buf, "tps EQUIVALENT +0.20%"), "%s", b.buf);
	compare_result_free(&res);
	buf_release(&b);
}

static int exists(const char *dir, const char *name)
{
	char *p = xasprintf("%s/%s", dir, name);
	int ok = file_exists(p);

	free(p);
	return ok;
}

/*
 * Job 1 on a machine without a PMU (as this lab's VM): every run's monitor
 * "pmu" unavailable with the agent's reason. The page and the mail say why
 * there is no cycles_per_op, and that the claim on cycles was checked on
 * CPU time.
 */
static void test_no_pmu(struct db *db, const char *out, const char *mailpath)
{
	struct buf page = BUF_INIT, mail = BUF_INIT;
	char *p = xasprintf("%s/job-1.html", out);
	FILE *f;

	ok(db_exec(db, "INSERT INTO run_monitors (run_id, monitor, status, reason) SELECT id, 'pmu', 'unavailable', "
		       "'no hardware PMU: /sys/bus/event_source/devices has no cpu, cpu_core, cpu_atom or armv8_* "
		       "event source (it has breakpoint software), so perf counts software events only' "
		       "FROM runs WHERE job_id = 1") == 0, "job 1's runs had no PMU");
	ok(db_exec(db, "UPDATE boots SET sysinfo = '{\"pmu\":{\"present\":false,\"usable\":false,\"hybrid\":false,"
		       "\"perf_event_paranoid\":2,\"reason\":\"no hardware PMU: a test VM\"},' || substr(sysinfo, 2) "
		       "WHERE job_id = 1 AND sysinfo IS NOT NULL") == 0, "its DUT's sysinfo says it has no PMU");
	ok(report_job(db, out, 1, NULL) == 0 && buf_read_file(&page, p) == 0, "job 1's page again");
	ok(strstr(page.buf, "<dt>hardware counters</dt><dd>none: no hardware PMU: a test VM</dd>") != NULL,
	   "the setup facts say the machine has no PMU, and why");
	ok(strstr(page.buf, "<strong>Hardware counters (pmu: cycles_per_op, ipc, the cache and branch misses per "
			    "operation)</strong> were unavailable on 12 of 12 runs of") &&
	   strstr(page.buf, "<q>no hardware PMU: /sys/bus/event_source/devices has no cpu"),
	   "the page says there are no hardware counters, and why");
	ok(strstr(page.buf, "claim on cpu_us_per_op (-15.0%, CPU time: no run counted cycles)") &&
	   strstr(page.buf, "(a claim on cycles, checked on CPU time: no run counted cycles)"),
	   "the answer and the KPI table say what the claim on cycles was checked on");
	f = fopen(mailpath, "w");
	ok(f && report_mail(db, 1, f, NULL) == 0, "the mail again");
	if (f)
		fclose(f);
	ok(buf_read_file(&mail, mailpath) == 0 &&
	   strstr(mail.buf, "  udp_rr_500: pmu unavailable on 12 of 12 runs of A: no hardware PMU: ") &&
	   strstr(mail.buf, "\nPMU:          none: no hardware PMU: a test VM\n") &&
	   strstr(mail.buf, "      a claim on cycles, checked on cpu_us_per_op: CPU time: no run counted cycles\n") &&
	   !strstr(mail.buf, "not checked\n      a claim on cycles"),
	   "the mail says why, and what the claim was checked on");
	buf_release(&page);
	buf_release(&mail);
	free(p);
}

/*
 * A figure of klab's cache model in job 1: the KPI table, the mail and
 * klab compare's JSON label it "modeled (klab cache model: ...)" with the
 * sizes and latencies the runs recorded, or say that they were not.
 */
static void test_modeled(struct db *db, const char *out, const char *mailpath)
{
	static const char *const model = "l1d 32K/8-way, l2 1024K/16-way per vCPU, llc 8192K/16-way shared, 64 B "
					 "lines, LRU; latencies l2 14, llc 40, memory 200, coherence 100 cycles";
	struct compare_result res;
	struct buf page = BUF_INIT, mail = BUF_INIT, t = BUF_INIT, sql = BUF_INIT;
	char *p = xasprintf("%s/job-1.html", out);
	FILE *f;

	ok(db_exec(db, "INSERT INTO comparisons (job_id, label_a, label_b, workload, metric, unit, better, n_a, n_b, "
		       "mean_a, mean_b, cov_a, cov_b, change_pct, ci_lo, ci_hi, p_welch, p_holm, p_mwu, verdict, claim, "
		       "created) VALUES (1, '6.1.192-klab-base', '6.1.192-klab-patched', 'udp_rr_500', "
		       "'model_llc_miss_per_op', 'modeled miss', 'lower', 4, 4, 2.0, 1.5, 1.1, 0.9, -25, -30, -20, "
		       "1e-5, NULL, 0.0286, 'CHANGED', NULL, 1764662000)") == 0, "a modeled row in job 1");
	ok(compare_load(db, 1, 0, &res) == 1 && res.cache_model == NULL, "no run recorded the model's text");
	for (size_t i = 0; i < res.n_rows; i++)
		if (!strcmp(res.rows[i].metric, "model_llc_miss_per_op"))
			compare_fmt_modeled(&t, &res, &res.rows[i]);
	is_str(t.buf, "modeled (klab cache model: sizes and latencies not recorded)", "labelled all the same");
	buf_reset(&t);
	ok(compare_fmt_modeled(&t, &res, compare_headline_row(&res, "udp_rr_500")) == 0 && !t.len,
	   "a measured row is not");
	compare_result_free(&res);
	buf_addf(&sql, "UPDATE runs SET result = '{\"schema_version\":1,\"spec\":{\"nic\":\"eth1\"},"
		       "\"cache_model\":{\"window\":3,\"model\":\"%s\"}}' WHERE job_id = 1 AND workload = 'udp_rr_500'",
		 model);
	ok(db_exec(db, sql.buf) == 0, "the runs carry the model's sizes and latencies");
	ok(report_job(db, out, 1, NULL) == 0 && buf_read_file(&page, p) == 0, "job 1's page again");
	buf_addf(&t, "<code>model_llc_miss_per_op</code> <span class=\"muted\">modeled miss</span><br>"
		     "<span class=\"modeled muted\">modeled (klab cache model: %s)</span>", model);
	ok(strstr(page.buf, t.buf) != NULL, "the KPI table labels the row with the model");
	f = fopen(mailpath, "w");
	ok(f && report_mail(db, 1, f, NULL) == 0, "the mail again");
	if (f)
		fclose(f);
	buf_reset(&t);
	buf_addf(&t, "udp_rr_500.model_llc_miss_per_op (modeled miss), modeled (klab cache model: %s)\n", model);
	ok(buf_read_file(&mail, mailpath) == 0 && strstr(mail.buf, t.buf), "and the mail");
	buf_release(&page);
	buf_release(&mail);
	buf_release(&t);
	buf_release(&sql);
	free(p);
}

int main(void)
{
	struct buf sql = BUF_INIT, mail = BUF_INIT;
	const char *scratch = tap_scratch_dir();
	char *dbpath = tap_db_path("r.db"), *out = xasprintf("%s/out", scratch);
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
	/* the fixture gives its ids; PostgreSQL's id sequences then start after them, as sqlite's rowids do */
	if (db_is_server(db))
		db_exec(db, "DO $$ DECLARE t record; BEGIN FOR t IN SELECT table_name FROM information_schema.columns "
			"WHERE table_schema = current_schema() AND column_name = 'id' AND is_identity = 'YES' LOOP "
			"EXECUTE format('SELECT setval(pg_get_serial_sequence(%L, ''id''), "
			"(SELECT COALESCE(max(id), 0) + 1 FROM %I), false)', t.table_name, t.table_name); "
			"END LOOP; END $$;");
	test_data(db);
	test_gaps_stacks(db);
	test_answer(db);

	ok(report_job(db, out, 1, NULL) == 0, "report_job renders job 1");
	ok(exists(out, "job-1.html") && exists(out, "index.html") && exists(out, "style.css"),
	   "job page, index and style sheet written");
	ok(!exists(out, "job-2.html"), "no other job page");
	ok(exists(out, "history-udp_rr_500--tps.html"), "history page written");
	ok(report_job(db, out, 999, NULL) < 0, "an unknown job fails");
	{
		struct buf why = BUF_INIT;

		ok(report_job(db, out, 999, &why) < 0, "... and with a why");
		is_str(why.buf, "cannot make the page of job 999 (the report logs why)",
		       "the run's first failure is kept for the job's report step");
		ok(report_job(db, out, 1, &why) == 0 && !why.len, "a run that succeeds leaves it empty");
		buf_release(&why);
	}

	{
		struct report_opts o = { 1, 0, NULL };
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
	ok(strstr(mail.buf, "p=<0.0001 (Holm <0.0001)") != NULL, "p values in the one format");
	ok(strstr(mail.buf, "NIC eth1 (idpf, 32 TX / 32 RX queues)") != NULL, "the NIC from the data side");
	f = fopen(mailpath, "w");
	ok(f && report_mail(db, 3, f, NULL) < 0, "no mail report without comparisons");
	if (f)
		fclose(f);
	test_no_pmu(db, out, mailpath);
	test_modeled(db, out, mailpath);

	db_close(db);
	buf_release(&sql);
	buf_release(&mail);
	free(dbpath);
	free(out);
	free(fixture);
	free(mailpath);
	return done_testing();
}
