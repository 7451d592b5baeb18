/* wl-hist.c: unit tests of the log-linear histogram, percentiles and the generators' option helpers. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"
#include "log.h"
#include "tap.h"
#include "wl.h"

static void test_buckets(void)
{
	uint64_t lo, hi, v;
	unsigned i, prev_hi_ok = 1;
	int bad = 0;

	is_int(hist_index(0), 0, "0 is bucket 0");
	is_int(hist_index(15), 15, "values below 16 have their own bucket");
	is_int(hist_index(16), 16, "16 starts the first log group");
	is_int(hist_index(31), 31, "31 is still one-wide");
	is_int(hist_index(32), 32, "32 starts the group of width 2");
	is_int(hist_index(33), 32, "33 shares the bucket of 32");
	is_int(hist_index(UINT64_MAX), HIST_BUCKETS - 1, "the largest value is the last bucket");
	hist_bucket_range(32, &lo, &hi);
	ok(lo == 32 && hi == 34, "bucket 32 is [32, 34)");
	hist_bucket_range(HIST_BUCKETS - 1, &lo, &hi);
	ok(hi == UINT64_MAX, "the last bucket saturates at UINT64_MAX");

	/* buckets tile the range without gaps, and each value falls in its range */
	for (i = 0; i + 1 < HIST_BUCKETS; i++) {
		uint64_t lo2, hi2;

		hist_bucket_range(i, &lo, &hi);
		hist_bucket_range(i + 1, &lo2, &hi2);
		if (hi != lo2)
			prev_hi_ok = 0;
		if (hist_index(lo) != i || hist_index(hi - 1) != i)
			bad++;
		/* relative width never above 1/16 past the exact part */
		if (lo >= HIST_SUB && (double)(hi - lo) / (double)lo > 1.0 / HIST_SUB + 1e-12)
			bad++;
	}
	ok(prev_hi_ok, "consecutive buckets touch");
	is_int(bad, 0, "every bucket holds its own bounds and is at most 6.25%% wide");
	for (v = 1, bad = 0; v < (1ull << 40); v = v * 3 + 1) {
		hist_bucket_range(hist_index(v), &lo, &hi);
		if (v < lo || v >= hi)
			bad++;
	}
	is_int(bad, 0, "sampled values fall inside their bucket");
}

static void test_percentiles(void)
{
	struct hist *h = malloc(sizeof(*h)), *h2 = malloc(sizeof(*h2));
	uint64_t v;

	hist_init(h);
	is_double(hist_percentile(h, 50), 0, 0, "empty histogram: p50 is 0");
	is_double(hist_mean(h), 0, 0, "empty histogram: mean is 0");

	/* exact region: 1..10 */
	for (v = 1; v <= 10; v++)
		hist_add(h, v);
	is_int(h->n, 10, "10 values");
	is_double(hist_percentile(h, 50), 5, 0, "p50 of 1..10 is 5 (nearest rank)");
	is_double(hist_percentile(h, 90), 9, 0, "p90 of 1..10 is 9");
	is_double(hist_percentile(h, 99), 10, 0, "p99 of 1..10 is 10");
	is_double(hist_percentile(h, 100), 10, 0, "p100 is the max");
	is_double(hist_mean(h), 5.5, 1e-9, "mean of 1..10 is 5.5");

	/* 1..100000 ns uniformly: percentiles within the bucket error */
	hist_init(h);
	for (v = 1; v <= 100000; v++)
		hist_add(h, v);
	is_double(hist_percentile(h, 50), 50000, 50000 / 16.0, "p50 of 1..100000 within 6.25%%");
	is_double(hist_percentile(h, 90), 90000, 90000 / 16.0, "p90 within 6.25%%");
	is_double(hist_percentile(h, 99), 99000, 99000 / 16.0, "p99 within 6.25%%");
	is_double(hist_percentile(h, 99.9), 99900, 99900 / 16.0, "p99.9 within 6.25%%");
	ok(hist_percentile(h, 99.9) <= 100000, "percentiles are clamped to the max");
	is_double(hist_mean(h), 50000.5, 1e-6, "the mean is exact");

	/* a bimodal distribution: 990 at 1000 ns, 10 at 1 ms */
	hist_init(h);
	for (v = 0; v < 990; v++)
		hist_add(h, 1000);
	for (v = 0; v < 10; v++)
		hist_add(h, 1000000);
	is_double(hist_percentile(h, 50), 1000, 1000 / 16.0, "bimodal p50 is the fast mode");
	is_double(hist_percentile(h, 99), 1000, 1000 / 16.0, "bimodal p99: rank 990 is still fast");
	is_double(hist_percentile(h, 99.9), 1000000, 1000000 / 16.0, "bimodal p99.9 is the slow mode");
	is_int(h->min, 1000, "min is exact");
	is_int(h->max, 1000000, "max is exact");

	/* merge equals adding into one */
	hist_init(h2);
	hist_add(h2, 5);
	hist_add(h2, 2000000);
	hist_merge(h2, h);
	is_int(h2->n, 1002, "merge adds the counts");
	is_int(h2->min, 5, "merge keeps the min");
	is_int(h2->max, 2000000, "merge keeps the max");
	is_int(h2->count[hist_index(1000)], 990, "merge adds bucket counts");
	free(h);
	free(h2);
}

