/* claims.c: find performance claims and benchmark commands in commit messages. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "intake/claims.h"
#include "strvec.h"
#include "util.h"

/* A percentage expression in a sentence: "10%", "+5%", "10%-20%", "between 10% and 20%". */
struct pct {
	size_t start, end;	/* byte range in the sentence */
	double lo, hi;
	int sign;		/* '+', '-', '~' or 0 */
};

static int word_char(int c)
{
	return isalnum(c) || c == '_';
}

/* Case-insensitive search of a whole word (or phrase) in S: position or -1. */
static long find_word(const char *s, const char *w)
{
	size_t wl = strlen(w);

	for (const char *p = s; (p = strcasestr(p, w)); p++) {
		int before = p > s && word_char((unsigned char)p[-1]);
		int after = word_char((unsigned char)p[wl]);

		if (!before && !after)
			return p - s;
	}
	return -1;
}

/* Parse a number at S (no sign): length consumed, 0 if none. */
static size_t parse_num(const char *s, double *v)
{
	char *end;

	if (!isdigit((unsigned char)*s))
		return 0;
	*v = strtod(s, &end);
	return (size_t)(end - s);
}

static const char *skip_sp(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* A range joiner after the first value: "-", "–", "to", "and"; returns past it or NULL. */
static const char *skip_joiner(const char *p)
{
	p = skip_sp(p);
	if (*p == '-')
		return skip_sp(p + 1);
	if (!strncmp(p, "\xe2\x80\x93", 3))	/* en dash */
		return skip_sp(p + 3);
	if (!strncasecmp(p, "to ", 3))
		return skip_sp(p + 3);
	if (!strncasecmp(p, "and ", 4))
		return skip_sp(p + 4);
	return NULL;
}

static size_t find_pcts(const char *s, struct pct *out, size_t max)
{
	size_t n = 0;
	const char *p = s;

	while (*p && n < max) {
		double a, b;
		size_t l;
		const char *q, *j;

		if (!isdigit((unsigned char)*p) || (p > s && (word_char((unsigned char)p[-1]) || p[-1] == '.'))) {
			p++;
			continue;
		}
		l = parse_num(p, &a);
		q = p + l;
		if (*q == '%') {
			/* "X%" possibly followed by "-Y%", "to Y%", "and Y%" */
			const char *e = q + 1;

			j = skip_joiner(e);
			if (j && (l = parse_num(j, &b)) && j[l] == '%' && b >= a) {
				e = j + l + 1;
			} else {
				b = a;
			}
			out[n].start = p - s;
			out[n].end = e - s;
			out[n].lo = a;
			out[n].hi = b;
			out[n].sign = p > s && strchr("+-~", p[-1]) ? p[-1] : 0;
			if (out[n].sign)
				out[n].start--;
			n++;
			p = e;
			continue;
		}
		/* "X-Y%" */
		j = skip_joiner(q);
		if (j && j != q && (l = parse_num(j, &b)) && j[l] == '%' && b >= a &&
		    (*skip_sp(q) == '-' || !strncmp(skip_sp(q), "\xe2\x80\x93", 3))) {
			out[n].start = p - s;
			out[n].end = (j + l + 1) - s;
			out[n].lo = a;
			out[n].hi = b;
			out[n].sign = 0;
			n++;
			p = j + l + 1;
			continue;
		}
		p = q;
	}
	return n;
}

/* The percentage expression nearest to position KW (within 60 bytes), or NULL. */
static const struct pct *nearest_pct(const struct pct *v, size_t n, size_t kw, size_t kwlen)
{
	const struct pct *best = NULL;
	size_t bestd = 61;

	for (size_t i = 0; i < n; i++) {
		size_t d;

		if (v[i].end <= kw)
			d = kw - v[i].end;
		else if (v[i].start >= kw + kwlen)
			d = v[i].start - (kw + kwlen);
		else
			d = 0;
		if (d < bestd) {
			bestd = d;
			best = &v[i];
		}
	}
	return best;
}

static void add_claim(struct claim **v, size_t *n, int seq, const char *metric, const char *dir,
		      double lo, double hi, double before, double after, const char *unit,
		      const char *text)
{
	struct claim *c;

	/* the same expectation twice in one message: keep the first (it may carry figures) */
	for (size_t i = 0; i < *n; i++) {
		c = &(*v)[i];
		if (c->patch_seq == seq && !strcmp(c->metric, metric) && !strcmp(c->direction, dir) &&
		    fabs(c->lo_pct - lo) < 0.5 && fabs(c->hi_pct - hi) < 0.5) {
			if (isnan(c->before) && !isnan(before)) {
				/* the one with figures is the better record */
				c->lo_pct = lo;
				c->hi_pct = hi;
				c->before = before;
				c->after = after;
				free(c->unit);
				c->unit = unit ? xstrdup(unit) : NULL;
				free(c->text);
				c->text = xstrdup(text);
			}
			return;
		}
	}
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	c = &(*v)[(*n)++];
	c->patch_seq = seq;
	c->metric = xstrdup(metric);
	c->direction = xstrdup(dir);
	c->lo_pct = lo;
	c->hi_pct = hi;
	c->before = before;
	c->after = after;
	c->unit = unit ? xstrdup(unit) : NULL;
	c->text = xstrdup(text);
}

/*
 * A sentence about transmitting: "tx", "transmit", or a dummy device (which
 * only transmits: it has no receive path, so a benchmark on one is a
 * transmit benchmark). Not "sending": a UDP_RR client sends too.
 */
static int tx_context(const char *sentence)
{
	static const char *const words[] = { "tx", "transmit", "transmits", "dummy" };

	for (size_t i = 0; i < ARRAY_SIZE(words); i++)
		if (find_word(sentence, words[i]) >= 0)
			return 1;
	return 0;
}

/* Metric for a rate unit such as "Krps", "Mpps", "Gbps"; NULL if not a rate. */
static const char *unit_metric(const char *unit, const char *sentence)
{
	size_t l = strlen(unit);
	const char *base = unit;
	int rx = find_word(sentence, "rx") >= 0 || find_word(sentence, "receive") >= 0;

	if (l == 4 && strchr("KMGkmg", unit[0]))
		base = unit + 1;
	/* requests per second of a sending benchmark (seed 003's io_uring
	 * sends to a dummy device) are packets sent, not udp_rr transactions */
	if (!strcasecmp(base, "rps") && tx_context(sentence) && !rx)
		return "tx_pps";
	if (!strcasecmp(base, "rps") || !strcasecmp(base, "tps"))
		return "tps";
	if (!strcasecmp(base, "pps"))
		return rx ? "rx_pps" : "tx_pps";
	if (!strcasecmp(base, "bps") || !strcasecmp(unit, "Gbit/s") || !strcasecmp(unit, "Mbit/s"))
		return rx ? "rx_bps" : "tx_bps";
	return NULL;
}

/* Read a unit word at P ("Krps"): length, 0 if none. */
static size_t read_unit(const char *p, char *unit, size_t size)
{
	size_t l = 0;

	while (isalpha((unsigned char)p[l]) || (l > 0 && p[l] == '/' && isalpha((unsigned char)p[l + 1])))
		l++;
	if (!l || l >= size)
		return 0;
	memcpy(unit, p, l);
	unit[l] = 0;
	return l;
}

/* "2268 Krps -> 2380", "80 Mpps -> 120 Mpps": 1 when found (claim added). */
static int scan_before_after(const char *s, int seq, struct claim **v, size_t *n)
{
	static const char *const arrows[] = { "->", "\xe2\x86\x92", "=>" };
	int found = 0;

	for (size_t ai = 0; ai < ARRAY_SIZE(arrows); ai++) {
		for (const char *a = s; (a = strstr(a, arrows[ai])); a += strlen(arrows[ai])) {
			const char *lp = a, *rp;
			char lunit[16] = "", runit[16] = "";
			double before, after;
			const char *ustart, *metric;

			/* left: NUMBER [UNIT] */
			while (lp > s && (lp[-1] == ' ' || lp[-1] == '\t'))
				lp--;
			ustart = lp;
			while (ustart > s && (isalpha((unsigned char)ustart[-1]) || ustart[-1] == '/'))
				ustart--;
			if (ustart < lp)
				read_unit(ustart, lunit, sizeof(lunit));
			lp = ustart;
			while (lp > s && lp[-1] == ' ')
				lp--;
			{
				const char *ns = lp;

				while (ns > s && (isdigit((unsigned char)ns[-1]) || ns[-1] == '.'))
					ns--;
				if (ns == lp || !parse_num(ns, &before))
					continue;
			}
			/* right: NUMBER [UNIT] */
			rp = skip_sp(a + strlen(arrows[ai]));
			{
				size_t l = parse_num(rp, &after);

				if (!l)
					continue;
				rp = skip_sp(rp + l);
				read_unit(rp, runit, sizeof(runit));
			}
			metric = unit_metric(*lunit ? lunit : runit, s);
			if (!metric || before <= 0)
				continue;
			add_claim(v, n, seq, metric, after >= before ? "higher" : "lower",
				  fabs(after / before - 1) * 100, fabs(after / before - 1) * 100,
				  before, after, *lunit ? lunit : runit, s);
			found = 1;
		}
	}
	return found;
}

/* Claims of one sentence. */
static void scan_sentence(const char *s, int seq, struct claim **v, size_t *n)
{
	static const char *const cpu_words[] = { "cycles", "cpu usage", "cpu time", "cpu cost",
						 "cpu utilization", "cpu utilisation" };
	static const char *const cpu_verbs[] = { "save", "saves", "saving", "saved", "reduces",
						 "reduce", "reduction", "less", "fewer", "lower" };
	static const char *const tput_words[] = { "throughput", "improvement", "faster", "speedup",
						  "speed-up", "gain" };
	struct pct pcts[16];
	size_t np;

	if (scan_before_after(s, seq, v, n))
		return;
	np = find_pcts(s, pcts, ARRAY_SIZE(pcts));
	if (!np)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(cpu_words); i++) {
		long kw = find_word(s, cpu_words[i]);
		const struct pct *p;
		int verb = 0;

		if (kw < 0)
			continue;
		for (size_t j = 0; j < ARRAY_SIZE(cpu_verbs); j++)
			verb |= find_word(s, cpu_verbs[j]) >= 0;
		if (!verb)
			continue;
		p = nearest_pct(pcts, np, (size_t)kw, strlen(cpu_words[i]));
		if (!p)
			continue;
		add_claim(v, n, seq, "cpu_us_per_op", "lower", p->lo, p->hi, NAN, NAN, NULL, s);
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(tput_words); i++) {
		long kw = find_word(s, tput_words[i]);
		const struct pct *p;
		const char *metric = "throughput";
		int lower;

		if (kw < 0)
			continue;
		p = nearest_pct(pcts, np, (size_t)kw, strlen(tput_words[i]));
		if (!p)
			continue;
		if (find_word(s, "tx") >= 0 || find_word(s, "transmit") >= 0)
			metric = "tx_pps";
		else if (find_word(s, "rx") >= 0)
			metric = "rx_pps";
		else if (find_word(s, "rr") >= 0 || find_word(s, "udp_rr") >= 0 ||
			 find_word(s, "transactions") >= 0 || find_word(s, "requests") >= 0)
			metric = "tps";
		lower = p->sign == '-' || find_word(s, "regression") >= 0 || find_word(s, "drop") >= 0;
		add_claim(v, n, seq, metric, lower ? "lower" : "higher", p->lo, p->hi, NAN, NAN, NULL, s);
		return;
	}
}

