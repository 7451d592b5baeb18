/* netprobe.c: a kernel's answer on a closed TCP port (netprobe.h). */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "netprobe.h"
#include "util.h"

/* Wait up to the deadline for EVENTS on FD: the revents, 0 when the time came. */
static int wait_fd(int fd, short events, int64_t deadline)
{
	for (;;) {
		struct pollfd p = { fd, events, 0 };
		int64_t left = deadline - now_ms();
		int r;

		if (left <= 0)
			return 0;
		r = poll(&p, 1, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r > 0)
			return p.revents;
	}
}

int tcp_port_answers(const char *host, int port, long ms)
{
	struct addrinfo hints, *ai = NULL;
	char serv[16];
	int64_t deadline = now_ms() + (ms > 0 ? ms : 0);
	int fd, rc, ret = 0, err = 0;
	socklen_t len = sizeof(err);

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	snprintf(serv, sizeof(serv), "%d", port);
	if ((rc = getaddrinfo(host, serv, &hints, &ai)) != 0)
		return error("cannot resolve '%s' (port %d): %s", host, port, gai_strerror(rc));
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		freeaddrinfo(ai);
		return error_errno("cannot make a socket to probe %s:%d", host, port);
	}
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
		if (errno == ECONNREFUSED || errno == ECONNRESET) {
			ret = 1;
			goto out;
		}
		if (errno != EINPROGRESS) {
			ret = 0;	/* no route, unreachable: nothing answers */
			goto out;
		}
		rc = wait_fd(fd, POLLOUT, deadline);
		if (rc <= 0) {
			ret = rc < 0 ? error_errno("cannot wait for %s:%d", host, port) : 0;
			goto out;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0 || err) {
			ret = err == ECONNREFUSED || err == ECONNRESET;
			goto out;
		}
	}
	/* connected (to a forwarder, or to a listener): its close, reset or data is the answer */
	rc = wait_fd(fd, POLLIN, deadline);
	if (rc < 0)
		ret = error_errno("cannot wait for %s:%d", host, port);
	else
		ret = rc != 0;
out:
	close(fd);
	freeaddrinfo(ai);
	return ret;
}
