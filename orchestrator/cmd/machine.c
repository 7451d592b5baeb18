/* cmd/machine.c: `klab machines` and `klab machine trust|show|drain|undrain|repair NAME`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <math.h>

#include "buf.h"
#include "cmd.h"
#include "store/machines.h"
#include "store/db.h"
#include "lab/deploy.h"
#include "lab/lease.h"
#include "log.h"
#include "ssh/ssh.h"
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


static int mrow_load(struct db *db, const struct conf_machine *m, struct mrow *r)
{
	struct machine_row row;

	memset(r, 0, sizeof(*r));
	r->m = m;
	if (machines_get(db, m->name, &row) < 0)
		return -1;
	r->state = row.state;
	r->since = row.state_since;
	r->reason = row.state_reason;
	r->last_kernel = row.last_kernel;
	r->last_build_id = row.last_build_id;
	r->last_seen = row.last_seen;
	r->lease_job = row.lease_job;
	r->lease_expires = row.lease_expires;
	free(row.name);	/* the rest is r's now */
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

/* The data of one machine (JSON and CSV): the same keys in machines and machine show. */
static void mrow_data(const struct mrow *r)
{
	const struct conf_machine *m = r->m;

	print_data_str("name", m->name);
	print_data_str("host", m->host ? m->host : "");
	print_data_int("port", m->port ? m->port : 22);
	print_data_str("role", m->role == ROLE_DUT ? "dut" : "peer");
	print_data_str("boot", boot_method_name(m->boot));
	print_data_str("state", r->state);
	print_data_time("state_since", r->since > 0 ? r->since : NAN);
	print_data_str("state_reason", r->reason);
	if (r->lease_job) {
		print_data_int("lease_job", r->lease_job);
		print_data_time("lease_expires", r->lease_expires);
	} else {
		print_data_null("lease_job");
		print_data_null("lease_expires");
	}
	print_data_str("last_kernel", r->last_kernel);
	print_data_str("last_build_id", r->last_build_id);
	print_data_time("last_seen", r->last_seen > 0 ? r->last_seen : NAN);
}

/* ---- klab machines ----------------------------------------------------------------- */

static const char *const machine_cols[] = {
	"name", "host", "port", "role", "boot", "state", "state_since", "state_reason", "lease_job",
	"lease_expires", "last_kernel", "last_build_id", "last_seen", NULL,
};
static const struct opt machines_opts[] = { OPT_JSON(), OPT_CSV(), OPT_END() };
static const char *const machines_usage[] = { "[--json|--csv]", NULL };
static const struct opt_spec machines_spec = {
	"klab machines", machines_usage, "list test machines: state, lease, last kernel, last seen",
	"The machines of the configuration, with the state the database keeps for each\n"
	"(free, leased, drained, broken) since when and why. Times are UTC.\n",
	machines_opts,
};

static int machines(int argc, char **argv, struct klab_ctx *ctx)
{
	struct klab_config *cfg;
	struct db *db;
	int st;

	if ((argc = cmd_parse(&machines_spec, argc, argv, &st)) < 0)
		return st;
	if (argc)
		return cmd_usage_error(&machines_spec, "unexpected argument '%s'", argv[0]);
	cfg = ctx_config(ctx);
	if (!cfg || !(db = ctx_db(ctx)))
		return 1;
	if (lease_sync_machines(db, cfg) < 0)
		return 1;
	cmd_print_begin();
	print_text("%-12s %-22s %-5s %-6s %-8s %-20s %-8s %s\n", "NAME", "HOST", "ROLE", "BOOT", "STATE",
		   "SINCE", "LEASE", "LAST KERNEL");
	print_list_begin(NULL, machine_cols);
	for (size_t i = 0; i < cfg->n_machines; i++) {
		const struct conf_machine *m = &cfg->machines[i];
		struct mrow r;
		char hp[300], since[32], lease[32];

		if (mrow_load(db, m, &r) < 0) {
			cmd_print_end();
			return 1;
		}
		print_obj_begin(NULL);
		mrow_data(&r);
		print_obj_end();
		snprintf(hp, sizeof(hp), "%s:%d", m->host ? m->host : "?", m->port ? m->port : 22);
		fmt_time(r.since, since, sizeof(since));
		if (r.lease_job)
			snprintf(lease, sizeof(lease), "job %lld", (long long)r.lease_job);
		else
			snprintf(lease, sizeof(lease), "-");
		print_text("%-12s %-22s %-5s %-6s %-8s %-20s %-8s %s\n", m->name, hp,
			   m->role == ROLE_DUT ? "dut" : "peer", boot_method_name(m->boot), r.state, since, lease,
			   r.last_kernel ? r.last_kernel : "-");
		if (r.reason && strcmp(r.state, "free"))
			print_text("%-12s   reason: %s\n", "", r.reason);
		mrow_release(&r);
	}
	print_list_end();
	return cmd_print_end();
}

