/* deploy.c: boot a test machine into a kernel artifact (none|kexec|reboot|qemu), verify it, fence it when it does not return. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "store/db.h"
#include "lab/deploy.h"
#include "store/machines.h"
#include "log.h"
#include "netprobe.h"
#include "progress.h"
#include "run.h"
#include "ssh/ssh.h"
#include "strvec.h"
#include "util.h"

#define DEF_UPLOAD_MS 300000
#define DEF_DOWN_MS 30000
#define DEF_BOOT_MS 300000
#define DEF_ATTEMPT_MS 10000
#define DEF_VERIFY_MS 30000
#define DEF_POWER_MS 60000
#define DEF_REMOTE_DIR "/var/lib/klab/boot"

void deploy_result_release(struct deploy_result *r)
{
	free(r->release);
	free(r->build_id);
	memset(r, 0, sizeof(*r));
}

static long or_default(long v, long def)
{
	return v > 0 ? v : def;
}

/* ---- build id ----------------------------------------------------------------- */

static uint32_t rd32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);	/* the notes are in the running kernel's byte order: ours */
	return v;
}

int deploy_parse_build_id(const unsigned char *notes, size_t len, struct buf *hex)
{
	size_t off = 0;

	while (off + 12 <= len) {
		uint32_t namesz = rd32(notes + off), descsz = rd32(notes + off + 4);
		uint32_t type = rd32(notes + off + 8);
		size_t name_off = off + 12, desc_off, next;

		if (namesz > len || descsz > len)
			return -1;
		desc_off = name_off + ((namesz + 3u) & ~3u);
		next = desc_off + ((descsz + 3u) & ~3u);
		if (desc_off > len || desc_off + descsz > len)
			return -1;
		if (type == 3 && namesz == 4 && !memcmp(notes + name_off, "GNU", 4)) {
			uint32_t i;

			if (!descsz || descsz > 32)
				return -1;
			for (i = 0; i < descsz; i++)
				buf_addf(hex, "%02x", notes[desc_off + i]);
			return 0;
		}
		off = next;
	}
	return off == len || len - off < 12 ? 1 : -1;
}

/* `uname -r` and the build id of the kernel running on the machine. */
static int remote_kernel(struct ssh_conn *c, long timeout_ms, struct deploy_result *r)
{
	const char *uname[] = { "uname", "-r", NULL };
	const char *notes[] = { "cat", "/sys/kernel/notes", NULL };
	struct buf out = BUF_INIT, id = BUF_INIT;
	int ret = -1, rc;

	free(r->release);
	free(r->build_id);
	r->release = r->build_id = NULL;
	if (ssh_run(c, uname, &out, timeout_ms) < 0)
		goto out;
	buf_trim(&out);
	r->release = buf_detach(&out, NULL);
	if (ssh_run(c, notes, &out, timeout_ms) < 0) {
		if (ssh_dropped(c))
			goto out;
		warn("machine '%s' has no readable /sys/kernel/notes: no build id", ssh_name(c));
	} else {
		rc = deploy_parse_build_id((const unsigned char *)out.buf, out.len, &id);
		if (rc < 0)
			warn("machine '%s': malformed /sys/kernel/notes", ssh_name(c));
		else if (rc == 0)
			r->build_id = buf_detach(&id, NULL);
	}
	ret = 0;
out:
	buf_release(&out);
	buf_release(&id);
	return ret;
}

int deploy_verify(struct ssh_conn *c, const struct deploy_artifact *a, long timeout_ms,
		  struct deploy_result *r)
{
	if (remote_kernel(c, or_default(timeout_ms, DEF_VERIFY_MS), r) < 0)
		return ssh_fail(c, "cannot verify the kernel of machine '%s'", ssh_name(c));
	r->wrong_kernel = 0;
	if (a->release && strcmp(a->release, r->release)) {
		r->wrong_kernel = 1;
		return ssh_fail(c, "machine '%s' runs kernel '%s' (build id %s), expected '%s' (build id %s): "
				   "it came back on another kernel",
				   ssh_name(c), r->release, r->build_id ? r->build_id : "none", a->release,
				   a->build_id ? a->build_id : "not checked");
	}
	if (a->build_id && (!r->build_id || strcasecmp(a->build_id, r->build_id))) {
		r->wrong_kernel = 1;
		return ssh_fail(c, "machine '%s' runs release '%s' with build id %s, expected build id %s: "
				   "same release, another build",
				   ssh_name(c), r->release, r->build_id ? r->build_id : "none", a->build_id);
	}
	info("machine '%s' runs the expected kernel %s%s%s", ssh_name(c), r->release,
	     r->build_id ? " build id " : "", r->build_id ? r->build_id : "");
	return 0;
}

/* ---- waiting -------------------------------------------------------------------- */

/* One connect attempt with errors at debug level (failures are expected while booting). */
static int try_connect(struct ssh_conn *c, long attempt_ms)
{
	long saved = ssh_get_connect_timeout(c);
	int lvl = log_get_level(), rc;

	ssh_set_connect_timeout(c, attempt_ms);
	if (lvl < LOG_DEBUG)
		log_set_level(LOG_CRIT);
	rc = ssh_reconnect(c);
	log_set_level(lvl);
	ssh_set_connect_timeout(c, saved);
	return rc;
}

static void sleep_until(int64_t deadline, long ms)
{
	int64_t left = deadline - now_ms();

	if (left <= 0 || ms <= 0)
		return;
	if (left < ms)
		ms = (long)left;
	usleep((useconds_t)ms * 1000);
}

/*
 * A connection that a forwarder (the qemu lab's user networking) could not
 * hand to a booting machine is not dropped when its client gives up: the
 * forwarder tries the machine again for a minute, and in the next boot the
 * late connection starts an sshd that does 30 M instructions in the middle
 * of a run (docs/qemu-icount.md, "A run that did other work"). A machine
 * with boot_probe_port is asked on that closed port first: SSH is opened
 * only while its kernel answers there, so no attempt is left waiting.
 * 1: it answers (or has no probe port), 0: it does not.
 */
static int kernel_up(const struct conf_machine *m)
{
	if (!m || m->boot_probe_port <= 0)
		return 1;
	return tcp_port_answers(m->host, m->boot_probe_port, NETPROBE_MS) != 0;	/* a local error: try SSH */
}

