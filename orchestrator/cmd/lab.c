/* cmd/lab.c: `klab lab up|down|status`: the local lab, network namespaces (lab.c) or qemu guests (lab_qemu.c). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "kbuild/build.h"
#include "cmd.h"
#include "lab/lab.h"
#include "lab/lab_qemu.h"
#include "log.h"
#include "util.h"

/* ---- the qemu lab ------------------------------------------------------- */

static struct qlab_opts q = QLAB_OPTS_INIT;
static long q_kernel_id = -1, q_pair = -1;
static int q_flag;

static int opt_accel(const char *arg, void *value)
{
	if (strcmp(arg, "auto") && strcmp(arg, "kvm") && strcmp(arg, "tcg"))
		return -1;
	*(const char **)value = arg;
	return 0;
}

static int opt_peer(const char *arg, void *value)
{
	if (strcmp(arg, "guest") && strcmp(arg, "netns"))
		return -1;
	*(const char **)value = arg;
	return 0;
}

static int opt_clock(const char *arg, void *value)
{
	if (strcmp(arg, "real") && strcmp(arg, "icount"))
		return -1;
	*(const char **)value = arg;
	return 0;
}

#define QEMU_WHERE \
	OPT_BOOL(0, "qemu", &q_flag, "the qemu lab"), \
	OPT_STRING(0, "dir", &q.dir, "DIR", "the lab folder (default: lab/qemu, or lab/qemu-K)"), \
	OPT_INT(0, "index", &q.index, "K", 0, QLAB_MAX_INDEX, "the lab's index: its addresses and default folder")

