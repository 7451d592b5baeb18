/* orch-stats.c (fuzz): stats_compare, Mann-Whitney and change points on arbitrary values (NaN, inf, huge, ties). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "stats/changepoint.h"
#include "stats/stats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	double v[128];
	size_t n = size / sizeof(double), na;
	struct stats_cmp c;
	struct stats_mwu m;
	struct cp_result r;
	struct cp_opts o = CP_OPTS_INIT;

	if (n < 1 || n > 128)
		return 0;
	memcpy(v, data, n * sizeof(double));
	na = data[0] % n;
	stats_compare(v, na, v + na, n - na, 1.0, &c);
	stats_compare_points(v, na, v + na, n - na, &c);
	stats_mwu(v, na, v + na, n - na, &m);
	stats_mwu_normal(v, na, v + na, n - na, &m);
	(void)stats_hodges_lehmann(v, na, v + na, n - na);
	(void)stats_claim_check(v[0], v[n - 1], -1, 1);
	if (cp_detect(v, n, &o, &r) == 0)
		cp_result_free(&r);
	return 0;
}
