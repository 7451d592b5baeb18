/* conf.h: the klab configuration (git-config style) as typed structs. */
#ifndef KLAB_CONF_H
#define KLAB_CONF_H

#include <stddef.h>
#include <stdio.h>

#include "strvec.h"

/*
 * Sections and keys are documented in config.example. The parser reports
 * every error in one pass as "FILE:LINE: message" and fails if there was
 * any. Values that are lists (cpus, fragments, machines, workloads,
 * monitors, power_cycle argv) are split on white space; a word may be
 * double-quoted to keep spaces ("ipmitool -H \"bmc 1\"" is not needed:
 * power_cycle = ipmitool -I lanplus -H bmc1 chassis power cycle).
 */

enum boot_method { BOOT_NONE, BOOT_KEXEC, BOOT_REBOOT, BOOT_QEMU };
enum machine_role { ROLE_DUT, ROLE_PEER };

struct conf_kv {		/* a free-form key = value (sysctls, workload params) */
	char *key;
	char *value;
	int line;
};

struct conf_lab {
	char *db;		/* sqlite file */
	char *work_dir;		/* build trees, scratch */
	char *artifact_dir;	/* kernel artifacts */
	char *report_dir;	/* static report pages */
	char *ssh_key;		/* private key file */
	char *known_hosts;	/* OpenSSH known_hosts file */
	char *log_level;	/* error|warning|notice|info|debug */
	char *agent_dir;	/* where klab-agent lives on test machines */
	long ssh_timeout_ms;
	long boot_timeout_ms;
	int max_jobs;		/* concurrent jobs, 0: one per free machine pair */
	char *sandbox;		/* bwrap (NULL: the default) | none (trusted local use only) */
	char *sandbox_user;	/* who applies, builds and reads mail (NULL: klab) */
};

struct conf_machine {
	char *name;
	char *host;
	int port;
	char *user;
	enum machine_role role;
	char *peer;		/* name of its peer machine (for a dut) */
	char *nic;		/* workload interface, e.g. eth1 */
	char *addr;		/* workload address of this machine on that NIC */
	enum boot_method boot;
	struct strvec power_cycle;	/* argv, may be empty */
	char *cpus;		/* CPU list for the workload, e.g. "0-3" (may be NULL) */
	char *profile;		/* tuning profile name (may be NULL) */
	char *kernel_cmdline;	/* explicit cmdline for kexec (NULL: reuse) */
	char *boot_dir;		/* boot = reboot: kernel files, grub/grub.cfg, grubenv (NULL: /boot) */
	struct strvec reboot_cmd;	/* boot = reboot: far-side argv (empty: systemctl reboot) */
	int initramfs;		/* boot = reboot: 1 to generate an initramfs for the new kernel */
	char *pool;		/* pool name (NULL: none) */
	const char *clock;	/* "real" (default) or "icount": what times its runs (a static string) */
	char *shared_root;	/* where the host's / is seen read-only on the machine (the qemu lab's
				 * 9p root): kexec images are read from there, not uploaded (NULL: upload) */
	/*
	 * A TCP port on host that reaches a closed port of the machine's kernel
	 * (the qemu lab's user networking forwards one): while the machine boots
	 * the deploy opens SSH only once this port answers, so it never leaves a
	 * connection that a forwarder hands to the next boot (0: none)
	 */
	int boot_probe_port;
	int line;
};

struct conf_tree {
	char *name;
	char *git;		/* local path or URL */
	char *branch;		/* ref for git */
	char *tarball;		/* alternative source: a tarball (.tar.xz/.tar.gz/.tar.bz2) */
	char *config_base;	/* defconfig | tinyconfig | running | FILE */
	struct strvec fragments;	/* files (relative to kernels/configs or absolute) */
	char *localversion;	/* prefix of the LOCALVERSION, default "-klab" */
	char *share;		/* build in the repository and build folders of this [tree] (a git tree of its history) */
	int jobs;		/* make -jN, 0: nproc */
	int line;
};

struct conf_profile {		/* [profile "NAME"]: a tuning profile */
	char *name;
	int channels;		/* ethtool -L combined N, 0: leave */
	char *xps;		/* "auto" (queue i -> cpu i), "off" (all 0), or masks "1,2,4,8" */
	char *rps;		/* "off" or a mask for every rx queue */
	char *irq_affinity;	/* "auto" or a CPU list per queue, NULL: leave */
	char *governor;		/* cpufreq governor, NULL: leave */
	char *qdisc;		/* root qdisc of the NIC as tc arguments ("tbf rate 2mbit ..."), NULL: leave */
	struct conf_kv *sysctls;	/* "sysctl.net.core.busy_poll = 50" */
	size_t n_sysctls;
	int line;
};