static const struct opt qemu_up_opts[] = {
	QEMU_WHERE,
	OPT_STRING(0, "kernel", &q.kernel, "BZIMAGE", "the kernel image to boot"),
	OPT_INT(0, "kernel-id", &q_kernel_id, "ID", 1, LONG_MAX, "boot kernel ID of klab kernels list"),
	OPT_INT(0, "smp", &q.smp, "N", 1, 8, "vCPUs per guest (default 1)"),
	OPT_INT(0, "mem", &q.mem_mb, "MB", 256, 65536, "memory per guest (default 1024)"),
	OPT_INT(0, "queues", &q.queues, "N", 1, 8, "queues of the workload link (default 1)"),
	OPT_CALLBACK(0, "accel", &q.accel, "auto|kvm|tcg", opt_accel, "auto, kvm or tcg",
		     "kvm when /dev/kvm works (auto, the default), or force one"),
	OPT_CALLBACK(0, "clock", &q.clock, "real|icount", opt_clock, "real or icount",
		     "icount: the guest clock counts instructions (-icount shift=0,sleep=on, TCG), "
		     "so rates are path lengths; default real"),
	OPT_CALLBACK(0, "peer", &q.peer, "guest|netns", opt_peer, "guest or netns",
		     "the peer: a guest of its own, or a namespace inside the dut joined by a veth "
		     "(default: netns with --clock icount, else guest)"),
	OPT_BOOL(0, "cache-model", &q.cache_model,
		 "load klab's cache model into qemu (TCG, one thread; docs/cache-model.md)"),
	OPT_STRING(0, "cache-args", &q.cache_args, "K=V,...",
		   "the cache model's sizes and latencies, e.g. l2=2M:16,lat_mem=300"),
	OPT_INT(0, "timeout", &q.timeout_s, "SECONDS", 10, 3600, "until both guests answer over ssh (default 300)"),
	OPT_STRING(0, "profile", &q.profile, "NAME", "profile = NAME in both machines of the fragment"),
	OPT_INT(0, "pairs", &q.pairs, "N", 1, LONG_MAX,
		"guest pairs (default 1: dut and peer; N > 1: dut0/peer0 .. dutN-1/peerN-1, at most 64)"),
	OPT_STRING(0, "pool", &q.pool, "NAME", "put every dut of the fragment in pool NAME"),
	OPT_JSON(),
	OPT_END(),
};
static const struct opt qemu_cycle_opts[] = {
	QEMU_WHERE,
	OPT_INT(0, "pair", &q_pair, "P", 0, QLAB_MAX_PAIRS - 1,
		"pair P only (dutP, peerP) of a lab of several pairs (default: every pair)"),
	OPT_JSON(), OPT_ELSEWHERE(qemu_up_opts, "klab lab up --qemu"), OPT_END(),
};
static const struct opt qemu_down_opts[] = {
	QEMU_WHERE, OPT_JSON(), OPT_ELSEWHERE(qemu_up_opts, "klab lab up --qemu"), OPT_END(),
};
static const struct opt qemu_status_opts[] = {
	QEMU_WHERE, OPT_JSON(), OPT_ELSEWHERE(qemu_up_opts, "klab lab up --qemu"), OPT_END(),
};
static const char *const qemu_up_usage[] = {
	"--qemu (--kernel BZIMAGE | --kernel-id ID) [--smp N] [--mem MB]",
	" [--queues N] [--dir DIR] [--index K] [--accel auto|kvm|tcg] [--clock real|icount]",
	" [--peer guest|netns] [--cache-model [--cache-args K=V,...]]",
	" [--timeout SECONDS] [--profile NAME] [--pairs N] [--pool NAME]",
	NULL,
};
static const char *const qemu_where_usage[] = { "--qemu [--dir DIR] [--index K]", NULL };
static const char *const qemu_cycle_usage[] = { "--qemu [--dir DIR] [--index K] [--pair P]", NULL };
static const struct opt_spec qemu_up_spec = {
	"klab lab up", qemu_up_usage, "boot the qemu lab: a dut and its peer (or N pairs) from a klab-built kernel",
	"Host root read-only over 9p, sshd inside, ssh on 127.0.0.1 ports, a second NIC\n"
	"between them. DIR gets the config fragment klab.conf. --queues N > 1 joins the\n"
	"guests by multi-queue taps on a bridge instead of a qemu socket (which has one\n"
	"queue only). --profile NAME puts `profile = NAME` in both machines of the\n"
	"fragment (the [profile] must be in your config). --clock icount runs qemu with\n"
	"-icount shift=0,sleep=on: 1 ns of busy guest time is one instruction, so a rate or a\n"
	"CPU time is a path length, reproducible to parts per million, not hardware speed;\n"
	"the fragment says `clock = icount`, and every boot and run on it records it.\n"
	"--peer netns (the default under icount) boots the dut alone: the peer is its\n"
	"namespace klabpeer, joined by the veth eth1 <-> eth1 (same addresses), with its\n"
	"own sshd, so client and server run in one qemu and traffic never waits on the host.\n"
	"--cache-model loads klab's QEMU plugin: per-vCPU L1d and L2, a shared LLC and\n"
	"coherence misses, counted in windows that a guest program brackets\n"
	"(klab-cache-mark start|stop) into DIR/cache-model/NAME.jsonl.\n"
	"--pairs N boots N such pairs at once, machines dut0/peer0 .. dutN-1/peerN-1, each\n"
	"pair's link on its own /30 of 198.19.(128+K).0/24; --pool NAME puts their duts in\n"
	"one pool, so jobs with pool = NAME run side by side on free pairs. Under icount\n"
	"a pair is one qemu, which takes a host core while it runs.\n",
	qemu_up_opts,
};
static const struct opt_spec qemu_down_spec = {
	"klab lab down", qemu_where_usage, "stop the qemu lab's guests and remove its folder", NULL, qemu_down_opts,
};
static const struct opt_spec qemu_status_spec = {
	"klab lab status", qemu_where_usage, "the qemu lab's guests and the kernel each runs (exit 1: not all up)",
	NULL, qemu_status_opts,
};

