/* sysinfo.c: `klab-agent sysinfo`, the facts about a test machine that a result depends on. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "agent.h"
#include "jsonh.h"
#include "log.h"
#include "run.h"
#include "strvec.h"
#include "util.h"

static void add_str(struct json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, v ? json_object_new_string(v) : NULL);
}

static void add_file(struct json_object *o, const char *key, const char *path)
{
	struct buf b = BUF_INIT;

	if (!read_small_file(path, &b))
		add_str(o, key, b.buf);
	else
		add_str(o, key, NULL);
	buf_release(&b);
}

static long file_long(const char *path, long def)
{
	struct buf b = BUF_INIT;
	long v = def;

	if (!read_small_file(path, &b) && parse_long(b.buf, -1, 1L << 40, &v))
		v = def;
	buf_release(&b);
	return v;
}

/*
 * The GNU build id of the running kernel from /sys/kernel/notes: a
 * sequence of ELF notes (namesz, descsz, type, name, desc, each padded to
 * 4 bytes); type 3 with name "GNU" is NT_GNU_BUILD_ID.
 */
static char *kernel_build_id(void)
{
	struct buf b = BUF_INIT;
	size_t off = 0;
	char *ret = NULL;

	if (read_small_file("/sys/kernel/notes", &b))
		goto out;
	/* read_small_file trimmed trailing "white space" bytes; notes are binary, re-read raw */
	buf_reset(&b);
	if (buf_read_file(&b, "/sys/kernel/notes"))
		goto out;
	while (off + 12 <= b.len) {
		uint32_t namesz, descsz, type;
		size_t name_off, desc_off;

		memcpy(&namesz, b.buf + off, 4);
		memcpy(&descsz, b.buf + off + 4, 4);
		memcpy(&type, b.buf + off + 8, 4);
		name_off = off + 12;
		desc_off = name_off + ((namesz + 3) & ~3u);
		if (namesz > b.len || descsz > b.len || desc_off + descsz > b.len)
			break;
		if (type == 3 && namesz == 4 && !memcmp(b.buf + name_off, "GNU", 4)) {
			size_t i;
			ret = xmalloc(2 * descsz + 1);
			for (i = 0; i < descsz; i++)
				sprintf(ret + 2 * i, "%02x", (unsigned char)b.buf[desc_off + i]);
			ret[2 * descsz] = 0;
			break;
		}
		off = desc_off + ((descsz + 3) & ~3u);
	}
out:
	buf_release(&b);
	return ret;
}

static int count_prefixed(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (starts_with(e->d_name, prefix))
			n++;
	closedir(d);
	return n;
}

static struct json_object *cpu_info(void)
{
	struct json_object *o = json_object_new_object();
	struct buf b = BUF_INIT;
	char *model = NULL;
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (!buf_read_file(&b, "/proc/cpuinfo")) {
		const char *p = strstr(b.buf, "model name");
		if (p && (p = strchr(p, ':'))) {
			const char *e = strchr(p, '\n');
			p++;
			while (*p == ' ' || *p == '\t')
				p++;
			model = e ? xstrndup(p, e - p) : xstrdup(p);
		}
	}
	add_str(o, "model", model);
	json_object_object_add(o, "count", json_object_new_int64(n));
	add_file(o, "smt", "/sys/devices/system/cpu/smt/active");
	json_object_object_add(o, "numa_nodes",
			       json_object_new_int(count_prefixed("/sys/devices/system/node", "node")));
	add_file(o, "governor", "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
	free(model);
	buf_release(&b);
	return o;
}

static long meminfo_kb(const char *key)
{
	struct buf b = BUF_INIT;
	long v = -1;

	if (!buf_read_file(&b, "/proc/meminfo")) {
		const char *p = strstr(b.buf, key);
		if (p)
			v = strtol(p + strlen(key), NULL, 10);
	}
	buf_release(&b);
	return v;
}

static struct json_object *queue_masks(const char *nic, const char *prefix, const char *file)
{
	struct json_object *a = json_object_new_array();
	char *dir = xasprintf("/sys/class/net/%s/queues", nic);
	int i, n = count_prefixed(dir, prefix);