struct conf_workload {
	char *name;
	char *type;		/* udp_rr | udp_tx */
	struct conf_kv *params;	/* every other key, checked against the type's list */
	size_t n_params;
	struct strvec monitors;	/* cpu perf-stat perf-profile bpftrace nic */
	char *bpftrace;		/* bpftrace script file, for the bpftrace monitor */
	char *perf_events;	/* comma list for perf-stat */
	char *profile_cpus;	/* CPU list perf-profile samples (NULL: every CPU) */
	double threshold_pct;	/* practical threshold T for verdicts (0: not set, the clock's default: 1% real, 0.1% icount) */
	char *headline;		/* headline metric, default per type */
	int line;
};

struct conf_job {
	char *name;
	char *tree;
	char *base;		/* base ref (default: the tree's branch) */
	char *test;		/* second ref to compare instead of a series */
	char *series;		/* mbox:FILE | lore:MSGID | patchwork:ID | FILE (may be NULL) */
	struct strvec local_patches;	/* extra patches applied after the series (backport fix-ups) */
	char *profile_a;	/* tuning-only A/B: profile of side A */
	char *profile_b;	/* ... and of side B */
	struct strvec machines;	/* dut then peer */
	char *pool;		/* lease any free pair of the pool instead */
	int pairs;		/* with a pool: up to N boots at once, each on a pair of its own (default 1; docs/jobs.md) */
	struct strvec workloads;
	int boots;		/* boots per kernel (the maximum of a range) */
	int boots_min;		/* boots = MIN..MAX: the first look (docs/jobs.md); 0: a plain count */
	int runs;		/* runs per boot */
	int warmup_runs;	/* runs per boot discarded before the measured ones (default 1) */
	int observe_boots;	/* the first N boots of each side carry observation runs (default 1; docs/observation.md) */
	char *order;		/* abba (default) | fixed */
	long seed;		/* order seed, -1: random (stored) */
	int line;
};

struct conf_schedule {
	char *name;
	char *cron;		/* five fields */
	char *job;
	int line;
};

struct conf_patchwork {		/* [patchwork "NAME"]: a patchwork project klabd watches (docs/patchwork.md) */
	char *name;
	char *url;		/* the instance, e.g. https://patchwork.kernel.org (no /api) */
	char *project;		/* the project's linkname or id, e.g. netdevbpf */
	char *token_file;	/* a file holding the API token (root's, mode 0600/0400) */
	char *tree;		/* [tree] the series apply to (NULL: the job's) */
	char *job;		/* [job] queued for each series (the template) */
	struct strvec paths;	/* globs; a series must touch a file matching one (empty: any) */
	char *delegate;		/* only series whose patches are delegated to this user (NULL: any) */
	struct strvec states;	/* only patches in these states (empty: any) */
	long interval_ms;	/* poll interval (default 5m) */
	char *context;		/* the check's context (default klab-NAME) */
	char *report_url;	/* base URL of the report site for target_url (NULL: no link) */
	long max_lag_ms;	/* a series waiting longer than this is "behind" (0: not checked) */
	char *since;		/* where a new watcher starts (ISO 8601; NULL: now) */
	long timeout_ms;	/* one HTTP request (default 30s) */
	int line;
};

struct klab_config {
	char *path;
	struct conf_lab lab;
	struct conf_machine *machines; size_t n_machines;
	struct conf_tree *trees; size_t n_trees;
	struct conf_profile *profiles; size_t n_profiles;
	struct conf_workload *workloads; size_t n_workloads;
	struct conf_job *jobs; size_t n_jobs;
	struct conf_schedule *schedules; size_t n_schedules;
	struct conf_patchwork *patchworks; size_t n_patchworks;
};

/*
 * Load FILE and the files it includes: an [include] section's "path =
 * FILE" reads FILE (relative to the including file) in its place, nested
 * up to 8 deep. Errors are printed to stderr as "FILE:LINE: message",
 * every one of them; returns 0 or -1 with *cfg left empty.
 */
int conf_load(struct klab_config *cfg, const char *path);
/* Load several files in order into one config (later files add sections). */
int conf_load_many(struct klab_config *cfg, const char *const *paths, size_t n);
void conf_free(struct klab_config *cfg);
/* Print the config back, normalised (defaults filled in, sorted keys). */
void conf_print(const struct klab_config *cfg, FILE *out);

/* The config file to use: --config, $KLAB_CONFIG, ./klab.conf, ~/.config/klab/config, /etc/klab/config. */
const char *conf_default_path(void);

const struct conf_machine *conf_machine(const struct klab_config *c, const char *name);
const struct conf_tree *conf_tree(const struct klab_config *c, const char *name);
const struct conf_profile *conf_profile(const struct klab_config *c, const char *name);
const struct conf_workload *conf_workload(const struct klab_config *c, const char *name);
const struct conf_job *conf_job(const struct klab_config *c, const char *name);
const struct conf_patchwork *conf_patchwork(const struct klab_config *c, const char *name);
/* A workload parameter's value, or `def`. */
const char *conf_workload_param(const struct conf_workload *w, const char *key, const char *def);

const char *boot_method_name(enum boot_method m);

#endif
