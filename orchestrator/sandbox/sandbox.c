/* sandbox.c: the unprivileged user and the bubblewrap sandbox that patches, builds and intake run in. */
#include <errno.h>
#include <ftw.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "run.h"
#include "sandbox/sandbox.h"
#include "strvec.h"
#include "util.h"

#define DEFAULT_USER "klab"

/* Folders that hold klab's secrets and state on a host installed the usual way. */
static const char *const fixed_hide[] = {
	"/etc/klab", "/var/lib/klab", "/root", "/run", "/etc/ssh", NULL,
};

static void hide_path(struct sandbox *sb, const char *p)
{
	if (p && *p && strvec_find(&sb->hide, p) < 0)
		strvec_push(&sb->hide, p);
}

/* PATH and, when it is deep enough not to be a system folder, the folder it is in. */
static void hide_with_folder(struct sandbox *sb, const char *p)
{
	char *d, *slash;

	if (!p || !*p)
		return;
	hide_path(sb, p);
	d = realpath(p, NULL);
	if (!d)
		d = xstrdup(p);
	slash = strrchr(d, '/');
	if (slash && slash != d)
		*slash = 0;
	/* at least two levels (/var/lib/klab, not /var), never /usr/... */
	if (d[0] == '/' && strchr(d + 1, '/') && !starts_with(d, "/usr/"))
		hide_path(sb, d);
	free(d);
}

int sandbox_init(struct sandbox *sb, const struct klab_config *cfg, struct buf *err)
{
	const char *u = getenv("KLAB_SANDBOX_USER"), *bw = getenv("KLAB_BWRAP"), *e;

	memset(sb, 0, sizeof(*sb));
	strvec_init(&sb->hide);
	if (cfg && cfg->lab.sandbox && !strcmp(cfg->lab.sandbox, "none")) {
		static int warned;

		sb->off = 1;
		if (!warned++)
			warn("[lab] sandbox = none: patches, builds and intake run as uid %d without a sandbox"
			     " (trusted local use only)", (int)geteuid());
		return 0;
	}
	if (!u || !*u)
		u = cfg && cfg->lab.sandbox_user ? cfg->lab.sandbox_user : DEFAULT_USER;
	if (geteuid() == 0) {
		struct passwd *pw = getpwnam(u);

		if (!pw)
			return error_to(err, "cannot sandbox: user '%s' does not exist (run 'make deps' or 'make install'"
					" to create it, or set [lab] sandbox_user); patches and mail are never handled"
					" as root", u);
		if (pw->pw_uid == 0)
			return error_to(err, "cannot sandbox: user '%s' is root (uid 0); [lab] sandbox_user must be an"
					" unprivileged user", u);
		sb->drop = 1;
		sb->uid = pw->pw_uid;
		sb->gid = pw->pw_gid;
		sb->user = xstrdup(u);
	} else {
		struct passwd *pw = getpwuid(geteuid());

		sb->uid = geteuid();
		sb->gid = getegid();
		sb->user = pw ? xstrdup(pw->pw_name) : xasprintf("uid %d", (int)sb->uid);
	}
	sb->bwrap = run_which(bw && *bw ? bw : "bwrap");
	if (!sb->bwrap) {
		error_to(err, "cannot sandbox: bubblewrap ('%s') not found (apt-get install bubblewrap, or run"
			 " 'make deps'); patches and mail are never handled without the sandbox", bw && *bw ? bw : "bwrap");
		sandbox_release(sb);
		return -1;
	}
	for (size_t i = 0; fixed_hide[i]; i++)
		hide_path(sb, fixed_hide[i]);
	if (cfg) {
		hide_with_folder(sb, cfg->path);
		hide_with_folder(sb, cfg->lab.db);
		hide_with_folder(sb, cfg->lab.ssh_key);
		hide_with_folder(sb, cfg->lab.known_hosts);
	}
	hide_with_folder(sb, getenv("KLAB_DB"));
	hide_with_folder(sb, getenv("KLAB_CONFIG"));
	if ((e = getenv("SSH_AUTH_SOCK")))
		hide_with_folder(sb, e);
	if ((e = getenv("HOME")) && strcmp(e, "/"))
		hide_path(sb, e);
	return 0;
}

void sandbox_release(struct sandbox *sb)
{
	free(sb->user);
	free(sb->bwrap);
	strvec_clear(&sb->hide);
	sb->user = sb->bwrap = NULL;
}

static uid_t own_uid;
static gid_t own_gid;
static int own_err;
static struct buf *own_why;

