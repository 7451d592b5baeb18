/* conf_print.c: the configuration printed back normalised (`klab config show`), every default filled in. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "conf/conf.h"

static void pv(FILE *out, const char *key, const char *v)
{
	if (!v)
		return;
	fprintf(out, "\t%s = ", key);
	if (!*v || strpbrk(v, "#;\"\\\n\t") || isspace((unsigned char)v[0]) ||
	    isspace((unsigned char)v[strlen(v) - 1])) {
		fputc('"', out);
		for (; *v; v++) {
			if (*v == '"' || *v == '\\')
				fprintf(out, "\\%c", *v);
			else if (*v == '\n')
				fputs("\\n", out);
			else if (*v == '\t')
				fputs("\\t", out);
			else
				fputc(*v, out);
		}
		fputc('"', out);
	} else {
		fputs(v, out);
	}
	fputc('\n', out);
}

static void pl(FILE *out, const char *key, const struct strvec *sv)
{
	struct buf b = BUF_INIT;

	if (!sv->n)
		return;
	for (size_t i = 0; i < sv->n; i++) {
		if (i)
			buf_addch(&b, ' ');
		if (strpbrk(sv->v[i], " \t,")) {
			buf_addch(&b, '"');
			buf_addstr(&b, sv->v[i]);
			buf_addch(&b, '"');
		} else {
			buf_addstr(&b, sv->v[i]);
		}
	}
	fprintf(out, "\t%s = %s\n", key, b.buf);
	buf_release(&b);
}

static void pn(FILE *out, const char *key, long v)
{
	fprintf(out, "\t%s = %ld\n", key, v);
}

static void pd(FILE *out, const char *key, long ms)
{
	if (ms % 1000 == 0)
		fprintf(out, "\t%s = %lds\n", key, ms / 1000);
	else
		fprintf(out, "\t%s = %ldms\n", key, ms);
}

void conf_print(const struct klab_config *c, FILE *out)
{
	const struct conf_lab *l = &c->lab;

	fprintf(out, "[lab]\n");
	pv(out, "db", l->db);
	pv(out, "work_dir", l->work_dir);
	pv(out, "artifact_dir", l->artifact_dir);
	pv(out, "report_dir", l->report_dir);
	pv(out, "ssh_key", l->ssh_key);
	pv(out, "known_hosts", l->known_hosts);
	pv(out, "log_level", l->log_level);
	pv(out, "agent_dir", l->agent_dir);
	pd(out, "ssh_timeout", l->ssh_timeout_ms);
	pd(out, "boot_timeout", l->boot_timeout_ms);
	pn(out, "max_jobs", l->max_jobs);
	pv(out, "sandbox", l->sandbox);
	pv(out, "sandbox_user", l->sandbox_user);
	for (size_t i = 0; i < c->n_machines; i++) {
		const struct conf_machine *m = &c->machines[i];

		fprintf(out, "\n[machine \"%s\"]\n", m->name);
		pv(out, "host", m->host);
		pn(out, "port", m->port);
		pv(out, "user", m->user);
		pv(out, "role", m->role == ROLE_DUT ? "dut" : "peer");
		pv(out, "peer", m->peer);
		pv(out, "nic", m->nic);
		pv(out, "addr", m->addr);
		pv(out, "boot", boot_method_name(m->boot));
		pl(out, "power_cycle", &m->power_cycle);
		pv(out, "cpus", m->cpus);
		pv(out, "profile", m->profile);
		pv(out, "kernel_cmdline", m->kernel_cmdline);
		pv(out, "boot_dir", m->boot_dir);
		pl(out, "reboot_cmd", &m->reboot_cmd);
		if (m->initramfs)
			pv(out, "initramfs", "yes");
		pv(out, "pool", m->pool);
		if (strcmp(m->clock, "real"))
			pv(out, "clock", m->clock);
		pv(out, "shared_root", m->shared_root);
		if (m->boot_probe_port)
			fprintf(out, "\tboot_probe_port = %d\n", m->boot_probe_port);
	}
	for (size_t i = 0; i < c->n_trees; i++) {
		const struct conf_tree *t = &c->trees[i];

		fprintf(out, "\n[tree \"%s\"]\n", t->name);
		pv(out, "git", t->git);
		pv(out, "branch", t->branch);
		pv(out, "tarball", t->tarball);
		pv(out, "config_base", t->config_base);
		pl(out, "fragments", &t->fragments);
		pv(out, "localversion", t->localversion);
		pv(out, "share", t->share);
		pn(out, "jobs", t->jobs);
	}
	for (size_t i = 0; i < c->n_profiles; i++) {
		const struct conf_profile *p = &c->profiles[i];

		fprintf(out, "\n[profile \"%s\"]\n", p->name);
		if (p->channels)
			pn(out, "channels", p->channels);
		pv(out, "xps", p->xps);
		pv(out, "rps", p->rps);
		pv(out, "irq_affinity", p->irq_affinity);
		pv(out, "governor", p->governor);
		pv(out, "qdisc", p->qdisc);
		for (size_t k = 0; k < p->n_sysctls; k++) {
			char *key = xasprintf("sysctl.%s", p->sysctls[k].key);

			pv(out, key, p->sysctls[k].value);
			free(key);
		}
	}
	for (size_t i = 0; i < c->n_workloads; i++) {
		const struct conf_workload *w = &c->workloads[i];

		fprintf(out, "\n[workload \"%s\"]\n", w->name);
		pv(out, "type", w->type);
		pl(out, "monitors", &w->monitors);
		pv(out, "bpftrace", w->bpftrace);
		pv(out, "perf_events", w->perf_events);
		pv(out, "profile_cpus", w->profile_cpus);
		if (w->threshold_pct > 0)
			fprintf(out, "\tthreshold = %g\n", w->threshold_pct);
		pv(out, "headline", w->headline);
		for (size_t k = 0; k < w->n_params; k++)
			pv(out, w->params[k].key, w->params[k].value);
	}
	for (size_t i = 0; i < c->n_jobs; i++) {
		const struct conf_job *j = &c->jobs[i];

		fprintf(out, "\n[job \"%s\"]\n", j->name);
		pv(out, "tree", j->tree);
		pv(out, "base", j->base);
		pv(out, "test", j->test);
		pv(out, "series", j->series);
		pl(out, "local_patches", &j->local_patches);
		pv(out, "profile_a", j->profile_a);
		pv(out, "profile_b", j->profile_b);
		pl(out, "machines", &j->machines);
		pv(out, "pool", j->pool);
		if (j->pairs > 1)
			pn(out, "pairs", j->pairs);
		pl(out, "workloads", &j->workloads);
		if (j->boots_min > 0)
			fprintf(out, "\tboots = %d..%d\n", j->boots_min, j->boots);
		else
			pn(out, "boots", j->boots);
		pn(out, "runs", j->runs);
		pn(out, "warmup_runs", j->warmup_runs);
		pn(out, "observe_boots", j->observe_boots);
		pv(out, "order", j->order);
		if (j->seed >= 0)
			pn(out, "seed", j->seed);
	}
	for (size_t i = 0; i < c->n_schedules; i++) {
		fprintf(out, "\n[schedule \"%s\"]\n", c->schedules[i].name);
		pv(out, "cron", c->schedules[i].cron);
		pv(out, "job", c->schedules[i].job);
	}
	for (size_t i = 0; i < c->n_patchworks; i++) {
		const struct conf_patchwork *w = &c->patchworks[i];

		fprintf(out, "\n[patchwork \"%s\"]\n", w->name);
		pv(out, "url", w->url);
		pv(out, "project", w->project);
		pv(out, "token_file", w->token_file);
		pv(out, "tree", w->tree);
		pv(out, "job", w->job);
		pl(out, "paths", &w->paths);
		pv(out, "delegate", w->delegate);
		pl(out, "states", &w->states);
		fprintf(out, "\tinterval = %ldms\n", w->interval_ms);
		fprintf(out, "\ttimeout = %ldms\n", w->timeout_ms);
		if (w->max_lag_ms)
			fprintf(out, "\tmax_lag = %ldms\n", w->max_lag_ms);
		pv(out, "context", w->context);
		pv(out, "report_url", w->report_url);
		pv(out, "since", w->since);
	}
}
