/* ssh.c: the SSH transport to test machines over libssh2: connect, host keys, exec, SFTP. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libssh2.h>
#include <libssh2_sftp.h>

#include "base64.h"
#include "buf.h"
#include "log.h"
#include "quote.h"
#include "ssh.h"
#include "strvec.h"
#include "util.h"

#define DEFAULT_CONNECT_MS 10000
#define DEFAULT_KEEPALIVE_S 5
#define DEFAULT_OUT_CAP (64u << 20)
#define XFER_BUF (4u << 20)		/* SFTP: bytes handed to libssh2 at once (it pipelines) */
#define CLOSE_GRACE_MS 3000		/* closing a channel after a timeout */

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
	int ready;		/* handshake done: keepalives may be sent */
};

static int libssh2_ready;

static void ssh_global_init(void)
{
	if (!libssh2_ready) {
		if (libssh2_init(0))
			die("cannot initialise libssh2");
		libssh2_ready = 1;
	}
}

void ssh_target_from_conf(struct ssh_target *t, const struct klab_config *cfg,
			  const struct conf_machine *m)
{
	memset(t, 0, sizeof(*t));
	t->name = m->name;
	t->host = m->host;
	t->port = m->port;
	t->user = m->user;
	t->key_file = cfg->lab.ssh_key;
	t->known_hosts = cfg->lab.known_hosts;
	t->connect_timeout_ms = cfg->lab.ssh_timeout_ms;
}

const char *ssh_name(const struct ssh_conn *c)
{
	return c->name;
}

int ssh_dropped(const struct ssh_conn *c)
{
	return c->dropped;
}

/* ---- small helpers: fingerprints, key types ------------------------------ */

void ssh_fingerprint(const unsigned char *blob, size_t len, struct buf *fp)
{
	struct sha256_ctx ctx;
	unsigned char md[32];

	sha256_init(&ctx);
	sha256_update(&ctx, blob, len);
	sha256_final(&ctx, md);
	buf_addstr(fp, "SHA256:");
	base64_encode(fp, md, sizeof(md), 0);
}

static const struct {
	int hostkey_type;
	int knownhost_type;
	const char *name;
} keytypes[] = {
	{ LIBSSH2_HOSTKEY_TYPE_RSA, LIBSSH2_KNOWNHOST_KEY_SSHRSA, "ssh-rsa" },
	{ LIBSSH2_HOSTKEY_TYPE_DSS, LIBSSH2_KNOWNHOST_KEY_SSHDSS, "ssh-dss" },
	{ LIBSSH2_HOSTKEY_TYPE_ECDSA_256, LIBSSH2_KNOWNHOST_KEY_ECDSA_256, "ecdsa-sha2-nistp256" },
	{ LIBSSH2_HOSTKEY_TYPE_ECDSA_384, LIBSSH2_KNOWNHOST_KEY_ECDSA_384, "ecdsa-sha2-nistp384" },
	{ LIBSSH2_HOSTKEY_TYPE_ECDSA_521, LIBSSH2_KNOWNHOST_KEY_ECDSA_521, "ecdsa-sha2-nistp521" },
	{ LIBSSH2_HOSTKEY_TYPE_ED25519, LIBSSH2_KNOWNHOST_KEY_ED25519, "ssh-ed25519" },
};

static int keytype_index_by_hostkey(int type)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(keytypes); i++)
		if (keytypes[i].hostkey_type == type)
			return (int)i;
	return -1;
}

static int keytype_index_by_name(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(keytypes); i++)
		if (!strcmp(keytypes[i].name, name))
			return (int)i;
	return -1;
}

/* "host" for port 22, "[host]:port" otherwise: the OpenSSH spelling. */
static void host_pattern(struct buf *b, const char *host, int port)
{
	if (port == 22 || port <= 0)
		buf_addstr(b, host);
	else
		buf_addf(b, "[%s]:%d", host, port);
}

/* ---- waiting on the socket ------------------------------------------------ */

static const char *ssh_errmsg(LIBSSH2_SESSION *s)
{
	char *msg = NULL;

	if (!s)
		return "no session";
	libssh2_session_last_error(s, &msg, NULL, 0);
	return msg && *msg ? msg : "unknown libssh2 error";
}

static int is_drop_error(int rc)
{
	switch (rc) {
	case LIBSSH2_ERROR_SOCKET_SEND:
	case LIBSSH2_ERROR_SOCKET_RECV:
	case LIBSSH2_ERROR_SOCKET_DISCONNECT:
	case LIBSSH2_ERROR_SOCKET_TIMEOUT:
	case LIBSSH2_ERROR_TIMEOUT:
	case LIBSSH2_ERROR_BANNER_RECV:
	case LIBSSH2_ERROR_KEX_FAILURE:
	case LIBSSH2_ERROR_CHANNEL_CLOSED:
	case LIBSSH2_ERROR_CHANNEL_EOF_SENT:
		return 1;
	}
	return 0;
}

/*
 * Wait until libssh2 can make progress, sending keepalives. Returns 0, or
 * -1 when the deadline passed (deadline 0: none) without logging: the
 * caller says what timed out.
 */
static int wait_socket(struct ssh_conn *c, int64_t deadline)
{
	struct pollfd p = { .fd = c->sock };
	int dir = libssh2_session_block_directions(c->s);
	int64_t left;
	int timeout, next = 0;

	if (dir & LIBSSH2_SESSION_BLOCK_INBOUND)
		p.events |= POLLIN;
	if (dir & LIBSSH2_SESSION_BLOCK_OUTBOUND)
		p.events |= POLLOUT;
	if (!p.events)
		p.events = POLLIN;
	if (c->ready)
		libssh2_keepalive_send(c->s, &next);
	timeout = (next > 0 ? next : c->keepalive_s) * 1000;
	if (deadline) {
		left = deadline - now_ms();
		if (left <= 0)
			return -1;
		if (left < timeout)
			timeout = (int)left;
	}
	if (poll(&p, 1, timeout) < 0 && errno != EINTR)
		return error_errno("poll on connection to '%s'", c->name);
	return 0;
}

/* ---- connecting ------------------------------------------------------------ */

