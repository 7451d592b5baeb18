/* netprobe.h: does a machine's kernel answer on a closed TCP port (is it up)? */
#ifndef KLAB_NETPROBE_H
#define KLAB_NETPROBE_H

/*
 * Connect to HOST:PORT, a port where nothing listens on the machine, and
 * wait up to MS for the far side to say so:
 *   1   it answered: the connection was refused, reset or closed (a kernel
 *       is up; through a forwarder such as qemu's user networking the
 *       connect succeeds and the guest's reset arrives as the close), or
 *       data came (something listens there after all: it is up too);
 *   0   nothing came within MS (no kernel answers: down, or booting);
 *  -1   a local error (HOST does not resolve, no socket), logged.
 * The socket is closed before it returns, whatever the answer.
 */
int tcp_port_answers(const char *host, int port, long ms);

/* How long a look waits: a kernel that is up resets a connection to a closed port well within this. */
#define NETPROBE_MS 2000

#endif