/* Split a paragraph into sentences: ". " / "! " / "? " / ": " at a line end. */
static void scan_paragraph(const char *para, int seq, struct claim **v, size_t *n)
{
	struct buf sent = BUF_INIT;

	for (const char *p = para;; p++) {
		int end = !*p;

		if (!end) {
			buf_addch(&sent, *p == '\n' ? ' ' : *p);
			if ((*p == '.' || *p == '!' || *p == '?') && (p[1] == ' ' || p[1] == '\n' || !p[1]))
				end = 1;
		}
		if (end) {
			buf_trim(&sent);
			if (sent.len)
				scan_sentence(sent.buf, seq, v, n);
			buf_reset(&sent);
			if (!*p)
				break;
		}
	}
	buf_release(&sent);
}

/* ---- benchmark commands ------------------------------------------------------ */

static void add_proposal(struct proposal **v, size_t *n, int seq, const char *type, int flows,
			 struct strvec *params, const char *cmd, const char *context)
{
	struct proposal *p;

	for (size_t i = 0; i < *n; i++)
		if ((*v)[i].patch_seq == seq && !strcmp((*v)[i].command, cmd)) {
			strvec_clear(params);
			return;
		}
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	p = &(*v)[(*n)++];
	p->patch_seq = seq;
	p->type = xstrdup(type);
	p->name = xasprintf("%s_%d", type, flows);
	p->params = *params;
	strvec_init(params);
	p->command = xstrdup(cmd);
	p->context = context && *context ? xstrdup(context) : NULL;
}

