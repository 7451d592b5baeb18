/* orch-lab-qemu.c: the qemu lab's lab.state: a lab of one pair (as written before --pairs), of several pairs, and broken files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab/lab_qemu.h"
#include "log.h"
#include "tap.h"
#include "util.h"

/* Write TEXT as DIR/lab.state and load it: what qlab_state_load() returns. */
static int load(const char *dir, const char *text, struct qlab_state *st)
{
	char *path = xasprintf("%s/lab.state", dir);
	int r;

	if (mkdir_p(dir) < 0 || write_file_atomic(path, text, strlen(text), 0644) < 0)
		r = -3;
	else
		r = qlab_state_load(dir, st);
	free(path);
	return r;
}

int main(void)
{
	char *dir = xasprintf("%s/lab", tap_scratch_dir());
	struct qlab_state st;

	log_init("orch-lab-qemu", 0, LOG_CRIT);

	/* a lab.state of before --pairs: guests dut and peer, no pairs key */
	is_int(load(dir, "kernel=/k\nindex=3\nsmp=1\nnic=veth\nclock=icount\npeer=netns\n"
		    "dut.pid=100\ndut.ssh_port=2001\ndut.addr=198.18.103.1\n"
		    "peer.pid=100\npeer.ssh_port=2002\npeer.addr=198.18.103.2\n", &st), 0, "one pair: loads");
	is_int(st.pairs, 1, "one pair");
	is_str(st.pool, "", "no pool");
	is_str(st.g[0].name, "dut", "guest 0 is dut");
	is_str(st.g[1].name, "peer", "guest 1 is peer");
	is_int(st.g[1].ssh_port, 2002, "peer's port");
	is_str(st.g[1].addr, "198.18.103.2", "peer's address");
	ok(st.peer_netns && st.icount, "netns peer, icount");
	qlab_state_free(&st);

	/* three pairs in a pool: dutP and peerP are guests 2P and 2P + 1 */
	is_int(load(dir, "kernel=/k\nindex=4\nclock=icount\npeer=netns\npairs=3\npool=qp\n"
		    "dut0.pid=10\ndut0.ssh_port=3000\ndut0.addr=198.19.132.1\n"
		    "peer0.pid=10\npeer0.ssh_port=3001\npeer0.addr=198.19.132.2\n"
		    "dut1.pid=11\ndut1.ssh_port=3002\ndut1.addr=198.19.132.5\n"
		    "peer1.pid=11\npeer1.ssh_port=3003\npeer1.addr=198.19.132.6\n"
		    "dut2.pid=12\ndut2.ssh_port=3004\ndut2.addr=198.19.132.9\n"
		    "peer2.pid=12\npeer2.ssh_port=3005\npeer2.addr=198.19.132.10\n", &st), 0, "three pairs: load");
	is_int(st.pairs, 3, "three pairs");
	is_str(st.pool, "qp", "pool qp");
	is_str(st.g[4].name, "dut2", "guest 4 is dut2");
	is_str(st.g[5].name, "peer2", "guest 5 is peer2");
	is_int(st.g[3].ssh_port, 3003, "peer1's port");
	is_int(st.g[4].pid, 12, "dut2's pid");
	is_str(st.g[5].addr, "198.19.132.10", "peer2's address");
	qlab_state_free(&st);

	/* guests beyond the pairs the file says, or beyond any lab, and a bad pair count */
	is_int(load(dir, "kernel=/k\npairs=2\ndut2.pid=5\n", &st), -1, "dut2 in a lab of 2 pairs: refused");
	is_int(load(dir, "kernel=/k\npairs=64\ndut64.pid=5\n", &st), -1, "dut64: beyond any lab, refused");
	is_int(load(dir, "kernel=/k\npairs=0\n", &st), -1, "pairs=0: refused");
	is_int(load(dir, "kernel=/k\npairs=65\n", &st), -1, "pairs=65: refused");
	/* keys that only look like a guest's are the lab's (unknown: ignored) */
	is_int(load(dir, "kernel=/k\npeer=guest\ndutx.pid=5\n", &st), 0, "dutx.pid: not a guest, ignored");
	is_int(st.pairs, 1, "still one pair");
	qlab_state_free(&st);

	free(dir);
	return done_testing();
}