static int wait_ssh(struct ssh_conn *c, const struct conf_machine *m, long total_ms, long attempt_ms)
{
	int64_t start = now_ms(), deadline = start + or_default(total_ms, DEF_BOOT_MS);
	int attempts = 0;

	attempt_ms = or_default(attempt_ms, DEF_ATTEMPT_MS);
	while (now_ms() < deadline) {
		long left = (long)(deadline - now_ms());

		if (!kernel_up(m)) {
			sleep_until(deadline, 500);
			continue;
		}
		attempts++;
		if (try_connect(c, left < attempt_ms ? left : attempt_ms) == 0) {
			info("machine '%s' answers SSH again after %.1f s (%d attempts)", ssh_name(c),
			     (double)(now_ms() - start) / 1000.0, attempts);
			return 0;
		}
		sleep_until(deadline, 500);
	}
	return ssh_fail(c, "machine '%s' did not answer SSH within %.0f s (%d attempts%s)", ssh_name(c),
			   (double)or_default(total_ms, DEF_BOOT_MS) / 1000.0, attempts,
			   m && m->boot_probe_port > 0 && !attempts ? ": its kernel never answered on its boot_probe_port" : "");
}

int deploy_wait_ssh(struct ssh_conn *c, long total_ms, long attempt_ms)
{
	return wait_ssh(c, NULL, total_ms, attempt_ms);
}

static int read_boot_id(struct ssh_conn *c, struct buf *out, long timeout_ms)
{
	const char *argv[] = { "cat", "/proc/sys/kernel/random/boot_id", NULL };

	buf_reset(out);
	if (ssh_run(c, argv, out, timeout_ms) < 0)
		return -1;
	buf_trim(out);
	return 0;
}

/* ---- machine state ------------------------------------------------------------------ */

int machine_set_state(struct db *db, const char *name, const char *state, const char *reason)
{
	if (machines_put_state(db, name, state, now_wall(), reason))
		return error("cannot set machine '%s' to '%s'", name, state);
	return 0;
}

static void record_kernel(struct db *db, const char *name, const struct deploy_result *r)
{
	if (!db)
		return;
	if (machines_put_kernel(db, name, r->release, r->build_id, now_wall()))
		warn("cannot record the kernel of machine '%s' in the database", name);
}

/* Mark the machine broken, release its lease, and fail naming it. */
static int fence(struct ssh_conn *c, struct db *db, const struct conf_machine *m, struct deploy_result *r,
		 const char *why)
{
	r->fenced = 1;
	if (db) {
		machine_set_state(db, m->name, "broken", why);
		if (leases_delete_machine(db, m->name))
			warn("cannot release the lease of machine '%s'", m->name);
	}
	return ssh_fail(c, "machine '%s' is fenced (state broken): %s", m->name, why);
}

static int power_cycle(const struct conf_machine *m, long timeout_ms)
{
	struct run_cmd rc = RUN_CMD_INIT;
	int ret = -1;

	rc.argv = (const char *const *)m->power_cycle.v;
	rc.timeout_ms = timeout_ms;
	rc.out_cap = 1 << 20;
	warn("machine '%s' did not come back: running its power_cycle command '%s'", m->name, m->power_cycle.v[0]);
	if (run_command(&rc) < 0)
		goto out;
	if (rc.status != 0) {
		buf_rtrim(&rc.err);
		error("power_cycle of machine '%s' failed (%s): %s", m->name, run_describe(&rc), rc.err.buf);
		goto out;
	}
	ret = 0;
out:
	run_release(&rc);
	return ret;
}

/* ---- klab-agent ---------------------------------------------------------------------------- */

int deploy_agent(struct ssh_conn *c, const char *local_agent, const char *remote_path,
		 int *uploaded)
{
	struct ssh_xfer_opts o = { .mode = 0755, .timeout_ms = 300000 };
	char local_hex[65], remote_hex[65];
	char *dir = xstrdup(remote_path), *slash;
	int rc, ret = -1;

	if (uploaded)
		*uploaded = 0;
	if (sha256_file_hex(local_agent, local_hex) < 0) {
		ssh_fail(c, "cannot read '%s' to put it on machine '%s': %s", local_agent, ssh_name(c),
			 strerror(errno));
		goto out;
	}
	rc = ssh_remote_sha256(c, remote_path, remote_hex);
	if (rc < 0)
		goto out;
	if (rc == 0 && !strcmp(local_hex, remote_hex)) {
		debug("klab-agent on machine '%s' is current (%.12s)", ssh_name(c), local_hex);
		ret = 0;
		goto out;
	}
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		const char *mk[] = { "mkdir", "-p", "--", dir, NULL };

		*slash = 0;
		if (ssh_run(c, mk, NULL, 30000) < 0)
			goto out;
	}
	if (ssh_upload(c, local_agent, remote_path, &o) < 0)
		goto out;
	{
		const char *ch[] = { "chmod", "0755", "--", remote_path, NULL };

		if (ssh_run(c, ch, NULL, 30000) < 0)
			goto out;
	}
	info("uploaded klab-agent to machine '%s' (%.12s)", ssh_name(c), local_hex);
	if (uploaded)
		*uploaded = 1;
	ret = 0;
out:
	free(dir);
	return ret;
}

/* ---- uploads ---------------------------------------------------------------------------- */

/* The progress line of one upload (deploy_opts.progress), started at its first report. */
struct upload_line {
	char label[128];
	int started;
	struct progress line;
};

static void upload_tick(void *arg, uint64_t done, uint64_t total)
{
	struct upload_line *u = arg;

	if (!u->started) {
		progress_start(&u->line, u->label, "KiB", (long)((total + 1023) >> 10), PROGRESS_EXACT, stderr);
		u->started = 1;
	}
	progress_update(&u->line, (long)((done + 1023) >> 10));
}

