/* progress.c: the progress line of long work (progress.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "progress.h"
#include "util.h"

double progress_eta_s(long done, long total, double elapsed_s)
{
	if (total <= 0 || done <= 0 || elapsed_s < 0)
		return -1;
	if (done >= total)
		return 0;
	return elapsed_s * (double)(total - done) / (double)done;
}

double progress_eta_items(const double *expected, size_t n, size_t pos, double cur_s)
{
	double sum = 0, mean, left = 0;
	size_t known = 0;

	for (size_t i = 0; i < n; i++)
		if (expected[i] >= 0) {
			sum += expected[i];
			known++;
		}
	if (!known || pos >= n)
		return known && pos >= n ? 0 : -1;
	mean = sum / (double)known;
	for (size_t i = pos; i < n; i++) {
		double e = expected[i] >= 0 ? expected[i] : mean;

		if (i == pos)
			e = e > cur_s ? e - cur_s : 0;
		left += e;
	}
	return left;
}

void progress_fmt_duration(char *out, size_t n, double s)
{
	long t;

	if (s < 0 || !isfinite(s)) {
		snprintf(out, n, "?");
		return;
	}
	t = (long)(s + 0.5);
	if (t < 60)
		snprintf(out, n, "%lds", t);
	else if (t < 3600)
		snprintf(out, n, "%ldm%02lds", t / 60, t % 60);
	else
		snprintf(out, n, "%ldh%02ldm", t / 3600, (t % 3600) / 60);
}

void progress_format(struct buf *b, const struct progress *p, double elapsed_s)
{
	long e = (long)elapsed_s;
	char eta[32];

	buf_addf(b, "[%s] ", p->label);
	if (p->total > 0) {
		long pct = p->done >= p->total ? 100 : (long)(100.0 * (double)p->done / (double)p->total);

		buf_addf(b, "%ld/%s%ld %s %ld%%", p->done,
			 p->kind == PROGRESS_ABOUT ? "~" : p->kind == PROGRESS_AT_MOST ? "<=" : "", p->total, p->unit, pct);
	} else {
		buf_addf(b, "%ld %s", p->done, p->unit);
	}
	buf_addf(b, " %02ld:%02ld", e / 60, e % 60);
	if (p->total > 0) {
		double left = progress_eta_s(p->done, p->total, elapsed_s);

		if (p->done >= p->total && p->kind == PROGRESS_ABOUT)
			buf_addstr(b, " ETA past the estimate");
		else {
			progress_fmt_duration(eta, sizeof(eta), left);
			buf_addf(b, " ETA %s", eta);
		}
	}
}

void progress_start(struct progress *p, const char *label, const char *unit, long total, int kind, FILE *out)
{
	const char *iv = getenv("KLAB_PROGRESS_S");
	long v;

	memset(p, 0, sizeof(*p));
	snprintf(p->label, sizeof(p->label), "%s", label);
	p->unit = unit;
	p->total = total;
	p->kind = kind;
	p->out = out;
	p->tty = isatty(fileno(out));
	p->interval_ms = iv && parse_long(iv, 1, 3600, &v) == 0 ? v * 1000 : 5000;
	p->t0 = now_ms();
	/* the first plain line after a whole interval, not at once */
	p->last = p->t0;
}

static void print_line(struct progress *p, int64_t t, int last, const char *word)
{
	struct buf b = BUF_INIT;

	progress_format(&b, p, (double)(t - p->t0) / 1000.0);
	if (word && *word)
		buf_addf(&b, " %s", word);
	if (p->tty)
		fprintf(p->out, "\r\033[K%s%s", b.buf, last ? "\n" : "");
	else
		fprintf(p->out, "%s\n", b.buf);
	fflush(p->out);
	p->shown = p->tty && !last;
	p->last = t;
	buf_release(&b);
}

void progress_update(struct progress *p, long done)
{
	int64_t t = now_ms();

	p->done = done;
	if (t - p->last >= (p->tty ? 250 : p->interval_ms))
		print_line(p, t, 0, NULL);
}

void progress_end(struct progress *p, const char *word)
{
	print_line(p, now_ms(), 1, word);
}
