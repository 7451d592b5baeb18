/* agent-pmu.c: unit tests of the hardware counters: PMU detection on made-up sysfs trees, perf stat -A fixtures of machines with a PMU, the metrics from them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent.h"
#include "buf.h"
#include "log.h"
#include "monitor.h"
#include "parse.h"
#include "tap.h"
#include "util.h"

static char *fixture(const char *name, size_t *len)
{
	struct buf b = BUF_INIT;
	char *p = xasprintf("%s/perf-stat/%s", tap_data_dir(), name);

	if (buf_read_file(&b, p))
		die("missing fixture '%s'", p);
	free(p);
	return buf_detach(&b, len);
}

static void rows_of(const char *name, struct perf_stat_row **r, size_t *n)
{
	size_t len;
	char *t = fixture(name, &len);

	if (parse_perf_stat(t, len, name, r, n))
		die("fixture '%s' does not parse", name);
	free(t);
}

/* The metric NAME of RESULT, NAN when absent. */
static double metric(struct json_object *result, const char *name)
{
	struct json_object *a, *v;

	if (!json_object_object_get_ex(result, "metrics", &a))
		return NAN;
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		struct json_object *m = json_object_array_get_idx(a, i);
		if (json_object_object_get_ex(m, "name", &v) && !strcmp(json_object_get_string(v), name) &&
		    json_object_object_get_ex(m, "value", &v))
			return json_object_get_double(v);
	}
	return NAN;
}

/* Whether a note of PMU contains TEXT. */
static int has_note(struct json_object *pmu, const char *text)
{
	struct json_object *a;

	if (!json_object_object_get_ex(pmu, "notes", &a))
		return 0;
	for (size_t i = 0; i < json_object_array_length(a); i++)
		if (strstr(json_object_get_string(json_object_array_get_idx(a, i)), text))
			return 1;
	return 0;
}

static double scaled(struct json_object *pmu, const char *key)
{
	struct json_object *s, *v;

	return json_object_object_get_ex(pmu, "scaled", &s) && json_object_object_get_ex(s, key, &v) ?
		json_object_get_double(v) : NAN;
}

static void test_parse_per_cpu(void)
{
	struct perf_stat_row *r;
	size_t n;

	rows_of("intel-skylake-A.txt", &r, &n);
	is_int(n, 11 * 4, "intel -A: 11 events on 4 CPUs");
	is_int(r[0].cpu, 0, "the CPU column is read");
	is_str(r[0].event, "cpu-clock", "and the event after it");
	is_int(r[23].cpu, 3, "CPU3");
	is_str(r[23].event, "cycles", "cycles of CPU3");
	is_double(r[23].value, 200000000, 0, "its value as perf printed it (scaled)");
	is_double(r[23].running_pct, 80.00, 1e-9, "its running share");
	perf_stat_rows_free(r, n);

	rows_of("intel-hybrid-A.txt", &r, &n);
	is_str(r[30].event, "cpu_core/cycles/", "hybrid: the PMU stays in the event's name");
	ok(!r[59].counted && r[59].supported && r[59].cpu == 5,
	   "hybrid: <not counted> on CPU 5 is supported and not counted");
	perf_stat_rows_free(r, n);

	rows_of("arm-cortex-a72.txt", &r, &n);
	is_int(r[0].cpu, -1, "without -A a row has no CPU");
	ok(!r[3].supported && !r[3].counted, "LLC-load-misses <not supported>");
	ok(r[4].supported && !r[4].counted, "branch-misses <not counted>");
	perf_stat_rows_free(r, n);

	ok(parse_perf_stat("CPUx,1,,cycles\n", 15, "bad", &r, &n) < 0, "CPUx is a malformed value");
	ok(parse_perf_stat("CPU5000,1,,cycles\n", 18, "bad", &r, &n) < 0, "CPU5000 is out of range");
	ok(parse_perf_stat("CPU1,1,,cycles,10,101.5\n", 24, "bad", &r, &n) < 0, "a running share above 100%%");
}

