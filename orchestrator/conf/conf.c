/*
 * conf.c: the typed pass of the configuration: the reader's raw sections
 * (conf_read.c) checked section by section, key by key, value by value and
 * reference by reference into struct klab_config, every error reported at
 * once as FILE:LINE: message; and the lookups on the result.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "conf/conf.h"
#include "conf/conf_int.h"
#include "store/db.h"
#include "store/jobs.h"
#include "log.h"

struct keydef {
	const char *key;
	int required;
};

static const char *get(const struct raw_section *s, const char *key, int *line)
{
	for (size_t i = 0; i < s->n; i++) {
		if (!strcmp(s->kv[i].key, key)) {
			if (line)
				*line = s->kv[i].line;
			return s->kv[i].value;
		}
	}
	if (line)
		*line = s->line;
	return NULL;
}

static const char *sec_label(const struct raw_section *s)
{
	static char label[160];

	if (s->name)
		snprintf(label, sizeof(label), "[%s \"%s\"]", s->type, s->name);
	else
		snprintf(label, sizeof(label), "[%s]", s->type);
	return label;
}

static void check_keys(struct parser *p, const struct raw_section *s, const struct keydef *defs,
		       const char *const *extra)
{
	for (size_t i = 0; i < s->n; i++) {
		int known = 0;

		for (const struct keydef *d = defs; d->key && !known; d++)
			known = !strcmp(d->key, s->kv[i].key);
		for (const char *const *e = extra; e && *e && !known; e++)
			known = !strcmp(*e, s->kv[i].key);
		if (!known)
			conf_perr(p, s->file, s->kv[i].line, "unknown key '%s' in %s", s->kv[i].key, sec_label(s));
	}
	for (const struct keydef *d = defs; d->key; d++)
		if (d->required && !get(s, d->key, NULL))
			conf_perr(p, s->file, s->line, "%s: missing required key '%s'", sec_label(s), d->key);
}

static char *dupv(const struct raw_section *s, const char *key, const char *def)
{
	const char *v = get(s, key, NULL);

	return v ? xstrdup(v) : def ? xstrdup(def) : NULL;
}

static long num(struct parser *p, const struct raw_section *s, const char *key, long def, long min, long max)
{
	int line;
	const char *v = get(s, key, &line);
	long out;

	if (!v)
		return def;
	if (parse_long(v, min, max, &out)) {
		conf_perr(p, s->file, line, "%s: '%s' must be a whole number from %ld to %ld, not '%s'",
		     sec_label(s), key, min, max, v);
		return def;
	}
	return out;
}

/* A duration in milliseconds, at least min_ms (the agent runs nothing shorter than 1 s). */
static long dur(struct parser *p, const struct raw_section *s, const char *key, long def, long min_ms)
{
	int line;
	const char *v = get(s, key, &line);
	long out;

	if (!v)
		return def;
	if (parse_duration_ms(v, &out)) {
		conf_perr(p, s->file, line, "%s: '%s' must be a duration such as 30s, 500ms, 5m, not '%s'",
		     sec_label(s), key, v);
		return def;
	}
	if (out < min_ms) {
		conf_perr(p, s->file, line, "%s: '%s' must be at least %ldms, not '%s'", sec_label(s), key, min_ms, v);
		return def;
	}
	return out;
}

/* Split on white space; double quotes group words. */
static void split_words(struct parser *p, const struct raw_section *s, const char *key, struct strvec *out)
{
	int line;
	const char *v = get(s, key, &line);
	struct buf w = BUF_INIT;
	int quoted = 0, have = 0;

	strvec_init(out);
	if (!v)
		return;
	for (; ; v++) {
		if (*v == '"') {
			quoted = !quoted;
			have = 1;
			continue;
		}
		if (!*v || (!quoted && (isspace((unsigned char)*v) || *v == ','))) {
			if (have)
				strvec_push(out, w.buf);
			buf_reset(&w);
			have = 0;
			if (!*v)
				break;
			continue;
		}
		buf_addch(&w, *v);
		have = 1;
	}
	buf_release(&w);
	(void)p;
}

static int one_of(struct parser *p, const struct raw_section *s, const char *key,
		  const char *const *names, int def)
{
	int line;
	const char *v = get(s, key, &line);
	struct buf all = BUF_INIT;

	if (!v)
		return def;
	for (int i = 0; names[i]; i++) {
		if (!strcmp(v, names[i])) {
			buf_release(&all);
			return i;
		}
		buf_addf(&all, "%s%s", i ? ", " : "", names[i]);
	}
	conf_perr(p, s->file, line, "%s: '%s' must be one of %s, not '%s'", sec_label(s), key, all.buf, v);
	buf_release(&all);
	return def;
}

static const struct keydef lab_keys[] = {
	{ "db", 0 }, { "work_dir", 0 }, { "artifact_dir", 0 }, { "report_dir", 0 },
	{ "ssh_key", 0 }, { "known_hosts", 0 }, { "log_level", 0 }, { "agent_dir", 0 },
	{ "ssh_timeout", 0 }, { "boot_timeout", 0 }, { "max_jobs", 0 }, { "sandbox", 0 },
	{ "sandbox_user", 0 }, { NULL, 0 },
};

static const struct keydef machine_keys[] = {
	{ "host", 1 }, { "port", 0 }, { "user", 0 }, { "role", 1 }, { "peer", 0 }, { "nic", 0 },
	{ "addr", 0 }, { "boot", 0 }, { "power_cycle", 0 }, { "cpus", 0 }, { "profile", 0 },
	{ "kernel_cmdline", 0 }, { "pool", 0 }, { "boot_dir", 0 }, { "reboot_cmd", 0 },
	{ "initramfs", 0 }, { "clock", 0 }, { "shared_root", 0 }, { "boot_probe_port", 0 },
	{ NULL, 0 },
};

static const struct keydef tree_keys[] = {
	{ "git", 0 }, { "branch", 0 }, { "tarball", 0 }, { "config_base", 0 }, { "fragments", 0 },
	{ "localversion", 0 }, { "jobs", 0 }, { "share", 0 }, { NULL, 0 },
};