static int tcp_connect(struct ssh_conn *c, int64_t deadline)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res = NULL, *ai;
	char port[16];
	int fd = -1, rc, err = 0;

	snprintf(port, sizeof(port), "%d", c->port);
	rc = getaddrinfo(c->host, port, &hints, &res);
	if (rc)
		return error("cannot resolve host '%s' of machine '%s': %s", c->host, c->name,
			     gai_strerror(rc));
	for (ai = res; ai; ai = ai->ai_next) {
		struct pollfd p;
		socklen_t len = sizeof(err);
		int64_t left;

		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
		if (fd < 0) {
			err = errno;
			continue;
		}
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		if (errno != EINPROGRESS) {
			err = errno;
			close(fd);
			fd = -1;
			continue;
		}
		p.fd = fd;
		p.events = POLLOUT;
		left = deadline - now_ms();
		rc = left > 0 ? poll(&p, 1, (int)left) : 0;
		if (rc == 1 && !getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) && !err)
			break;
		if (rc == 0)
			err = ETIMEDOUT;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		errno = err;
		return error_errno("cannot connect to machine '%s' (%s:%d)", c->name, c->host, c->port);
	}
	{
		int one = 1, idle = c->keepalive_s, cnt = 3;
		unsigned int user_timeout = (unsigned int)c->keepalive_s * 4 * 1000;

		setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
		setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
		setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &idle, sizeof(idle));
		setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
		setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout, sizeof(user_timeout));
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	}
	c->sock = fd;
	return 0;
}

static void session_free(struct ssh_conn *c)
{
	if (c->sftp) {
		/*
		 * A non-blocking shutdown that meets EAGAIN returns without
		 * freeing the SFTP handle (a leak per dropped connection in
		 * klabd). Blocking with a short timeout finishes it; on a dropped
		 * connection the socket is shut first so that nothing waits.
		 */
		if (c->dropped && c->sock >= 0)
			shutdown(c->sock, SHUT_RDWR);
		libssh2_session_set_timeout(c->s, 2000);
		libssh2_session_set_blocking(c->s, 1);
		libssh2_sftp_shutdown(c->sftp);
		c->sftp = NULL;
	}
	c->ready = 0;
	if (c->s) {
		if (!c->dropped)
			libssh2_session_disconnect(c->s, "klab done");
		libssh2_session_free(c->s);
		c->s = NULL;
	}
	if (c->sock >= 0) {
		close(c->sock);
		c->sock = -1;
	}
}

/* Load a known_hosts file line by line (libssh2's readfile stops at the first line it cannot parse). */
static int knownhosts_load(LIBSSH2_KNOWNHOSTS *kh, const char *path, int missing_ok)
{
	struct buf file = BUF_INIT;
	char *line, *save = NULL;
	int n = 0, lineno = 0;

	if (access(path, F_OK) && errno == ENOENT && missing_ok)
		return 0;
	if (buf_read_file(&file, path) < 0)
		return -1;
	for (line = strtok_r(file.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *p = line;

		lineno++;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '#')
			continue;
		if (libssh2_knownhost_readline(kh, p, strlen(p), LIBSSH2_KNOWNHOST_FILE_OPENSSH))
			debug("%s: skipping a known_hosts line libssh2 cannot read", path);
		else
			n++;
	}
	buf_release(&file);
	return n;
}

static int check_hostkey(struct ssh_conn *c)
{
	LIBSSH2_KNOWNHOSTS *kh = NULL;
	struct libssh2_knownhost *found = NULL;
	struct buf fp = BUF_INIT, other = BUF_INIT, decoded = BUF_INIT;
	const char *key;
	size_t len;
	int type, idx, rc, ret = -1;

	key = libssh2_session_hostkey(c->s, &len, &type);
	if (!key)
		return error("machine '%s' (%s:%d) sent no host key", c->name, c->host, c->port);
	ssh_fingerprint((const unsigned char *)key, len, &fp);
	idx = keytype_index_by_hostkey(type);
	if (idx < 0) {
		error("machine '%s' (%s:%d) has a host key of an unknown type (%s)",
		      c->name, c->host, c->port, fp.buf);
		goto out;
	}
	if (!c->known_hosts) {
		error("no known_hosts file configured ([lab] known_hosts): cannot check the host key of machine '%s'",
		      c->name);
		goto out;
	}
	kh = libssh2_knownhost_init(c->s);
	if (!kh || knownhosts_load(kh, c->known_hosts, 1) < 0)
		goto out;
	rc = libssh2_knownhost_checkp(kh, c->host, c->port, key, len,
				      LIBSSH2_KNOWNHOST_TYPE_PLAIN | LIBSSH2_KNOWNHOST_KEYENC_RAW |
				      keytypes[idx].knownhost_type, &found);
	switch (rc) {
	case LIBSSH2_KNOWNHOST_CHECK_MATCH:
		ret = 0;
		break;
	case LIBSSH2_KNOWNHOST_CHECK_MISMATCH:
		if (found && found->key && !base64_decode(&decoded, found->key, strlen(found->key), 0))
			ssh_fingerprint((const unsigned char *)decoded.buf, decoded.len, &other);
		else
			buf_addstr(&other, "(unreadable)");
		error("host key of machine '%s' (%s:%d) does not match known_hosts '%s': "
		      "the machine offers %s %s, the file has %s; refusing to connect "
		      "(if the machine was reinstalled, remove its line and run 'klab machine trust %s')",
		      c->name, c->host, c->port, c->known_hosts, keytypes[idx].name, fp.buf,
		      other.buf, c->name);
		break;
	case LIBSSH2_KNOWNHOST_CHECK_NOTFOUND:
		error("machine '%s' (%s:%d) is not in known_hosts '%s' (its %s key is %s); "
		      "run 'klab machine trust %s' to record it",
		      c->name, c->host, c->port, c->known_hosts, keytypes[idx].name, fp.buf, c->name);
		break;
	default:
		error("cannot check the host key of machine '%s' against '%s': %s",
		      c->name, c->known_hosts, ssh_errmsg(c->s));
	}
out:
	if (kh)
		libssh2_knownhost_free(kh);
	buf_release(&fp);
	buf_release(&other);
	buf_release(&decoded);
	return ret;
}