/* The bzImage of a kernel built by klab (`klab kernels build`), by its id. */
static char *kernel_by_id(struct klab_ctx *ctx, long id)
{
	struct db *db = ctx_db(ctx);
	struct kernel_artifact a;
	char *img = NULL;

	if (!db)
		return NULL;
	memset(&a, 0, sizeof(a));
	if (kernel_artifact_load(db, id, &a, NULL) < 0)
		return NULL;
	if (!a.image || !file_exists(a.image))
		error("kernel %ld: its image '%s' is missing (see `klab kernels show %ld`)", id,
		      a.image ? a.image : "(none)", id);
	else
		img = xstrdup(a.image);
	kernel_artifact_release(&a);
	return img;
}

/* The lab and its guests (JSON); RELEASE[i] what guest i runs, if known. */
static void guests_data(const struct qlab_state *st, const char *const *release)
{
	char *frag = xasprintf("%s/klab.conf", st->dir);

	print_data_str("dir", st->dir);
	print_data_str("fragment", frag);
	print_data_str("kernel", st->kernel ? st->kernel : "");
	print_data_int("index", st->index);
	print_data_int("smp", st->smp);
	print_data_int("mem_mb", st->mem_mb);
	print_data_int("queues", st->queues);
	print_data_str("nic", st->nic);
	print_data_str("accel", st->kvm ? "kvm" : "tcg");
	print_data_str("clock", st->icount ? "icount" : "real");
	print_data_str("peer", st->peer_netns ? "netns" : "guest");
	print_data_bool("cache_model", st->cache_model);
	print_data_int("pairs", st->pairs);
	print_data_str("pool", st->pool[0] ? st->pool : NULL);
	print_list_begin("guests", NULL);
	for (int i = 0; i < 2 * st->pairs; i++) {
		print_obj_begin(NULL);
		print_data_str("name", st->g[i].name);
		print_data_int("pid", st->g[i].pid);
		print_data_bool("running", qlab_guest_alive(st, i));
		print_data_str("ssh", "127.0.0.1");
		print_data_int("ssh_port", st->g[i].ssh_port);
		print_data_str("addr", st->g[i].addr);
		print_data_str("release", release ? release[i] : NULL);
		print_obj_end();
	}
	print_list_end();
	free(frag);
}

static int qemu_up(int argc, char **argv, struct klab_ctx *ctx)
{
	struct qlab_state st;
	char *img = NULL;
	int i, s;
	int64_t t0 = now_ms();

	if ((argc = cmd_parse(&qemu_up_spec, argc, argv, &s)) < 0)
		return s;
	if (argc)
		return cmd_usage_error(&qemu_up_spec, "unexpected argument '%s'", argv[0]);
	if (!q.kernel == (q_kernel_id < 0))
		return cmd_usage_error(&qemu_up_spec,
				       "give the kernel to boot: --kernel BZIMAGE or --kernel-id ID (one of them)");
	if (q.profile && (!*q.profile || strspn(q.profile, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
						     "0123456789_-.+:@") != strlen(q.profile)))
		return cmd_usage_error(&qemu_up_spec,
				       "option '--profile': '%s' is not a profile name (letters, digits and _-.+:@)",
				       q.profile);
	if (q.pairs > QLAB_MAX_PAIRS)
		return cmd_usage_error(&qemu_up_spec,
				       "option '--pairs': %ld pairs do not fit the address plan: lab K's pairs take a "
				       "/30 each of 198.19.(128+K).0/24, %d at most", q.pairs, QLAB_MAX_PAIRS);
	if (!q.kernel) {
		if (!(img = kernel_by_id(ctx, q_kernel_id)))
			return 1;
		q.kernel = img;
	}
	if (qlab_up(&q, &st) < 0) {
		free(img);
		return 1;
	}
	cmd_print_begin();
	guests_data(&st, NULL);
	print_text("lab: qemu lab %d up in %.1f s (%s clock%s%s); config fragment: %s/klab.conf\n",
		   st.index, (now_ms() - t0) / 1000.0, st.icount ? "icount" : "real",
		   st.pool[0] ? ", pool " : "", st.pool, st.dir);
	for (i = 0; i < 2 * st.pairs; i++)
		print_text("lab:   %-6s  qemu pid %-7ld ssh root@127.0.0.1 -p %-5d  %s on eth1\n",
			   st.g[i].name, (long)st.g[i].pid, st.g[i].ssh_port, st.g[i].addr);
	qlab_state_free(&st);
	free(img);
	return cmd_print_end();
}

