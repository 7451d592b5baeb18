/* lib-progress.c: the ETA math of progress lines, the duration wording and the line's text. */
#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "progress.h"
#include "tap.h"

static int near(double a, double b)
{
	return a > b - 1e-9 && a < b + 1e-9;
}

static void test_eta(void)
{
	ok(near(progress_eta_s(250, 1000, 60), 180), "a quarter in 60 s: 180 s left");
	ok(near(progress_eta_s(1000, 1000, 60), 0), "done: nothing left");
	ok(near(progress_eta_s(1200, 1000, 60), 0), "past the total: nothing left, not negative");
	ok(progress_eta_s(0, 1000, 60) < 0, "nothing done yet: not known");
	ok(progress_eta_s(10, 0, 60) < 0, "no total: not known");
}

static void test_items(void)
{
	const double e[] = { 0, 20, -1, 30 };
	const double none[] = { 5, -1, -1 };

	/* item 1 runs for 5 s of its 20; item 2 unknown = mean of 20 and 30; item 3 30 */
	ok(near(progress_eta_items(e, 4, 1, 5), 15 + 25 + 30), "remaining part plus later items, mean for unknown");
	ok(near(progress_eta_items(e, 4, 1, 25), 0 + 25 + 30), "an item over its time counts 0, not negative");
	ok(near(progress_eta_items(e, 4, 3, 0), 30), "the last item");
	ok(near(progress_eta_items(e, 4, 4, 0), 0), "past the end: 0");
	ok(progress_eta_items(none, 3, 1, 0) < 0, "no known duration from pos on (a done one does not count): not known");
}

static void test_format(void)
{
	char d[32];
	struct progress p;
	struct buf b = BUF_INIT;

	progress_fmt_duration(d, sizeof(d), 42.4);
	is_str(d, "42s", "seconds");
	progress_fmt_duration(d, sizeof(d), 185);
	is_str(d, "3m05s", "minutes and seconds");
	progress_fmt_duration(d, sizeof(d), 3725);
	is_str(d, "1h02m", "hours and minutes");
	progress_fmt_duration(d, sizeof(d), -1);
	is_str(d, "?", "unknown");

	memset(&p, 0, sizeof(p));
	snprintf(p.label, sizeof(p.label), "build t base");
	p.unit = "objects";
	p.done = 250;
	p.total = 1000;
	p.kind = PROGRESS_ABOUT;
	progress_format(&b, &p, 61);
	is_str(b.buf, "[build t base] 250/~1000 objects 25% 01:01 ETA 3m03s", "estimated total");
	buf_reset(&b);
	p.done = 1100;
	progress_format(&b, &p, 200);
	is_str(b.buf, "[build t base] 1100/~1000 objects 100% 03:20 ETA past the estimate", "past an estimate");
	buf_reset(&b);
	p.kind = PROGRESS_AT_MOST;
	p.done = 10;
	progress_format(&b, &p, 4);
	is_str(b.buf, "[build t base] 10/<=1000 objects 1% 00:04 ETA <=6m36s", "an upper bound (an incremental build): the ETA is one too");
	buf_reset(&b);
	p.total = 0;
	p.done = 7;
	progress_format(&b, &p, 5);
	is_str(b.buf, "[build t base] 7 objects 00:05", "no total: count and time only");
	buf_release(&b);
}

int main(void)
{
	test_eta();
	test_items();
	test_format();
	return done_testing();
}
