/* lib-netprobe.c: a kernel's answer on a closed port: refused, closed by a forwarder, silence, data, bad host. */
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "netprobe.h"
#include "tap.h"
#include "util.h"

/* A listening socket on 127.0.0.1 (its port into *PORT), or -1. */
static int listener(int *port)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 4) ||
	    getsockname(fd, (struct sockaddr *)&sa, &len))
		return -1;
	*port = ntohs(sa.sin_port);
	return fd;
}

/* A child that accepts one connection on FD and then closes it, or writes WHAT first. */
static pid_t answer_once(int fd, const char *what)
{
	pid_t pid = fork();

	if (pid == 0) {
		int c = accept(fd, NULL, NULL);

		if (c >= 0 && what)
			(void)!write(c, what, strlen(what));
		_exit(c < 0);
	}
	return pid;
}

int main(void)
{
	int fd, port, closed_port;
	int64_t t0;

	log_set_level(LOG_CRIT);

	/* nothing listens: the kernel refuses at once */
	fd = listener(&closed_port);
	ok(fd >= 0, "a port on 127.0.0.1");
	close(fd);
	t0 = now_ms();
	is_int(tcp_port_answers("127.0.0.1", closed_port, 3000), 1, "a closed port: refused, the kernel is up");
	ok(now_ms() - t0 < 1000, "at once, not after the time limit (%lld ms)", (long long)(now_ms() - t0));

	/* a forwarder (qemu's user networking): connected, then closed when the guest resets it */
	fd = listener(&port);
	answer_once(fd, NULL);
	is_int(tcp_port_answers("127.0.0.1", port, 3000), 1, "accepted and closed: answered");
	close(fd);

	/* a forwarder whose guest is down: connected, and then nothing */
	fd = listener(&port);
	t0 = now_ms();
	is_int(tcp_port_answers("127.0.0.1", port, 300), 0, "accepted and silent: no answer");
	ok(now_ms() - t0 >= 290, "it waited its time limit (%lld ms)", (long long)(now_ms() - t0));
	close(fd);

	/* something listens after all and speaks: the machine is up */
	fd = listener(&port);
	answer_once(fd, "SSH-2.0-x\r\n");
	is_int(tcp_port_answers("127.0.0.1", port, 3000), 1, "data: answered");
	close(fd);

	is_int(tcp_port_answers("no-such-host.invalid", 22, 300), -1, "a name that does not resolve: an error");
	return done_testing();
}