/*
 * The lab of --dir/--index after parsing SPEC: 0 (*missing: no lab
 * there), or -1 with *status the exit status (--help, a usage error, a
 * broken state file).
 */
static int qemu_load(const struct opt_spec *spec, int argc, char **argv, struct qlab_state *st, int *missing,
		     int *status)
{
	char *dir;
	int r;

	memset(st, 0, sizeof(*st));
	if ((argc = cmd_parse(spec, argc, argv, status)) < 0)
		return -1;
	if (argc) {
		*status = cmd_usage_error(spec, "unexpected argument '%s'", argv[0]);
		return -1;
	}
	dir = qlab_dir(q.dir, q.index);
	r = qlab_state_load(dir, st);
	*missing = r == 1;
	if (r == 1)
		st->dir = xstrdup(dir);
	free(dir);
	*status = 1;
	return r < 0 ? -1 : 0;
}

static int qemu_down(int argc, char **argv, struct klab_ctx *ctx)
{
	struct qlab_state st;
	int missing = 0, r;

	if (qemu_load(&qemu_down_spec, argc, argv, &st, &missing, &r))
		return r;
	cmd_print_begin();
	print_data_str("dir", st.dir);
	if (missing) {
		print_data_bool("removed", 0);
		print_text("lab: no qemu lab in '%s': nothing to stop\n", st.dir);
		qlab_state_free(&st);
		return cmd_print_end();
	}
	r = qlab_down(&st);
	print_data_int("index", st.index);
	print_data_bool("removed", r == 0);
	if (r == 0) {
		struct buf pids = BUF_INIT;

		for (int i = 0; i < 2 * st.pairs; i++)
			if (!st.peer_netns || i % 2 == 0 || st.g[i].pid != st.g[i - 1].pid)
				buf_addf(&pids, "%s%ld", pids.len ? " " : "", (long)st.g[i].pid);
		print_text("lab: qemu lab %d stopped (pid%s %s) and '%s' removed\n", st.index,
			   strchr(pids.buf, ' ') ? "s" : "", pids.buf, st.dir);
		buf_release(&pids);
	}
	qlab_state_free(&st);
	return cmd_print_end() || r < 0 ? 1 : 0;
}

static const struct opt_spec qemu_cycle_spec = {
	"klab lab power-cycle", qemu_cycle_usage, "restart the qemu lab's guests on the lab's kernel (its power_cycle)",
	"What the fragment's power_cycle runs when a guest does not come back from a kexec:\n"
	"the qemu processes are stopped and started again, as a BMC power cycle boots the\n"
	"default entry. It returns once qemu runs; the guests then boot (klab lab status).\n"
	"In a lab of several pairs each dut's power_cycle names its pair (--pair P), so the\n"
	"other pairs' jobs run on.\n",
	qemu_cycle_opts,
};

static int qemu_power_cycle(int argc, char **argv, struct klab_ctx *ctx)
{
	struct qlab_state st;
	int missing = 0, r;

	(void)ctx;
	if (qemu_load(&qemu_cycle_spec, argc, argv, &st, &missing, &r))
		return r;
	if (!q_flag) {
		qlab_state_free(&st);
		return cmd_usage_error(&qemu_cycle_spec, "power-cycle is the qemu lab's (--qemu): a netns lab has no "
				       "kernel of its own to restart");
	}
	if (missing) {
		error("no qemu lab in '%s': nothing to power-cycle", st.dir);
		qlab_state_free(&st);
		return 1;
	}
	r = qlab_power_cycle(&st, (int)q_pair);
	if (r == 0 && q_pair >= 0)
		printf("lab: pair %ld of qemu lab %d power-cycled: qemu pid %ld booting %s\n", q_pair, st.index,
		       (long)st.g[2 * q_pair].pid, st.kernel);
	else if (r == 0)
		printf("lab: qemu lab %d power-cycled: qemu pid %ld booting %s\n", st.index, (long)st.g[0].pid, st.kernel);
	qlab_state_free(&st);
	return r < 0 ? 1 : 0;
}