static void test_sum(void)
{
	struct perf_stat_row *r;
	struct perf_hw_count c[PERF_HW_N];
	size_t n;

	rows_of("intel-skylake-A.txt", &r, &n);
	perf_hw_sum(r, n, NULL, c);
	is_double(c[PERF_HW_CYCLES].value, 4.5e9, 0, "intel: cycles over every CPU");
	is_int(c[PERF_HW_CYCLES].rows, 4, "four rows");
	is_double(c[PERF_HW_CYCLES].min_running_pct, 79.98, 1e-9, "multiplexed: lowest share 79.98%%");
	is_double(c[PERF_HW_INSN].min_running_pct, 100, 0, "instructions on its fixed counter: 100%%");
	perf_hw_release(c);
	perf_hw_sum(r, n, "0-1", c);
	is_double(c[PERF_HW_CYCLES].value, 4.0e9, 0, "CPU set 0-1: CPU0 and CPU1 only");
	is_double(c[PERF_HW_INSN].value, 4.4e9, 0, "instructions of 0-1");
	perf_hw_release(c);
	perf_hw_sum(r, n, "3,0", c);
	is_double(c[PERF_HW_CYCLES].value, 2.3e9, 0, "CPU set 3,0");
	perf_hw_release(c);
	perf_stat_rows_free(r, n);

	rows_of("intel-hybrid-A.txt", &r, &n);
	perf_hw_sum(r, n, NULL, c);
	is_double(c[PERF_HW_CYCLES].value, 8e9, 0, "hybrid: cpu_core and cpu_atom cycles summed");
	is_int(c[PERF_HW_CYCLES].rows, 6, "from six rows");
	ok(c[PERF_HW_L1D_MISSES].missing && strstr(c[PERF_HW_L1D_MISSES].missing, "cpu_atom/L1-dcache-load-misses/") &&
	   strstr(c[PERF_HW_L1D_MISSES].missing, "CPU 5 <not counted>"),
	   "hybrid: L1d with a part not counted is named as missing: %s", c[PERF_HW_L1D_MISSES].missing);
	is_double(c[PERF_HW_LLC_MISSES].min_running_pct, 66.67, 1e-9, "LLC: the atom's 66.67%% is the lowest");
	perf_hw_release(c);
	perf_hw_sum(r, n, "0-3", c);
	ok(!c[PERF_HW_L1D_MISSES].missing && c[PERF_HW_L1D_MISSES].value == 40e6,
	   "hybrid: the core CPUs' set has its L1d misses");
	perf_hw_release(c);
	perf_stat_rows_free(r, n);

	/* a perf that prints each PMU's event on every CPU: the other PMU's CPUs are <not counted> */
	rows_of("intel-hybrid-all-A.txt", &r, &n);
	is_int(n, 30 + 6 * 12, "hybrid, every event on every CPU: 102 rows");
	is_int(perf_stat_drop_foreign(r, &n), 6 * 6, "36 rows of the other PMU's CPUs dropped (2 + 4 per event)");
	is_int(n, 66, "66 left: the rows of intel-hybrid-A.txt, cpu_atom's <not counted> L1d on CPU 5 among them");
	perf_hw_sum(r, n, NULL, c);
	is_double(c[PERF_HW_CYCLES].value, 8e9, 0, "hybrid, every CPU: the same cycles");
	is_int(c[PERF_HW_CYCLES].rows, 6, "from the six rows that counted");
	ok(c[PERF_HW_L1D_MISSES].missing && !strcmp(c[PERF_HW_L1D_MISSES].missing,
						      "cpu_atom/L1-dcache-load-misses/ on CPU 5 <not counted>"),
	   "the real gap stays, named by the atom's row: %s", c[PERF_HW_L1D_MISSES].missing);
	perf_hw_release(c);
	perf_stat_rows_free(r, n);
	rows_of("intel-hybrid-A.txt", &r, &n);
	is_int(perf_stat_drop_foreign(r, &n), 0, "a PMU's CPUs only: nothing dropped");
	perf_stat_rows_free(r, n);
	rows_of("vm-no-pmu-A.txt", &r, &n);
	is_int(perf_stat_drop_foreign(r, &n), 0, "no PMU names in the events: nothing dropped");
	perf_hw_sum(r, n, NULL, c);
	ok(c[PERF_HW_CYCLES].missing && !strcmp(c[PERF_HW_CYCLES].missing, "cycles on CPU 0 <not supported>") &&
	   !c[PERF_HW_INSN].rows, "this VM (recorded): cycles <not supported>, no instructions");
	perf_hw_release(c);
	perf_stat_rows_free(r, n);

	rows_of("arm-cortex-a72.txt", &r, &n);
	perf_hw_sum(r, n, "0", c);
	is_int(c[PERF_HW_CYCLES].rows, 0, "a CPU set of rows without a CPU: nothing");
	perf_hw_release(c);
	perf_stat_rows_free(r, n);
}

