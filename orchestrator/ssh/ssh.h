/* ssh.h: the SSH transport to test machines (libssh2): connect, exec one quoted argv, SFTP, host keys. */
#ifndef KLAB_SSH_H
#define KLAB_SSH_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "conf/conf.h"

/*
 * Where and how to reach one machine. Strings are borrowed: they must live
 * as long as the connection (ssh_target_from_conf() points them into the
 * config).
 *
 * Host keys are checked against `known_hosts` (OpenSSH format; hashed
 * "|1|salt|hash" entries too; "[host]:port" for ports other than 22). A
 * host whose key differs is refused with both SHA256 fingerprints; a host
 * that is not in the file is refused with a hint to run `klab machine
 * trust NAME`. Only public-key authentication is used: `key_file` (an
 * ed25519 or ECDSA private key; libssh2 1.10 signs RSA keys with SHA-1
 * only, which OpenSSH >= 8.8 refuses) and then ssh-agent when
 * SSH_AUTH_SOCK is set.
 */
struct ssh_target {
	const char *name;		/* machine name, for messages */
	const char *host;
	int port;			/* 0: 22 */
	const char *user;		/* NULL: root */
	const char *key_file;		/* private key; NULL: ssh-agent only */
	const char *known_hosts;	/* required */
	long connect_timeout_ms;	/* TCP connect + handshake + auth; 0: 10 s */
	int keepalive_s;		/* keepalive interval; 0: 5 s */
};

/*
 * Fill a target from the config: machine host/port/user, [lab] ssh_key,
 * known_hosts and ssh_timeout_ms.
 */
void ssh_target_from_conf(struct ssh_target *t, const struct klab_config *cfg,
			  const struct conf_machine *m);

struct ssh_conn;		/* opaque: one TCP connection and libssh2 session */

/*
 * Connect, check the host key, authenticate. 0 with *out set, or -1
 * (logged: "cannot connect to machine 'dut' (198.18.255.2:22): ..."; WHY,
 * when not NULL, gets the same message, for a caller that keeps it).
 * The target is copied (its strings are duplicated).
 */
int ssh_connect(struct ssh_conn **out, const struct ssh_target *t, struct buf *why);
/* Drop the current session (if any) and connect again with the same target: 0 or -1. */
int ssh_reconnect(struct ssh_conn *c);
/* Per-attempt bound of ssh_reconnect() (deploy waits with short attempts); 0: 10 s. */
void ssh_set_connect_timeout(struct ssh_conn *c, long timeout_ms);
long ssh_get_connect_timeout(const struct ssh_conn *c);
/* Drop the session but keep the target, so ssh_reconnect() can follow (after issuing a reboot). */
void ssh_disconnect(struct ssh_conn *c);
/* Disconnect and free; NULL is fine. */
void ssh_close(struct ssh_conn *c);
/* 1 when the last failure was the connection going away (EOF, reset, keepalive timeout). */
int ssh_dropped(const struct ssh_conn *c);
/* The machine name of the target (for messages). */
const char *ssh_name(const struct ssh_conn *c);
/*
 * Why the last failed operation on C failed, as it was logged ("" before
 * any): a function that works on a machine through C (a command, an
 * upload, a deploy step) and fails hands its reason up this way, and its
 * caller puts ssh_error() in the message it keeps (a step's reason). A call
 * that succeeds leaves it as it was: read it right after the failed call.
 */
const char *ssh_error(const struct ssh_conn *c);
/*
 * Say that an operation on C's machine failed: logged as error() and kept
 * as C's last failure (ssh_error()). -1, so `return ssh_fail(c, ...)`. The
 * transport's own failures go through it, and so do those of the code that
 * drives a machine through C (deploy.c, lab_qemu.c).
 */
int ssh_fail(struct ssh_conn *c, const char *fmt, ...) KLAB_PRINTF(2, 3);

/*
 * One remote command. The command string sent is sq_quote_argv(argv)
 * (lib/quote.h) and nothing else: the remote user's shell sees each word
 * single-quoted, so no byte of an argument is interpreted. With a timeout
 * the argv is run as `timeout -k 2 SECS argv...` on the far side as well,
 * so a timed out command does not keep running there.
 */
struct ssh_exec {
	/* inputs */
	const char *const *argv;
	const char *in;			/* stdin data; NULL: none (EOF at once) */
	size_t in_len;
	long timeout_ms;		/* whole command; 0: none */
	size_t out_cap;			/* per stream; 0: 64 MiB */
	/*
	 * Called whenever stderr grew, with all of it so far (err.buf, err.len)
	 * and the length it had before: a caller can act on a line as soon as
	 * it arrives (the job waits for a server's ready line this way).
	 */
	void (*on_stderr)(void *arg, const struct buf *err, size_t old_len);
	void *on_stderr_arg;