	for (i = 0; i < n; i++) {
		struct buf b = BUF_INIT;
		char *p = xasprintf("%s/%s%d/%s", dir, prefix, i, file);
		json_object_array_add(a, read_small_file(p, &b) ? NULL : json_object_new_string(b.buf));
		buf_release(&b);
		free(p);
	}
	free(dir);
	return a;
}

static struct json_object *nic_irqs(const char *nic)
{
	struct json_object *a = json_object_new_array();
	char *dir = xasprintf("/sys/class/net/%s/device/msi_irqs", nic);
	DIR *d = opendir(dir);
	struct dirent *e;

	if (d) {
		while ((e = readdir(d))) {
			long irq;
			if (!parse_long(e->d_name, 0, 1 << 24, &irq))
				json_object_array_add(a, json_object_new_int64(irq));
		}
		closedir(d);
	}
	free(dir);
	return a;
}

static struct json_object *nics(void)
{
	struct json_object *o = json_object_new_object();
	DIR *d = opendir("/sys/class/net");
	struct dirent *e;

	if (!d)
		return o;
	while ((e = readdir(d))) {
		struct json_object *n;
		char *p, link[512];
		ssize_t len;

		if (e->d_name[0] == '.' || !strcmp(e->d_name, "lo"))
			continue;
		n = json_object_new_object();
		p = xasprintf("/sys/class/net/%s/device/driver", e->d_name);
		len = readlink(p, link, sizeof(link) - 1);
		free(p);
		if (len > 0) {
			link[len] = 0;
			add_str(n, "driver", strrchr(link, '/') ? strrchr(link, '/') + 1 : link);
		} else {
			/* virtual devices: the kind from uevent (veth, bridge...) */
			struct buf b = BUF_INIT;
			p = xasprintf("/sys/class/net/%s/uevent", e->d_name);
			if (!read_small_file(p, &b) && strstr(b.buf, "DEVTYPE=")) {
				const char *t = strstr(b.buf, "DEVTYPE=") + 8;
				char *nl = strchr(t, '\n');
				char *kind = nl ? xstrndup(t, nl - t) : xstrdup(t);
				add_str(n, "driver", kind);
				free(kind);
			} else {
				add_str(n, "driver", NULL);
			}
			buf_release(&b);
			free(p);
		}
		p = xasprintf("/sys/class/net/%s/speed", e->d_name);
		json_object_object_add(n, "speed_mbps", json_object_new_int64(file_long(p, -1)));
		free(p);
		p = xasprintf("/sys/class/net/%s/mtu", e->d_name);
		json_object_object_add(n, "mtu", json_object_new_int64(file_long(p, -1)));
		free(p);
		p = xasprintf("/sys/class/net/%s/queues", e->d_name);
		json_object_object_add(n, "tx_queues", json_object_new_int(count_prefixed(p, "tx-")));
		json_object_object_add(n, "rx_queues", json_object_new_int(count_prefixed(p, "rx-")));
		free(p);
		json_object_object_add(n, "xps_cpus", queue_masks(e->d_name, "tx-", "xps_cpus"));
		json_object_object_add(n, "rps_cpus", queue_masks(e->d_name, "rx-", "rps_cpus"));
		json_object_object_add(n, "irqs", nic_irqs(e->d_name));
		json_object_object_add(o, e->d_name, n);
	}
	closedir(d);
	return o;
}

static const char *const sysctls[] = {
	"net.core.rmem_max", "net.core.wmem_max", "net.core.rmem_default", "net.core.wmem_default",
	"net.core.netdev_max_backlog", "net.core.netdev_budget", "net.core.busy_poll",
	"net.core.busy_read", "net.core.default_qdisc", "net.core.somaxconn",
	"net.ipv4.udp_mem", "net.ipv4.udp_rmem_min", "net.ipv4.udp_wmem_min",
};

static struct json_object *sysctl_values(void)
{
	struct json_object *o = json_object_new_object();
	size_t i;