/* ssh_upload of LOCAL to REMOTE within upload_ms, with a progress line when O asks for it. */
static int upload(struct ssh_conn *c, const struct deploy_opts *o, const char *local, const char *remote)
{
	struct ssh_xfer_opts xo = { .timeout_ms = or_default(o->upload_ms, DEF_UPLOAD_MS) };
	struct upload_line u;
	const char *base = strrchr(local, '/');
	int rc;

	u.started = 0;
	if (o->progress) {
		snprintf(u.label, sizeof(u.label), "upload %s to %s", base ? base + 1 : local, ssh_name(c));
		xo.progress = upload_tick;
		xo.progress_arg = &u;
	}
	rc = ssh_upload(c, local, remote, &xo);
	if (u.started)
		progress_end(&u.line, rc == 0 ? "done" : "failed");
	return rc;
}

/* ---- kexec ------------------------------------------------------------------------------ */

/*
 * Upload the image to DIR/vmlinuz-RELEASE (into `image`) and unpack the
 * modules tarball, uploaded to TAR_DIR, under modules_root.
 */
static int upload_kernel(struct ssh_conn *c, const struct deploy_artifact *a, const struct deploy_opts *o,
			 const char *dir, const char *tar_dir, struct buf *image)
{
	const char *mk[] = { "mkdir", "-p", "--", dir, NULL };

	if (!a->image)
		return ssh_fail(c, "no kernel image to boot on machine '%s'", ssh_name(c));
	if (ssh_run(c, mk, NULL, or_default(o->verify_ms, DEF_VERIFY_MS)) < 0)
		return -1;
	buf_addf(image, "%s/vmlinuz-%s", dir, a->release);
	if (upload(c, o, a->image, image->buf) < 0)
		return ssh_fail(c, "cannot upload kernel image '%s' to machine '%s'", a->image, ssh_name(c));
	if (a->modules) {
		char *tar = xasprintf("%s/modules-%s.tar", tar_dir, a->release);
		const char *mkt[] = { "mkdir", "-p", "--", tar_dir, NULL };
		const char *root = o->modules_root ? o->modules_root : "/";
		/* --keep-directory-symlink: on a merged-/usr machine /lib is a
		 * symlink that the archive's "lib/" entry would otherwise replace
		 * with a directory, leaving no libc for any later command. */
		const char *untar[] = { "tar", "--keep-directory-symlink", "-xaf", tar, "-C", root, NULL };
		int rc = strcmp(tar_dir, dir) ? ssh_run(c, mkt, NULL, or_default(o->verify_ms, DEF_VERIFY_MS)) : 0;

		if (rc == 0)
			rc = upload(c, o, a->modules, tar);
		if (rc == 0)
			rc = ssh_run(c, untar, NULL, or_default(o->upload_ms, DEF_UPLOAD_MS));
		free(tar);
		if (rc < 0)
			return ssh_fail(c, "cannot install the modules of '%s' on machine '%s'", a->release,
					ssh_name(c));
	}
	return 0;
}

/*
 * Issue the boot (ARGV: a detached command, WHAT names it in messages) and
 * wait until the machine is gone: either a connect attempt fails, or it
 * answers with a new boot id (a fast reboot). 0 when it went, -1 when it
 * is still up on the same boot after down_ms.
 */
static int boot_and_go_down(struct ssh_conn *c, const struct deploy_opts *o, const struct conf_machine *m,
			    const char *const *argv, const char *what, const char *old_boot, int *rebooted)
{
	struct ssh_exec x = SSH_EXEC_INIT;
	struct buf boot = BUF_INIT;
	long down_ms = or_default(o->down_ms, DEF_DOWN_MS), attempt = or_default(o->attempt_ms, DEF_ATTEMPT_MS);
	int64_t deadline;
	int ret = -1, lvl = log_get_level();

	*rebooted = 0;
	x.argv = argv;
	x.timeout_ms = 15000;
	if (lvl < LOG_DEBUG)
		log_set_level(LOG_CRIT);	/* a drop here is what we expect */
	ssh_exec(c, &x);
	log_set_level(lvl);
	if (!x.dropped && !x.timed_out && x.status != 0) {
		buf_rtrim(&x.err);
		ssh_fail(c, "'%s' failed on machine '%s' (exit status %d): %s", what, ssh_name(c), x.status, x.err.buf);
		goto out;
	}
	ssh_disconnect(c);
	deadline = now_ms() + down_ms;
	while (now_ms() < deadline) {
		sleep_until(deadline, 300);
		if (!kernel_up(m)) {
			ret = 0;	/* gone: its kernel does not answer */
			goto out;
		}
		if (try_connect(c, attempt) < 0) {
			ret = 0;	/* gone */
			goto out;
		}
		if (read_boot_id(c, &boot, attempt) == 0 && strcmp(boot.buf, old_boot)) {
			*rebooted = 1;
			ret = 0;
			goto out;
		}
		ssh_disconnect(c);
	}
	ssh_fail(c, "machine '%s' did not go down within %.0f s of '%s' (still boot %s)", ssh_name(c),
		    (double)down_ms / 1000.0, what, old_boot);
out:
	ssh_exec_release(&x);
	buf_release(&boot);
	return ret;
}


/* The `kexec -l IMAGE` argv for the artifact, onto LOAD. */
static void kexec_load_argv(struct strvec *load, const struct conf_machine *m, const struct deploy_artifact *a,
			    const char *image)
{
	const char *cmdline = a->cmdline ? a->cmdline : m->kernel_cmdline;

	strvec_push(load, "kexec");
	strvec_push(load, "-l");
	strvec_push(load, image);
	if (cmdline)
		strvec_pushf(load, "--command-line=%s", cmdline);
	else
		strvec_push(load, "--reuse-cmdline");
}

/* LOCAL as the machine of C sees it under its shared root: ROOT + realpath(LOCAL), into OUT. */
static int shared_path(struct ssh_conn *c, const char *root, const char *local, struct buf *out)
{
	char *real = realpath(local, NULL);
	size_t n = strlen(root);

	if (!real)
		return ssh_fail(c, "cannot resolve '%s': %s", local, strerror(errno));
	while (n > 1 && root[n - 1] == '/')
		n--;
	buf_reset(out);
	if (strcmp(root, "/"))
		buf_add(out, root, n);
	buf_addstr(out, real);
	free(real);
	return 0;
}