static int authenticate(struct ssh_conn *c, int64_t deadline)
{
	struct buf tried = BUF_INIT;
	const char *user = c->user ? c->user : "root";
	int rc = -1;

	if (c->key_file) {
		char *pub = xasprintf("%s.pub", c->key_file);
		const char *pubp = file_exists(pub) ? pub : NULL;

		if (!file_exists(c->key_file)) {
			free(pub);
			buf_release(&tried);
			return error("cannot read ssh key '%s' (set [lab] ssh_key)", c->key_file);
		}
		while ((rc = libssh2_userauth_publickey_fromfile_ex(c->s, user, (unsigned)strlen(user),
								    pubp, c->key_file, NULL)) == LIBSSH2_ERROR_EAGAIN)
			if (wait_socket(c, deadline) < 0)
				break;
		free(pub);
		if (!rc)
			goto out;
		debug("key '%s' refused by '%s': %s", c->key_file, c->name, ssh_errmsg(c->s));
		buf_addf(&tried, "key '%s'", c->key_file);
		if (rc == LIBSSH2_ERROR_EAGAIN || is_drop_error(rc))
			goto out;
	}
	if (getenv("SSH_AUTH_SOCK")) {
		LIBSSH2_AGENT *agent = libssh2_agent_init(c->s);
		struct libssh2_agent_publickey *id = NULL, *prev = NULL;

		rc = -1;
		if (agent && !libssh2_agent_connect(agent) && !libssh2_agent_list_identities(agent)) {
			while (libssh2_agent_get_identity(agent, &id, prev) == 0) {
				while ((rc = libssh2_agent_userauth(agent, user, id)) == LIBSSH2_ERROR_EAGAIN)
					if (wait_socket(c, deadline) < 0)
						break;
				if (!rc)
					break;
				prev = id;
			}
			libssh2_agent_disconnect(agent);
		}
		if (agent)
			libssh2_agent_free(agent);
		buf_addf(&tried, "%sthe keys of ssh-agent", tried.len ? " and " : "");
	}
out:
	if (rc) {
		if (rc == LIBSSH2_ERROR_EAGAIN)
			error("authentication to machine '%s' (%s:%d) timed out", c->name, c->host, c->port);
		else if (!tried.len)
			error("no ssh key for machine '%s': set [lab] ssh_key or run an ssh-agent", c->name);
		else
			error("machine '%s' (%s:%d) refused public key authentication of user '%s' with %s",
			      c->name, c->host, c->port, user, tried.buf);
		rc = -1;
	}
	buf_release(&tried);
	return rc;
}

/*
 * TCP connect, SSH handshake, and (when `full`) host key check and
 * authentication, all within timeout_ms.
 */
static int session_open(struct ssh_conn *c, long timeout_ms, int full)
{
	int64_t deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : DEFAULT_CONNECT_MS);
	int rc;

	ssh_global_init();
	session_free(c);
	c->dropped = 0;
	if (tcp_connect(c, deadline) < 0)
		return -1;
	c->s = libssh2_session_init();
	if (!c->s)
		return error("cannot create an SSH session for machine '%s'", c->name);
	libssh2_session_set_blocking(c->s, 0);
	libssh2_session_method_pref(c->s, LIBSSH2_METHOD_HOSTKEY,
				    "ssh-ed25519,ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,"
				    "ecdsa-sha2-nistp521,ssh-rsa");
	libssh2_session_method_pref(c->s, LIBSSH2_METHOD_CRYPT_CS,
				    "aes128-ctr,aes256-ctr,aes192-ctr,aes128-cbc,aes256-cbc");
	libssh2_session_method_pref(c->s, LIBSSH2_METHOD_CRYPT_SC,
				    "aes128-ctr,aes256-ctr,aes192-ctr,aes128-cbc,aes256-cbc");
	libssh2_keepalive_config(c->s, 1, (unsigned)c->keepalive_s);
	while ((rc = libssh2_session_handshake(c->s, c->sock)) == LIBSSH2_ERROR_EAGAIN)
		if (wait_socket(c, deadline) < 0)
			break;
	if (rc) {
		if (rc == LIBSSH2_ERROR_EAGAIN)
			error("SSH handshake with machine '%s' (%s:%d) timed out after %ld ms",
			      c->name, c->host, c->port, timeout_ms);
		else
			error("SSH handshake with machine '%s' (%s:%d) failed: %s",
			      c->name, c->host, c->port, ssh_errmsg(c->s));
		c->dropped = 1;
		session_free(c);
		return -1;
	}
	c->ready = 1;
	if (!full)
		return 0;
	if (check_hostkey(c) < 0 || authenticate(c, deadline) < 0) {
		session_free(c);
		return -1;
	}
	return 0;
}

static struct ssh_conn *conn_new(const struct ssh_target *t)
{
	struct ssh_conn *c = xcalloc(1, sizeof(*c));

	c->name = xstrdup(t->name ? t->name : t->host);
	c->host = xstrdup(t->host);
	c->user = t->user ? xstrdup(t->user) : NULL;
	c->key_file = t->key_file ? xstrdup(t->key_file) : NULL;
	c->known_hosts = t->known_hosts ? xstrdup(t->known_hosts) : NULL;
	c->port = t->port > 0 ? t->port : 22;
	c->connect_timeout_ms = t->connect_timeout_ms > 0 ? t->connect_timeout_ms : DEFAULT_CONNECT_MS;
	c->keepalive_s = t->keepalive_s > 0 ? t->keepalive_s : DEFAULT_KEEPALIVE_S;
	c->sock = -1;
	return c;
}

int ssh_connect(struct ssh_conn **out, const struct ssh_target *t)
{
	struct ssh_conn *c;

	*out = NULL;
	if (!t->host || !*t->host)
		return error("machine '%s' has no host", t->name ? t->name : "?");
	c = conn_new(t);
	if (session_open(c, c->connect_timeout_ms, 1) < 0) {
		ssh_close(c);
		return -1;
	}
	*out = c;
	return 0;
}

int ssh_reconnect(struct ssh_conn *c)
{
	return session_open(c, c->connect_timeout_ms, 1);
}

void ssh_set_connect_timeout(struct ssh_conn *c, long timeout_ms)
{
	c->connect_timeout_ms = timeout_ms > 0 ? timeout_ms : DEFAULT_CONNECT_MS;
}

long ssh_get_connect_timeout(const struct ssh_conn *c)
{
	return c->connect_timeout_ms;
}

void ssh_disconnect(struct ssh_conn *c)
{
	session_free(c);
}

void ssh_close(struct ssh_conn *c)
{
	if (!c)
		return;
	session_free(c);
	free(c->name);
	free(c->host);
	free(c->user);
	free(c->key_file);
	free(c->known_hosts);
	free(c);
}

/* ---- exec ------------------------------------------------------------------- */

void ssh_exec_release(struct ssh_exec *x)
{
	buf_release(&x->out);
	buf_release(&x->err);
	free(x->signal);
	x->signal = NULL;
}

static int not_connected(struct ssh_conn *c)
{
	if (c->s)
		return 0;
	c->dropped = 1;
	return error("not connected to machine '%s' (%s:%d): the connection was lost; reconnect first",
		     c->name, c->host, c->port);
}

/* Mark the connection lost and say so. */
static int dropped_error(struct ssh_conn *c, int rc, const char *what)
{
	c->dropped = 1;
	return error("lost the connection to machine '%s' (%s:%d) while %s: %s (%d); reconnect and retry",
		     c->name, c->host, c->port, what, ssh_errmsg(c->s), rc);
}

static LIBSSH2_CHANNEL *channel_open(struct ssh_conn *c, int64_t deadline)
{
	LIBSSH2_CHANNEL *ch;

	for (;;) {
		int rc;

		ch = libssh2_channel_open_session(c->s);
		if (ch)
			return ch;
		rc = libssh2_session_last_errno(c->s);
		if (rc != LIBSSH2_ERROR_EAGAIN) {
			if (is_drop_error(rc) || rc == LIBSSH2_ERROR_CHANNEL_FAILURE)
				dropped_error(c, rc, "opening a channel");
			else
				error("cannot open a channel to machine '%s': %s", c->name, ssh_errmsg(c->s));
			return NULL;
		}
		if (wait_socket(c, deadline) < 0) {
			error("opening a channel to machine '%s' timed out", c->name);
			return NULL;
		}
	}
}

