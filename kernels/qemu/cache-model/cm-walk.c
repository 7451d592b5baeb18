/*
 * cm-walk: a validation program of klab's cache model (docs/cache-model.md).
 * Walks an array of SIZE bytes with a stride of one cache line, PASSES times,
 * inside one window (after one pass outside it that faults the pages in and
 * warms the caches), and prints `ops N` (the loads inside the window). In the
 * model, a walk of an array that fits L2 but not L1d misses L1d once per load
 * and L2 almost never; one that does not fit L2 misses L2 once per load; one
 * larger than the LLC misses it once per load (LRU, cyclic walk).
 * Usage: cm-walk SIZE_KIB PASSES
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "cache-mark.h"

#define LINE 64

static unsigned long walk(volatile const unsigned char *a, size_t size)
{
	unsigned long sum = 0;
	size_t i;

	for (i = 0; i < size; i += LINE)
		sum += a[i];
	return sum;
}

int main(int argc, char **argv)
{
	size_t size, p, passes;
	unsigned char *a;
	unsigned long sum = 0;

	if (argc != 3 || (size = strtoul(argv[1], NULL, 10) << 10) == 0 ||
	    (passes = strtoul(argv[2], NULL, 10)) == 0) {
		fprintf(stderr, "usage: cm-walk SIZE_KIB PASSES\n");
		return 2;
	}
	a = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (a == MAP_FAILED) {
		perror("cm-walk: mmap");
		return 1;
	}
	for (p = 0; p < size; p += 4096)
		a[p] = (unsigned char)p;	/* a page of its own each (no shared zero page) */
	sum += walk(a, size);
	cache_mark_start();
	for (p = 0; p < passes; p++)
		sum += walk(a, size);
	cache_mark_stop();
	printf("ops %zu\nsum %lu\n", passes * (size / LINE), sum);
	return 0;
}
