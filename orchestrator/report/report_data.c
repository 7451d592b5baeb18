/* report_data.c: what the report pages and the mail report read from the database: a job, its machine, runs, samples, per-CPU rows, histograms, profiles. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "buf.h"
#include "store/db.h"
#include "store/jobs.h"
#include "store/bisections.h"
#include "store/result.h"
#include "store/runs.h"
#include "store/series.h"
#include "jsonh.h"
#include "log.h"
#include "report/plot.h"
#include "report/report_data.h"
#include "store/machines.h"
#include "stats/stats.h"
#include "strvec.h"
#include "util.h"

/* A side 'A' or 'B' (anything else is A). */
static char side_char(const char *sd)
{
	return sd && sd[0] == 'B' ? 'B' : 'A';
}

/* File-name-safe form of an outside string; a hash keeps two different names apart. */
void rep_slug(struct buf *b, const char *s)
{
	size_t start = b->len, i;
	int changed = 0;
	char hex[65];

	for (i = 0; s[i] && i < 48; i++) {
		unsigned char c = (unsigned char)s[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '_' || c == '-' || (c == '.' && i > 0)) {
			buf_addch(b, c);
		} else {
			buf_addch(b, '_');
			changed = 1;
		}
	}
	if (s[i])
		changed = 1;
	if (b->len == start)
		buf_addch(b, '_');
	if (changed) {
		sha256_hex(s, strlen(s), hex);
		buf_addf(b, "-%.8s", hex);
	}
}

/* ---- a job ---- */

void rep_job_free(struct rep_job *j)
{
	free(j->name); free(j->state); free(j->tree); free(j->schedule); free(j->dut);
	free(j->peer); free(j->error); free(j->s_source); free(j->s_url); free(j->s_subject);
	free(j->s_author); free(j->s_msgid);
	for (int i = 0; i < 2; i++) {
		struct rep_side *s = &j->side[i];

		free(s->label); free(s->profile); free(s->tree); free(s->commit);
		free(s->variant); free(s->release); free(s->build_id); free(s->compiler);
	}
	memset(j, 0, sizeof(*j));
}

int rep_job_load(struct db *db, int64_t id, struct rep_job *j)
{
	struct job_row row;
	struct job_side_row *sides = NULL;
	size_t n_sides = 0;
	int rc;

	memset(j, 0, sizeof(*j));
	rc = job_get(db, id, &row);
	if (rc < 0)
		return -1;
	if (!rc)
		return error("cannot report job %lld: no such job", (long long)id);
	/* the strings move over */
	j->id = row.id;
	j->name = row.name, row.name = NULL;
	j->state = row.state, row.state = NULL;
	j->tree = row.tree, row.tree = NULL;
	j->schedule = row.schedule, row.schedule = NULL;
	j->dut = row.dut, row.dut = NULL;
	j->peer = row.peer, row.peer = NULL;
	j->error = row.error, row.error = NULL;
	j->created = row.created;
	j->started = row.started;
	j->finished = row.finished;
	j->have_seed = !row.order_seed_null;
	j->order_seed = row.order_seed;
	j->series_id = row.series_id;
	job_row_release(&row);

	if (j->series_id) {
		struct series_row sr;
		int r = series_get(db, j->series_id, &sr);

		if (r < 0)
			goto fail;
		if (r == 1) {
			j->s_source = sr.source, sr.source = NULL;
			j->s_url = sr.source_url, sr.source_url = NULL;
			j->s_subject = sr.subject, sr.subject = NULL;
			j->s_author = sr.author, sr.author = NULL;
			j->s_msgid = sr.message_id, sr.message_id = NULL;
			j->s_version = sr.version;
			j->s_total = sr.total;
		}
		series_row_release(&sr);
	}
	if (job_sides_list(db, id, &sides, &n_sides))
		goto fail;
	for (size_t i = 0; i < n_sides; i++) {
		struct job_side_row *r = &sides[i];
		const char *sd = r->side;
		struct rep_side *s;

		if (!sd || (sd[0] != 'A' && sd[0] != 'B'))
			continue;
		s = &j->side[sd[0] - 'A'];
		/* the strings move over (a side twice: the last one, as before) */
		free(s->label); free(s->profile); free(s->tree); free(s->commit);
		free(s->variant); free(s->release); free(s->build_id); free(s->compiler);
		s->label = r->label, r->label = NULL;
		s->profile = r->profile, r->profile = NULL;
		s->tree = r->tree, r->tree = NULL;
		s->commit = r->commit, r->commit = NULL;
		s->variant = r->variant, r->variant = NULL;
		s->release = r->release, r->release = NULL;
		s->build_id = r->build_id, r->build_id = NULL;
		s->compiler = r->compiler, r->compiler = NULL;
		s->kernel_id = r->kernel_id;
	}
	job_side_rows_free(sides, n_sides);
	for (int i = 0; i < 2; i++) {
		j->side[i].present = j->side[i].label != NULL;
		if (!j->side[i].label)
			j->side[i].label = xstrdup(i ? "B" : "A");
	}
	return 0;
fail:
	rep_job_free(j);
	return -1;
}

