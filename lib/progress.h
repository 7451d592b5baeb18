/* progress.h: the progress line of long work: done of total, elapsed time and an ETA, in place on a terminal, a plain line every few seconds otherwise. */
#ifndef KLAB_PROGRESS_H
#define KLAB_PROGRESS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "buf.h"

/*
 * A progress line. On a terminal (isatty of OUT) the line is rewritten in
 * place ("\r", cleared to the end) at most 4 times a second; elsewhere (a
 * log, CI) a plain line is printed every interval_ms (default 5 s, or
 * $KLAB_PROGRESS_S seconds) and once at the end, so a log shows the work
 * moving without one line per update.
 *
 *   struct progress p;
 *   progress_start(&p, "build net-next base", "objects", 3120, PROGRESS_ABOUT, stderr);
 *   ... progress_update(&p, n); ...
 *   progress_end(&p, "done");
 */
enum { PROGRESS_EXACT, PROGRESS_ABOUT, PROGRESS_AT_MOST };

struct progress {
	char label[96];
	const char *unit;	/* "objects", "MiB", "s": printed after done/total */
	long done, total;	/* total <= 0: not known (no ETA, only the count) */
	int kind;		/* how total is known: PROGRESS_EXACT, _ABOUT ("~3000"), _AT_MOST ("<=3000") */
	int64_t t0, last;	/* ms: start and last print */
	long interval_ms;	/* between plain lines (not a terminal) */
	int tty;		/* 1: the line is rewritten in place */
	int shown;		/* 1: a line in place is on the terminal */
	FILE *out;
	struct progress *below;	/* the line this one covers (lines nest: a boot's upload) */
};

/* Start a line for LABEL with TOTAL units of UNIT, known as KIND (PROGRESS_*). */
void progress_start(struct progress *p, const char *label, const char *unit, long total, int kind, FILE *out);
/* DONE units are done now: the line is printed when it is due. */
void progress_update(struct progress *p, long done);
/*
 * The last line (the count, the elapsed time and WORD, e.g. "done"), ended
 * by a newline; WORD NULL: no last line (a line in place is erased). The
 * line it covered shows again.
 */
void progress_end(struct progress *p, const char *word);
/*
 * Erase the line shown in place, before other output goes to the terminal
 * (job_print); it shows again at its next update. Lines are printed under
 * one lock, so this is safe against a clock line's thread.
 */
void progress_clear(void);

/*
 * A line that moves with the clock alone, for work that blocks without
 * telling how far it is (waiting for a boot, a workload's run): done is the
 * seconds since the start of EXPECTED_S (<= 0: not known; an estimate from
 * earlier runs, "~"), printed by a thread of its own while it is the top
 * line (an upload's line covers it) until progress_clock_stop().
 */
struct progress_clock {
	struct progress line;
	pthread_t thread;
	int running;
	volatile int stop;
};
void progress_clock_start(struct progress_clock *c, const char *label, double expected_s, FILE *out);
void progress_clock_stop(struct progress_clock *c);

/*
 * The math, apart so that it can be tested.
 *
 * progress_eta_s: seconds left when DONE of TOTAL took ELAPSED seconds at
 * the same rate; -1 when not known (nothing done yet, or no total), 0 when
 * done reached the total.
 */
double progress_eta_s(long done, long total, double elapsed_s);
/*
 * Seconds left of a list of N items (steps) whose expected durations are
 * EXPECTED (< 0: not known, counted as the mean of the known ones from POS
 * on), when item POS is running for CUR_S seconds: its remaining part
 * (never below 0) plus every later item. -1 when no item from POS on has a
 * known duration, 0 when POS is past the end.
 */
double progress_eta_items(const double *expected, size_t n, size_t pos, double cur_s);
/* A duration for a person: "42s", "3m05s", "1h02m" ("?" for < 0). */
void progress_fmt_duration(char *out, size_t n, double s);
/* The text of the line (no "\r", no newline) into B: "LABEL 1203/~3120 objects 38% 02:41 ETA 4m10s". */
void progress_format(struct buf *b, const struct progress *p, double elapsed_s);

#endif