static int qemu_status(int argc, char **argv, struct klab_ctx *ctx)
{
	struct qlab_state st;
	struct buf *rel;
	const char **relv;
	int missing = 0, r, i, running;

	if (qemu_load(&qemu_status_spec, argc, argv, &st, &missing, &r))
		return r;
	cmd_print_begin();
	if (missing) {
		print_data_null("dir");
		print_list_begin("guests", NULL);
		print_list_end();
		print_text("lab: no qemu lab in '%s'\n", st.dir);
		qlab_state_free(&st);
		cmd_print_end();
		return 1;
	}
	rel = xcalloc((size_t)(2 * st.pairs), sizeof(*rel));
	relv = xcalloc((size_t)(2 * st.pairs), sizeof(*relv));
	for (i = 0; i < 2 * st.pairs; i++)
		rel[i] = (struct buf)BUF_INIT;
	running = qlab_probe(&st, rel, relv);
	guests_data(&st, relv);
	print_text("qemu lab %d in %s (%s, %s clock, %d vCPU, %d MB, %s link, %d queue%s%s)\n", st.index,
		   st.dir, st.kvm ? "kvm" : "tcg", st.icount ? "icount" : "real", st.smp, st.mem_mb, st.nic,
		   st.queues, st.queues > 1 ? "s" : "", st.peer_netns ? ", peer in the dut's namespace "
		   QLAB_PEER_NETNS : "");
	if (st.pairs > 1)
		print_text("%d pairs%s%s\n", st.pairs, st.pool[0] ? " in pool " : "", st.pool);
	print_text("%-6s %-8s %-8s %-16s %-16s %s\n", "NAME", "PID", "STATE", "SSH", "ADDR", "KERNEL");
	for (i = 0; i < 2 * st.pairs; i++) {
		char ssh[32];

		snprintf(ssh, sizeof(ssh), "127.0.0.1:%d", st.g[i].ssh_port);
		print_text("%-6s %-8ld %-8s %-16s %-16s %s\n", st.g[i].name, (long)st.g[i].pid,
			   qlab_guest_alive(&st, i) ? "running" : "stopped",
			   ssh, st.g[i].addr, relv[i] ? relv[i] : "-");
	}
	for (i = 0; i < 2 * st.pairs; i++)
		buf_release(&rel[i]);
	free(rel);
	free(relv);
	r = running == 2 * st.pairs ? 0 : 1;
	qlab_state_free(&st);
	if (cmd_print_end())
		return 1;
	return r;
}

/* ---- the netns lab -------------------------------------------------------- */

static const char *n_dir, *n_pool;
static long n_queues = 8, n_index, n_pairs = 1;
static int n_auto, n_force, n_netns;

static int opt_index(const char *arg, void *value)
{
	if (!strcmp(arg, "auto")) {
		n_auto = 1;
		return 0;
	}
	return parse_long(arg, 0, NLAB_MAX_INDEX, value);
}

#define NETNS_WHERE \
	OPT_BOOL(0, "netns", &n_netns, "the netns lab (the default)"), \
	OPT_BOOL(0, "qemu", &q_flag, "the qemu lab instead: see its own --help"), \
	OPT_STRING(0, "dir", &n_dir, "DIR", "the lab folder (default: lab/netns, or lab/netns-K)")

