/* sandbox.h: running what hostile input controls (patches, a patch's Makefile, mail) as an unprivileged user inside bubblewrap. */
#ifndef KLAB_SANDBOX_H
#define KLAB_SANDBOX_H

#include <sys/types.h>

#include "conf/conf.h"
#include "run.h"
#include "strvec.h"

/*
 * The sandbox of this klab process (docs/security.md). Commands run as
 * [lab] sandbox_user (default "klab"; when klab itself is not root, as
 * klab's own user) inside bwrap: a new user, pid, ipc, uts, cgroup and
 * network namespace (the network only when asked for, for fetching), and
 * an allow-list of the file system on an empty, read-only root: /usr and
 * the /bin, /sbin, /lib* links or folders, the few files of /etc that
 * programs read (ld.so's cache and config, alternatives, passwd, group,
 * nsswitch.conf, localtime; with the network also resolv.conf, hosts,
 * gai.conf, services, protocols, ssl, ca-certificates), a fresh /tmp, /dev
 * and /proc, and what the command's spec names; nothing else of the host
 * (not /work, /home, /root, /var, /opt, other artifacts or labs). klab's
 * secrets (the config and its folder, the database and its folder, the
 * SSH key and known_hosts, /etc/klab, /var/lib/klab, /root, /run, the
 * ssh-agent socket, $HOME) are hidden again where they lie inside
 * something shown. Only the folders a command names are writable; a clean
 * environment, --die-with-parent and a new session.
 *
 * [lab] sandbox = none turns all of it off (trusted local use only: the
 * commands then run as klab runs). There is no other way around it: a
 * missing bwrap, a missing user or a sandbox that does not start is an
 * error, never a run without it.
 */
struct sandbox {
	int off;			/* [lab] sandbox = none */
	int drop;			/* 1: we are root and switch to uid/gid */
	uid_t uid;
	gid_t gid;
	char *user;			/* who runs the commands */
	char *bwrap;			/* path of bwrap */
	struct strvec hide;		/* secrets: files and folders made invisible */
};

#define SANDBOX_INIT { .hide = STRVEC_INIT }

/*
 * What one command may see beyond the system folders. Lists are
 * NULL-terminated (or NULL); paths that do not exist are left out. RW
 * entries are writable; RO entries are bound after RW ones, so a folder
 * inside a writable one can be made read-only again (the .git of a tree
 * while make runs in it); VISIBLE entries are read-only (a fragment, a
 * tarball, the repository a tree is cloned from), and are shown even when
 * they lie inside a folder of secrets. bwrap binds them as the sandbox
 * user: a path that user cannot reach fails with "Can't find source path".
 */
/* The command's own scratch (TMPDIR, HOME) when a folder it is shown lies under /tmp, which is then read-only. */
#define SANDBOX_TMP_SCRATCH "/tmp/.klab-sandbox-tmp"

struct sandbox_spec {
	const char *const *rw;
	const char *const *ro;
	const char *const *visible;
	int net;			/* 1: keep the host's network (fetching only) */
	const char *what;		/* for messages: "kernel build", "patch intake" */
};

/*
 * Fill SB for CFG (may be NULL): the user (KLAB_SANDBOX_USER overrides
 * [lab] sandbox_user), bwrap (KLAB_BWRAP overrides the PATH lookup) and
 * the secrets. 0, or -1 with an error that says what is missing and how
 * to get it (`make deps` installs bubblewrap and creates the user), in
 * ERR (error_to(): logged when ERR is NULL).
 */
int sandbox_init(struct sandbox *sb, const struct klab_config *cfg, struct buf *err);
void sandbox_release(struct sandbox *sb);

/*
 * Make PATH (a folder; made when missing) belong to the sandbox user,
 * everything under it included, unless it already does (then only PATH
 * itself is looked at). Symbolic links are changed, not followed. 0, or
 * -1 with the path that failed in ERR (error_to(): logged when ERR is NULL).
 */
int sandbox_own(const struct sandbox *sb, const char *path, struct buf *err);

/*
 * Become the sandbox user in this process (a child that klab forked to do
 * the unprivileged part of a job): no groups but the user's, real,
 * effective and saved ids switched, no new privileges. 0 or -1 (logged).
 */
int sandbox_drop(const struct sandbox *sb);

/*
 * Lower this process's effective user and group ids (and groups) to the
 * sandbox user, keeping root as the saved id, so that what klab itself
 * does to the folders the sandbox writes (reading a .config, copying
 * the image) is done with the user's rights: a symbolic link planted by
 * a build then leads only where the user could go anyway.
 * sandbox_leave() takes root back. Neither is a security boundary against
 * code in this process (none that is hostile runs in it): the commands
 * get the full drop of sandbox_run(). sandbox_enter(): 0, or -1 with
 * the reason in ERR (logged when ERR is NULL); sandbox_leave(): 0 or -1
 * (logged).
 */
int sandbox_enter(const struct sandbox *sb, struct buf *err);
int sandbox_leave(const struct sandbox *sb);

/* Give PATH and everything under it back to us (root), links not followed: 0 or -1 (logged). */
int sandbox_reclaim(const struct sandbox *sb, const char *path);

/*
 * Run C (argv, dir, env, output as run_command() takes them) inside the
 * sandbox under SP: C->argv is wrapped in bwrap, C->dir becomes bwrap's
 * --chdir, C->env the whole environment of the command (with PATH, HOME=/tmp,
 * LC_ALL=C). run_command()'s return value; C's outputs are the command's.
 * A sandbox that could not be set up (bwrap exits 1 with "bwrap: ..." on
 * stderr before the command starts) is reported with SP->what: -1, with
 * the message in C->why when set (else logged), as run_command() does.
 */
int sandbox_run(const struct sandbox *sb, const struct sandbox_spec *sp, struct run_cmd *c);

/*
 * The argv that sandbox_run() would run for ARGV (into AV): for the log,
 * and for tests.
 */
void sandbox_argv(const struct sandbox *sb, const struct sandbox_spec *sp, const char *dir,
		  const char *const *env, const char *const *argv, struct strvec *av);

#endif
