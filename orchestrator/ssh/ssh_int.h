/* ssh_int.h: what the files of the SSH transport share (ssh.c, ssh_sftp.c, ssh_knownhosts.c); not an API. */
#ifndef KLAB_SSH_INT_H
#define KLAB_SSH_INT_H

#include <stdint.h>

#include <libssh2.h>
#include <libssh2_sftp.h>

#include "buf.h"
#include "ssh/ssh.h"

/*
 * Every libssh2 call runs in non-blocking mode and is retried after
 * poll() on the socket, so that each operation is bounded by a deadline:
 * a blocking libssh2 call on a machine that is rebooting can hang for
 * minutes. TCP keepalives and TCP_USER_TIMEOUT turn a silent peer into a
 * socket error, which libssh2 reports and we call "dropped".
 */
struct ssh_conn {
	char *name, *host, *user, *key_file, *known_hosts;
	int port;
	long connect_timeout_ms;
	int keepalive_s;
	int sock;
	LIBSSH2_SESSION *s;
	LIBSSH2_SFTP *sftp;
	int dropped;
	int ready;		/* authenticated (or a handshake-only connection): keepalives may be sent */
	struct buf err;		/* the last failure as logged (ssh_fail(), ssh_error()) */
};

/*
 * The far side's sha256 of "$1", into $s: openssl when the machine has it
 * (SHA extensions: ~5x less CPU than coreutils), else sha256sum. Exit 5 when
 * the file does not exist. A constant script: the path is an argument.
 */
#define REMOTE_HASH_SH \
	"[ -e \"$1\" ] || exit 5; " \
	"if command -v openssl >/dev/null 2>&1; then s=$(openssl dgst -sha256 -r -- \"$1\") || exit 4; " \
	"else s=$(sha256sum -- \"$1\") || exit 4; fi; s=${s#\\\\}; s=${s%% *}; "

/* ---- ssh_lib.c */
/* libssh2_init() once per process. */
void ssh_global_init(void);
/* libssh2's last error of a session, for messages. */
const char *ssh_errmsg(LIBSSH2_SESSION *s);

/* ---- ssh.c */
/* 1 when a libssh2 error code means the connection went away. */
int is_drop_error(int rc);
/* Wait until libssh2 can make progress (sending keepalives): 0, or -1 at the deadline (0: none), not logged. */
int wait_socket(struct ssh_conn *c, int64_t deadline);
/* A connection to target T, not connected yet. */
struct ssh_conn *conn_new(const struct ssh_target *t);
/* TCP connect and handshake, with FULL the host key check and authentication too, in timeout_ms: 0 or -1. */
int session_open(struct ssh_conn *c, long timeout_ms, int full);
/* -1 (logged) when C has no session: it was lost. */
int not_connected(struct ssh_conn *c);
/* Mark C lost and say so (-1). */
int dropped_error(struct ssh_conn *c, int rc, const char *what);
/* "exit status 2: LAST STDERR LINE" (or "killed by signal KILL") of a command, appended to OUT. */
void describe_exit(const struct ssh_exec *x, struct buf *out);

/* ---- ssh_knownhosts.c */
/* Check the host key of C's new session against its known_hosts: 0, or -1 (logged with both fingerprints). */
int check_hostkey(struct ssh_conn *c);
/* Append the known_hosts line "HOST KEYTYPE BASE64" of a host key libssh2 returned: 0, or -1 for an unknown key type (logged). */
int ssh_knownhosts_line(struct buf *line, const char *host, int port, int hostkey_type,
			const char *key, size_t len);

#endif
