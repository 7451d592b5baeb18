/* parse.c: parsers of the monitors' raw output; pure functions, fed recorded fixtures by the unit tests. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "log.h"
#include "parse.h"
#include "strvec.h"
#include "util.h"

/*
 * Walks text line by line. Each line is copied into a NUL-terminated
 * string (lines are short; the copy makes strtod and friends safe on input
 * that is not terminated), without its '\n' and any '\r'.
 */
struct lines {
	const char *p, *end;
	char *line;
	size_t cap;
	int no;
};

static void lines_init(struct lines *l, const char *text, size_t len)
{
	l->p = text;
	l->end = text + len;
	l->line = NULL;
	l->cap = 0;
	l->no = 0;
}

static int lines_next(struct lines *l)
{
	const char *nl;
	size_t n;

	if (l->p >= l->end)
		return 0;
	nl = memchr(l->p, '\n', l->end - l->p);
	n = nl ? (size_t)(nl - l->p) : (size_t)(l->end - l->p);
	if (n + 1 > l->cap) {
		l->cap = n + 64;
		l->line = xrealloc(l->line, l->cap);
	}
	memcpy(l->line, l->p, n);
	l->line[n] = 0;
	/* an embedded NUL ends the line early: that's what strtod would see anyway */
	while (n && l->line[n - 1] == '\r')
		l->line[--n] = 0;
	l->p = nl ? nl + 1 : l->end;
	l->no++;
	return 1;
}

static void lines_release(struct lines *l)
{
	free(l->line);
	l->line = NULL;
}

static int blank(const char *s)
{
	while (*s && isspace((unsigned char)*s))
		s++;
	return !*s;
}

