/* lab.c: `klab lab up|down|status`: the netns local lab (two namespaces with their own sshd), and dispatch to the qemu lab. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


#include "buf.h"
#include "lab/lab.h"
#include "lab/lab_common.h"
#include "lock.h"
#include "log.h"
#include "run.h"
#include "ssh/ssh.h"
#include "strvec.h"
#include "util.h"

#define SSHD "/usr/sbin/sshd"
#define STATE_FILE "netns.state"

/*
 * The address plan of the netns lab, all of it here. Everything lies in
 * the benchmarking range 198.18.0.0/15 (RFC 2544), never routed.
 * Lab K (0..NLAB_MAX_INDEX), machine i (0 dut, 1 peer) of pair P:
 *   namespace             klabK-dut, klabK-peer (several pairs: klabK-dutP, klabK-peerP)
 *   management veth       root side "klabKd"/"klabKp" ("klabKdP"/"klabKpP"),
 *                         namespace side "mgmt0"; a /30 each:
 *                         pair 0: 198.18.255.(8K+4i+1)/30, the namespace
 *                         .(8K+4i+2); pair P >= 1: 198.19.(4K+P/32).(8(P%32)+4i+1)/30
 *                         and +1, so lab K's extra pairs fill 198.19.4K.0/22;
 *                         sshd listens on the namespace's address, port 22
 *   workload veth         wl0 (dut) <-> wl1 (peer) of each pair, N tx/rx
 *                         queues, 198.18.0.(4K+i+1)/24 (each pair's link joins
 *                         only its two namespaces)
 * so two labs with different K never share a name or an address, and a
 * lab of one pair is the same as it always was.
 */
static void plan(struct nlab_machine *m, int index, int pairs, int pair, int i)
{
	static const char *const names[] = { "dut", "peer" };

	if (pairs == 1)
		snprintf(m->name, sizeof(m->name), "%s", names[i]);
	else
		snprintf(m->name, sizeof(m->name), "%s%d", names[i], pair);
	/* from names[], not m->name: GCC's -Wrestrict (ASan build, -O1) takes two fields of *m for one object */
	if (pairs == 1)
		snprintf(m->netns, sizeof(m->netns), "klab%d-%s", index, names[i]);
	else
		snprintf(m->netns, sizeof(m->netns), "klab%d-%s%d", index, names[i], pair);
	if (pairs == 1)
		snprintf(m->root_veth, sizeof(m->root_veth), "klab%d%c", index, names[i][0]);
	else
		snprintf(m->root_veth, sizeof(m->root_veth), "klab%d%c%d", index, names[i][0], pair);
	if (pair == 0) {
		snprintf(m->root_addr, sizeof(m->root_addr), "198.18.255.%d", 8 * index + 4 * i + 1);
		snprintf(m->mgmt_addr, sizeof(m->mgmt_addr), "198.18.255.%d", 8 * index + 4 * i + 2);
	} else {
		int c = 4 * index + pair / 32, d = 8 * (pair % 32) + 4 * i;

		snprintf(m->root_addr, sizeof(m->root_addr), "198.19.%d.%d", c, d + 1);
		snprintf(m->mgmt_addr, sizeof(m->mgmt_addr), "198.19.%d.%d", c, d + 2);
	}
	snprintf(m->nic, sizeof(m->nic), "wl%d", i);
	snprintf(m->addr, sizeof(m->addr), "198.18.0.%d", 4 * index + i + 1);
	m->port = 22;
}

void nlab_plan(struct nlab *l, int index, int queues, int pairs)
{
	int i;

	l->index = index;
	l->queues = queues;
	l->pairs = pairs;
	for (i = 0; i < 2 * pairs; i++)
		plan(&l->m[i], index, pairs, i / 2, i % 2);
}

char *nlab_default_dir(int index)
{
	return index ? xasprintf("lab/netns-%d", index) : xstrdup("lab/netns");
}

/* ---- running commands -------------------------------------------------------- */

