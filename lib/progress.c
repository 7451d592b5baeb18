/* progress.c: the progress line of long work (progress.h). */
#include <math.h>
#include <signal.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
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

	/* the mean of the items still to do: the ones done may all be quick (skipped steps) */
	for (size_t i = pos; i < n; i++)
		if (expected[i] >= 0) {
			sum += expected[i];
			known++;
		}
	if (pos >= n)
		return 0;
	if (!known)
		return -1;
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
			/* of an upper bound (an incremental build), the ETA is one too */
			progress_fmt_duration(eta, sizeof(eta), left);
			buf_addf(b, " ETA %s%s", p->kind == PROGRESS_AT_MOST && left > 0 ? "<=" : "", eta);
		}
	}
}

/* Every line is printed under this lock; TOP is the line shown, the others wait below it. */
static pthread_mutex_t lines_lock = PTHREAD_MUTEX_INITIALIZER;
static struct progress *top;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/*
 * A process that forks while a clock line's thread runs (a job's server
 * child) must not inherit the lock held: it is taken around fork and
 * released on both sides; the child has no clock thread, and its lines
 * stay its own.
 */
static void fork_prepare(void)
{
	pthread_mutex_lock(&lines_lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&lines_lock);
}

static void fork_child(void)
{
	pthread_mutex_unlock(&lines_lock);
	top = NULL;
}

/* Once, at the first line: the fork handlers, and log.c clears the line before a message. */
static void register_atfork(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	log_set_before_stderr(progress_clear);
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
	pthread_once(&atfork_once, register_atfork);
	pthread_mutex_lock(&lines_lock);
	if (top && top->shown) {
		fprintf(top->out, "\r\033[K");
		fflush(top->out);
		top->shown = 0;
	}
	p->below = top;
	top = p;
	pthread_mutex_unlock(&lines_lock);
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

/* Print P when it is the top line and due (lines_lock held). */
static void update_locked(struct progress *p, long done)
{
	int64_t t = now_ms();

	p->done = done;
	if (top == p && t - p->last >= (p->tty ? 250 : p->interval_ms))
		print_line(p, t, 0, NULL);
}

void progress_update(struct progress *p, long done)
{
	pthread_mutex_lock(&lines_lock);
	update_locked(p, done);
	pthread_mutex_unlock(&lines_lock);
}

void progress_end(struct progress *p, const char *word)
{
	struct progress **at;

	pthread_mutex_lock(&lines_lock);
	if (word)
		print_line(p, now_ms(), 1, word);
	else if (p->shown)
		fprintf(p->out, "\r\033[K");
	fflush(p->out);
	p->shown = 0;
	/* off the stack, wherever it is in it */
	for (at = &top; *at && *at != p; at = &(*at)->below)
		;
	if (*at)
		*at = p->below;
	pthread_mutex_unlock(&lines_lock);
}

void progress_clear(void)
{
	pthread_mutex_lock(&lines_lock);
	if (top && top->shown) {
		fprintf(top->out, "\r\033[K");
		fflush(top->out);
		top->shown = 0;
		/* back at once at the next update */
		top->last = 0;
	}
	pthread_mutex_unlock(&lines_lock);
}

static void *clock_thread(void *arg)
{
	struct progress_clock *c = arg;
	const struct timespec tick = { 0, 100 * 1000 * 1000 };

	while (!c->stop) {
		nanosleep(&tick, NULL);
		pthread_mutex_lock(&lines_lock);
		update_locked(&c->line, (long)((now_ms() - c->line.t0) / 1000));
		pthread_mutex_unlock(&lines_lock);
	}
	return NULL;
}

void progress_clock_start(struct progress_clock *c, const char *label, double expected_s, FILE *out)
{
	sigset_t all, old;

	memset(c, 0, sizeof(*c));
	progress_start(&c->line, label, "s", expected_s > 0 ? (long)(expected_s + 0.5) : 0, PROGRESS_ABOUT, out);
	/* the thread takes no signals: the daemon's and the runner's handlers stay on the main thread */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	c->running = pthread_create(&c->thread, NULL, clock_thread, c) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void progress_clock_stop(struct progress_clock *c)
{
	if (c->running) {
		c->stop = 1;
		pthread_join(c->thread, NULL);
		c->running = 0;
	}
	progress_end(&c->line, NULL);
}