static const char *skip_ws(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* --- counters ---------------------------------------------------------------- */

void counters_add(struct counters *c, const char *name, int64_t value)
{
	if (c->n == c->alloc) {
		c->alloc = c->alloc ? 2 * c->alloc : 32;
		c->v = xrealloc(c->v, c->alloc * sizeof(*c->v));
	}
	c->v[c->n].name = xstrdup(name);
	c->v[c->n].value = value;
	c->n++;
}

const struct counter *counters_find(const struct counters *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (!strcmp(c->v[i].name, name))
			return &c->v[i];
	return NULL;
}

void counters_free(struct counters *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		free(c->v[i].name);
	free(c->v);
	c->v = NULL;
	c->n = c->alloc = 0;
}

void counters_delta(const struct counters *before, const struct counters *after,
		    struct counters *out)
{
	size_t i;

	for (i = 0; i < after->n; i++) {
		const struct counter *b = counters_find(before, after->v[i].name);
		if (b)
			counters_add(out, after->v[i].name,
				     (int64_t)((uint64_t)after->v[i].value - (uint64_t)b->value));
	}
}

/* --- /proc/stat ------------------------------------------------------------------ */

int parse_proc_stat(const char *text, size_t len, const char *what, struct proc_stat *out)
{
	struct lines l;
	size_t alloc = 0;
	int ret = -1;

	out->cpus = NULL;
	out->n = 0;
	lines_init(&l, text, len);
	while (lines_next(&l)) {
		struct cpu_times ct;
		const char *s = l.line;
		char *end;
		int i;

		if (!starts_with(s, "cpu"))
			continue;
		s += 3;
		if (*s == ' ') {
			ct.cpu = -1;
		} else {
			long v;
			errno = 0;
			v = strtol(s, &end, 10);
			if (end == s || errno || v < 0 || v > 1 << 20 || *end != ' ') {
				error("%s:%d: malformed cpu line", what, l.no);
				goto out;
			}
			ct.cpu = (int)v;
			s = end;
		}
		for (i = 0; i < CT_N; i++) {
			unsigned long long v;
			s = skip_ws(s);
			if (!*s) {
				ct.t[i] = 0;
				continue;
			}
			if (!isdigit((unsigned char)*s)) {
				error("%s:%d: malformed cpu line: column %d is not a number", what, l.no, i + 1);
				goto out;
			}
			errno = 0;
			v = strtoull(s, &end, 10);
			if (errno) {
				error("%s:%d: malformed cpu line: column %d out of range", what, l.no, i + 1);
				goto out;
			}
			ct.t[i] = v;
			s = end;
		}
		if (i < 4) {
			error("%s:%d: cpu line with fewer than 4 columns", what, l.no);
			goto out;
		}
		if (out->n == alloc) {
			alloc = alloc ? 2 * alloc : 16;
			out->cpus = xrealloc(out->cpus, alloc * sizeof(*out->cpus));
		}
		out->cpus[out->n++] = ct;
	}
	if (!out->n) {
		error("%s: no cpu lines", what);
		goto out;
	}
	ret = 0;
out:
	lines_release(&l);
	if (ret)
		proc_stat_free(out);
	return ret;
}

void proc_stat_free(struct proc_stat *ps)
{
	free(ps->cpus);
	ps->cpus = NULL;
	ps->n = 0;
}

const struct cpu_times *proc_stat_cpu(const struct proc_stat *ps, int cpu)
{
	size_t i;

	for (i = 0; i < ps->n; i++)
		if (ps->cpus[i].cpu == cpu)
			return &ps->cpus[i];
	return NULL;
}

static uint64_t d(const struct cpu_times *a, const struct cpu_times *b, int i)
{
	return b->t[i] > a->t[i] ? b->t[i] - a->t[i] : 0;
}

uint64_t cpu_total_jiffies(const struct cpu_times *a, const struct cpu_times *b)
{
	/* guest and guest_nice are already inside user and nice */
	return d(a, b, CT_USER) + d(a, b, CT_NICE) + d(a, b, CT_SYSTEM) + d(a, b, CT_IDLE) +
		d(a, b, CT_IOWAIT) + d(a, b, CT_IRQ) + d(a, b, CT_SOFTIRQ) + d(a, b, CT_STEAL);
}

uint64_t cpu_busy_jiffies(const struct cpu_times *a, const struct cpu_times *b)
{
	return cpu_total_jiffies(a, b) - d(a, b, CT_IDLE) - d(a, b, CT_IOWAIT);
}

void cpu_pct_between(const struct cpu_times *a, const struct cpu_times *b, struct cpu_pct *out)
{
	uint64_t tot = cpu_total_jiffies(a, b);
	double k;

	memset(out, 0, sizeof(*out));
	out->cpu = b->cpu;
	if (!tot) {
		out->idle = 100.0;
		return;
	}
	k = 100.0 / (double)tot;
	out->usr = k * d(a, b, CT_USER);
	out->nice = k * d(a, b, CT_NICE);
	out->sys = k * d(a, b, CT_SYSTEM);
	out->iowait = k * d(a, b, CT_IOWAIT);
	out->irq = k * d(a, b, CT_IRQ);
	out->soft = k * d(a, b, CT_SOFTIRQ);
	out->steal = k * d(a, b, CT_STEAL);
	out->idle = k * d(a, b, CT_IDLE);
}

/* --- mpstat ----------------------------------------------------------------------- */

enum { MP_USR, MP_NICE, MP_SYS, MP_IOWAIT, MP_IRQ, MP_SOFT, MP_STEAL, MP_GUEST, MP_GNICE, MP_IDLE, MP_N };
static const char *const mp_names[MP_N] = {
	"%usr", "%nice", "%sys", "%iowait", "%irq", "%soft", "%steal", "%guest", "%gnice", "%idle"
};

int parse_mpstat(const char *text, size_t len, const char *what,
		 struct cpu_pct **rows, size_t *n)
{
	struct lines l;
	struct cpu_pct *all = NULL;
	int *is_avg = NULL;
	size_t n_all = 0, alloc = 0, i, k;
	int col[MP_N], cpu_col = -1, have_header = 0, any_avg = 0, ret = -1;

	*rows = NULL;
	*n = 0;
	lines_init(&l, text, len);
	while (lines_next(&l)) {
		char *words[64];
		int nw = 0, j;
		char *save = NULL, *w;

		for (w = strtok_r(l.line, " \t", &save); w && nw < 64; w = strtok_r(NULL, " \t", &save))
			words[nw++] = w;
		if (!nw)
			continue;
		/* header: find the CPU column and the percentage columns */
		for (j = 0; j < nw; j++)
			if (!strcmp(words[j], "CPU"))
				break;
		if (j < nw && nw > j + 1 && words[j + 1][0] == '%') {
			int m;
			cpu_col = j;
			for (m = 0; m < MP_N; m++) {
				int c;
				col[m] = -1;
				for (c = j + 1; c < nw; c++)
					if (!strcmp(words[c], mp_names[m]))
						col[m] = c;
			}
			if (col[MP_IDLE] < 0 || col[MP_USR] < 0 || col[MP_SYS] < 0) {
				error("%s:%d: mpstat header without %%usr, %%sys or %%idle", what, l.no);
				goto out;
			}
			have_header = 1;
			continue;
		}
		if (!have_header || nw <= cpu_col)
			continue;
		{
			struct cpu_pct r;
			double v[MP_N];
			int m;
			long cpu;

			if (!strcmp(words[cpu_col], "all")) {
				cpu = -1;
			} else if (parse_long(words[cpu_col], 0, 1 << 20, &cpu)) {
				continue;	/* "Linux 6.1 ..." banner, interrupt tables and the like */
			}
			if (nw < cpu_col + 2) {
				error("%s:%d: truncated mpstat line", what, l.no);
				goto out;
			}
			for (m = 0; m < MP_N; m++) {
				v[m] = 0;
				if (col[m] < 0)
					continue;
				if (col[m] >= nw) {
					error("%s:%d: truncated mpstat line: no %s column", what, l.no, mp_names[m]);
					goto out;
				}
				if (parse_double(words[col[m]], &v[m]) || v[m] < 0 || v[m] > 100.01) {
					error("%s:%d: malformed %s value '%s'", what, l.no, mp_names[m], words[col[m]]);
					goto out;
				}
			}
			r.cpu = (int)cpu;
			r.usr = v[MP_USR] + v[MP_GUEST];
			r.nice = v[MP_NICE] + v[MP_GNICE];
			r.sys = v[MP_SYS];
			r.iowait = v[MP_IOWAIT];
			r.irq = v[MP_IRQ];
			r.soft = v[MP_SOFT];
			r.steal = v[MP_STEAL];
			r.idle = v[MP_IDLE];
			if (n_all == alloc) {
				alloc = alloc ? 2 * alloc : 16;
				all = xrealloc(all, alloc * sizeof(*all));
				is_avg = xrealloc(is_avg, alloc * sizeof(*is_avg));
			}
			is_avg[n_all] = starts_with(words[0], "Average");
			any_avg |= is_avg[n_all];
			all[n_all++] = r;
		}
	}
	if (!n_all) {
		error("%s: no mpstat data lines%s", what, have_header ? "" : " (no header line)");
		goto out;
	}
	*rows = xcalloc(n_all, sizeof(**rows));
	for (i = k = 0; i < n_all; i++)
		if (!any_avg || is_avg[i])
			(*rows)[k++] = all[i];
	*n = k;
	ret = 0;
out:
	lines_release(&l);
	free(all);
	free(is_avg);
	return ret;
}

/* --- perf report ---------------------------------------------------------------- */

void prof_rows_free(struct prof_row *rows, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(rows[i].comm);
		free(rows[i].dso);
		free(rows[i].symbol);
	}
	free(rows);
}

static char *trimmed(const char *s, size_t n)
{
	while (n && isspace((unsigned char)*s))
		s++, n--;
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	return xstrndup(s, n);
}

