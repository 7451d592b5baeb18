/* deploy.c: boot a test machine into a kernel artifact (none|kexec|reboot|qemu), verify it, fence it when it does not return. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "db.h"
#include "deploy.h"
#include "log.h"
#include "run.h"
#include "ssh.h"
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
		return error("cannot verify the kernel of machine '%s'", ssh_name(c));
	r->wrong_kernel = 0;
	if (a->release && strcmp(a->release, r->release)) {
		r->wrong_kernel = 1;
		return error("machine '%s' runs kernel '%s' (build id %s), expected '%s' (build id %s): "
			     "it came back on another kernel",
			     ssh_name(c), r->release, r->build_id ? r->build_id : "none", a->release,
			     a->build_id ? a->build_id : "not checked");
	}
	if (a->build_id && (!r->build_id || strcasecmp(a->build_id, r->build_id))) {
		r->wrong_kernel = 1;
		return error("machine '%s' runs release '%s' with build id %s, expected build id %s: "
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

	if (left <= 0)
		return;
	if (left < ms)
		ms = (long)left;
	usleep((useconds_t)ms * 1000);
}

int deploy_wait_ssh(struct ssh_conn *c, long total_ms, long attempt_ms)
{
	int64_t start = now_ms(), deadline = start + or_default(total_ms, DEF_BOOT_MS);
	int attempts = 0;

	attempt_ms = or_default(attempt_ms, DEF_ATTEMPT_MS);
	while (now_ms() < deadline) {
		long left = (long)(deadline - now_ms());

		attempts++;
		if (try_connect(c, left < attempt_ms ? left : attempt_ms) == 0) {
			info("machine '%s' answers SSH again after %.1f s (%d attempts)", ssh_name(c),
			     (double)(now_ms() - start) / 1000.0, attempts);
			return 0;
		}
		sleep_until(deadline, 500);
	}
	return error("machine '%s' did not answer SSH within %.0f s (%d attempts)", ssh_name(c),
		     (double)or_default(total_ms, DEF_BOOT_MS) / 1000.0, attempts);
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

int machine_set_state(sqlite3 *db, const char *name, const char *state, const char *reason)
{
	if (db_run(db, "INSERT INTO machines (name, state, state_since, state_reason) VALUES (?, ?, ?, ?) "
		   "ON CONFLICT (name) DO UPDATE SET state = excluded.state, "
		   "state_since = excluded.state_since, state_reason = excluded.state_reason",
		   "ssds", name, state, now_wall(), reason) < 0)
		return error("cannot set machine '%s' to '%s'", name, state);
	return 0;
}

static void record_kernel(sqlite3 *db, const char *name, const struct deploy_result *r)
{
	if (!db)
		return;
	if (db_run(db, "INSERT INTO machines (name) VALUES (?) ON CONFLICT (name) DO NOTHING", "s", name) < 0 ||
	    db_run(db, "UPDATE machines SET last_kernel = ?, last_build_id = ?, last_seen = ? WHERE name = ?",
		   "ssds", r->release, r->build_id, now_wall(), name) < 0)
		warn("cannot record the kernel of machine '%s' in the database", name);
}

/* Mark the machine broken, release its lease, and fail naming it. */
static int fence(sqlite3 *db, const struct conf_machine *m, struct deploy_result *r, const char *why)
{
	r->fenced = 1;
	if (db) {
		machine_set_state(db, m->name, "broken", why);
		if (db_run(db, "DELETE FROM leases WHERE machine = ?", "s", m->name) < 0)
			warn("cannot release the lease of machine '%s'", m->name);
	}
	return error("machine '%s' is fenced (state broken): %s", m->name, why);
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

/* ---- kexec ------------------------------------------------------------------------------ */

static int upload_kernel(struct ssh_conn *c, const struct deploy_artifact *a, const struct deploy_opts *o,
			 const char *dir, struct buf *image)
{
	struct ssh_xfer_opts xo = { .timeout_ms = or_default(o->upload_ms, DEF_UPLOAD_MS) };
	const char *mk[] = { "mkdir", "-p", "--", dir, NULL };

	if (!a->image)
		return error("no kernel image to boot on machine '%s'", ssh_name(c));
	if (ssh_run(c, mk, NULL, or_default(o->verify_ms, DEF_VERIFY_MS)) < 0)
		return -1;
	buf_addf(image, "%s/vmlinuz-%s", dir, a->release);
	if (ssh_upload(c, a->image, image->buf, &xo) < 0)
		return error("cannot upload kernel image '%s' to machine '%s'", a->image, ssh_name(c));
	if (a->modules) {
		char *tar = xasprintf("%s/modules-%s.tar", dir, a->release);
		const char *root = o->modules_root ? o->modules_root : "/";
		/* --keep-directory-symlink: on a merged-/usr machine /lib is a
		 * symlink that the archive's "lib/" entry would otherwise replace
		 * with a directory, leaving no libc for any later command. */
		const char *untar[] = { "tar", "--keep-directory-symlink", "-xaf", tar, "-C", root, NULL };
		int rc = ssh_upload(c, a->modules, tar, &xo);

		if (rc == 0)
			rc = ssh_run(c, untar, NULL, xo.timeout_ms);
		free(tar);
		if (rc < 0)
			return error("cannot install the modules of '%s' on machine '%s'", a->release, ssh_name(c));
	}
	return 0;
}

/*
 * Issue the kexec and wait until the machine is gone: either a connect
 * attempt fails, or it answers with a new boot id (a fast reboot). 0 when
 * it went, -1 when it is still up on the same boot after down_ms.
 */
static int kexec_and_go_down(struct ssh_conn *c, const struct deploy_opts *o, const char *old_boot,
			     int *rebooted)
{
	/* a constant script: detached so this session can end before the kernel switch */
	const char *argv[] = { "setsid", "-f", "sh", "-c", "exec kexec -e </dev/null >/dev/null 2>&1", NULL };
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
		error("'kexec -e' failed on machine '%s' (exit status %d): %s", ssh_name(c), x.status, x.err.buf);
		goto out;
	}
	ssh_disconnect(c);
	deadline = now_ms() + down_ms;
	while (now_ms() < deadline) {
		sleep_until(deadline, 300);
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
	error("machine '%s' did not go down within %.0f s of 'kexec -e' (still boot %s)", ssh_name(c),
	      (double)down_ms / 1000.0, old_boot);
out:
	ssh_exec_release(&x);
	buf_release(&boot);
	return ret;
}

int deploy_boot(struct ssh_conn *c, sqlite3 *db, const struct conf_machine *m,
		const struct deploy_artifact *a, const struct deploy_opts *o,
		struct deploy_result *r)
{
	static const struct deploy_opts defaults;
	struct buf image = BUF_INIT, boot = BUF_INIT, why = BUF_INIT;
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
		return error("deploy to machine '%s': the artifact has no release", m->name);

	switch (m->boot) {
	case BOOT_NONE:
		ret = deploy_verify(c, a, verify_ms, r);
		goto done;
	case BOOT_REBOOT:
		ret = error("boot = reboot (one-time boot entry + reboot) for machine '%s': not implemented yet",
			    m->name);
		goto done;
	case BOOT_KEXEC:
	case BOOT_QEMU:
		break;
	}

	/* kexec (the qemu lab's guests run kexec-tools too) */
	if (read_boot_id(c, &boot, verify_ms) < 0 ||
	    upload_kernel(c, a, o, o->remote_dir ? o->remote_dir : DEF_REMOTE_DIR, &image) < 0)
		goto done;
	{
		struct strvec load = STRVEC_INIT;
		const char *cmdline = a->cmdline ? a->cmdline : m->kernel_cmdline;

		strvec_push(&load, "kexec");
		strvec_push(&load, "-l");
		strvec_push(&load, image.buf);
		if (cmdline)
			strvec_pushf(&load, "--command-line=%s", cmdline);
		else
			strvec_push(&load, "--reuse-cmdline");
		if (ssh_run(c, (const char *const *)load.v, NULL, verify_ms) < 0) {
			strvec_clear(&load);
			error("cannot load kernel '%s' on machine '%s'", a->release, m->name);
			goto done;
		}
		strvec_clear(&load);
	}
	info("machine '%s': booting %s by kexec", m->name, a->release);
	t0 = now_ms();
	if (kexec_and_go_down(c, o, boot.buf, &rebooted) < 0)
		goto done;
	if (!rebooted && deploy_wait_ssh(c, boot_ms, attempt_ms) < 0) {
		if (m->power_cycle.n) {
			r->power_cycled = 1;
			if (power_cycle(m, or_default(o->power_cycle_ms, DEF_POWER_MS)) == 0 &&
			    deploy_wait_ssh(c, boot_ms, attempt_ms) == 0)
				goto up;
			buf_addf(&why, "did not answer SSH within %.0f s of booting %s, nor after its power_cycle command",
				 (double)boot_ms / 1000.0, a->release);
		} else {
			buf_addf(&why, "did not answer SSH within %.0f s of booting %s (no power_cycle configured)",
				 (double)boot_ms / 1000.0, a->release);
		}
		ret = fence(db, m, r, why.buf);
		goto done;
	}
up:
	r->boot_wait_ms = (long)(now_ms() - t0);
	ret = deploy_verify(c, a, verify_ms, r);
done:
	if (r->release && !r->fenced)
		record_kernel(db, m->name, r);
	buf_release(&image);
	buf_release(&boot);
	buf_release(&why);
	return ret;
}
