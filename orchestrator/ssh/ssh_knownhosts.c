/* ssh_knownhosts.c: host keys: checking a machine's against known_hosts, fetching one, recording it, fingerprints. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libssh2.h>

#include "base64.h"
#include "buf.h"
#include "log.h"
#include "ssh/ssh.h"
#include "ssh/ssh_int.h"
#include "strvec.h"
#include "util.h"

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

int check_hostkey(struct ssh_conn *c)
{
	LIBSSH2_KNOWNHOSTS *kh = NULL;
	struct libssh2_knownhost *found = NULL;
	struct buf fp = BUF_INIT, other = BUF_INIT, decoded = BUF_INIT;
	const char *key;
	size_t len;
	int type, idx, rc, ret = -1;

	key = libssh2_session_hostkey(c->s, &len, &type);
	if (!key)
		return ssh_fail(c, "machine '%s' (%s:%d) sent no host key", c->name, c->host, c->port);
	ssh_fingerprint((const unsigned char *)key, len, &fp);
	idx = keytype_index_by_hostkey(type);
	if (idx < 0) {
		ssh_fail(c, "machine '%s' (%s:%d) has a host key of an unknown type (%s)",
			    c->name, c->host, c->port, fp.buf);
		goto out;
	}
	if (!c->known_hosts) {
		ssh_fail(c, "no known_hosts file configured ([lab] known_hosts): cannot check the host key of "
			    "machine '%s'", c->name);
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
		ssh_fail(c, "host key of machine '%s' (%s:%d) does not match known_hosts '%s': "
			    "the machine offers %s %s, the file has %s; refusing to connect "
			    "(if the machine was reinstalled, remove its line and run 'klab machine trust %s')",
			    c->name, c->host, c->port, c->known_hosts, keytypes[idx].name, fp.buf,
			    other.buf, c->name);
		break;
	case LIBSSH2_KNOWNHOST_CHECK_NOTFOUND:
		ssh_fail(c, "machine '%s' (%s:%d) is not in known_hosts '%s' (its %s key is %s); "
			    "run 'klab machine trust %s' to record it",
			    c->name, c->host, c->port, c->known_hosts, keytypes[idx].name, fp.buf, c->name);
		break;
	default:
		ssh_fail(c, "cannot check the host key of machine '%s' against '%s': %s",
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

int ssh_knownhosts_line(struct buf *line, const char *host, int port, int hostkey_type,
			const char *key, size_t len)
{
	int idx = key ? keytype_index_by_hostkey(hostkey_type) : -1;

	if (idx < 0)
		return error("host %s:%d sent no host key of a known type", host, port);
	host_pattern(line, host, port);
	buf_addf(line, " %s ", keytypes[idx].name);
	base64_encode(line, (const unsigned char *)key, len, 1);
	return 0;
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