const struct klab_cmd cmd_machines = { "machines", machines, &machines_spec, NULL, CMD_LISTING };

/* ---- klab machine SUB NAME ---------------------------------------------------------- */

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
		print_data_str("machine", m->name);
		print_data_str("fingerprint", fp.buf);
		print_data_bool("already_trusted", 1);
		print_text("machine '%s' (%s:%d) is already trusted: %s\n", m->name, m->host, port, fp.buf);
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
	print_data_str("machine", m->name);
	print_data_str("fingerprint", fp.buf);
	print_data_bool("already_trusted", 0);
	print_data_str("known_hosts", cfg->lab.known_hosts);
	print_text("trusted machine '%s' (%s:%d): %s recorded in %s\n", m->name, m->host, port, fp.buf,
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
	if (ssh_connect(&c, &t, NULL) < 0 || ssh_run(c, uname, &rel, 30000) < 0) {
		error("machine '%s' is not repaired: it does not answer SSH (state unchanged)", m->name);
		goto out;
	}
	buf_trim(&rel);
	buf_addf(&why, "repaired: answers SSH, runs %s", rel.buf);
	if (machine_set_state(db, m->name, "free", why.buf) < 0)
		goto out;
	if (machines_put_seen(db, m->name, rel.buf, now_wall()))
		goto out;
	print_data_str("machine", m->name);
	print_data_str("state", "free");
	print_data_str("release", rel.buf);
	print_text("machine '%s' is free again (runs %s)\n", m->name, rel.buf);
	ret = 0;
out:
	ssh_close(c);
	buf_release(&rel);
	buf_release(&why);
	return ret;
}

static int do_show(const struct mrow *r)
{
	const struct conf_machine *m = r->m;
	char since[32], seen[32], exp[32];

	mrow_data(r);
	fmt_time(r->since, since, sizeof(since));
	fmt_time(r->last_seen, seen, sizeof(seen));
	print_text("machine %s\n  host        %s:%d\n  user        %s\n  role        %s\n  boot        %s\n"
		   "  state       %s since %s%s%s\n  lease       ",
		   m->name, m->host, m->port ? m->port : 22, m->user ? m->user : "root",
		   m->role == ROLE_DUT ? "dut" : "peer", boot_method_name(m->boot), r->state, since,
		   r->reason ? ": " : "", r->reason ? r->reason : "");
	if (r->lease_job) {
		fmt_time(r->lease_expires, exp, sizeof(exp));
		print_text("job %lld until %s\n", (long long)r->lease_job, exp);
	} else {
		print_text("-\n");
	}
	print_text("  last kernel %s%s%s (seen %s)\n", r->last_kernel ? r->last_kernel : "-",
		   r->last_build_id ? " build id " : "", r->last_build_id ? r->last_build_id : "", seen);
	print_bool(PRINT_DATA, "power_cycle", "%d", m->power_cycle.n > 0);
	print_text("  power_cycle %s\n", m->power_cycle.n ? "configured" : "-");
	return 0;
}

static int do_drain(struct db *db, const struct conf_machine *m, const char *reason)
{
	if (machine_set_state(db, m->name, "drained", reason ? reason : "drained by the user") < 0)
		return 1;
	print_data_str("machine", m->name);
	print_data_str("state", "drained");
	print_text("machine '%s' is drained: no new job will lease it\n", m->name);
	return 0;
}

static int do_undrain(struct db *db, const struct conf_machine *m)
{
	struct mrow r;
	int broken;

	if (mrow_load(db, m, &r) < 0)
		return 1;
	broken = !strcmp(r.state, "broken");
	mrow_release(&r);
	if (broken)
		return error("machine '%s' is broken, not drained: use 'klab machine repair %s'", m->name, m->name), 1;
	if (machine_set_state(db, m->name, "free", "undrained by the user") < 0)
		return 1;
	print_data_str("machine", m->name);
	print_data_str("state", "free");
	print_text("machine '%s' is free\n", m->name);
	return 0;
}

enum { M_TRUST, M_SHOW, M_DRAIN, M_UNDRAIN, M_REPAIR };

static const char *fingerprint, *reason;

static const struct opt trust_opts[] = {
	OPT_STRING(0, "fingerprint", &fingerprint, "SHA256:...",
		   "trust the key only if it has this fingerprint (as ssh-keygen -l prints it)"),
	OPT_JSON(),
	OPT_END(),
};
static const struct opt drain_opts[] = {
	OPT_STRING(0, "reason", &reason, "TEXT", "why, shown by klab machines (default: drained by the user)"),
	OPT_JSON(),
	OPT_END(),
};
static const struct opt json_opts[] = { OPT_JSON(), OPT_END() };