static const struct opt up_opts[] = {
	NETNS_WHERE,
	OPT_CALLBACK(0, "index", &n_index, "K|auto", opt_index, "a lab index (0..31) or auto",
		     "the lab's index: its names and addresses (default 0; auto: the highest free one)"),
	OPT_INT(0, "queues", &n_queues, "N", 1, 256, "queues of the veth wl0 <-> wl1 (default 8)"),
	OPT_INT(0, "pairs", &n_pairs, "N", 1, NLAB_MAX_PAIRS,
		"machine pairs (default 1: dut and peer; N > 1: dut0/peer0 .. dutN-1/peerN-1)"),
	OPT_STRING(0, "pool", &n_pool, "NAME", "put every dut of the fragment in pool NAME"),
	OPT_JSON(),
	OPT_ELSEWHERE(qemu_up_opts, "klab lab up --qemu"),
	OPT_END(),
};
static const struct opt down_opts[] = {
	NETNS_WHERE,
	OPT_INT(0, "index", &n_index, "K", 0, NLAB_MAX_INDEX, "the lab's index, to remove its namespaces without a folder"),
	OPT_BOOL(0, "force", &n_force, "remove lab K's namespaces even when another folder made them"),
	OPT_JSON(),
	OPT_ELSEWHERE(up_opts, "klab lab up"),
	OPT_END(),
};
static const struct opt status_opts[] = {
	NETNS_WHERE,
	OPT_INT(0, "index", &n_index, "K", 0, NLAB_MAX_INDEX, "the lab's index (for its default folder)"),
	OPT_JSON(),
	OPT_ELSEWHERE(up_opts, "klab lab up"),
	OPT_END(),
};
static const char netns_doc[] =
	"The netns lab: namespaces klabK-dut and klabK-peer, each with its own sshd on\n"
	"198.18.255.x, joined by the veth wl0 <-> wl1 with N queues. K keeps labs apart.\n"
	"--pairs N makes N such pairs, klabK-dutP and klabK-peerP (pair 0 on 198.18.255.x,\n"
	"the others on 198.19.4K.0/22), each pair joined by its own veth; --pool NAME\n"
	"puts their duts in one pool, so a job with pool = NAME takes any free pair.\n";
static const char *const up_usage[] = {
	"--netns [--queues N] [--dir DIR] [--index K|auto] [--pairs N] [--pool NAME]", NULL,
};
static const char *const down_usage[] = { "[--netns] [--dir DIR] [--index K] [--force]", NULL };
static const char *const status_usage[] = { "[--netns] [--dir DIR] [--index K] [--json]", NULL };
static const struct opt_spec up_spec = {
	"klab lab up", up_usage, "bring up the netns lab (needs root): two namespaces with their own sshd",
	netns_doc, up_opts,
};
static const struct opt_spec down_spec = {
	"klab lab down", down_usage, "take the netns lab down and remove its folder", NULL, down_opts,
};
static const struct opt_spec status_spec = {
	"klab lab status", status_usage, "the netns lab's machines (exit 1: not all up)", NULL, status_opts,
};

