/* lab_qemu.h: the qemu local lab: guests (dut, peer; or N pairs of them) booted from a klab-built kernel. */
#ifndef KLAB_LAB_QEMU_H
#define KLAB_LAB_QEMU_H

#include <sys/types.h>

/*
 * The address plan of the qemu lab, all inside the benchmarking range
 * 198.18.0.0/15 (RFC 2544). Lab K (--index K, 0..49) uses:
 *   management NIC (qemu user net, private to each qemu): 198.18.2.15/24,
 *     qemu's side 198.18.2.2; SSH is forwarded from 127.0.0.1:PORT
 *   workload NIC between the two guests: 198.18.(100+K).1/24 (dut) and .2 (peer)
 *   (peer in a namespace of the dut: the same two addresses on the veth eth1 <-> eth1)
 *   dummy0 in each guest: 198.18.201.1/24; udp_tx to 198.18.201.2 leaves
 *     through dummy0 (no neighbour: dummy is NOARP) and is dropped by its driver
 * A lab of N > 1 pairs (--pairs N) gives pair P (dutP, peerP) the workload
 * link 198.19.(128+K).(4P+1)/30 (dut) and .(4P+2)/30 (peer): lab K's pairs
 * fill 198.19.(128+K).0/24, above the netns lab's 198.19.0.0/17, so at most
 * QLAB_MAX_PAIRS pairs a lab.
 */
#define QLAB_MGMT_NET "198.18.2.0/24"
#define QLAB_MGMT_HOST "198.18.2.2"
#define QLAB_MGMT_GUEST "198.18.2.15/24"
#define QLAB_LAB_FMT "198.18.%d.%d"		/* 100 + K, 1 (dut) or 2 (peer) */
#define QLAB_DUMMY_ADDR "198.18.201.1/24"
#define QLAB_DUMMY_TARGET "198.18.201.2"
#define QLAB_MAX_INDEX 49
#define QLAB_POOL_FMT "198.19.%d.%d"	/* 128 + K, 4P + 1 (dut) or 4P + 2 (peer) */
#define QLAB_MAX_PAIRS 64		/* /30s in one /24 */
#define QLAB_PEER_NETNS "klabpeer"	/* the peer's namespace inside the dut */
#define QLAB_PEER_SSH_PORT 2222		/* the peer's sshd inside the dut */
#define QLAB_PROBE_PORT 1		/* a closed TCP port of the guest: its kernel answers with a reset */
#define QLAB_SHARED_ROOT "/run/klab/host"	/* where guest-init binds the host's root (read-only) */

struct ssh_conn;

/*
 * Make sure that udp_tx with target = dummy can send to QLAB_DUMMY_TARGET
 * from the machine C is connected to: nothing to do when the route exists (the
 * qemu lab's guests have dummy0), else "kdummy0" is made there (a dummy
 * device, or a sink-less veth pair where the kernel has no dummy driver).
 * Used by the job's agent step on any dut. 0 or -1 (logged; ssh_error(c)
 * says why).
 */
int qlab_dummy_target(struct ssh_conn *c);

/*
 * One guest of a running lab, as recorded in LABDIR/lab.state.
 */
struct qlab_guest {
	char name[16];		/* "dut" or "peer"; dutP, peerP in a lab of several pairs */
	pid_t pid;		/* qemu's pid, 0 if unknown */
	int ssh_port;		/* on 127.0.0.1 */
	/*
	 * On 127.0.0.1, forwarded to TCP port QLAB_PROBE_PORT of the guest's
	 * kernel, where nothing listens (0: none, a lab from before it): the
	 * deploy asks it whether the kernel is up before it opens SSH
	 * (boot_probe_port, docs/qemu-lab.md). A peer in a namespace of the
	 * dut's guest has the dut's.
	 */
	int probe_port;
	char addr[32];		/* workload address */
};

struct qlab_state {
	char *dir;		/* absolute lab folder */
	char *kernel;		/* the bzImage qemu booted */
	int index, smp, mem_mb, queues, kvm;
	int icount;		/* 1: -icount shift=0,sleep=off, the guest clock counts instructions */
	/*
	 * 1: the peer is not a guest of its own but the network namespace
	 * "klabpeer" inside the dut, joined to it by the veth eth1 <-> eth1
	 * (the default under icount: traffic between two qemu processes would
	 * arrive in host time). Its sshd runs in the dut (port 2222, every
	 * session entered into the namespace); g[1].pid is the dut's qemu.
	 */
	int peer_netns;
	char nic[16];		/* "socket", "tap" or "veth" (peer_netns) */
	/*
	 * Pairs of guests (--pairs N): pair P is the dut g[2P] and its peer
	 * g[2P + 1], each pair a lab of its own (a qemu, or two, and their
	 * workload link) sharing the folder, its keys and the fragment. One
	 * pair is named dut and peer, N > 1 dutP and peerP.
	 */
	int pairs;
	char pool[32];		/* the pool of the fragment's duts ("" for none) */
	struct qlab_guest g[2 * QLAB_MAX_PAIRS];
	/*
	 * 1: qemu loads klab's cache model (DIR/klab-cache.so, a copy of
	 * $(BUILD)/lib/klab-cache.so; docs/cache-model.md) with cache_args (NULL:
	 * the default geometry) and runs its vCPUs in one thread; each guest's
	 * windows go to DIR/cache-model/NAME.jsonl, which the guest sees at
	 * /run/klab/cache-model (a 9p share of its own, uncached).
	 */
	int cache_model;
	char *cache_args;
};

