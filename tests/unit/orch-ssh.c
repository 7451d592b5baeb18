/* orch-ssh.c: unit tests of ssh.c/deploy.c helpers, and (with arguments) a driver the t03NN shell tests run against real sshd. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "job/agent_client.h"
#include "buf.h"
#include "conf/conf.h"
#include "store/db.h"
#include "lab/deploy.h"
#include "log.h"
#include "ssh/ssh.h"
#include "tap.h"
#include "util.h"

/* ---- unit tests (no arguments: run by tests/run.sh) ------------------------------- */

static void put32(struct buf *b, uint32_t v)
{
	buf_add(b, &v, 4);
}

static void test_build_id(void)
{
	struct buf notes = BUF_INIT, hex = BUF_INIT;
	static const unsigned char id[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
					      11, 12, 13, 14, 15, 16 };

	/* a Xen note first (name "Xen", 3 bytes padded to 4), then the GNU build id */
	put32(&notes, 4); put32(&notes, 8); put32(&notes, 1);
	buf_add(&notes, "Xen\0", 4); buf_add(&notes, "12345678", 8);
	put32(&notes, 4); put32(&notes, 20); put32(&notes, 3);
	buf_add(&notes, "GNU\0", 4); buf_add(&notes, id, 20);
	is_int(deploy_parse_build_id((unsigned char *)notes.buf, notes.len, &hex), 0, "build id found after another note");
	is_str(hex.buf, "deadbeef0102030405060708090a0b0c0d0e0f10", "build id hex");
	buf_reset(&hex);
	is_int(deploy_parse_build_id((unsigned char *)notes.buf, 24, &hex), 1, "no build id in the first note alone");
	is_int(deploy_parse_build_id((unsigned char *)notes.buf, notes.len - 3, &hex), -1, "truncated note is malformed");
	buf_reset(&notes);
	put32(&notes, 4); put32(&notes, 0x7fffffff); put32(&notes, 3);
	buf_add(&notes, "GNU\0", 4);
	is_int(deploy_parse_build_id((unsigned char *)notes.buf, notes.len, &hex), -1, "huge descsz is malformed");
	{
		struct buf sys = BUF_INIT;
		int rc;

		if (file_exists("/sys/kernel/notes") && buf_read_file(&sys, "/sys/kernel/notes") == 0) {
			buf_reset(&hex);
			rc = deploy_parse_build_id((unsigned char *)sys.buf, sys.len, &hex);
			ok(rc == 0 || rc == 1, "this host's /sys/kernel/notes parses (rc %d, id %s)", rc, hex.buf);
		} else {
			skip("no /sys/kernel/notes", "host notes");
		}
		buf_release(&sys);
	}
	buf_release(&notes);
	buf_release(&hex);
}

static void pub_line(const char *file, const char *host, struct buf *line)
{
	struct buf b = BUF_INIT;
	char *path = xasprintf("%s/ssh/%s", tap_data_dir(), file);
	char *sp;

	buf_read_file(&b, path);
	sp = strchr(b.buf, ' ');
	sp = sp ? strchr(sp + 1, ' ') : NULL;	/* drop the comment */
	if (sp)
		buf_setlen(&b, (size_t)(sp - b.buf));
	buf_rtrim(&b);
	buf_reset(line);
	buf_addf(line, "%s %s", host, b.buf);
	buf_release(&b);
	free(path);
}

static void test_knownhosts(void)
{
	char *kh = xasprintf("%s/ssh/known_hosts", tap_data_dir());
	char *fresh = xasprintf("%s/kh-new", tap_scratch_dir());
	struct buf a = BUF_INIT, b = BUF_INIT, fp = BUF_INIT;

	pub_line("hostkey_a.pub", "x", &a);
	pub_line("hostkey_b.pub", "x", &b);
	is_int(ssh_knownhosts_lookup(kh, "198.18.1.1", 22, a.buf, NULL), 1, "plain entry matches");
	is_int(ssh_knownhosts_lookup(kh, "198.18.1.2", 2222, a.buf, NULL), 1, "[host]:port entry matches");
	is_int(ssh_knownhosts_lookup(kh, "198.18.1.4", 22, a.buf, NULL), 1, "hashed entry matches");
	is_int(ssh_knownhosts_lookup(kh, "198.18.1.5", 2200, b.buf, NULL), 1, "hashed [host]:port entry matches");
	is_int(ssh_knownhosts_lookup(kh, "198.18.1.6", 22, a.buf, NULL), 0, "unknown host not found");
	is_int(ssh_knownhosts_lookup(kh, "198.18.1.1", 22, b.buf, &fp), 2, "other key is a mismatch");
	is_str(fp.buf, "SHA256:rxGC/s/r/pqnwbzvQw0Zafo0Vv2riterxyzLbeM4YYM", "mismatch names the stored key's fingerprint");
	buf_reset(&fp);
	is_int(ssh_knownhosts_lookup(kh, "198.18.1.4", 22, b.buf, &fp), 2, "other key vs hashed entry is a mismatch");
	is_str(fp.buf, "SHA256:rxGC/s/r/pqnwbzvQw0Zafo0Vv2riterxyzLbeM4YYM", "... with the hashed entry's fingerprint");
	is_int(ssh_knownhosts_lookup(fresh, "198.18.1.1", 22, a.buf, NULL), 0, "missing file: not found");
	is_int(ssh_knownhosts_append(fresh, "198.18.1.9 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHIFPdTs77X7GDXk5ltB/ehP7JyQNO+P9i8dWNEYtwku"),
	       0, "append creates the file");
	is_int(ssh_knownhosts_lookup(fresh, "198.18.1.9", 22, a.buf, NULL), 1, "appended entry matches");
	ok(ssh_knownhosts_lookup(kh, "h", 22, "h not-a-key-type AAAA", NULL) < 0, "malformed line refused");
	free(kh);
	free(fresh);
	buf_release(&a);
	buf_release(&b);
	buf_release(&fp);
}

