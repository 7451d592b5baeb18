/* workloads.h: entry points of the traffic generators, shared by the standalone programs and klab-agent. */
#ifndef KLAB_WORKLOADS_H
#define KLAB_WORKLOADS_H

/*
 * UDP request/response generator. argv[0] is "udp-rr" (or the program
 * name), argv[1] the role: "server" or "client"; the rest are options as
 * docs/protocol.md section 1 fixes them. Prints one JSON document on
 * stdout at exit. Returns the exit status: 0 ok, 1 failure (error on
 * stderr), 2 usage error naming the argument.
 */
int udp_rr_main(int argc, char **argv);

/*
 * UDP transmit generator. argv[0] is "udp-tx", argv[1] the role: "send"
 * or "sink". Same output and exit status rules as udp_rr_main().
 */
int udp_tx_main(int argc, char **argv);

#endif