static void test_options(void)
{
	const char *a = NULL, *b = NULL, *f = NULL;
	struct wl_opt opts[] = {
		{ "alpha", 1, &a }, { "beta", 1, &b }, { "6", 0, &f }, { NULL, 0, NULL },
	};
	char *argv1[] = { "x", "role", "--alpha", "1", "--beta=two", "-6", NULL };
	char *argv2[] = { "x", "role", "--gamma", "1", NULL };
	char *argv3[] = { "x", "role", "--alpha", NULL };
	char *argv4[] = { "x", "role", "--6", NULL };
	struct wl_cpus c;
	struct sockaddr_storage ss;
	socklen_t len;
	long l;
	char buf[80];

	ok(!wl_parse_opts(6, argv1, 2, opts), "options parse");
	is_str(a, "1", "--alpha VALUE");
	is_str(b, "two", "--beta=VALUE");
	is_str(f, "1", "flag -6");
	ok(wl_parse_opts(4, argv2, 2, opts), "an unknown option fails");
	ok(wl_parse_opts(3, argv3, 2, opts), "a missing value fails");
	ok(wl_parse_opts(3, argv4, 2, opts), "a one-letter flag with two dashes fails");

	ok(!wl_arg_cpus("cpus", "0", &c) && c.n == 1 && c.cpu[0] == 0, "cpu list '0'");
	wl_cpus_release(&c);
	ok(wl_arg_cpus("cpus", "0-", &c), "'0-' is rejected");
	ok(wl_arg_cpus("cpus", "1-0", &c), "a reversed range is rejected");
	ok(wl_arg_cpus("cpus", "", &c), "an empty list is rejected");
	ok(wl_arg_cpus("cpus", "100000", &c), "a CPU that does not exist is rejected");
	ok(wl_arg_long("n", "12x", 0, 100, &l), "'12x' is not an integer");
	ok(!wl_arg_long("n", "12", 0, 100, &l) && l == 12, "'12' is");
	ok(!wl_arg_duration("d", "500ms", 100, 10000, &l) && l == 500, "500ms");
	ok(wl_arg_duration("d", "50ms", 100, 10000, &l), "a duration below the minimum is rejected");
	ok(!wl_arg_addr("addr", "::1", 1, 9000, &ss, &len), "::1 with -6");
	is_str(wl_addr_str(&ss, buf, sizeof(buf)), "[::1]:9000", "IPv6 address printed with brackets");
	ok(wl_arg_addr("addr", "::1", 0, 9000, &ss, &len), "::1 without -6 is rejected");
	ok(wl_arg_addr("addr", "localhost", 0, 9000, &ss, &len), "names are not looked up");
	ok(!wl_arg_addr("addr", NULL, 0, 7, &ss, &len), "no address: the wildcard");
	is_str(wl_addr_str(&ss, buf, sizeof(buf)), "0.0.0.0:7", "wildcard printed");
}

static void test_json(void)
{
	struct wl_errs e;
	struct json_object *o;
	char tmp[32];

	is_str(json_object_to_json_string(o = wl_jdouble(1.5)), "1.5", "1.5 printed short");
	json_object_put(o);
	is_str(json_object_to_json_string(o = wl_jdouble(2.0)), "2", "2.0 printed as 2");
	json_object_put(o);
	is_str(json_object_to_json_string(o = wl_jdouble(0.0004)), "0", "rounded to 3 decimals");
	json_object_put(o);
	memset(&e, 0, sizeof(e));
	wl_errs_add(&e, ENOBUFS);
	wl_errs_add(&e, ENOBUFS);
	wl_errs_add(&e, ECONNREFUSED);
	wl_errs_add(&e, 5000);
	is_int(wl_errs_total(&e), 4, "errors total");
	o = wl_errs_json(&e);
	is_str(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
	       "{\"ENOBUFS\":2,\"ECONNREFUSED\":1,\"other\":1}", "errors by name, in errno order");
	json_object_put(o);
	is_str(wl_errno_name(EAGAIN, tmp, sizeof(tmp)), "EAGAIN", "EAGAIN named");
	is_str(wl_errno_name(150, tmp, sizeof(tmp)), "errno 150", "unknown errno numbered");
}

int main(void)
{
	log_init("wl-hist", 0, LOG_CRIT);
	test_buckets();
	test_percentiles();
	test_options();
	test_json();
	return done_testing();
}
