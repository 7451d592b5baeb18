/* lab_common.h: what the netns lab (lab.c) and the qemu lab (lab_qemu.c) make alike: ssh keys, the config fragment. */
#ifndef KLAB_LAB_COMMON_H
#define KLAB_LAB_COMMON_H

/* Make an ed25519 key pair FILE and FILE.pub (no passphrase) unless FILE exists: 0 or -1 (logged). */
int lab_keygen(const char *file, const char *comment);

/* One machine of a lab as its config fragment names it. */
struct lab_machine_conf {
	const char *name;	/* "dut" or "peer" (dutP, peerP) */
	const char *host;
	int port;
	const char *nic;	/* workload NIC */
	const char *addr;	/* workload address */
	const char *boot;	/* "none" or "kexec" */
	const char *profile;	/* tuning profile, or NULL */
	const char *clock;	/* "icount", or NULL for real time (not written) */
	const char *power_cycle;	/* the command that restarts it from its default kernel, or NULL */
	const char *pool;	/* a dut's pool, or NULL (not written) */
	const char *shared_root;	/* where the host's / is seen on it (qemu: its 9p root), or NULL */
	int probe_port;		/* boot_probe_port (qemu: a closed port of its kernel), or 0 (not written) */
};

/* A lab's config fragment: DIR/klab.conf. */
struct lab_fragment {
	const char *kind;	/* "netns" or "qemu": `klab lab up --KIND` */
	const char *down_opt;	/* what `klab lab down` needs besides --dir: "" or "--qemu " */
	int index;
	const char *dir;	/* the lab folder: keys/id_ed25519 and known_hosts are in it */
	const struct lab_machine_conf *m;	/* pairs: a dut m[2P], then its peer m[2P + 1] */
	int n;			/* machines in m: twice the pairs */
};

/*
 * Write DIR/klab.conf for a user to include from a config: a comment
 * saying what wrote it and how it goes away, [lab] ssh_key and
 * known_hosts in the lab folder, and a [machine] section per machine. 0 or -1.
 */
int lab_write_fragment(const struct lab_fragment *f);

#endif
