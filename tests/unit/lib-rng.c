/* lib-rng.c: splitmix64 and xoshiro256** give the published streams (job orders depend on them never changing). */
#include "rng.h"
#include "tap.h"

int main(void)
{
	uint64_t x = 0, s[4];

	ok(splitmix64(&x) == 0xe220a8397b1dcdafULL, "splitmix64 from 0: its reference first value");
	ok(x == 0x9e3779b97f4a7c15ULL, "and the state advanced by the golden gamma");
	xoshiro_seed(s, 0);
	ok(xoshiro_next(s) == 0x99ec5f36cb75f2b4ULL && xoshiro_next(s) == 0xbf6e1f784956452aULL &&
	   xoshiro_next(s) == 0x1a5f849d4933e6e0ULL, "xoshiro256** seeded with 0: the first three values");
	xoshiro_seed(s, 12345);
	ok(xoshiro_next(s) >> 63 == 1 && xoshiro_next(s) >> 63 == 0,
	   "seed 12345: the top bits the job order draws (1, 0: BAAB ABBA)");
	return done_testing();
}
