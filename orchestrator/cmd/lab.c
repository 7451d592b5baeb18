/* cmd/lab.c: `klab lab up|down|status`: the local lab, network namespaces (lab.c) or qemu guests (lab_qemu.c). */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "buf.h"
#include "build.h"
#include "cmd.h"
#include "jsonh.h"
#include "lab.h"
#include "lab_qemu.h"
#include "log.h"
#include "util.h"

/* ---- the qemu lab ------------------------------------------------------- */

enum { O_QEMU = 256, O_KERNEL, O_KERNEL_ID, O_SMP, O_MEM, O_DIR, O_INDEX, O_QUEUES, O_ACCEL,
       O_TIMEOUT, O_PROFILE, O_HELP };

static const struct option qemu_options[] = {
	{ "qemu", no_argument, NULL, O_QEMU },
	{ "kernel", required_argument, NULL, O_KERNEL },
	{ "kernel-id", required_argument, NULL, O_KERNEL_ID },
	{ "smp", required_argument, NULL, O_SMP },
	{ "mem", required_argument, NULL, O_MEM },
	{ "dir", required_argument, NULL, O_DIR },
	{ "index", required_argument, NULL, O_INDEX },
	{ "queues", required_argument, NULL, O_QUEUES },
	{ "accel", required_argument, NULL, O_ACCEL },
	{ "timeout", required_argument, NULL, O_TIMEOUT },
	{ "profile", required_argument, NULL, O_PROFILE },
	{ "help", no_argument, NULL, O_HELP },
	{ NULL, 0, NULL, 0 }
};

static int qemu_usage(int status)
{
	FILE *f = status ? stderr : stdout;

	fprintf(f,
		"usage: klab lab up --qemu (--kernel BZIMAGE | --kernel-id ID) [--smp N] [--mem MB]\n"
		"                   [--queues N] [--dir DIR] [--index K] [--accel auto|kvm|tcg]\n"
		"                   [--timeout SECONDS] [--profile NAME]\n"
		"       klab lab down --qemu [--dir DIR] [--index K]\n"
		"       klab lab status --qemu [--dir DIR] [--index K]\n"
		"Two guests, dut and peer, booted by qemu from a klab-built kernel (host root\n"
		"read-only over 9p, sshd inside, ssh on 127.0.0.1 ports, a second NIC between\n"
		"them). DIR (default lab/qemu, lab/qemu-K) gets the config fragment klab.conf.\n"
		"--queues N > 1 joins the guests by multi-queue taps on a bridge instead of a\n"
		"qemu socket (which has one queue only). --profile NAME puts `profile = NAME`\n"
		"in both machines of the fragment (the [profile] must be in your config).\n");
	return status;
}

static int parse_num(const char *opt, const char *v, long min, long max, long *out)
{
	if (parse_long(v, min, max, out) < 0)
		return error("option '--%s': '%s' is not a number from %ld to %ld", opt, v, min, max);
	return 0;
}

static int parse_opts(int argc, char **argv, struct qlab_opts *o, long *kernel_id, int up)
{
	static const struct qlab_opts init = QLAB_OPTS_INIT;
	int c;

	*o = init;
	*kernel_id = -1;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", qemu_options, NULL)) != -1) {
		int bad = 0;

		switch (c) {
		case O_QEMU: break;
		case O_DIR: o->dir = optarg; break;
		case O_INDEX:
			bad = parse_num("index", optarg, 0, QLAB_MAX_INDEX, &o->index);
			break;
		case O_HELP: return qemu_usage(0) + 3;	/* 3: help printed */
		case '?':
			error("unknown option '%s' for 'klab lab %s --qemu'", argv[optind - 1], argv[0]);
			return 2;
		case ':':
			error("option '%s' needs a value", argv[optind - 1]);
			return 2;
		default:
			if (!up) {
				const struct option *lo = qemu_options;

				while (lo->name && lo->val != c)
					lo++;
				error("option '--%s' is only for 'klab lab up --qemu'", lo->name ? lo->name : "?");
				return 2;
			}
			switch (c) {
			case O_KERNEL: o->kernel = optarg; break;
			case O_PROFILE: o->profile = optarg; break;
			case O_KERNEL_ID:
				bad = parse_num("kernel-id", optarg, 1, LONG_MAX, kernel_id);
				break;
			case O_SMP: bad = parse_num("smp", optarg, 1, 8, &o->smp); break;
			case O_MEM: bad = parse_num("mem", optarg, 256, 65536, &o->mem_mb); break;
			case O_QUEUES: bad = parse_num("queues", optarg, 1, 8, &o->queues); break;
			case O_TIMEOUT: bad = parse_num("timeout", optarg, 10, 3600, &o->timeout_s); break;
			case O_ACCEL:
				if (strcmp(optarg, "auto") && strcmp(optarg, "kvm") && strcmp(optarg, "tcg"))
					return error("option '--accel': '%s' is not auto, kvm or tcg", optarg), 2;
				o->accel = optarg;
				break;
			}
		}
		if (bad)
			return 2;
	}
	if (optind < argc)
		return error("unexpected argument '%s' to 'klab lab %s --qemu'", argv[optind], argv[0]), 2;
	return 0;
}