/* ---- driver (arguments: used by tests/t03NN-*.sh) -------------------------------- */

static int driver_usage(void)
{
	fprintf(stderr,
		"usage: orch-ssh -c CONF -m MACHINE COMMAND ...\n"
		"  connect\n"
		"  exec [--timeout MS] [--stdin FILE] [--out FILE] -- ARGV...\n"
		"  drop-retry [--wait MS] -- ARGV...    (run; if dropped, reconnect and run again)\n"
		"  upload LOCAL REMOTE | download REMOTE LOCAL\n"
		"  agent-deploy LOCAL REMOTE | agent-call AGENT [--stdin FILE] -- ARGS...\n"
		"  boot --release R [--build-id HEX] [--image F] [--db DB] [--boot-ms N] [--down-ms N]\n"
		"       [--attempt-ms N] [--power-ms N] [--remote-dir D] [--progress]\n");
	return 2;
}

static int read_opt_file(const char *path, struct buf *b)
{
	return path ? buf_read_file(b, path) : 0;
}

static int drive(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "timeout", required_argument, NULL, 't' }, { "stdin", required_argument, NULL, 'i' },
		{ "out", required_argument, NULL, 'o' }, { "wait", required_argument, NULL, 'w' },
		{ "release", required_argument, NULL, 'r' }, { "build-id", required_argument, NULL, 'b' },
		{ "image", required_argument, NULL, 'I' }, { "db", required_argument, NULL, 'd' },
		{ "boot-ms", required_argument, NULL, 1 }, { "down-ms", required_argument, NULL, 2 },
		{ "attempt-ms", required_argument, NULL, 3 }, { "power-ms", required_argument, NULL, 4 },
		{ "remote-dir", required_argument, NULL, 5 }, { "progress", no_argument, NULL, 6 },
		{ NULL, 0, NULL, 0 },
	};
	const char *conf_path = NULL, *machine = NULL, *cmd, *stdin_file = NULL, *out_file = NULL;
	const char *db_path = NULL;
	struct deploy_artifact art = { 0 };
	struct deploy_opts dopt = { 0 };
	struct klab_config cfg;
	const struct conf_machine *m;
	struct ssh_target t;
	struct ssh_conn *c = NULL;
	struct buf in = BUF_INIT;
	long timeout = 0, wait_ms = 30000;
	int ch, ret = 1;

	while ((ch = getopt(argc, argv, "+c:m:")) != -1) {
		if (ch == 'c')
			conf_path = optarg;
		else if (ch == 'm')
			machine = optarg;
		else
			return driver_usage();
	}
	if (!conf_path || !machine || optind >= argc)
		return driver_usage();
	cmd = argv[optind];
	argc -= optind;
	argv += optind;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		switch (ch) {
		case 't': timeout = atol(optarg); break;
		case 'i': stdin_file = optarg; break;
		case 'o': out_file = optarg; break;
		case 'w': wait_ms = atol(optarg); break;
		case 'r': art.release = optarg; break;
		case 'b': art.build_id = optarg; break;
		case 'I': art.image = optarg; break;
		case 'd': db_path = optarg; break;
		case 1: dopt.boot_ms = atol(optarg); break;
		case 2: dopt.down_ms = atol(optarg); break;
		case 3: dopt.attempt_ms = atol(optarg); break;
		case 4: dopt.power_cycle_ms = atol(optarg); break;
		case 5: dopt.remote_dir = optarg; break;
		case 6: dopt.progress = 1; break;
		default: return driver_usage();
		}
	}
	argc -= optind;
	argv += optind;

	if (conf_load(&cfg, conf_path) < 0)
		return 1;
	m = conf_machine(&cfg, machine);
	if (!m) {
		error("no machine '%s' in '%s'", machine, conf_path);
		goto out;
	}
	ssh_target_from_conf(&t, &cfg, m);
	if (read_opt_file(stdin_file, &in) < 0)
		goto out;
	if (ssh_connect(&c, &t, NULL) < 0)
		goto out;

	if (!strcmp(cmd, "connect")) {
		printf("connected to %s\n", machine);
		ret = 0;
	} else if (!strcmp(cmd, "exec") || !strcmp(cmd, "drop-retry")) {
		struct ssh_exec x = SSH_EXEC_INIT;
		int rc, attempt = 1;

		if (!argc)
			return driver_usage();
		x.argv = (const char *const *)argv;
		x.in = stdin_file ? in.buf : NULL;
		x.in_len = in.len;
		x.timeout_ms = timeout;
		rc = ssh_exec(c, &x);
		if (rc < 0 && x.dropped && !strcmp(cmd, "drop-retry")) {
			int64_t deadline = now_ms() + wait_ms;

			printf("dropped on attempt 1\n");
			fflush(stdout);
			while (now_ms() < deadline && ssh_reconnect(c) < 0)
				usleep(300000);
			ssh_exec_release(&x);
			x.out = (struct buf)BUF_INIT;
			x.err = (struct buf)BUF_INIT;
			attempt = 2;
			rc = ssh_exec(c, &x);
		}
		printf("rc=%d status=%d timed_out=%d dropped=%d signal=%s attempt=%d\n", rc, x.status,
		       x.timed_out, x.dropped, x.signal ? x.signal : "-", attempt);
		if (out_file && write_file_atomic(out_file, x.out.buf, x.out.len, 0644) < 0)
			rc = -1;
		if (x.err.len)
			fprintf(stderr, "%s", x.err.buf);
		ssh_exec_release(&x);
		ret = rc < 0;
	} else if (!strcmp(cmd, "upload") && argc == 2) {
		int64_t t0 = now_ms();

		ret = ssh_upload(c, argv[0], argv[1], NULL) < 0;
		if (!ret)
			printf("uploaded in %lld ms\n", (long long)(now_ms() - t0));
	} else if (!strcmp(cmd, "download") && argc == 2) {
		ret = ssh_download(c, argv[0], argv[1], NULL) < 0;
	} else if (!strcmp(cmd, "agent-deploy") && argc == 2) {
		int up = -1;

		ret = deploy_agent(c, argv[0], argv[1], &up) < 0;
		printf("uploaded=%d\n", up);
		if (ret)
			printf("why=%s\n", ssh_error(c));
	} else if (!strcmp(cmd, "agent-call") && argc >= 1) {
		struct buf out = BUF_INIT;
		int skip = argc > 1 && !strcmp(argv[1], "--");

		struct buf err = BUF_INIT;
		const char *const *args = (const char *const *)argv + 1 + skip;
		int rc = agent_exec(c, argv[0], NULL, args, stdin_file ? in.buf : NULL, &out, &err, timeout, 0);

		if (rc > 0)
			error("klab-agent %s failed on machine '%s' (exit status %d: %s)", args[0] ? args[0] : "",
			      machine, rc, last_line(err.buf));
		ret = rc != 0;
		fwrite(out.buf, 1, out.len, stdout);
		buf_release(&out);
		buf_release(&err);
	} else if (!strcmp(cmd, "boot")) {
		struct deploy_result r;
		struct db *db = NULL;

		if (db_path && db_open(db_path, &db) < 0)
			goto out;
		ret = deploy_boot(c, db, m, &art, &dopt, &r) < 0;
		printf("release=%s build_id=%s wrong_kernel=%d power_cycled=%d fenced=%d\n",
		       r.release ? r.release : "-", r.build_id ? r.build_id : "-", r.wrong_kernel,
		       r.power_cycled, r.fenced);
		if (ret)
			printf("why=%s\n", ssh_error(c));	/* what a job's step puts in its reason */
		deploy_result_release(&r);
		if (db)
			db_close(db);
	} else {
		ret = driver_usage();
	}
out:
	ssh_close(c);
	buf_release(&in);
	conf_free(&cfg);
	return ret;
}

int main(int argc, char **argv)
{
	log_init("orch-ssh", 0, getenv("KLAB_T_DEBUG") ? LOG_DEBUG : LOG_INFO);
	if (argc > 1)
		return drive(argc, argv);
	test_build_id();
	test_knownhosts();
	return done_testing();
}
