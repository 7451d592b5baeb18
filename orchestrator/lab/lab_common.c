/* lab_common.c: ssh keys and the config fragment of a local lab (netns or qemu). */
#include <stdlib.h>

#include "buf.h"
#include "lab/lab_common.h"
#include "run.h"
#include "util.h"

int lab_keygen(const char *file, const char *comment)
{
	const char *argv[] = { "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", file, NULL };

	if (file_exists(file))
		return 0;
	return run_argv(argv, 30000, NULL, 0);
}

int lab_write_fragment(const struct lab_fragment *f)
{
	struct buf b = BUF_INIT;
	char *path = xasprintf("%s/klab.conf", f->dir);
	int i, ret;

	buf_addf(&b, "# klab %s lab %d: written by `klab lab up --%s`; include it from your config.\n"
		 "# Removed by `klab lab down %s--dir %s`.\n", f->kind, f->index, f->kind, f->down_opt, f->dir);
	buf_addf(&b, "[lab]\n\tssh_key = %s/keys/id_ed25519\n\tknown_hosts = %s/known_hosts\n", f->dir, f->dir);
	for (i = 0; i < f->n; i++) {
		const struct lab_machine_conf *m = &f->m[i];
		int dut = i % 2 == 0;

		buf_addf(&b, "\n[machine \"%s\"]\n", m->name);
		buf_addf(&b, "\thost = %s\n\tport = %d\n\tuser = root\n\trole = %s\n", m->host, m->port,
			 dut ? "dut" : "peer");
		if (dut && i + 1 < f->n)
			buf_addf(&b, "\tpeer = %s\n", f->m[i + 1].name);
		if (dut && m->pool)
			buf_addf(&b, "\tpool = %s\n", m->pool);
		buf_addf(&b, "\tnic = %s\n\taddr = %s\n\tboot = %s\n", m->nic, m->addr, m->boot);
		if (m->profile)
			buf_addf(&b, "\tprofile = %s\n", m->profile);
		if (m->clock)
			buf_addf(&b, "\tclock = %s\n", m->clock);
		if (m->power_cycle)
			buf_addf(&b, "\tpower_cycle = %s\n", m->power_cycle);
		if (m->shared_root)
			buf_addf(&b, "\tshared_root = %s\n", m->shared_root);
		if (m->probe_port > 0)
			buf_addf(&b, "\tboot_probe_port = %d\n", m->probe_port);
	}
	ret = write_file_atomic(path, b.buf, b.len, 0644);
	buf_release(&b);
	free(path);
	return ret;
}
