/*
 * cm-share: a validation program of klab's cache model (docs/cache-model.md).
 * Two threads, pinned to CPUs 0 and 1, each store N times to a counter of its
 * own, and after each store execute `pause` (the x86 spin-wait hint; under
 * TCG it ends the vCPU's turn, so the two vCPUs alternate store by store).
 * With `shared` the two counters are in one cache line: every store finds the
 * line taken by the other CPU's last store, one coherence miss per store.
 * With `padded` they are 64 bytes apart: no coherence miss. Prints `ops N`
 * (the stores inside the window: 2 N).
 * Usage: cm-share shared|padded N
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache-mark.h"

static struct {
	volatile unsigned long c[16];	/* c[0] and c[1] (shared) or c[0] and c[8] (padded) */
} __attribute__((aligned(64))) counters;

static volatile int ready, go, done;
static unsigned long n;
static int stride;

struct arg {
	int cpu;
};

static void pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	if (sched_setaffinity(0, sizeof(s), &s) < 0) {
		perror("cm-share: sched_setaffinity");
		exit(1);
	}
}

static void *worker(void *p)
{
	struct arg *a = p;
	volatile unsigned long *mine = &counters.c[a->cpu * stride];
	unsigned long i;

	pin(a->cpu);
	__atomic_add_fetch(&ready, 1, __ATOMIC_SEQ_CST);
	while (!go)
		__builtin_ia32_pause();
	for (i = 0; i < n; i++) {
		*mine = i;
		__builtin_ia32_pause();
	}
	__atomic_add_fetch(&done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	struct arg a0 = { 0 }, a1 = { 1 };

	if (argc != 3 || (strcmp(argv[1], "shared") && strcmp(argv[1], "padded")) ||
	    (n = strtoul(argv[2], NULL, 10)) == 0) {
		fprintf(stderr, "usage: cm-share shared|padded N\n");
		return 2;
	}
	stride = !strcmp(argv[1], "shared") ? 1 : 8;
	pin(0);
	if (pthread_create(&t, NULL, worker, &a1)) {
		fprintf(stderr, "cm-share: cannot start a thread\n");
		return 1;
	}
	while (ready < 1)
		__builtin_ia32_pause();
	cache_mark_start();
	go = 1;
	worker(&a0);
	while (done < 2)
		__builtin_ia32_pause();
	cache_mark_stop();
	pthread_join(t, NULL);
	printf("ops %lu\n", 2 * n);
	return 0;
}
