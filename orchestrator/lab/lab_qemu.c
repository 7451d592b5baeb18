/* lab_qemu.c: `klab lab up|down|status --qemu`: qemu guests (a dut and its peer, or N pairs) from a klab-built kernel. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>

#include "buf.h"
#include "lab/lab_common.h"
#include "lab/lab_qemu.h"
#include "lock.h"
#include "log.h"
#include "netprobe.h"
#include "quote.h"
#include "run.h"
#include "ssh/ssh.h"
#include "strvec.h"
#include "util.h"

/*
 * Layout of a lab folder (DIR):
 *   lab.state            key = value: kernel, ports, pids (read by down/status)
 *   klab.conf            the config fragment: [lab] ssh_key, known_hosts and
 *                        [machine "dut"], [machine "peer"]
 *   known_hosts          written before boot from the host keys below
 *   keys/id_ed25519      the client key klab uses (and .pub, authorized in guests)
 *   keys/host_dut, keys/host_peer   the guests' sshd host keys (and .pub)
 *   guest/init.sh, guest/sshd_config   copied from kernels/lab/
 *   kernel/bzImage       the kernel qemu boots (a copy: rebuilds cannot change it)
 *   dut.console, peer.console   serial consoles; dut.pid, peer.pid
 * A lab of N > 1 pairs has the same files with the guests' names dutP and
 * peerP (keys/host_dut0, dut0.console, ...): one client key, known_hosts
 * and fragment for all of them.
 *
 * qemu daemonizes itself (-daemonize -pidfile), so the guests outlive this
 * command; `down` kills them by the recorded pid after checking that the
 * pid is still a qemu of this folder.
 */

#define GUEST_DUT 0
#define GUEST_PEER 1
static const char *const guest_names[2] = { "dut", "peer" };

/* The guests of the lab: its pairs' duts and peers. */
static int nguests(const struct qlab_state *st)
{
	return 2 * st->pairs;
}

/* The guest whose qemu runs guest I: itself, or its pair's dut when the peer is a namespace of it. */
static int qemu_of(const struct qlab_state *st, int i)
{
	return st->peer_netns ? i & ~1 : i;
}

/* 1 when guest I is a qemu of its own and of pair PAIR (-1: any pair). */
static int runs_qemu(const struct qlab_state *st, int pair, int i)
{
	return (pair < 0 || i / 2 == pair) && qemu_of(st, i) == i;
}

/* The names of the guests of a lab of st->pairs pairs: dut, peer; or dutP, peerP. */
static void name_guests(struct qlab_state *st)
{
	for (int i = 0; i < nguests(st); i++) {
		struct qlab_guest *g = &st->g[i];

		if (st->pairs == 1)
			snprintf(g->name, sizeof(g->name), "%s", guest_names[i]);
		else
			snprintf(g->name, sizeof(g->name), "%s%d", guest_names[i % 2], i / 2);
	}
}

/*
 * The limits of one ssh to a guest: the probe's whole attempt (slirp may
 * accept and then hang) and ssh's own. A cache-model guest on a busy host
 * takes 7-24 s a login (24 s at load 13, docs/cache-model.md).
 */
struct ssh_limits {
	long attempt_ms;
	const char *connect, *alive;
};
static const struct ssh_limits ssh_plain = { 8000, "ConnectTimeout=5", "ServerAliveInterval=2" };
static const struct ssh_limits ssh_cache_model = { 60000, "ConnectTimeout=50", "ServerAliveInterval=20" };

static const struct ssh_limits *ssh_limits(const struct qlab_state *st)
{
	return st->cache_model ? &ssh_cache_model : &ssh_plain;
}
#define QEMU_START_MS 60000	/* qemu's own start-up until it daemonizes */

/* ---- small helpers ------------------------------------------------------ */

static char *default_dir(long index)
{
	return index ? xasprintf("lab/qemu-%ld", index) : xstrdup("lab/qemu");
}

/* The folder holding kernels/lab/: $KLAB_SRCDIR, else the tree klab was built from. */
static const char *src_dir(void)
{
	const char *s = getenv("KLAB_SRCDIR");

	if (s && *s)
		return s;
#ifdef KLAB_SRCDIR
	return KLAB_SRCDIR;
#else
	return ".";
#endif
}

/* A TCP port on 127.0.0.1 that is free right now: > 0, or -1 (logged). */
static int free_port(void)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	int fd, port = -1;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return error_errno("cannot make a socket");
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
		port = ntohs(sa.sin_port);
	else
		error_errno("cannot find a free port on 127.0.0.1");
	close(fd);
	return port;
}

/* A free port on 127.0.0.1 that is none of the *N in TAKEN, appended there: > 0, or -1 (logged). */
static int new_port(int *taken, int *n)
{
	int port, j, dup;

	do {
		port = free_port();
		for (j = dup = 0; port > 0 && j < *n; j++)
			dup |= port == taken[j];
	} while (dup);
	if (port > 0)
		taken[(*n)++] = port;
	return port;
}

/* A path that can go into the kernel command line and a qemu option unquoted. */
static int plain_path(const char *p, const char *what)
{
	const char *s;

	for (s = p; *s; s++)
		if (*s <= ' ' || *s == ',' || *s == '"' || *s == '\'' || *s == '\\' || *s == 0x7f)
			return error("%s '%s' has a space, comma or quote: qemu and the kernel "
				     "command line cannot take it; choose another folder", what, p);
	return 0;
}

/* NIC's MAC of guest GUEST (0 .. 2 * QLAB_MAX_PAIRS - 1) of lab INDEX (0 .. QLAB_MAX_INDEX). */
static void mac_of(char out[18], int nic, long index, int guest)
{
	snprintf(out, 18, "52:54:00:%02x:%02x:%02x", (unsigned char)(0xa0 + nic), (unsigned char)index,
		 (unsigned char)(guest + 1));
}

/* ---- state file --------------------------------------------------------- */

void qlab_state_free(struct qlab_state *st)
{
	free(st->dir);
	free(st->kernel);
	free(st->cache_args);
	memset(st, 0, sizeof(*st));
}

char *qlab_cache_plugin(void)
{
	const char *env = getenv("KLAB_CACHE_PLUGIN");
	char self[PATH_MAX], *p;
	ssize_t n;

	if (env && *env)
		return file_exists(env) ? xstrdup(env) : NULL;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		if ((p = strrchr(self, '/')))
			*p = '\0';
		p = xasprintf("%s/../lib/klab-cache.so", self);
		if (file_exists(p))
			return p;
		free(p);
	}
	p = xasprintf("%s/build/rel/lib/klab-cache.so", src_dir());
	if (file_exists(p))
		return p;
	free(p);
	return NULL;
}

int qlab_cache_args_check(const char *args)
{
	static const char *const keys[] = { "l1d", "l2", "llc", "line", "lat_l2", "lat_llc", "lat_mem",
					    "lat_coh", NULL };
	char *copy = xstrdup(args), *kv, *save = NULL;
	int ret = 0;

	for (kv = strtok_r(copy, ",", &save); kv && !ret; kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');
		int i;

		if (!eq || eq == kv || !eq[1] || strspn(eq + 1, "0123456789KkMm:") != strlen(eq + 1)) {
			ret = error("cache model argument '%s' is not KEY=VALUE (a number, SIZE:WAYS such as 1M:16)", kv);
			break;
		}
		*eq = '\0';
		for (i = 0; keys[i] && strcmp(keys[i], kv); i++)
			;
		if (!keys[i])
			ret = error("cache model argument '%s' is unknown (l1d, l2, llc, line, lat_l2, lat_llc, "
				    "lat_mem, lat_coh)", kv);
	}
	if (!*args || args[strlen(args) - 1] == ',')
		ret = error("cache model arguments '%s' are empty or end in a comma", args);
	free(copy);
	return ret;
}