/* Find " [x] " (the symbol marker) in s; returns its '[' or NULL. */
static const char *find_marker(const char *s)
{
	const char *p;

	for (p = s; (p = strchr(p, '[')); p++)
		if (p > s && p[-1] == ' ' && p[1] && strchr("k.guH", p[1]) && p[2] == ']' &&
		    (p[3] == ' ' || !p[3]))
			return p;
	return NULL;
}

int parse_perf_report(const char *text, size_t len, const char *what,
		      struct prof_row **rows, size_t *n)
{
	struct lines l;
	size_t alloc = 0;
	int have_samples = 0, ret = -1;
	/* column start offsets from the ruler: overhead, comm, dso, symbol */
	int colstart[4] = { -1, -1, -1, -1 };

	*rows = NULL;
	*n = 0;
	lines_init(&l, text, len);
	while (lines_next(&l)) {
		const char *s = l.line, *pct_end, *marker;
		char *end;
		double pct;
		struct prof_row r;

		if (s[0] == '#') {
			if (starts_with(s, "# Samples:"))
				have_samples = 1;
			if (starts_with(s, "# ...")) {
				/* "# ........  .......  ....  ...." : each run of dots is a column */
				int c = 0, i = 1;
				while (s[i] && c < 4) {
					while (s[i] == ' ')
						i++;
					if (s[i] != '.')
						break;
					colstart[c++] = i;
					while (s[i] == '.')
						i++;
				}
				if (c < 4)
					colstart[0] = -1;
			}
			continue;
		}
		s = skip_ws(s);
		if (!isdigit((unsigned char)*s))
			continue;	/* call graph lines, blank lines */
		errno = 0;
		pct = strtod(s, &end);
		if (end == s || *end != '%')
			continue;	/* "|--45.00%--" never starts with a digit, but be safe */
		pct_end = end + 1;
		if (*pct_end != ' ' && *pct_end != '\t') {
			error("%s:%d: malformed profile row", what, l.no);
			goto out;
		}
		if (!isfinite(pct) || pct < 0 || pct > 100.0001) {
			error("%s:%d: profile percentage out of range", what, l.no);
			goto out;
		}
		marker = find_marker(pct_end);
		if (!marker) {
			error("%s:%d: profile row without a [k]/[.] symbol marker (truncated?)", what, l.no);
			goto out;
		}
		memset(&r, 0, sizeof(r));
		r.percent = pct;
		r.kind = marker[1];
		r.symbol = trimmed(marker + 3, strlen(marker + 3));
		if (colstart[0] >= 0 && (size_t)colstart[3] == (size_t)(marker - l.line) &&
		    colstart[1] < colstart[2]) {
			r.comm = trimmed(l.line + colstart[1], colstart[2] - colstart[1]);
			r.dso = trimmed(l.line + colstart[2], colstart[3] - colstart[2]);
		} else {
			/* no (matching) ruler: first word is the comm, the rest up to the marker the dso */
			const char *c = skip_ws(pct_end), *ce = c;
			while (ce < marker && *ce != ' ' && *ce != '\t')
				ce++;
			r.comm = xstrndup(c, ce - c);
			r.dso = trimmed(ce, marker - ce);
		}
		if (!*r.comm || !*r.symbol) {
			int nosym = !*r.symbol;
			free(r.comm);
			free(r.dso);
			free(r.symbol);
			error("%s:%d: profile row without %s", what, l.no, nosym ? "a symbol" : "a command");
			goto out;
		}
		if (*n == alloc) {
			alloc = alloc ? 2 * alloc : 64;
			*rows = xrealloc(*rows, alloc * sizeof(**rows));
		}
		(*rows)[(*n)++] = r;
	}
	if (!*n && !have_samples) {
		error("%s: no profile rows", what);
		goto out;
	}
	ret = 0;
out:
	lines_release(&l);
	if (ret) {
		prof_rows_free(*rows, *n);
		*rows = NULL;
		*n = 0;
	}
	return ret;
}

/* --- perf script: folded call stacks ---------------------------------------------- */

void folded_stacks_free(struct folded_stack *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].stack);
	free(v);
}

/*
 * The stacks of a profile are counted in an open-addressing hash table
 * (FNV-1a, linear probing, kept at most half full): a profile of a busy
 * 64-CPU machine holds a million samples but only thousands of distinct
 * stacks, so sorting one string per sample would cost far more memory.
 */
struct fold_table {
	struct folded_stack *slot;
	size_t cap, n;
};

static uint64_t fnv1a(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

static void fold_add(struct fold_table *t, const char *s, size_t n, uint64_t count);

static void fold_grow(struct fold_table *t)
{
	struct fold_table g = { NULL, t->cap ? 2 * t->cap : 256, 0 };

	g.slot = xcalloc(g.cap, sizeof(*g.slot));
	for (size_t i = 0; i < t->cap; i++)
		if (t->slot[i].stack) {
			size_t j = fnv1a(t->slot[i].stack, strlen(t->slot[i].stack)) & (g.cap - 1);

			while (g.slot[j].stack)
				j = (j + 1) & (g.cap - 1);
			g.slot[j] = t->slot[i];
			g.n++;
		}
	free(t->slot);
	*t = g;
}

static void fold_add(struct fold_table *t, const char *s, size_t n, uint64_t count)
{
	size_t j;

	if (2 * (t->n + 1) > t->cap)
		fold_grow(t);
	for (j = fnv1a(s, n) & (t->cap - 1); t->slot[j].stack; j = (j + 1) & (t->cap - 1))
		if (strlen(t->slot[j].stack) == n && !memcmp(t->slot[j].stack, s, n)) {
			t->slot[j].count += count;
			return;
		}
	t->slot[j].stack = xstrndup(s, n);
	t->slot[j].count = count;
	t->n++;
}

static int folded_cmp(const void *x, const void *y)
{
	const struct folded_stack *a = x, *b = y;

	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return strcmp(a->stack, b->stack);
}

/* The table's stacks as a sorted array (the table is emptied). */
static void fold_take(struct fold_table *t, struct folded_stack **out, size_t *n)
{
	size_t k = 0;

	*out = xcalloc(t->n + 1, sizeof(**out));
	for (size_t i = 0; i < t->cap; i++)
		if (t->slot[i].stack)
			(*out)[k++] = t->slot[i];
	*n = k;
	qsort(*out, k, sizeof(**out), folded_cmp);
	free(t->slot);
	t->slot = NULL;
	t->cap = t->n = 0;
}

/* A frame name as it goes into a folded stack: no ';' (the separator), no control characters. */
static void frame_add(struct buf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		buf_addch(b, c == ';' ? ':' : c < 0x20 || c == 0x7f ? ' ' : c);
	}
}

