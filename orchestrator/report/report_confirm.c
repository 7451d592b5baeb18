/* report_confirm.c: what became of a nightly's change (its confirmation, its bisection), in words, for the job page, the mail and `klab job show`. */
#include <string.h>

#include "buf.h"
#include "report/report.h"
#include "store/bisections.h"

struct text_ctx {
	struct buf *out;
};

static void outcome_text(const struct confirmation_outcome *c, void *data)
{
	struct buf *out = ((struct text_ctx *)data)->out;
	const char *st = c->state;

	if (c->has_cp_job)
		buf_addf(out, "change point at job %lld, ", (long long)c->cp_job);
	if (!strcmp(st, "pending")) {
		buf_addf(out, "not reported yet: confirmation job %lld measures it again", (long long)c->confirm_job);
	} else {
		buf_addf(out, "%s by job %lld (%s", st, (long long)c->confirm_job, c->confirm_verdict);
		if (c->has_change)
			buf_addf(out, " %+.2f%%", c->confirm_change);
		buf_addstr(out, ")");
		if (!strcmp(st, "not confirmed"))
			buf_addstr(out, ": kept, not reported");
	}
	if (c->has_bisection) {
		buf_addf(out, "; bisection %lld %s", (long long)c->bisection_id, c->bisection_state);
		if (c->first_bad)
			buf_addf(out, ": first bad commit %.12s", c->first_bad);
	} else if (c->error) {
		buf_addf(out, "; no bisection: %s", c->error);
	}
}

int confirm_text(struct db *db, int64_t job, const char *workload, const char *metric, struct buf *out)
{
	struct text_ctx x = { out };

	return confirmation_outcome_get(db, job, workload, metric, outcome_text, &x) > 0;
}
