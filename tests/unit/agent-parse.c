/* agent-parse.c: unit tests of the monitor output parsers, fed recorded fixtures (host captures and seed mails). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "log.h"
#include "parse.h"
#include "tap.h"
#include "util.h"

static char *fixture(const char *name, size_t *len)
{
	struct buf b = BUF_INIT;
	char *p = xasprintf("%s/agent/%s", tap_data_dir(), name);

	if (buf_read_file(&b, p))
		die("missing fixture '%s'", p);
	free(p);
	return buf_detach(&b, len);
}

/*
 * Cuts: every prefix of a fixture (every byte, every 37th of a long one,
 * and the whole text) either fails to parse or parses to a prefix of what
 * the whole text gives: the same rows before the last one, and a last row
 * that names the same thing with numbers no larger than the whole's (a
 * number cut short only loses digits) and names no longer (a cut name is a
 * prefix). ASan watches that no parse reads past the cut. A cut function
 * parses text[0..len) and compares it with the reference `ref`, the parse
 * of the whole fixture that the test made first.
 */
enum { CUT_FAILED, CUT_PREFIX, CUT_WRONG };
typedef int (*cut_fn)(const char *text, size_t len);

static struct {
	struct prof_row *prof;
	size_t nprof;
	struct cpu_pct *mp, *mp_data;	/* mpstat: Average rows; data rows before them */
	size_t nmp, nmp_data;
	struct proc_stat ps;
	struct perf_stat_row *stat;
	size_t nstat;
	struct bpf_output bpf;
	struct counters snmp;
} ref;

static int is_prefix(const char *cut, const char *whole)
{
	return !strncmp(cut, whole, strlen(cut));
}

/*
 * Cut `name` everywhere with fn; `whole` is what the whole fixture holds
 * (known from the file: rows, events, counters), `nwhole` what its parse
 * gave. One test line.
 */
static void cuts(const char *name, cut_fn fn, size_t whole, size_t nwhole, const char *unit)
{
	size_t len, i = 0, step, wrong_at = 0;
	char *t = fixture(name, &len);
	int n[3] = { 0, 0, 0 }, at_whole;

	step = len > 4000 ? 37 : 1;
	for (;;) {
		int r = fn(t, i);

		if (r == CUT_WRONG && !n[CUT_WRONG])
			wrong_at = i;
		n[r]++;
		if (i == len)
			break;
		i = i + step < len ? i + step : len;
	}
	at_whole = fn(t, len);
	ok(!n[CUT_WRONG] && at_whole == CUT_PREFIX && nwhole == whole && n[CUT_FAILED] > 0,
	   "every cut of %s fails (%d) or parses to a prefix (%d) of the whole: %zu %s",
	   name, n[CUT_FAILED], n[CUT_PREFIX], nwhole, unit);
	if (n[CUT_WRONG])
		diag("%d cuts disagree with the whole; the first ends: '%.*s'", n[CUT_WRONG],
		     (int)(wrong_at < 60 ? wrong_at : 60), t + (wrong_at < 60 ? 0 : wrong_at - 60));
	if (nwhole != whole)
		diag("the whole fixture gave %zu %s, the file holds %zu", nwhole, unit, whole);
	free(t);
}

static int cut_report(const char *t, size_t len)
{
	struct prof_row *r;
	size_t n, i;
	int same;

	if (parse_perf_report(t, len, "cut", &r, &n)) {
		prof_rows_free(r, n);
		return CUT_FAILED;
	}
	same = n <= ref.nprof;
	for (i = 0; same && i < n; i++) {
		const struct prof_row *a = &r[i], *b = &ref.prof[i];

		same = a->kind == b->kind && !strcmp(a->comm, b->comm) && !strcmp(a->dso, b->dso) &&
			(i + 1 < n ? a->percent == b->percent && !strcmp(a->symbol, b->symbol)
				   : a->percent <= b->percent && is_prefix(a->symbol, b->symbol));
	}
	prof_rows_free(r, n);
	return same ? CUT_PREFIX : CUT_WRONG;
}