/* Close and free a channel, bounded by CLOSE_GRACE_MS; if that fails the session is dropped. */
static void channel_done(struct ssh_conn *c, LIBSSH2_CHANNEL *ch, int wait_close)
{
	int64_t deadline = now_ms() + CLOSE_GRACE_MS;
	int rc;

	if (!c->dropped) {
		while ((rc = libssh2_channel_close(ch)) == LIBSSH2_ERROR_EAGAIN)
			if (wait_socket(c, deadline) < 0)
				break;
		if (wait_close && !rc)
			while ((rc = libssh2_channel_wait_closed(ch)) == LIBSSH2_ERROR_EAGAIN)
				if (wait_socket(c, deadline) < 0)
					break;
		if (rc == LIBSSH2_ERROR_EAGAIN) {
			/* the session is stuck: it cannot be trusted any more */
			c->dropped = 1;
		}
	}
	while (libssh2_channel_free(ch) == LIBSSH2_ERROR_EAGAIN)
		if (c->dropped || wait_socket(c, deadline) < 0)
			break;
	if (c->dropped)
		session_free(c);
}

/* Read what is available on one stream: 1 progress, 0 nothing (EAGAIN), -1 error code in *rcp. */
static int drain(LIBSSH2_CHANNEL *ch, int stream, struct buf *b, size_t cap, int *truncated, int *rcp)
{
	char tmp[32768];
	int progress = 0;

	for (;;) {
		ssize_t n = libssh2_channel_read_ex(ch, stream, tmp, sizeof(tmp));

		if (n == LIBSSH2_ERROR_EAGAIN || n == 0)
			return progress;
		if (n < 0) {
			*rcp = (int)n;
			return -1;
		}
		progress = 1;
		if (b->len < cap) {
			size_t room = cap - b->len;

			buf_add(b, tmp, (size_t)n < room ? (size_t)n : room);
			if ((size_t)n > room)
				*truncated = 1;
		} else {
			*truncated = 1;
		}
	}
}

static const char *cmd_word(const char *const *argv)
{
	return argv && argv[0] ? argv[0] : "?";
}

int ssh_exec(struct ssh_conn *c, struct ssh_exec *x)
{
	struct strvec args = STRVEC_INIT;
	struct buf cmd = BUF_INIT;
	LIBSSH2_CHANNEL *ch = NULL;
	int64_t deadline = x->timeout_ms > 0 ? now_ms() + x->timeout_ms : 0;
	size_t cap = x->out_cap ? x->out_cap : DEFAULT_OUT_CAP;
	size_t in_off = 0;
	int eof_sent = 0, rc = 0, ret = -1;
	const char *word = cmd_word(x->argv);

	x->status = -1;
	x->timed_out = x->dropped = x->truncated = 0;
	if (!x->argv || !x->argv[0])
		return error("ssh_exec: empty argv for machine '%s'", c->name);
	if (not_connected(c) < 0) {
		x->dropped = 1;
		return -1;
	}
	if (x->timeout_ms > 0) {
		/* the far side stops the command too: whole seconds, rounded up */
		strvec_push(&args, "timeout");
		strvec_push(&args, "-k");
		strvec_push(&args, "2");
		strvec_pushf(&args, "%ld", (x->timeout_ms + 999) / 1000);
	}
	strvec_pushv(&args, x->argv);
	sq_quote_argv(&cmd, (const char *const *)args.v);

	ch = channel_open(c, deadline);
	if (!ch)
		goto fail;
	while ((rc = libssh2_channel_exec(ch, cmd.buf)) == LIBSSH2_ERROR_EAGAIN)
		if (wait_socket(c, deadline) < 0)
			goto timeout;
	if (rc) {
		if (is_drop_error(rc))
			dropped_error(c, rc, "starting a command");
		else
			error("machine '%s' refused to run '%s': %s", c->name, word, ssh_errmsg(c->s));
		goto fail;
	}

	for (;;) {
		int progress = 0, r;

		if (!eof_sent) {
			if (x->in && in_off < x->in_len) {
				ssize_t n = libssh2_channel_write(ch, x->in + in_off, x->in_len - in_off);

				if (n > 0) {
					in_off += (size_t)n;
					progress = 1;
				} else if (n != LIBSSH2_ERROR_EAGAIN) {
					rc = (int)n;
					goto ioerr;
				}
			} else {
				rc = libssh2_channel_send_eof(ch);
				if (rc == 0) {
					eof_sent = 1;
					progress = 1;
				} else if (rc != LIBSSH2_ERROR_EAGAIN) {
					goto ioerr;
				}
			}
		}
		r = drain(ch, 0, &x->out, cap, &x->truncated, &rc);
		if (r < 0)
			goto ioerr;
		progress |= r;
		r = drain(ch, SSH_EXTENDED_DATA_STDERR, &x->err, cap, &x->truncated, &rc);
		if (r < 0)
			goto ioerr;
		progress |= r;
		if (libssh2_channel_eof(ch)) {
			/* reading stderr may have pulled in the last stdout packets: one more pass */
			if (drain(ch, 0, &x->out, cap, &x->truncated, &rc) < 0 ||
			    drain(ch, SSH_EXTENDED_DATA_STDERR, &x->err, cap, &x->truncated, &rc) < 0)
				goto ioerr;
			break;
		}
		if (!progress && wait_socket(c, deadline) < 0)
			goto timeout;
	}

	while ((rc = libssh2_channel_close(ch)) == LIBSSH2_ERROR_EAGAIN)
		if (wait_socket(c, deadline) < 0)
			goto timeout;
	while (rc == 0 && (rc = libssh2_channel_wait_closed(ch)) == LIBSSH2_ERROR_EAGAIN)
		if (wait_socket(c, deadline) < 0)
			goto timeout;
	if (rc && is_drop_error(rc))
		goto ioerr;
	{
		char *sig = NULL;
		size_t siglen = 0;

		x->status = libssh2_channel_get_exit_status(ch);
		if (!libssh2_channel_get_exit_signal(ch, &sig, &siglen, NULL, NULL, NULL, NULL) && sig) {
			x->signal = xstrndup(sig, siglen);
			x->status = -1;
			libssh2_free(c->s, sig);
		}
	}
	while (libssh2_channel_free(ch) == LIBSSH2_ERROR_EAGAIN)
		if (wait_socket(c, deadline) < 0)
			break;
	ch = NULL;
	ret = 0;
	goto out;

ioerr:
	if (is_drop_error(rc) || rc == LIBSSH2_ERROR_SOCKET_NONE) {
		char what[300];

		snprintf(what, sizeof(what), "running '%s'", word);
		dropped_error(c, rc, what);
		x->dropped = 1;
	} else {
		error("error while running '%s' on machine '%s': %s (%d)", word, c->name, ssh_errmsg(c->s), rc);
	}
	goto fail;
timeout:
	x->timed_out = 1;
	error("command '%s' on machine '%s' timed out after %ld ms", word, c->name, x->timeout_ms);
fail:
	if (ch)
		channel_done(c, ch, 0);
	if (c->dropped) {
		x->dropped = 1;
		session_free(c);
	}
out:
	strvec_clear(&args);
	buf_release(&cmd);
	return ret;
}