/*
 * The guest a lab.state key starts with, which it then skips: "dut." and
 * "peer." are guests 0 and 1 (a lab of one pair), "dutP." and "peerP."
 * 2P and 2P + 1. -1: a key of the lab; -2: a guest beyond QLAB_MAX_PAIRS.
 */
static int guest_key(const char **key)
{
	for (int r = 0; r < 2; r++) {
		size_t n = strlen(guest_names[r]);
		const char *p = *key + n, *dot;
		long pair = 0;

		if (strncmp(*key, guest_names[r], n) || !(dot = strchr(p, '.')))
			continue;
		if (dot > p) {
			char num[8];

			if (dot - p >= (long)sizeof(num) || strspn(p, "0123456789") != (size_t)(dot - p))
				continue;
			memcpy(num, p, dot - p);
			num[dot - p] = '\0';
			if (parse_long(num, 0, QLAB_MAX_PAIRS - 1, &pair) < 0)
				return -2;
		}
		*key = dot + 1;
		return 2 * (int)pair + r;
	}
	return -1;
}

int qlab_state_load(const char *dir, struct qlab_state *st)
{
	struct buf b = BUF_INIT;
	char *path = xasprintf("%s/lab.state", dir);
	char *line, *save = NULL;
	int lineno = 0, ret = -1, last_guest = 0;
	long pairs = 1;	/* a state of before --pairs: one pair */

	memset(st, 0, sizeof(*st));
	if (!file_exists(path)) {
		ret = 1;
		goto out;
	}
	if (buf_read_file(&b, path) < 0)
		goto out;
	st->dir = xstrdup(dir);
	for (line = strtok_r(b.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *eq = strchr(line, '=');
		const char *k, *v;
		long n = 0;
		int g = -1;

		lineno++;
		if (!*line || *line == '#')
			continue;
		if (!eq) {
			error("%s:%d: expected key=value", path, lineno);
			goto out;
		}
		*eq = 0;
		k = line;
		v = eq + 1;
		if ((g = guest_key(&k)) == -2) {
			error("%s:%d: '%s' names no guest of a lab of %d pairs", path, lineno, line, QLAB_MAX_PAIRS);
			goto out;
		}
		if (g > last_guest)
			last_guest = g;
		if (g < 0 && !strcmp(k, "kernel")) {
			free(st->kernel);
			st->kernel = xstrdup(v);
		} else if (g < 0 && !strcmp(k, "nic")) {
			snprintf(st->nic, sizeof(st->nic), "%s", v);
		} else if (g < 0 && !strcmp(k, "clock")) {
			if (strcmp(v, "real") && strcmp(v, "icount")) {
				error("%s:%d: clock '%s' is neither real nor icount", path, lineno, v);
				goto out;
			}
			st->icount = !strcmp(v, "icount");
		} else if (g < 0 && !strcmp(k, "peer")) {
			if (strcmp(v, "guest") && strcmp(v, "netns")) {
				error("%s:%d: peer '%s' is neither guest nor netns", path, lineno, v);
				goto out;
			}
			st->peer_netns = !strcmp(v, "netns");
		} else if (g < 0 && !strcmp(k, "pool")) {
			if (strlen(v) >= sizeof(st->pool)) {
				error("%s:%d: pool name '%s' is too long", path, lineno, v);
				goto out;
			}
			snprintf(st->pool, sizeof(st->pool), "%s", v);
		} else if (g < 0 && !strcmp(k, "cache_args")) {
			free(st->cache_args);
			st->cache_args = *v ? xstrdup(v) : NULL;
		} else if (g >= 0 && !strcmp(k, "addr")) {
			snprintf(st->g[g].addr, sizeof(st->g[g].addr), "%s", v);
		} else {
			if (parse_long(v, 0, INT_MAX, &n) < 0) {
				error("%s:%d: '%s' is not a number", path, lineno, v);
				goto out;
			}
			if (g < 0 && !strcmp(k, "index"))
				st->index = n;
			else if (g < 0 && !strcmp(k, "smp"))
				st->smp = n;
			else if (g < 0 && !strcmp(k, "mem_mb"))
				st->mem_mb = n;
			else if (g < 0 && !strcmp(k, "queues"))
				st->queues = n;
			else if (g < 0 && !strcmp(k, "kvm"))
				st->kvm = n;
			else if (g < 0 && !strcmp(k, "cache_model"))
				st->cache_model = n;
			else if (g < 0 && !strcmp(k, "pairs"))
				pairs = n;
			else if (g >= 0 && !strcmp(k, "pid"))
				st->g[g].pid = n;
			else if (g >= 0 && !strcmp(k, "ssh_port"))
				st->g[g].ssh_port = n;
			else if (g >= 0 && !strcmp(k, "probe_port"))
				st->g[g].probe_port = n;
			/* unknown keys: written by a newer klab; ignored */
		}
	}
	if (pairs < 1 || pairs > QLAB_MAX_PAIRS || last_guest >= 2 * pairs) {
		error("%s: pairs=%ld, with guests up to pair %d: a lab has 1 to %d pairs", path, pairs,
		      last_guest / 2, QLAB_MAX_PAIRS);
		goto out;
	}
	st->pairs = (int)pairs;
	name_guests(st);
	ret = 0;
out:
	if (ret < 0)
		qlab_state_free(st);
	buf_release(&b);
	free(path);
	return ret;
}

static int qlab_state_save(const struct qlab_state *st)
{
	struct buf b = BUF_INIT;
	char *path = xasprintf("%s/lab.state", st->dir);
	int i, ret;

	buf_addf(&b, "# klab qemu lab: written by `klab lab up --qemu`, read by down and status\n");
	buf_addf(&b, "kernel=%s\nindex=%d\nsmp=%d\nmem_mb=%d\nqueues=%d\nkvm=%d\nnic=%s\nclock=%s\npeer=%s\n",
		 st->kernel, st->index, st->smp, st->mem_mb, st->queues, st->kvm, st->nic,
		 st->icount ? "icount" : "real", st->peer_netns ? "netns" : "guest");
	if (st->cache_model)
		buf_addf(&b, "cache_model=1\ncache_args=%s\n", st->cache_args ? st->cache_args : "");
	if (st->pairs > 1)
		buf_addf(&b, "pairs=%d\n", st->pairs);
	if (st->pool[0])
		buf_addf(&b, "pool=%s\n", st->pool);
	for (i = 0; i < nguests(st); i++)
		buf_addf(&b, "%s.pid=%ld\n%s.ssh_port=%d\n%s.probe_port=%d\n%s.addr=%s\n",
			 st->g[i].name, (long)st->g[i].pid, st->g[i].name, st->g[i].ssh_port,
			 st->g[i].name, st->g[i].probe_port, st->g[i].name, st->g[i].addr);
	ret = write_file_atomic(path, b.buf, b.len, 0644);
	buf_release(&b);
	free(path);
	return ret;
}

int qlab_pid_alive(pid_t pid, const char *dir, const char *guest)
{
	struct buf b = BUF_INIT;
	char *path, *want;
	size_t i;
	int alive = 0;

	if (pid <= 0)
		return 0;
	path = xasprintf("/proc/%ld/cmdline", (long)pid);
	want = xasprintf("%s/%s.pid", dir, guest);
	{
		int fd = open(path, O_RDONLY | O_CLOEXEC);

		if (fd >= 0) {
			if (buf_read_fd(&b, fd) < 0)
				buf_reset(&b);
			close(fd);
		}
	}
	/* cmdline is NUL-separated: look for the pidfile argument of this guest */
	for (i = 0; i < b.len; i += strlen(b.buf + i) + 1)
		if (strstr(b.buf + i, want))
			alive = 1;
	buf_release(&b);
	free(path);
	free(want);
	return alive;
}

int qlab_guest_alive(const struct qlab_state *st, int i)
{
	i = qemu_of(st, i);
	return qlab_pid_alive(st->g[i].pid, st->dir, st->g[i].name);
}

/* ---- the udp_tx dummy target on a machine ------------------------------ */

/*
 * udp_tx with target = dummy sends to QLAB_DUMMY_TARGET through a device on
 * the dut that drops every packet (docs/workloads.md). The qemu lab's guests
 * have dummy0 already; elsewhere the job makes "kdummy0" on the dut: a dummy
 * device, or where the kernel has no dummy driver (the netns lab's host), a
 * veth pair whose far end is up without an address, with a permanent
 * neighbour entry for the target. Every command is an argv over SSH.
 */
int qlab_dummy_target(struct ssh_conn *c)
{
	const char *machine = ssh_name(c);
	const char *route[] = { "ip", "route", "get", QLAB_DUMMY_TARGET, NULL };
	const char *add_dummy[] = { "ip", "link", "add", "kdummy0", "type", "dummy", NULL };
	const char *add_veth[] = { "ip", "link", "add", "kdummy0", "type", "veth", "peer", "name", "kdummy1", NULL };
	const char *addr[] = { "ip", "addr", "add", QLAB_DUMMY_ADDR, "dev", "kdummy0", NULL };
	const char *up0[] = { "ip", "link", "set", "kdummy0", "up", NULL };
	const char *up1[] = { "ip", "link", "set", "kdummy1", "up", NULL };
	const char *mac[] = { "cat", "/sys/class/net/kdummy1/address", NULL };
	struct buf out = BUF_INIT;
	int veth = 0, ret = -1, lvl = log_get_level();

	log_set_level(LOG_CRIT);	/* the probes below may fail on purpose */
	if (ssh_run(c, route, NULL, 10000) == 0) {
		log_set_level(lvl);
		return 0;
	}
	if (ssh_run(c, add_dummy, NULL, 10000)) {
		veth = 1;
		if (ssh_run(c, add_veth, NULL, 10000)) {
			log_set_level(lvl);
			return ssh_fail(c, "cannot make a dummy target device on machine '%s' (no dummy driver, no veth)",
					   machine);
		}
	}
	log_set_level(lvl);
	if (ssh_run(c, addr, NULL, 10000) || ssh_run(c, up0, NULL, 10000))
		goto out;
	if (veth) {
		if (ssh_run(c, up1, NULL, 10000) || ssh_run(c, mac, &out, 10000))
			goto out;
		buf_trim(&out);
		{
			const char *neigh[] = { "ip", "neigh", "replace", QLAB_DUMMY_TARGET, "lladdr", out.buf,
						"dev", "kdummy0", "nud", "permanent", NULL };
			if (ssh_run(c, neigh, NULL, 10000))
				goto out;
		}
	}
	info("made the udp_tx dummy target on '%s': %s kdummy0, %s", machine, veth ? "veth" : "dummy",
	     QLAB_DUMMY_ADDR);
	ret = 0;
out:
	buf_release(&out);
	return ret;
}

/* ---- keys, known_hosts, fragment ---------------------------------------- */

static int make_keys(const struct qlab_state *st)
{
	struct buf kh = BUF_INIT;
	char *p = NULL;
	int i, ret = -1;

	p = xasprintf("%s/keys", st->dir);
	if (mkdir_p(p) < 0)
		goto out;
	free(p);
	p = xasprintf("%s/keys/id_ed25519", st->dir);
	if (lab_keygen(p, "klab-qemu-lab") < 0)
		goto out;
	for (i = 0; i < nguests(st); i++) {
		struct buf pub = BUF_INIT;
		char *comment = xasprintf("klab-%s", st->g[i].name);

		free(p);
		p = xasprintf("%s/keys/host_%s", st->dir, st->g[i].name);
		if (lab_keygen(p, comment) < 0) {
			free(comment);
			goto out;
		}
		free(comment);
		free(p);
		p = xasprintf("%s/keys/host_%s.pub", st->dir, st->g[i].name);
		if (buf_read_file(&pub, p) < 0)
			goto out;
		buf_rtrim(&pub);
		buf_addf(&kh, "[127.0.0.1]:%d %s\n", st->g[i].ssh_port, pub.buf);
		buf_release(&pub);
	}
	free(p);
	p = xasprintf("%s/known_hosts", st->dir);
	ret = write_file_atomic(p, kh.buf, kh.len, 0644);
out:
	free(p);
	buf_release(&kh);
	return ret;
}

/*
 * The config fragment naming the guests as machines dut and peer. boot =
 * kexec: the deploy code switches kernels inside the guests with
 * kexec-tools, exactly as on hardware. Each machine's power_cycle is `klab
 * lab power-cycle` of this lab (this klab, by its absolute path), so a
 * guest that does not come back from a kexec is restarted on the lab's
 * kernel as a BMC would do. shared_root: guest-init binds the host's root
 * (the 9p share, read-only) at QLAB_SHARED_ROOT, so the deploy kexecs a
 * kernel from the artifact store as the guest sees it there instead of
 * uploading it over SFTP (docs/qemu-lab.md).
 */
static int write_fragment(const struct qlab_state *st, const char *profile)
{
	struct lab_machine_conf *m = xcalloc((size_t)nguests(st), sizeof(*m));
	struct lab_fragment f = { "qemu", "--qemu ", st->index, st->dir, m, nguests(st) };
	char self[PATH_MAX], **pc = xcalloc((size_t)st->pairs, sizeof(*pc));
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int i, ret;

	/* a pair's power cycle restarts that pair only: the others may be running jobs */
	for (i = 0; n > 0 && i < st->pairs; i++) {
		self[n] = '\0';
		if (st->pairs == 1)
			pc[i] = xasprintf("%s lab power-cycle --qemu --dir %s", self, st->dir);
		else
			pc[i] = xasprintf("%s lab power-cycle --qemu --dir %s --pair %d", self, st->dir, i);
	}
	for (i = 0; i < nguests(st); i++)
		m[i] = (struct lab_machine_conf){ st->g[i].name, "127.0.0.1", st->g[i].ssh_port, "eth1",
						  st->g[i].addr, "kexec", profile,
						  st->icount ? "icount" : NULL, pc[i / 2],
						  st->pool[0] ? st->pool : NULL, QLAB_SHARED_ROOT,
						  st->g[i].probe_port };
	ret = lab_write_fragment(&f);
	for (i = 0; i < st->pairs; i++)
		free(pc[i]);
	free(pc);
	free(m);
	return ret;
}

/* ---- qemu --------------------------------------------------------------- */

/*
 * auto: KVM when /dev/kvm opens and the CPU says it has VT-x or AMD-V. The
 * second check matters: on some hosts /dev/kvm exists without usable
 * virtualisation (here qemu -cpu max died on an MSR and -cpu kvm64 never
 * printed a line), and TCG is the only thing that boots there.
 */
static int use_kvm(const char *accel)
{
	struct buf ci = BUF_INIT;
	int fd, hw;

	if (!strcmp(accel, "tcg"))
		return 0;
	if (!strcmp(accel, "kvm"))
		return 1;
	fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return 0;
	close(fd);
	if (buf_read_file(&ci, "/proc/cpuinfo") < 0)
		return 0;
	hw = strstr(ci.buf, " vmx") || strstr(ci.buf, " svm");
	buf_release(&ci);
	if (!hw)
		info("/dev/kvm exists but the CPU flags show no vmx/svm: using TCG (--accel kvm forces KVM)");
	return hw;
}

/*
 * The version of qemu-system-x86_64 ("7.2.22"), once per process, "?" when
 * it cannot be read: a word of the guest's command line (klab.qemu=), so
 * that the instrument key of a calibration (store/calib.c) changes with it.
 */
static const char *qemu_version(void)
{
	static char v[32];
	struct buf out = BUF_INIT;
	const char *argv[] = { "qemu-system-x86_64", "--version", NULL }, *p;

	if (v[0])
		return v;
	snprintf(v, sizeof(v), "?");
	if (!run_argv(argv, 10000, &out, 1) && (p = strstr(out.buf, "version "))) {
		size_t n = strspn(p + 8, "0123456789.");

		if (n && n < sizeof(v))
			snprintf(v, sizeof(v), "%.*s", (int)n, p + 8);
	}
	buf_release(&out);
	return v;
}

/*
 * The host's CPU model from /proc/cpuinfo, blanks as '_' (NULL: unknown), for
 * a real-clock guest's klab.host= word: its speed is the host's (under KVM
 * or TCG, klab.accel=). An icount guest's path length does not depend on
 * the host, so its key has none.
 */
static char *host_cpu_model(void)
{
	struct buf ci = BUF_INIT;
	char *model = NULL;
	const char *p;

	if (buf_read_file(&ci, "/proc/cpuinfo") >= 0 && (p = strstr(ci.buf, "model name"))) {
		p = strchr(p, ':');
		if (p) {
			p += 1 + strspn(p + 1, " \t");
			model = xstrndup(p, strcspn(p, "\n"));
			for (char *c = model; *c; c++)
				if (*c == ' ' || *c == '\t')
					*c = '_';
		}
	}
	buf_release(&ci);
	return model;
}

static void qemu_argv(struct strvec *av, const struct qlab_state *st, int i, int sock_port)
{
	const struct qlab_guest *g = &st->g[i];
	const struct qlab_guest *peer = &st->g[i | 1];	/* the pair's peer */
	int prefix = st->pairs > 1 ? 30 : 24;	/* the workload link's (lab_qemu.h) */
	char mac0[18], mac1[18];
	struct buf app = BUF_INIT, fwd = BUF_INIT;

	mac_of(mac0, 0, st->index, i);
	mac_of(mac1, 1, st->index, i);
	strvec_push(av, "qemu-system-x86_64");
	strvec_pushf(av, "-name");
	strvec_pushf(av, "klab-%d-%s", st->index, g->name);
	strvec_push(av, "-machine");
	if (st->cache_model) {
		/*
		 * The plugin's caches are shared state without locks: the vCPUs
		 * run in one thread, round-robin (docs/cache-model.md).
		 */
		strvec_push(av, "pc");
		strvec_push(av, "-accel");
		strvec_push(av, "tcg,thread=single");
		strvec_push(av, "-plugin");
		strvec_pushf(av, "%s/klab-cache.so,out=%s/cache-model/%s.jsonl%s%s", st->dir, st->dir,
			     g->name, st->cache_args ? "," : "", st->cache_args ? st->cache_args : "");
	} else {
		strvec_push(av, st->kvm ? "pc,accel=kvm" : "pc,accel=tcg");
	}
	strvec_push(av, "-cpu");
	strvec_push(av, "max");
	strvec_push(av, "-smp");
	strvec_pushf(av, "%d", st->smp);
	strvec_push(av, "-m");
	strvec_pushf(av, "%d", st->mem_mb);
	if (st->icount) {
		/*
		 * The guest clock counts instructions, 1 ns each, while it runs;
		 * while it is idle it follows the host clock (sleep=on). With
		 * sleep=off an idle guest jumped to its next timer at once, so
		 * waiting for a packet from the host took hours of guest time
		 * (guest uptime 3.3 h after 3 min), TCP timed out its half-open
		 * connections and ssh lost one connection in 15 (docs/qemu-icount.md).
		 * A workload keeps the CPU busy: its counts do not change.
		 */
		strvec_push(av, "-icount");
		strvec_push(av, "shift=0,sleep=on");
	}
	strvec_pushv(av, (const char *const[]){ "-display", "none", "-monitor", "none",
						"-no-reboot", "-daemonize", NULL });
	strvec_push(av, "-pidfile");
	strvec_pushf(av, "%s/%s.pid", st->dir, g->name);
	strvec_push(av, "-serial");
	strvec_pushf(av, "file:%s/%s.console", st->dir, g->name);
	strvec_push(av, "-kernel");
	strvec_push(av, st->kernel);

	buf_addf(&app, "console=ttyS0 root=/dev/root rootfstype=9p "
		 "rootflags=trans=virtio,version=9p2000.L,msize=262144,cache=loose ro "
		 "init=%s/guest/init.sh panic=-1 quiet "
		 "klab.name=%s klab.dir=%s klab.mgmt=%s klab.mgmt_mac=%s "
		 "klab.lab=%s/%d klab.dummy=%s",
		 st->dir, g->name, st->dir, QLAB_MGMT_GUEST, mac0, g->addr, prefix, QLAB_DUMMY_ADDR);
	if (st->peer_netns)	/* the peer: a namespace joined by a veth, its sshd on port 2222 */
		buf_addf(&app, " klab.peerns=%s/%d klab.queues=%d", peer->addr, prefix, st->queues);
	else
		buf_addf(&app, " klab.lab_mac=%s", mac1);
	/*
	 * Under icount qemu 7.2 hangs booting more than one vCPU (its round-robin
	 * loop gives the spinning boot CPU the whole budget): boot one, and let
	 * the guest's init online the others (kernels/lab/guest-init.sh).
	 */
	if (st->icount && st->smp > 1)
		buf_addf(&app, " maxcpus=1 klab.cpus=%d", st->smp);
	if (st->cache_model)	/* guest-init mounts the windows' folder at /run/klab/cache-model */
		buf_addf(&app, " klab.cachemodel=1");
	if (st->pool[0])	/* one instrument: the pool's calibration (calib_instrument_key()) */
		buf_addf(&app, " klab.pool=%s", st->pool);
	/* what a calibration is of besides the guest (docs/statistics.md, "A calibrated instrument") */
	buf_addf(&app, " klab.qemu=%s klab.accel=%s", qemu_version(), st->kvm ? "kvm" : "tcg");
	if (!st->icount) {
		char *host = host_cpu_model();

		if (host)
			buf_addf(&app, " klab.host=%s", host);
		free(host);
	}
	strvec_push(av, "-append");
	strvec_push(av, app.buf);
	buf_release(&app);

	/* the host's root, read-only; mount_tag must be "root" (6.1 strips /dev/) */
	strvec_push(av, "-fsdev");
	strvec_push(av, "local,id=root,path=/,security_model=none,readonly=on,multidevs=remap");
	strvec_push(av, "-device");
	strvec_push(av, "virtio-9p-pci,fsdev=root,mount_tag=root");
	if (st->cache_model) {
		/* the windows' folder again, on its own share: mounted without the root's page cache */
		strvec_push(av, "-fsdev");
		strvec_pushf(av, "local,id=cm,path=%s/cache-model,security_model=none,readonly=on", st->dir);
		strvec_push(av, "-device");
		strvec_push(av, "virtio-9p-pci,fsdev=cm,mount_tag=klabcm");
	}
	/* management: user net moved into 198.18/15, isolated (restrict=on), ssh forwarded */
	strvec_push(av, "-netdev");
	if (st->peer_netns)
		buf_addf(&fwd, "user,id=n0,net=%s,host=%s,restrict=on,hostfwd=tcp:127.0.0.1:%d-:22,"
			 "hostfwd=tcp:127.0.0.1:%d-:%d", QLAB_MGMT_NET, QLAB_MGMT_HOST, g->ssh_port,
			 peer->ssh_port, QLAB_PEER_SSH_PORT);
	else
		buf_addf(&fwd, "user,id=n0,net=%s,host=%s,restrict=on,hostfwd=tcp:127.0.0.1:%d-:22",
			 QLAB_MGMT_NET, QLAB_MGMT_HOST, g->ssh_port);
	/*
	 * The kernel's probe (boot_probe_port): a connection that slirp cannot
	 * hand to a guest that is not up is tried again by slirp for a minute
	 * after its client gave up. On the SSH port such a late connection
	 * starts an sshd in the next boot, 30 M instructions in the middle of
	 * a run (docs/qemu-icount.md, "A run that did other work"); on this
	 * closed port it costs the guest's kernel one reset.
	 */
	if (g->probe_port > 0)
		buf_addf(&fwd, ",hostfwd=tcp:127.0.0.1:%d-:%d", g->probe_port, QLAB_PROBE_PORT);
	strvec_push(av, fwd.buf);
	buf_release(&fwd);
	strvec_push(av, "-device");
	strvec_pushf(av, "virtio-net-pci,netdev=n0,mac=%s,romfile=", mac0);
	strvec_push(av, "-device");
	strvec_push(av, "virtio-rng-pci");
	if (st->peer_netns)
		return;	/* the workload link is a veth inside the dut */
	/* workload link between the two guests */
	strvec_push(av, "-netdev");
	if (!strcmp(st->nic, "tap"))
		strvec_pushf(av, "tap,id=n1,ifname=klq%d%s,script=no,downscript=no,vhost=off,queues=%d",
			     st->index, g->name, st->queues);
	else if (i % 2 == GUEST_DUT)
		strvec_pushf(av, "socket,id=n1,listen=127.0.0.1:%d", sock_port);
	else
		strvec_pushf(av, "socket,id=n1,connect=127.0.0.1:%d", sock_port);
	strvec_push(av, "-device");
	if (st->queues > 1)
		strvec_pushf(av, "virtio-net-pci,netdev=n1,mac=%s,romfile=,mq=on,vectors=%d",
			     mac1, 2 * st->queues + 2);
	else
		strvec_pushf(av, "virtio-net-pci,netdev=n1,mac=%s,romfile=", mac1);
}

/* Start one guest; qemu daemonizes after its set-up, so errors come back here. */
static int start_guest(struct qlab_state *st, int i, int sock_port)
{
	struct strvec av = STRVEC_INIT;
	struct run_cmd c = RUN_CMD_INIT;
	struct buf pid = BUF_INIT;
	char *pidfile = xasprintf("%s/%s.pid", st->dir, st->g[i].name);
	long n;
	int ret = -1;

	qemu_argv(&av, st, i, sock_port);
	if (log_get_level() >= LOG_DEBUG) {
		struct buf q = BUF_INIT;

		sq_quote_argv(&q, (const char *const *)av.v);
		debug("%s", q.buf);
		buf_release(&q);
	}
	c.argv = (const char *const *)av.v;
	c.timeout_ms = QEMU_START_MS;
	c.out_cap = 1 << 20;
	if (run_command(&c) < 0)
		goto out;
	if (c.status != 0 || c.timed_out) {
		buf_rtrim(&c.err);
		error("cannot start qemu for guest '%s' (%s): %s", st->g[i].name,
		      run_describe(&c), c.err.len ? c.err.buf : "no message");
		goto out;
	}
	if (buf_read_file(&pid, pidfile) < 0)
		goto out;
	buf_trim(&pid);
	if (parse_long(pid.buf, 1, INT_MAX, &n) < 0) {
		error("qemu pid file '%s' holds '%s', not a pid", pidfile, pid.buf);
		goto out;
	}
	st->g[i].pid = n;
	ret = 0;
out:
	buf_release(&pid);
	run_release(&c);
	strvec_clear(&av);
	free(pidfile);
	return ret;
}

/*
 * Start the qemu processes of pair PAIR (-1: every pair; one a pair when
 * the peer is a namespace of the dut, whose pid it shares), saving the
 * state after each: 0 or -1; *started counts the ones that run.
 * sock_port[P] is pair P's socket link (with nic socket).
 */
static int start_guests(struct qlab_state *st, int pair, const int *sock_port, int *started)
{
	for (int i = 0; i < nguests(st); i++) {
		if (!runs_qemu(st, pair, i))
			continue;
		if (start_guest(st, i, sock_port[i / 2]) < 0)
			return -1;
		(*started)++;
		if (st->peer_netns)
			st->g[i + 1].pid = st->g[i].pid;
		if (qlab_state_save(st) < 0)
			return -1;
	}
	return 0;
}

static void ssh_argv(struct strvec *av, const struct qlab_state *st, int i)
{
	strvec_pushv(av, (const char *const[]){ "ssh", "-F", "/dev/null", "-o", "BatchMode=yes",
						"-o", "StrictHostKeyChecking=yes", "-o", "ServerAliveCountMax=2",
						"-o", "LogLevel=ERROR", NULL });
	strvec_push(av, "-o");
	strvec_push(av, ssh_limits(st)->connect);
	strvec_push(av, "-o");
	strvec_push(av, ssh_limits(st)->alive);
	strvec_push(av, "-o");
	strvec_pushf(av, "UserKnownHostsFile=%s/known_hosts", st->dir);
	strvec_push(av, "-i");
	strvec_pushf(av, "%s/keys/id_ed25519", st->dir);
	strvec_push(av, "-p");
	strvec_pushf(av, "%d", st->g[i].ssh_port);
	strvec_push(av, "root@127.0.0.1");
}

/* One bounded ssh attempt running `uname -r`: 0 with the release in *rel, or -1 (quiet). */
static int ssh_probe(const struct qlab_state *st, int i, struct buf *rel)
{
	struct strvec av = STRVEC_INIT;
	struct run_cmd c = RUN_CMD_INIT;
	int ret = -1;

	ssh_argv(&av, st, i);
	strvec_push(&av, "uname -r");
	c.argv = (const char *const *)av.v;
	c.timeout_ms = ssh_limits(st)->attempt_ms;
	c.kill_grace_ms = 500;
	c.out_cap = 4096;
	if (run_command(&c) == 0 && c.status == 0 && !c.timed_out) {
		buf_trim(&c.out);
		if (c.out.len) {
			buf_reset(rel);
			buf_addstr(rel, c.out.buf);
			ret = 0;
		}
	}
	run_release(&c);
	strvec_clear(&av);
	return ret;
}

static void console_tail(const struct qlab_state *st, int i)
{
	struct buf b = BUF_INIT;
	char *path = xasprintf("%s/%s.console", st->dir, st->g[qemu_of(st, i)].name);
	const char *p;
	int lines = 0;

	if (buf_read_file(&b, path) == 0) {
		buf_rtrim(&b);
		for (p = b.buf + b.len; p > b.buf && lines < 15; p--)
			if (p[-1] == '\n')
				lines++;
		fprintf(stderr, "--- last lines of %s ---\n%s\n---\n", path, p);
	}
	buf_release(&b);
	free(path);
}

/* Wait until every guest answers over ssh; bounded by timeout_s. */
static int wait_ssh(const struct qlab_state *st, long timeout_s, int64_t t0)
{
	int64_t deadline = now_ms() + timeout_s * 1000;
	int *up = xcalloc((size_t)nguests(st), sizeof(*up)), left = nguests(st), i;
	struct buf rel = BUF_INIT;
	int ret = -1;

	while (left) {
		for (i = 0; i < nguests(st); i++) {
			if (up[i])
				continue;
			if (!qlab_guest_alive(st, i)) {
				console_tail(st, i);
				error("guest '%s' stopped while booting (qemu pid %ld gone); "
				      "its console is in %s/%s.console", st->g[i].name,
				      (long)st->g[i].pid, st->dir, st->g[qemu_of(st, i)].name);
				goto out;
			}
			/* ssh only once the kernel answers (deploy.c kernel_up() says why) */
			if (st->g[i].probe_port > 0 && tcp_port_answers("127.0.0.1", st->g[i].probe_port, NETPROBE_MS) == 0)
				continue;
			if (ssh_probe(st, i, &rel) == 0) {
				up[i] = 1;
				left--;
				printf("lab: %s answers over ssh (127.0.0.1:%d) after %.1f s: %s\n",
				       st->g[i].name, st->g[i].ssh_port,
				       (now_ms() - t0) / 1000.0, rel.buf);
				fflush(stdout);
			}
		}
		if (!left)
			break;
		if (now_ms() > deadline) {
			for (i = 0; i < nguests(st); i++)
				if (!up[i])
					console_tail(st, i);
			error("the qemu guests did not answer over ssh within %ld s "
			      "(consoles: %s/*.console); try a longer --timeout on a busy host",
			      timeout_s, st->dir);
			goto out;
		}
		sleep(1);
	}
	ret = 0;
out:
	free(up);
	buf_release(&rel);
	return ret;
}

/*
 * The CPUs each guest has online, against --smp: under icount the guests
 * boot with maxcpus=1 and their init onlines the others, which a kernel
 * without CPU hotplug cannot do. 0, or -1 naming the guest and both lists.
 */
static int check_cpus(const struct qlab_state *st)
{
	char want[32];
	int i, ret = 0;

	if (st->smp > 1)
		snprintf(want, sizeof(want), "0-%d", st->smp - 1);
	else
		snprintf(want, sizeof(want), "0");
	for (i = 0; i < nguests(st); i++) {
		struct strvec av = STRVEC_INIT;
		struct run_cmd c = RUN_CMD_INIT;

		int ok = 0;

		ssh_argv(&av, st, i);
		strvec_push(&av, "cat /sys/devices/system/cpu/online");
		/*
		 * A guest that answered once may still miss ssh's 5 s banner
		 * timeout (under icount its sshd runs on the instruction clock):
		 * a few bounded attempts, as wait_ssh makes.
		 */
		for (int attempt = 0; attempt < 6 && !ok; attempt++) {
			if (attempt) {
				run_release(&c);
				c = (struct run_cmd)RUN_CMD_INIT;
				sleep(2);
			}
			c.argv = (const char *const *)av.v;
			c.timeout_ms = 30000;
			c.kill_grace_ms = 500;
			c.out_cap = 4096;
			ok = run_command(&c) == 0 && c.status == 0 && !c.timed_out;
		}
		if (ok) {
			buf_trim(&c.out);
			if (strcmp(c.out.buf, want)) {
				console_tail(st, i);
				ret = error("guest '%s' has CPUs %s online, not %s: %s (console: %s/%s.console)",
					    st->g[i].name, c.out.buf, want,
					    st->icount ? "it booted with maxcpus=1 (icount) and its init could not "
							 "online the others; the kernel needs CONFIG_HOTPLUG_CPU"
						       : "the kernel brought up fewer CPUs than qemu has",
					    st->dir, st->g[i].name);
			}
		} else {
			buf_trim(&c.err);
			ret = error("cannot read the online CPUs of guest '%s' over ssh (%s)%s%s", st->g[i].name,
				    run_describe(&c), c.err.len ? ": " : "", c.err.len ? last_line(c.err.buf) : "");
		}
		run_release(&c);
		strvec_clear(&av);
	}
	return ret;
}

/* ---- tap + bridge for the multi-queue workload link --------------------- */

/*
 * qemu's socket netdev has no queues= option, so a multi-queue workload
 * link needs tap devices: two multi_queue taps joined by a bridge in the
 * root namespace, without any address (the host neither routes nor
 * answers on them; IPv6 is disabled so it does not even send ND).
 */
static int ip(const char *const *args)
{
	struct strvec av = STRVEC_INIT;
	int ret;

	strvec_push(&av, "ip");
	strvec_pushv(&av, args);
	ret = run_argv((const char *const *)av.v, 10000, NULL, 0);
	strvec_clear(&av);
	return ret;
}

static void v6_off(const char *ifname)
{
	char *p = xasprintf("/proc/sys/net/ipv6/conf/%s/disable_ipv6", ifname);
	int fd = open(p, O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (write_all(fd, "1\n", 2) < 0)
			warn("cannot disable IPv6 on '%s'", ifname);
		close(fd);
	}
	free(p);
}

static void tap_down(int index)
{
	char br[32];
	int i;

	for (i = 0; i < 2; i++) {
		char *t = xasprintf("klq%d%s", index, guest_names[i]);
		struct run_cmd c = RUN_CMD_INIT;
		const char *argv[] = { "ip", "link", "del", t, NULL };

		c.argv = argv;
		c.timeout_ms = 10000;
		run_command(&c);
		run_release(&c);
		free(t);
	}
	snprintf(br, sizeof(br), "klqbr%d", index);
	{
		struct run_cmd c = RUN_CMD_INIT;
		const char *argv[] = { "ip", "link", "del", br, NULL };

		c.argv = argv;
		c.timeout_ms = 10000;
		run_command(&c);
		run_release(&c);
	}
}

static int tap_up(int index)
{
	char br[32], t[32];
	int i;

	snprintf(br, sizeof(br), "klqbr%d", index);
	tap_down(index);
	if (ip((const char *const[]){ "link", "add", br, "type", "bridge", "stp_state", "0",
				      "forward_delay", "0", NULL }) < 0)
		return error("cannot make bridge '%s' for the multi-queue lab link", br);
	v6_off(br);
	for (i = 0; i < 2; i++) {
		snprintf(t, sizeof(t), "klq%d%s", index, guest_names[i]);
		if (ip((const char *const[]){ "tuntap", "add", t, "mode", "tap", "multi_queue",
					      NULL }) < 0 ||
		    ip((const char *const[]){ "link", "set", t, "master", br, "up", NULL }) < 0) {
			tap_down(index);
			return error("cannot make tap '%s' for the multi-queue lab link", t);
		}
		v6_off(t);
	}
	if (ip((const char *const[]){ "link", "set", br, "up", NULL }) < 0) {
		tap_down(index);
		return -1;
	}
	return 0;
}

/* ---- stop --------------------------------------------------------------- */

/*
 * TERM, then KILL after 5 s, for each recorded guest of pair PAIR (-1:
 * every pair) still alive; a peer namespace goes with its dut's qemu.
 */
static void stop_guests(const struct qlab_state *st, int pair)
{
	int i, left;
	int64_t until;

	for (i = 0; i < nguests(st); i++)
		if (runs_qemu(st, pair, i) && qlab_pid_alive(st->g[i].pid, st->dir, st->g[i].name))
			kill(st->g[i].pid, SIGTERM);
	until = now_ms() + 5000;
	do {
		left = 0;
		for (i = 0; i < nguests(st); i++)
			left += runs_qemu(st, pair, i) && qlab_pid_alive(st->g[i].pid, st->dir, st->g[i].name);
		if (left)
			usleep(100 * 1000);
	} while (left && now_ms() < until);
	for (i = 0; i < nguests(st); i++)
		if (runs_qemu(st, pair, i) && qlab_pid_alive(st->g[i].pid, st->dir, st->g[i].name)) {
			warn("qemu of guest '%s' (pid %ld) ignored SIGTERM; killing it",
			     st->g[i].name, (long)st->g[i].pid);
			kill(st->g[i].pid, SIGKILL);
		}
}

/* ---- up, down, probe ------------------------------------------------------ */

char *qlab_dir(const char *dir, long index)
{
	char *d = dir ? xstrdup(dir) : default_dir(index), *abs = xabspath(d);

	free(d);
	return abs;
}

/* A folder about to hold a new lab: missing, empty, or a stopped lab of ours. */
static int prepare_dir(const char *dir)
{
	struct qlab_state old;
	int r = qlab_state_load(dir, &old), i;
	struct stat sb;

	if (r < 0)
		return -1;
	if (r == 0) {
		for (i = 0; i < nguests(&old); i++)
			if (qlab_pid_alive(old.g[i].pid, dir, old.g[i].name)) {
				error("a qemu lab is already up in '%s' (guest '%s', pid %ld); "
				      "run `klab lab down --qemu --dir %s` first",
				      dir, old.g[i].name, (long)old.g[i].pid, dir);
				qlab_state_free(&old);
				return -1;
			}
		qlab_state_free(&old);
		return remove_tree(dir);
	}
	if (stat(dir, &sb) == 0) {
		if (rmdir(dir) < 0)	/* an empty folder goes; anything else stays */
			return error("lab folder '%s' exists and is not a klab qemu lab; "
				     "give an empty or new folder with --dir", dir);
	}
	return 0;
}

int qlab_up(const struct qlab_opts *o, struct qlab_state *st)
{
	char *p = NULL;
	int i, sock_port[QLAB_MAX_PAIRS] = { 0 }, started = 0, ret = -1;
	int64_t t0 = now_ms();

	memset(st, 0, sizeof(*st));
	{
		char *qemu = run_which("qemu-system-x86_64");

		if (!qemu)
			return error("qemu-system-x86_64 not found: install the Debian package "
				     "qemu-system-x86 (make deps)");
		free(qemu);
	}

	if (o->pairs < 1 || o->pairs > QLAB_MAX_PAIRS)
		return error("--pairs %ld: a qemu lab has 1 to %d pairs (the address plan gives lab K's pairs "
			     "one /30 each of 198.19.(128+K).0/24; docs/qemu-lab.md)", o->pairs, QLAB_MAX_PAIRS);
	if (o->pool && (!*o->pool || strlen(o->pool) >= sizeof(st->pool) ||
			strspn(o->pool, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")
				!= strlen(o->pool)))
		return error("pool name '%s' is empty, longer than %zu characters, or not letters, digits and _-.",
			     o->pool, sizeof(st->pool) - 1);
	st->pairs = (int)o->pairs;
	if (o->pool)
		snprintf(st->pool, sizeof(st->pool), "%s", o->pool);
	st->index = (int)o->index;
	st->smp = (int)o->smp;
	st->mem_mb = (int)o->mem_mb;
	st->queues = (int)o->queues;
	st->icount = o->clock && !strcmp(o->clock, "icount");
	if (st->icount && !strcmp(o->accel, "kvm"))
		return error("--clock icount needs TCG: qemu counts instructions only when it translates "
			     "them (give --accel tcg or auto)");
	if (o->cache_model && !strcmp(o->accel, "kvm"))
		return error("--cache-model needs TCG: qemu's plugins see only the instructions it translates "
			     "(give --accel tcg or auto)");
	if (o->cache_args && !o->cache_model)
		return error("--cache-args without --cache-model");
	if (o->cache_args && qlab_cache_args_check(o->cache_args) < 0)
		return -1;
	st->cache_model = o->cache_model;
	st->kvm = st->icount || st->cache_model ? 0 : use_kvm(o->accel);
	if (o->peer && strcmp(o->peer, "guest") && strcmp(o->peer, "netns"))
		return error("peer '%s' is neither guest nor netns", o->peer);
	st->peer_netns = o->peer ? !strcmp(o->peer, "netns") : st->icount;
	if (st->icount && !st->peer_netns)
		warn("--clock icount with --peer guest: traffic between the two qemu processes arrives "
		     "in host time, so workloads that use the peer are not deterministic");
	snprintf(st->nic, sizeof(st->nic), "%s",
		 st->peer_netns ? "veth" : o->queues > 1 ? "tap" : "socket");
	{
		long cpus = sysconf(_SC_NPROCESSORS_ONLN), n = st->pairs * (st->peer_netns ? 1 : 2);

		if (st->pairs > 1 && !st->kvm && cpus > 0 && n * st->smp > cpus)
			warn("%ld qemu processes of %d vCPU on %ld host CPUs: a TCG guest takes a host core while "
			     "it runs, so jobs side by side take longer (under icount their figures do not change)",
			     n, st->smp, cpus);
	}
	if (st->pairs > 1 && !strcmp(st->nic, "tap"))
		return error("--pairs %d with a multi-queue link between two guests (--queues %d, --peer guest): "
			     "the taps and bridge of a lab are one pair's; give --peer netns, or one pair",
			     st->pairs, st->queues);
	st->cache_args = o->cache_args ? xstrdup(o->cache_args) : NULL;
	st->dir = qlab_dir(o->dir, o->index);
	if (plain_path(st->dir, "lab folder") < 0)
		goto out;
	if (!file_exists(o->kernel)) {
		error("kernel image '%s' not found", o->kernel);
		goto out;
	}
	p = xabspath(o->kernel);
	if (prepare_dir(st->dir) < 0)
		goto out;
	name_guests(st);
	for (i = 0; i < nguests(st); i++)
		if (st->pairs == 1)
			snprintf(st->g[i].addr, sizeof(st->g[i].addr), QLAB_LAB_FMT, 100 + st->index, i + 1);
		else
			snprintf(st->g[i].addr, sizeof(st->g[i].addr), QLAB_POOL_FMT, 128 + st->index,
				 4 * (i / 2) + i % 2 + 1);

	/* the folder: kernel copy, guest files, ports, keys, known_hosts */
	{
		char *k = xasprintf("%s/kernel", st->dir), *g = xasprintf("%s/guest", st->dir);
		int bad = mkdir_p(k) < 0 || mkdir_p(g) < 0;

		free(k);
		free(g);
		if (bad)
			goto out;
	}
	st->kernel = xasprintf("%s/kernel/bzImage", st->dir);
	if (copy_file(p, st->kernel, 0644) < 0)
		goto out;
	if (st->cache_model) {	/* a copy too: a rebuild cannot change a running lab's model */
		char *so = qlab_cache_plugin(), *to = xasprintf("%s/klab-cache.so", st->dir);
		char *cm = xasprintf("%s/cache-model", st->dir);
		int bad = !so || mkdir_p(cm) < 0 || copy_file(so, to, 0644) < 0;

		if (!so)
			error("the cache model plugin klab-cache.so is not built (make; or set KLAB_CACHE_PLUGIN)");
		free(so);
		free(to);
		free(cm);
		if (bad)
			goto out;
	}
	{
		char *from = xasprintf("%s/kernels/lab/guest-init.sh", src_dir());
		char *to = xasprintf("%s/guest/init.sh", st->dir);
		char *from2 = xasprintf("%s/kernels/lab/sshd_config", src_dir());
		char *to2 = xasprintf("%s/guest/sshd_config", st->dir);
		int bad = copy_file(from, to, 0755) < 0 || copy_file(from2, to2, 0644) < 0;

		free(from);
		free(to);
		free(from2);
		free(to2);
		if (bad) {
			error("cannot copy the guest files from '%s/kernels/lab' "
			      "(set KLAB_SRCDIR to the klab source tree)", src_dir());
			goto out;
		}
	}
	/*
	 * ssh ports of every guest, the probe port of each qemu (a peer in a
	 * namespace has its dut's), then a socket link's port a pair: all different
	 */
	{
		int *taken = xcalloc((size_t)(2 * nguests(st) + st->pairs), sizeof(*taken)), n = 0, bad = 0;

		for (i = 0; i < nguests(st) && !bad; i++)
			bad = (st->g[i].ssh_port = new_port(taken, &n)) < 0;
		for (i = 0; i < nguests(st) && !bad; i++)
			bad = (st->g[i].probe_port = st->peer_netns && i % 2 ? st->g[i - 1].probe_port :
						     new_port(taken, &n)) < 0;
		for (i = 0; i < st->pairs && !bad; i++)
			bad = (sock_port[i] = new_port(taken, &n)) < 0;
		free(taken);
		if (bad)
			goto out;
	}
	if (make_keys(st) < 0)
		goto out;
	if (!strcmp(st->nic, "tap") && tap_up(st->index) < 0)
		goto out;
	if (qlab_state_save(st) < 0)
		goto out;

	if (st->pairs > 1)
		printf("lab: %d pairs dutP/peerP%s%s, each booting as below\n", st->pairs,
		       st->pool[0] ? " in pool " : "", st->pool);
	printf("lab: booting %s (%s%s, %d vCPU, %d MB, %s workload link, %d queue%s) from %s\n",
	       st->peer_netns ? "dut, with the peer in its namespace " QLAB_PEER_NETNS : "dut and peer",
	       st->kvm ? "kvm" : "tcg", st->icount ? ", icount clock" : "", st->smp, st->mem_mb, st->nic,
	       st->queues, st->queues > 1 ? "s" : "", p);
	fflush(stdout);
	if (start_guests(st, -1, sock_port, &started) < 0)
		goto fail;
	if (wait_ssh(st, o->timeout_s, t0) < 0)
		goto fail;
	if (check_cpus(st) < 0)
		goto fail;
	if (write_fragment(st, o->profile) < 0)
		goto fail;
	ret = 0;
	goto out;
fail:
	if (started)
		stop_guests(st, -1);
	if (!strcmp(st->nic, "tap"))
		tap_down(st->index);
	fprintf(stderr, "klab: the lab folder '%s' is kept for inspection; "
		"`klab lab down --qemu --dir %s` removes it\n", st->dir, st->dir);
out:
	free(p);
	if (ret < 0)
		qlab_state_free(st);
	return ret;
}

/*
 * Two pairs' power cycles may run at once (two jobs of a pool, each
 * saving the whole lab.state with its new pids): each holds DIR/lab.lock
 * and reads the guests' pids again under it, so neither writes back the
 * other's old pid (which would leave a qemu that down does not stop).
 */
int qlab_power_cycle(struct qlab_state *st, int pair)
{
	int sock_port[QLAB_MAX_PAIRS] = { 0 }, started = 0, i, fd, ret = -1;
	char *lock = xasprintf("%s/lab.lock", st->dir);
	struct qlab_state now;

	if (pair >= st->pairs) {
		error("the qemu lab in '%s' has %d pair%s: no pair %d", st->dir, st->pairs,
		      st->pairs > 1 ? "s" : "", pair);
		goto out_free;
	}
	if ((fd = lock_file(lock, 120000)) < 0) {
		if (fd == LOCK_FILE_BUSY)
			error("cannot power-cycle the qemu lab in '%s': another power cycle held '%s' for 120 s",
			      st->dir, lock);
		goto out_free;
	}
	if (qlab_state_load(st->dir, &now) != 0) {
		error("cannot power-cycle the qemu lab in '%s': its lab.state is gone or broken", st->dir);
		goto out;
	}
	memcpy(st->g, now.g, sizeof(st->g));
	qlab_state_free(&now);
	stop_guests(st, pair);
	for (i = 0; i < nguests(st); i++)
		if (runs_qemu(st, pair, i) && qlab_pid_alive(st->g[i].pid, st->dir, st->g[i].name)) {
			error("guest '%s' (qemu pid %ld) did not stop", st->g[i].name, (long)st->g[i].pid);
			goto out;
		}
	for (i = 0; i < st->pairs && !strcmp(st->nic, "socket"); i++)
		if ((pair < 0 || i == pair) && (sock_port[i] = free_port()) < 0)
			goto out;
	ret = start_guests(st, pair, sock_port, &started);
out:
	close(fd);
out_free:
	free(lock);
	return ret;
}

int qlab_down(const struct qlab_state *st)
{
	stop_guests(st, -1);
	if (!strcmp(st->nic, "tap"))
		tap_down(st->index);
	return remove_tree(st->dir);
}

int qlab_probe(const struct qlab_state *st, struct buf *rel, const char **relv)
{
	int i, running = 0;

	for (i = 0; i < nguests(st); i++) {
		relv[i] = NULL;
		if (qlab_guest_alive(st, i)) {
			running++;
			if (ssh_probe(st, i, &rel[i]) == 0)
				relv[i] = rel[i].buf;
		}
	}
	return running;
}