/*
 * The far side of a shared-root load, one round trip: $1 image, $2 its
 * sha256, $3 modules tarball or "", $4 its sha256, $5 where to unpack it,
 * then the kexec -l argv. Exit 10: a file is not readable there, 11: its
 * sha256 differs (both: the caller uploads instead); anything else is
 * tar's or kexec's status.
 */
#define SHARED_LOAD_SH \
	"img=$1 isum=$2 mods=$3 msum=$4 root=$5; shift 5; " \
	"sum() { if command -v openssl >/dev/null 2>&1; then openssl dgst -sha256 -r -- \"$1\"; " \
	"else sha256sum -- \"$1\"; fi | { read -r h _; echo \"$h\"; }; }; " \
	"check() { [ -r \"$1\" ] || { echo \"'$1' is not readable there\" >&2; exit 10; }; h=$(sum \"$1\"); " \
	"[ \"$h\" = \"$2\" ] || { echo \"'$1' has sha256 ${h:-unknown} there, the host's file $2\" >&2; exit 11; }; }; " \
	"check \"$img\" \"$isum\"; " \
	"if [ -n \"$mods\" ]; then check \"$mods\" \"$msum\"; " \
	"tar --keep-directory-symlink -xaf \"$mods\" -C \"$root\" || exit $?; fi; " \
	"exec \"$@\""

/*
 * kexec -l straight from the host's root as machine M sees it (its
 * shared_root: the qemu lab's guests mount the host's / read-only over
 * virtio-9p), so nothing is uploaded: the image and the modules tarball
 * are read where the artifact store is on the host. Their sha256 is
 * checked on the far side against the local files', as an upload checks
 * it: 9p's cache=loose may serve pages of a file the host has replaced
 * since, and a share that does not show the file must not boot whatever
 * else is at that path. 0 loaded, 1 the share is not usable (WHY says
 * why: the caller uploads instead), -1 failed.
 */
static int kexec_load_shared(struct ssh_conn *c, const struct conf_machine *m, const struct deploy_artifact *a,
			     const struct deploy_opts *o, struct buf *why)
{
	char isum[65], msum[65] = "";
	struct buf image = BUF_INIT, mods = BUF_INIT;
	struct strvec av = STRVEC_INIT;
	struct ssh_exec x = SSH_EXEC_INIT;
	int ret = -1;

	if (!a->image)
		return ssh_fail(c, "no kernel image to boot on machine '%s'", m->name);
	if (sha256_file_hex(a->image, isum) < 0 || (a->modules && sha256_file_hex(a->modules, msum) < 0)) {
		ssh_fail(c, "cannot read the files of kernel '%s' to boot it on machine '%s': %s", a->release, m->name,
			 strerror(errno));
		goto out;
	}
	if (shared_path(c, m->shared_root, a->image, &image) < 0 ||
	    (a->modules && shared_path(c, m->shared_root, a->modules, &mods) < 0))
		goto out;
	strvec_pushv(&av, (const char *const[]){ "sh", "-c", SHARED_LOAD_SH, "klab-shared-load", image.buf, isum,
						 mods.buf, msum, o->modules_root ? o->modules_root : "/", NULL });
	kexec_load_argv(&av, m, a, image.buf);
	x.argv = (const char *const *)av.v;
	x.timeout_ms = or_default(o->upload_ms, DEF_UPLOAD_MS);
	if (ssh_exec(c, &x) < 0) {
		ssh_fail(c, "cannot load kernel '%s' from the shared root on machine '%s'", a->release, m->name);
		goto out;
	}
	buf_rtrim(&x.err);
	if (x.status == 10 || x.status == 11) {
		buf_addf(why, "%s", last_line(x.err.buf));
		ret = 1;
		goto out;
	}
	if (x.status != 0) {
		ssh_fail(c, "cannot load kernel '%s' from the shared root on machine '%s' (exit status %d): %s",
			    a->release, m->name, x.status, last_line(x.err.buf));
		goto out;
	}
	info("machine '%s': loaded %s from the shared root (%s, sha256 %.12s checked there): nothing uploaded",
	     m->name, a->release, image.buf, isum);
	ret = 0;
out:
	ssh_exec_release(&x);
	strvec_clear(&av);
	buf_release(&image);
	buf_release(&mods);
	return ret;
}

/*
 * `kexec -l` the artifact (kexec and qemu): from the machine's shared root
 * when it has one and the files are there, else uploaded. *SHARED is set
 * to 1 when nothing was uploaded.
 */
static int kexec_load(struct ssh_conn *c, const struct conf_machine *m, const struct deploy_artifact *a,
		      const struct deploy_opts *o, int *shared)
{
	const char *dir = o->remote_dir ? o->remote_dir : DEF_REMOTE_DIR;
	struct strvec load = STRVEC_INIT;
	struct buf image = BUF_INIT, why = BUF_INIT;
	int ret = -1, rc;

	*shared = 0;
	if (m->shared_root) {
		rc = kexec_load_shared(c, m, a, o, &why);
		if (rc <= 0) {
			*shared = rc == 0;
			ret = rc;
			goto out;
		}
		warn("machine '%s': cannot boot %s from its shared root '%s' (%s): uploading it instead", m->name,
		     a->release, m->shared_root, why.buf);
	}
	if (upload_kernel(c, a, o, dir, dir, &image) < 0)
		goto out;
	kexec_load_argv(&load, m, a, image.buf);
	if (ssh_run(c, (const char *const *)load.v, NULL, or_default(o->verify_ms, DEF_VERIFY_MS)) < 0) {
		ssh_fail(c, "cannot load kernel '%s' on machine '%s'", a->release, m->name);
		goto out;
	}
	ret = 0;
out:
	strvec_clear(&load);
	buf_release(&image);
	buf_release(&why);
	return ret;
}

/* ---- reboot: one-time GRUB entry ----------------------------------------------------------- */

#define DEF_BOOT_DIR "/boot"
#define DEF_INSTALL_MS 300000

/*
 * Which of the boot tools the machine has, in one round trip: a constant
 * script printing "NAME PATH" for each one found, and "reboot_cmd PATH"
 * when the first word of the reboot command ($1) is there.
 */