/* The bzImage of a kernel built by klab (`klab kernels build`), by its id. */
static char *kernel_by_id(struct klab_ctx *ctx, long id)
{
	struct db *db = ctx_db(ctx);
	struct kernel_artifact a;
	char *img = NULL;

	if (!db)
		return NULL;
	memset(&a, 0, sizeof(a));
	if (kernel_artifact_load(db, id, &a) < 0)
		return NULL;
	if (!a.image || !file_exists(a.image))
		error("kernel %ld: its image '%s' is missing (see `klab kernels show %ld`)", id,
		      a.image ? a.image : "(none)", id);
	else
		img = xstrdup(a.image);
	kernel_artifact_release(&a);
	return img;
}

static void print_guests_json(const struct qlab_state *st, const char *const *release)
{
	struct json_object *o = json_object_new_object(), *arr = json_object_new_array();
	struct buf b = BUF_INIT;
	char *frag = xasprintf("%s/klab.conf", st->dir);
	int i;

	json_object_object_add(o, "dir", json_object_new_string(st->dir));
	json_object_object_add(o, "fragment", json_object_new_string(frag));
	json_object_object_add(o, "kernel", json_object_new_string(st->kernel ? st->kernel : ""));
	json_object_object_add(o, "index", json_object_new_int(st->index));
	json_object_object_add(o, "smp", json_object_new_int(st->smp));
	json_object_object_add(o, "mem_mb", json_object_new_int(st->mem_mb));
	json_object_object_add(o, "queues", json_object_new_int(st->queues));
	json_object_object_add(o, "nic", json_object_new_string(st->nic));
	json_object_object_add(o, "accel", json_object_new_string(st->kvm ? "kvm" : "tcg"));
	for (i = 0; i < 2; i++) {
		struct json_object *g = json_object_new_object();
		int alive = qlab_pid_alive(st->g[i].pid, st->dir, st->g[i].name);

		json_object_object_add(g, "name", json_object_new_string(st->g[i].name));
		json_object_object_add(g, "pid", json_object_new_int64(st->g[i].pid));
		json_object_object_add(g, "running", json_object_new_boolean(alive));
		json_object_object_add(g, "ssh", json_object_new_string("127.0.0.1"));
		json_object_object_add(g, "ssh_port", json_object_new_int(st->g[i].ssh_port));
		json_object_object_add(g, "addr", json_object_new_string(st->g[i].addr));
		json_object_object_add(g, "release", release && release[i] ?
				       json_object_new_string(release[i]) : NULL);
		json_object_array_add(arr, g);
	}
	json_object_object_add(o, "guests", arr);
	json_to_buf(&b, o, 1);
	printf("%s\n", b.buf);
	buf_release(&b);
	json_object_put(o);
	free(frag);
}