static int pct_prefix(const struct cpu_pct *a, size_t n, const struct cpu_pct *b, size_t nb)
{
	size_t i;

	if (n > nb)
		return 0;
	for (i = 0; i < n; i++) {
		const struct cpu_pct *x = &a[i], *y = &b[i];

		if (x->cpu != y->cpu)
			return 0;
		if (i + 1 < n ? x->usr != y->usr || x->nice != y->nice || x->sys != y->sys ||
				x->iowait != y->iowait || x->irq != y->irq || x->soft != y->soft ||
				x->steal != y->steal || x->idle != y->idle :
		    x->usr > y->usr || x->nice > y->nice || x->sys > y->sys || x->iowait > y->iowait ||
		    x->irq > y->irq || x->soft > y->soft || x->steal > y->steal || x->idle > y->idle)
			return 0;
	}
	return 1;
}

/* Before its Average lines are there, mpstat's text gives its data rows. */
static int cut_mpstat(const char *t, size_t len)
{
	struct cpu_pct *r;
	size_t n;
	int same;

	if (parse_mpstat(t, len, "cut", &r, &n)) {
		free(r);
		return CUT_FAILED;
	}
	same = pct_prefix(r, n, ref.mp, ref.nmp) || pct_prefix(r, n, ref.mp_data, ref.nmp_data);
	free(r);
	return same ? CUT_PREFIX : CUT_WRONG;
}

static int cut_procstat(const char *t, size_t len)
{
	struct proc_stat ps;
	size_t i, k;
	int same;

	if (parse_proc_stat(t, len, "cut", &ps))
		return CUT_FAILED;
	same = ps.n <= ref.ps.n;
	for (i = 0; same && i < ps.n; i++) {
		same = ps.cpus[i].cpu == ref.ps.cpus[i].cpu;
		for (k = 0; same && k < CT_N; k++)
			same = i + 1 < ps.n ? ps.cpus[i].t[k] == ref.ps.cpus[i].t[k]
					    : ps.cpus[i].t[k] <= ref.ps.cpus[i].t[k];
	}
	proc_stat_free(&ps);
	return same ? CUT_PREFIX : CUT_WRONG;
}

static int cut_perf_stat(const char *t, size_t len)
{
	struct perf_stat_row *r;
	size_t n, i;
	int same;

	if (parse_perf_stat(t, len, "cut", &r, &n)) {
		perf_stat_rows_free(r, n);
		return CUT_FAILED;
	}
	same = n <= ref.nstat;
	for (i = 0; same && i < n; i++) {
		const struct perf_stat_row *a = &r[i], *b = &ref.stat[i];

		same = a->supported == b->supported && !strcmp(a->unit, b->unit) &&
			(i + 1 < n ? !strcmp(a->event, b->event) && a->value == b->value &&
				     a->counted == b->counted && a->running_pct == b->running_pct
				   : is_prefix(a->event, b->event) && a->value <= b->value &&
				     a->running_pct <= b->running_pct);
	}
	perf_stat_rows_free(r, n);
	return same ? CUT_PREFIX : CUT_WRONG;
}

static int cut_bpf(const char *t, size_t len)
{
	struct bpf_output o;
	size_t i, j, nh;
	int same;

	if (parse_bpftrace(t, len, "cut", &o)) {
		bpf_output_free(&o);
		return CUT_FAILED;
	}
	/*
	 * A map line cut before its value ("@s[sed]:") reads as the header of
	 * a histogram with no buckets yet: the parser cannot tell them apart
	 * at the end of the text. That one is the next map of the whole.
	 */
	nh = o.n_hists;
	if (nh && !o.hists[nh - 1].n && o.n_values < ref.bpf.n_values &&
	    !strcmp(o.hists[nh - 1].name, ref.bpf.values[o.n_values].name))
		nh--;
	same = nh <= ref.bpf.n_hists && o.n_values <= ref.bpf.n_values &&
		(!o.error || (ref.bpf.error && is_prefix(o.error, ref.bpf.error)));
	for (i = 0; same && i < nh; i++) {
		const struct bpf_hist *a = &o.hists[i], *b = &ref.bpf.hists[i];

		same = !strcmp(a->name, b->name) && (i + 1 < nh ? a->n == b->n : a->n <= b->n);
		for (j = 0; same && j < a->n; j++)
			same = a->b[j].lo == b->b[j].lo && a->b[j].hi == b->b[j].hi &&
				(i + 1 < nh || j + 1 < a->n ? a->b[j].count == b->b[j].count
							    : a->b[j].count <= b->b[j].count);
	}
	for (i = 0; same && i < o.n_values; i++)
		same = !strcmp(o.values[i].name, ref.bpf.values[i].name) &&
			(i + 1 < o.n_values ? o.values[i].value == ref.bpf.values[i].value
					    : o.values[i].value <= ref.bpf.values[i].value);
	bpf_output_free(&o);
	return same ? CUT_PREFIX : CUT_WRONG;
}