static void workload_add(const char *w, void *data)
{
	struct strvec *out = data;

	if (w && strvec_find(out, w) < 0)
		strvec_push(out, w);
}

void rep_job_workloads(struct db *db, int64_t job, struct strvec *out)
{
	runs_workloads_of_job_each(db, job, workload_add, out);
}

/* ---- the test machine ---- */

static int json_int_or(struct json_object *o, const char *key, int dflt, int *found)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v))
		return dflt;
	(*found)++;
	return json_object_get_int(v);
}

struct sysinfo_ctx {
	const struct rep_job *j;
	struct rep_sysinfo *si;
	char *sysinfo;
};

static void boot_info_add(const struct boot_info_row *b, void *data)
{
	struct sysinfo_ctx *x = data;
	const char *mach = b->machine;
	int i = side_char(b->side) == 'B';

	if (x->j->dut && mach && strcmp(mach, x->j->dut))
		return;
	if (!x->si->cmdline[i])
		x->si->cmdline[i] = b->cmdline ? xstrdup(b->cmdline) : NULL;
	if (!x->sysinfo)
		x->sysinfo = b->sysinfo ? xstrdup(b->sysinfo) : NULL;
}

/* The words of a sysinfo's "pmu" (struct rep_sysinfo's pmu). */
static char *pmu_words(struct json_object *p)
{
	struct json_object *v;
	const char *devices = json_object_object_get_ex(p, "devices", &v) && json_object_is_type(v, json_type_string) ?
			      json_object_get_string(v) : NULL;
	const char *reason = json_object_object_get_ex(p, "reason", &v) && json_object_is_type(v, json_type_string) ?
			     json_object_get_string(v) : "no reason recorded";
	int usable = json_object_object_get_ex(p, "usable", &v) && json_object_get_boolean(v);

	if (!devices)
		return xasprintf("none: %s", reason);
	if (usable)
		return xasprintf("%s: cycles, instructions, cache and branch misses counted where a run asks for them "
				 "(monitor pmu or perf-stat)", devices);
	return xasprintf("%s: not counted: %s", devices, reason);
}

void rep_sysinfo_load(struct db *db, const struct rep_job *j, struct rep_sysinfo *si)
{
	struct sysinfo_ctx x = { j, si, NULL };
	char *sysinfo;
	struct json_object *o = NULL, *nics, *k;
	size_t alloc = 0;

	memset(si, 0, sizeof(*si));
	if (boots_of_job_each(db, j->id, boot_info_add, &x) < 0)
		return;
	sysinfo = x.sysinfo;
	/* the workload NIC is named in the run spec */
	if (runs_spec_nic(db, j->id, &si->spec_nic) < 0)
		si->spec_nic = NULL;
	if (sysinfo)
		o = json_parse(sysinfo, strlen(sysinfo), "boot sysinfo");
	if (o && json_object_object_get_ex(o, "kernel", &k) && !si->cmdline[0]) {
		struct json_object *c;

		if (json_object_object_get_ex(k, "cmdline", &c) && json_object_is_type(c, json_type_string))
			si->cmdline[0] = xstrdup(json_object_get_string(c));
	}
	if (o && json_object_object_get_ex(o, "pmu", &k) && json_object_is_type(k, json_type_object))
		si->pmu = pmu_words(k);
	if (o && json_object_object_get_ex(o, "nics", &nics) && json_object_is_type(nics, json_type_object)) {
		json_object_object_foreach(nics, name, n) {
			struct json_object *d;
			struct rep_nic *nic;
			int found = 0, tx, rx;

			if (!strcmp(name, "lo") || (si->spec_nic && strcmp(name, si->spec_nic)))
				continue;
			if (!json_object_is_type(n, json_type_object))
				continue;
			if (si->n_nics == alloc) {
				alloc = alloc ? 2 * alloc : 4;
				si->nics = xrealloc(si->nics, alloc * sizeof(*si->nics));
			}
			nic = &si->nics[si->n_nics++];
			nic->name = xstrdup(name);
			nic->driver = NULL;
			if (json_object_object_get_ex(n, "driver", &d) && json_object_is_type(d, json_type_string))
				nic->driver = xstrdup(json_object_get_string(d));
			tx = json_int_or(n, "tx_queues", -1, &found);
			rx = json_int_or(n, "rx_queues", -1, &found);
			nic->tx_queues = found == 2 ? tx : -1;
			nic->rx_queues = found == 2 ? rx : -1;
		}
	}
	json_object_put(o);
	free(sysinfo);
}