static const struct keydef profile_keys[] = {
	{ "channels", 0 }, { "xps", 0 }, { "rps", 0 }, { "irq_affinity", 0 }, { "governor", 0 },
	{ "qdisc", 0 }, { NULL, 0 },
};

static const struct keydef workload_keys[] = {
	{ "type", 1 }, { "duration", 0 }, { "warmup", 0 }, { "monitors", 0 }, { "bpftrace", 0 },
	{ "perf_events", 0 }, { "profile_cpus", 0 }, { "threshold", 0 }, { "headline", 0 }, { "ops", 0 },
	{ "warmup_ops", 0 }, { NULL, 0 },
};

/* Parameters per workload type, and whether each is numeric. */
static const struct param {
	const char *type, *key;
	int numeric;
} params[] = {
	{ "udp_rr", "flows", 1 }, { "udp_rr", "threads", 1 }, { "udp_rr", "request_size", 1 },
	{ "udp_rr", "response_size", 1 }, { "udp_rr", "burst", 1 }, { "udp_rr", "port", 1 },
	{ "udp_rr", "ipv6", 1 }, { "udp_rr", "busy_poll", 1 }, { "udp_rr", "rto_ms", 1 },
	{ "udp_rr", "cpus", 0 }, { "udp_rr", "server_threads", 1 }, { "udp_rr", "server_cpus", 0 },
	{ "udp_tx", "threads", 1 }, { "udp_tx", "payload_size", 1 }, { "udp_tx", "engine", 0 },
	{ "udp_tx", "batch", 1 }, { "udp_tx", "gso_size", 1 }, { "udp_tx", "rate_pps", 1 },
	{ "udp_tx", "target", 0 }, { "udp_tx", "port", 1 }, { "udp_tx", "ipv6", 1 },
	{ "udp_tx", "cpus", 0 }, { "udp_tx", "sink_threads", 1 }, { "udp_tx", "sink_poll_us", 1 },
	/* seeded source ports (docs/workloads.md) */
	{ "udp_rr", "seed", 1 }, { "udp_rr", "src_ports", 0 }, { "udp_tx", "seed", 1 }, { "udp_tx", "src_ports", 0 },
};

static const struct keydef job_keys[] = {
	{ "tree", 0 }, { "base", 0 }, { "test", 0 }, { "series", 0 }, { "local_patches", 0 },
	{ "profile_a", 0 }, { "profile_b", 0 }, { "machines", 0 }, { "pool", 0 },
	{ "workloads", 1 }, { "boots", 0 }, { "runs", 0 }, { "warmup_runs", 0 }, { "order", 0 },
	{ "seed", 0 }, { "observe_boots", 0 }, { "warmup", 0 } /* the old name of warmup_runs */, { "pairs", 0 },
	{ NULL, 0 },
};

static const struct keydef schedule_keys[] = {
	{ "cron", 1 }, { "job", 1 }, { NULL, 0 },
};

static const struct keydef patchwork_keys[] = {
	{ "url", 1 }, { "project", 1 }, { "token_file", 1 }, { "tree", 0 }, { "job", 1 }, { "paths", 0 },
	{ "delegate", 0 }, { "states", 0 }, { "interval", 0 }, { "context", 0 }, { "report_url", 0 },
	{ "max_lag", 0 }, { "since", 0 }, { "timeout", 0 }, { NULL, 0 },
};

static const char *const monitors_known[] = { "cpu", "perf-stat", "perf-profile", "bpftrace", "nic", "pmu", NULL };

static void grow(void **arr, size_t *n, size_t size)
{
	*arr = xrealloc(*arr, (*n + 1) * size);
	memset((char *)*arr + *n * size, 0, size);
	(*n)++;
}

static char *path_value(const struct raw_section *s, const char *key, const char *def)
{
	const char *v = get(s, key, NULL);

	if (!v)
		return def ? xstrdup(def) : NULL;
	return conf_relative_to(s->file, v);
}

static void load_lab(struct parser *p, struct klab_config *c, const struct raw_section *s)
{
	struct conf_lab *l = &c->lab;
	static const char *const levels[] = { "error", "warning", "notice", "info", "debug", NULL };

	check_keys(p, s, lab_keys, NULL);
#define SETPATH(field, key) do { if (get(s, key, NULL)) { free(l->field); l->field = path_value(s, key, NULL); } } while (0)
	if (get(s, "db", NULL) && db_is_url(get(s, "db", NULL))) {
		/* a PostgreSQL URL is not a path relative to the config */
		free(l->db);
		l->db = dupv(s, "db", NULL);
	} else {
		SETPATH(db, "db");
	}
	SETPATH(work_dir, "work_dir");
	SETPATH(artifact_dir, "artifact_dir");
	SETPATH(report_dir, "report_dir");
	SETPATH(ssh_key, "ssh_key");
	SETPATH(known_hosts, "known_hosts");
#undef SETPATH
	if (get(s, "agent_dir", NULL)) {
		free(l->agent_dir);
		l->agent_dir = dupv(s, "agent_dir", NULL);
	}
	if (get(s, "log_level", NULL)) {
		one_of(p, s, "log_level", levels, 2);
		free(l->log_level);
		l->log_level = dupv(s, "log_level", NULL);
	}
	if (get(s, "ssh_timeout", NULL))
		l->ssh_timeout_ms = dur(p, s, "ssh_timeout", 10000, 0);
	if (get(s, "boot_timeout", NULL))
		l->boot_timeout_ms = dur(p, s, "boot_timeout", 300000, 0);
	if (get(s, "max_jobs", NULL))
		l->max_jobs = (int)num(p, s, "max_jobs", 0, 0, 1000);
	if (get(s, "sandbox", NULL)) {
		static const char *const kinds[] = { "bwrap", "none", NULL };

		one_of(p, s, "sandbox", kinds, 0);
		free(l->sandbox);
		l->sandbox = dupv(s, "sandbox", NULL);
	}
	if (get(s, "sandbox_user", NULL)) {
		free(l->sandbox_user);
		l->sandbox_user = dupv(s, "sandbox_user", NULL);
	}
}