/* A netperf or super_netperf command line -> a proposal (when it is a UDP test). */
static void scan_command(const char *line, int seq, const char *context, struct proposal **v, size_t *n)
{
	struct strvec w = STRVEC_INIT, params = STRVEC_INIT;
	const char *test = NULL, *len = NULL, *rr = NULL, *msg = NULL;
	long flows = 1;
	size_t i = 0;
	int test_opts = 0;
	struct buf cmd = BUF_INIT;

	buf_addstr(&cmd, line);
	buf_trim(&cmd);
	strvec_split(&w, cmd.buf, " \t");
	while (i < w.n && strcmp(w.v[i], "super_netperf") && strcmp(w.v[i], "netperf") &&
	       !ends_with(w.v[i], "/super_netperf") && !ends_with(w.v[i], "/netperf"))
		i++;
	if (i == w.n)
		goto out;
	if (ends_with(w.v[i], "super_netperf")) {
		if (i + 1 >= w.n || parse_long(w.v[i + 1], 1, 1000000, &flows) < 0)
			goto out;
		i++;
	}
	for (i++; i < w.n; i++) {
		const char *a = w.v[i];

		if (!strcmp(a, "--")) {
			test_opts = 1;
			continue;
		}
		if (i + 1 >= w.n)
			break;
		if (!test_opts && !strcmp(a, "-t"))
			test = w.v[++i];
		else if (!test_opts && !strcmp(a, "-l"))
			len = w.v[++i];
		else if (!test_opts && !strcmp(a, "-H"))
			i++;
		else if (test_opts && !strcmp(a, "-r"))
			rr = w.v[++i];
		else if (test_opts && !strcmp(a, "-m"))
			msg = w.v[++i];
	}
	if (!test)
		goto out;
	if (!strcasecmp(test, "UDP_RR")) {
		char *req = NULL, *resp = NULL;

		strvec_pushf(&params, "flows=%ld", flows);
		if (rr) {
			const char *comma = strchr(rr, ',');

			req = comma ? xstrndup(rr, comma - rr) : xstrdup(rr);
			resp = xstrdup(comma ? comma + 1 : rr);
			strvec_pushf(&params, "request_size=%s", req);
			strvec_pushf(&params, "response_size=%s", resp);
		}
		if (len && len[0] != '-')
			strvec_pushf(&params, "duration=%s", len);
		free(req);
		free(resp);
		add_proposal(v, n, seq, "udp_rr", (int)flows, &params, cmd.buf, context);
	} else if (!strcasecmp(test, "UDP_STREAM")) {
		strvec_pushf(&params, "threads=%ld", flows);
		if (msg)
			strvec_pushf(&params, "size=%s", msg);
		if (len && len[0] != '-')
			strvec_pushf(&params, "duration=%s", len);
		add_proposal(v, n, seq, "udp_tx", (int)flows, &params, cmd.buf, context);
	}
out:
	strvec_clear(&w);
	strvec_clear(&params);
	buf_release(&cmd);
}