/* Run a short command: 0 on exit 0, else -1 (logged with its last stderr line; SHQ: not logged). */
#define SH(...) run_argv((const char *const[]){ __VA_ARGS__, NULL }, 30000, NULL, 0)
#define SHQ(...) run_argv((const char *const[]){ __VA_ARGS__, NULL }, 30000, NULL, 1)

/* ---- state ---------------------------------------------------------------------- */

int nlab_load(const char *dir, struct nlab *l)
{
	struct buf b = BUF_INIT;
	char *path = xasprintf("%s/%s", dir, STATE_FILE);
	long index = -1, queues = 8, pairs = 1;
	char *line, *save = NULL;
	int ret = -1, lineno = 0;

	if (!file_exists(path)) {
		ret = 1;
		goto out;
	}
	if (buf_read_file(&b, path) < 0)
		goto out;
	l->pool[0] = 0;
	for (line = strtok_r(b.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *v;

		lineno++;
		if (line[0] == '#')
			continue;
		if ((v = skip_prefix(line, "index=")) && !parse_long(v, 0, NLAB_MAX_INDEX, &index))
			continue;
		if ((v = skip_prefix(line, "queues=")) && !parse_long(v, 1, 256, &queues))
			continue;
		if ((v = skip_prefix(line, "pairs=")) && !parse_long(v, 1, NLAB_MAX_PAIRS, &pairs))
			continue;
		if ((v = skip_prefix(line, "pool=")) && strlen(v) < sizeof(l->pool)) {
			snprintf(l->pool, sizeof(l->pool), "%s", v);
			continue;
		}
		error("%s:%d: unexpected line '%s'", path, lineno, line);
		goto out;
	}
	if (index < 0) {
		error("%s: no index= line", path);
		goto out;
	}
	nlab_plan(l, (int)index, (int)queues, (int)pairs);
	snprintf(l->dir, sizeof(l->dir), "%s", dir);
	ret = 0;
out:
	buf_release(&b);
	free(path);
	return ret;
}

/* pid from DIR/M/sshd.pid if that process is alive and is an sshd; else 0. */
static pid_t sshd_pid(const struct nlab *l, const struct nlab_machine *m)
{
	struct buf b = BUF_INIT, comm = BUF_INIT;
	char *path = xasprintf("%s/%s/sshd.pid", l->dir, m->name), *cpath = NULL;
	long pid = 0;

	if (!file_exists(path))
		goto out;
	if (buf_read_file(&b, path) < 0)
		goto out;
	buf_trim(&b);
	if (parse_long(b.buf, 1, INT_MAX, &pid) < 0) {
		pid = 0;
		goto out;
	}
	cpath = xasprintf("/proc/%ld/comm", pid);
	if (!file_exists(cpath) || buf_read_file(&comm, cpath) < 0) {
		pid = 0;
		goto out;
	}
	buf_trim(&comm);
	if (strcmp(comm.buf, "sshd"))
		pid = 0;
out:
	buf_release(&b);
	buf_release(&comm);
	free(path);
	free(cpath);
	return (pid_t)pid;
}

static int netns_exists(const char *ns)
{
	char *p = xasprintf("/run/netns/%s", ns);
	int r = file_exists(p);

	free(p);
	return r;
}

/*
 * Which folder owns lab K: /run/klab-netns-lab/K holds the folder's path,
 * written before the namespaces are made and removed with them. `down`
 * without a state file (the folder is gone) removes lab K only when the
 * record names the same folder, so it cannot take down another user's lab
 * that took the index since.
 */
#define OWNER_DIR "/run/klab-netns-lab"

static char *owner_path(int index)
{
	return xasprintf("%s/%d", OWNER_DIR, index);
}

static int owner_write(const struct nlab *l)
{
	char *p = owner_path(l->index);
	int ret = mkdir_p(OWNER_DIR) < 0 ? -1 : write_file_atomic(p, l->dir, strlen(l->dir), 0644);

	free(p);
	return ret;
}

/* The owner folder of lab K (caller frees), or NULL. */
static char *owner_read(int index)
{
	struct buf b = BUF_INIT;
	char *p = owner_path(index), *ret = NULL;

	if (file_exists(p) && buf_read_file(&b, p) == 0)
		ret = buf_detach(&b, NULL);
	buf_release(&b);
	free(p);
	return ret;
}

static void owner_remove(const struct nlab *l)
{
	char *p = owner_path(l->index), *o = owner_read(l->index);

	if (o && !strcmp(o, l->dir))
		unlink(p);
	free(o);
	free(p);
}

/* ---- up ----------------------------------------------------------------------------- */

/*
 * SHLVL=1: bash built with SSH_SOURCE_BASHRC (Debian's) reads ~/.bashrc
 * for every command sshd runs unless SHLVL says the shell is nested. The
 * machines share the host's /root, and a .bashrc there (this host's runs
 * `pyenv init`: 113 processes) cost 1.3 s of each of the ~30 SSH commands
 * of a job; a lab machine is a clean machine, not the host's login.
 */
static int write_sshd_config(const struct nlab *l, const struct nlab_machine *m)
{
	struct buf b = BUF_INIT;
	char *path = xasprintf("%s/%s/sshd_config", l->dir, m->name);
	int ret;

	buf_addf(&b,
		 "# sshd of netns lab machine '%s' (namespace %s); written by `klab lab up --netns`\n"
		 "Port %d\n"
		 "ListenAddress %s\n"
		 "HostKey %s/%s/ssh_host_ed25519_key\n"
		 "PidFile %s/%s/sshd.pid\n"
		 "AuthorizedKeysFile %s/keys/authorized_keys\n"
		 "PermitRootLogin prohibit-password\n"
		 "PubkeyAuthentication yes\n"
		 "PasswordAuthentication no\n"
		 "KbdInteractiveAuthentication no\n"
		 "UsePAM no\n"
		 "StrictModes no\n"
		 "UseDNS no\n"
		 "PrintMotd no\n"
		 "MaxStartups 100:30:200\n"
		 "MaxSessions 100\n"
		 "LogLevel VERBOSE\n"
		 "SetEnv SHLVL=1 KLAB_LAB_DIR=%s KLAB_LAB_MACHINE=%s\n"
		 "Subsystem sftp internal-sftp\n",
		 m->name, m->netns, m->port, m->mgmt_addr, l->dir, m->name, l->dir, m->name, l->dir,
		 l->dir, m->name);
	ret = write_file_atomic(path, b.buf, b.len, 0644);
	buf_release(&b);
	free(path);
	return ret;
}

int nlab_sshd_start(const struct nlab *l, const struct nlab_machine *m)
{
	char *conf = xasprintf("%s/%s/sshd_config", l->dir, m->name);
	char *log = xasprintf("%s/%s/sshd.log", l->dir, m->name);
	int ret = -1;

	if (mkdir_p("/run/sshd") < 0)
		goto out;
	ret = SH("ip", "netns", "exec", m->netns, SSHD, "-f", conf, "-E", log);
out:
	free(conf);
	free(log);
	return ret;
}

/* Read DIR/M/ssh_host_ed25519_key.pub as "TYPE BASE64". */
static int host_pub(const struct nlab *l, const struct nlab_machine *m, struct buf *out)
{
	struct buf b = BUF_INIT;
	struct strvec w = STRVEC_INIT;
	char *path = xasprintf("%s/%s/ssh_host_ed25519_key.pub", l->dir, m->name);
	int ret = -1;

	if (buf_read_file(&b, path) < 0)
		goto out;
	strvec_split(&w, b.buf, " \t\n");
	if (w.n < 2) {
		error("%s: malformed public key", path);
		goto out;
	}
	buf_addf(out, "%s %s", w.v[0], w.v[1]);
	ret = 0;
out:
	buf_release(&b);
	strvec_clear(&w);
	free(path);
	return ret;
}

/* Wait until the machine's sshd answers with its own host key (15 s). */
static int wait_sshd(const struct nlab *l, const struct nlab_machine *m)
{
	struct buf want = BUF_INIT, got = BUF_INIT;
	int64_t deadline = now_ms() + 15000;
	int ret = -1, lvl = log_get_level();

	if (host_pub(l, m, &want) < 0)
		goto out;
	while (now_ms() < deadline) {
		buf_reset(&got);
		log_set_level(LOG_CRIT);	/* attempts before sshd listens fail: not news */
		if (ssh_hostkey_fetch(m->mgmt_addr, m->port, 2000, &got, NULL) == 0) {
			log_set_level(lvl);
			if (!ends_with(got.buf, want.buf)) {
				error("sshd of lab machine '%s' at %s answers with another host key", m->name,
				      m->mgmt_addr);
				goto out;
			}
			ret = 0;
			goto out;
		}
		log_set_level(lvl);
		usleep(100000);
	}
	ssh_hostkey_fetch(m->mgmt_addr, m->port, 2000, &got, NULL);	/* once more, to log why */
	error("sshd of lab machine '%s' did not answer on %s:%d within 15 s (see %s/%s/sshd.log)",
	      m->name, m->mgmt_addr, m->port, l->dir, m->name);
out:
	log_set_level(lvl);
	buf_release(&want);
	buf_release(&got);
	return ret;
}

static int write_fragment(const struct nlab *l)
{
	struct lab_machine_conf *mc = xcalloc((size_t)(2 * l->pairs), sizeof(*mc));
	struct lab_fragment f = { "netns", "", l->index, l->dir, mc, 2 * l->pairs };
	int i, ret;

	for (i = 0; i < 2 * l->pairs; i++) {
		const struct nlab_machine *m = &l->m[i];

		mc[i] = (struct lab_machine_conf){ m->name, m->mgmt_addr, m->port, m->nic, m->addr, "none", NULL, NULL, NULL,
						   i % 2 == 0 && l->pool[0] ? l->pool : NULL, NULL, 0 };
	}
	ret = lab_write_fragment(&f);
	free(mc);
	return ret;
}

/* One machine: its folder and host key, namespace, management veth (both ends addressed and up). */
static int make_machine(const struct nlab *l, const struct nlab_machine *m)
{
	char *p = xasprintf("%s/%s", l->dir, m->name);
	char cidr[40], comment[64];
	int ret = -1;

	if (mkdir_p(p) < 0)
		goto out;
	free(p);
	p = xasprintf("%s/%s/ssh_host_ed25519_key", l->dir, m->name);
	snprintf(comment, sizeof(comment), "klab-lab-%s", m->name);
	if (lab_keygen(p, comment) < 0)
		goto out;
	if (SH("ip", "netns", "add", m->netns) < 0 ||
	    SH("ip", "link", "add", m->root_veth, "type", "veth", "peer", "name", "mgmt0", "netns", m->netns) < 0)
		goto out;
	snprintf(cidr, sizeof(cidr), "%s/30", m->root_addr);
	if (SH("ip", "addr", "add", cidr, "dev", m->root_veth) < 0 || SH("ip", "link", "set", m->root_veth, "up") < 0)
		goto out;
	snprintf(cidr, sizeof(cidr), "%s/30", m->mgmt_addr);
	if (SH("ip", "-n", m->netns, "addr", "add", cidr, "dev", "mgmt0") < 0 ||
	    SH("ip", "-n", m->netns, "link", "set", "mgmt0", "up") < 0 ||
	    SH("ip", "-n", m->netns, "link", "set", "lo", "up") < 0)
		goto out;
	ret = 0;
out:
	free(p);
	return ret;
}

/* The workload veth of one pair: wl0 in the dut, wl1 in the peer, Q queues, addressed and up. */
static int make_link(const struct nlab *l, const struct nlab_machine *dut, const struct nlab_machine *peer)
{
	const struct nlab_machine *pm[2] = { dut, peer };
	char q[16];
	int i;

	snprintf(q, sizeof(q), "%d", l->queues);
	if (SH("ip", "link", "add", dut->nic, "numtxqueues", q, "numrxqueues", q, "netns", dut->netns,
	       "type", "veth", "peer", "name", peer->nic, "numtxqueues", q, "numrxqueues", q,
	       "netns", peer->netns) < 0)
		return -1;
	for (i = 0; i < 2; i++) {
		char cidr[40];

		snprintf(cidr, sizeof(cidr), "%s/24", pm[i]->addr);
		if (SH("ip", "-n", pm[i]->netns, "addr", "add", cidr, "dev", pm[i]->nic) < 0 ||
		    SH("ip", "-n", pm[i]->netns, "link", "set", pm[i]->nic, "up") < 0)
			return -1;
	}
	return 0;
}

static int lab_build(struct nlab *l)
{
	struct buf kh = BUF_INIT, key = BUF_INIT, st = BUF_INIT;
	char *p = NULL;
	int i, n = 2 * l->pairs, ret = -1;

	p = xasprintf("%s/keys", l->dir);
	if (mkdir_p(p) < 0)
		goto out;
	free(p);
	p = xasprintf("%s/keys/id_ed25519", l->dir);
	if (lab_keygen(p, "klab-netns-lab") < 0)
		goto out;
	free(p);
	p = xasprintf("%s/keys/id_ed25519.pub", l->dir);
	if (buf_read_file(&key, p) < 0)
		goto out;
	free(p);
	p = xasprintf("%s/keys/authorized_keys", l->dir);
	if (write_file_atomic(p, key.buf, key.len, 0600) < 0)
		goto out;

	/* the state file first, so that `lab down` finds whatever gets created */
	buf_addf(&st, "# klab netns lab: written by `klab lab up --netns`, read by down and status\n"
		 "index=%d\nqueues=%d\n", l->index, l->queues);
	if (l->pairs > 1)
		buf_addf(&st, "pairs=%d\n", l->pairs);
	if (l->pool[0])
		buf_addf(&st, "pool=%s\n", l->pool);
	free(p);
	p = xasprintf("%s/%s", l->dir, STATE_FILE);
	if (write_file_atomic(p, st.buf, st.len, 0644) < 0 || owner_write(l) < 0)
		goto out;

	for (i = 0; i < n; i++)
		if (make_machine(l, &l->m[i]) < 0)
			goto out;
	for (i = 0; i < n; i += 2)
		if (make_link(l, &l->m[i], &l->m[i + 1]) < 0)
			goto out;
	for (i = 0; i < n; i++) {
		const struct nlab_machine *m = &l->m[i];

		if (write_sshd_config(l, m) < 0 || nlab_sshd_start(l, m) < 0)
			goto out;
		buf_reset(&key);
		if (host_pub(l, m, &key) < 0)
			goto out;
		buf_addf(&kh, "%s %s\n", m->mgmt_addr, key.buf);
	}
	free(p);
	p = xasprintf("%s/known_hosts", l->dir);
	if (write_file_atomic(p, kh.buf, kh.len, 0644) < 0)
		goto out;
	for (i = 0; i < n; i++)
		if (wait_sshd(l, &l->m[i]) < 0)
			goto out;
	if (write_fragment(l) < 0)
		goto out;
	ret = 0;
out:
	free(p);
	buf_release(&kh);
	buf_release(&key);
	buf_release(&st);
	return ret;
}

/* ---- down ----------------------------------------------------------------------------- */

/* Signal every process inside the namespace (our sshd and its sessions). Returns how many. */
static int kill_netns_pids(const char *ns, int sig)
{
	struct run_cmd c = RUN_CMD_INIT;
	const char *argv[] = { "ip", "netns", "pids", ns, NULL };
	struct strvec pids = STRVEC_INIT;
	size_t i;
	int n = 0;

	c.argv = argv;
	c.timeout_ms = 10000;
	if (run_command(&c) == 0 && c.status == 0) {
		strvec_split(&pids, c.out.buf, " \n");
		for (i = 0; i < pids.n; i++) {
			long pid;

			if (!parse_long(pids.v[i], 2, INT_MAX, &pid) && pid != getpid() && kill((pid_t)pid, sig) == 0)
				n++;
		}
	}
	strvec_clear(&pids);
	run_release(&c);
	return n;
}

int nlab_sshd_stop(const struct nlab *l, const struct nlab_machine *m)
{
	int64_t deadline = now_ms() + 3000;
	pid_t pid = sshd_pid(l, m);

	if (pid > 0)
		kill(pid, SIGTERM);
	if (!netns_exists(m->netns))
		return 0;
	kill_netns_pids(m->netns, SIGTERM);
	while (now_ms() < deadline && kill_netns_pids(m->netns, 0) > 0)
		usleep(50000);
	kill_netns_pids(m->netns, SIGKILL);
	return 0;
}

/*
 * Stop the sshd and every process of each machine's namespace: TERM to
 * all of them first, then one shared 3 s wait, then KILL, so that a lab
 * of many pairs goes down in seconds, not 3 s a machine.
 */
static void stop_all(const struct nlab *l)
{
	int i, n = 2 * l->pairs, any = 1;
	int64_t deadline = now_ms() + 3000;
	char *left = xcalloc((size_t)n, 1);

	for (i = 0; i < n; i++) {
		const struct nlab_machine *m = &l->m[i];
		pid_t pid = sshd_pid(l, m);

		if (pid > 0)
			kill(pid, SIGTERM);
		if ((left[i] = (char)netns_exists(m->netns)))
			kill_netns_pids(m->netns, SIGTERM);
	}
	while (any && now_ms() < deadline) {
		any = 0;
		for (i = 0; i < n; i++) {
			if (!left[i])
				continue;
			if (kill_netns_pids(l->m[i].netns, 0) > 0)
				any = 1;
			else
				left[i] = 0;
		}
		if (any)
			usleep(50000);
	}
	for (i = 0; i < n; i++)
		if (left[i])
			kill_netns_pids(l->m[i].netns, SIGKILL);
	free(left);
}

static void lab_teardown(const struct nlab *l, int remove_dir)
{
	int i;

	stop_all(l);
	for (i = 0; i < 2 * l->pairs; i++) {
		const struct nlab_machine *m = &l->m[i];
		char *path;

		if (netns_exists(m->netns))
			SH("ip", "netns", "del", m->netns);
		path = xasprintf("/sys/class/net/%s", m->root_veth);
		if (file_exists(path))
			SHQ("ip", "link", "del", m->root_veth);
		free(path);
	}
	owner_remove(l);
	if (remove_dir && l->dir[0]) {
		char *state = xasprintf("%s/%s", l->dir, STATE_FILE);

		/* only a folder that is a netns lab: never rm -rf what --dir happens to name */
		if (file_exists(state))
			remove_tree(l->dir);
		free(state);
	}
}

/* ---- status ---------------------------------------------------------------------------- */

int nlab_status(const struct nlab *l, struct nlab_machine_status *st)
{
	int i, up = 1;

	for (i = 0; i < 2 * l->pairs; i++) {
		st[i].sshd_pid = sshd_pid(l, &l->m[i]);
		st[i].netns_exists = netns_exists(l->m[i].netns);
		up &= st[i].netns_exists && st[i].sshd_pid > 0;
	}
	return up;
}

/* ---- up and down ------------------------------------------------------------------------- */

char *nlab_dir(const char *dir, int index)
{
	char *d = dir ? xstrdup(dir) : nlab_default_dir(index), *abs = xabspath(d);

	free(d);
	if (strlen(abs) >= sizeof(((struct nlab *)0)->dir)) {
		error("lab folder name '%s' is too long", abs);
		free(abs);
		return NULL;
	}
	return abs;
}

/* Labs are brought up one at a time: an flock on a file in /run/lock. fd or -1. */
static int lab_lock(void)
{
	mkdir_p("/run/lock");
	return lock_file("/run/lock/klab-netns-lab.lock", -1);
}

/*
 * Labs are made one at a time (the lock is held), so the first index
 * whose namespaces do not exist is ours. From the top down: scripts that
 * name an index tend to use small ones.
 */
static int free_index(int queues, int pairs)
{
	static struct nlab l;	/* static: it is large */
	int index, i;

	for (index = NLAB_MAX_INDEX; index >= 0; index--) {
		char *o;
		int taken;

		nlab_plan(&l, index, queues, pairs);
		o = owner_read(index);
		taken = o != NULL;
		free(o);
		for (i = 0; i < 2 * pairs && !taken; i++)
			taken = netns_exists(l.m[i].netns);
		if (!taken)
			return index;
	}
	return error("no free netns lab index (all %d are in use)", NLAB_MAX_INDEX + 1);
}

int nlab_up(struct nlab *l, const char *dir_arg, int index, int queues, int pairs, const char *pool)
{
	char *dir = NULL;
	int i, lock, ret = -1;

	if (getuid() != 0)
		return error("the netns lab needs root (network namespaces, veth, sshd)");
	if (pairs < 1 || pairs > NLAB_MAX_PAIRS)
		return error("a netns lab has 1 to %d machine pairs, not %d", NLAB_MAX_PAIRS, pairs);
	if (pool && (!*pool || strlen(pool) >= sizeof(l->pool)))
		return error("pool name '%s' is empty or longer than %zu characters", pool, sizeof(l->pool) - 1);
	if ((lock = lab_lock()) < 0)
		return -1;
	if (index < 0 && (index = free_index(queues, pairs)) < 0)
		goto out;
	if (!(dir = nlab_dir(dir_arg, index)))
		goto out;
	if (nlab_load(dir, l) == 0) {
		error("a netns lab is already up in '%s'; run `klab lab down --dir %s` first", dir, dir);
		goto out;
	}
	memset(l, 0, sizeof(*l));
	nlab_plan(l, index, queues, pairs);
	snprintf(l->dir, sizeof(l->dir), "%s", dir);
	if (pool)
		snprintf(l->pool, sizeof(l->pool), "%s", pool);
	for (i = 0; i < 2 * pairs; i++) {
		if (netns_exists(l->m[i].netns)) {
			error("namespace '%s' exists already: another lab uses index %d "
			      "(give another --index or --index auto, or `klab lab down --index %d`)",
			      l->m[i].netns, index, index);
			goto out;
		}
	}
	if (mkdir_p(dir) < 0)
		goto out;
	if (lab_build(l) < 0) {
		if (getenv("KLAB_LAB_KEEP")) {
			error("cannot bring the netns lab up; KLAB_LAB_KEEP is set: left as it is");
		} else {
			error("cannot bring the netns lab up; removing what was made");
			lab_teardown(l, 1);
		}
		goto out;
	}
	ret = 0;
out:
	free(dir);
	close(lock);
	return ret;
}

int nlab_down(const char *dir, int index, int force, struct nlab_down *d)
{
	struct nlab l;
	int rc = nlab_load(dir, &l);

	memset(d, 0, sizeof(*d));
	d->index = index;
	if (rc < 0)
		return -1;
	if (rc == 0) {
		lab_teardown(&l, 1);
		d->how = NLAB_DOWN_DONE;
		d->index = l.index;
		return 0;
	}
	if (index < 0) {
		d->how = NLAB_DOWN_NO_LAB;
		return 0;
	}
	/*
	 * No state (a crashed up, or the folder was removed first, as
	 * tests/lib.sh does): remove lab K if it was made for this folder
	 * (or with --force).
	 */
	d->owner = owner_read(index);
	if (!force && (!d->owner || strcmp(d->owner, dir))) {
		d->how = d->owner ? NLAB_DOWN_FOREIGN : NLAB_DOWN_UNOWNED;
		return 0;
	}
	/* how many pairs it had went with the state: the names of one pair, then of the most */
	memset(&l, 0, sizeof(l));
	snprintf(l.dir, sizeof(l.dir), "%s", dir);
	nlab_plan(&l, index, 8, 1);
	lab_teardown(&l, 0);
	nlab_plan(&l, index, 8, NLAB_MAX_PAIRS);
	lab_teardown(&l, 0);
	d->how = NLAB_DOWN_NAMESPACES;
	return 0;
}
