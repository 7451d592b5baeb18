/*
 * klab-cache.c: klab's cache model, a QEMU TCG plugin (docs/cache-model.md).
 *
 * Counts the instructions each vCPU executes and runs every data access of
 * the guest (physical address, loads and stores) through a private L1d and L2
 * per vCPU and one LLC shared by all, LRU set-associative. A store invalidates
 * the line in the other vCPUs' L1d and L2; the next miss of such a vCPU on
 * that line is a coherence miss (the line comes from the writer's cache), not
 * an LLC hit or a memory access. Modeled cycles are instructions plus a fixed
 * latency per class of miss.
 *
 * Windows: a guest program executes the marks of cache-mark.h around what it
 * measures; at the stop mark one JSON line with the window's counts (totals
 * and per vCPU) is appended to the file given by out=PATH, before the guest
 * executes its next instruction.
 *
 * The model's state is not locked: qemu must run the vCPUs in one thread
 * (-accel tcg,thread=single, which klab lab up --cache-model gives; -icount
 * implies it). Instruction fetches, page-table walks and DMA are not modeled.
 *
 * Arguments (-plugin klab-cache.so,ARG=VALUE,...): out=PATH (required),
 * l1d=SIZE:WAYS (32K:8), l2=SIZE:WAYS (1M:16), llc=SIZE:WAYS (8M:16), line=64,
 * lat_l2=14, lat_llc=40, lat_mem=200, lat_coh=100 (cycles).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qemu-plugin-api.h"
#define CACHE_MARK_NO_ASM
#include "cache-mark.h"

KLAB_PLUGIN_EXPORT int qemu_plugin_version = KLAB_QEMU_PLUGIN_VERSION;

/* One set-associative cache: tags are line numbers + 1 (0: empty), LRU by stamps. */
struct cache {
	uint64_t size;
	unsigned ways, sets;
	uint64_t *tag, *stamp;
	uint64_t clock;
};

/* What a vCPU did: the counters of a window are differences of these. */
struct counts {
	uint64_t insn, loads, stores, io;
	uint64_t l1d_miss;	/* every access that missed L1d */
	uint64_t l2_hit;	/* L1d misses served by L2 */
	uint64_t l2_miss;	/* L1d misses that missed L2 too: llc_hit + llc_miss + coh_miss */
	uint64_t llc_hit, llc_miss;
	uint64_t coh_miss;	/* L2 misses on a line another vCPU's store took away */
};
#define N_COUNTS (sizeof(struct counts) / sizeof(uint64_t))

/* Lines another vCPU's store invalidated here, direct-mapped (a collision forgets one). */
#define INVAL_SLOTS 16384

struct vcpu {
	struct cache l1d, l2;
	uint64_t *inval;	/* line + 1, 0: empty */
	struct counts c, start;
};

static struct {
	int n;			/* vCPUs */
	struct vcpu *v;
	struct cache llc;
	unsigned line_shift;
	uint64_t lat_l2, lat_llc, lat_mem, lat_coh;
	FILE *out;
	char *out_path;
	int open;		/* a window is open */
	uint64_t windows, ignored_marks;
	char model[256];	/* "l1d 32K/8 l2 1M/16 llc 8M/16 line 64 ..." */
} m;

static int cache_init(struct cache *c, uint64_t size, unsigned ways, unsigned line)
{
	uint64_t lines = size / line;

	if (!ways || lines < ways || lines % ways)
		return -1;
	c->size = size;
	c->ways = ways;
	c->sets = lines / ways;
	if (c->sets & (c->sets - 1))	/* the set index is a mask */
		return -1;
	c->tag = calloc(lines, sizeof(*c->tag));
	c->stamp = calloc(lines, sizeof(*c->stamp));
	return c->tag && c->stamp ? 0 : -1;
}

/* 1 on a hit (now most recently used); on a miss, fill the least recently used way. */
static int cache_access(struct cache *c, uint64_t line)
{
	uint64_t *tag = c->tag + (line & (c->sets - 1)) * c->ways;
	uint64_t *stamp = c->stamp + (tag - c->tag);
	unsigned i, victim = 0;

	for (i = 0; i < c->ways; i++) {
		if (tag[i] == line + 1) {
			stamp[i] = ++c->clock;
			return 1;
		}
		if (stamp[i] < stamp[victim])
			victim = i;
	}
	tag[victim] = line + 1;
	stamp[victim] = ++c->clock;
	return 0;
}