	for (i = 0; i < ARRAY_SIZE(sysctls); i++) {
		char *p = xasprintf("/proc/sys/%s", sysctls[i]), *q;
		for (q = p + 10; *q; q++)
			if (*q == '.')
				*q = '/';
		add_file(o, sysctls[i], p);
		free(p);
	}
	return o;
}

static struct json_object *tools(void)
{
	static const struct { const char *name; const char *arg; } t[] = {
		{ "perf", "--version" }, { "mpstat", "-V" }, { "bpftrace", "--version" },
		{ "ethtool", "--version" }, { "kexec", "--version" },
	};
	struct json_object *o = json_object_new_object();
	size_t i;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		char *path = run_which(t[i].name);
		const char *argv[] = { t[i].name, t[i].arg, NULL };
		struct run_cmd c = RUN_CMD_INIT;

		if (!path) {
			add_str(o, t[i].name, NULL);
			continue;
		}
		c.argv = argv;
		c.timeout_ms = 5000;
		c.out_cap = 4096;
		if (!run_command(&c)) {
			struct buf *b = c.out.len ? &c.out : &c.err;
			char *nl = strchr(b->buf, '\n');
			if (nl)
				*nl = 0;
			add_str(o, t[i].name, b->buf);
		} else {
			add_str(o, t[i].name, "present, version unknown");
		}
		run_release(&c);
		free(path);
	}
	return o;
}

/* --- the PMU ---------------------------------------------------------------------- */

/* A CPU PMU's name in /sys/bus/event_source/devices: x86 (Intel, AMD), a hybrid Intel's two, ARM's. */
static int pmu_name(const char *n)
{
	return !strcmp(n, "cpu") || !strcmp(n, "cpu_core") || !strcmp(n, "cpu_atom") || starts_with(n, "armv8_") ||
	       starts_with(n, "armv7_");
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Whether CapEff in ROOT/proc/self/status has CAP_PERFMON (38) or CAP_SYS_ADMIN (21). */
static int may_count_system_wide(const char *root)
{
	struct buf b = BUF_INIT;
	char *path = xasprintf("%s/proc/self/status", root);
	const char *p;
	unsigned long long caps = 0;
	int ret = 0;

	if (!buf_read_file(&b, path) && (p = strstr(b.buf, "\nCapEff:")))
		ret = sscanf(p + 8, "%llx", &caps) == 1 && (caps & (1ULL << 38 | 1ULL << 21));
	buf_release(&b);
	free(path);
	return ret;
}

void pmu_detect(const char *root, struct pmu_info *p)
{
	char *dir = xasprintf("%s/sys/bus/event_source/devices", root), *path;
	struct strvec all = STRVEC_INIT, cpu = STRVEC_INIT;
	struct buf b = BUF_INIT;
	DIR *d = opendir(dir);
	struct dirent *e;
	int priv;

	memset(p, 0, sizeof(*p));
	p->paranoid = -9;
	path = xasprintf("%s/proc/sys/kernel/perf_event_paranoid", root);
	if (!read_small_file(path, &b) && parse_long(b.buf, -1, 4, &p->paranoid))
		p->paranoid = -9;
	free(path);
	buf_release(&b);
	if (!d) {
		snprintf(p->reason, sizeof(p->reason), "cannot read %s (%s): the kernel has no perf events",
			 dir, strerror(errno));
		goto out;
	}
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			strvec_push(pmu_name(e->d_name) ? &cpu : &all, e->d_name);
	closedir(d);
	if (cpu.n)
		qsort(cpu.v, cpu.n, sizeof(*cpu.v), name_cmp);
	if (all.n)
		qsort(all.v, all.n, sizeof(*all.v), name_cmp);
	if (!cpu.n) {
		char *has = all.n ? strvec_join(&all, " ") : xstrdup("nothing");
		snprintf(p->reason, sizeof(p->reason),
			 "no hardware PMU: /sys/bus/event_source/devices has no cpu, cpu_core, cpu_atom or armv8_* "
			 "event source (it has %s), so perf counts software events only: a virtual machine without "
			 "a virtual PMU, or qemu's TCG", has);
		free(has);
		goto out;
	}
	{
		char *j = strvec_join(&cpu, " ");
		snprintf(p->devices, sizeof(p->devices), "%s", j);
		free(j);
	}
	p->present = 1;
	p->hybrid = cpu.n > 1;
	/* system-wide counting (perf stat -a/-C) needs paranoid <= 0 or CAP_PERFMON (root has it) */
	priv = may_count_system_wide(root);
	if (p->paranoid > 0 && !priv) {
		snprintf(p->reason, sizeof(p->reason),
			 "PMU %s present, but perf_event_paranoid is %ld and the agent has neither CAP_PERFMON nor "
			 "CAP_SYS_ADMIN: no system-wide counters", p->devices, p->paranoid);
		goto out;
	}
	p->usable = 1;
out:
	strvec_clear(&all);
	strvec_clear(&cpu);
	free(dir);
}

struct json_object *pmu_json(const struct pmu_info *p)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "present", json_object_new_boolean(p->present));
	json_object_object_add(o, "usable", json_object_new_boolean(p->usable));
	add_str(o, "devices", p->present ? p->devices : NULL);
	json_object_object_add(o, "hybrid", json_object_new_boolean(p->hybrid));
	json_object_object_add(o, "perf_event_paranoid", p->paranoid == -9 ? NULL : json_object_new_int64(p->paranoid));
	add_str(o, "reason", p->usable ? NULL : p->reason);
	return o;
}