static void load_machine(struct parser *p, struct klab_config *c, const struct raw_section *s)
{
	static const char *const roles[] = { "dut", "peer", NULL };
	static const char *const boots[] = { "none", "kexec", "reboot", "qemu", NULL };
	static const char *const noyes[] = { "no", "yes", NULL };
	static const char *const clocks[] = { "real", "icount", NULL };
	struct conf_machine *m;

	check_keys(p, s, machine_keys, NULL);
	grow((void **)&c->machines, &c->n_machines, sizeof(*m));
	m = &c->machines[c->n_machines - 1];
	m->name = xstrdup(s->name);
	m->line = s->line;
	m->host = dupv(s, "host", "");
	m->port = (int)num(p, s, "port", 22, 1, 65535);
	m->user = dupv(s, "user", "root");
	m->role = (enum machine_role)one_of(p, s, "role", roles, ROLE_DUT);
	m->peer = dupv(s, "peer", NULL);
	m->nic = dupv(s, "nic", NULL);
	m->addr = dupv(s, "addr", NULL);
	m->boot = (enum boot_method)one_of(p, s, "boot", boots, BOOT_KEXEC);
	split_words(p, s, "power_cycle", &m->power_cycle);
	m->cpus = dupv(s, "cpus", NULL);
	m->profile = dupv(s, "profile", NULL);
	m->kernel_cmdline = dupv(s, "kernel_cmdline", NULL);
	m->boot_dir = dupv(s, "boot_dir", NULL);
	split_words(p, s, "reboot_cmd", &m->reboot_cmd);
	m->initramfs = one_of(p, s, "initramfs", noyes, 0);
	m->pool = dupv(s, "pool", NULL);
	m->clock = clocks[one_of(p, s, "clock", clocks, 0)];
	m->shared_root = dupv(s, "shared_root", NULL);
	m->boot_probe_port = (int)num(p, s, "boot_probe_port", 0, 0, 65535);
	if (m->shared_root && m->shared_root[0] != '/') {
		int line;

		get(s, "shared_root", &line);
		conf_perr(p, s->file, line, "%s: 'shared_root' must be an absolute path on the machine (where the "
			  "host's / is seen, read-only), not '%s'", sec_label(s), m->shared_root);
	}
	if (m->cpus) {
		int line;

		get(s, "cpus", &line);
		if (!cpu_list_ok(m->cpus))
			conf_perr(p, s->file, line, "%s: 'cpus' must be a CPU list such as 0-3,8, not '%s'",
			     sec_label(s), m->cpus);
	}
}

static void load_tree(struct parser *p, struct klab_config *c, const struct raw_section *s)
{
	struct conf_tree *t;

	check_keys(p, s, tree_keys, NULL);
	grow((void **)&c->trees, &c->n_trees, sizeof(*t));
	t = &c->trees[c->n_trees - 1];
	t->name = xstrdup(s->name);
	t->line = s->line;
	t->git = dupv(s, "git", NULL);
	if (t->git && t->git[0] != '/' && !strstr(t->git, "://") && !strchr(t->git, ':')) {
		char *rel = conf_relative_to(s->file, t->git);

		free(t->git);
		t->git = rel;
	}
	t->branch = dupv(s, "branch", t->git ? "master" : NULL);
	t->tarball = path_value(s, "tarball", NULL);
	t->config_base = dupv(s, "config_base", "defconfig");
	split_words(p, s, "fragments", &t->fragments);
	t->localversion = dupv(s, "localversion", "-klab");
	t->jobs = (int)num(p, s, "jobs", 0, 0, 4096);
	t->share = dupv(s, "share", NULL);
	if (t->share && (!t->git || !strcmp(t->share, t->name))) {
		int line;

		get(s, "share", &line);
		conf_perr(p, s->file, line, "%s: share = %s needs a git tree of another tree's history (git = PATH)",
		     sec_label(s), t->share);
	}
	if (!!t->git == !!t->tarball)
		conf_perr(p, s->file, s->line, "%s: give exactly one source: 'git' (with 'branch') or 'tarball'",
		     sec_label(s));
	if (t->tarball && !file_exists(t->tarball)) {
		int line;

		get(s, "tarball", &line);
		conf_perr(p, s->file, line, "%s: tarball '%s' does not exist", sec_label(s), t->tarball);
	}
}

static void load_profile(struct parser *p, struct klab_config *c, const struct raw_section *s)
{
	struct conf_profile *pr;

	grow((void **)&c->profiles, &c->n_profiles, sizeof(*pr));
	pr = &c->profiles[c->n_profiles - 1];
	pr->name = xstrdup(s->name);
	pr->line = s->line;
	pr->channels = (int)num(p, s, "channels", 0, 0, 4096);
	pr->xps = dupv(s, "xps", NULL);
	pr->rps = dupv(s, "rps", NULL);
	pr->irq_affinity = dupv(s, "irq_affinity", NULL);
	pr->governor = dupv(s, "governor", NULL);
	pr->qdisc = dupv(s, "qdisc", NULL);
	for (size_t i = 0; i < s->n; i++) {
		const char *key = s->kv[i].key, *sys = skip_prefix(key, "sysctl.");
		int known = 0;

		for (const struct keydef *d = profile_keys; d->key; d++)
			known |= !strcmp(d->key, key);
		if (known)
			continue;
		if (!sys || !*sys) {
			conf_perr(p, s->file, s->kv[i].line, "unknown key '%s' in %s (sysctls are written sysctl.NAME)",
			     key, sec_label(s));
			continue;
		}
		pr->sysctls = xrealloc(pr->sysctls, (pr->n_sysctls + 1) * sizeof(*pr->sysctls));
		pr->sysctls[pr->n_sysctls].key = xstrdup(sys);
		pr->sysctls[pr->n_sysctls].value = xstrdup(s->kv[i].value);
		pr->sysctls[pr->n_sysctls].line = s->kv[i].line;
		pr->n_sysctls++;
	}
	if (pr->xps && strcmp(pr->xps, "auto") && strcmp(pr->xps, "off")) {
		for (const char *ch = pr->xps; *ch; ch++)
			if (!isxdigit((unsigned char)*ch) && *ch != ',') {
				int line;

				get(s, "xps", &line);
				conf_perr(p, s->file, line, "%s: 'xps' must be auto, off or hex masks such as 1,2,4,8, not '%s'",
				     sec_label(s), pr->xps);
				break;
			}
	}
}