static void test_metrics(void)
{
	struct perf_stat_row *r;
	struct json_object *res, *pmu;
	size_t n;

	rows_of("intel-skylake-A.txt", &r, &n);
	res = json_object_new_object();
	pmu = json_object_new_object();
	perf_hw_metrics(res, pmu, r, n, NULL, 1e6);
	perf_hw_metrics(res, pmu, r, n, "0-1", 1e6);
	is_double(metric(res, "cycles_per_op"), 4500, 1e-9, "intel: cycles_per_op");
	is_double(metric(res, "hw_insn_per_op"), 4600, 1e-9, "hw_insn_per_op");
	is_double(metric(res, "ipc"), 4.6 / 4.5, 1e-12, "ipc");
	is_double(metric(res, "cache_misses_per_op"), 12, 1e-9, "cache_misses_per_op");
	is_double(metric(res, "llc_load_misses_per_op"), 4, 1e-9, "llc_load_misses_per_op");
	is_double(metric(res, "l1d_load_misses_per_op"), 60, 1e-9, "l1d_load_misses_per_op");
	is_double(metric(res, "branch_misses_per_op"), 6, 1e-9, "branch_misses_per_op");
	is_double(metric(res, "cpus0-1.cycles_per_op"), 4000, 1e-9, "the CPU set's cycles_per_op");
	is_double(metric(res, "cpus0-1.ipc"), 1.1, 1e-12, "the CPU set's ipc");
	ok(isnan(metric(res, "insn_per_op")), "the icount lab's insn_per_op is not written");
	is_double(scaled(pmu, "cycles"), 79.98, 1e-9, "multiplexed cycles flagged with their share");
	is_double(scaled(pmu, "cpus0-1.LLC-load-misses"), 59.99, 1e-9, "and the set's");
	ok(isnan(scaled(pmu, "instructions")), "instructions are not flagged");
	ok(has_note(pmu, "CPUs all: cycles multiplexed, counted 79.98% of the time and scaled by perf"),
	   "a note says it");
	json_object_put(res);
	json_object_put(pmu);
	perf_stat_rows_free(r, n);

	rows_of("intel-hybrid-A.txt", &r, &n);
	res = json_object_new_object();
	pmu = json_object_new_object();
	perf_hw_metrics(res, pmu, r, n, NULL, 2e6);
	perf_hw_metrics(res, pmu, r, n, "0-3", 2e6);
	is_double(metric(res, "cycles_per_op"), 4000, 1e-9, "hybrid: cycles_per_op from both PMUs");
	is_double(metric(res, "ipc"), 1.5, 1e-12, "hybrid: ipc");
	ok(isnan(metric(res, "l1d_load_misses_per_op")), "hybrid: no L1d figure with a part not counted (not a zero)");
	ok(has_note(pmu, "CPUs all: cpu_atom/L1-dcache-load-misses/ on CPU 5 <not counted>, so no l1d_load_misses_per_op"),
	   "and a note names the row");
	is_double(metric(res, "cpus0-3.l1d_load_misses_per_op"), 20, 1e-9, "the core CPUs' set has it");
	is_double(metric(res, "cpus0-3.cycles_per_op"), 3000, 1e-9, "and its cycles");
	json_object_put(res);
	json_object_put(pmu);
	perf_stat_rows_free(r, n);

	rows_of("arm-cortex-a72-A.txt", &r, &n);
	res = json_object_new_object();
	pmu = json_object_new_object();
	perf_hw_metrics(res, pmu, r, n, NULL, 4e6);
	is_double(metric(res, "cycles_per_op"), 2000, 1e-9, "arm: cycles_per_op");
	is_double(metric(res, "ipc"), 1, 1e-12, "arm: ipc");
	ok(isnan(metric(res, "llc_load_misses_per_op")), "arm: no LLC figure");
	ok(has_note(pmu, "LLC-load-misses on CPU 0 <not supported>, so no llc_load_misses_per_op"),
	   "arm: a note says the PMU does not support it");
	is_double(metric(res, "l1d_load_misses_per_op"), 2.5, 1e-9, "arm: L1d misses per op");
	ok(!json_object_object_get_ex(pmu, "scaled", NULL) || !json_object_object_length(
		   json_object_object_get(pmu, "scaled")), "arm: nothing multiplexed, nothing flagged");
	json_object_put(res);
	json_object_put(pmu);
	res = json_object_new_object();
	pmu = json_object_new_object();
	perf_hw_metrics(res, pmu, r, n, NULL, 0);
	ok(isnan(metric(res, "cycles_per_op")) && has_note(pmu, "counted no operations"),
	   "no operations: no per-op figure, and a note");
	is_double(metric(res, "ipc"), 1, 1e-12, "ipc needs no operations");
	json_object_put(res);
	json_object_put(pmu);
	perf_stat_rows_free(r, n);
}