/* Drop the line if present: 1 if it was. */
static int cache_invalidate(struct cache *c, uint64_t line)
{
	uint64_t *tag = c->tag + (line & (c->sets - 1)) * c->ways;
	unsigned i;

	for (i = 0; i < c->ways; i++)
		if (tag[i] == line + 1) {
			tag[i] = 0;
			c->stamp[tag - c->tag + i] = 0;
			return 1;
		}
	return 0;
}

static void line_access(unsigned cpu, uint64_t line, int store)
{
	struct vcpu *v = &m.v[cpu];
	uint64_t *slot = &v->inval[line % INVAL_SLOTS];
	int i;

	if (!cache_access(&v->l1d, line)) {
		v->c.l1d_miss++;
		if (cache_access(&v->l2, line)) {
			v->c.l2_hit++;
		} else {
			v->c.l2_miss++;
			if (*slot == line + 1) {
				/* from the cache of the vCPU that wrote it; the LLC keeps a copy */
				v->c.coh_miss++;
				cache_access(&m.llc, line);
			} else if (cache_access(&m.llc, line)) {
				v->c.llc_hit++;
			} else {
				v->c.llc_miss++;
			}
		}
	}
	if (*slot == line + 1)
		*slot = 0;
	if (!store)
		return;
	for (i = 0; i < m.n; i++) {
		struct vcpu *o = &m.v[i];
		int had;

		if (i == (int)cpu)
			continue;
		had = cache_invalidate(&o->l1d, line);
		had |= cache_invalidate(&o->l2, line);
		if (had)
			o->inval[line % INVAL_SLOTS] = line + 1;
	}
}

static void mem_cb(unsigned int cpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata)
{
	struct qemu_plugin_hwaddr *hw = qemu_plugin_get_hwaddr(info, vaddr);
	unsigned size = 1u << qemu_plugin_mem_size_shift(info);
	int store = qemu_plugin_mem_is_store(info);
	uint64_t pa, first, last;

	if ((int)cpu >= m.n)
		return;
	if (hw && qemu_plugin_hwaddr_is_io(hw)) {
		m.v[cpu].c.io++;
		return;
	}
	pa = hw ? qemu_plugin_hwaddr_phys_addr(hw) : vaddr;
	if (store)
		m.v[cpu].c.stores++;
	else
		m.v[cpu].c.loads++;
	first = pa >> m.line_shift;
	last = (pa + size - 1) >> m.line_shift;	/* an access across a line boundary touches both */
	line_access(cpu, first, store);
	if (last != first)
		line_access(cpu, last, store);
}

static void tb_exec_cb(unsigned int cpu, void *udata)
{
	if ((int)cpu < m.n)
		m.v[cpu].c.insn += (uintptr_t)udata;
}

static uint64_t cycles_of(const struct counts *c)
{
	return c->insn + c->l2_hit * m.lat_l2 + c->llc_hit * m.lat_llc + c->llc_miss * m.lat_mem +
	       c->coh_miss * m.lat_coh;
}

static void counts_sub(struct counts *d, const struct counts *a, const struct counts *b)
{
	const uint64_t *pa = (const uint64_t *)a, *pb = (const uint64_t *)b;
	uint64_t *pd = (uint64_t *)d;
	size_t i;

	for (i = 0; i < N_COUNTS; i++)
		pd[i] = pa[i] - pb[i];
}

static void counts_print(FILE *f, const struct counts *c)
{
	fprintf(f, "\"insn\":%" PRIu64 ",\"loads\":%" PRIu64 ",\"stores\":%" PRIu64 ",\"io\":%" PRIu64
		",\"l1d_miss\":%" PRIu64 ",\"l2_hit\":%" PRIu64 ",\"l2_miss\":%" PRIu64 ",\"llc_hit\":%" PRIu64
		",\"llc_miss\":%" PRIu64 ",\"coh_miss\":%" PRIu64 ",\"cycles\":%" PRIu64,
		c->insn, c->loads, c->stores, c->io, c->l1d_miss, c->l2_hit, c->l2_miss, c->llc_hit,
		c->llc_miss, c->coh_miss, cycles_of(c));
}