static void describe_exit(const struct ssh_exec *x, struct buf *out)
{
	if (x->signal)
		buf_addf(out, "killed by signal %s", x->signal);
	else
		buf_addf(out, "exit status %d", x->status);
	if (x->err.len)
		buf_addf(out, ": %s", last_line(x->err.buf));
}

/* ssh_run and ssh_run_step: STEP NULL for ssh_run's message. */
static int run_checked(struct ssh_conn *c, const char *step, const char *const *argv, struct buf *out,
		       long timeout_ms)
{
	struct ssh_exec x = SSH_EXEC_INIT;
	struct buf why = BUF_INIT;
	int ret = -1;

	x.argv = argv;
	x.timeout_ms = timeout_ms;
	if (ssh_exec(c, &x) < 0) {
		if (step)
			error("cannot %s on machine '%s': '%s' %s", step, c->name, argv[0],
			      x.timed_out ? "timed out" : x.dropped ? "lost the connection" : "could not run");
		goto out;
	}
	if (x.status != 0) {
		if (step) {
			const char *l = last_line(x.err.buf);

			error("cannot %s on machine '%s': '%s' exited with status %d: %s", step, c->name, argv[0],
			      x.status, *l ? l : "(no error output)");
		} else {
			describe_exit(&x, &why);
			error("command '%s' failed on machine '%s' (%s)", cmd_word(argv), c->name, why.buf);
		}
		goto out;
	}
	if (out)
		buf_add(out, x.out.buf, x.out.len);
	ret = 0;
out:
	buf_release(&why);
	ssh_exec_release(&x);
	return ret;
}

int ssh_run(struct ssh_conn *c, const char *const *argv, struct buf *out, long timeout_ms)
{
	return run_checked(c, NULL, argv, out, timeout_ms);
}

int ssh_run_step(struct ssh_conn *c, const char *step, const char *const *argv, struct buf *out,
		 long timeout_ms)
{
	return run_checked(c, step, argv, out, timeout_ms);
}

/*
 * The far side's sha256 of "$1", into $s: openssl when the machine has it
 * (SHA extensions: ~5x less CPU than coreutils), else sha256sum. Exit 5 when
 * the file does not exist. A constant script: the path is an argument.
 */
#define REMOTE_HASH_SH \
	"[ -e \"$1\" ] || exit 5; " \
	"if command -v openssl >/dev/null 2>&1; then s=$(openssl dgst -sha256 -r -- \"$1\") || exit 4; " \
	"else s=$(sha256sum -- \"$1\") || exit 4; fi; s=${s#\\\\}; s=${s%% *}; "

int ssh_remote_sha256(struct ssh_conn *c, const char *path, char hex[65])
{
	const char *argv[] = { "sh", "-c", REMOTE_HASH_SH "echo \"$s\"", "klab-sha256", path, NULL };
	struct ssh_exec x = SSH_EXEC_INIT;
	struct buf why = BUF_INIT;
	int ret = -1;
	size_t i;

	x.argv = argv;
	x.timeout_ms = 600000;
	if (ssh_exec(c, &x) < 0)
		goto out;
	if (x.status != 0) {
		if (x.status == 5) {
			ret = 1;
			goto out;
		}
		describe_exit(&x, &why);
		error("cannot compute the sha256 of '%s' on machine '%s' (%s)", path, c->name, why.buf);
		goto out;
	}
	for (i = 0; i < 64; i++)
		if (!strchr("0123456789abcdef", x.out.buf[i]) || !x.out.buf[i])
			break;
	if (i != 64) {
		error("unexpected output of sha256sum for '%s' on machine '%s'", path, c->name);
		goto out;
	}
	memcpy(hex, x.out.buf, 64);
	hex[64] = 0;
	ret = 0;
out:
	buf_release(&why);
	ssh_exec_release(&x);
	return ret;
}

/* ---- SFTP ------------------------------------------------------------------- */

static int sftp_ready(struct ssh_conn *c, int64_t deadline)
{
	if (c->sftp)
		return 0;
	if (not_connected(c) < 0)
		return -1;
	for (;;) {
		int rc;

		c->sftp = libssh2_sftp_init(c->s);
		if (c->sftp)
			return 0;
		rc = libssh2_session_last_errno(c->s);
		if (rc != LIBSSH2_ERROR_EAGAIN) {
			if (is_drop_error(rc))
				return dropped_error(c, rc, "starting SFTP");
			return error("cannot start SFTP on machine '%s': %s", c->name, ssh_errmsg(c->s));
		}
		if (wait_socket(c, deadline) < 0)
			return error("starting SFTP on machine '%s' timed out", c->name);
	}
}

static const char *sftp_status(unsigned long code)
{
	switch (code) {
	case LIBSSH2_FX_NO_SUCH_FILE: return "no such file";
	case LIBSSH2_FX_PERMISSION_DENIED: return "permission denied";
	case LIBSSH2_FX_FAILURE: return "failure";
	case LIBSSH2_FX_NO_SUCH_PATH: return "no such path";
	case LIBSSH2_FX_NO_SPACE_ON_FILESYSTEM: return "no space left on the file system";
	case LIBSSH2_FX_QUOTA_EXCEEDED: return "quota exceeded";
	case LIBSSH2_FX_OP_UNSUPPORTED: return "operation not supported";
	}
	return "error";
}

/* Report a failed SFTP call: drop, timeout or an SFTP status. Always -1. */
static int sftp_fail(struct ssh_conn *c, long rc, const char *what, const char *path)
{
	char ctx[600];

	snprintf(ctx, sizeof(ctx), "%s '%s'", what, path);
	if (rc == LIBSSH2_ERROR_EAGAIN)
		return error("%s on machine '%s' timed out", ctx, c->name);
	if (rc == LIBSSH2_ERROR_SFTP_PROTOCOL && c->sftp)
		return error("cannot %s on machine '%s': %s", ctx, c->name,
			     sftp_status(libssh2_sftp_last_error(c->sftp)));
	if (is_drop_error((int)rc))
		return dropped_error(c, (int)rc, ctx);
	return error("cannot %s on machine '%s': %s", ctx, c->name, ssh_errmsg(c->s));
}