static void load_workload(struct parser *p, struct klab_config *c, const struct raw_section *s)
{
	static const char *const types[] = { "udp_rr", "udp_tx", NULL };
	struct conf_workload *w;
	struct strvec extra = STRVEC_INIT;
	const char *type = get(s, "type", NULL);
	int line;
	long ops;
	double thr;

	for (size_t i = 0; i < ARRAY_SIZE(params); i++)
		if (!type || !strcmp(params[i].type, type))
			if (strvec_find(&extra, params[i].key) < 0)
				strvec_push(&extra, params[i].key);
	check_keys(p, s, workload_keys, (const char *const *)extra.v);
	strvec_clear(&extra);
	grow((void **)&c->workloads, &c->n_workloads, sizeof(*w));
	w = &c->workloads[c->n_workloads - 1];
	w->name = xstrdup(s->name);
	w->line = s->line;
	one_of(p, s, "type", types, 0);
	w->type = dupv(s, "type", "udp_rr");
	split_words(p, s, "monitors", &w->monitors);
	get(s, "monitors", &line);
	for (size_t i = 0; i < w->monitors.n; i++) {
		int known = 0;

		for (const char *const *m = monitors_known; *m; m++)
			known |= !strcmp(*m, w->monitors.v[i]);
		if (!known)
			conf_perr(p, s->file, line, "%s: unknown monitor '%s' (cpu, perf-stat, perf-profile, bpftrace, nic, pmu)",
			     sec_label(s), w->monitors.v[i]);
	}
	w->bpftrace = path_value(s, "bpftrace", NULL);
	if (w->bpftrace && !file_exists(w->bpftrace)) {
		get(s, "bpftrace", &line);
		conf_perr(p, s->file, line, "%s: bpftrace script '%s' does not exist", sec_label(s), w->bpftrace);
	}
	if (w->bpftrace && strvec_find(&w->monitors, "bpftrace") < 0) {
		get(s, "bpftrace", &line);
		conf_perr(p, s->file, line, "%s: 'bpftrace' is set but the bpftrace monitor is not in 'monitors'",
		     sec_label(s));
	}
	w->perf_events = dupv(s, "perf_events", NULL);
	w->profile_cpus = dupv(s, "profile_cpus", NULL);
	if (w->profile_cpus) {
		get(s, "profile_cpus", &line);
		if (!cpu_list_ok(w->profile_cpus))
			conf_perr(p, s->file, line, "%s: 'profile_cpus' must be a CPU list such as 1 or 0-3,8, not '%s'",
			     sec_label(s), w->profile_cpus);
		else if (strvec_find(&w->monitors, "perf-profile") < 0)
			conf_perr(p, s->file, line, "%s: 'profile_cpus' is set but the perf-profile monitor is not in 'monitors'",
			     sec_label(s));
	}
	w->headline = dupv(s, "headline", !strcmp(w->type, "udp_tx") ? "tx_pps" : "tps");
	w->threshold_pct = 0;	/* not set: the default of the clock that measures it (compare_default_threshold) */
	if (get(s, "threshold", &line)) {
		char *t = xstrdup(get(s, "threshold", NULL));
		size_t l = strlen(t);

		if (l && t[l - 1] == '%')
			t[l - 1] = '\0';
		if (parse_double(t, &thr) || thr <= 0 || thr > 100)
			conf_perr(p, s->file, line, "%s: 'threshold' must be a percentage above 0 and at most 100, not '%s'",
			     sec_label(s), get(s, "threshold", NULL));
		else
			w->threshold_pct = thr;
		free(t);
	}
	/*
	 * duration and warmup are kept as parameters (milliseconds checked
	 * here), and so are ops and warmup_ops: a run sized by work, whose
	 * duration is its time limit and whose warm-up is warmup_ops operations
	 * (docs/workloads.md)
	 */
	dur(p, s, "duration", 10000, 1000);
	dur(p, s, "warmup", 2000, 0);
	/* ops = 0: a timed run on every clock, not the icount default (docs/jobs.md) */
	ops = num(p, s, "ops", -1, 0, JOB_SPEC_OPS_MAX);
	num(p, s, "warmup_ops", 0, 0, JOB_SPEC_OPS_MAX);
	if (get(s, "warmup_ops", &line) && ops <= 0)
		conf_perr(p, s->file, line, "%s: 'warmup_ops' needs 'ops' (a warm-up by work goes with a run by work)",
			  sec_label(s));
	if (ops > 0 && get(s, "warmup", &line))
		conf_perr(p, s->file, line, "%s: 'warmup' (seconds) does not go with 'ops': give the warm-up as "
			  "'warmup_ops' operations", sec_label(s));
	for (size_t i = 0; i < s->n; i++) {
		const char *key = s->kv[i].key;
		int is_param = !strcmp(key, "duration") || !strcmp(key, "warmup") || !strcmp(key, "ops") ||
			       !strcmp(key, "warmup_ops");

		for (size_t k = 0; k < ARRAY_SIZE(params) && !is_param; k++) {
			if (strcmp(params[k].key, key) || strcmp(params[k].type, w->type))
				continue;
			is_param = 1;
			if (params[k].numeric) {
				long v;

				if (parse_long(s->kv[i].value, 0, 100000000, &v))
					conf_perr(p, s->file, s->kv[i].line,
					     "%s: '%s' must be a whole number, not '%s'", sec_label(s), key,
					     s->kv[i].value);
			}
		}
		if (!is_param)
			continue;
		w->params = xrealloc(w->params, (w->n_params + 1) * sizeof(*w->params));
		w->params[w->n_params].key = xstrdup(key);
		w->params[w->n_params].value = xstrdup(s->kv[i].value);
		w->params[w->n_params].line = s->kv[i].line;
		w->n_params++;
	}
	if (!strcmp(w->type, "udp_tx")) {
		static const char *const engines[] = { "sendmmsg", "sendto", "io_uring", NULL };
		static const char *const targets[] = { "peer", "dummy", "blackhole", NULL };

		one_of(p, s, "engine", engines, 0);
		one_of(p, s, "target", targets, 0);
	}
}