/*
 * One frame line, "\t<hex address> <symbol> (<dso>)", into the frame's
 * name: the symbol without a "+0x1f" offset, or for an unknown symbol
 * "[" the dso's file name "]" ("[libc.so.6]"), or "[unknown]". 0, or -1
 * when the line is not a frame line.
 */
static int frame_name(const char *s, struct buf *name)
{
	const char *sym, *end, *dso = NULL, *dso_end = NULL, *p;

	s = skip_ws(s);
	if (!isxdigit((unsigned char)*s))
		return -1;
	while (isxdigit((unsigned char)*s))
		s++;
	if (*s != ' ' && *s != '\t')
		return -1;
	sym = skip_ws(s);
	end = sym + strlen(sym);
	while (end > sym && isspace((unsigned char)end[-1]))
		end--;
	/* the dso is the last " (...)" at the end of the line */
	if (end > sym && end[-1] == ')') {
		for (p = end - 1; p > sym; p--)
			if (p[0] == '(' && p[-1] == ' ')
				break;
		if (p > sym) {
			dso = p + 1;
			dso_end = end - 1;
			end = p - 1;
		}
	}
	while (end > sym && isspace((unsigned char)end[-1]))
		end--;
	/* "+0x1f" offset (perf script's default fields print it) */
	for (p = end; p > sym && isxdigit((unsigned char)p[-1]); p--)
		;
	if (p - sym >= 3 && p < end && p[-1] == 'x' && p[-2] == '0' && p[-3] == '+')
		end = p - 3;
	if (end > sym && !(end - sym == 9 && !memcmp(sym, "[unknown]", 9))) {
		frame_add(name, sym, (size_t)(end - sym));
	} else if (dso && dso_end > dso && !(dso_end - dso == 9 && !memcmp(dso, "[unknown]", 9))) {
		const char *base = dso_end;

		while (base > dso && base[-1] != '/')
			base--;
		if (*base == '[') {	/* [kernel.kallsyms], [vdso] */
			frame_add(name, base, (size_t)(dso_end - base));
		} else {
			buf_addch(name, '[');
			frame_add(name, base, (size_t)(dso_end - base));
			buf_addch(name, ']');
		}
	} else {
		buf_addstr(name, "[unknown]");
	}
	return 0;
}

/* A finished sample: its frames (leaf first, as perf prints them) become "comm;root;...;leaf". */
static void sample_end(struct fold_table *t, struct buf *stack, const char *comm, struct strvec *frames,
		       uint64_t *samples)
{
	size_t i;

	buf_reset(stack);
	frame_add(stack, comm, strlen(comm));
	if (!stack->len)
		buf_addstr(stack, "[unknown]");
	for (i = frames->n; i > 0; i--) {
		if (stack->len + 1 + strlen(frames->v[i - 1]) > FOLDED_STACK_MAX - 12) {
			buf_addstr(stack, ";[truncated]");
			break;
		}
		buf_addch(stack, ';');
		buf_addstr(stack, frames->v[i - 1]);
	}
	fold_add(t, stack->buf, stack->len, 1);
	(*samples)++;
	strvec_clear(frames);
}

int parse_perf_script(const char *text, size_t len, const char *what, struct folded_stack **out, size_t *n,
		      uint64_t *samples)
{
	struct fold_table t = { NULL, 0, 0 };
	struct strvec frames = STRVEC_INIT;
	struct buf name = BUF_INIT, stack = BUF_INIT;
	struct lines l;
	char *comm = NULL;
	int ret = -1;

	*out = NULL;
	*n = 0;
	*samples = 0;
	lines_init(&l, text, len);
	while (lines_next(&l)) {
		const char *s = l.line;

		if (l.p == l.end && text[len - 1] != '\n')
			break;	/* a line the text cuts off: its sample is left out */
		if (blank(s)) {
			if (comm)
				sample_end(&t, &stack, comm, &frames, samples);
			free(comm);
			comm = NULL;
			continue;
		}
		if (*s == ' ' || *s == '\t') {
			if (!comm) {
				error("%s:%d: call stack frame outside a sample", what, l.no);
				goto out;
			}
			buf_reset(&name);
			if (frame_name(s, &name) < 0) {
				error("%s:%d: malformed call stack frame (expected 'ADDRESS SYMBOL (DSO)')", what, l.no);
				goto out;
			}
			if (frames.n < FOLDED_DEPTH_MAX)
				strvec_push(&frames, name.buf);
			continue;
		}
		/* a sample's first line: the comm (perf script -F comm,ip,sym,dso) */
		if (comm)
			sample_end(&t, &stack, comm, &frames, samples);
		free(comm);
		comm = trimmed(s, strlen(s));
	}
	/* the last sample counts when the text was not cut inside it */
	if (comm && text[len - 1] == '\n')
		sample_end(&t, &stack, comm, &frames, samples);
	fold_take(&t, out, n);
	ret = 0;
out:
	if (ret) {
		for (size_t i = 0; i < t.cap; i++)
			free(t.slot[i].stack);
		free(t.slot);
		*samples = 0;
	}
	free(comm);
	strvec_clear(&frames);
	buf_release(&name);
	buf_release(&stack);
	lines_release(&l);
	return ret;
}