static int cut_snmp(const char *t, size_t len)
{
	struct counters c = COUNTERS_INIT;
	size_t i;
	int same;

	if (parse_snmp(t, len, "cut", &c)) {
		counters_free(&c);
		return CUT_FAILED;
	}
	same = c.n <= ref.snmp.n;
	for (i = 0; same && i < c.n; i++)
		same = !strcmp(c.v[i].name, ref.snmp.v[i].name) &&
			(i + 1 < c.n ? c.v[i].value == ref.snmp.v[i].value : c.v[i].value <= ref.snmp.v[i].value);
	counters_free(&c);
	return same ? CUT_PREFIX : CUT_WRONG;
}

static void test_perf_report(void)
{
	struct prof_row *r;
	size_t n, len, i;
	char *t = fixture("perf-report-seed004-before.txt", &len);
	double sum = 0;

	ok(!parse_perf_report(t, len, "seed 004", &r, &n), "seed 004 'before' profile parses");
	is_int(n, 32, "32 rows");
	is_double(r[0].percent, 31.01, 1e-9, "first row percent");
	is_str(r[0].comm, "ksoftirqd/511", "first row comm");
	is_str(r[0].dso, "[kernel.kallsyms]", "first row dso");
	is_str(r[0].symbol, "queued_spin_lock_slowpath", "first row symbol without marker");
	is_int(r[0].kind, 'k', "kernel marker");
	is_str(r[1].comm, "swapper", "second row comm");
	is_str(r[31].symbol, "sock_wfree", "last row symbol");
	prof_rows_free(r, n);
	free(t);

	t = fixture("perf-report-seed004-after.txt", &len);
	ok(!parse_perf_report(t, len, "seed 004", &r, &n), "seed 004 'after' profile parses");
	is_str(r[0].symbol, "idpf_tx_splitq_clean_hdr", "after: top symbol");
	is_double(r[0].percent, 19.10, 1e-9, "after: top percent");
	prof_rows_free(r, n);
	free(t);

	/* real perf record -a -g -e cpu-clock on this host, with call graphs */
	t = fixture("perf-report-idle.txt", &len);
	ok(!parse_perf_report(t, len, "host", &r, &n), "host profile with call graphs parses");
	ok(n == 39, "call graph lines are skipped (%zu rows)", n);
	is_str(r[0].symbol, "pv_native_safe_halt", "host top symbol");
	/* the ruler gives widths: a dso with a space in it stays whole */
	for (i = 0; i < n; i++)
		if (strstr(r[i].dso, "(deleted)"))
			break;
	ok(i < n && !strcmp(r[i].dso, "memfd:sealed-91173221a7ea (deleted)"), "dso with a space read by column");
	ok(i < n && r[i].kind == '.' && !strcmp(r[i].symbol, "0x0000000000012efd"), "user-space row");
	prof_rows_free(r, n);
	free(t);

	t = fixture("perf-report-host.txt", &len);
	ok(!parse_perf_report(t, len, "host", &r, &n), "loaded host profile parses");
	for (i = 0; i < n; i++)
		sum += r[i].percent;
	ok(n > 100 && sum > 95 && sum < 101, "rows add up to ~100%% (%zu rows, %.2f%%)", n, sum);
	prof_rows_free(r, n);
	free(t);

	ok(parse_perf_report("", 0, "empty", &r, &n) < 0, "empty input is an error");
	ok(parse_perf_report("    12.5%  a  b\n", 16, "cut", &r, &n) < 0, "row without marker is an error");
	ok(parse_perf_report("# Samples: 0 of event 'cpu-clock'\n", 34, "none", &r, &n) == 0 && n == 0,
	   "a report with no samples is empty, not an error");
	ok(parse_perf_report("   120.0%  a  b  [k] x\n", 23, "bad", &r, &n) < 0, "percent over 100 is an error");

	/* the fixtures' row counts: grep -cE '^ +[0-9.]+% ' */
	t = fixture("perf-report-host.txt", &len);
	parse_perf_report(t, len, "host", &ref.prof, &ref.nprof);
	free(t);
	cuts("perf-report-host.txt", cut_report, 619, ref.nprof, "rows");
	prof_rows_free(ref.prof, ref.nprof);
	t = fixture("perf-report-seed004-before.txt", &len);
	parse_perf_report(t, len, "seed 004", &ref.prof, &ref.nprof);
	free(t);
	cuts("perf-report-seed004-before.txt", cut_report, 32, ref.nprof, "rows");
	prof_rows_free(ref.prof, ref.nprof);
}