#define PROBE_SH \
	"for t in grub-mkconfig grub2-mkconfig update-grub grub-reboot grub2-reboot grub-editenv " \
	"grub2-editenv update-initramfs dracut; do p=$(command -v \"$t\") && echo \"$t $p\"; done; " \
	"p=$(command -v \"$1\") && echo \"reboot_cmd $p\"; exit 0"

struct boot_tools {
	struct buf have;	/* the probe's output */
	const char *grub;	/* "grub" or "grub2": the prefix of the tools and the folder under BOOT */
};

static int has_tool(const struct boot_tools *t, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = t->have.buf; (p = strstr(p, name)); p += n)
		if ((p == t->have.buf || p[-1] == '\n') && p[n] == ' ')
			return 1;
	return 0;
}

/* TEXT has LINE as one of its lines. */
static int has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; (p = strstr(p, line)); p++)
		if ((p == text || p[-1] == '\n') && (p[n] == '\n' || !p[n]))
			return 1;
	return 0;
}

/*
 * One shell-like word of a grub.cfg line at *P ('single', "double" quoted
 * or bare, concatenated as the shell does: 'It'\''s'), into W. 0 at the
 * end of the line.
 */
static int cfg_word(const char **pp, struct buf *w)
{
	const char *p = *pp;

	buf_reset(w);
	while (*p == ' ' || *p == '\t')
		p++;
	if (!*p || *p == '\n')
		return 0;
	while (*p && *p != ' ' && *p != '\t' && *p != '\n') {
		if (*p == '\'') {
			for (p++; *p && *p != '\''; p++)
				buf_addch(w, *p);
			if (*p)
				p++;
		} else if (*p == '"') {
			for (p++; *p && *p != '"'; p++) {
				if (*p == '\\' && p[1])
					p++;
				buf_addch(w, *p);
			}
			if (*p)
				p++;
		} else {
			if (*p == '\\' && p[1])
				p++;
			buf_addch(w, *p++);
		}
	}
	*pp = p;
	return 1;
}

/* RELEASE appears in TITLE as a whole word (not as the start of 6.1.0-klab2). */
static int title_names(const char *title, const char *release)
{
	size_t n = strlen(release);

	for (const char *p = title; (p = strstr(p, release)); p++) {
		int before = p == title || !(isalnum((unsigned char)p[-1]) || strchr("._+-", p[-1]));
		int after = !(isalnum((unsigned char)p[n]) || (p[n] && strchr("._+-", p[n])));

		if (before && after)
			return 1;
	}
	return 0;
}

#define CFG_DEPTH 8

/* The line (up to its newline) ends in '{'. */
static int line_opens_block(const char *line)
{
	const char *end = strchr(line, '\n');

	if (!end)
		end = line + strlen(line);
	while (end > line && isspace((unsigned char)end[-1]))
		end--;
	return end > line && end[-1] == '{';
}

/*
 * Find the boot entry of RELEASE in the text of a grub.cfg: the first
 * menuentry whose title names the release as a word and is not a
 * recovery/rescue entry. ENTRY gets the path grub-reboot takes, submenus
 * first, joined by '>': menu ids ($menuentry_id_option / --id), which do
 * not change with translations, or titles when an entry has no id. TITLE
 * gets the readable path. 0 found, 1 not found, -1 unusable (a title with '>').
 */
static int grub_find_entry(const char *cfg, const char *release, struct buf *entry, struct buf *title)
{
	char *ids[CFG_DEPTH] = { 0 }, *titles[CFG_DEPTH] = { 0 };
	int menu[CFG_DEPTH] = { 0 }, depth = 0, deeper = 0, ret = 1;
	struct buf w = BUF_INIT, t = BUF_INIT, id = BUF_INIT;

	for (const char *line = cfg; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		const char *p = line;
		int kind = 0;	/* 1 submenu, 2 menuentry */

		if (!cfg_word(&p, &w))
			continue;
		if (!strcmp(w.buf, "}")) {
			if (deeper > 0) {
				deeper--;
			} else if (depth > 0) {
				depth--;
				free(ids[depth]);
				free(titles[depth]);
				ids[depth] = titles[depth] = NULL;
			}
			continue;
		}
		if (!strcmp(w.buf, "submenu"))
			kind = 1;
		else if (!strcmp(w.buf, "menuentry"))
			kind = 2;
		buf_reset(&t);
		buf_reset(&id);
		if (kind && cfg_word(&p, &w)) {
			buf_addstr(&t, w.buf);
			while (cfg_word(&p, &w))
				if ((!strcmp(w.buf, "$menuentry_id_option") || !strcmp(w.buf, "--id")) &&
				    cfg_word(&p, &w))
					buf_addstr(&id, w.buf);
		} else {
			while (cfg_word(&p, &w))
				;
		}
		if (kind == 2 && title_names(t.buf, release) && !strstr(t.buf, "recovery") &&
		    !strstr(t.buf, "rescue")) {
			int by_id = id.len > 0;

			for (int i = 0; i < depth; i++)
				if (menu[i] && !ids[i][0])
					by_id = 0;
			ret = !by_id && strchr(t.buf, '>') ? -1 : 0;
			buf_reset(entry);
			buf_reset(title);
			for (int i = 0; i < depth; i++) {
				if (!menu[i])
					continue;
				if (!by_id && strchr(titles[i], '>'))
					ret = -1;
				buf_addf(entry, "%s>", by_id ? ids[i] : titles[i]);
				buf_addf(title, "%s>", titles[i]);
			}
			buf_addstr(entry, by_id ? id.buf : t.buf);
			buf_addstr(title, t.buf);
			goto out;
		}
		/* a block opens when the line ends in '{' (menuentry, submenu, function, ...) */
		if (line_opens_block(line) && depth == CFG_DEPTH) {
			deeper++;
		} else if (line_opens_block(line)) {
			menu[depth] = kind == 1;
			ids[depth] = xstrdup(id.buf);
			titles[depth] = xstrdup(t.buf);
			depth++;
		}
	}
out:
	for (int i = 0; i < depth; i++) {
		free(ids[i]);
		free(titles[i]);
	}
	buf_release(&w);
	buf_release(&t);
	buf_release(&id);
	return ret;
}