static int own_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)flag;
	(void)f;
	if ((st->st_uid != own_uid || st->st_gid != own_gid) && lchown(p, own_uid, own_gid) < 0 && !own_err) {
		own_err = errno;
		error_to(own_why, "cannot give '%s' to %s: %s", p, own_uid ? "the sandbox user" : "klab",
			 strerror(own_err));
	}
	return 0;
}

/* Give PATH and everything under it to U:G; the first failure goes to ERR (NULL: logged). */
static int own_tree(const char *path, uid_t u, gid_t g, struct buf *err)
{
	own_uid = u;
	own_gid = g;
	own_err = 0;
	own_why = err;
	/* depth first: the folder itself last, so an interrupted pass is done again */
	if (nftw(path, own_one, 32, FTW_PHYS | FTW_DEPTH) < 0)
		return error_to(err, "cannot change the owner of '%s': %s", path, strerror(errno));
	return own_err ? -1 : 0;
}

int sandbox_reclaim(const struct sandbox *sb, const char *path)
{
	if (sb->off || !sb->drop)
		return 0;
	return own_tree(path, geteuid(), getegid(), NULL);
}

static gid_t saved_groups[256];
static int n_saved_groups = -1;

int sandbox_enter(const struct sandbox *sb, struct buf *err)
{
	if (sb->off || !sb->drop)
		return 0;
	n_saved_groups = getgroups(256, saved_groups);
	if (n_saved_groups < 0 || setgroups(1, &sb->gid) || setresgid(-1, sb->gid, -1) ||
	    setresuid(-1, sb->uid, -1)) {
		int e = errno;

		sandbox_leave(sb);
		return error_to(err, "cannot act as the sandbox user '%s' (uid %d): %s", sb->user, (int)sb->uid,
				strerror(e));
	}
	return 0;
}

int sandbox_leave(const struct sandbox *sb)
{
	if (sb->off || !sb->drop || n_saved_groups < 0)
		return 0;
	if (setresuid(-1, 0, -1) || setresgid(-1, 0, -1) || setgroups((size_t)n_saved_groups, saved_groups))
		return error_errno("cannot take root back after acting as '%s'", sb->user);
	n_saved_groups = -1;
	return 0;
}