/*
 * Every cut of a perf script text folds without error (a sample cut off at
 * the end is left out), into no more samples than the whole has: the
 * number of cuts that broke this, 0 when none did.
 */
static int script_cuts(const char *name)
{
	size_t len, i, k;
	char *t = fixture(name, &len);
	struct folded_stack *v;
	uint64_t whole = 0, samples;
	int bad = 0;

	if (parse_perf_script(t, len, "whole", &v, &k, &whole) || !whole)
		bad++;
	folded_stacks_free(v, k);
	for (i = 0; i < len; i += (len > 4000 ? 37 : 1)) {
		if (parse_perf_script(t, i, "cut", &v, &k, &samples) || samples > whole)
			bad++;
		folded_stacks_free(v, k);
	}
	free(t);
	return bad;
}

static uint64_t stack_count(const struct folded_stack *v, size_t n, const char *stack)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].stack, stack))
			return v[i].count;
	return 0;
}

static void test_perf_script(void)
{
	static const char edge[] =
		"my prog \n"
		"\tffffffff81000130 entry_SYSCALL_64+0x1f ([kernel.kallsyms])\n"
		"\t  401000 ns::f(int, char const*) (/opt/a b/prog)\n"
		"\t  401200 semi;colon (/opt/prog)\n"
		"\t  7f00 [unknown] (/usr/lib/libc.so.6)\n"
		"\n"
		"my prog \n"
		"\tffffffff81000130 entry_SYSCALL_64+0x1f ([kernel.kallsyms])\n"
		"\t  401000 ns::f(int, char const*) (/opt/a b/prog)\n"
		"\t  401200 semi;colon (/opt/prog)\n"
		"\t  7f00 [unknown] (/usr/lib/libc.so.6)\n"
		"\n"
		"swapper \n"
		"\tffffffff8225e1a0 [unknown] ([unknown])\n"
		"\n"
		"cut \n"
		"\t  401000 main (/opt/prog";
	struct folded_stack *v;
	size_t n, len, i;
	uint64_t samples, sum = 0, rr = 0, recv = 0;
	char *t = fixture("perf-script-udp-rr.txt", &len);

	/* the expected figures come from folding the fixture by hand (a short Python script) */
	ok(!parse_perf_script(t, len, "perf script output", &v, &n, &samples), "recorded perf script output folds");
	ok(samples == 200, "every sample of the fixture is read (%llu)", (unsigned long long)samples);
	ok(n == 128, "into 128 distinct stacks (%zu)", n);
	for (i = 0; i < n; i++) {
		sum += v[i].count;
		if (starts_with(v[i].stack, "klab-udp-rr;"))
			rr += v[i].count;
		if (strstr(v[i].stack, ";udp_recvmsg;") || ends_with(v[i].stack, ";udp_recvmsg"))
			recv += v[i].count;
	}
	ok(sum == samples, "the counts add up to the samples");
	ok(rr == 145 && recv == 9, "145 samples of klab-udp-rr, 9 under udp_recvmsg (%llu, %llu)",
	   (unsigned long long)rr, (unsigned long long)recv);
	ok(n && v[0].count == 22 && !strcmp(v[0].stack, "qemu-system-x86;[unknown];[perf-18864.map]"),
	   "largest first, an unknown symbol named by its dso: %s", n ? v[0].stack : "-");
	ok(stack_count(v, n, "klab-udp-rr;[unknown];epoll_wait;entry_SYSCALL_64_after_hwframe;do_syscall_64;"
			     "__x64_sys_epoll_wait;do_epoll_wait;schedule_hrtimeout_range_clock;schedule;"
			     "__schedule;finish_task_switch.isra.0") == 7, "root first, leaf last");
	folded_stacks_cap(&v, &n, 10);
	sum = 0;
	for (i = 0; i < n; i++)
		sum += v[i].count;
	ok(n <= 10 + 3 && sum == 200, "the cap keeps every sample (%zu stacks)", n);
	ok(stack_count(v, n, "cc1;[other stacks]") > 0, "the small stacks go to their command's [other stacks]");
	folded_stacks_free(v, n);
	free(t);
	ok(script_cuts("perf-script-udp-rr.txt") == 0, "every prefix of the fixture folds, into no more samples than the whole");

	ok(!parse_perf_script(edge, strlen(edge), "edge", &v, &n, &samples), "edge cases fold");
	ok(samples == 3 && n == 2, "the sample cut off at the end is left out");
	ok(stack_count(v, n, "my prog;[libc.so.6];semi:colon;ns::f(int, char const*);entry_SYSCALL_64") == 2,
	   "spaces kept, ';' replaced, offsets dropped: %s", n ? v[0].stack : "-");
	ok(stack_count(v, n, "swapper;[unknown]") == 1, "an unknown frame without a dso");
	folded_stacks_free(v, n);
	ok(!parse_perf_script("", 0, "empty", &v, &n, &samples) && n == 0 && samples == 0, "no samples is no error");
	folded_stacks_free(v, n);
	ok(parse_perf_script("\tffff81 x (y)\n", 14, "bad", &v, &n, &samples) < 0, "a frame outside a sample is an error");
	folded_stacks_free(v, n);
	ok(parse_perf_script("c\n\tzz x\n\n", 10, "bad", &v, &n, &samples) < 0, "a malformed frame is an error");
	folded_stacks_free(v, n);
}