/*
 * Read the grub.cfg into CFG (reset first) and check that the machine is
 * set up for a one-time boot. grub-reboot only writes next_entry into
 * grubenv; the header grub-mkconfig generates is what boots it once and
 * clears it, so a grub.cfg without it ignores grub-reboot. And the default
 * must be the saved entry (GRUB_DEFAULT=saved): with GRUB_DEFAULT=0 the
 * first entry is booted, which update-grub makes the newest kernel, so
 * the test kernel would become the default, and a power cycle after it
 * hangs would boot it again instead of the known good kernel.
 */
static int read_grub_cfg(struct ssh_conn *c, const struct conf_machine *m, const char *path, const char *grub,
			 struct buf *cfg, long timeout_ms)
{
	const char *argv[] = { "cat", "--", path, NULL };

	buf_reset(cfg);
	if (ssh_run_step(c, "read the GRUB config", argv, cfg, timeout_ms) < 0)
		return -1;
	if (!strstr(cfg->buf, "next_entry"))
		return ssh_fail(c, "machine '%s' is not set up for a one-time boot: '%s' never reads next_entry from "
				   "grubenv, so grub-reboot would be ignored (generate it with %s-mkconfig)",
				   m->name, path, grub);
	if (!strstr(cfg->buf, "set default=\"${saved_entry}\""))
		return ssh_fail(c, "machine '%s' is not set up for a one-time boot: '%s' does not default to the "
				   "saved entry, so the new kernel could become its default kernel (set GRUB_DEFAULT="
				   "saved in /etc/default/grub, run %s-mkconfig, and %s-set-default its current entry)",
				   m->name, path, grub, grub);
	return 0;
}

/*
 * The machine's saved default entry (saved_entry in grubenv) into SAVED.
 * Refused when it would let the test kernel become the default: unset or a
 * number (GRUB then boots that position, and entry 0 is the top-level entry
 * that update-grub points at the newest kernel), or a top-level "simple"
 * entry (it boots whatever kernel sorts newest). The default must name one
 * known-good kernel, e.g. "gnulinux-advanced-UUID>gnulinux-6.1.0-13-amd64-advanced-UUID".
 */
static int read_saved_entry(struct ssh_conn *c, const struct conf_machine *m, const char *env_path,
			    const char *grub, struct buf *saved, long timeout_ms)
{
	const char *argv[] = { "sh", "-c", "[ -e \"$1\" ] || exit 0; exec cat -- \"$1\"", "klab-grubenv",
			       env_path, NULL };
	struct buf env = BUF_INIT;
	const char *p, *e;
	size_t i;
	int ret = -1;

	buf_reset(saved);
	if (ssh_run_step(c, "read grubenv", argv, &env, timeout_ms) < 0)
		goto out;
	for (p = env.buf; p && *p; p = e ? e + 1 : NULL) {
		e = strchr(p, '\n');
		if (!strncmp(p, "saved_entry=", 12)) {
			buf_reset(saved);
			buf_add(saved, p + 12, e ? (size_t)(e - p - 12) : strlen(p + 12));
		}
	}
	for (i = 0; i < saved->len && isdigit((unsigned char)saved->buf[i]); i++)
		;
	if (!saved->len || i == saved->len || strstr(saved->buf, "-simple-")) {
		ssh_fail(c, "machine '%s' has no known-good default kernel: saved_entry in '%s' is %s%s%s, so GRUB's "
			    "default boots %s, which the new kernel would become (run %s-set-default with the "
			    "menu id of its good kernel, e.g. 'gnulinux-advanced-UUID>gnulinux-RELEASE-advanced-UUID')",
			    m->name, env_path, saved->len ? "'" : "unset", saved->len ? saved->buf : "",
			    saved->len ? "'" : "",
			    saved->len && i != saved->len ? "the newest kernel" : "a position in the menu", grub);
		goto out;
	}
	ret = 0;
out:
	buf_release(&env);
	return ret;
}

/* A local file of the artifact: EXPLICIT, else NAME next to the image when it is there; NULL if none. */
static char *artifact_file(const char *explicit, const char *image, const char *name)
{
	const char *slash;
	char *p;

	if (explicit)
		return xstrdup(explicit);
	if (!image)
		return NULL;
	slash = strrchr(image, '/');
	p = slash ? xasprintf("%.*s/%s", (int)(slash - image), image, name) : xstrdup(name);
	if (access(p, R_OK)) {
		free(p);
		return NULL;
	}
	return p;
}

/* Upload LOCAL (when not NULL) to BOOT/NAME-RELEASE. */
static int upload_boot_file(struct ssh_conn *c, const struct deploy_opts *o, const char *local,
			    const char *boot_dir, const char *name, const char *release)
{
	char *remote;
	int ret = 0;

	if (!local)
		return 0;
	remote = xasprintf("%s/%s-%s", boot_dir, name, release);
	if (upload(c, o, local, remote) < 0)
		ret = ssh_fail(c, "cannot upload '%s' to '%s' on machine '%s'", local, remote, ssh_name(c));
	free(remote);
	return ret;
}

/*
 * Best effort, after a failure once grub-reboot has run: clear next_entry
 * again, so that an unplanned reboot or power cycle later (another job's)
 * does not boot the kernel under test.
 */
static void disarm_next_entry(struct ssh_conn *c, const struct conf_machine *m, long timeout_ms)
{
	static const char script[] =
		"for g in grub grub2; do f=\"$1/$g/grubenv\"; "
		"if [ -e \"$f\" ] && command -v $g-editenv >/dev/null 2>&1; then $g-editenv \"$f\" unset next_entry; fi; "
		"done";
	const char *argv[] = { "sh", "-c", script, "klab-disarm", m->boot_dir ? m->boot_dir : DEF_BOOT_DIR, NULL };
	struct ssh_exec x = SSH_EXEC_INIT;

	x.argv = argv;
	x.timeout_ms = timeout_ms;
	if (ssh_exec(c, &x) < 0 || x.status != 0)
		warn("machine '%s': could not clear the one-time boot entry (next_entry in grubenv): "
		     "its next reboot may boot the kernel under test", m->name);
	else
		info("machine '%s': one-time boot entry cleared after the failure", m->name);
	ssh_exec_release(&x);
}

