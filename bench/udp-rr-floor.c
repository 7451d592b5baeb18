/*
 * udp-rr-floor.c: the floor for one-flow UDP request/response, the leanest
 * pair there is: a blocking client (send, recv: two system calls per
 * transaction) and a blocking server (recvfrom, sendto). No epoll, no
 * timers, no histogram, no per-request bookkeeping. bench/bench-workloads.sh
 * runs it beside klab-udp-rr's one-flow cell; klab is held to at least the
 * rate of this pair.
 *
 *   udp-rr-floor server ADDR PORT SECONDS
 *   udp-rr-floor client ADDR PORT SECONDS [SIZE]
 *
 * The client prints "transactions N seconds S tps R" for the whole run; the
 * server prints "echoed N". Both stop by themselves after SECONDS (an alarm,
 * and a 100 ms receive timeout so that a lost datagram only costs that). IPv4
 * only; the bench gives it the namespaces' 198.18.x addresses or 127.0.0.1.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_alarm(int sig)
{
	(void)sig;
	stop = 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int usage(void)
{
	fprintf(stderr, "usage: udp-rr-floor server ADDR PORT SECONDS\n"
			"       udp-rr-floor client ADDR PORT SECONDS [SIZE]\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct timeval tv = { 0, 100000 };
	struct sigaction sa;
	char buf[2048];
	long secs, size = 100, n = 0;
	int fd, server;

	if (argc < 5 || argc > 6)
		return usage();
	server = !strcmp(argv[1], "server");
	if (!server && strcmp(argv[1], "client"))
		return usage();
	if (inet_pton(AF_INET, argv[2], &a.sin_addr) != 1) {
		fprintf(stderr, "udp-rr-floor: '%s' is not an IPv4 address\n", argv[2]);
		return 2;
	}
	a.sin_port = htons((unsigned short)atoi(argv[3]));
	secs = atol(argv[4]);
	if (argc == 6)
		size = atol(argv[5]);
	if (secs < 1 || secs > 3600 || size < 1 || size > (long)sizeof(buf) || !a.sin_port) {
		fprintf(stderr, "udp-rr-floor: SECONDS must be 1..3600, SIZE 1..%zu, PORT 1..65535\n",
			sizeof(buf));
		return 2;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;	/* no SA_RESTART: a blocked call returns EINTR */
	sigaction(SIGALRM, &sa, NULL);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv))) {
		perror("udp-rr-floor: socket");
		return 1;
	}
	memset(buf, 0, sizeof(buf));
	if (server) {
		struct sockaddr_in from;

		if (bind(fd, (struct sockaddr *)&a, sizeof(a))) {
			perror("udp-rr-floor: bind");
			return 1;
		}
		alarm((unsigned)secs);
		while (!stop) {
			socklen_t fl = sizeof(from);
			ssize_t r = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);

			if (r > 0 && sendto(fd, buf, (size_t)r, 0, (struct sockaddr *)&from, fl) == r)
				n++;
		}
		printf("echoed %ld\n", n);
	} else {
		double t0, t1;

		if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
			perror("udp-rr-floor: connect");
			return 1;
		}
		alarm((unsigned)secs);
		t0 = now_s();
		while (!stop) {
			/* a lost request or response: the receive timeout sends the next */
			if (send(fd, buf, (size_t)size, 0) == size && recv(fd, buf, sizeof(buf), 0) > 0)
				n++;
		}
		t1 = now_s();
		printf("transactions %ld seconds %.3f tps %.0f\n", n, t1 - t0, (double)n / (t1 - t0));
	}
	close(fd);
	return 0;
}