void claims_scan(const char *text, int seq, struct claim **claims, size_t *n_claims,
		 struct proposal **props, size_t *n_props)
{
	struct buf para = BUF_INIT, context = BUF_INIT;
	const char *p = text;
	int in_tested = 0;

	while (1) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);
		int blank = 1;

		for (size_t i = 0; i < l; i++)
			if (!isspace((unsigned char)p[i]))
				blank = 0;
		if (!blank && p[0] == '>') {
			/* quoted text of a reply is not this message's claim */
		} else if (blank) {
			if (para.len)
				scan_paragraph(para.buf, seq, claims, n_claims);
			buf_reset(&para);
		} else {
			struct buf line = BUF_INIT;

			buf_add(&line, p, l);
			if (!strncasecmp(line.buf, "Tested", 6) && strchr(line.buf, ':')) {
				in_tested = 1;
				buf_reset(&context);
				buf_addstr(&context, strchr(line.buf, ':') + 1);
			} else if (in_tested && (line.buf[0] == ' ' || line.buf[0] == '\t') &&
				   !strstr(line.buf, "netperf")) {
				buf_addch(&context, ' ');
				buf_addstr(&context, line.buf);
			} else if (line.buf[0] != ' ' && line.buf[0] != '\t') {
				in_tested = 0;
			}
			if (strstr(line.buf, "netperf")) {
				buf_trim(&context);
				/* collapse runs of white space in the description */
				{
					struct buf c2 = BUF_INIT;

					for (size_t i = 0; i < context.len; i++)
						if (!(isspace((unsigned char)context.buf[i]) && c2.len &&
						      c2.buf[c2.len - 1] == ' '))
							buf_addch(&c2, isspace((unsigned char)context.buf[i]) ? ' ' : context.buf[i]);
					scan_command(line.buf, seq, in_tested ? c2.buf : NULL, props, n_props);
					buf_release(&c2);
				}
			} else {
				if (para.len)
					buf_addch(&para, '\n');
				buf_add(&para, p, l);
			}
			buf_release(&line);
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	if (para.len)
		scan_paragraph(para.buf, seq, claims, n_claims);
	buf_release(&para);
	buf_release(&context);
}

void claims_free(struct claim *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(c[i].metric);
		free(c[i].direction);
		free(c[i].unit);
		free(c[i].text);
	}
	free(c);
}

void proposals_free(struct proposal *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(p[i].type);
		free(p[i].name);
		strvec_clear(&p[i].params);
		free(p[i].command);
		free(p[i].context);
	}
	free(p);
}