/*
 * A mark executed on vCPU cpu. A start inside an open window and a stop
 * without one are counted (ignored_marks) and otherwise ignored: windows
 * do not nest.
 */
static void mark_cb(unsigned int cpu, void *udata)
{
	int start = (uintptr_t)udata == CACHE_MARK_START;
	struct counts tot, d;
	int i;

	if (start == m.open) {
		m.ignored_marks++;
		return;
	}
	if (start) {
		for (i = 0; i < m.n; i++)
			m.v[i].start = m.v[i].c;
		m.open = 1;
		return;
	}
	m.open = 0;
	m.windows++;
	memset(&tot, 0, sizeof(tot));
	fprintf(m.out, "{\"window\":%" PRIu64 ",\"model\":\"%s\",\"vcpus\":%d,\"stop_vcpu\":%u,"
		"\"ignored_marks\":%" PRIu64 ",\"per_vcpu\":[", m.windows, m.model, m.n, cpu, m.ignored_marks);
	for (i = 0; i < m.n; i++) {
		uint64_t *pt = (uint64_t *)&tot, *pd = (uint64_t *)&d;
		size_t k;

		counts_sub(&d, &m.v[i].c, &m.v[i].start);
		for (k = 0; k < N_COUNTS; k++)
			pt[k] += pd[k];
		fprintf(m.out, "%s{", i ? "," : "");
		counts_print(m.out, &d);
		fprintf(m.out, "}");
	}
	fprintf(m.out, "],");
	counts_print(m.out, &tot);
	fprintf(m.out, "}\n");
	fflush(m.out);
}

static uint32_t mark_of(struct qemu_plugin_insn *insn)
{
	const uint8_t *b = qemu_plugin_insn_data(insn);
	uint32_t disp;

	if (qemu_plugin_insn_size(insn) != 8 || b[0] != 0x0f || b[1] != 0x1f || b[2] != 0x84 || b[3] != 0)
		return 0;
	disp = b[4] | (uint32_t)b[5] << 8 | (uint32_t)b[6] << 16 | (uint32_t)b[7] << 24;
	return disp == CACHE_MARK_START || disp == CACHE_MARK_STOP ? disp : 0;
}

static void tb_trans_cb(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);

	qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec_cb, QEMU_PLUGIN_CB_NO_REGS, (void *)(uintptr_t)n);
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint32_t mark = mark_of(insn);

		if (mark)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, mark_cb, QEMU_PLUGIN_CB_NO_REGS,
							       (void *)(uintptr_t)mark);
		qemu_plugin_register_vcpu_mem_cb(insn, mem_cb, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW, NULL);
	}
}

static void atexit_cb(qemu_plugin_id_t id, void *udata)
{
	if (m.out)
		fclose(m.out);
	m.out = NULL;
}

/* "32K", "1M", "8M", "4096": bytes; 0 on a malformed value. */
static uint64_t parse_size(const char *s, char **end)
{
	uint64_t v = strtoull(s, end, 10);

	if (**end == 'K' || **end == 'k')
		v <<= 10, (*end)++;
	else if (**end == 'M' || **end == 'm')
		v <<= 20, (*end)++;
	return v;
}

static int parse_cache_arg(const char *v, uint64_t *size, unsigned *ways)
{
	char *end;
	unsigned long w;

	*size = parse_size(v, &end);
	if (!*size || *end != ':')
		return -1;
	w = strtoul(end + 1, &end, 10);
	if (*end || !w || w > 64)
		return -1;
	*ways = w;
	return 0;
}

static int parse_u64(const char *v, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(v, &end, 10);
	return errno || end == v || *end ? -1 : 0;
}

/*
 * An error at install time, on stderr (qemu's log, where qemu_plugin_outs()
 * writes, is off unless qemu runs with -d plugin) and on qemu's log.
 */
static void complain(const char *line)
{
	fputs(line, stderr);
	qemu_plugin_outs(line);
}

