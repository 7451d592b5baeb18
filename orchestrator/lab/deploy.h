/* deploy.h: put a kernel on a test machine, boot it (none|kexec|reboot|qemu), verify it, fence a machine that does not return. */
#ifndef KLAB_DEPLOY_H
#define KLAB_DEPLOY_H

#include "store/db.h"

#include "buf.h"
#include "conf/conf.h"
#include "ssh/ssh.h"

/* The kernel to boot (one build of build.c). */
struct deploy_artifact {
	const char *image;	/* local kernel image (bzImage); NULL with boot = none */
	const char *modules;	/* local modules tarball (lib/modules/RELEASE/... inside), or NULL */
	const char *release;	/* expected `uname -r` (required) */
	const char *build_id;	/* expected GNU build id, hex; NULL: not checked */
	const char *cmdline;	/* explicit kernel command line; NULL: machine's kernel_cmdline, else --reuse-cmdline */
	const char *system_map;	/* boot = reboot: System.map; NULL: "System.map" next to the image, if there */
	const char *config;	/* boot = reboot: the kernel .config; NULL: "config" next to the image, if there */
};

/* Per-phase timeouts (0: the default in brackets). */
struct deploy_opts {
	long upload_ms;		/* image and modules upload [300 s] */
	long down_ms;		/* issuing the boot until the connection goes away [30 s; boot = reboot 120 s] */
	long boot_ms;		/* waiting for SSH to come back after the boot [boot_timeout_ms of [lab], else 300 s] */
	long attempt_ms;	/* one connect attempt while waiting (a booting guest can hang one) [10 s] */
	long verify_ms;		/* each verify command [30 s] */
	long power_cycle_ms;	/* the local power_cycle command [60 s] */
	const char *remote_dir;	/* where kexec images (and every modules tarball) go on the machine [/var/lib/klab/boot] */
	const char *modules_root;	/* where the modules tarball is unpacked [/] */
	long install_ms;	/* boot = reboot: each install step (initramfs, grub-mkconfig) [300 s] */
	int progress;		/* 1: a progress line (lib/progress.h) on stderr for each upload */
};

/* What happened (filled by deploy_boot / deploy_verify; free with deploy_result_release). */
struct deploy_result {
	char *release;		/* `uname -r` after the boot */
	char *build_id;		/* build id from /sys/kernel/notes, or NULL if none */
	int wrong_kernel;	/* came back on a kernel other than the artifact's */
	int power_cycled;	/* the power_cycle command was run */
	int fenced;		/* the machine was marked broken */
	long boot_wait_ms;	/* from issuing the boot to SSH answering */
	int shared;		/* kexec: the image came from the machine's shared_root, not uploaded */
};

void deploy_result_release(struct deploy_result *r);

/*
 * Boot machine M into the artifact with M's boot method, over connection
 * C (connected to M; reconnected in place, so C stays valid for the
 * caller):
 *   none:   nothing is booted; only the verify below.
 *   kexec:  upload the image (and modules tarball, unpacked under
 *           modules_root); a machine with shared_root (where it sees the
 *           host's /, read-only: the qemu lab) reads both from there
 *           instead, their sha256 checked on the far side against the
 *           local files' (r->shared = 1), and falls back to the upload with
 *           a warning when they are not there or differ;
 *           `kexec -l IMAGE --reuse-cmdline` (or
 *           --command-line=...), then a detached `setsid -f kexec -e`; wait
 *           for the connection to go away and for SSH to answer again with
 *           a new boot id (or after a dropped connection).
 *   reboot: install the kernel for ONE boot: upload the image to
 *           BOOT/vmlinuz-RELEASE (BOOT: the machine's boot_dir, /boot),
 *           System.map-RELEASE and config-RELEASE when the artifact has
 *           them, the modules as for kexec; an initramfs only with
 *           `initramfs = yes` (update-initramfs -c -k R -b BOOT, or
 *           dracut); `update-grub` (BOOT = /boot) or `grub[2]-mkconfig -o
 *           BOOT/grub[2]/grub.cfg`; find the release's entry in that
 *           grub.cfg by id ("submenu-id>entry-id"; titles when there are no
 *           ids), refuse a grub.cfg that never reads next_entry from
 *           grubenv; `grub[2]-reboot --boot-directory=BOOT ENTRY`, checked
 *           with `grub[2]-editenv BOOT/grub[2]/grubenv list`; then the
 *           machine's reboot_cmd (systemctl reboot), detached. Every step
 *           that fails names the machine, the step and the far side's
 *           stderr, and nothing is rebooted. GRUB clears next_entry when
 *           it boots it: the boot after this one (a power cycle too) is the
 *           machine's default kernel again, so a job must boot its kernel
 *           anew each time. Coming back on another kernel (the default
 *           entry) is reported naming both releases, r->wrong_kernel = 1.
 *   qemu:   the qemu lab restarts the guest itself (lab_qemu.c); here
 *           treated as kexec (the guests run kexec-tools).
 * Then deploy_verify(). A machine that does not answer within boot_ms
 * has its power_cycle argv run locally (when configured) and is waited for
 * again; if it still does not answer it is fenced: state 'broken' with
 * state_since and state_reason in the machines table (DB may be NULL: not
 * recorded), and -1 is returned with a message naming the machine.
 * 0 when the machine runs the artifact's kernel; -1 otherwise (r says
 * what happened; the message, logged, is ssh_error(c)).
 */
int deploy_boot(struct ssh_conn *c, struct db *db, const struct conf_machine *m,
		const struct deploy_artifact *a, const struct deploy_opts *o,
		struct deploy_result *r);

/*
 * Check `uname -r` and the build id of the running kernel against the
 * artifact: 0 when equal; -1 with r->wrong_kernel set and a message naming
 * the machine, the expected and the running release/build id.
 */
int deploy_verify(struct ssh_conn *c, const struct deploy_artifact *a, long timeout_ms,
		  struct deploy_result *r);

/*
 * Wait until SSH answers on C's target: attempts bounded by attempt_ms,
 * the whole by total_ms. 0 when connected, -1 when it did not come back.
 */
int deploy_wait_ssh(struct ssh_conn *c, long total_ms, long attempt_ms);

/*
 * The GNU build id (hex) from the bytes of /sys/kernel/notes (ELF notes).
 * 0 with hex filled in (up to 64 digits), 1 when there is no build id note,
 * -1 when the notes are malformed.
 */
int deploy_parse_build_id(const unsigned char *notes, size_t len, struct buf *hex);

/*
 * Put klab-agent on the machine at REMOTE_PATH (mode 0755), uploading only
 * when the remote sha256 differs from the local file's. *uploaded (may be
 * NULL) is set to 1 when it copied. 0 or -1 (logged; ssh_error(c) says
 * why).
 */
int deploy_agent(struct ssh_conn *c, const char *local_agent, const char *remote_path,
		 int *uploaded);

/*
 * Machine states in the machines table (db schema 0001): set STATE
 * ('free', 'broken', 'drained') with the reason and the time now; the row
 * is created if missing. 0 or -1.
 */
int machine_set_state(struct db *db, const char *name, const char *state, const char *reason);

#endif