static void load_job(struct parser *p, struct klab_config *c, const struct raw_section *s)
{
	static const char *const orders[] = { "abba", "fixed", NULL };
	struct conf_job *j;

	check_keys(p, s, job_keys, NULL);
	grow((void **)&c->jobs, &c->n_jobs, sizeof(*j));
	j = &c->jobs[c->n_jobs - 1];
	j->name = xstrdup(s->name);
	j->line = s->line;
	j->tree = dupv(s, "tree", NULL);
	j->base = dupv(s, "base", NULL);
	j->test = dupv(s, "test", NULL);
	j->series = dupv(s, "series", NULL);
	split_words(p, s, "local_patches", &j->local_patches);
	for (size_t i = 0; i < j->local_patches.n; i++) {
		char *abs = conf_relative_to(s->file, j->local_patches.v[i]);

		if (!file_exists(abs)) {
			int line;

			get(s, "local_patches", &line);
			conf_perr(p, s->file, line, "%s: local patch '%s' does not exist", sec_label(s), abs);
		}
		free(j->local_patches.v[i]);
		j->local_patches.v[i] = abs;
	}
	if (j->series && !strchr(j->series, ':')) {
		char *abs = conf_relative_to(s->file, j->series);

		free(j->series);
		j->series = abs;
	}
	j->profile_a = dupv(s, "profile_a", NULL);
	j->profile_b = dupv(s, "profile_b", NULL);
	split_words(p, s, "machines", &j->machines);
	j->pool = dupv(s, "pool", NULL);
	split_words(p, s, "workloads", &j->workloads);
	j->boots = 3;
	j->boots_min = 0;
	{
		/* boots = N, or MIN..MAX: boots added one ABBA round at a time until the verdicts are known */
		int bline;
		const char *bv = get(s, "boots", &bline);
		const char *dots = bv ? strstr(bv, "..") : NULL;

		if (dots) {
			char *lo = xstrndup(bv, (size_t)(dots - bv));
			long mn, mx;

			/* MIN 1: a look at one boot a side, which decides only on a calibrated instrument */
			if (parse_long(lo, 1, 1000, &mn) || parse_long(dots + 2, 1, 1000, &mx) || mx < mn)
				conf_perr(p, s->file, bline, "%s: 'boots' must be a count, or a range MIN..MAX with "
				     "1 <= MIN <= MAX <= 1000 (boots = 2..8, or 1..3 on a calibrated instrument), "
				     "not '%s'", sec_label(s), bv);
			else {
				j->boots = (int)mx;
				j->boots_min = mn < mx ? (int)mn : 0;
			}
			free(lo);
		} else {
			j->boots = (int)num(p, s, "boots", 3, 1, 1000);
		}
	}
	j->runs = (int)num(p, s, "runs", 3, 1, 1000);
	/*
	 * [workload] warmup is seconds; the job's count of runs was called
	 * warmup too. The old name still works, with a warning.
	 */
	int wline;

	if (get(s, "warmup", &wline)) {
		if (get(s, "warmup_runs", NULL))
			conf_perr(p, s->file, wline, "%s: give 'warmup_runs', not also its old name 'warmup'", sec_label(s));
		else
			warn("%s:%d: %s: 'warmup' is now called 'warmup_runs' (runs per boot, not seconds): "
			     "rename it", s->file, wline, sec_label(s));
		j->warmup_runs = (int)num(p, s, "warmup", 1, 0, 100);
	} else {
		j->warmup_runs = (int)num(p, s, "warmup_runs", 1, 0, 100);
	}
	j->observe_boots = (int)num(p, s, "observe_boots", 1, 0, 1000);
	j->order = dupv(s, "order", "abba");
	one_of(p, s, "order", orders, 0);
	j->seed = num(p, s, "seed", -1, -1, 0x7fffffffL);
	if (j->machines.n && j->pool)
		conf_perr(p, s->file, s->line, "%s: give 'machines' or 'pool', not both", sec_label(s));
	j->pairs = (int)num(p, s, "pairs", 1, 1, 64);
	if (j->pairs > 1 && !j->pool) {
		int line;

		get(s, "pairs", &line);
		conf_perr(p, s->file, line, "%s: 'pairs = %d' runs boots on several pairs of a pool: give 'pool', "
			  "not 'machines'", sec_label(s), j->pairs);
	}
	if (!j->machines.n && !j->pool)
		conf_perr(p, s->file, s->line, "%s: missing required key 'machines' (dut and peer) or 'pool'",
		     sec_label(s));
	if (j->machines.n && j->machines.n != 2) {
		int line;

		get(s, "machines", &line);
		conf_perr(p, s->file, line, "%s: 'machines' must name two machines, the dut then the peer",
		     sec_label(s));
	}
	if (!j->tree && !(j->profile_a && j->profile_b))
		conf_perr(p, s->file, s->line, "%s: missing required key 'tree' (or 'profile_a' and 'profile_b' for a tuning A/B)",
		     sec_label(s));
	if ((j->profile_a != NULL) != (j->profile_b != NULL))
		conf_perr(p, s->file, s->line, "%s: a tuning A/B needs both 'profile_a' and 'profile_b'", sec_label(s));
	if (j->test && j->series)
		conf_perr(p, s->file, s->line, "%s: give 'series' or 'test', not both", sec_label(s));
}

