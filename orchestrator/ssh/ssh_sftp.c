/* ssh_sftp.c: files to and from test machines over SFTP, checked by sha256 on both ends. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libssh2.h>
#include <libssh2_sftp.h>

#include "buf.h"
#include "log.h"
#include "ssh/ssh.h"
#include "ssh/ssh_int.h"
#include "util.h"

#define XFER_BUF (4u << 20)		/* SFTP: bytes handed to libssh2 at once (it pipelines) */

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
			return ssh_fail(c, "cannot start SFTP on machine '%s': %s", c->name, ssh_errmsg(c->s));
		}
		if (wait_socket(c, deadline) < 0)
			return ssh_fail(c, "starting SFTP on machine '%s' timed out", c->name);
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
		return ssh_fail(c, "%s on machine '%s' timed out", ctx, c->name);
	if (rc == LIBSSH2_ERROR_SFTP_PROTOCOL && c->sftp)
		return ssh_fail(c, "cannot %s on machine '%s': %s", ctx, c->name,
				   sftp_status(libssh2_sftp_last_error(c->sftp)));
	if (is_drop_error((int)rc))
		return dropped_error(c, (int)rc, ctx);
	return ssh_fail(c, "cannot %s on machine '%s': %s", ctx, c->name, ssh_errmsg(c->s));
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
			return ssh_fail(c, "stat of '%s' on machine '%s' timed out", path, c->name);
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
		ssh_fail(c, "cannot check the upload of '%s' to machine '%s'", local, c->name);
		goto out;
	}
	if (x.status == 3) {
		buf_rtrim(&x.out);
		ssh_fail(c, "upload of '%s' to '%s' on machine '%s' arrived damaged: sha256 %s, expected %s",
			    local, remote, c->name, x.out.buf, local_hex);
		goto out;
	}
	if (x.status == 7) {
		describe_exit(&x, &why);
		ssh_fail(c, "the upload '%s' on machine '%s' is in place, but its folder could not be flushed "
			    "(sync: %s)", remote, c->name, why.buf);
		goto out;
	}
	if (x.status == 6) {
		describe_exit(&x, &why);
		ssh_fail(c, "cannot flush the upload '%s' to disk on machine '%s' (sync: %s)", tmp, c->name, why.buf);
		goto out;
	}
	if (x.status != 0) {
		describe_exit(&x, &why);
		ssh_fail(c, "cannot check and rename the upload '%s' on machine '%s' (%s)", tmp, c->name, why.buf);
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
	/*
	 * The partial file is named for the machine: the machines of a netns
	 * lab share one file system, so jobs uploading the agent to several
	 * of them at once would write into one REMOTE.klab-part, each
	 * truncating or "resuming" the others' data.
	 */
	char *tmp = xasprintf("%s.klab-part-%s", remote, c->name);
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
		ssh_fail(c, "cannot read '%s': %s", local, strerror(errno));
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
				ssh_fail(c, "cannot read '%s': %s", local, strerror(errno));
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
				ssh_fail(c, "cannot seek in '%s': %s", local, strerror(errno));
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
				ssh_fail(c, "cannot read '%s': %s", local, strerror(errno));
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
		ssh_fail(c, "cannot download '%s' from machine '%s': no such file", remote, c->name);
		goto out;
	}
	h = sftp_open(c, remote, LIBSSH2_FXF_READ, 0, deadline);
	if (!h)
		goto out;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		ssh_fail(c, "cannot create '%s': %s", tmp, strerror(errno));
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
			ssh_fail(c, "cannot write '%s': %s", tmp, strerror(errno));
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
		ssh_fail(c, "cannot write '%s': %s", tmp, strerror(errno));
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
		ssh_fail(c, "download of '%s' from machine '%s' arrived damaged: sha256 %s, expected %s",
			    remote, c->name, local_hex, remote_hex);
		goto out;
	}
	if (rename(tmp, local) < 0) {
		ssh_fail(c, "cannot rename '%s' to '%s': %s", tmp, local, strerror(errno));
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
