/* tap.h: a tiny TAP producer for the C unit tests (one binary per module). */
#ifndef KLAB_TAP_H
#define KLAB_TAP_H

#include "util.h"

/*
 * Usage:
 *	int main(void) {
 *		ok(1 + 1 == 2, "addition");
 *		is_int(f(), 3, "f returns 3");
 *		return done_testing();
 *	}
 * Prints "ok N - name" / "not ok N - name" with a diagnostic on failure, and
 * "1..N" at the end. done_testing() returns 1 if any test failed.
 */
int tap_ok(int cond, const char *file, int line, const char *fmt, ...) KLAB_PRINTF(4, 5);
int tap_is_int(long long got, long long want, const char *file, int line, const char *fmt, ...) KLAB_PRINTF(5, 6);
int tap_is_str(const char *got, const char *want, const char *file, int line, const char *fmt, ...) KLAB_PRINTF(5, 6);
int tap_is_double(double got, double want, double tol, const char *file, int line, const char *fmt, ...) KLAB_PRINTF(6, 7);
void tap_skip(const char *reason, const char *fmt, ...) KLAB_PRINTF(2, 3);
void diag(const char *fmt, ...) KLAB_PRINTF(1, 2);
int done_testing(void);
/* Path of a folder under tests/data/ (from $KLAB_TEST_DATA or the source tree). */
const char *tap_data_dir(void);
/* A fresh scratch folder for this test binary (removed at done_testing() unless it failed). */
const char *tap_scratch_dir(void);
/*
 * The database a test opens (a malloc'd string): $KLAB_TEST_DB when set (a
 * PostgreSQL URL: tests/t0011-db-pg.sh runs the database tests against a
 * fresh PostgreSQL database each), else FILE in the scratch folder.
 */
char *tap_db_path(const char *file);

#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
#define is_int(got, want, ...) tap_is_int((long long)(got), (long long)(want), __FILE__, __LINE__, __VA_ARGS__)
#define is_str(got, want, ...) tap_is_str((got), (want), __FILE__, __LINE__, __VA_ARGS__)
#define is_double(got, want, tol, ...) tap_is_double((got), (want), (tol), __FILE__, __LINE__, __VA_ARGS__)
#define skip(reason, ...) tap_skip((reason), __VA_ARGS__)

#endif