/*
 * Everything before the reboot: install the artifact under BOOT, make the
 * GRUB config, select its entry for the next boot only. ENTRY gets the
 * grub-reboot argument.
 */
static int reboot_install(struct ssh_conn *c, const struct conf_machine *m, const struct deploy_artifact *a,
			  const struct deploy_opts *o, struct buf *entry)
{
	const char *boot = m->boot_dir ? m->boot_dir : DEF_BOOT_DIR;
	const char *stage = o->remote_dir ? o->remote_dir : DEF_REMOTE_DIR;
	const char *reboot0 = m->reboot_cmd.n ? m->reboot_cmd.v[0] : "systemctl";
	const char *probe[] = { "sh", "-c", PROBE_SH, "klab-probe", reboot0, NULL };
	long step_ms = or_default(o->verify_ms, DEF_VERIFY_MS), install_ms = or_default(o->install_ms, DEF_INSTALL_MS);
	struct boot_tools t = { BUF_INIT, NULL };
	struct buf image = BUF_INIT, cfg = BUF_INIT, title = BUF_INIT, env = BUF_INIT, want = BUF_INIT;
	char *map = artifact_file(a->system_map, a->image, "System.map");
	char *kconfig = artifact_file(a->config, a->image, "config");
	char *cfg_path = NULL, *env_path = NULL, *tool = NULL, *bootopt = NULL;
	struct buf saved = BUF_INIT;
	int ret = -1, rc, selected = 0;

	if (ssh_run_step(c, "look for the GRUB tools", probe, &t.have, step_ms) < 0)
		goto out;
	if (has_tool(&t, "grub-mkconfig") && has_tool(&t, "grub-reboot")) {
		t.grub = "grub";
	} else if (has_tool(&t, "grub2-mkconfig") && has_tool(&t, "grub2-reboot")) {
		t.grub = "grub2";
	} else {
		ssh_fail(c, "machine '%s' has neither grub-mkconfig and grub-reboot nor grub2-mkconfig and "
			    "grub2-reboot: boot = reboot needs GRUB 2 (or use boot = kexec)", m->name);
		goto out;
	}
	if (!has_tool(&t, "reboot_cmd")) {
		ssh_fail(c, "machine '%s' has no '%s' to reboot with (its reboot_cmd)", m->name, reboot0);
		goto out;
	}
	cfg_path = xasprintf("%s/%s/grub.cfg", boot, t.grub);
	env_path = xasprintf("%s/%s/grubenv", boot, t.grub);
	if (read_grub_cfg(c, m, cfg_path, t.grub, &cfg, step_ms) < 0 ||
	    read_saved_entry(c, m, env_path, t.grub, &saved, step_ms) < 0)
		goto out;

	/* the files: /boot/vmlinuz-R, System.map-R, config-R, /lib/modules/R */
	if (upload_kernel(c, a, o, boot, stage, &image) < 0 ||
	    upload_boot_file(c, o, map, boot, "System.map", a->release) < 0 ||
	    upload_boot_file(c, o, kconfig, boot, "config", a->release) < 0)
		goto out;

	if (m->initramfs) {
		if (has_tool(&t, "update-initramfs")) {
			const char *argv[] = { "update-initramfs", "-c", "-k", a->release, "-b", boot, NULL };

			rc = ssh_run_step(c, "make the initramfs (update-initramfs)", argv, NULL, install_ms);
		} else if (has_tool(&t, "dracut")) {
			char *img = xasprintf("%s/initramfs-%s.img", boot, a->release);
			const char *argv[] = { "dracut", "--force", img, a->release, NULL };

			rc = ssh_run_step(c, "make the initramfs (dracut)", argv, NULL, install_ms);
			free(img);
		} else {
			rc = ssh_fail(c, "machine '%s' has initramfs = yes but neither update-initramfs nor dracut",
				      m->name);
		}
		if (rc < 0)
			goto out;
	}

	/* the boot entry: update-grub is grub-mkconfig -o /boot/grub/grub.cfg */
	if (!strcmp(boot, DEF_BOOT_DIR) && !strcmp(t.grub, "grub") && has_tool(&t, "update-grub")) {
		const char *argv[] = { "update-grub", NULL };

		rc = ssh_run_step(c, "add the boot entry (update-grub)", argv, NULL, install_ms);
	} else {
		tool = xasprintf("%s-mkconfig", t.grub);
		{
			const char *argv[] = { tool, "-o", cfg_path, NULL };

			rc = ssh_run_step(c, "add the boot entry (grub-mkconfig)", argv, NULL, install_ms);
		}
		free(tool);
		tool = NULL;
	}
	if (rc < 0)
		goto out;
	if (read_grub_cfg(c, m, cfg_path, t.grub, &cfg, step_ms) < 0)
		goto out;
	rc = grub_find_entry(cfg.buf, a->release, entry, &title);
	if (rc > 0) {
		ssh_fail(c, "no boot entry for kernel '%s' in '%s' on machine '%s' after %s-mkconfig%s", a->release,
			    cfg_path, m->name, t.grub,
			    strstr(cfg.buf, "blscfg") ? " (it boots BootLoaderSpec entries, which klab does not write)"
						      : "");
		goto out;
	}
	if (rc < 0) {
		ssh_fail(c, "the boot entry '%s' of machine '%s' has '>' in a title and no menu id: grub-reboot cannot "
			    "name it", title.buf, m->name);
		goto out;
	}
	info("machine '%s': boot entry of %s is '%s' (%s)", m->name, a->release, entry->buf, title.buf);
	if (!strcmp(saved.buf, entry->buf)) {
		ssh_fail(c, "machine '%s' has the kernel under test '%s' as its saved default entry: a power cycle "
			    "would boot it again (set the default to a known-good kernel with %s-set-default)",
			    m->name, a->release, t.grub);
		goto out;
	}

	/* select it for the next boot only, and check grubenv says so */
	tool = xasprintf("%s-reboot", t.grub);
	bootopt = xasprintf("--boot-directory=%s", boot);
	{
		const char *argv[] = { tool, bootopt, entry->buf, NULL };

		if (ssh_run_step(c, "select the one-time boot entry (grub-reboot)", argv, NULL, step_ms) < 0)
			goto out;
	}
	selected = 1;
	free(tool);
	tool = xasprintf("%s-editenv", t.grub);
	if (has_tool(&t, tool)) {
		const char *argv[] = { tool, env_path, "list", NULL };

		if (ssh_run_step(c, "read grubenv (grub-editenv)", argv, &env, step_ms) < 0)
			goto out;
		buf_addf(&want, "next_entry=%s", entry->buf);
		if (!has_line(env.buf, want.buf)) {
			buf_rtrim(&env);
			ssh_fail(c, "grub-reboot did not record the one-time entry on machine '%s': '%s' has no "
				    "'%s' (%s)", m->name, env_path, want.buf, env.len ? env.buf : "empty");
			goto out;
		}
	} else {
		warn("machine '%s' has no %s: the one-time entry is not checked", m->name, tool);
	}
	ret = 0;
out:
	if (ret < 0 && selected)
		disarm_next_entry(c, m, step_ms);
	buf_release(&t.have);
	buf_release(&image);
	buf_release(&cfg);
	buf_release(&title);
	buf_release(&env);
	buf_release(&want);
	buf_release(&saved);
	free(map);
	free(kconfig);
	free(cfg_path);
	free(env_path);
	free(tool);
	free(bootopt);
	return ret;
}