static void put(const char *root, const char *rel, const char *text)
{
	char *p = xasprintf("%s/%s", root, rel), *s;

	for (s = p + strlen(root) + 1; (s = strchr(s, '/')); s++) {
		*s = 0;
		mkdir(p, 0755);
		*s = '/';
	}
	if (write_file_atomic(p, text, strlen(text), 0644))
		die("cannot write '%s'", p);
	free(p);
}

static char *tree(const char *name, const char *const *devs, const char *paranoid, const char *capeff)
{
	char *root = xasprintf("%s/pmu-%s", tap_scratch_dir(), name);

	mkdir(root, 0755);
	for (; *devs; devs++) {
		char *rel = xasprintf("sys/bus/event_source/devices/%s/type", *devs);
		put(root, rel, "4\n");
		free(rel);
	}
	if (paranoid)
		put(root, "proc/sys/kernel/perf_event_paranoid", paranoid);
	if (capeff) {
		char *st = xasprintf("Name:\tklab-agent\nCapInh:\t0000000000000000\nCapEff:\t%s\n", capeff);
		put(root, "proc/self/status", st);
		free(st);
	}
	return root;
}

static void test_detect(void)
{
	static const char *const none[] = { "breakpoint", "msr", "software", "tracepoint", "uprobe", NULL };
	static const char *const intel[] = { "cpu", "software", "tracepoint", "msr", NULL };
	static const char *const hybrid[] = { "cpu_core", "cpu_atom", "software", NULL };
	static const char *const arm[] = { "armv8_pmuv3_0", "software", NULL };
	struct pmu_info p;
	struct json_object *o;
	char *root;

	root = tree("none", none, "2\n", "000001ffffffffff");
	pmu_detect(root, &p);
	ok(!p.present && !p.usable, "no cpu event source: no PMU");
	ok(strstr(p.reason, "no hardware PMU") && strstr(p.reason, "breakpoint msr software tracepoint uprobe"),
	   "the reason lists what the machine has: %s", p.reason);
	is_int(p.paranoid, 2, "paranoid read");
	o = pmu_json(&p);
	ok(json_object_object_get_ex(o, "reason", NULL) &&
	   strstr(json_object_get_string(json_object_object_get(o, "reason")), "no hardware PMU"), "the JSON has the reason");
	json_object_put(o);
	free(root);

	root = tree("intel", intel, "2\n", "000001ffffffffff");
	pmu_detect(root, &p);
	ok(p.present && p.usable && !p.hybrid, "intel: cpu, root: usable");
	is_str(p.devices, "cpu", "devices");
	free(root);

	root = tree("intel-user", intel, "2\n", "0000000000000000");
	pmu_detect(root, &p);
	ok(p.present && !p.usable && strstr(p.reason, "perf_event_paranoid is 2") &&
	   strstr(p.reason, "CAP_PERFMON"), "intel, no capability, paranoid 2: present, not usable: %s", p.reason);
	free(root);

	root = tree("intel-perfmon", intel, "2\n", "0000004000000000");
	pmu_detect(root, &p);
	ok(p.usable, "CAP_PERFMON alone is enough");
	free(root);

	root = tree("intel-open", intel, "-1\n", NULL);
	pmu_detect(root, &p);
	ok(p.usable && p.paranoid == -1, "paranoid -1: usable without a capability");
	free(root);

	root = tree("hybrid", hybrid, "0\n", NULL);
	pmu_detect(root, &p);
	ok(p.usable && p.hybrid, "hybrid: two CPU PMUs");
	is_str(p.devices, "cpu_atom cpu_core", "both named, sorted");
	free(root);

	root = tree("arm", arm, "1\n", "000001ffffffffff");
	pmu_detect(root, &p);
	ok(p.usable, "arm: armv8_pmuv3_0 is a CPU PMU");
	is_str(p.devices, "armv8_pmuv3_0", "named");
	free(root);

	root = xasprintf("%s/pmu-missing", tap_scratch_dir());
	pmu_detect(root, &p);
	ok(!p.present && strstr(p.reason, "cannot read") && p.paranoid == -9, "no sysfs at all: said so");
	free(root);
}

int main(void)
{
	log_init("agent-pmu", 0, LOG_CRIT);	/* expected errors stay quiet */
	test_parse_per_cpu();
	test_sum();
	test_metrics();
	test_detect();
	return done_testing();
}