void rep_sysinfo_free(struct rep_sysinfo *si)
{
	for (size_t i = 0; i < si->n_nics; i++) {
		free(si->nics[i].name);
		free(si->nics[i].driver);
	}
	free(si->nics);
	free(si->spec_nic);
	free(si->cmdline[0]);
	free(si->cmdline[1]);
	free(si->pmu);
	memset(si, 0, sizeof(*si));
}

struct counts_ctx {
	struct rep_count **out;
	size_t *n;
	size_t alloc;
};

static void count_add(const struct run_count_row *row, void *data)
{
	struct counts_ctx *x = data;
	struct rep_count *c;

	if (!row->workload)
		return;
	if (*x->n == x->alloc) {
		x->alloc = x->alloc ? 2 * x->alloc : 8;
		*x->out = xrealloc(*x->out, x->alloc * sizeof(**x->out));
	}
	c = &(*x->out)[(*x->n)++];
	c->workload = xstrdup(row->workload);
	c->side = side_char(row->side);
	c->boots = row->boots;
	c->runs = row->runs;
}

void rep_counts_load(struct db *db, int64_t job, struct rep_count **out, size_t *n)
{
	struct counts_ctx x = { out, n, 0 };

	*out = NULL;
	*n = 0;
	runs_counts_of_job_each(db, job, count_add, &x);
}

void rep_counts_free(struct rep_count *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(c[i].workload);
	free(c);
}

struct claims_acc {
	struct rep_claim *v;
	size_t n, alloc;
};

static int claim_add(const struct claim_row *row, void *data)
{
	struct claims_acc *acc = data;
	struct rep_claim *c;

	if (acc->n == acc->alloc) {
		acc->alloc = acc->alloc ? 2 * acc->alloc : 4;
		acc->v = xrealloc(acc->v, acc->alloc * sizeof(*acc->v));
	}
	c = &acc->v[acc->n++];
	c->patch_seq = row->patch_seq;
	c->metric = row->metric ? xstrdup(row->metric) : NULL;
	c->direction = row->direction ? xstrdup(row->direction) : NULL;
	c->lo = row->lo_pct;
	c->hi = row->hi_pct;
	c->text = row->text ? xstrdup(row->text) : NULL;
	return 0;
}

void rep_claims_load(struct db *db, int64_t series_id, struct rep_claim **out, size_t *n)
{
	struct claims_acc acc = { NULL, 0, 0 };

	if (series_id)
		series_claims_each(db, series_id, 1, claim_add, &acc);
	*out = acc.v;
	*n = acc.n;
}

void rep_claims_free(struct rep_claim *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(c[i].metric);
		free(c[i].direction);
		free(c[i].text);
	}
	free(c);
}

/* ---- a workload's runs ---- */

void rep_own_headline(struct db *db, int64_t job, const char *wl, char **metric, char **unit)
{
	*metric = *unit = NULL;
	runs_job_headline(db, job, wl, metric);
	runs_job_metric_unit(db, job, wl, *metric ? *metric : "", unit);
}

struct runs_ctx {
	struct plot_run *v;
	int64_t *ids;
	size_t nv, av;
};

static void run_value_add(const struct run_value_row *row, void *data)
{
	struct runs_ctx *x = data;

	if (x->nv == x->av) {
		x->av = x->av ? 2 * x->av : 32;
		x->v = xrealloc(x->v, x->av * sizeof(*x->v));
		x->ids = xrealloc(x->ids, x->av * sizeof(*x->ids));
	}
	x->v[x->nv].side = side_char(row->side);
	x->v[x->nv].boot = (long)row->boot_seq;
	x->v[x->nv].value = row->value;
	x->ids[x->nv] = row->run;
	x->nv++;
}

void rep_runs_load(struct db *db, int64_t job, const char *wl, const char *metric,
		   struct plot_run **out, int64_t **run_ids, size_t *n)
{
	struct runs_ctx x = { NULL, NULL, 0, 0 };

	*out = NULL;
	*run_ids = NULL;
	*n = 0;
	if (runs_metric_values_each(db, job, wl, metric, run_value_add, &x) < 0)
		return;
	*out = x.v;
	*run_ids = x.ids;
	*n = x.nv;
}

static int dbl_cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

int64_t rep_median_run(const struct plot_run *v, const int64_t *ids, size_t n, char side)
{
	double *vals = xmalloc((n + 1) * sizeof(*vals)), med;
	size_t k = 0, i;
	int64_t best = 0;
	double bestd = INFINITY;

	for (i = 0; i < n; i++)
		if (v[i].side == side && isfinite(v[i].value))
			vals[k++] = v[i].value;
	if (!k) {
		free(vals);
		return 0;
	}
	qsort(vals, k, sizeof(*vals), dbl_cmp);
	med = vals[(k - 1) / 2];
	for (i = 0; i < n; i++)
		if (v[i].side == side && isfinite(v[i].value) && fabs(v[i].value - med) < bestd) {
			bestd = fabs(v[i].value - med);
			best = ids[i];
		}
	free(vals);
	return best;
}

