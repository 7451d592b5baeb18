/* mailreport.c: `klab report --format=mail JOB`, a plain-text report for a mailing list. */
#include <stdio.h>

#include "log.h"
#include "report.h"

int report_mail(sqlite3 *db, int64_t job_id, FILE *out, const struct report_mail_opts *opts)
{
	return error("klab report --format=mail: not implemented yet");
}