/* Open a remote file with a deadline: handle or NULL (logged). */
static LIBSSH2_SFTP_HANDLE *sftp_open(struct ssh_conn *c, const char *path, unsigned long flags,
				      long mode, int64_t deadline)
{
	for (;;) {
		LIBSSH2_SFTP_HANDLE *h = libssh2_sftp_open_ex(c->sftp, path, (unsigned)strlen(path),
							      flags, mode, LIBSSH2_SFTP_OPENFILE);
		int rc;

		if (h)
			return h;
		rc = libssh2_session_last_errno(c->s);
		if (rc != LIBSSH2_ERROR_EAGAIN || wait_socket(c, deadline) < 0) {
			sftp_fail(c, rc, "open", path);
			return NULL;
		}
	}
}

static void sftp_close_handle(struct ssh_conn *c, LIBSSH2_SFTP_HANDLE *h, int64_t deadline)
{
	while (libssh2_sftp_close_handle(h) == LIBSSH2_ERROR_EAGAIN)
		if (wait_socket(c, deadline) < 0)
			break;
}

/* Size of a remote file: 0 (size set), 1 missing, -1 error. */
static int sftp_size(struct ssh_conn *c, const char *path, uint64_t *size, int64_t deadline)
{
	LIBSSH2_SFTP_ATTRIBUTES a;
	int rc;

	while ((rc = libssh2_sftp_stat_ex(c->sftp, path, (unsigned)strlen(path), LIBSSH2_SFTP_STAT, &a)) ==
	       LIBSSH2_ERROR_EAGAIN)
		if (wait_socket(c, deadline) < 0)
			return error("stat of '%s' on machine '%s' timed out", path, c->name);
	if (rc == LIBSSH2_ERROR_SFTP_PROTOCOL &&
	    libssh2_sftp_last_error(c->sftp) == LIBSSH2_FX_NO_SUCH_FILE)
		return 1;
	if (rc)
		return sftp_fail(c, rc, "stat", path);
	*size = a.filesize;
	return 0;
}

struct progress {
	const struct ssh_xfer_opts *o;
	const char *what;
	const char *machine;
	uint64_t total;
	int64_t start, last;
};

static void progress_tick(struct progress *p, uint64_t done, int final)
{
	int64_t now = now_ms();

	if (p->o && p->o->progress) {
		if (final || now - p->last >= 500) {
			p->o->progress(p->o->progress_arg, done, p->total);
			p->last = now;
		}
		return;
	}
	if (p->total < (16u << 20))
		return;
	if (final || now - p->last >= 10000) {
		double s = (double)(now - p->start) / 1000.0;

		info("%s %s: %llu of %llu MiB (%.0f%%, %.1f MB/s)", p->what, p->machine,
		     (unsigned long long)(done >> 20), (unsigned long long)(p->total >> 20),
		     p->total ? 100.0 * (double)done / (double)p->total : 100.0,
		     s > 0 ? (double)done / 1e6 / s : 0.0);
		p->last = now;
	}
}