static int lab_qemu_up(int argc, char **argv, struct klab_ctx *ctx)
{
	struct qlab_opts o;
	struct qlab_state st;
	char *img = NULL;
	long kernel_id;
	int r, i, ret = 1;
	int64_t t0 = now_ms();

	r = parse_opts(argc, argv, &o, &kernel_id, 1);
	if (r)
		return r == 3 ? 0 : qemu_usage(r);
	if (!o.kernel == (kernel_id < 0)) {
		error("give the kernel to boot: --kernel BZIMAGE or --kernel-id ID (one of them)");
		return qemu_usage(2);
	}
	if (o.profile && (!*o.profile || strspn(o.profile, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
						     "0123456789_-.+:@") != strlen(o.profile))) {
		error("option '--profile': '%s' is not a profile name (letters, digits and _-.+:@)",
		      o.profile);
		return qemu_usage(2);
	}
	if (!o.kernel) {
		if (!(img = kernel_by_id(ctx, kernel_id)))
			return 1;
		o.kernel = img;
	}
	if (qlab_up(&o, &st) < 0)
		goto out;
	if (ctx->json) {
		print_guests_json(&st, NULL);
	} else {
		printf("lab: qemu lab %d up in %.1f s; config fragment: %s/klab.conf\n",
		       st.index, (now_ms() - t0) / 1000.0, st.dir);
		for (i = 0; i < 2; i++)
			printf("lab:   %-4s  qemu pid %-7ld ssh root@127.0.0.1 -p %-5d  %s on eth1\n",
			       st.g[i].name, (long)st.g[i].pid, st.g[i].ssh_port, st.g[i].addr);
	}
	qlab_state_free(&st);
	ret = 0;
out:
	if (fflush(stdout) || ferror(stdout))
		ret = 1;
	free(img);
	return ret;
}

static int load_for(int argc, char **argv, struct qlab_state *st, int *missing)
{
	struct qlab_opts o;
	long kernel_id;
	char *dir;
	int r;

	r = parse_opts(argc, argv, &o, &kernel_id, 0);
	if (r)
		return r == 3 ? 3 : qemu_usage(r);
	dir = qlab_dir(o.dir, o.index);
	r = qlab_state_load(dir, st);
	*missing = r == 1;
	if (r == 1)
		st->dir = xstrdup(dir);
	free(dir);
	return r < 0 ? 1 : 0;
}

static int lab_qemu_down(int argc, char **argv, struct klab_ctx *ctx)
{
	struct qlab_state st;
	int missing = 0, r;

	memset(&st, 0, sizeof(st));
	r = load_for(argc, argv, &st, &missing);
	if (r)
		return r == 3 ? 0 : r;
	if (missing) {
		printf("lab: no qemu lab in '%s': nothing to stop\n", st.dir);
		qlab_state_free(&st);
		return 0;
	}
	r = qlab_down(&st);
	if (r == 0)
		printf("lab: qemu lab %d stopped (pids %ld %ld) and '%s' removed\n", st.index,
		       (long)st.g[0].pid, (long)st.g[1].pid, st.dir);
	qlab_state_free(&st);
	return r < 0 ? 1 : 0;
}

static int lab_qemu_status(int argc, char **argv, struct klab_ctx *ctx)
{
	struct qlab_state st;
	struct buf rel[2] = { BUF_INIT, BUF_INIT };
	const char *relv[2] = { NULL, NULL };
	int missing = 0, r, i, running;

	memset(&st, 0, sizeof(st));
	r = load_for(argc, argv, &st, &missing);
	if (r)
		return r == 3 ? 0 : r;
	if (missing) {
		if (ctx->json)
			printf("{ \"dir\": null, \"guests\": [ ] }\n");
		else
			printf("lab: no qemu lab in '%s'\n", st.dir);
		qlab_state_free(&st);
		return 1;
	}
	running = qlab_probe(&st, rel, relv);
	if (ctx->json) {
		print_guests_json(&st, relv);
	} else {
		printf("qemu lab %d in %s (%s, %d vCPU, %d MB, %s link, %d queue%s)\n", st.index,
		       st.dir, st.kvm ? "kvm" : "tcg", st.smp, st.mem_mb, st.nic, st.queues,
		       st.queues > 1 ? "s" : "");
		printf("%-5s %-8s %-8s %-16s %-16s %s\n", "NAME", "PID", "STATE", "SSH", "ADDR",
		       "KERNEL");
		for (i = 0; i < 2; i++) {
			char ssh[32];

			snprintf(ssh, sizeof(ssh), "127.0.0.1:%d", st.g[i].ssh_port);
			printf("%-5s %-8ld %-8s %-16s %-16s %s\n", st.g[i].name, (long)st.g[i].pid,
			       qlab_pid_alive(st.g[i].pid, st.dir, st.g[i].name) ? "running" : "stopped",
			       ssh, st.g[i].addr, relv[i] ? relv[i] : "-");
		}
	}
	buf_release(&rel[0]);
	buf_release(&rel[1]);
	qlab_state_free(&st);
	if (fflush(stdout) || ferror(stdout))
		return 1;
	return running == 2 ? 0 : 1;
}