/* A quick shape check of a five-field cron expression; sched.c computes fire times. */
static void check_cron(struct parser *p, const struct raw_section *s, const char *expr)
{
	struct strvec f = STRVEC_INIT;
	int line;

	get(s, "cron", &line);
	if (expr[0] == '@') {
		static const char *const ok[] = { "@yearly", "@annually", "@monthly", "@weekly", "@daily",
						  "@midnight", "@hourly", NULL };
		for (int i = 0; ok[i]; i++)
			if (!strcmp(expr, ok[i]))
				return;
		conf_perr(p, s->file, line, "%s: unknown cron shortcut '%s'", sec_label(s), expr);
		return;
	}
	strvec_split(&f, expr, " \t");
	if (f.n != 5) {
		conf_perr(p, s->file, line, "%s: 'cron' needs five fields (minute hour day month weekday), not %zu in '%s'",
		     sec_label(s), f.n, expr);
	} else {
		for (size_t i = 0; i < f.n; i++)
			for (const char *ch = f.v[i]; *ch; ch++)
				if (!isalnum((unsigned char)*ch) && !strchr("*,-/", *ch)) {
					conf_perr(p, s->file, line, "%s: bad character '%c' in cron field %zu '%s'",
					     sec_label(s), *ch, i + 1, f.v[i]);
					i = f.n;
					break;
				}
	}
	strvec_clear(&f);
}

static void load_schedule(struct parser *p, struct klab_config *c, const struct raw_section *s)
{
	struct conf_schedule *sc;

	check_keys(p, s, schedule_keys, NULL);
	grow((void **)&c->schedules, &c->n_schedules, sizeof(*sc));
	sc = &c->schedules[c->n_schedules - 1];
	sc->name = xstrdup(s->name);
	sc->line = s->line;
	sc->cron = dupv(s, "cron", "");
	sc->job = dupv(s, "job", "");
	if (*sc->cron)
		check_cron(p, s, sc->cron);
}

/*
 * [patchwork "NAME"]: checked here as far as a config can be (URL scheme, a
 * context patchwork takes: letters, digits, '-', '_', '.'); the token file
 * is read by the watcher when it polls, so a config check does not need
 * root's secrets, and its content never enters the config.
 */
static void load_patchwork(struct parser *p, struct klab_config *c, const struct raw_section *s)
{
	struct conf_patchwork *w;
	int line;

	check_keys(p, s, patchwork_keys, NULL);
	grow((void **)&c->patchworks, &c->n_patchworks, sizeof(*w));
	w = &c->patchworks[c->n_patchworks - 1];
	w->name = xstrdup(s->name);
	w->line = s->line;
	w->url = dupv(s, "url", "");
	while (*w->url && w->url[strlen(w->url) - 1] == '/')
		w->url[strlen(w->url) - 1] = 0;
	if (*w->url && strncmp(w->url, "https://", 8) && strncmp(w->url, "http://", 7)) {
		get(s, "url", &line);
		conf_perr(p, s->file, line, "%s: 'url' must start with https:// or http://, not '%s'", sec_label(s), w->url);
	}
	w->project = dupv(s, "project", "");
	w->token_file = path_value(s, "token_file", "");
	w->tree = dupv(s, "tree", NULL);
	w->job = dupv(s, "job", "");
	split_words(p, s, "paths", &w->paths);
	w->delegate = dupv(s, "delegate", NULL);
	split_words(p, s, "states", &w->states);
	w->interval_ms = dur(p, s, "interval", 300000, 1000);
	w->timeout_ms = dur(p, s, "timeout", 30000, 1000);
	w->max_lag_ms = dur(p, s, "max_lag", 0, 1000);
	{
		char def[200];

		snprintf(def, sizeof(def), "klab-%s", s->name);
		w->context = dupv(s, "context", def);
	}
	for (const char *q = w->context; *q; q++) {
		if (!isalnum((unsigned char)*q) && !strchr("-_.", *q)) {
			get(s, "context", &line);
			conf_perr(p, s->file, line, "%s: 'context' may hold letters, digits, '-', '_' and '.' only, not '%s'",
			     sec_label(s), w->context);
			break;
		}
	}
	w->report_url = dupv(s, "report_url", NULL);
	if (w->report_url)
		while (*w->report_url && w->report_url[strlen(w->report_url) - 1] == '/')
			w->report_url[strlen(w->report_url) - 1] = 0;
	w->since = dupv(s, "since", NULL);
}

static const struct raw_section *find_raw(const struct parser *p, const char *type, const char *name)
{
	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->sec[i].type, type) && p->sec[i].name && !strcmp(p->sec[i].name, name))
			return &p->sec[i];
	return NULL;
}

