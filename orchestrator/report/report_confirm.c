/* report_confirm.c: what became of a nightly's change (its confirmation, its bisection), in words, for the job page, the mail and `klab job show`. */
#include <string.h>

#include "buf.h"
#include "report/report.h"

int confirm_text(struct db *db, int64_t job, const char *workload, const char *metric, struct buf *out)
{
	struct db_stmt *q = db_prepare(db, "SELECT c.state, c.confirm_job, COALESCE(c.confirm_verdict, ''), "
				       "c.confirm_change, c.bisection_id, b.state, b.result, b.first_bad, c.error, c.cp_job "
				       "FROM confirmations c LEFT JOIN bisections b ON b.id = c.bisection_id "
				       "WHERE c.job_id = ? AND c.workload = ? AND c.metric = ?", "iss", job, workload, metric);
	int found = 0;

	if (q && db_step(q) == DB_ROW) {
		const char *st = db_col_text(q, 0);
		found = 1;
		if (!db_col_null(q, 9))
			buf_addf(out, "change point at job %lld, ", (long long)db_col_int64(q, 9));
		if (!strcmp(st, "pending")) {
			buf_addf(out, "not reported yet: confirmation job %lld measures it again", (long long)db_col_int64(q, 1));
		} else {
			buf_addf(out, "%s by job %lld (%s", st, (long long)db_col_int64(q, 1), db_col_text(q, 2));
			if (!db_col_null(q, 3))
				buf_addf(out, " %+.2f%%", db_col_double(q, 3));
			buf_addstr(out, ")");
			if (!strcmp(st, "not confirmed"))
				buf_addstr(out, ": kept, not reported");
		}
		if (!db_col_null(q, 4)) {
			buf_addf(out, "; bisection %lld %s", (long long)db_col_int64(q, 4), db_col_text(q, 5));
			if (db_col_text(q, 7))
				buf_addf(out, ": first bad commit %.12s", db_col_text(q, 7));
		} else if (db_col_text(q, 8)) {
			buf_addf(out, "; no bisection: %s", db_col_text(q, 8));
		}
	}
	db_finalize(q);
	return found;
}