/*
 * Power-cycle pair PAIR of the lab (-1: every pair), as a BMC would: stop
 * its qemu processes and start them again on the lab's kernel (both guests
 * of a pair: they share the workload link; a peer namespace goes with the
 * dut). Returns once qemu runs, without waiting for ssh (the caller's boot
 * wait does). 0 or -1 (logged).
 */
int qlab_power_cycle(struct qlab_state *st, int pair);

/*
 * Read LABDIR/lab.state: 0, 1 when the folder holds no lab, -1 on a
 * malformed file (logged "FILE:LINE: ..."). Free with qlab_state_free().
 */
int qlab_state_load(const char *dir, struct qlab_state *st);
void qlab_state_free(struct qlab_state *st);

/* 1 when pid is a qemu of this lab folder (guards against pid reuse). */
int qlab_pid_alive(pid_t pid, const char *dir, const char *guest);
/* 1 when guest I (2P dut, 2P + 1 peer of pair P) runs: its qemu, or the dut's for a peer namespace. */
int qlab_guest_alive(const struct qlab_state *st, int i);

/* How to bring a lab up. */
struct qlab_opts {
	const char *kernel;	/* the bzImage to boot */
	const char *dir;	/* NULL: lab/qemu, or lab/qemu-K for index K */
	long index;		/* K, 0..QLAB_MAX_INDEX */
	long smp, mem_mb, queues;
	long timeout_s;		/* until both guests answer over ssh */
	const char *accel;	/* auto | kvm | tcg */
	const char *profile;	/* tuning profile named in the fragment's machines, or NULL */
	/*
	 * "real" or "icount": with icount qemu runs -icount shift=0,sleep=off
	 * (TCG only), so 1 ns of guest time is one executed instruction; with
	 * smp > 1 the guests boot with maxcpus=1 and their init onlines the
	 * other CPUs (qemu 7.2 livelocks booting several vCPUs under icount;
	 * docs/qemu-icount.md). The fragment says `clock = icount`.
	 */
	const char *clock;
	/* "guest", "netns" (struct qlab_state.peer_netns), or NULL: netns under icount, else guest */
	const char *peer;
	/* 1: load klab's cache model (TCG only); cache_args: its KEY=VALUE,... arguments or NULL */
	int cache_model;
	const char *cache_args;
	/*
	 * pairs: 1 (dut, peer), or N > 1 pairs dutP/peerP on the addresses
	 * above; pool: `pool = NAME` in every dut of the fragment, or NULL.
	 */
	long pairs;
	const char *pool;
};
#define QLAB_OPTS_INIT { NULL, NULL, 0, 1, 1024, 1, 300, "auto", NULL, "real", NULL, 0, NULL, 1, NULL }

/*
 * The cache model plugin to load: $KLAB_CACHE_PLUGIN, else lib/klab-cache.so
 * beside the bin/ folder of this klab, else the release build of the source
 * tree. Caller frees; NULL when none exists.
 */
char *qlab_cache_plugin(void);

/*
 * Check the cache model's arguments given to `lab up --cache-model`: KEY=VALUE
 * pairs separated by commas, of the plugin's keys other than out (klab names
 * the output). 0, or -1 (logged).
 */
int qlab_cache_args_check(const char *args);

/* The lab folder: DIR, or the default folder of lab INDEX, made absolute (caller frees). */
char *qlab_dir(const char *dir, long index);

/*
 * Boot the guests (all pairs at once) and wait until all answer over ssh, writing the
 * folder (its config fragment klab.conf among it). Progress lines go to
 * stdout as they happen ("lab: booting ...", "lab: dut answers over ssh
 * ..."). 0 with *st filled (free with qlab_state_free()), or -1 (logged;
 * a folder whose guests failed to boot is kept for inspection).
 */
int qlab_up(const struct qlab_opts *o, struct qlab_state *st);
/* Stop the guests of a loaded lab (TERM, then KILL) and remove its folder: 0 or -1. */
int qlab_down(const struct qlab_state *st);

struct buf;
/*
 * Ask each running guest for its kernel release over ssh (rel, relv: 2 *
 * st->pairs entries): relv[i] points into rel[i], or is NULL when guest i
 * does not run or answer. Returns how many guests run.
 */
int qlab_probe(const struct qlab_state *st, struct buf *rel, const char **relv);

#endif