static void check_refs(struct parser *p, struct klab_config *c)
{
	for (size_t i = 0; i < c->n_machines; i++) {
		const struct conf_machine *m = &c->machines[i];
		const struct raw_section *s = find_raw(p, "machine", m->name);
		int line;

		if (m->peer && !conf_machine(c, m->peer)) {
			get(s, "peer", &line);
			conf_perr(p, s->file, line, "%s: peer '%s' is not a [machine]", sec_label(s), m->peer);
		}
		if (m->profile && !conf_profile(c, m->profile)) {
			get(s, "profile", &line);
			conf_perr(p, s->file, line, "%s: profile '%s' is not a [profile]", sec_label(s), m->profile);
		}
	}
	for (size_t i = 0; i < c->n_trees; i++) {
		const struct conf_tree *t = &c->trees[i], *o = t->share ? conf_tree(c, t->share) : NULL;
		const struct raw_section *s = find_raw(p, "tree", t->name);
		int line;

		/* the built-in tree (build.h BUILD_DEFAULT_TREE) may be shared without a [tree] of its own */
		if (!t->share || (!o && !strcmp(t->share, "linux-source-6.1")))
			continue;
		get(s, "share", &line);
		if (!o)
			conf_perr(p, s->file, line, "%s: share '%s' is not a [tree]", sec_label(s), t->share);
		else if (o->share)
			conf_perr(p, s->file, line, "%s: share '%s' shares tree '%s' itself: share that one", sec_label(s),
			     t->share, o->share);
	}
	for (size_t i = 0; i < c->n_jobs; i++) {
		const struct conf_job *j = &c->jobs[i];
		const struct raw_section *s = find_raw(p, "job", j->name);
		int line;

		if (j->tree && !conf_tree(c, j->tree)) {
			get(s, "tree", &line);
			conf_perr(p, s->file, line, "%s: tree '%s' is not a [tree]", sec_label(s), j->tree);
		}
		for (size_t k = 0; k < j->machines.n; k++) {
			const struct conf_machine *m = conf_machine(c, j->machines.v[k]);

			get(s, "machines", &line);
			if (!m)
				conf_perr(p, s->file, line, "%s: machine '%s' is not a [machine]", sec_label(s),
				     j->machines.v[k]);
			else if (k == 0 && m->role != ROLE_DUT)
				conf_perr(p, s->file, line, "%s: the first machine '%s' must have role = dut",
				     sec_label(s), m->name);
			else if (k == 1 && m->role != ROLE_PEER)
				conf_perr(p, s->file, line, "%s: the second machine '%s' must have role = peer",
				     sec_label(s), m->name);
		}
		if (j->pool) {
			int found = 0;

			for (size_t k = 0; k < c->n_machines; k++)
				found |= c->machines[k].pool && !strcmp(c->machines[k].pool, j->pool);
			if (!found) {
				get(s, "pool", &line);
				conf_perr(p, s->file, line, "%s: no machine is in pool '%s'", sec_label(s), j->pool);
			}
		}
		for (size_t k = 0; k < j->workloads.n; k++) {
			if (!conf_workload(c, j->workloads.v[k])) {
				get(s, "workloads", &line);
				conf_perr(p, s->file, line, "%s: workload '%s' is not a [workload]", sec_label(s),
				     j->workloads.v[k]);
			}
		}
		if (j->profile_a && !conf_profile(c, j->profile_a)) {
			get(s, "profile_a", &line);
			conf_perr(p, s->file, line, "%s: profile '%s' is not a [profile]", sec_label(s), j->profile_a);
		}
		if (j->profile_b && !conf_profile(c, j->profile_b)) {
			get(s, "profile_b", &line);
			conf_perr(p, s->file, line, "%s: profile '%s' is not a [profile]", sec_label(s), j->profile_b);
		}
	}
	for (size_t i = 0; i < c->n_schedules; i++) {
		const struct conf_schedule *sc = &c->schedules[i];
		const struct raw_section *s = find_raw(p, "schedule", sc->name);
		int line;

		if (*sc->job && !conf_job(c, sc->job)) {
			get(s, "job", &line);
			conf_perr(p, s->file, line, "%s: job '%s' is not a [job]", sec_label(s), sc->job);
		}
	}
}

static void check_patchwork_refs(struct parser *p, struct klab_config *c)
{
	for (size_t i = 0; i < c->n_patchworks; i++) {
		const struct conf_patchwork *w = &c->patchworks[i];
		const struct raw_section *s = find_raw(p, "patchwork", w->name);
		int line;

		if (*w->job && !conf_job(c, w->job)) {
			get(s, "job", &line);
			conf_perr(p, s->file, line, "%s: job '%s' is not a [job]", sec_label(s), w->job);
		}
		if (w->tree && !conf_tree(c, w->tree)) {
			get(s, "tree", &line);
			conf_perr(p, s->file, line, "%s: tree '%s' is not a [tree]", sec_label(s), w->tree);
		} else if (w->tree && conf_job(c, w->job) && conf_job(c, w->job)->tree &&
			   strcmp(conf_job(c, w->job)->tree, w->tree)) {
			get(s, "tree", &line);
			conf_perr(p, s->file, line, "%s: tree '%s' is not the tree of job '%s' ('%s')", sec_label(s),
				  w->tree, w->job, conf_job(c, w->job)->tree);
		}
	}
}

static void set_lab_defaults(struct conf_lab *l)
{
	if (!l->db)
		l->db = xstrdup("/var/lib/klab/klab.db");
	if (!l->work_dir)
		l->work_dir = xstrdup("/var/lib/klab/work");
	if (!l->artifact_dir)
		l->artifact_dir = xstrdup("/var/lib/klab/artifacts");
	if (!l->report_dir)
		l->report_dir = xstrdup("/var/lib/klab/reports");
	if (!l->log_level)
		l->log_level = xstrdup("notice");
	if (!l->agent_dir)
		l->agent_dir = xstrdup("/var/lib/klab-agent");
	if (!l->ssh_timeout_ms)
		l->ssh_timeout_ms = 10000;
	if (!l->boot_timeout_ms)
		l->boot_timeout_ms = 300000;
}

int conf_load_many(struct klab_config *cfg, const char *const *paths, size_t n)
{
	struct parser p;
	static const char *const named[] = { "machine", "tree", "profile", "workload", "job", "schedule",
					     "patchwork", NULL };

	memset(&p, 0, sizeof(p));
	strvec_init(&p.files);
	memset(cfg, 0, sizeof(*cfg));
	cfg->path = xstrdup(n ? paths[0] : "");
	for (size_t i = 0; i < n; i++)
		conf_read_file(&p, paths[i], NULL, 0);
	for (size_t i = 0; i < p.n; i++) {
		const struct raw_section *s = &p.sec[i];
		int is_named = 0;

		for (int k = 0; named[k]; k++)
			is_named |= !strcmp(s->type, named[k]);
		if (!strcmp(s->type, "lab") || !strcmp(s->type, "include")) {
			if (s->name) {
				conf_perr(&p, s->file, s->line, "[%s] takes no name", s->type);
				continue;
			}
			if (!strcmp(s->type, "lab"))
				load_lab(&p, cfg, s);
			continue;
		}
		if (!is_named) {
			conf_perr(&p, s->file, s->line, "unknown section '%s' (lab, include, machine, tree, profile, "
			     "workload, job, schedule, patchwork)", s->type);
			continue;
		}
		if (!s->name) {
			conf_perr(&p, s->file, s->line, "section [%s] needs a name: [%s \"NAME\"]", s->type, s->type);
			continue;
		}
		for (size_t k = 0; k < i; k++) {
			if (!strcmp(p.sec[k].type, s->type) && p.sec[k].name && !strcmp(p.sec[k].name, s->name)) {
				conf_perr(&p, s->file, s->line, "%s defined twice (first at %s:%d)", sec_label(s),
				     p.sec[k].file, p.sec[k].line);
				s = NULL;
				break;
			}
		}
		if (!s)
			continue;
		if (!strcmp(s->type, "machine"))
			load_machine(&p, cfg, s);
		else if (!strcmp(s->type, "tree"))
			load_tree(&p, cfg, s);
		else if (!strcmp(s->type, "profile"))
			load_profile(&p, cfg, s);
		else if (!strcmp(s->type, "workload"))
			load_workload(&p, cfg, s);
		else if (!strcmp(s->type, "job"))
			load_job(&p, cfg, s);
		else if (!strcmp(s->type, "schedule"))
			load_schedule(&p, cfg, s);
		else if (!strcmp(s->type, "patchwork"))
			load_patchwork(&p, cfg, s);
	}
	if (!p.errors) {
		check_refs(&p, cfg);
		check_patchwork_refs(&p, cfg);
	}
	set_lab_defaults(&cfg->lab);
	if (p.errors) {
		fprintf(stderr, "%s: %d error%s in the configuration\n", n ? paths[0] : "config", p.errors,
			p.errors == 1 ? "" : "s");
		conf_parser_free(&p);
		conf_free(cfg);
		return -1;
	}
	conf_parser_free(&p);
	return 0;
}