/* The lab and its machines, as text and JSON. 0 when every machine is up, else 1. */
static int netns_print(const struct nlab *l)
{
	struct nlab_machine_status *ms = xcalloc((size_t)(2 * l->pairs), sizeof(*ms));
	int i, up = nlab_status(l, ms);
	char *conf = xasprintf("%s/klab.conf", l->dir);

	print_data_str("type", "netns");
	print_data_int("index", l->index);
	print_data_str("dir", l->dir);
	print_data_int("queues", l->queues);
	print_data_int("pairs", l->pairs);
	print_data_str("pool", l->pool[0] ? l->pool : NULL);
	print_data_str("state", up ? "up" : "degraded");
	print_data_str("config", conf);
	print_text("netns lab %d in %s: %s", l->index, l->dir, up ? "up" : "degraded");
	if (l->pairs > 1)
		print_text(", %d pairs%s%s", l->pairs, l->pool[0] ? " in pool " : "", l->pool);
	print_text("\n");
	print_list_begin("machines", NULL);
	for (i = 0; i < 2 * l->pairs; i++) {
		const struct nlab_machine *m = &l->m[i];

		print_obj_begin(NULL);
		print_data_str("name", m->name);
		print_data_str("netns", m->netns);
		print_data_bool("netns_exists", ms[i].netns_exists);
		print_data_str("host", m->mgmt_addr);
		print_data_int("port", m->port);
		print_data_str("root_veth", m->root_veth);
		print_data_int("sshd_pid", ms[i].sshd_pid);
		print_data_bool("sshd_running", ms[i].sshd_pid > 0);
		print_data_str("nic", m->nic);
		print_data_str("addr", m->addr);
		print_obj_end();
		print_text("  %-7s namespace %-14s ssh %s:%d  sshd %s", m->name, m->netns,
			   m->mgmt_addr, m->port, ms[i].sshd_pid > 0 ? "running" : "NOT running");
		if (ms[i].sshd_pid > 0)
			print_text(" (pid %d)", (int)ms[i].sshd_pid);
		print_text("  %s %s/24, %d queues%s\n", m->nic, m->addr, l->queues,
			   ms[i].netns_exists ? "" : "  NAMESPACE MISSING");
	}
	print_list_end();
	print_text("config fragment: %s\n", conf);
	free(conf);
	free(ms);
	return up ? 0 : 1;
}

/* argv holds --qemu (before any "--"): the command is the qemu lab's. */
static int wants_qemu(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--qemu"))
			return 1;
	return 0;
}

static int lab_up(int argc, char **argv, struct klab_ctx *ctx)
{
	struct nlab l;
	int s;

	if (wants_qemu(argc, argv))
		return qemu_up(argc, argv, ctx);
	if ((argc = cmd_parse(&up_spec, argc, argv, &s)) < 0)
		return s;
	if (argc)
		return cmd_usage_error(&up_spec, "unexpected argument '%s'", argv[0]);
	if (nlab_up(&l, n_dir, n_auto ? -1 : (int)n_index, (int)n_queues, (int)n_pairs, n_pool) < 0)
		return 1;
	cmd_print_begin();
	if (print_is(PRINT_DATA)) {
		netns_print(&l);
	} else if (l.pairs > 1) {
		print_text("netns lab %d up in %s: %d machine pairs, dut0 (%s) .. %s (%s), each pair %s <-> %s "
			   "with %d queues%s%s\nconfig fragment: %s/klab.conf\n", l.index, l.dir, l.pairs,
			   l.m[0].mgmt_addr, l.m[2 * l.pairs - 1].name, l.m[2 * l.pairs - 1].mgmt_addr,
			   l.m[0].nic, l.m[1].nic, l.queues, l.pool[0] ? ", pool " : "", l.pool, l.dir);
	} else {
		print_text("netns lab %d up in %s: machines dut (%s) and peer (%s), %s <-> %s with %d queues\n"
			   "config fragment: %s/klab.conf\n", l.index, l.dir, l.m[0].mgmt_addr, l.m[1].mgmt_addr,
			   l.m[0].nic, l.m[1].nic, l.queues, l.dir);
	}
	return cmd_print_end();
}