static void test_mpstat(void)
{
	struct cpu_pct *r;
	size_t n, len;
	char *t = fixture("mpstat-seed004-before.txt", &len);

	ok(!parse_mpstat(t, len, "seed 004", &r, &n), "seed 004 mpstat parses");
	is_int(n, 1, "one Average row");
	is_int(r[0].cpu, 511, "cpu 511");
	is_double(r[0].soft, 98.0, 1e-9, "%%soft 98");
	is_double(r[0].idle, 2.0, 1e-9, "%%idle 2");
	free(r);
	free(t);
	t = fixture("mpstat-seed004-after.txt", &len);
	ok(!parse_mpstat(t, len, "seed 004", &r, &n) && n == 1 && fabs(r[0].soft - 51.49) < 1e-9,
	   "seed 004 after: %%soft 51.49");
	free(r);
	free(t);

	t = fixture("mpstat-host.txt", &len);
	ok(!parse_mpstat(t, len, "host", &r, &n), "host mpstat -P ALL parses");
	is_int(n, 3, "Average rows only: all, 0, 1");
	is_int(r[0].cpu, -1, "'all' is cpu -1");
	is_double(r[0].usr + r[0].nice + r[0].sys + r[0].iowait + r[0].irq + r[0].soft + r[0].steal + r[0].idle,
		  100.0, 0.05, "columns add up to 100");
	free(r);
	free(t);
	ok(parse_mpstat("Average: CPU %usr %sys %idle\nAverage: all 1.0 x 3\n", 50, "bad", &r, &n) < 0,
	   "non-number is an error");
	ok(parse_mpstat("Average: CPU %usr %nice %sys %idle\nAverage: 0 1.0 2.0\n", 55, "cut", &r, &n) < 0,
	   "truncated line is an error");

	/* 3 Average rows, and 6 data rows in the two samples before them */
	t = fixture("mpstat-host.txt", &len);
	parse_mpstat(t, len, "host", &ref.mp, &ref.nmp);
	parse_mpstat(t, (size_t)(strstr(t, "\nAverage:") + 1 - t), "host", &ref.mp_data, &ref.nmp_data);
	free(t);
	is_int(ref.nmp_data, 6, "mpstat without its Average lines: every data row");
	cuts("mpstat-host.txt", cut_mpstat, 3, ref.nmp, "Average rows");
	free(ref.mp);
	free(ref.mp_data);
}