int sandbox_own(const struct sandbox *sb, const char *path, struct buf *err)
{
	struct stat st;

	if (lstat(path, &st) < 0 && (mkdir_p(path) < 0 || lstat(path, &st) < 0))
		return error_to(err, "cannot make '%s': %s", path, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return error_to(err, "cannot give '%s' to the sandbox user: not a folder", path);
	if (sb->off || (st.st_uid == sb->uid && st.st_gid == sb->gid))
		return 0;
	if (!sb->drop)
		return error_to(err, "cannot build in '%s': it belongs to uid %d, and klab runs as uid %d (not root)",
				path, (int)st.st_uid, (int)sb->uid);
	return own_tree(path, sb->uid, sb->gid, err);
}

int sandbox_drop(const struct sandbox *sb)
{
	if (sb->off || !sb->drop)
		return 0;
	if (setgroups(1, &sb->gid) || setresgid(sb->gid, sb->gid, sb->gid) ||
	    setresuid(sb->uid, sb->uid, sb->uid) || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return error_errno("cannot become the sandbox user '%s' (uid %d)", sb->user, (int)sb->uid);
	if (getuid() != sb->uid || geteuid() != sb->uid || setuid(0) == 0)
		return error("cannot become the sandbox user '%s' (uid %d): still privileged", sb->user, (int)sb->uid);
	return 0;
}

static int is_dir(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int exists(const char *p)
{
	struct stat st;

	return lstat(p, &st) == 0;
}

/* Is A inside (or the same as) an entry of V? */
static int under_any(const struct strvec *v, const char *a)
{
	for (size_t i = 0; i < v->n; i++) {
		size_t l = strlen(v->v[i]);

		if (!strncmp(a, v->v[i], l) && (a[l] == '/' || !a[l]))
			return 1;
	}
	return 0;
}

/* 1 when an entry of LIST (NULL-terminated, may be NULL) lies in a folder of V. */
static int any_under(const struct strvec *v, const char *const *list)
{
	for (size_t i = 0; list && list[i]; i++)
		if (under_any(v, list[i]))
			return 1;
	return 0;
}

static int by_length(const void *a, const void *b)
{
	size_t x = strlen(*(char *const *)a), y = strlen(*(char *const *)b);

	return x < y ? -1 : x > y;
}

/*
 * What every sandboxed command sees of the host, read-only: the programs
 * and libraries, and the files of /etc that the toolchain, git, make, tar,
 * perl and python read (the dynamic linker's cache, the alternatives' links
 * such as cc and ld, the names of users and groups for id, tar and git, the
 * time zone for the kernel's build date, openssl's config for the module
 * signing key). Nothing else: not /home, /root,
 * /work, /var, /opt, /srv, /mnt, not /etc/gitconfig (credential helpers),
 * /etc/ssh or /etc/klab. A symbolic link (/bin -> usr/bin) is made as a link.
 */
static const char *const system_ro[] = {
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
	"/etc/alternatives", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
	"/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/localtime", "/etc/ssl/openssl.cnf", NULL,
};

/* ... and what a command that fetches needs: name resolution and the CA certificates. */
static const char *const net_ro[] = {
	"/etc/resolv.conf", "/etc/hosts", "/etc/host.conf", "/etc/gai.conf", "/etc/services", "/etc/protocols",
	"/etc/ssl/certs", "/etc/ca-certificates", "/run/systemd/resolve", "/run/resolvconf", NULL,
};

/*
 * HOW (--ro-bind, --bind) each existing path of LIST on itself, each bound
 * path into BOUND; with LINKS, a symbolic link is made as the same link
 * (else bwrap binds what it leads to).
 */
static void bind_list(struct strvec *av, struct strvec *bound, const char *how, const char *const *list, int links)
{
	for (size_t i = 0; list && list[i]; i++) {
		struct stat st;

		if (lstat(list[i], &st) < 0)
			continue;
		if (links && S_ISLNK(st.st_mode)) {
			char target[4096];
			ssize_t n = readlink(list[i], target, sizeof(target) - 1);

			if (n > 0) {
				target[n] = 0;
				strvec_push(av, "--symlink");
				strvec_push(av, target);
				strvec_push(av, list[i]);
				continue;
			}
		}
		strvec_push(av, how);
		strvec_push(av, list[i]);
		strvec_push(av, list[i]);
		strvec_push(bound, list[i]);
	}
}

/* The entries of LIST inside one of the folders of DIRS, bound again (they lie under a tmpfs of secrets). */
static void rebind_under(struct strvec *av, const struct strvec *dirs, const char *how, const char *const *list)
{
	for (size_t i = 0; list && list[i]; i++)
		if (exists(list[i]) && under_any(dirs, list[i])) {
			strvec_push(av, how);
			strvec_push(av, list[i]);
			strvec_push(av, list[i]);
		}
}

void sandbox_argv(const struct sandbox *sb, const struct sandbox_spec *sp, const char *dir,
		  const char *const *env, const char *const *argv, struct strvec *av)
{
	struct strvec dirs = STRVEC_INIT, bound = STRVEC_INIT, tmp = STRVEC_INIT;
	const char *path = getenv("PATH"), *scratch = "/tmp";
	int under_tmp = 0;

	strvec_push(av, sb->bwrap);
	strvec_push(av, "--die-with-parent");
	strvec_push(av, "--new-session");
	strvec_push(av, "--unshare-all");
	if (sp->net)
		strvec_push(av, "--share-net");
	strvec_push(av, "--hostname");
	strvec_push(av, "klab-sandbox");
	/* an allow-list on an empty root (a tmpfs, read-only at the end), never the host's root */
	bind_list(av, &bound, "--ro-bind", system_ro, 1);
	strvec_push(av, "--dev");
	strvec_push(av, "/dev");
	strvec_push(av, "--proc");
	strvec_push(av, "/proc");
	strvec_push(av, "--tmpfs");
	strvec_push(av, "/tmp");
	/*
	 * A folder shown under /tmp (a clone or a scratch folder there): bwrap
	 * makes its parents in the scratch tmpfs, where the command could write
	 * beside the tree. /tmp is then read-only at the end like the root, and
	 * the command's scratch is a tmpfs of its own under it (TMPDIR, HOME).
	 */
	strvec_push(&tmp, "/tmp");
	under_tmp = any_under(&tmp, sp->visible) || any_under(&tmp, sp->rw) || any_under(&tmp, sp->ro);
	if (under_tmp) {
		scratch = SANDBOX_TMP_SCRATCH;
		strvec_push(av, "--tmpfs");
		strvec_push(av, scratch);
	}
	if (sp->net)
		bind_list(av, &bound, "--ro-bind", net_ro, 1);
	bind_list(av, &bound, "--ro-bind", sp->visible, 0);
	bind_list(av, &bound, "--bind", sp->rw, 0);
	bind_list(av, &bound, "--ro-bind", sp->ro, 0);
	/*
	 * A folder of secrets inside something shown (a config folder inside a
	 * tree, say): an empty tmpfs over it, outermost first, then what the
	 * command was given inside it bound again.
	 */
	{
		struct strvec byl = STRVEC_INIT;

		for (size_t i = 0; i < sb->hide.n; i++)
			if (is_dir(sb->hide.v[i]) && under_any(&bound, sb->hide.v[i]))
				strvec_push(&byl, sb->hide.v[i]);
		qsort(byl.v, byl.n, sizeof(*byl.v), by_length);
		for (size_t i = 0; i < byl.n; i++) {
			if (under_any(&dirs, byl.v[i]))
				continue;
			strvec_push(&dirs, byl.v[i]);
			strvec_push(av, "--tmpfs");
			strvec_push(av, byl.v[i]);
		}
		strvec_clear(&byl);
		if (dirs.n) {
			rebind_under(av, &dirs, "--ro-bind", sp->visible);
			rebind_under(av, &dirs, "--bind", sp->rw);
			rebind_under(av, &dirs, "--ro-bind", sp->ro);
		}
	}
	/* secret files inside something shown: /dev/null over each */
	for (size_t i = 0; i < sb->hide.n; i++) {
		struct stat st;

		if (lstat(sb->hide.v[i], &st) < 0 || S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode) ||
		    !under_any(&bound, sb->hide.v[i]))
			continue;
		strvec_push(av, "--ro-bind");
		strvec_push(av, "/dev/null");
		strvec_push(av, sb->hide.v[i]);
	}
	/* the tmpfs over the secrets stays empty, and so does the root: read-only (the binds keep their own mode) */
	for (size_t i = 0; i < dirs.n; i++) {
		strvec_push(av, "--remount-ro");
		strvec_push(av, dirs.v[i]);
	}
	strvec_push(av, "--remount-ro");
	strvec_push(av, "/");
	if (under_tmp) {
		strvec_push(av, "--remount-ro");
		strvec_push(av, "/tmp");
	}
	strvec_push(av, "--clearenv");
	strvec_push(av, "--setenv");
	strvec_push(av, "PATH");
	strvec_push(av, path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	strvec_push(av, "--setenv");
	strvec_push(av, "HOME");
	strvec_push(av, scratch);
	strvec_push(av, "--setenv");
	strvec_push(av, "TMPDIR");
	strvec_push(av, scratch);
	strvec_push(av, "--setenv");
	strvec_push(av, "LC_ALL");
	strvec_push(av, "C");
	for (size_t i = 0; env && env[i]; i++) {
		const char *eq = strchr(env[i], '=');
		char *k;

		if (!eq)
			continue;
		k = xstrndup(env[i], eq - env[i]);
		strvec_push(av, "--setenv");
		strvec_push(av, k);
		strvec_push(av, eq + 1);
		free(k);
	}
	strvec_push(av, "--chdir");
	strvec_push(av, dir ? dir : scratch);
	strvec_push(av, "--");
	for (size_t i = 0; argv[i]; i++)
		strvec_push(av, argv[i]);
	strvec_clear(&dirs);
	strvec_clear(&bound);
	strvec_clear(&tmp);
}

int sandbox_run(const struct sandbox *sb, const struct sandbox_spec *sp, struct run_cmd *c)
{
	const char *const *argv = c->argv, *const *env = c->env, *dir = c->dir;
	struct strvec av = STRVEC_INIT;
	int r;

	if (sb->off)
		return run_command(c);
	if (!sb->bwrap)
		return error_to(c->why, "cannot run '%s': no sandbox was set up (klab never runs it without one)",
				argv[0]);
	sandbox_argv(sb, sp, dir, c->env, argv, &av);
	c->argv = (const char *const *)av.v;
	c->dir = "/";
	c->env = NULL;
	if (sb->drop) {
		c->as_user = 1;
		c->uid = sb->uid;
		c->gid = sb->gid;
	}
	r = run_command(c);
	if (r == 0 && c->status == 1 && starts_with(c->err.buf, "bwrap: ")) {
		buf_rtrim(&c->err);
		error_to(c->why, "cannot run '%s' in the %s sandbox (user '%s'): %s", argv[0],
			 sp->what ? sp->what : "", sb->user, c->err.buf);
		r = -1;
	}
	c->argv = argv;
	c->env = env;
	c->dir = dir;
	strvec_clear(&av);
	return r;
}