void folded_stacks_cap(struct folded_stack **v, size_t *n, size_t max)
{
	struct fold_table t = { NULL, 0, 0 };
	size_t i;

	if (*n <= max)
		return;
	for (i = 0; i < *n; i++) {
		const char *s = (*v)[i].stack;

		if (i < max) {
			fold_add(&t, s, strlen(s), (*v)[i].count);
		} else {
			/* the rest, per command: "comm;[other stacks]" */
			const char *semi = strchr(s, ';');
			struct buf b = BUF_INIT;

			buf_add(&b, s, semi ? (size_t)(semi - s) : strlen(s));
			buf_addstr(&b, ";[other stacks]");
			fold_add(&t, b.buf, b.len, (*v)[i].count);
			buf_release(&b);
		}
	}
	folded_stacks_free(*v, *n);
	fold_take(&t, v, n);
}

/* --- perf stat -x, ---------------------------------------------------------------- */

void perf_stat_rows_free(struct perf_stat_row *rows, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(rows[i].event);
		free(rows[i].unit);
	}
	free(rows);
}

int parse_perf_stat(const char *text, size_t len, const char *what,
		    struct perf_stat_row **rows, size_t *n)
{
	struct lines l;
	size_t alloc = 0;
	int ret = -1;

	*rows = NULL;
	*n = 0;
	lines_init(&l, text, len);
	while (lines_next(&l)) {
		char *f[10], *end;
		int nf = 0, cpu = -1;
		char *p = l.line;
		struct perf_stat_row r;

		if (blank(p) || p[0] == '#')
			continue;
		/* split on ',' keeping empty fields */
		f[nf++] = p;
		while ((p = strchr(p, ',')) && nf < 10) {
			*p++ = 0;
			f[nf++] = p;
		}
		/* perf stat -A: each line starts with its CPU, "CPU3" */
		if (!strncmp(f[0], "CPU", 3) && isdigit((unsigned char)f[0][3])) {
			long c = strtol(f[0] + 3, &end, 10);
			if (*end || c >= 4096) {
				error("%s:%d: malformed perf stat CPU '%s'", what, l.no, f[0]);
				goto out;
			}
			cpu = (int)c;
			memmove(f, f + 1, --nf * sizeof(*f));
		}
		if (nf < 3) {
			if (*n == 0 && !strchr(l.line, ','))
				continue;	/* a warning perf printed before the table */
			error("%s:%d: perf stat line with %d field(s), wanted at least 3", what, l.no, nf);
			goto out;
		}
		if (!*f[2]) {
			error("%s:%d: perf stat line without an event name", what, l.no);
			goto out;
		}
		memset(&r, 0, sizeof(r));
		r.cpu = cpu;
		r.supported = 1;
		r.counted = 1;
		r.running_pct = 100.0;
		if (!strcmp(f[0], "<not supported>")) {
			r.supported = 0;
			r.counted = 0;
		} else if (!strcmp(f[0], "<not counted>")) {
			r.counted = 0;
		} else if (parse_double(f[0], &r.value) || !isfinite(r.value)) {
			error("%s:%d: malformed perf stat value '%s'", what, l.no, f[0]);
			goto out;
		}
		if (nf > 4 && *f[4] && (parse_double(f[4], &r.running_pct) || !(r.running_pct >= 0) ||
					 r.running_pct > 100.005)) {
			error("%s:%d: malformed perf stat running share '%s'", what, l.no, f[4]);
			goto out;
		}
		r.event = xstrdup(f[2]);
		r.unit = xstrdup(f[1]);
		if (*n == alloc) {
			alloc = alloc ? 2 * alloc : 16;
			*rows = xrealloc(*rows, alloc * sizeof(**rows));
		}
		(*rows)[(*n)++] = r;
	}
	if (!*n) {
		error("%s: no perf stat counters", what);
		goto out;
	}
	ret = 0;
out:
	lines_release(&l);
	if (ret) {
		perf_stat_rows_free(*rows, *n);
		*rows = NULL;
		*n = 0;
	}
	return ret;
}

const char *const perf_hw_events[PERF_HW_N] = {
	"cycles", "instructions", "cache-misses", "LLC-load-misses", "L1-dcache-load-misses", "branch-misses",
};

/*
 * The generic name of an event as perf prints it: "cycles" of "cycles",
 * "cpu_core/cycles/" (a hybrid x86's two PMUs), "armv8_pmuv3_0/cycles/"
 * or "cycles:u"; "cpu-cycles" is perf's other name for cycles. Into OUT,
 * at most N bytes; 0, or -1 when it does not fit.
 */
static int perf_generic_name(const char *event, char *out, size_t n)
{
	const char *p = event, *e;
	size_t len;

	if ((e = strchr(p, '/'))) {
		p = e + 1;
		e = strchr(p, '/');
		len = e ? (size_t)(e - p) : strlen(p);
	} else {
		len = strcspn(p, ":");
	}
	if (len >= n)
		return -1;
	memcpy(out, p, len);
	out[len] = 0;
	if (!strcmp(out, "cpu-cycles"))
		strcpy(out, "cycles");
	return 0;
}

/* Whether CPU is in LIST ("1", "0-3,8"; a list cpu_list_ok() accepts). */
static int cpu_in_list(const char *list, int cpu)
{
	const char *s = list;

	while (*s) {
		char *end;
		long a = strtol(s, &end, 10), b = a;

		if (end == s)
			return 0;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		if (cpu >= a && cpu <= b)
			return 1;
		if (*end != ',')
			return 0;
		s = end + 1;
	}
	return 0;
}

void perf_hw_sum(const struct perf_stat_row *rows, size_t n, const char *cpus,
		 struct perf_hw_count out[PERF_HW_N])
{
	size_t i;
	int k;