static void test_proc_stat(void)
{
	struct proc_stat a, b;
	struct cpu_pct p;
	size_t la, lb, i;
	char *ta = fixture("proc-stat-1.txt", &la), *tb = fixture("proc-stat-2.txt", &lb);
	const struct cpu_times *x, *y;
	uint64_t busy_sum = 0;

	ok(!parse_proc_stat(ta, la, "1", &a) && !parse_proc_stat(tb, lb, "2", &b), "both /proc/stat samples parse");
	is_int(a.n, 3, "cpu, cpu0, cpu1");
	is_int(a.cpus[0].cpu, -1, "first is all");
	is_int(a.cpus[2].cpu, 1, "cpu1");
	for (i = 0; i < b.n; i++) {
		x = proc_stat_cpu(&a, b.cpus[i].cpu);
		y = &b.cpus[i];
		cpu_pct_between(x, y, &p);
		is_double(p.usr + p.nice + p.sys + p.iowait + p.irq + p.soft + p.steal + p.idle, 100.0, 1e-6,
			  "cpu %d percentages add up to 100", y->cpu);
		if (y->cpu >= 0)
			busy_sum += cpu_busy_jiffies(x, y);
	}
	x = proc_stat_cpu(&a, -1);
	y = proc_stat_cpu(&b, -1);
	ok(llabs((long long)cpu_busy_jiffies(x, y) - (long long)busy_sum) <= 2,
	   "busy jiffies of 'cpu' = sum of the CPUs");
	proc_stat_free(&a);
	proc_stat_free(&b);
	free(ta);
	free(tb);
	ok(parse_proc_stat("intr 1 2\n", 9, "x", &a) < 0, "no cpu line is an error");
	ok(parse_proc_stat("cpu0 1 2 x 4\n", 13, "x", &a) < 0, "letters are an error");
	ok(!parse_proc_stat("cpu  1 2 3 4\n", 13, "x", &a) && a.cpus[0].t[CT_IDLE] == 4 && a.cpus[0].t[CT_STEAL] == 0,
	   "old kernels' 4 columns accepted");
	proc_stat_free(&a);

	/* cpu, cpu0, cpu1 */
	ta = fixture("proc-stat-1.txt", &la);
	parse_proc_stat(ta, la, "1", &ref.ps);
	free(ta);
	cuts("proc-stat-1.txt", cut_procstat, 3, ref.ps.n, "cpu lines");
	proc_stat_free(&ref.ps);
}

static void test_perf_stat(void)
{
	struct perf_stat_row *r;
	size_t n, len;
	char *t = fixture("perf-stat-host.txt", &len);

	ok(!parse_perf_stat(t, len, "host", &r, &n), "host perf stat -x, parses");
	is_int(n, 6, "six events");
	is_str(r[0].event, "cpu-clock", "cpu-clock");
	is_double(r[0].value, 2004.46, 1e-9, "cpu-clock value");
	is_str(r[0].unit, "msec", "unit msec");
	is_int(r[3].supported, 0, "cycles not supported");
	is_str(r[3].event, "cycles", "cycles named");
	is_int(r[2].supported, 1, "context-switches supported");
	is_double(r[2].value, 91, 0, "context-switches value");
	perf_stat_rows_free(r, n);
	free(t);
	ok(parse_perf_stat("12,msec\n", 8, "cut", &r, &n) < 0, "two fields is an error");
	ok(parse_perf_stat("abc,,ev\n", 8, "bad", &r, &n) < 0, "bad value is an error");

	t = fixture("perf-stat-host.txt", &len);
	parse_perf_stat(t, len, "host", &ref.stat, &ref.nstat);
	free(t);
	cuts("perf-stat-host.txt", cut_perf_stat, 6, ref.nstat, "events");
	perf_stat_rows_free(ref.stat, ref.nstat);
}