char *rep_run_uid(struct db *db, int64_t run)
{
	char *uid = NULL;

	runs_uid(db, run, &uid);
	return uid;
}

struct xy_vec {
	struct plot_xy *v;
	size_t n, a;
};

static void sample_add(double t, double value, void *data)
{
	struct xy_vec *x = data;

	if (x->n == x->a) {
		x->a = x->a ? 2 * x->a : 64;
		x->v = xrealloc(x->v, x->a * sizeof(*x->v));
	}
	x->v[x->n].x = t;
	x->v[x->n].y = value;
	x->n++;
}

size_t rep_samples_load(struct db *db, int64_t run, const char *metric, struct plot_xy **out)
{
	struct xy_vec x = { NULL, 0, 0 };

	*out = NULL;
	if (!run)
		return 0;
	if (samples_each(db, run, metric, sample_add, &x) < 0)
		return 0;
	*out = x.v;
	return x.n;
}

static int cpu_busy_cmp(const void *x, const void *y)
{
	const struct plot_cpu *a = x, *b = y;

	return a->idle < b->idle ? -1 : a->idle > b->idle;
}

struct cpus_ctx {
	struct plot_cpu *v, all;
	size_t n, a;
	int have_all;
};

static void cpu_add(const struct cpu_avg_row *row, void *data)
{
	struct cpus_ctx *x = data;
	struct plot_cpu c;
	int cpu = row->cpu;

	memset(&c, 0, sizeof(c));
	if (cpu < 0)
		snprintf(c.label, sizeof(c.label), "all");
	else
		snprintf(c.label, sizeof(c.label), "cpu%d", cpu);
	c.usr = row->usr;
	c.sys = row->sys;
	c.irq = row->irq;
	c.soft = row->soft;
	c.other = row->other;
	c.idle = row->idle;
	if (cpu < 0) {
		x->all = c;
		x->have_all = 1;
		return;
	}
	if (x->n == x->a) {
		x->a = x->a ? 2 * x->a : 16;
		x->v = xrealloc(x->v, (x->a + 1) * sizeof(*x->v));
	}
	x->v[x->n++] = c;
}

size_t rep_cpus_load(struct db *db, int64_t job, const char *wl, char side, struct plot_cpu **out, size_t *total)
{
	char sd[2] = { side, 0 };
	struct cpus_ctx x;
	struct plot_cpu *v, all;
	size_t n, i;
	int have_all;

	*out = NULL;
	*total = 0;
	memset(&x, 0, sizeof(x));
	if (cpu_stats_avg_each(db, job, wl, sd, cpu_add, &x) < 0)
		return 0;
	v = x.v;
	n = x.n;
	all = x.all;
	have_all = x.have_all;
	*total = n;
	if (n > REP_MAX_CPUS) {
		/* keep the busiest, then put them back in CPU order */
		qsort(v, n, sizeof(*v), cpu_busy_cmp);
		n = REP_MAX_CPUS;
		for (i = 0; i < n; i++)
			for (size_t k = i + 1; k < n; k++)
				if (atoi(v[k].label + 3) < atoi(v[i].label + 3)) {
					struct plot_cpu t = v[i];

					v[i] = v[k];
					v[k] = t;
				}
	}
	if (have_all) {
		v = xrealloc(v, (n + 1) * sizeof(*v));
		memmove(v + 1, v, n * sizeof(*v));
		v[0] = all;
		n++;
	}
	*out = v;
	return n;
}

/* "[1K, 2K)" as bpftrace prints buckets. */
static void bucket_label(char *out, size_t len, double lo, double hi)
{
	char a[16], b[16];
	const struct { double f; const char *s; } u[] = { { 1099511627776.0, "T" }, { 1073741824.0, "G" },
							   { 1048576.0, "M" }, { 1024.0, "K" } };
	for (int k = 0; k < 2; k++) {
		double v = k ? hi : lo;
		char *o = k ? b : a;
		size_t i;

		for (i = 0; i < ARRAY_SIZE(u); i++)
			if (v >= u[i].f && fmod(v, u[i].f) == 0) {
				snprintf(o, 16, "%.0f%s", v / u[i].f, u[i].s);
				break;
			}
		if (i == ARRAY_SIZE(u))
			snprintf(o, 16, "%g", v);
	}
	snprintf(out, len, "[%s, %s)", a, b);
}

struct hists_ctx {
	struct rep_hist **out;
	size_t *n;
	size_t alloc, balloc;
};