static const char *const trust_usage[] = { "NAME [--fingerprint SHA256:...]", NULL };
static const char *const show_usage[] = { "NAME [--json]", NULL };
static const char *const drain_usage[] = { "NAME [--reason TEXT]", NULL };
static const char *const name_usage[] = { "NAME", NULL };

static const struct opt_spec machine_specs[] = {
	[M_TRUST] = { "klab machine trust", trust_usage,
		      "record the machine's SSH host key in [lab] known_hosts",
		      "Trust on first use, but explicit: klab never records a key by itself. A machine\n"
		      "whose key changed (reinstalled) is refused until its old line is removed.\n",
		      trust_opts },
	[M_SHOW] = { "klab machine show", show_usage, "one machine: address, role, state, lease, last kernel",
		     NULL, json_opts },
	[M_DRAIN] = { "klab machine drain", drain_usage, "take the machine out of service: no new job leases it",
		      NULL, drain_opts },
	[M_UNDRAIN] = { "klab machine undrain", name_usage, "put a drained machine back into service", NULL,
			json_opts },
	[M_REPAIR] = { "klab machine repair", name_usage,
		       "check that SSH works again and mark a broken machine free", NULL, json_opts },
};

static int machine_do(int which, int argc, char **argv, struct klab_ctx *ctx)
{
	const struct opt_spec *spec = &machine_specs[which];
	const struct conf_machine *m;
	struct klab_config *cfg;
	struct mrow r;
	struct db *db;
	int st, ret;

	if ((argc = cmd_parse(spec, argc, argv, &st)) < 0)
		return st;
	if (argc != 1)
		return argc ? cmd_usage_error(spec, "unexpected argument '%s'", argv[1])
			    : cmd_usage_error(spec, "needs a machine name");
	cfg = ctx_config(ctx);
	if (!cfg)
		return 1;
	m = conf_machine(cfg, argv[0]);
	if (!m)
		return error("no machine '%s' in the config '%s'", argv[0], cfg->path), 1;
	cmd_print_begin();
	if (which == M_TRUST) {
		ret = do_trust(cfg, m, fingerprint);
		goto out;
	}
	db = ctx_db(ctx);
	if (!db || lease_sync_machines(db, cfg) < 0) {
		ret = 1;
		goto out;
	}
	switch (which) {
	case M_SHOW:
		if (mrow_load(db, m, &r) < 0) {
			ret = 1;
			break;
		}
		ret = do_show(&r);
		mrow_release(&r);
		break;
	case M_DRAIN:
		ret = do_drain(db, m, reason);
		break;
	case M_UNDRAIN:
		ret = do_undrain(db, m);
		break;
	default:
		ret = do_repair(cfg, db, m);
		break;
	}
out:
	return cmd_print_end() ? 1 : ret;
}

static int machine_trust(int argc, char **argv, struct klab_ctx *ctx) { return machine_do(M_TRUST, argc, argv, ctx); }
static int machine_show(int argc, char **argv, struct klab_ctx *ctx) { return machine_do(M_SHOW, argc, argv, ctx); }
static int machine_drain(int argc, char **argv, struct klab_ctx *ctx) { return machine_do(M_DRAIN, argc, argv, ctx); }
static int machine_undrain(int argc, char **argv, struct klab_ctx *ctx)
{
	return machine_do(M_UNDRAIN, argc, argv, ctx);
}
static int machine_repair(int argc, char **argv, struct klab_ctx *ctx) { return machine_do(M_REPAIR, argc, argv, ctx); }

static const struct klab_cmd machine_cmds[] = {
	{ "trust", machine_trust, &machine_specs[M_TRUST], NULL, 0 },
	{ "show", machine_show, &machine_specs[M_SHOW], NULL, 0 },
	{ "drain", machine_drain, &machine_specs[M_DRAIN], NULL, 0 },
	{ "undrain", machine_undrain, &machine_specs[M_UNDRAIN], NULL, 0 },
	{ "repair", machine_repair, &machine_specs[M_REPAIR], NULL, 0 },
};
static const struct klab_cmd *const machine_subs[] = {
	&machine_cmds[0], &machine_cmds[1], &machine_cmds[2], &machine_cmds[3], &machine_cmds[4], NULL,
};
static const struct opt_spec machine_spec = {
	"klab machine", NULL, "record a machine's SSH host key, take it out of or back into service", NULL, NULL,
};
const struct klab_cmd cmd_machine = { "machine", NULL, &machine_spec, machine_subs, 0 };
