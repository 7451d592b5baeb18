/* tap.c: the TAP producer behind tap.h. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "util.h"
#include "tap.h"

static int tap_n, tap_failed;
static char *scratch;

static void vreport(int pass, const char *file, int line, const char *fmt, va_list ap)
{
	tap_n++;
	printf("%sok %d - ", pass ? "" : "not ", tap_n);
	vprintf(fmt, ap);
	printf("\n");
	if (!pass) {
		tap_failed++;
		printf("#   failed at %s:%d\n", file, line);
	}
	fflush(stdout);
}

int tap_ok(int cond, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(cond, file, line, fmt, ap);
	va_end(ap);
	return cond;
}

int tap_is_int(long long got, long long want, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	int pass = got == want;

	va_start(ap, fmt);
	vreport(pass, file, line, fmt, ap);
	va_end(ap);
	if (!pass)
		printf("#   got:  %lld\n#   want: %lld\n", got, want);
	return pass;
}

int tap_is_str(const char *got, const char *want, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	int pass = (got == NULL && want == NULL) ||
		   (got != NULL && want != NULL && strcmp(got, want) == 0);

	va_start(ap, fmt);
	vreport(pass, file, line, fmt, ap);
	va_end(ap);
	if (!pass)
		printf("#   got:  %s%s%s\n#   want: %s%s%s\n",
		       got ? "'" : "", got ? got : "NULL", got ? "'" : "",
		       want ? "'" : "", want ? want : "NULL", want ? "'" : "");
	return pass;
}

int tap_is_double(double got, double want, double tol, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	int pass = fabs(got - want) <= tol || (isnan(got) && isnan(want));

	va_start(ap, fmt);
	vreport(pass, file, line, fmt, ap);
	va_end(ap);
	if (!pass)
		printf("#   got:  %.10g\n#   want: %.10g (tolerance %g)\n", got, want, tol);
	return pass;
}

void tap_skip(const char *reason, const char *fmt, ...)
{
	va_list ap;

	tap_n++;
	printf("ok %d # skip ", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(" (%s)\n", reason);
	fflush(stdout);
}

void diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

int done_testing(void)
{
	printf("1..%d\n", tap_n);
	if (tap_failed)
		printf("# failed %d of %d\n", tap_failed, tap_n);
	else if (scratch)
		remove_tree(scratch);
	fflush(stdout);
	return tap_failed ? 1 : 0;
}

const char *tap_data_dir(void)
{
	const char *d = getenv("KLAB_TEST_DATA");

	return d && *d ? d : KLAB_SRCDIR "/tests/data";
}

const char *tap_scratch_dir(void)
{
	if (!scratch) {
		char tmpl[] = "/tmp/klab-unit-XXXXXX";
		char *d = mkdtemp(tmpl);

		if (!d)
			die_errno("cannot create a scratch folder");
		scratch = xstrdup(d);
	}
	return scratch;
}

char *tap_db_path(const char *file)
{
	const char *url = getenv("KLAB_TEST_DB");

	if (url && *url)
		return xstrdup(url);
	return xasprintf("%s/%s", tap_scratch_dir(), file);
}