/* Read up to n bytes (less only at EOF): bytes read, or -1 (errno). */
static ssize_t read_full(int fd, char *p, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, p + got, n - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

/* sha256 of the first n bytes of fd (from offset 0): 0 or -1. */
static int sha256_prefix(int fd, uint64_t n, struct sha256_ctx *ctx, char *tmp, size_t tmplen)
{
	while (n) {
		size_t want = n < tmplen ? (size_t)n : tmplen;
		ssize_t r = read_full(fd, tmp, want);

		if (r <= 0)
			return -1;
		sha256_update(ctx, tmp, (size_t)r);
		n -= (uint64_t)r;
	}
	return 0;
}



/*
 * The local sha256 of an upload is computed by a second thread while the
 * first one feeds libssh2: on a 2-CPU machine that takes the hashing off
 * the transfer's critical path. When no thread can be made, the file is
 * hashed after the transfer.
 */
struct hash_job {
	const char *path;
	char hex[65];
	int rc;
};

static void *hash_thread(void *arg)
{
	struct hash_job *j = arg;

	j->rc = sha256_file_hex(j->path, j->hex);
	return NULL;
}

/*
 * On the far side, in one round trip: TMP flushed to disk (fsync by
 * `sync FILE`) while its sha256 is computed, the digest compared with the
 * local one, then TMP renamed over REMOTE and the folder flushed, or TMP
 * removed when it differs. Flushing beside the hashing rather than by an
 * SFTP fsync before it takes the disk write off the upload's critical path
 * (the two overlap: one is I/O, the other CPU). The script is a constant;
 * the paths and the digest are its arguments.
 */
static int verify_and_rename(struct ssh_conn *c, const char *local, const char *tmp,
			     const char *remote, const char *local_hex)
{
	static const char script[] = "sync -- \"$1\" & f=$!; " REMOTE_HASH_SH
		"wait $f || exit 6; "
		"if [ \"$s\" != \"$3\" ]; then echo \"$s\"; rm -f -- \"$1\"; exit 3; fi; "
		"mv -f -- \"$1\" \"$2\" || exit 1; sync -- \"$(dirname -- \"$2\")\" || exit 7";
	const char *argv[] = { "sh", "-c", script, "klab-verify", tmp, remote, local_hex, NULL };
	struct ssh_exec x = SSH_EXEC_INIT;
	struct buf why = BUF_INIT;
	int ret = -1;

	x.argv = argv;
	x.timeout_ms = 600000;
	if (ssh_exec(c, &x) < 0) {
		error("cannot check the upload of '%s' to machine '%s'", local, c->name);
		goto out;
	}
	if (x.status == 3) {
		buf_rtrim(&x.out);
		error("upload of '%s' to '%s' on machine '%s' arrived damaged: sha256 %s, expected %s",
		      local, remote, c->name, x.out.buf, local_hex);
		goto out;
	}
	if (x.status == 7) {
		describe_exit(&x, &why);
		error("the upload '%s' on machine '%s' is in place, but its folder could not be flushed "
		      "(sync: %s)", remote, c->name, why.buf);
		goto out;
	}
	if (x.status == 6) {
		describe_exit(&x, &why);
		error("cannot flush the upload '%s' to disk on machine '%s' (sync: %s)", tmp, c->name, why.buf);
		goto out;
	}
	if (x.status != 0) {
		describe_exit(&x, &why);
		error("cannot check and rename the upload '%s' on machine '%s' (%s)", tmp, c->name, why.buf);
		goto out;
	}
	ret = 0;
out:
	buf_release(&why);
	ssh_exec_release(&x);
	return ret;
}

int ssh_upload(struct ssh_conn *c, const char *local, const char *remote,
	       const struct ssh_xfer_opts *o)
{
	static const struct ssh_xfer_opts defaults;
	char *tmp = xasprintf("%s.klab-part", remote);
	char *data = xmalloc(XFER_BUF);
	char local_hex[65], remote_hex[65];
	LIBSSH2_SFTP_HANDLE *h = NULL;
	unsigned char md[32];
	struct progress pr = { 0 };
	struct hash_job hj = { .path = local };
	pthread_t hasher;
	struct stat st;
	uint64_t resume = 0, done;
	int64_t deadline;
	size_t off = 0, len = 0;
	int fd = -1, eof = 0, ret = -1, rc, threaded = 0;

	if (!o)
		o = &defaults;
	deadline = o->timeout_ms > 0 ? now_ms() + o->timeout_ms : 0;
	fd = open(local, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		error_errno("cannot read '%s'", local);
		goto out;
	}
	if (sftp_ready(c, deadline) < 0)
		goto out;

	if (!o->no_resume) {
		uint64_t part = 0;

		rc = sftp_size(c, tmp, &part, deadline);
		if (rc < 0)
			goto out;
		if (rc == 0 && part > 0 && part <= (uint64_t)st.st_size &&
		    ssh_remote_sha256(c, tmp, remote_hex) == 0) {
			struct sha256_ctx pctx;
			int bad;

			sha256_init(&pctx);
			bad = sha256_prefix(fd, part, &pctx, data, XFER_BUF) < 0;
			sha256_final(&pctx, md);
			if (bad) {
				error_errno("cannot read '%s'", local);
				goto out;
			}
			sha256_to_hex(md, local_hex);
			if (!strcmp(local_hex, remote_hex)) {
				resume = part;
				info("resuming the upload of '%s' to machine '%s' at %llu bytes", local,
				     c->name, (unsigned long long)part);
			}
			/* the upload goes on from the resume point, or starts over */
			if (lseek(fd, (off_t)resume, SEEK_SET) < 0) {
				error_errno("cannot seek in '%s'", local);
				goto out;
			}
		}
	}
	if (pthread_create(&hasher, NULL, hash_thread, &hj) == 0)
		threaded = 1;
	h = sftp_open(c, tmp, LIBSSH2_FXF_WRITE | LIBSSH2_FXF_CREAT | (resume ? 0 : LIBSSH2_FXF_TRUNC),
		      o->mode ? o->mode : 0644, deadline);
	if (!h)
		goto out;
	if (resume)
		libssh2_sftp_seek64(h, resume);

	pr.o = o;
	pr.what = "uploading to";
	pr.machine = c->name;
	pr.total = (uint64_t)st.st_size;
	pr.start = pr.last = now_ms();
	done = resume;
	for (;;) {
		ssize_t n;

		if (!eof && len - off < XFER_BUF / 2) {
			ssize_t r;

			memmove(data, data + off, len - off);
			len -= off;
			off = 0;
			r = read_full(fd, data + len, XFER_BUF - len);
			if (r < 0) {
				error_errno("cannot read '%s'", local);
				goto out;
			}
			len += (size_t)r;
			if (len < XFER_BUF)
				eof = 1;
		}
		if (off == len)
			break;
		n = libssh2_sftp_write(h, data + off, len - off);
		if (n > 0) {
			off += (size_t)n;
			done += (uint64_t)n;
			progress_tick(&pr, done, 0);
		} else if (n == LIBSSH2_ERROR_EAGAIN) {
			if (wait_socket(c, deadline) < 0) {
				sftp_fail(c, n, "upload to", remote);
				goto out;
			}
		} else {
			sftp_fail(c, n, "write", tmp);
			goto out;
		}
	}
	/* flushed to disk by verify_and_rename(), beside the far-side hashing */
	sftp_close_handle(c, h, deadline);
	h = NULL;
	progress_tick(&pr, done, 1);
	debug("upload of '%s' to '%s': data sent in %lld ms", local, c->name, (long long)(now_ms() - pr.start));

	if (threaded) {
		pthread_join(hasher, NULL);
		threaded = 0;
	} else {
		hash_thread(&hj);
	}
	if (hj.rc < 0)
		goto out;
	memcpy(local_hex, hj.hex, sizeof(local_hex));
	debug("upload of '%s' to '%s': local sha256 ready at %lld ms", local, c->name,
	      (long long)(now_ms() - pr.start));
	if (verify_and_rename(c, local, tmp, remote, local_hex) < 0)
		goto out;
	debug("upload of '%s' to '%s': flushed, checked and renamed at %lld ms", local, c->name,
	      (long long)(now_ms() - pr.start));
	ret = 0;
out:
	if (threaded)
		pthread_join(hasher, NULL);
	if (h)
		sftp_close_handle(c, h, deadline);
	if (fd >= 0)
		close(fd);
	free(data);
	free(tmp);
	return ret;
}

int ssh_download(struct ssh_conn *c, const char *remote, const char *local,
		 const struct ssh_xfer_opts *o)
{
	static const struct ssh_xfer_opts defaults;
	char *tmp = xasprintf("%s.klab-part", local);
	char *data = xmalloc(XFER_BUF);
	char local_hex[65], remote_hex[65];
	LIBSSH2_SFTP_HANDLE *h = NULL;
	struct sha256_ctx ctx;
	unsigned char md[32];
	struct progress pr = { 0 };
	uint64_t done = 0;
	int64_t deadline;
	int fd = -1, ret = -1, hashing = 0;

	if (!o)
		o = &defaults;
	deadline = o->timeout_ms > 0 ? now_ms() + o->timeout_ms : 0;
	if (sftp_ready(c, deadline) < 0)
		goto out;
	if (sftp_size(c, remote, &pr.total, deadline) != 0) {
		error("cannot download '%s' from machine '%s': no such file", remote, c->name);
		goto out;
	}
	h = sftp_open(c, remote, LIBSSH2_FXF_READ, 0, deadline);
	if (!h)
		goto out;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		error_errno("cannot create '%s'", tmp);
		goto out;
	}
	sha256_init(&ctx);
	hashing = 1;
	pr.o = o;
	pr.what = "downloading from";
	pr.machine = c->name;
	pr.start = pr.last = now_ms();
	for (;;) {
		ssize_t n = libssh2_sftp_read(h, data, XFER_BUF);

		if (n == 0)
			break;
		if (n == LIBSSH2_ERROR_EAGAIN) {
			if (wait_socket(c, deadline) < 0) {
				sftp_fail(c, n, "download", remote);
				goto out;
			}
			continue;
		}
		if (n < 0) {
			sftp_fail(c, n, "read", remote);
			goto out;
		}
		if (write_all(fd, data, (size_t)n) < 0) {
			error_errno("cannot write '%s'", tmp);
			goto out;
		}
		sha256_update(&ctx, data, (size_t)n);
		done += (uint64_t)n;
		progress_tick(&pr, done, 0);
	}
	sftp_close_handle(c, h, deadline);
	h = NULL;
	if (fsync(fd) < 0 || close(fd) < 0) {
		fd = -1;
		error_errno("cannot write '%s'", tmp);
		goto out;
	}
	fd = -1;
	progress_tick(&pr, done, 1);
	sha256_final(&ctx, md);
	hashing = 0;
	sha256_to_hex(md, local_hex);
	if (ssh_remote_sha256(c, remote, remote_hex) != 0)
		goto out;
	if (strcmp(local_hex, remote_hex)) {
		error("download of '%s' from machine '%s' arrived damaged: sha256 %s, expected %s",
		      remote, c->name, local_hex, remote_hex);
		goto out;
	}
	if (rename(tmp, local) < 0) {
		error_errno("cannot rename '%s' to '%s'", tmp, local);
		goto out;
	}
	ret = 0;
out:
	if (hashing)
		sha256_final(&ctx, md);	/* frees the digest's state */
	if (h)
		sftp_close_handle(c, h, deadline);
	if (fd >= 0)
		close(fd);
	if (ret)
		unlink(tmp);
	free(data);
	free(tmp);
	return ret;
}

