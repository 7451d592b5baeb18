/* report_observe.c: what each monitor cost a workload (the monitor-cost table) and the label of what observation runs show, for the pages and the mail. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "compare/compare.h"
#include "compare/monitor_cost.h"
#include "report/html.h"
#include "report/report_observe.h"
#include "store/result.h"
#include "util.h"

static const char *const rate_metrics[] = { "tps", "tx_pps", "rx_pps" };

size_t rep_monitor_costs(struct db *db, int64_t job, const char *wl, const struct compare_row *head,
			 struct mc_row *rows, size_t max, const char **per_op)
{
	const char *clock = head ? head->clock : NULL;
	double threshold = head && head->st.threshold_pct > 0 ? head->st.threshold_pct : 0;
	size_t n = 0;

	if (!clock && compare_clock_of_runs(db, job, &clock))
		clock = COMPARE_CLOCK_REAL;
	if (threshold <= 0)
		threshold = compare_default_threshold(clock);
	*per_op = !strcmp(clock, COMPARE_CLOCK_ICOUNT) ? "insn_per_op" : "cpu_us_per_op";
	for (size_t i = 0; i < ARRAY_SIZE(rate_metrics) && !n; i++) {
		struct run_cost *runs;
		size_t nr, have = 0;

		if (head && head->metric && strcmp(head->metric, rate_metrics[i]) &&
		    (!strcmp(head->metric, "tps") || !strcmp(head->metric, "tx_pps") || !strcmp(head->metric, "rx_pps")))
			continue;	/* the headline is a rate: that one */
		if (result_cost_runs(db, job, wl, rate_metrics[i], *per_op, &runs, &nr))
			return 0;
		for (size_t k = 0; k < nr; k++)
			have += isfinite(runs[k].rate);
		if (have)
			n = monitor_cost_table(runs, nr, 0 /* no warm-up among them */, 1, threshold, rows, max);
		run_costs_free(runs, nr);
	}
	return n;
}

/* "+3573 insn/op (+115.97%), time per op +116.0% [95% CI ...]", the parts that were measured, or "-". */
static void cost_words(struct buf *b, const struct mc_side *s, const char *per_op)
{
	const char *unit = !strcmp(per_op, "insn_per_op") ? "insn/op" : "CPU us/op";
	size_t len = b->len;

	if (!s->boots) {
		buf_addstr(b, "not measured");
		return;
	}
	if (isfinite(s->per_op))
		buf_addf(b, "%+.*f %s (%+.2f%%)", !strcmp(per_op, "insn_per_op") ? 0 : 3, s->per_op, unit,
			 s->per_op_pct);
	if (isfinite(s->rate_pct)) {
		buf_addf(b, "%stime per op %+.4f%%", b->len > len ? ", " : "", s->rate_pct);
		if (isfinite(s->rate_ci))
			buf_addf(b, " [95%% CI %+.4f%%, %+.4f%%]", s->rate_pct - s->rate_ci, s->rate_pct + s->rate_ci);
	}
	if (b->len == len)
		buf_addstr(b, "-");
}

void rep_monitor_cost_line(struct buf *b, const struct mc_row *row, const char *per_op)
{
	int bare = !strcmp(row->monitor, "bare");

	buf_addstr(b, bare ? "the measurement runs' own monitors (against none)" : row->monitor);
	buf_addstr(b, ": ");
	cost_words(b, &row->a, per_op);
	buf_addstr(b, " on A, ");
	cost_words(b, &row->b, per_op);
	buf_addstr(b, " on B");
	if (row->differs)
		buf_addstr(b, "; DIFFERS between the sides by more than the verdict threshold");
	buf_addstr(b, bare ? "; in every measurement run" : "; observation only, in no verdict");
}

void rep_monitor_cost_section(struct db *db, int64_t job, const char *wl, const struct compare_row *head,
			      struct buf *h)
{
	struct mc_row rows[16];
	const char *per_op;
	size_t n = rep_monitor_costs(db, job, wl, head, rows, ARRAY_SIZE(rows), &per_op);

	buf_addstr(h, "<h3>Monitor cost</h3>\n");
	if (!n) {
		buf_addstr(h, "<p class=\"note\">No observation run measured a monitor's cost for this workload "
			      "(it lists no monitor, or the job ran before measurement and observation runs were apart: "
			      "then its probes and samplers ran in its measured runs).</p>\n");
		return;
	}
	buf_addstr(h, "<p class=\"note\">What each monitor adds to an operation, from the observation runs of the "
		      "first boot of each side against the measurement runs of the same boot. Verdicts read "
		      "measurement runs only: they carry only the cpu monitor (/proc/stat read at the window's "
		      "edges), whose own cost is the row against a run with no monitor. A monitor whose cost "
		      "differs between the sides by more than the verdict threshold is flagged: in a measured "
		      "run it would have moved the comparison.</p>\n");
	buf_addstr(h, "<table class=\"cost\">\n<tr><th>monitor</th><th>A</th><th>B</th><th></th></tr>\n");
	for (size_t i = 0; i < n; i++) {
		struct buf a = BUF_INIT, b = BUF_INIT;
		int bare = !strcmp(rows[i].monitor, "bare");

		cost_words(&a, &rows[i].a, per_op);
		cost_words(&b, &rows[i].b, per_op);
		buf_addf(h, "<tr%s><td>", rows[i].differs ? " class=\"differs\"" : "");
		html_escape(h, bare ? "cpu, in every measurement run (against none)" : rows[i].monitor);
		buf_addstr(h, "</td><td>");
		html_escape(h, a.buf);
		buf_addstr(h, "</td><td>");
		html_escape(h, b.buf);
		buf_addstr(h, "</td><td>");
		buf_addstr(h, rows[i].differs ? "<strong>differs between the sides</strong>"
			       : bare ? "in every measurement run" : "observation only");
		buf_addstr(h, "</td></tr>\n");
		buf_release(&a);
		buf_release(&b);
	}
	buf_addstr(h, "</table>\n");
}