static void test_bpftrace(void)
{
	struct bpf_output o;
	size_t len, i;
	char *t = fixture("bpftrace-seed000-before.txt", &len);
	uint64_t total = 0;
	double v;
	const char *stats = "@x: count 3, average 5, total 15\n@h:\n[8, ...)   4 |@@|\n";

	ok(!parse_bpftrace(t, len, "seed 000", &o), "seed 000 'before' histogram parses");
	is_int(o.n_hists, 1, "one histogram");
	is_str(o.hists[0].name, "@__dev_queue_xmit_ns", "named");
	is_int(o.hists[0].n, 11, "11 buckets");
	is_double(o.hists[0].b[2].lo, 512, 0, "[512, 1K) lo");
	is_double(o.hists[0].b[2].hi, 1024, 0, "[512, 1K) hi: K is 1024");
	is_int(o.hists[0].b[4].count, 8699293, "[2K, 4K) count");
	is_double(o.hists[0].b[10].hi, 256 * 1024, 0, "[128K, 256K) hi");
	for (i = 0; i < o.hists[0].n; i++)
		total += o.hists[0].b[i].count;
	is_int(total, 22266072, "total of the 'before' samples");
	bpf_output_free(&o);
	free(t);

	t = fixture("bpftrace-seed000-after.txt", &len);
	ok(!parse_bpftrace(t, len, "seed 000", &o) && o.n_hists == 1 && o.hists[0].n == 9, "after: 9 buckets");
	bpf_output_free(&o);
	free(t);

	t = fixture("bpftrace-tracepoint.txt", &len);
	ok(!parse_bpftrace(t, len, "host", &o), "real tracepoint output parses");
	is_int(o.n_hists, 2, "a linear and a log2 histogram");
	is_str(o.hists[0].name, "@l", "lhist first");
	is_double(o.hists[0].b[0].lo, -BPF_OPEN, 0, "(..., 0) open below");
	is_double(o.hists[0].b[1].lo, 0, 0, "[0, 50) lo");
	is_double(o.hists[0].b[1].hi, 50, 0, "[0, 50) hi");
	is_double(o.hists[1].b[1].lo, 0, 0, "[0] lo");
	is_double(o.hists[1].b[1].hi, 1, 0, "[0] hi");
	is_double(o.hists[1].b[o.hists[1].n - 1].lo, 2.0 * 1024 * 1024 * 1024, 0, "[2G, 4G): G suffix");
	for (i = 0; i < o.n_values; i++)
		if (!strcmp(o.values[i].name, "@s[bash]"))
			break;
	ok(i < o.n_values && o.values[i].value == 8016, "keyed sum map @s[bash] = 8016");
	for (i = 0; i < o.n_values; i++)
		if (!strcmp(o.values[i].name, "@a"))
			break;
	ok(i < o.n_values && o.values[i].value == 75, "avg @a = 75");
	ok(o.error == NULL, "RLIMIT_MEMLOCK noise is not an error");
	bpf_output_free(&o);
	free(t);

	ok(!parse_bpftrace(stats, strlen(stats), "x", &o) &&
	   o.n_values == 3 && o.n_hists == 1 && o.hists[0].b[0].hi == BPF_OPEN, "stats() and open-ended bucket");
	bpf_output_free(&o);
	ok(!parse_bpftrace("ERROR: Error attaching probe: 'kprobe:x'\n", 40, "x", &o) && o.error &&
	   !strcmp(o.error, "Error attaching probe: 'kprobe:x'"), "bpftrace ERROR line kept");
	bpf_output_free(&o);
	ok(!parse_bpftrace("stdin:1:51-60: ERROR: The args builtin\n", 39, "x", &o) && o.error &&
	   !strcmp(o.error, "stdin:1:51-60: ERROR: The args builtin"), "ERROR after a location kept whole");
	bpf_output_free(&o);
	ok(parse_bpftrace("@h:\n[1K, 2K)  5 |@@@\n", 21, "cut", &o) < 0, "cut bar is an error");
	ok(parse_bpftrace("@h:\n[1K, 2", 10, "cut", &o) < 0, "cut bucket is an error");
	ok(parse_bpftrace("@h:\n[1X, 2K)  5 |@|\n", 20, "bad", &o) < 0, "bad suffix is an error");
	ok(!parse_bpf_number("16M", 3, &v) && v == 16.0 * 1024 * 1024, "16M");
	ok(parse_bpf_number("M", 1, &v) < 0, "bare suffix rejected");

	/* 2 histograms and 15 maps (@a and 14 @s[...]); 1 histogram of 11 buckets */
	t = fixture("bpftrace-tracepoint.txt", &len);
	parse_bpftrace(t, len, "host", &ref.bpf);
	free(t);
	cuts("bpftrace-tracepoint.txt", cut_bpf, 2 + 15, ref.bpf.n_hists + ref.bpf.n_values,
	     "histograms and maps");
	bpf_output_free(&ref.bpf);
	t = fixture("bpftrace-seed000-before.txt", &len);
	parse_bpftrace(t, len, "seed 000", &ref.bpf);
	free(t);
	cuts("bpftrace-seed000-before.txt", cut_bpf, 11, ref.bpf.n_hists == 1 ? ref.bpf.hists[0].n : 0,
	     "buckets of its one histogram");
	bpf_output_free(&ref.bpf);
}