/* ---- the netns lab, and dispatch to the qemu one ------------------------ */

static int lab_usage(int status)
{
	FILE *f = status ? stderr : stdout;

	fprintf(f, "usage: klab lab up --netns [--queues N] [--dir DIR] [--index K|auto]\n"
		   "       klab lab down [--netns] [--dir DIR] [--index K] [--force]\n"
		   "       klab lab status [--netns] [--dir DIR] [--index K] [--json]\n"
		   "       klab lab up|down|status --qemu ...   (see klab lab up --qemu --help)\n"
		   "\n"
		   "The netns lab: namespaces klabK-dut and klabK-peer, each with its own sshd on\n"
		   "198.18.255.x, joined by the veth wl0 <-> wl1 with N queues (default 8). K (0..%d,\n"
		   "default 0; auto: the highest free one) keeps labs apart; DIR defaults to lab/netns\n"
		   "(lab/netns-K).\n",
		NLAB_MAX_INDEX);
	return status;
}

static int lab_status(const struct nlab *l, int json)
{
	struct nlab_machine_status ms[2];
	struct json_object *o, *arr;
	int i, up = nlab_status(l, ms);

	if (!json) {
		printf("netns lab %d in %s: %s\n", l->index, l->dir, up ? "up" : "degraded");
		for (i = 0; i < 2; i++) {
			const struct nlab_machine *m = &l->m[i];

			printf("  %-5s namespace %-12s ssh %s:%d  sshd %s", m->name, m->netns,
			       m->mgmt_addr, m->port, ms[i].sshd_pid > 0 ? "running" : "NOT running");
			if (ms[i].sshd_pid > 0)
				printf(" (pid %d)", (int)ms[i].sshd_pid);
			printf("  %s %s/24, %d queues%s\n", m->nic, m->addr, l->queues,
			       ms[i].netns_exists ? "" : "  NAMESPACE MISSING");
		}
		printf("config fragment: %s/klab.conf\n", l->dir);
		return up ? 0 : 1;
	}
	o = json_object_new_object();
	arr = json_object_new_array();
	for (i = 0; i < 2; i++) {
		const struct nlab_machine *m = &l->m[i];
		struct json_object *jm = json_object_new_object();

		json_object_object_add(jm, "name", json_object_new_string(m->name));
		json_object_object_add(jm, "netns", json_object_new_string(m->netns));
		json_object_object_add(jm, "netns_exists", json_object_new_boolean(ms[i].netns_exists));
		json_object_object_add(jm, "host", json_object_new_string(m->mgmt_addr));
		json_object_object_add(jm, "port", json_object_new_int(m->port));
		json_object_object_add(jm, "root_veth", json_object_new_string(m->root_veth));
		json_object_object_add(jm, "sshd_pid", json_object_new_int(ms[i].sshd_pid));
		json_object_object_add(jm, "sshd_running", json_object_new_boolean(ms[i].sshd_pid > 0));
		json_object_object_add(jm, "nic", json_object_new_string(m->nic));
		json_object_object_add(jm, "addr", json_object_new_string(m->addr));
		json_object_array_add(arr, jm);
	}
	json_object_object_add(o, "type", json_object_new_string("netns"));
	json_object_object_add(o, "index", json_object_new_int(l->index));
	json_object_object_add(o, "dir", json_object_new_string(l->dir));
	json_object_object_add(o, "queues", json_object_new_int(l->queues));
	json_object_object_add(o, "state", json_object_new_string(up ? "up" : "degraded"));
	{
		char *conf = xasprintf("%s/klab.conf", l->dir);

		json_object_object_add(o, "config", json_object_new_string(conf));
		free(conf);
	}
	json_object_object_add(o, "machines", arr);
	{
		struct buf b = BUF_INIT;

		json_to_buf(&b, o, 1);
		printf("%s\n", b.buf);
		buf_release(&b);
	}
	json_object_put(o);
	return up ? 0 : 1;
}