static void hist_bucket_add(const struct hist_bucket_row *row, void *data)
{
	struct hists_ctx *x = data;
	struct rep_hist **out = x->out;
	size_t *n = x->n;
	const char *nm = row->name;
	struct rep_hist *h = *n ? &(*out)[*n - 1] : NULL;

	if (!nm)
		nm = "?";
	if (!h || strcmp(h->name, nm)) {
		if (*n == x->alloc) {
			x->alloc = x->alloc ? 2 * x->alloc : 4;
			*out = xrealloc(*out, x->alloc * sizeof(**out));
		}
		h = &(*out)[(*n)++];
		h->name = xstrdup(nm);
		h->bk = NULL;
		h->n = 0;
		x->balloc = 0;
	}
	if (h->n == x->balloc) {
		x->balloc = x->balloc ? 2 * x->balloc : 32;
		h->bk = xrealloc(h->bk, x->balloc * sizeof(*h->bk));
	}
	bucket_label(h->bk[h->n].label, sizeof(h->bk[h->n].label), row->lo, row->hi);
	h->bk[h->n].a = row->a;
	h->bk[h->n].b = row->b;
	h->n++;
}

void rep_hists_load(struct db *db, int64_t job, const char *wl, struct rep_hist **out, size_t *n)
{
	struct hists_ctx x = { out, n, 0, 0 };

	*out = NULL;
	*n = 0;
	histograms_of_job_each(db, job, wl, hist_bucket_add, &x);
}

void rep_hists_free(struct rep_hist *h, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(h[i].name);
		free(h[i].bk);
	}
	free(h);
}

/* ---- profiles ---- */

struct prof_row {
	char *symbol;
	char *dso;
	char side;
	int64_t run;
	double pct;
};

static int prof_row_cmp(const void *x, const void *y)
{
	const struct prof_row *a = x, *b = y;
	int c = strcmp(a->symbol, b->symbol);

	if (c)
		return c;
	return a->side - b->side;
}

static int prof_sym_cmp(const void *x, const void *y)
{
	const struct rep_prof *a = x, *b = y;
	double ma = fmax(a->a, a->b), mb = fmax(b->a, b->b);

	return ma > mb ? -1 : ma < mb;
}

void rep_prof_free(struct rep_prof *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(p[i].symbol);
		free(p[i].dso);
	}
	free(p);
}

struct prof_ctx {
	int nra, nrb;
	struct prof_row *rows;
	size_t n, a;
};

static void prof_runs_add(const char *sd, int64_t runs, void *data)
{
	struct prof_ctx *x = data;

	if (sd && sd[0] == 'A')
		x->nra = (int)runs;
	else if (sd && sd[0] == 'B')
		x->nrb = (int)runs;
}

static void prof_row_add(const struct profile_sum_row *p, void *data)
{
	struct prof_ctx *x = data;
	struct prof_row *r;

	if (x->n == x->a) {
		x->a = x->a ? 2 * x->a : 256;
		x->rows = xrealloc(x->rows, x->a * sizeof(*x->rows));
	}
	r = &x->rows[x->n++];
	r->side = side_char(p->side);
	r->run = p->run;
	r->symbol = xstrdup(p->symbol ? p->symbol : "?");
	r->dso = p->dso ? xstrdup(p->dso) : NULL;
	r->pct = p->percent;
}

int rep_load_profile(struct db *db, int64_t job, const char *wl, size_t limit,
		     struct rep_prof **out, size_t *n_out, int *runs_a, int *runs_b)
{
	struct prof_ctx x;
	struct prof_row *rows;
	struct rep_prof *syms = NULL;
	size_t n, ns = 0, i, k;
	int nra, nrb;

	*out = NULL;
	*n_out = 0;
	memset(&x, 0, sizeof(x));
	if (profile_rows_runs_each(db, job, wl, prof_runs_add, &x) < 0)
		return -1;
	nra = x.nra;
	nrb = x.nrb;
	*runs_a = nra;
	*runs_b = nrb;
	if (!nra && !nrb)
		return 0;
	if (profile_rows_each(db, job, wl, prof_row_add, &x) < 0)
		return -1;
	rows = x.rows;
	n = x.n;
	if (n)
		qsort(rows, n, sizeof(*rows), prof_row_cmp);
	syms = xcalloc(n + 1, sizeof(*syms));
	for (i = 0; i < n; i = k) {
		double *va = xcalloc((size_t)nra + 1, sizeof(double)), *vb = xcalloc((size_t)nrb + 1, sizeof(double));
		size_t ka = 0, kb = 0;
		struct rep_prof *s = &syms[ns++];

		for (k = i; k < n && !strcmp(rows[k].symbol, rows[i].symbol); k++) {
			if (rows[k].side == 'A' && ka < (size_t)nra)
				va[ka++] = rows[k].pct;
			else if (rows[k].side == 'B' && kb < (size_t)nrb)
				vb[kb++] = rows[k].pct;
		}
		s->symbol = xstrdup(rows[i].symbol);
		s->dso = rows[i].dso ? xstrdup(rows[i].dso) : NULL;
		/* runs without the symbol are zeros: the arrays are already zero-filled */
		s->a = nra ? stats_mean(va, (size_t)nra) : NAN;
		s->b = nrb ? stats_mean(vb, (size_t)nrb) : NAN;
		s->p = NAN;
		if (nra >= 3 && nrb >= 3) {
			struct stats_welch w;

			if (stats_welch(va, (size_t)nra, vb, (size_t)nrb, &w) == 0)
				s->p = w.p;
		}
		free(va);
		free(vb);
	}
	for (i = 0; i < n; i++) {
		free(rows[i].symbol);
		free(rows[i].dso);
	}
	free(rows);
	if (ns)
		qsort(syms, ns, sizeof(*syms), prof_sym_cmp);
	for (i = limit; i < ns; i++) {
		free(syms[i].symbol);
		free(syms[i].dso);
	}
	*out = syms;
	*n_out = ns < limit ? ns : limit;
	return 0;
}

