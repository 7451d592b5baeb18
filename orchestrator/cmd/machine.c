/* cmd/machine.c: `klab machines` and `klab machine trust|show|drain|undrain|repair NAME`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "buf.h"
#include "cmd.h"
#include "db.h"
#include "deploy.h"
#include "jsonh.h"
#include "lease.h"
#include "log.h"
#include "ssh.h"
#include "util.h"

/* One machine as the config and the database see it. */
struct mrow {
	const struct conf_machine *m;
	char *state, *reason, *last_kernel, *last_build_id;
	double since, last_seen, lease_expires;
	int64_t lease_job;
};

static void mrow_release(struct mrow *r)
{
	free(r->state);
	free(r->reason);
	free(r->last_kernel);
	free(r->last_build_id);
	memset(r, 0, sizeof(*r));
}

static char *col_str(struct db_stmt *st, int i)
{
	const char *s = db_col_text(st, i);

	return s ? xstrdup((const char *)s) : NULL;
}

static int mrow_load(struct db *db, const struct conf_machine *m, struct mrow *r)
{
	struct db_stmt *st;
	int rc;

	memset(r, 0, sizeof(*r));
	r->m = m;
	st = db_prepare(db, "SELECT m.state, m.state_since, m.state_reason, m.last_kernel, m.last_build_id, "
			"m.last_seen, l.job_id, l.expires FROM machines m LEFT JOIN leases l ON l.machine = m.name "
			"WHERE m.name = ?", "s", m->name);
	if (!st)
		return -1;
	rc = db_step(st);
	if (rc == DB_ROW) {
		r->state = col_str(st, 0);
		r->since = db_col_double(st, 1);
		r->reason = col_str(st, 2);
		r->last_kernel = col_str(st, 3);
		r->last_build_id = col_str(st, 4);
		r->last_seen = db_col_double(st, 5);
		if (!db_col_null(st, 6)) {
			r->lease_job = db_col_int64(st, 6);
			r->lease_expires = db_col_double(st, 7);
		}
	}
	db_finalize(st);
	if (rc != DB_ROW && rc != DB_DONE)
		return error("cannot read machine '%s': %s", m->name, db_errmsg(db));
	if (!r->state)
		r->state = xstrdup("free");
	return 0;
}

static void fmt_time(double t, char *out, size_t n)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (t <= 0) {
		snprintf(out, n, "-");
		return;
	}
	gmtime_r(&tt, &tm);
	strftime(out, n, "%Y-%m-%d %H:%M:%SZ", &tm);
}

static struct json_object *mrow_json(const struct mrow *r)
{
	struct json_object *o = json_object_new_object();
	const struct conf_machine *m = r->m;

	json_object_object_add(o, "name", json_object_new_string(m->name));
	json_object_object_add(o, "host", json_object_new_string(m->host ? m->host : ""));
	json_object_object_add(o, "port", json_object_new_int(m->port ? m->port : 22));
	json_object_object_add(o, "role", json_object_new_string(m->role == ROLE_DUT ? "dut" : "peer"));
	json_object_object_add(o, "boot", json_object_new_string(boot_method_name(m->boot)));
	json_object_object_add(o, "state", json_object_new_string(r->state));
	json_object_object_add(o, "state_since", r->since > 0 ? json_object_new_double(r->since) : NULL);
	json_object_object_add(o, "state_reason", r->reason ? json_object_new_string(r->reason) : NULL);
	json_object_object_add(o, "lease_job", r->lease_job ? json_object_new_int64(r->lease_job) : NULL);
	json_object_object_add(o, "lease_expires", r->lease_job ? json_object_new_double(r->lease_expires) : NULL);
	json_object_object_add(o, "last_kernel", r->last_kernel ? json_object_new_string(r->last_kernel) : NULL);
	json_object_object_add(o, "last_build_id", r->last_build_id ? json_object_new_string(r->last_build_id) : NULL);
	json_object_object_add(o, "last_seen", r->last_seen > 0 ? json_object_new_double(r->last_seen) : NULL);
	return o;
}

static void print_json(struct json_object *o)
{
	struct buf b = BUF_INIT;

	json_to_buf(&b, o, 1);
	printf("%s\n", b.buf);
	buf_release(&b);
}

static int has_flag(int argc, char **argv, const char *flag)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], flag))
			return 1;
	return 0;
}