/* "klab-cache: WHAT 'ARG'[: WHY]" */
static void say(const char *what, const char *arg, const char *why)
{
	char line[512];

	snprintf(line, sizeof(line), "klab-cache: %s '%s'%s%s\n", what, arg, why ? ": " : "", why ? why : "");
	complain(line);
}

KLAB_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
	uint64_t l1_size = 32 << 10, l2_size = 1 << 20, llc_size = 8 << 20, line = 64;
	unsigned l1_ways = 8, l2_ways = 16, llc_ways = 16;
	int i;

	m.lat_l2 = 14, m.lat_llc = 40, m.lat_mem = 200, m.lat_coh = 100;
	if (!info->system_emulation) {
		complain("klab-cache: only for system emulation\n");
		return -1;
	}
	for (i = 0; i < argc; i++) {
		char *k = argv[i], *v = strchr(k, '=');
		int bad;

		if (!v) {
			say("argument is not KEY=VALUE:", k, NULL);
			return -1;
		}
		v++;
		if (!strncmp(k, "out=", 4))
			bad = !*v, m.out_path = v;
		else if (!strncmp(k, "l1d=", 4))
			bad = parse_cache_arg(v, &l1_size, &l1_ways);
		else if (!strncmp(k, "l2=", 3))
			bad = parse_cache_arg(v, &l2_size, &l2_ways);
		else if (!strncmp(k, "llc=", 4))
			bad = parse_cache_arg(v, &llc_size, &llc_ways);
		else if (!strncmp(k, "line=", 5))
			bad = parse_u64(v, &line) || !line || (line & (line - 1)) || line > 4096;
		else if (!strncmp(k, "lat_l2=", 7))
			bad = parse_u64(v, &m.lat_l2);
		else if (!strncmp(k, "lat_llc=", 8))
			bad = parse_u64(v, &m.lat_llc);
		else if (!strncmp(k, "lat_mem=", 8))
			bad = parse_u64(v, &m.lat_mem);
		else if (!strncmp(k, "lat_coh=", 8))
			bad = parse_u64(v, &m.lat_coh);
		else {
			say("unknown argument", k, NULL);
			return -1;
		}
		if (bad) {
			say("bad value in", k, NULL);
			return -1;
		}
	}
	if (!m.out_path) {
		complain("klab-cache: out=PATH is required\n");
		return -1;
	}
	m.out = fopen(m.out_path, "a");
	if (!m.out) {
		say("cannot open", m.out_path, strerror(errno));
		return -1;
	}
	for (m.line_shift = 0; (1u << m.line_shift) < line; m.line_shift++)
		;
	m.n = info->system.max_vcpus > 0 ? info->system.max_vcpus : 1;
	m.v = calloc(m.n, sizeof(*m.v));
	if (!m.v || cache_init(&m.llc, llc_size, llc_ways, line) < 0) {
		complain("klab-cache: bad llc geometry (sets must be a power of 2)\n");
		return -1;
	}
	for (i = 0; i < m.n; i++)
		if (cache_init(&m.v[i].l1d, l1_size, l1_ways, line) < 0 ||
		    cache_init(&m.v[i].l2, l2_size, l2_ways, line) < 0 ||
		    !(m.v[i].inval = calloc(INVAL_SLOTS, sizeof(uint64_t)))) {
			complain("klab-cache: bad l1d or l2 geometry (sets must be a power of 2)\n");
			return -1;
		}
	snprintf(m.model, sizeof(m.model),
		 "l1d %" PRIu64 "K/%u-way, l2 %" PRIu64 "K/%u-way per vCPU, llc %" PRIu64 "K/%u-way shared, "
		 "%" PRIu64 " B lines, LRU; latencies l2 %" PRIu64 ", llc %" PRIu64 ", memory %" PRIu64
		 ", coherence %" PRIu64 " cycles",
		 l1_size >> 10, l1_ways, l2_size >> 10, l2_ways, llc_size >> 10, llc_ways, line,
		 m.lat_l2, m.lat_llc, m.lat_mem, m.lat_coh);
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans_cb);
	qemu_plugin_register_atexit_cb(id, atexit_cb, NULL);
	return 0;
}