int conf_load(struct klab_config *cfg, const char *path)
{
	return conf_load_many(cfg, &path, 1);
}

static void free_kv(struct conf_kv *kv, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(kv[i].key);
		free(kv[i].value);
	}
	free(kv);
}

void conf_free(struct klab_config *c)
{
	struct conf_lab *l = &c->lab;

	free(c->path);
	free(l->db); free(l->work_dir); free(l->artifact_dir); free(l->report_dir);
	free(l->ssh_key); free(l->known_hosts); free(l->log_level); free(l->agent_dir);
	free(l->sandbox); free(l->sandbox_user);
	for (size_t i = 0; i < c->n_machines; i++) {
		struct conf_machine *m = &c->machines[i];

		free(m->name); free(m->host); free(m->user); free(m->peer); free(m->nic); free(m->addr);
		strvec_clear(&m->power_cycle);
		free(m->cpus); free(m->profile); free(m->kernel_cmdline); free(m->pool);
		free(m->boot_dir); strvec_clear(&m->reboot_cmd); free(m->shared_root);
	}
	free(c->machines);
	for (size_t i = 0; i < c->n_trees; i++) {
		struct conf_tree *t = &c->trees[i];

		free(t->name); free(t->git); free(t->branch); free(t->tarball); free(t->config_base);
		strvec_clear(&t->fragments);
		free(t->localversion);
		free(t->share);
	}
	free(c->trees);
	for (size_t i = 0; i < c->n_profiles; i++) {
		struct conf_profile *p = &c->profiles[i];

		free(p->name); free(p->xps); free(p->rps); free(p->irq_affinity); free(p->governor);
		free(p->qdisc);
		free_kv(p->sysctls, p->n_sysctls);
	}
	free(c->profiles);
	for (size_t i = 0; i < c->n_workloads; i++) {
		struct conf_workload *w = &c->workloads[i];

		free(w->name); free(w->type);
		free_kv(w->params, w->n_params);
		strvec_clear(&w->monitors);
		free(w->bpftrace); free(w->perf_events); free(w->profile_cpus); free(w->headline);
	}
	free(c->workloads);
	for (size_t i = 0; i < c->n_jobs; i++) {
		struct conf_job *j = &c->jobs[i];

		free(j->name); free(j->tree); free(j->base); free(j->test); free(j->series);
		strvec_clear(&j->local_patches);
		free(j->profile_a); free(j->profile_b);
		strvec_clear(&j->machines);
		free(j->pool);
		strvec_clear(&j->workloads);
		free(j->order);
	}
	free(c->jobs);
	for (size_t i = 0; i < c->n_schedules; i++) {
		free(c->schedules[i].name);
		free(c->schedules[i].cron);
		free(c->schedules[i].job);
	}
	free(c->schedules);
	for (size_t i = 0; i < c->n_patchworks; i++) {
		struct conf_patchwork *w = &c->patchworks[i];

		free(w->name); free(w->url); free(w->project); free(w->token_file); free(w->tree);
		free(w->job); strvec_clear(&w->paths); free(w->delegate); strvec_clear(&w->states);
		free(w->context); free(w->report_url); free(w->since);
	}
	free(c->patchworks);
	memset(c, 0, sizeof(*c));
}

const char *conf_default_path(void)
{
	static char home_path[4096];
	const char *env = getenv("KLAB_CONFIG"), *home = getenv("HOME");

	if (env && *env)
		return env;
	if (file_exists("klab.conf"))
		return "klab.conf";
	if (home) {
		snprintf(home_path, sizeof(home_path), "%s/.config/klab/config", home);
		if (file_exists(home_path))
			return home_path;
	}
	if (file_exists("/etc/klab/config"))
		return "/etc/klab/config";
	return NULL;
}

#define FINDER(fn, type, arr, n) \
	const type *fn(const struct klab_config *c, const char *name) \
	{ \
		for (size_t i = 0; name && i < c->n; i++) \
			if (!strcmp(c->arr[i].name, name)) \
				return &c->arr[i]; \
		return NULL; \
	}

FINDER(conf_machine, struct conf_machine, machines, n_machines)
FINDER(conf_tree, struct conf_tree, trees, n_trees)
FINDER(conf_profile, struct conf_profile, profiles, n_profiles)
FINDER(conf_workload, struct conf_workload, workloads, n_workloads)
FINDER(conf_job, struct conf_job, jobs, n_jobs)
FINDER(conf_patchwork, struct conf_patchwork, patchworks, n_patchworks)

const char *conf_workload_param(const struct conf_workload *w, const char *key, const char *def)
{
	for (size_t i = 0; i < w->n_params; i++)
		if (!strcmp(w->params[i].key, key))
			return w->params[i].value;
	return def;
}

const char *boot_method_name(enum boot_method m)
{
	switch (m) {
	case BOOT_NONE: return "none";
	case BOOT_KEXEC: return "kexec";
	case BOOT_REBOOT: return "reboot";
	case BOOT_QEMU: return "qemu";
	}
	return "?";
}