static int lab_down(int argc, char **argv, struct klab_ctx *ctx)
{
	static const char *const hows[] = {
		[NLAB_DOWN_DONE] = "down", [NLAB_DOWN_NO_LAB] = "no lab", [NLAB_DOWN_FOREIGN] = "left alone",
		[NLAB_DOWN_UNOWNED] = "left alone", [NLAB_DOWN_NAMESPACES] = "namespaces removed",
	};
	struct nlab_down d;
	char *dir;
	int s, index_given;

	if (wants_qemu(argc, argv))
		return qemu_down(argc, argv, ctx);
	n_index = -1;
	if ((argc = cmd_parse(&down_spec, argc, argv, &s)) < 0)
		return s;
	if (argc)
		return cmd_usage_error(&down_spec, "unexpected argument '%s'", argv[0]);
	index_given = n_index >= 0;
	dir = nlab_dir(n_dir, index_given ? (int)n_index : 0);
	if (!dir)
		return 1;
	if (nlab_down(dir, index_given ? (int)n_index : -1, n_force, &d) < 0) {
		free(dir);
		return 1;
	}
	cmd_print_begin();
	print_data_str("type", "netns");
	print_data_str("dir", dir);
	print_data_str("result", hows[d.how]);
	if (d.how != NLAB_DOWN_NO_LAB)
		print_data_int("index", d.index);
	print_data_str("owner", d.owner);
	switch (d.how) {
	case NLAB_DOWN_DONE:
		print_text("netns lab %d in %s is down\n", d.index, dir);
		break;
	case NLAB_DOWN_NO_LAB:
		print_text("no netns lab in %s (give --index K to remove the namespaces of lab K)\n", dir);
		break;
	case NLAB_DOWN_FOREIGN:
		print_text("no netns lab in %s; lab %d belongs to %s: left alone\n", dir, d.index, d.owner);
		break;
	case NLAB_DOWN_UNOWNED:
		print_text("no netns lab in %s; lab %d has no owner record: left alone "
			   "(--force removes its namespaces)\n", dir, d.index);
		break;
	case NLAB_DOWN_NAMESPACES:
		print_text("no netns lab in %s; removed the namespaces of lab %d\n", dir, d.index);
		break;
	}
	free(d.owner);
	free(dir);
	return cmd_print_end();
}

static int lab_status(int argc, char **argv, struct klab_ctx *ctx)
{
	struct nlab l;
	char *dir;
	int s, rc;

	if (wants_qemu(argc, argv))
		return qemu_status(argc, argv, ctx);
	if ((argc = cmd_parse(&status_spec, argc, argv, &s)) < 0)
		return s;
	if (argc)
		return cmd_usage_error(&status_spec, "unexpected argument '%s'", argv[0]);
	dir = nlab_dir(n_dir, (int)n_index);
	if (!dir)
		return 1;
	rc = nlab_load(dir, &l);
	if (rc < 0) {
		free(dir);
		return 1;
	}
	cmd_print_begin();
	if (rc == 1) {
		print_data_str("type", "netns");
		print_data_str("dir", dir);
		print_data_str("state", "down");
		print_text("no netns lab in %s\n", dir);
		rc = 1;
	} else {
		rc = netns_print(&l);
	}
	free(dir);
	if (cmd_print_end())
		return 1;
	return rc;
}

static const struct klab_cmd lab_cmds[] = {
	{ "up", lab_up, &up_spec, NULL, 0 },
	{ "down", lab_down, &down_spec, NULL, 0 },
	{ "status", lab_status, &status_spec, NULL, 0 },
	{ "up --qemu", qemu_up, &qemu_up_spec, NULL, CMD_HELP_ONLY },
	{ "down --qemu", qemu_down, &qemu_down_spec, NULL, CMD_HELP_ONLY },
	{ "status --qemu", qemu_status, &qemu_status_spec, NULL, CMD_HELP_ONLY },
	{ "power-cycle", qemu_power_cycle, &qemu_cycle_spec, NULL, 0 },
};
static const struct klab_cmd *const lab_subs[] = {
	&lab_cmds[0], &lab_cmds[1], &lab_cmds[2], &lab_cmds[3], &lab_cmds[4], &lab_cmds[5], &lab_cmds[6], NULL,
};
static const struct opt_spec lab_spec = {
	"klab lab", NULL, "the local lab: test machines made on this host (network namespaces or qemu guests)",
	"Each subcommand with --qemu is the qemu lab's: klab lab up --qemu --help.\n", NULL,
};
const struct klab_cmd cmd_lab = { "lab", NULL, &lab_spec, lab_subs, 0 };