/* ---- booting ------------------------------------------------------------------------------ */

#define DEF_REBOOT_DOWN_MS 120000

int deploy_boot(struct ssh_conn *c, struct db *db, const struct conf_machine *m,
		const struct deploy_artifact *a, const struct deploy_opts *o,
		struct deploy_result *r)
{
	static const struct deploy_opts defaults;
	/* constant scripts, detached so this session can end before the machine goes */
	static const char *const kexec_argv[] = { "setsid", "-f", "sh", "-c",
		"exec kexec -e </dev/null >/dev/null 2>&1", NULL };
	static const char *const reboot_default[] = { "systemctl", "reboot", NULL };
	struct deploy_opts ro;
	struct strvec reboot = STRVEC_INIT;
	struct buf boot = BUF_INIT, why = BUF_INIT, entry = BUF_INIT;
	long verify_ms, boot_ms, attempt_ms;
	int64_t t0;
	int ret = -1, rebooted = 0;

	memset(r, 0, sizeof(*r));
	if (!o)
		o = &defaults;
	verify_ms = or_default(o->verify_ms, DEF_VERIFY_MS);
	boot_ms = or_default(o->boot_ms, DEF_BOOT_MS);
	attempt_ms = or_default(o->attempt_ms, DEF_ATTEMPT_MS);
	if (!a->release)
		return ssh_fail(c, "deploy to machine '%s': the artifact has no release", m->name);

	switch (m->boot) {
	case BOOT_NONE:
		ret = deploy_verify(c, a, verify_ms, r);
		goto done;
	case BOOT_REBOOT:
		if (read_boot_id(c, &boot, verify_ms) < 0 || reboot_install(c, m, a, o, &entry) < 0)
			goto done;
		strvec_pushv(&reboot, (const char *const[]){ "setsid", "-f", "sh", "-c",
			     "exec \"$@\" </dev/null >/dev/null 2>&1", "klab-reboot", NULL });
		strvec_pushv(&reboot, m->reboot_cmd.n ? (const char *const *)m->reboot_cmd.v : reboot_default);
		ro = *o;
		ro.down_ms = or_default(o->down_ms, DEF_REBOOT_DOWN_MS);
		info("machine '%s': rebooting into %s once (entry '%s'); its next boot is its default kernel again",
		     m->name, a->release, entry.buf);
		t0 = now_ms();
		if (boot_and_go_down(c, &ro, m, (const char *const *)reboot.v,
				     m->reboot_cmd.n ? m->reboot_cmd.v[0] : "systemctl reboot", boot.buf, &rebooted) < 0) {
			/* still up (it never went down): take the one-time entry back */
			if (ssh_reconnect(c) == 0)
				disarm_next_entry(c, m, verify_ms);
			else
				warn("machine '%s': cannot reconnect to clear the one-time boot entry: "
				     "its next reboot may boot the kernel under test", m->name);
			goto done;
		}
		break;
	case BOOT_KEXEC:
	case BOOT_QEMU:
	default:
		/* the qemu lab's guests run kexec-tools too */
		if (read_boot_id(c, &boot, verify_ms) < 0 || kexec_load(c, m, a, o, &r->shared) < 0)
			goto done;
		info("machine '%s': booting %s by kexec", m->name, a->release);
		t0 = now_ms();
		if (boot_and_go_down(c, o, m, kexec_argv, "kexec -e", boot.buf, &rebooted) < 0)
			goto done;
		break;
	}

	if (!rebooted && wait_ssh(c, m, boot_ms, attempt_ms) < 0) {
		if (m->power_cycle.n) {
			r->power_cycled = 1;
			if (power_cycle(m, or_default(o->power_cycle_ms, DEF_POWER_MS)) == 0 &&
			    wait_ssh(c, m, boot_ms, attempt_ms) == 0)
				goto up;
			buf_addf(&why, "did not answer SSH within %.0f s of booting %s, nor after its power_cycle command",
				 (double)boot_ms / 1000.0, a->release);
		} else {
			buf_addf(&why, "did not answer SSH within %.0f s of booting %s (no power_cycle configured)",
				 (double)boot_ms / 1000.0, a->release);
		}
		ret = fence(c, db, m, r, why.buf);
		goto done;
	}
up:
	r->boot_wait_ms = (long)(now_ms() - t0);
	ret = deploy_verify(c, a, verify_ms, r);
	if (ret < 0 && r->wrong_kernel && m->boot == BOOT_REBOOT && r->release && strcmp(r->release, a->release))
		ssh_fail(c, "machine '%s' did not boot its one-time entry '%s': it came back on kernel '%s' (its "
			    "default entry, most likely), not '%s'%s", m->name, entry.buf, r->release, a->release,
			    r->power_cycled ? " (after a power cycle, which boots the default entry again)" : "");
done:
	if (r->release && !r->fenced)
		record_kernel(db, m->name, r);
	strvec_clear(&reboot);
	buf_release(&boot);
	buf_release(&why);
	buf_release(&entry);
	return ret;
}