	for (k = 0; k < PERF_HW_N; k++) {
		memset(&out[k], 0, sizeof(out[k]));
		out[k].min_running_pct = 100;
	}
	for (i = 0; i < n; i++) {
		const struct perf_stat_row *r = &rows[i];
		struct perf_hw_count *c = NULL;
		char name[64];

		if (cpus && (r->cpu < 0 || !cpu_in_list(cpus, r->cpu)))
			continue;
		if (perf_generic_name(r->event, name, sizeof(name)))
			continue;
		for (k = 0; k < PERF_HW_N && !c; k++)
			if (!strcmp(name, perf_hw_events[k]))
				c = &out[k];
		if (!c)
			continue;
		if (!r->counted) {
			/* a part of the sum is missing: the sum is not a count, whatever the other parts say */
			if (!c->missing) {
				if (r->cpu >= 0)
					c->missing = xasprintf("%s on CPU %d %s", r->event, r->cpu,
							       r->supported ? "<not counted>" : "<not supported>");
				else
					c->missing = xasprintf("%s %s", r->event,
							       r->supported ? "<not counted>" : "<not supported>");
			}
			continue;
		}
		c->value += r->value;
		c->rows++;
		if (r->running_pct < c->min_running_pct)
			c->min_running_pct = r->running_pct;
	}
}

/* The PMU of "cpu_atom/cycles/" ("cpu_atom", its length), or 0 for an event without one. */
static size_t perf_pmu_len(const char *event)
{
	const char *e = strchr(event, '/');

	return e ? (size_t)(e - event) : 0;
}

/* Whether PMU (LEN bytes) counted a row on CPU: the CPU is one of the PMU's. */
static int perf_pmu_owns(const struct perf_stat_row *rows, size_t n, int cpu, const char *pmu, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (rows[i].cpu == cpu && rows[i].counted && perf_pmu_len(rows[i].event) == len &&
		    !strncmp(rows[i].event, pmu, len))
			return 1;
	return 0;
}

/* Whether a PMU other than PMU (LEN bytes) counted a row on CPU. */
static int perf_other_pmu_owns(const struct perf_stat_row *rows, size_t n, int cpu, const char *pmu, size_t len)
{
	for (size_t i = 0; i < n; i++) {
		size_t l = perf_pmu_len(rows[i].event);

		if (rows[i].cpu == cpu && rows[i].counted && l && (l != len || strncmp(rows[i].event, pmu, len)))
			return 1;
	}
	return 0;
}

size_t perf_stat_drop_foreign(struct perf_stat_row *rows, size_t *n)
{
	size_t i, k = 0, dropped = 0;
	char *keep = xcalloc(*n ? *n : 1, 1);

	/* decide on the whole table first: a dropped row must not change what the next one sees */
	for (i = 0; i < *n; i++) {
		const struct perf_stat_row *r = &rows[i];
		size_t len = perf_pmu_len(r->event);

		keep[i] = r->counted || r->cpu < 0 || !len || perf_pmu_owns(rows, *n, r->cpu, r->event, len) ||
			  !perf_other_pmu_owns(rows, *n, r->cpu, r->event, len);
	}
	for (i = 0; i < *n; i++) {
		if (keep[i]) {
			rows[k++] = rows[i];
			continue;
		}
		free(rows[i].event);
		free(rows[i].unit);
		dropped++;
	}
	*n = k;
	free(keep);
	return dropped;
}

void perf_hw_release(struct perf_hw_count c[PERF_HW_N])
{
	int k;

	for (k = 0; k < PERF_HW_N; k++) {
		free(c[k].missing);
		c[k].missing = NULL;
	}
}

/* --- bpftrace ---------------------------------------------------------------------- */

