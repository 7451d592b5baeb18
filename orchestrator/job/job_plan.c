/* job_plan.c: the plan of a job: its seeded ABBA boot order and the list of its step keys. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare/compare.h"
#include "job/job.h"
#include "job/job_int.h"
#include "log.h"
#include "rng.h"
#include "stats/stats.h"
#include "strvec.h"
#include "util.h"

void job_order(int boots, int64_t seed, int fixed, char *out)
{
	uint64_t r[4];
	int n = 0;

	xoshiro_seed(r, (uint64_t)seed);
	for (int pair = 0; pair < boots; pair += 2) {
		char x = 'A', y = 'B';
		if (!fixed && (xoshiro_next(r) >> 63)) {
			x = 'B';
			y = 'A';
		}
		out[n++] = x;
		out[n++] = y;
		if (pair + 1 < boots) {
			out[n++] = fixed ? x : y;
			out[n++] = fixed ? y : x;
		}
	}
	out[n] = '\0';
}

/* The boot order of a spec, malloc'd ("ABBA..." or "BBB" for a one-sided job). */
char *spec_order(const struct job_spec *spec, int64_t seed)
{
	int boots = spec->boots;
	char *out;

	if (strlen(spec->letters) < 2) {
		out = xmalloc((size_t)boots + 1);
		memset(out, spec->letters[0] ? spec->letters[0] : 'B', (size_t)boots);
		out[boots] = '\0';
		return out;
	}
	out = xmalloc(2 * (size_t)boots + 4);
	job_order(boots, seed, !strcmp(spec->order, "fixed"), out);
	return out;
}

/*
 * Measured on the icount lab (docs/observation.md, 2026-12-07): udp_tx_dummy's
 * path with only the cpu monitor is that of a run with no monitor (0.005%);
 * nic costs 0.15% (its sysfs and /proc/net/snmp reads land in the window),
 * perf-stat 1.4% (counting software events adds work at every context
 * switch and fault), perf-profile 23%, bpftrace 65-74%. Only cpu is below
 * what an icount verdict resolves (0.01%). pmu (the hardware counters alone,
 * issue 37) measures too: the PMU counts in hardware, with no work per
 * event; where the machine has none the agent runs nothing for it. Its
 * cost on a machine with a PMU (perf stat's start, multiplexing's timer)
 * is not measured yet: no machine here has one.
 */
int monitor_observes(const char *name)
{
	return strcmp(name, "cpu") != 0 && strcmp(name, "pmu") != 0;
}

/*
 * Whether boot B (1-based) of ORDER carries observation runs: the first
 * spec->observe_boots boots of each side (docs/observation.md: an
 * explanation needs no replication across boots).
 */
static int observation_boot(const struct job_spec *spec, const char *order, size_t b)
{
	int before = 0;

	for (size_t i = 0; i + 1 < b; i++)
		before += order[i] == order[b - 1];
	return before < spec->observe_boots;
}

/*
 * The keys of boot B: deploy, verify, agent, prepare, RUNS rounds of every
 * workload (the measurement runs), in an observation boot the observation
 * runs of every workload that lists an observation monitor (one per such
 * monitor, then a bare one), restore. A plan that grows (more boots while a comparison is
 * undecided) appends boots with this, in the order spec_order() gives.
 */
static void plan_boot(struct strvec *keys, size_t b, const struct job_spec *spec, int runs, int observe)
{
	strvec_pushf(keys, "boot:%zu:deploy", b);
	strvec_pushf(keys, "boot:%zu:verify", b);
	strvec_pushf(keys, "boot:%zu:agent", b);
	strvec_pushf(keys, "boot:%zu:prepare", b);
	for (int r = 0; r < runs; r++)
		for (size_t w = 0; w < spec->n_workloads; w++)
			strvec_pushf(keys, "run:%zu:%s:%d", b, spec->workloads[w].name, r);
	for (size_t w = 0; observe && w < spec->n_workloads; w++) {
		const struct job_spec_workload *wl = &spec->workloads[w];
		size_t n = wl->monitors ? json_object_array_length(wl->monitors) : 0, observers = 0;

		for (size_t i = 0; i < n; i++) {
			const char *m = json_object_get_string(json_object_array_get_idx(wl->monitors, i));
			if (m && monitor_observes(m)) {
				strvec_pushf(keys, "obs:%zu:%s:%s", b, wl->name, m);
				observers++;
			}
		}
		if (observers)
			strvec_pushf(keys, "obs:%zu:%s:" OBSERVE_BARE, b, wl->name);
	}
	strvec_pushf(keys, "boot:%zu:restore", b);
}

int key_boot(const char *key)
{
	unsigned long n = 0;

	if (sscanf(key, "boot:%lu:", &n) == 1 || sscanf(key, "run:%lu:", &n) == 1 || sscanf(key, "obs:%lu:", &n) == 1)
		return (int)n;
	if (sscanf(key, "look:%lu", &n) == 1)
		return (int)(2 * n);
	return 0;
}

int step_boot(const char *key)
{
	return starts_with(key, "look:") ? 0 : key_boot(key);
}

int spec_looks(const struct job_spec *spec, int *min, int *max)
{
	*min = spec->boots_min;
	*max = spec->boots;
	if (!*min || strlen(spec->letters) < 2)
		return *min = 0;
	return stats_seq_looks(*min, *max, COMPARE_LOOK_STEP);
}

int job_plan(const struct job_spec *spec, int64_t seed, struct strvec *keys)
{
	int runs = spec->runs + spec->warmup_runs;
	char *order;
	int lmin, lmax, looks;

	if (!spec->n_workloads)
		return error("job spec has no workloads");
	looks = spec_looks(spec, &lmin, &lmax);
	order = spec_order(spec, seed);
	strvec_push(keys, "intake");
	for (const char *l = spec->letters; *l; l++)
		strvec_pushf(keys, "build:%c", *l);
	strvec_push(keys, "lease");
	for (size_t b = 1; b <= strlen(order); b++) {
		plan_boot(keys, b, spec, runs, observation_boot(spec, order, b));
		/* boots = MIN..MAX: a look after boot 2n, when each side has n boots (ABBA rounds) */
		if (looks && b % 2 == 0 && stats_seq_look(lmin, lmax, COMPARE_LOOK_STEP, (int)(b / 2)))
			strvec_pushf(keys, "look:%zu", b / 2);
	}
	strvec_push(keys, "release");
	strvec_push(keys, "compare");
	strvec_push(keys, "report");
	strvec_push(keys, "notify");
	free(order);
	return 0;
}