int oldcmd_machines(int argc, char **argv, struct klab_ctx *ctx)
{
	struct klab_config *cfg = ctx_config(ctx);
	struct json_object *arr;
	struct db *db;
	int json = ctx->json || has_flag(argc, argv, "--json");
	size_t i;

	for (int k = 1; k < argc; k++)
		if (strcmp(argv[k], "--json"))
			return error("unexpected argument '%s' to 'klab machines'", argv[k]), 2;
	if (!cfg || !(db = ctx_db(ctx)))
		return 1;
	if (lease_sync_machines(db, cfg) < 0)
		return 1;
	arr = json_object_new_array();
	if (!json)
		printf("%-12s %-22s %-5s %-6s %-8s %-20s %-8s %s\n", "NAME", "HOST", "ROLE", "BOOT", "STATE",
		       "SINCE", "LEASE", "LAST KERNEL");
	for (i = 0; i < cfg->n_machines; i++) {
		struct mrow r;
		char hp[300], since[32], lease[32];

		if (mrow_load(db, &cfg->machines[i], &r) < 0) {
			json_object_put(arr);
			return 1;
		}
		if (json) {
			json_object_array_add(arr, mrow_json(&r));
		} else {
			snprintf(hp, sizeof(hp), "%s:%d", r.m->host ? r.m->host : "?", r.m->port ? r.m->port : 22);
			fmt_time(r.since, since, sizeof(since));
			if (r.lease_job)
				snprintf(lease, sizeof(lease), "job %lld", (long long)r.lease_job);
			else
				snprintf(lease, sizeof(lease), "-");
			printf("%-12s %-22s %-5s %-6s %-8s %-20s %-8s %s\n", r.m->name, hp,
			       r.m->role == ROLE_DUT ? "dut" : "peer", boot_method_name(r.m->boot), r.state, since,
			       lease, r.last_kernel ? r.last_kernel : "-");
			if (r.reason && strcmp(r.state, "free"))
				printf("%-12s   reason: %s\n", "", r.reason);
		}
		mrow_release(&r);
	}
	if (json)
		print_json(arr);
	json_object_put(arr);
	return 0;
}

/* ---- klab machine SUB NAME ---------------------------------------------------------- */

static int machine_usage(int status)
{
	FILE *f = status ? stderr : stdout;

	fprintf(f, "usage: klab machine trust NAME [--fingerprint SHA256:...]\n"
		   "       klab machine show NAME [--json]\n"
		   "       klab machine drain NAME [--reason TEXT]\n"
		   "       klab machine undrain NAME\n"
		   "       klab machine repair NAME\n"
		   "\n"
		   "trust    record the machine's SSH host key in [lab] known_hosts (trust on first use,\n"
		   "         explicit; with --fingerprint only if the key has that fingerprint)\n"
		   "drain    take the machine out of service (no new leases); undrain puts it back\n"
		   "repair   check that SSH works again and mark a broken machine free\n");
	return status;
}

static int do_trust(const struct klab_config *cfg, const struct conf_machine *m, const char *want_fp)
{
	struct buf line = BUF_INIT, fp = BUF_INIT, other = BUF_INIT;
	int port = m->port ? m->port : 22, ret = 1, rc;

	if (!cfg->lab.known_hosts) {
		error("no [lab] known_hosts file in the config: nowhere to record the key of machine '%s'", m->name);
		goto out;
	}
	if (ssh_hostkey_fetch(m->host, port, cfg->lab.ssh_timeout_ms, &line, &fp) < 0)
		goto out;
	if (want_fp && strcmp(want_fp, fp.buf)) {
		error("machine '%s' (%s:%d) offers host key %s, not the expected %s: not trusted",
		      m->name, m->host, port, fp.buf, want_fp);
		goto out;
	}
	rc = ssh_knownhosts_lookup(cfg->lab.known_hosts, m->host, port, line.buf, &other);
	if (rc < 0)
		goto out;
	if (rc == 1) {
		printf("machine '%s' (%s:%d) is already trusted: %s\n", m->name, m->host, port, fp.buf);
		ret = 0;
		goto out;
	}
	if (rc == 2) {
		error("machine '%s' (%s:%d) offers host key %s but known_hosts '%s' has %s for it; "
		      "remove that line first (ssh-keygen -R) if the machine was reinstalled",
		      m->name, m->host, port, fp.buf, cfg->lab.known_hosts, other.buf);
		goto out;
	}
	if (ssh_knownhosts_append(cfg->lab.known_hosts, line.buf) < 0)
		goto out;
	printf("trusted machine '%s' (%s:%d): %s recorded in %s\n", m->name, m->host, port, fp.buf,
	       cfg->lab.known_hosts);
	ret = 0;
out:
	buf_release(&line);
	buf_release(&fp);
	buf_release(&other);
	return ret;
}