int parse_bpf_number(const char *s, size_t len, double *out)
{
	char buf[64];
	char *end;
	double v, mul = 1;

	while (len && isspace((unsigned char)*s))
		s++, len--;
	while (len && isspace((unsigned char)s[len - 1]))
		len--;
	if (!len || len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = 0;
	switch (buf[len - 1]) {
	case 'K': mul = 1024.0; break;
	case 'M': mul = 1024.0 * 1024; break;
	case 'G': mul = 1024.0 * 1024 * 1024; break;
	case 'T': mul = 1024.0 * 1024 * 1024 * 1024; break;
	case 'P': mul = 1024.0 * 1024 * 1024 * 1024 * 1024; break;
	}
	if (mul != 1)
		buf[--len] = 0;
	if (!len || !(isdigit((unsigned char)buf[0]) || (buf[0] == '-' && isdigit((unsigned char)buf[1]))))
		return -1;
	errno = 0;
	v = strtod(buf, &end);
	if (*end || errno || !isfinite(v))
		return -1;
	*out = v * mul;
	return 0;
}

void bpf_output_free(struct bpf_output *o)
{
	size_t i;

	for (i = 0; i < o->n_hists; i++) {
		free(o->hists[i].name);
		free(o->hists[i].b);
	}
	free(o->hists);
	for (i = 0; i < o->n_values; i++)
		free(o->values[i].name);
	free(o->values);
	free(o->error);
	memset(o, 0, sizeof(*o));
}

static void bpf_add_value(struct bpf_output *o, const char *name, double v)
{
	o->values = xrealloc(o->values, (o->n_values + 1) * sizeof(*o->values));
	o->values[o->n_values].name = xstrdup(name);
	o->values[o->n_values].value = v;
	o->n_values++;
}

/*
 * One bucket line: "[lo, hi)   count |@@@ |", "[N]  count |...|",
 * "(..., hi)  count |...|", "[lo, ...)  count |...|". 1 parsed, 0 not a
 * bucket line at all, -1 malformed.
 */
static int bpf_bucket_line(const char *s, struct bpf_bucket *b)
{
	const char *close, *comma, *p;
	char *end;
	unsigned long long cnt;

	s = skip_ws(s);
	if (*s != '[' && *s != '(')
		return 0;
	close = strpbrk(s + 1, ")]");
	if (!close)
		return -1;
	comma = memchr(s, ',', close - s);
	if (*s == '(') {	/* (..., hi) */
		if (!comma || !starts_with(s + 1, "...") || *close != ')')
			return -1;
		b->lo = -BPF_OPEN;
		if (parse_bpf_number(comma + 1, close - comma - 1, &b->hi))
			return -1;
	} else if (!comma) {	/* [N] */
		if (*close != ']' || parse_bpf_number(s + 1, close - s - 1, &b->lo))
			return -1;
		b->hi = b->lo + 1;
	} else {
		if (*close != ')' || parse_bpf_number(s + 1, comma - s - 1, &b->lo))
			return -1;
		p = skip_ws(comma + 1);
		if (starts_with(p, "..."))
			b->hi = BPF_OPEN;
		else if (parse_bpf_number(comma + 1, close - comma - 1, &b->hi) || b->hi < b->lo)
			return -1;
	}
	p = skip_ws(close + 1);
	if (!isdigit((unsigned char)*p))
		return -1;
	errno = 0;
	cnt = strtoull(p, &end, 10);
	if (errno)
		return -1;
	p = skip_ws(end);
	/* the bar must be there and closed, else the line was cut */
	if (*p != '|' || !strchr(p + 1, '|'))
		return -1;
	b->count = cnt;
	return 1;
}

int parse_bpftrace(const char *text, size_t len, const char *what, struct bpf_output *out)
{
	struct lines l;
	struct bpf_hist *cur = NULL;
	size_t cur_alloc = 0;
	int ret = -1;

	memset(out, 0, sizeof(*out));
	lines_init(&l, text, len);
	while (lines_next(&l)) {
		const char *s = l.line;
		const char *colon;

		if (cur) {
			struct bpf_bucket b;
			int r = bpf_bucket_line(s, &b);
			if (r < 0) {
				error("%s:%d: malformed histogram line in '%s'", what, l.no, cur->name);
				goto out;
			}
			if (r > 0) {
				if (cur->n == cur_alloc) {
					cur_alloc = cur_alloc ? 2 * cur_alloc : 16;
					cur->b = xrealloc(cur->b, cur_alloc * sizeof(*cur->b));
				}
				cur->b[cur->n++] = b;
				continue;
			}
			cur = NULL;	/* a blank line or the next map ends the histogram */
		}
		if (s[0] != '@' && strstr(s, "ERROR: ") && !strstr(s, "RLIMIT_MEMLOCK")) {
			/* "ERROR: msg" or "stdin:1:51-60: ERROR: msg" */
			if (!out->error)
				out->error = xstrdup(starts_with(s, "ERROR:") ? skip_ws(s + 6) : s);
			continue;
		}
		if (s[0] != '@')
			continue;
		/* the name ends at the ':' after any [key] */
		{
			const char *k = s + 1;
			int depth = 0;
			for (; *k; k++) {
				if (*k == '[')
					depth++;
				else if (*k == ']')
					depth--;
				else if (*k == ':' && depth <= 0)
					break;
			}
			if (!*k) {
				error("%s:%d: map line without ':' (truncated?)", what, l.no);
				goto out;
			}
			colon = k;
		}
		{
			char *name = xstrndup(s, colon - s);
			const char *v = skip_ws(colon + 1);
			double val;
			char *end;

			if (!*v) {	/* a histogram follows */
				out->hists = xrealloc(out->hists, (out->n_hists + 1) * sizeof(*out->hists));
				cur = &out->hists[out->n_hists++];
				cur->name = name;
				cur->b = NULL;
				cur->n = 0;
				cur_alloc = 0;
				continue;
			}
			if (starts_with(v, "count ")) {	/* stats(): count N, average A, total T */
				double c, a, t;
				char *tmp;
				if (sscanf(v, "count %lf, average %lf, total %lf", &c, &a, &t) != 3) {
					free(name);
					error("%s:%d: malformed stats() line", what, l.no);
					goto out;
				}
				tmp = xasprintf("%s.count", name);
				bpf_add_value(out, tmp, c);
				free(tmp);
				tmp = xasprintf("%s.average", name);
				bpf_add_value(out, tmp, a);
				free(tmp);
				tmp = xasprintf("%s.total", name);
				bpf_add_value(out, tmp, t);
				free(tmp);
				free(name);
				continue;
			}
			errno = 0;
			val = strtod(v, &end);
			if (end != v && !errno && isfinite(val) && blank(end))
				bpf_add_value(out, name, val);
			/* else: a string or tuple value, not a number: ignored */
			free(name);
		}
	}
	ret = 0;
out:
	lines_release(&l);
	if (ret)
		bpf_output_free(out);
	return ret;
}

/* --- snmp, softnet, ethtool -------------------------------------------------------- */

int parse_snmp(const char *text, size_t len, const char *what, struct counters *out)
{
	struct lines l;
	struct strvec_like { char **v; size_t n; } hdr = { NULL, 0 };
	char *hdr_proto = NULL;
	int hdr_line = 0, ret = -1;
	size_t i;

	lines_init(&l, text, len);
	while (lines_next(&l)) {
		char *colon = strchr(l.line, ':');
		char *save = NULL, *w;
		char *proto;

		if (blank(l.line))
			continue;
		if (!colon || colon == l.line) {
			error("%s:%d: line without 'Proto:'", what, l.no);
			goto out;
		}
		*colon = 0;
		proto = l.line;
		if (!hdr_proto) {
			hdr_proto = xstrdup(proto);
			hdr_line = l.no;
			for (w = strtok_r(colon + 1, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
				hdr.v = xrealloc(hdr.v, (hdr.n + 1) * sizeof(*hdr.v));
				hdr.v[hdr.n++] = xstrdup(w);
			}
			continue;
		}
		if (strcmp(proto, hdr_proto)) {
			error("%s:%d: values for '%s' follow the header of '%s' (line %d)",
			      what, l.no, proto, hdr_proto, hdr_line);
			goto out;
		}
		i = 0;
		for (w = strtok_r(colon + 1, " \t", &save); w; w = strtok_r(NULL, " \t", &save), i++) {
			long long v;
			char *end;
			char *name;
			if (i >= hdr.n) {
				error("%s:%d: more values than names for '%s'", what, l.no, proto);
				goto out;
			}
			errno = 0;
			v = strtoll(w, &end, 10);
			if (*end || errno) {
				error("%s:%d: malformed value '%s' of %s.%s", what, l.no, w, proto, hdr.v[i]);
				goto out;
			}
			name = xasprintf("%s.%s", proto, hdr.v[i]);
			counters_add(out, name, v);
			free(name);
		}
		if (i != hdr.n) {
			error("%s:%d: %zu values for %zu names of '%s' (truncated?)", what, l.no, i, hdr.n, proto);
			goto out;
		}
		for (i = 0; i < hdr.n; i++)
			free(hdr.v[i]);
		free(hdr.v);
		hdr.v = NULL;
		hdr.n = 0;
		free(hdr_proto);
		hdr_proto = NULL;
	}
	if (hdr_proto) {
		error("%s:%d: header of '%s' without values (truncated?)", what, hdr_line, hdr_proto);
		goto out;
	}
	ret = 0;
out:
	lines_release(&l);
	for (i = 0; i < hdr.n; i++)
		free(hdr.v[i]);
	free(hdr.v);
	free(hdr_proto);
	return ret;
}

int parse_softnet(const char *text, size_t len, const char *what, struct counters *out)
{
	static const struct { int col; const char *name; } cols[] = {
		{ 0, "softnet.processed" }, { 1, "softnet.dropped" }, { 2, "softnet.time_squeeze" },
		{ 9, "softnet.received_rps" }, { 10, "softnet.flow_limit_count" },
	};
	uint64_t sum[ARRAY_SIZE(cols)] = { 0 };
	int have[ARRAY_SIZE(cols)] = { 0 };
	struct lines l;
	int nlines = 0, ret = -1;
	size_t i;

	lines_init(&l, text, len);
	while (lines_next(&l)) {
		char *save = NULL, *w;
		int c = 0;

		if (blank(l.line))
			continue;
		for (w = strtok_r(l.line, " \t", &save); w; w = strtok_r(NULL, " \t", &save), c++) {
			char *end;
			unsigned long v;
			errno = 0;
			v = strtoul(w, &end, 16);
			if (*end || errno || !isxdigit((unsigned char)*w)) {
				error("%s:%d: malformed hex column %d '%s'", what, l.no, c + 1, w);
				goto out;
			}
			for (i = 0; i < ARRAY_SIZE(cols); i++)
				if (cols[i].col == c) {
					sum[i] += v;
					have[i] = 1;
				}
		}
		if (c < 3) {
			error("%s:%d: softnet line with %d column(s) (truncated?)", what, l.no, c);
			goto out;
		}
		nlines++;
	}
	if (!nlines) {
		error("%s: no softnet lines", what);
		goto out;
	}
	for (i = 0; i < ARRAY_SIZE(cols); i++)
		if (have[i])
			counters_add(out, cols[i].name, (int64_t)sum[i]);
	ret = 0;
out:
	lines_release(&l);
	return ret;
}

int parse_ethtool_stats(const char *text, size_t len, const char *what, struct counters *out)
{
	struct lines l;
	int ret = -1;

	lines_init(&l, text, len);
	while (lines_next(&l)) {
		const char *s = skip_ws(l.line);
		char *colon, *end, *name;
		long long v;

		if (!*s || (l.no == 1 && strstr(s, "statistics:")))
			continue;
		colon = strrchr(l.line, ':');
		if (!colon || colon < s) {
			error("%s:%d: statistics line without ':'", what, l.no);
			goto out;
		}
		errno = 0;
		v = strtoll(colon + 1, &end, 10);
		if (end == colon + 1 || errno || !blank(end)) {
			error("%s:%d: malformed counter value", what, l.no);
			goto out;
		}
		*colon = 0;
		name = xasprintf("ethtool.%s", s);
		counters_add(out, name, v);
		free(name);
	}
	ret = 0;
out:
	lines_release(&l);
	return ret;
}

int parse_ethtool_channels(const char *text, size_t len, const char *what, struct channels *out)
{
	struct lines l;
	int block = 0, seen = 0;	/* 1: maximums, 2: current */

	out->max_rx = out->max_tx = out->max_combined = -1;
	out->rx = out->tx = out->combined = -1;
	lines_init(&l, text, len);
	while (lines_next(&l)) {
		const char *s = l.line, *v;
		long *dst = NULL;
		long n;

		if (starts_with(s, "Pre-set maximums"))
			block = 1;
		else if (starts_with(s, "Current hardware settings"))
			block = 2, seen = 1;
		if (!block)
			continue;
		if ((v = skip_prefix(s, "RX:")))
			dst = block == 1 ? &out->max_rx : &out->rx;
		else if ((v = skip_prefix(s, "TX:")))
			dst = block == 1 ? &out->max_tx : &out->tx;
		else if ((v = skip_prefix(s, "Combined:")))
			dst = block == 1 ? &out->max_combined : &out->combined;
		if (!dst)
			continue;
		v = skip_ws(v);
		if (!strcmp(v, "n/a"))
			*dst = -1;
		else if (!parse_long(v, 0, 1 << 20, &n))
			*dst = n;
		else {
			/* V points into the line: say it before the lines go */
			error("%s:%d: malformed channel count '%s'", what, l.no, v);
			lines_release(&l);
			return -1;
		}
	}
	lines_release(&l);
	if (!seen)
		return error("%s: no 'Current hardware settings' block", what);
	return 0;
}