	/* outputs */
	struct buf out;
	struct buf err;
	int status;			/* exit status, 128 + N for signal N, -1 if unknown */
	char *signal;			/* exit signal name ("KILL"), or NULL */
	int timed_out;
	int dropped;			/* the connection went away during the command */
	int truncated;			/* an output hit out_cap */
};

#define SSH_EXEC_INIT { .out = BUF_INIT, .err = BUF_INIT, .status = -1 }

/*
 * Run x->argv on the machine. 0 when the command ran to its end (whatever
 * its exit status: look at x->status); -1 on a timeout, a dropped
 * connection or a protocol error (logged; x->timed_out / x->dropped say
 * which). After a drop, ssh_reconnect() and run the command again.
 */
int ssh_exec(struct ssh_conn *c, struct ssh_exec *x);
/* Free the outputs of an ssh_exec (the struct can be reused after SSH_EXEC_INIT). */
void ssh_exec_release(struct ssh_exec *x);

/*
 * Convenience: run argv, fail unless it exits 0 (logged with the command's
 * first word, its exit status and the last line of its stderr). stdout goes
 * to `out` when not NULL (appended).
 */
int ssh_run(struct ssh_conn *c, const char *const *argv, struct buf *out, long timeout_ms);

/*
 * ssh_run for one named step of a procedure (deploy's install steps): the
 * same, but a failure is logged as "cannot STEP on machine 'M': 'CMD'
 * exited with status N: LAST STDERR LINE" (or timed out, lost the
 * connection, could not run).
 */
int ssh_run_step(struct ssh_conn *c, const char *step, const char *const *argv, struct buf *out,
		 long timeout_ms);

/*
 * sha256 of a remote file, computed on the far side (`openssl dgst -sha256`
 * when the machine has it, else `sha256sum`). 0 with hex filled in, 1 when
 * the file does not exist, -1 on an error.
 */
int ssh_remote_sha256(struct ssh_conn *c, const char *path, char hex[65]);

/* Progress of a transfer: called at most every 500 ms and at the end. */
typedef void (*ssh_progress_fn)(void *arg, uint64_t done, uint64_t total);

struct ssh_xfer_opts {
	long timeout_ms;		/* the whole transfer; 0: none */
	int mode;			/* remote file mode for uploads; 0: 0644 */
	ssh_progress_fn progress;	/* NULL: a log line every 10 s for files >= 16 MiB */
	void *progress_arg;
	int no_resume;			/* 1: always start the temporary file over */
};

/*
 * Upload a local file to REMOTE over SFTP: written to "REMOTE.klab-part",
 * fsync'ed, its sha256 computed on the far side (as ssh_remote_sha256) and
 * compared with the local file's, then renamed over REMOTE (the check and
 * the rename are one remote command). A ".klab-part" left by an
 * interrupted upload is resumed when its content is a prefix of the local
 * file (checked by sha256), otherwise started over. 0 or -1 (logged; the
 * final name is never left with partial content).
 */
int ssh_upload(struct ssh_conn *c, const char *local, const char *remote,
	       const struct ssh_xfer_opts *o);
/*
 * Download REMOTE to LOCAL: LOCAL.klab-part, fsync, sha256 compared with
 * the remote `sha256sum`, rename. 0 or -1.
 */
int ssh_download(struct ssh_conn *c, const char *remote, const char *local,
		 const struct ssh_xfer_opts *o);

/*
 * Host keys (ssh_knownhosts.c).
 *
 * ssh_hostkey_fetch: connect to host:port, do the key exchange only and
 * return the server's host key as a known_hosts line "HOST KEYTYPE BASE64"
 * ("[HOST]:PORT ..." for a port other than 22) in `line` and its
 * "SHA256:..." fingerprint in `fp` (either may be NULL). 0 or -1.
 */
int ssh_hostkey_fetch(const char *host, int port, long timeout_ms,
		      struct buf *line, struct buf *fp);
/*
 * Look host:port up in a known_hosts file for the key in `line` (as made
 * by ssh_hostkey_fetch). 0 not present, 1 present with this key, 2 present
 * with another key (then `other_fp` gets its fingerprint), -1 error.
 */
int ssh_knownhosts_lookup(const char *known_hosts, const char *host, int port,
			  const char *line, struct buf *other_fp);
/* Append `line` to the known_hosts file (created 0600 if missing): 0 or -1. */
int ssh_knownhosts_append(const char *known_hosts, const char *line);

/* "SHA256:base64" fingerprint of a raw public key blob. */
void ssh_fingerprint(const unsigned char *blob, size_t len, struct buf *fp);

#endif
