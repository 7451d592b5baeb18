/* lab.h: the netns local lab: names and addresses of its machines, and its sshd (used by lab.c and tests). */
#ifndef KLAB_LAB_H
#define KLAB_LAB_H

#include <limits.h>
#include <sys/types.h>

#define NLAB_MAX_INDEX 31	/* 198.18.255.0/24 holds 32 labs of two /30 links */
#define NLAB_MAX_PAIRS 128	/* pairs 1.. of lab K: 198.19.4K.0/22, 32 pairs a /24 */

/* One machine of a netns lab; every name and address comes from nlab_plan(). */
struct nlab_machine {
	char name[16];		/* "dut" or "peer"; dutP, peerP in a lab of several pairs */
	char netns[24];		/* klabK-dut (klabK-dutP) */
	char root_veth[24];	/* root side of the management veth: klabKd (klabKdP), under IFNAMSIZ */
	char root_addr[32];	/* 198.18.255.x, root side */
	char mgmt_addr[32];	/* 198.18.255.x, namespace side: sshd listens here */
	int port;		/* 22 */
	char nic[16];		/* workload NIC: wl0 (dut), wl1 (peer) */
	char addr[32];		/* workload address (/24) */
};

struct nlab {
	char dir[PATH_MAX];	/* absolute lab folder */
	int index;
	int queues;
	int pairs;		/* 1..NLAB_MAX_PAIRS */
	char pool[32];		/* the pool of the fragment's duts ("" for none) */
	struct nlab_machine m[2 * NLAB_MAX_PAIRS];	/* pair P: dut m[2P], its peer m[2P + 1] */
};

/*
 * Fill names and addresses of lab INDEX with PAIRS machine pairs (the
 * whole address plan is in lab.c). One pair is the classic lab (dut,
 * peer); more are dut0/peer0, dut1/peer1, ...
 */
void nlab_plan(struct nlab *l, int index, int queues, int pairs);
/* The default folder of lab INDEX, relative: lab/netns or lab/netns-K (caller frees). */
char *nlab_default_dir(int index);
/* Read DIR/netns.state: 0, 1 when DIR holds no netns lab, -1 malformed (logged). */
int nlab_load(const char *dir, struct nlab *l);
/* Start machine M's sshd inside its namespace (daemonises; pid in DIR/M/sshd.pid): 0 or -1. */
int nlab_sshd_start(const struct nlab *l, const struct nlab_machine *m);
/* Stop machine M's sshd and every process in its namespace (TERM, then KILL after 3 s): 0. */
int nlab_sshd_stop(const struct nlab *l, const struct nlab_machine *m);

/* The lab folder: DIR, or the default folder of lab INDEX, made absolute (caller frees); NULL when too long (logged). */
char *nlab_dir(const char *dir, int index);

/*
 * Bring up lab INDEX (-1: the highest free index) with PAIRS machine pairs
 * and QUEUES queues in DIR (NULL: its default folder), one lab at a time
 * (a lock file); POOL (NULL: none) is written as `pool` of every dut of the
 * fragment. Needs root. On failure what was made is removed again, unless
 * KLAB_LAB_KEEP is set. 0 (l describes the lab) or -1 (logged).
 */
int nlab_up(struct nlab *l, const char *dir, int index, int queues, int pairs, const char *pool);

/* What nlab_down() did. */
struct nlab_down {
	enum {
		NLAB_DOWN_DONE,		/* the lab in DIR is down and its folder removed */
		NLAB_DOWN_NO_LAB,	/* DIR holds no lab and no index was given: nothing done */
		NLAB_DOWN_FOREIGN,	/* no lab in DIR; lab INDEX belongs to `owner`: left alone */
		NLAB_DOWN_UNOWNED,	/* no lab in DIR; lab INDEX has no owner record: left alone */
		NLAB_DOWN_NAMESPACES,	/* no lab in DIR; the namespaces of lab INDEX removed */
	} how;
	int index;
	char *owner;		/* caller frees */
};

/*
 * Take down the lab in DIR (absolute). Without a state file there (a
 * crashed up, or a removed folder) lab INDEX (>= 0) is removed when it was
 * made for DIR, or with FORCE. 0 or -1 (logged).
 */
int nlab_down(const char *dir, int index, int force, struct nlab_down *d);

struct nlab_machine_status {
	pid_t sshd_pid;		/* 0: its sshd does not run */
	int netns_exists;
};
/* The machines of a loaded lab (ST: 2 * l->pairs entries): 1 when every namespace exists and every sshd runs, else 0. */
int nlab_status(const struct nlab *l, struct nlab_machine_status *st);

#endif