/* ---- monitor gaps ---- */

struct gaps_ctx {
	struct rep_gaps *g;
	size_t alloc;
};

static void gaps_recorded_add(const char *side, int64_t runs, int64_t recorded, void *data)
{
	struct rep_gaps *g = ((struct gaps_ctx *)data)->g;
	int b = side_char(side) == 'B';

	g->runs[b] += runs;
	g->recorded[b] += recorded;
}

static void gap_add(const struct monitor_gap_row *row, void *data)
{
	struct gaps_ctx *c = data;
	struct rep_gaps *g = c->g;
	struct rep_gap *x;

	if (g->n == c->alloc) {
		c->alloc = c->alloc ? 2 * c->alloc : 8;
		g->v = xrealloc(g->v, c->alloc * sizeof(*g->v));
	}
	x = &g->v[g->n++];
	x->side = side_char(row->side);
	x->monitor = xstrdup(row->monitor ? row->monitor : "?");
	x->status = xstrdup(row->status ? row->status : "unavailable");
	x->reason = row->reason ? xstrdup(row->reason) : NULL;
	x->runs = row->runs;
}

void rep_gaps_load(struct db *db, int64_t job, const char *wl, struct rep_gaps *g)
{
	struct gaps_ctx c = { g, 0 };

	memset(g, 0, sizeof(*g));
	if (run_monitors_recorded_each(db, job, wl, gaps_recorded_add, &c) < 0)
		return;
	run_monitors_gaps_each(db, job, wl, gap_add, &c);
}

void rep_gaps_free(struct rep_gaps *g)
{
	for (size_t i = 0; i < g->n; i++) {
		free(g->v[i].monitor);
		free(g->v[i].status);
		free(g->v[i].reason);
	}
	free(g->v);
	memset(g, 0, sizeof(*g));
}

/* ---- call stacks ---- */

static int stack_cmp(const void *x, const void *y)
{
	return strcmp(((const struct flame_stack *)x)->stack, ((const struct flame_stack *)y)->stack);
}

struct stacks_ctx {
	struct flame_stack **v;
	size_t *n, *alloc;
	char side;
	int64_t nr;
};

static void stack_add(const char *stack, double share_sum, void *data)
{
	struct stacks_ctx *x = data;
	double share = share_sum / (double)x->nr;

	if (!stack || !*stack)
		return;
	if (*x->n == *x->alloc) {
		*x->alloc = *x->alloc ? 2 * *x->alloc : 256;
		*x->v = xrealloc(*x->v, *x->alloc * sizeof(**x->v));
	}
	(*x->v)[*x->n].stack = xstrdup(stack);
	(*x->v)[*x->n].a = x->side == 'A' ? share : 0;
	(*x->v)[*x->n].b = x->side == 'B' ? share : 0;
	(*x->n)++;
}

/* Add every stack of SIDE, each as its mean share over the side's profiled runs, into *v (merged by stack later). */
static int stacks_side(struct db *db, int64_t job, const char *wl, char side, struct flame_stack **v, size_t *n,
		       size_t *alloc, int *runs)
{
	struct stacks_ctx x = { v, n, alloc, side, 0 };
	int64_t nr = 0;

	if (profile_stacks_runs(db, job, wl, side == 'A' ? "A" : "B", &nr) < 0)
		return -1;
	*runs = (int)nr;
	if (!nr)
		return 0;
	x.nr = nr;
	return profile_stacks_shares_each(db, job, wl, side == 'A' ? "A" : "B", stack_add, &x);
}

int rep_stacks_load(struct db *db, int64_t job, const char *wl, struct flame_stack **out, size_t *n_out,
		    int *runs_a, int *runs_b)
{
	struct flame_stack *v = NULL;
	size_t n = 0, alloc = 0, i, k = 0;

	*out = NULL;
	*n_out = 0;
	*runs_a = *runs_b = 0;
	if (stacks_side(db, job, wl, 'A', &v, &n, &alloc, runs_a) < 0 ||
	    stacks_side(db, job, wl, 'B', &v, &n, &alloc, runs_b) < 0) {
		rep_stacks_free(v, n);
		return -1;
	}
	if (n)
		qsort(v, n, sizeof(*v), stack_cmp);
	/* one entry per stack, with both shares */
	for (i = 0; i < n; i++) {
		if (k && !strcmp(v[k - 1].stack, v[i].stack)) {
			v[k - 1].a += v[i].a;
			v[k - 1].b += v[i].b;
			free(v[i].stack);
			continue;
		}
		v[k++] = v[i];
	}
	*out = v;
	*n_out = k;
	return 0;
}