/* ---- the agent ---------------------------------------------------------------- */

int deploy_agent(struct ssh_conn *c, const char *local_agent, const char *remote_path,
		 int *uploaded)
{
	struct ssh_xfer_opts o = { .mode = 0755, .timeout_ms = 300000 };
	char local_hex[65], remote_hex[65];
	char *dir = xstrdup(remote_path), *slash;
	int rc, ret = -1;

	if (uploaded)
		*uploaded = 0;
	if (sha256_file_hex(local_agent, local_hex) < 0)
		goto out;
	rc = ssh_remote_sha256(c, remote_path, remote_hex);
	if (rc < 0)
		goto out;
	if (rc == 0 && !strcmp(local_hex, remote_hex)) {
		debug("klab-agent on machine '%s' is current (%.12s)", c->name, local_hex);
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
	info("uploaded klab-agent to machine '%s' (%.12s)", c->name, local_hex);
	if (uploaded)
		*uploaded = 1;
	ret = 0;
out:
	free(dir);
	return ret;
}

/* ---- known_hosts --------------------------------------------------------------- */

int ssh_hostkey_fetch(const char *host, int port, long timeout_ms,
		      struct buf *line, struct buf *fp)
{
	struct ssh_target t = { .name = host, .host = host, .port = port };
	struct ssh_conn *c = conn_new(&t);
	const char *key;
	size_t len;
	int type, idx, ret = -1;

	if (session_open(c, timeout_ms, 0) < 0)
		goto out;
	key = libssh2_session_hostkey(c->s, &len, &type);
	idx = key ? keytype_index_by_hostkey(type) : -1;
	if (idx < 0) {
		error("host %s:%d sent no host key of a known type", host, c->port);
		goto out;
	}
	if (line) {
		host_pattern(line, host, c->port);
		buf_addf(line, " %s ", keytypes[idx].name);
		base64_encode(line, (const unsigned char *)key, len, 1);
	}
	if (fp)
		ssh_fingerprint((const unsigned char *)key, len, fp);
	ret = 0;
out:
	ssh_close(c);
	return ret;
}

int ssh_knownhosts_lookup(const char *known_hosts, const char *host, int port,
			  const char *line, struct buf *other_fp)
{
	struct strvec w = STRVEC_INIT;
	struct buf blob = BUF_INIT;
	LIBSSH2_SESSION *s = NULL;
	LIBSSH2_KNOWNHOSTS *kh = NULL;
	struct libssh2_knownhost *found = NULL;
	int idx, rc, ret = -1;

	ssh_global_init();
	strvec_split(&w, line, " \t");
	if (w.n < 3 || (idx = keytype_index_by_name(w.v[1])) < 0 ||
	    base64_decode(&blob, w.v[2], strlen(w.v[2]), 0) < 0) {
		error("malformed known_hosts line '%s'", line);
		goto out;
	}
	s = libssh2_session_init();
	kh = s ? libssh2_knownhost_init(s) : NULL;
	if (!kh) {
		error("cannot initialise libssh2 known hosts");
		goto out;
	}
	if (knownhosts_load(kh, known_hosts, 1) < 0)
		goto out;
	rc = libssh2_knownhost_checkp(kh, host, port > 0 ? port : 22, blob.buf, blob.len,
				      LIBSSH2_KNOWNHOST_TYPE_PLAIN | LIBSSH2_KNOWNHOST_KEYENC_RAW |
				      keytypes[idx].knownhost_type, &found);
	if (rc == LIBSSH2_KNOWNHOST_CHECK_MATCH) {
		ret = 1;
	} else if (rc == LIBSSH2_KNOWNHOST_CHECK_MISMATCH) {
		struct buf dec = BUF_INIT;

		if (other_fp && found && found->key && !base64_decode(&dec, found->key, strlen(found->key), 0))
			ssh_fingerprint((const unsigned char *)dec.buf, dec.len, other_fp);
		buf_release(&dec);
		ret = 2;
	} else if (rc == LIBSSH2_KNOWNHOST_CHECK_NOTFOUND) {
		ret = 0;
	} else {
		error("cannot look up '%s' in '%s'", host, known_hosts);
	}
out:
	if (kh)
		libssh2_knownhost_free(kh);
	if (s)
		libssh2_session_free(s);
	buf_release(&blob);
	strvec_clear(&w);
	return ret;
}

int ssh_knownhosts_append(const char *known_hosts, const char *line)
{
	struct buf b = BUF_INIT;
	char *dir = xstrdup(known_hosts), *slash = strrchr(dir, '/');
	int fd, ret = -1;
	struct stat st;

	if (slash && slash != dir) {
		*slash = 0;
		if (mkdir_p(dir) < 0)
			goto out;
	}
	fd = open(known_hosts, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		error_errno("cannot open '%s'", known_hosts);
		goto out;
	}
	if (fstat(fd, &st) == 0 && st.st_size > 0) {
		char last = '\n';
		int rfd = open(known_hosts, O_RDONLY | O_CLOEXEC);

		if (rfd >= 0) {
			if (pread(rfd, &last, 1, st.st_size - 1) == 1 && last != '\n')
				buf_addch(&b, '\n');
			close(rfd);
		}
	}
	buf_addstr(&b, line);
	buf_addch(&b, '\n');
	if (write_all(fd, b.buf, b.len) < 0 || fsync(fd) < 0) {
		error_errno("cannot write '%s'", known_hosts);
		close(fd);
		goto out;
	}
	if (close(fd) < 0) {
		error_errno("cannot write '%s'", known_hosts);
		goto out;
	}
	ret = 0;
out:
	buf_release(&b);
	free(dir);
	return ret;
}