static int do_repair(const struct klab_config *cfg, struct db *db, const struct conf_machine *m)
{
	const char *uname[] = { "uname", "-r", NULL };
	struct ssh_target t;
	struct ssh_conn *c = NULL;
	struct buf rel = BUF_INIT, why = BUF_INIT;
	int ret = 1;

	ssh_target_from_conf(&t, cfg, m);
	if (ssh_connect(&c, &t) < 0 || ssh_run(c, uname, &rel, 30000) < 0) {
		error("machine '%s' is not repaired: it does not answer SSH (state unchanged)", m->name);
		goto out;
	}
	buf_trim(&rel);
	buf_addf(&why, "repaired: answers SSH, runs %s", rel.buf);
	if (machine_set_state(db, m->name, "free", why.buf) < 0)
		goto out;
	if (db_run(db, "UPDATE machines SET last_kernel = ?, last_seen = ? WHERE name = ?", "sds", rel.buf,
		   now_wall(), m->name) < 0)
		goto out;
	printf("machine '%s' is free again (runs %s)\n", m->name, rel.buf);
	ret = 0;
out:
	ssh_close(c);
	buf_release(&rel);
	buf_release(&why);
	return ret;
}

int oldcmd_machine(int argc, char **argv, struct klab_ctx *ctx)
{
	struct klab_config *cfg;
	const struct conf_machine *m;
	const char *sub, *name, *fp = NULL, *reason = NULL;
	int json = ctx->json, i;
	struct db *db;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return machine_usage(argc < 2 ? 2 : 0);
	sub = argv[1];
	if (strcmp(sub, "trust") && strcmp(sub, "show") && strcmp(sub, "drain") && strcmp(sub, "undrain") &&
	    strcmp(sub, "repair")) {
		error("unknown subcommand 'klab machine %s' (trust, show, drain, undrain, repair)", sub);
		return machine_usage(2);
	}
	if (argc < 3) {
		error("'klab machine %s' needs a machine name", sub);
		return 2;
	}
	name = argv[2];
	for (i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else if (!strcmp(argv[i], "--fingerprint") && i + 1 < argc && !strcmp(sub, "trust")) {
			fp = argv[++i];
		} else if (!strcmp(argv[i], "--reason") && i + 1 < argc && !strcmp(sub, "drain")) {
			reason = argv[++i];
		} else {
			error("unexpected argument '%s' to 'klab machine %s'", argv[i], sub);
			return 2;
		}
	}
	cfg = ctx_config(ctx);
	if (!cfg)
		return 1;
	m = conf_machine(cfg, name);
	if (!m) {
		error("no machine '%s' in the config '%s'", name, cfg->path);
		return 1;
	}
	if (!strcmp(sub, "trust"))
		return do_trust(cfg, m, fp);

	db = ctx_db(ctx);
	if (!db || lease_sync_machines(db, cfg) < 0)
		return 1;
	if (!strcmp(sub, "show")) {
		struct mrow r;
		char since[32], seen[32];

		if (mrow_load(db, m, &r) < 0)
			return 1;
		if (json) {
			struct json_object *o = mrow_json(&r);

			print_json(o);
			json_object_put(o);
		} else {
			fmt_time(r.since, since, sizeof(since));
			fmt_time(r.last_seen, seen, sizeof(seen));
			printf("machine %s\n  host        %s:%d\n  user        %s\n  role        %s\n  boot        %s\n"
			       "  state       %s since %s%s%s\n  lease       ",
			       m->name, m->host, m->port ? m->port : 22, m->user ? m->user : "root",
			       m->role == ROLE_DUT ? "dut" : "peer", boot_method_name(m->boot), r.state, since,
			       r.reason ? ": " : "", r.reason ? r.reason : "");
			if (r.lease_job) {
				char exp[32];

				fmt_time(r.lease_expires, exp, sizeof(exp));
				printf("job %lld until %s\n", (long long)r.lease_job, exp);
			} else {
				printf("-\n");
			}
			printf("  last kernel %s%s%s (seen %s)\n", r.last_kernel ? r.last_kernel : "-",
			       r.last_build_id ? " build id " : "", r.last_build_id ? r.last_build_id : "", seen);
			printf("  power_cycle %s\n", m->power_cycle.n ? "configured" : "-");
		}
		mrow_release(&r);
		return 0;
	}
	if (!strcmp(sub, "drain")) {
		if (machine_set_state(db, m->name, "drained", reason ? reason : "drained by the user") < 0)
			return 1;
		printf("machine '%s' is drained: no new job will lease it\n", m->name);
		return 0;
	}
	if (!strcmp(sub, "undrain")) {
		struct mrow r;
		int broken;

		if (mrow_load(db, m, &r) < 0)
			return 1;
		broken = !strcmp(r.state, "broken");
		mrow_release(&r);
		if (broken) {
			error("machine '%s' is broken, not drained: use 'klab machine repair %s'", m->name, m->name);
			return 1;
		}
		if (machine_set_state(db, m->name, "free", "undrained by the user") < 0)
			return 1;
		printf("machine '%s' is free\n", m->name);
		return 0;
	}
	return do_repair(cfg, db, m);
}