void rep_stacks_free(struct flame_stack *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].stack);
	free(v);
}

/* ---- the index ---- */

int rep_job_rows_load(struct db *db, int max, struct rep_job_row **out, size_t *n)
{
	struct job_index_row *rows;
	size_t nr;

	*out = NULL;
	*n = 0;
	if (jobs_list_index(db, max, &rows, &nr))
		return -1;
	if (nr)
		*out = xcalloc(nr, sizeof(**out));
	for (size_t i = 0; i < nr; i++) {
		struct rep_job_row *r = &(*out)[i];

		/* the strings move over */
		r->id = rows[i].id;
		r->name = rows[i].name;
		r->state = rows[i].state;
		r->created = rows[i].created;
		r->dut = rows[i].dut;
		r->peer = rows[i].peer;
		r->label_a = rows[i].label_a;
		r->label_b = rows[i].label_b;
		r->subject = rows[i].subject;
		r->scheduled = rows[i].scheduled;
	}
	*n = nr;
	free(rows);
	return 0;
}

void rep_job_rows_free(struct rep_job_row *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].name); free(v[i].state); free(v[i].dut); free(v[i].peer);
		free(v[i].label_a); free(v[i].label_b); free(v[i].subject);
	}
	free(v);
}

int rep_machines_load(struct db *db, struct rep_machine **out, size_t *n)
{
	struct machine_row *rows;
	size_t nr;

	*out = NULL;
	*n = 0;
	if (machines_list(db, &rows, &nr))
		return -1;
	if (nr)
		*out = xcalloc(nr, sizeof(**out));
	for (size_t i = 0; i < nr; i++) {
		struct rep_machine *m = &(*out)[i];

		/* the strings move over */
		m->name = rows[i].name;
		m->host = rows[i].host;
		m->role = rows[i].role;
		m->state = rows[i].state;
		m->reason = rows[i].state_reason;
		m->last_kernel = rows[i].last_kernel;
		m->last_seen = rows[i].last_seen;
		m->leased = rows[i].leased;
		m->lease_job = rows[i].lease_job;
		free(rows[i].last_build_id);
	}
	*n = nr;
	free(rows);
	return 0;
}

void rep_machines_free(struct rep_machine *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].name); free(v[i].host); free(v[i].role); free(v[i].state);
		free(v[i].reason); free(v[i].last_kernel);
	}
	free(v);
}

/* ---- nightly history ---- */

int rep_history_keys(struct db *db, struct strvec *out)
{
	return comparisons_metric_keys(db, out);
}

char *rep_metric_unit(struct db *db, const char *wl, const char *metric)
{
	char *unit = NULL;

	comparisons_unit(db, wl, metric, &unit);
	if (!unit)
		runs_metric_unit(db, wl, metric, &unit);
	return unit;
}

static void nightly_metrics_free(struct rep_nightly *nw)
{
	for (size_t i = 0; i < nw->n; i++) {
		free(nw->m[i].name);
		free(nw->m[i].p);
	}
	free(nw->m);
	free(nw->wl);
	nw->m = NULL;
	nw->wl = NULL;
	nw->n = nw->alloc = 0;
}

void rep_nightly_free(struct rep_nightly *nw)
{
	nightly_metrics_free(nw);
	free(nw->night);
	memset(nw, 0, sizeof(*nw));
}

struct nights {
	struct rep_nightly *nw;
	size_t alloc;
};

static void add_night(int64_t id, double created, void *data)
{
	struct nights *a = data;
	struct rep_nightly *nw = a->nw;

	if (nw->n_night == a->alloc) {
		a->alloc = a->alloc ? 2 * a->alloc : 256;
		nw->night = xrealloc(nw->night, a->alloc * sizeof(*nw->night));
	}
	nw->night[nw->n_night++] = (struct rep_night){ id, created };
}

/* The scheduled jobs, by id. */
static int nights_read(struct db *db, struct rep_nightly *nw)
{
	struct nights a = { nw, 0 };

	nw->nights_read = jobs_each_scheduled(db, add_night, &a) == 0;
	return nw->nights_read ? 0 : -1;
}

static int night_cmp(const void *key, const void *elem)
{
	int64_t a = *(const int64_t *)key, b = ((const struct rep_night *)elem)->job;

	return a < b ? -1 : a > b;
}

static const struct rep_night *night_of(const struct rep_nightly *nw, int64_t job)
{
	return nw->n_night ? bsearch(&job, nw->night, nw->n_night, sizeof(*nw->night), night_cmp) : NULL;
}