static void test_net(void)
{
	struct counters c = COUNTERS_INIT, a = COUNTERS_INIT, dlt = COUNTERS_INIT;
	struct channels ch;
	size_t len;
	char *t = fixture("snmp-host.txt", &len);
	const struct counter *k;
	const char *eth = "NIC statistics:\n     peer_ifindex: 2\n     rx_queue_0_drops: 7\n";
	const char *chl = "Channel parameters for wl0:\nPre-set maximums:\nRX:\t\t8\nTX:\t\t8\nOther:\t\tn/a\n"
		"Combined:\tn/a\nCurrent hardware settings:\nRX:\t\t4\nTX:\t\t2\nOther:\t\tn/a\nCombined:\tn/a\n";

	ok(!parse_snmp(t, len, "snmp", &c), "/proc/net/snmp parses");
	k = counters_find(&c, "Udp.InDatagrams");
	ok(k && k->value == 26, "Udp.InDatagrams");
	k = counters_find(&c, "Tcp.MaxConn");
	ok(k && k->value == -1, "negative Tcp.MaxConn");
	ok(counters_find(&c, "UdpLite.MemErrors") != NULL, "last counter present");
	free(t);
	counters_add(&a, "Udp.InDatagrams", 20);
	counters_delta(&a, &c, &dlt);
	ok(dlt.n == 1 && dlt.v[0].value == 6, "delta of counters present on both sides");
	counters_free(&c);
	counters_free(&a);
	counters_free(&dlt);
	ok(parse_snmp("Udp: A B\nUdp: 1\n", 17, "cut", &c) < 0, "fewer values than names is an error");
	counters_free(&c);
	ok(parse_snmp("Udp: A B\n", 9, "cut", &c) < 0, "header without values is an error");
	counters_free(&c);
	t = fixture("snmp-host.txt", &len);
	parse_snmp(t, len, "snmp", &ref.snmp);
	free(t);
	/* the value lines' numbers: awk 'NR % 2 == 0 { n += NF - 1 } END { print n }' */
	cuts("snmp-host.txt", cut_snmp, 83, ref.snmp.n, "counters");
	counters_free(&ref.snmp);

	t = fixture("softnet-host.txt", &len);
	ok(!parse_softnet(t, len, "softnet", &c), "softnet_stat parses");
	k = counters_find(&c, "softnet.processed");
	ok(k && k->value == 0x12 + 0x2d06, "processed summed over CPUs");
	counters_free(&c);
	free(t);
	ok(parse_softnet("0000zz 1 2\n", 11, "bad", &c) < 0, "non-hex is an error");
	counters_free(&c);

	ok(!parse_ethtool_stats(eth, strlen(eth), "ethtool", &c) && c.n == 2 &&
	   !strcmp(c.v[1].name, "ethtool.rx_queue_0_drops") && c.v[1].value == 7, "ethtool -S");
	counters_free(&c);
	ok(!parse_ethtool_channels(chl, strlen(chl), "ethtool -l", &ch) && ch.rx == 4 && ch.tx == 2 &&
	   ch.combined == -1 && ch.max_rx == 8, "ethtool -l of a veth");
	ok(parse_ethtool_channels("RX: 4\n", 6, "x", &ch) < 0, "no current block is an error");
	/* found by tests/fuzz/agent-netcounters (corpus crash-channels-use-after-free): the
	 * message quoted the bad value after the lines holding it were freed */
	log_clear_error();
	chl = "Current hardware settings:\nRX:\t\tfour\n";
	ok(parse_ethtool_channels(chl, strlen(chl), "ethtool -l", &ch) < 0 &&
	   !strcmp(log_last_error(), "ethtool -l:2: malformed channel count 'four'"),
	   "a malformed count is named, from memory still held");
}

int main(void)
{
	log_init("agent-parse", 0, LOG_CRIT);	/* expected errors stay quiet */
	test_perf_report();
	test_perf_script();
	test_mpstat();
	test_proc_stat();
	test_perf_stat();
	test_bpftrace();
	test_net();
	return done_testing();
}
