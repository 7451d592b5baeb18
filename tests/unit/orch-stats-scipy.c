/* orch-stats-scipy.c: stats.c against python3-scipy computed at test time on tests/data/stats/samples.txt. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "run.h"
#include "stats/stats.h"
#include "strvec.h"
#include "tap.h"
#include "util.h"

/* A python3 that has scipy: the one in PATH, else Debian's (PATH may hold a pyenv without it). */
static const char *find_python(void)
{
	static const char *cands[] = { "python3", "/usr/bin/python3" };

	for (size_t i = 0; i < ARRAY_SIZE(cands); i++) {
		const char *argv[] = { cands[i], "-c", "import scipy.stats", NULL };
		struct run_cmd c = RUN_CMD_INIT;
		int good;

		c.argv = argv;
		c.timeout_ms = 60000;
		good = run_command(&c) == 0 && c.status == 0;
		run_release(&c);
		if (good)
			return cands[i];
	}
	return NULL;
}

static size_t parse_values(const char *s, double *v, size_t max)
{
	size_t n = 0;
	char *end;

	while (n < max) {
		double x = strtod(s, &end);

		if (end == s)
			break;
		v[n++] = x;
		s = end;
	}
	return n;
}

/* |got - want| <= abs + rel |want|; NaN only equals NaN. */
static int close_to(double got, double want, double rel, double abs_tol)
{
	if (isnan(want))
		return isnan(got);
	return fabs(got - want) <= abs_tol + rel * fabs(want);
}

static void check(const char *name, const char *what, double got, double want, double rel, double abs_tol)
{
	ok(close_to(got, want, rel, abs_tol), "%s: %s %.15g (scipy %.15g)", name, what, got, want);
}

int main(void)
{
	const char *py = find_python();
	char *samples = xasprintf("%s/stats/samples.txt", tap_data_dir());
	char *script = xasprintf("%s/stats/ref.py", tap_data_dir());
	struct buf sb = BUF_INIT;
	struct strvec lines = STRVEC_INIT, refs = STRVEC_INIT;
	struct run_cmd c = RUN_CMD_INIT;
	size_t cases = 0;

	if (!py) {
		skip("python3-scipy not found", "comparison with scipy");
		goto out;
	}
	{
		const char *argv[] = { py, script, samples, NULL };

		c.argv = argv;
		c.timeout_ms = 120000;
		if (run_command(&c) || c.status) {
			ok(0, "%s ref.py ran: %s: %s", py, run_describe(&c), c.err.buf);
			goto out;
		}
	}
	if (buf_read_file(&sb, samples)) {
		ok(0, "read %s", samples);
		goto out;
	}
	strvec_split(&lines, sb.buf, "\n");
	strvec_split(&refs, c.out.buf, "\n");
	for (size_t i = 0; i < lines.n; i++) {
		const char *l = lines.v[i], *bar1, *bar2;
		char name[64];
		double a[64], b[64], r[10];
		size_t na, nb;
		struct stats_cmp cmp;
		struct stats_mwu m;
		const char *ref = NULL;

		if (l[0] == '#')
			continue;
		bar1 = strchr(l, '|');
		bar2 = bar1 ? strchr(bar1 + 1, '|') : NULL;
		if (!bar2 || sscanf(l, "%63s", name) != 1) {
			ok(0, "malformed sample line %zu", i + 1);
			continue;
		}
		na = parse_values(bar1 + 1, a, 64);
		nb = parse_values(bar2 + 1, b, 64);
		for (size_t k = 0; k < refs.n; k++)
			if (starts_with(refs.v[k], name) && refs.v[k][strlen(name)] == ' ')
				ref = refs.v[k] + strlen(name);
		if (!ref) {
			ok(0, "%s: scipy gave a line", name);
			continue;
		}
		{
			char *end;
			const char *s = ref;

			for (int k = 0; k < 10; k++) {
				r[k] = strtod(s, &end);
				s = end;
			}
		}
		cases++;
		stats_compare(a, na, b, nb, 1.0, &cmp);
		check(name, "welch t", cmp.w.t, r[0], 1e-9, 0);
		check(name, "welch p", cmp.w.p, r[1], 1e-7, 1e-14);
		check(name, "welch df", cmp.w.df, r[2], 1e-9, 0);
		check(name, "change %", cmp.change_pct, r[3], 1e-9, 1e-12);
		/*
		 * scipy 1.10's t.ppf is off by ~3e-9 relative (t.sf of its
		 * t.ppf(0.975, 6.1536) is 0.025000000065); ours solves the
		 * incomplete beta to ~1e-15, hence the looser tolerance.
		 */
		check(name, "95% CI low", cmp.ci_lo, r[4], 1e-7, 1e-7);
		check(name, "95% CI high", cmp.ci_hi, r[5], 1e-7, 1e-7);
		stats_mwu_normal(a, na, b, nb, &m);
		check(name, "U", m.u, r[6], 0, 0);
		check(name, "MWU p asymptotic (ties corrected)", m.p, r[8], 1e-9, 1e-14);
		if (!isnan(r[7])) {
			stats_mwu_exact(a, na, b, nb, &m);
			check(name, "MWU p exact", m.p, r[7], 1e-9, 1e-14);
		}
		if (!isnan(r[9])) {
			stats_mwu_exact(a, na, b, nb, &m);
			check(name, "MWU p exact with mid-ranks (enumerated)", m.p, r[9], 1e-9, 1e-14);
		}
	}
	ok(cases >= 10, "compared %zu cases with scipy", cases);
out:
	run_release(&c);
	buf_release(&sb);
	strvec_clear(&lines);
	strvec_clear(&refs);
	free(samples);
	free(script);
	return done_testing();
}