static int hpoint_cmp(const void *pa, const void *pb)
{
	const struct rep_hpoint *a = pa, *b = pb;

	if (a->created != b->created)
		return a->created < b->created ? -1 : 1;
	return a->job < b->job ? -1 : a->job > b->job;
}

/* Oldest first: by creation time, then id (in id order already, unless a clock went back). */
static void hpoints_sort(struct rep_hpoint *p, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (hpoint_cmp(&p[i - 1], &p[i]) > 0) {
			qsort(p, n, sizeof(*p), hpoint_cmp);
			return;
		}
}

struct nightly_ctx {
	struct rep_nightly *nw;
	struct rep_nightly_metric *m;
};

static void night_value_add(const struct job_metric_row *row, void *data)
{
	struct nightly_ctx *x = data;
	struct rep_nightly *nw = x->nw;
	struct rep_nightly_metric *m = x->m;
	const char *name = row->name;
	const struct rep_night *night = night_of(nw, row->job_id);
	struct rep_hpoint *p;

	if (!name || !night)
		return;
	if (!m || strcmp(m->name, name)) {
		if (nw->n == nw->alloc) {
			nw->alloc = nw->alloc ? 2 * nw->alloc : 16;
			nw->m = xrealloc(nw->m, nw->alloc * sizeof(*nw->m));
		}
		m = x->m = &nw->m[nw->n++];
		m->name = xstrdup(name);
		m->p = NULL;
		m->n = m->alloc = 0;
	}
	if (m->n && m->p[m->n - 1].job == night->job) {
		p = &m->p[m->n - 1];	/* the newer side (B after A) */
	} else {
		if (m->n == m->alloc) {
			m->alloc = m->alloc ? 2 * m->alloc : 32;
			m->p = xrealloc(m->p, m->alloc * sizeof(*m->p));
		}
		p = &m->p[m->n++];
	}
	*p = (struct rep_hpoint){ night->job, night->created, row->value, row->n };
}

static int nightly_read(struct db *db, struct rep_nightly *nw, const char *wl)
{
	/*
	 * A night's value: the mean of the measured runs of its newer side
	 * that has the metric, as job_metrics keeps it, so that warm-up runs
	 * are left out and the side is chosen as `klab history` chooses it.
	 * The workload's rows of every job in the order of job_metrics_series,
	 * which holds all they need (migration 0018), the nights picked here:
	 * with the nights joined in the statement PostgreSQL hashed them and
	 * sorted 100k rows by name (430 ms at 100M metric rows, against 60).
	 */
	struct nightly_ctx x = { nw, NULL };
	int rc;

	nightly_metrics_free(nw);
	if (!nw->nights_read && nights_read(db, nw) < 0)
		return -1;
	nw->wl = xstrdup(wl);
	rc = job_metrics_of_workload_each(db, wl, night_value_add, &x);
	for (size_t i = 0; i < nw->n; i++)
		hpoints_sort(nw->m[i].p, nw->m[i].n);
	return rc;
}

int rep_nightly_load(struct db *db, struct rep_nightly *nw, const char *wl, const char *metric,
		     const struct rep_hpoint **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if ((!nw->wl || strcmp(nw->wl, wl)) && nightly_read(db, nw, wl) < 0) {
		rep_nightly_free(nw);
		return -1;
	}
	/* the names came sorted by the database's collation: look them up one by one */
	for (size_t i = 0; i < nw->n; i++)
		if (!strcmp(nw->m[i].name, metric)) {
			*out = nw->m[i].p;
			*n = nw->m[i].n;
			break;
		}
	return 0;
}

struct cps_ctx {
	struct rep_cp **out;
	size_t *n;
	size_t alloc;
};

static void cp_add(const struct changepoint_info *row, void *data)
{
	struct cps_ctx *x = data;
	struct rep_cp *c;

	if (*x->n == x->alloc) {
		x->alloc = x->alloc ? 2 * x->alloc : 8;
		*x->out = xrealloc(*x->out, x->alloc * sizeof(**x->out));
	}
	c = &(*x->out)[(*x->n)++];
	c->job = row->job_id;
	c->tree = row->tree ? xstrdup(row->tree) : NULL;
	c->machines = row->machines ? xstrdup(row->machines) : NULL;
	c->mean_before = row->mean_before;
	c->mean_after = row->mean_after;
	c->change_pct = row->change_pct;
	c->p = row->p;
	c->created = row->created;
}

int rep_changepoints_load(struct db *db, const char *wl, const char *metric, struct rep_cp **out, size_t *n)
{
	struct cps_ctx x = { out, n, 0 };

	*out = NULL;
	*n = 0;
	return changepoints_each(db, wl, metric, cp_add, &x);
}

void rep_changepoints_free(struct rep_cp *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(c[i].tree);
		free(c[i].machines);
	}
	free(c);
}

char *rep_profile_cpus(struct db *db, int64_t job, const char *workload)
{
	char *out = NULL;

	if (runs_profile_cpus(db, job, workload, &out) < 0)
		return NULL;
	return out;
}
