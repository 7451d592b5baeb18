/* wl-rxbatch.c: unit tests of the servers' receive batching (one datagram at a time, or batches). */
#include "tap.h"
#include "wl.h"

/* feed N receives that each return `got`, asking what next() says */
static void feed(struct wl_rxbatch *b, int n, int got, unsigned *asked_one)
{
	int i;

	for (i = 0; i < n; i++) {
		unsigned ask = wl_rxbatch_next(b, 64);

		if (ask == 1)
			(*asked_one)++;
		wl_rxbatch_saw(b, ask, ask == 1 ? 1 : got);
	}
}

int main(void)
{
	struct wl_rxbatch b = { 0 };
	unsigned ones = 0, i;

	is_int(wl_rxbatch_next(&b, 64), 64, "a fresh server asks for a whole batch");
	for (i = 1; i < WL_RXBATCH_ONES; i++)
		wl_rxbatch_saw(&b, 64, 1);
	is_int(wl_rxbatch_next(&b, 64), 64, "15 batches of one: still batches");
	wl_rxbatch_saw(&b, 64, 3);
	for (i = 1; i < WL_RXBATCH_ONES; i++)
		wl_rxbatch_saw(&b, 64, 1);
	is_int(wl_rxbatch_next(&b, 64), 64, "a batch of three starts the count again");
	wl_rxbatch_saw(&b, 64, 1);
	is_int(wl_rxbatch_next(&b, 64), 1, "the 16th batch of one in a row: one at a time");

	/* one at a time: every 64th receive probes with a batch */
	ones = 0;
	feed(&b, 640, 1, &ones);
	is_int(ones, 630, "in 640 receives one at a time, 10 probe with a batch");
	ok(b.single, "probes that find one datagram keep it one at a time");
	wl_rxbatch_saw(&b, 64, -1);
	ok(b.single, "a receive that brought nothing changes nothing");

	/* a probe that finds a queue goes back to batches */
	ones = 0;
	for (i = 0; i < 64 && wl_rxbatch_next(&b, 64) == 1; i++)
		wl_rxbatch_saw(&b, 1, 1);
	ok(i < 64, "a probe comes within 64 receives (after %u)", i);
	wl_rxbatch_saw(&b, 64, 7);
	ok(!b.single, "a probe that found 7 queued goes back to batches");
	is_int(wl_rxbatch_next(&b, 64), 64, "and the next receive asks for a batch");
	for (i = 1; i < 2 * WL_RXBATCH_ONES; i++)
		wl_rxbatch_saw(&b, 64, 1);
	is_int(wl_rxbatch_next(&b, 64), 64, "after a probe found a queue, 31 batches of one are not enough");
	wl_rxbatch_saw(&b, 64, 1);
	is_int(wl_rxbatch_next(&b, 64), 1, "32 are");
	for (i = 0; i < 20; i++) {	/* a queue each time it probes */
		while (wl_rxbatch_next(&b, 64) == 1)
			wl_rxbatch_saw(&b, 1, 1);
		wl_rxbatch_saw(&b, 64, 5);
		while (wl_rxbatch_next(&b, 64) == 64 && b.ones + 1 < WL_RXBATCH_ONES_MAX)
			wl_rxbatch_saw(&b, 64, 1);
	}
	is_int(b.need, WL_RXBATCH_ONES_MAX, "the run it takes doubles up to %d", WL_RXBATCH_ONES_MAX);
	b = (struct wl_rxbatch){ .single = 0, .need = 64 };
	feed(&b, 100, 20, &ones);
	is_int(ones, 0, "a server that keeps finding queues never asks for one");
	ok(b.receives == 100 && b.singles == 0, "receives counted (%llu, %llu of one)",
	   (unsigned long long)b.receives, (unsigned long long)b.singles);
	return done_testing();
}