int oldcmd_lab(int argc, char **argv, struct klab_ctx *ctx)
{
	static const struct option opts[] = {
		{ "netns", no_argument, NULL, 'n' },
		{ "queues", required_argument, NULL, 'q' },
		{ "dir", required_argument, NULL, 'd' },
		{ "index", required_argument, NULL, 'i' },
		{ "json", no_argument, NULL, 'j' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *sub, *dir_arg = NULL;
	long queues = 8, index = 0;
	int json = ctx->json, c, i, rc, auto_index = 0, index_given = 0, force = 0;
	char *dir = NULL;
	struct nlab l;
	struct nlab_down d;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return lab_usage(argc < 2 ? 2 : 0);
	sub = argv[1];
	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--qemu")) {
			if (!strcmp(sub, "up"))
				return lab_qemu_up(argc - 1, argv + 1, ctx);
			if (!strcmp(sub, "down"))
				return lab_qemu_down(argc - 1, argv + 1, ctx);
			if (!strcmp(sub, "status"))
				return lab_qemu_status(argc - 1, argv + 1, ctx);
			error("unknown subcommand 'klab lab %s'", sub);
			return lab_usage(2);
		}
	}
	if (strcmp(sub, "up") && strcmp(sub, "down") && strcmp(sub, "status")) {
		error("unknown subcommand 'klab lab %s' (up, down, status)", sub);
		return lab_usage(2);
	}
	optind = 1;
	while ((c = getopt_long(argc - 1, argv + 1, "", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			break;
		case 'q':
			if (parse_long(optarg, 1, 256, &queues) < 0) {
				error("--queues: '%s' is not a number of queues (1..256)", optarg);
				return 2;
			}
			break;
		case 'd':
			dir_arg = optarg;
			break;
		case 'i':
			index_given = 1;
			if (!strcmp(optarg, "auto")) {
				auto_index = 1;
				break;
			}
			if (parse_long(optarg, 0, NLAB_MAX_INDEX, &index) < 0) {
				error("--index: '%s' is not a lab index (0..%d)", optarg, NLAB_MAX_INDEX);
				return 2;
			}
			break;
		case 'j':
			json = 1;
			break;
		case 'f':
			force = 1;
			break;
		case 'h':
			return lab_usage(0);
		default:
			return lab_usage(2);
		}
	}
	if (optind < argc - 1) {
		error("unexpected argument '%s' to 'klab lab %s'", argv[optind + 1], sub);
		return 2;
	}
	if (auto_index && strcmp(sub, "up")) {
		error("--index auto is for 'klab lab up' only");
		return 2;
	}
	if (!strcmp(sub, "up")) {
		if (nlab_up(&l, dir_arg, auto_index ? -1 : (int)index, (int)queues) < 0)
			return 1;
		printf("netns lab %d up in %s: machines dut (%s) and peer (%s), %s <-> %s with %d queues\n"
		       "config fragment: %s/klab.conf\n", l.index, l.dir, l.m[0].mgmt_addr, l.m[1].mgmt_addr,
		       l.m[0].nic, l.m[1].nic, l.queues, l.dir);
		return 0;
	}
	dir = nlab_dir(dir_arg, (int)index);
	if (!dir)
		return 1;
	if (!strcmp(sub, "down")) {
		if (nlab_down(dir, index_given ? (int)index : -1, force, &d) < 0) {
			free(dir);
			return 1;
		}
		switch (d.how) {
		case NLAB_DOWN_DONE:
			printf("netns lab %d in %s is down\n", d.index, dir);
			break;
		case NLAB_DOWN_NO_LAB:
			printf("no netns lab in %s (give --index K to remove the namespaces of lab K)\n", dir);
			break;
		case NLAB_DOWN_FOREIGN:
			printf("no netns lab in %s; lab %d belongs to %s: left alone\n", dir, d.index, d.owner);
			break;
		case NLAB_DOWN_UNOWNED:
			printf("no netns lab in %s; lab %d has no owner record: left alone "
			       "(--force removes its namespaces)\n", dir, d.index);
			break;
		case NLAB_DOWN_NAMESPACES:
			printf("no netns lab in %s; removed the namespaces of lab %d\n", dir, d.index);
			break;
		}
		free(d.owner);
		free(dir);
		return 0;
	}
	/* status */
	rc = nlab_load(dir, &l);
	if (rc < 0) {
		free(dir);
		return 1;
	}
	if (rc == 1) {
		if (json) {
			struct json_object *o = json_object_new_object();

			json_object_object_add(o, "type", json_object_new_string("netns"));
			json_object_object_add(o, "dir", json_object_new_string(dir));
			json_object_object_add(o, "state", json_object_new_string("down"));
			printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY));
			json_object_put(o);
		} else
			printf("no netns lab in %s\n", dir);
		free(dir);
		return 1;
	}
	free(dir);
	return lab_status(&l, json);
}