struct json_object *sysinfo_collect(int with_tools)
{
	struct json_object *o = json_object_new_object(), *k = json_object_new_object();
	struct utsname u;
	char *bid = kernel_build_id();
	char host[256] = "";
	struct pmu_info pmu;

	json_object_object_add(o, "sysinfo_version", json_object_new_int(1));
	gethostname(host, sizeof(host) - 1);
	add_str(o, "host", host);
	if (!uname(&u)) {
		add_str(k, "release", u.release);
		add_str(k, "version", u.version);
		add_str(k, "machine", u.machine);
	}
	add_str(k, "build_id", bid);
	add_file(k, "boot_id", "/proc/sys/kernel/random/boot_id");
	add_file(k, "cmdline", "/proc/cmdline");
	/* what timestamps cost: a boot on another clocksource (tsc, hpet, acpi_pm) pays differently per packet */
	add_file(k, "clocksource", "/sys/devices/system/clocksource/clocksource0/current_clocksource");
	json_object_object_add(o, "kernel", k);
	json_object_object_add(o, "cpu", cpu_info());
	json_object_object_add(o, "mem_kb", json_object_new_int64(meminfo_kb("MemTotal:")));
	json_object_object_add(o, "nics", nics());
	json_object_object_add(o, "sysctls", sysctl_values());
	pmu_detect("", &pmu);
	json_object_object_add(o, "pmu", pmu_json(&pmu));
	if (with_tools)
		json_object_object_add(o, "tools", tools());
	free(bid);
	return o;
}

int cmd_sysinfo(int argc, char **argv)
{
	struct json_object *o;
	struct buf b = BUF_INIT;
	int with_tools = 1;

	if (argc > 2 || (argc == 2 && strcmp(argv[1], "--no-tools"))) {
		fprintf(stderr, "usage: klab-agent sysinfo [--no-tools]\n");
		return 2;
	}
	if (argc == 2)
		with_tools = 0;
	o = sysinfo_collect(with_tools);
	json_to_buf(&b, o, 1);
	puts(b.buf);
	buf_release(&b);
	json_object_put(o);
	return 0;
}
