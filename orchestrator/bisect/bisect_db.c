/* bisect_db.c: bisections in the database: start (every check of the input first), cancel. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisect/bisect_db.h"
#include "job/job.h"
#include "jsonh.h"
#include "store/jobs.h"
#include "log.h"
#include "run.h"
#include "store/bisections.h"
#include "store/runs.h"
#include "strvec.h"
#include "util.h"

/* git -C DIR ARGS...: its exit status (-1: it did not run); stdout into out (may be NULL). */
static int git(const char *dir, const char *const *args, struct buf *out)
{
	struct strvec av = STRVEC_INIT;
	struct run_cmd c = RUN_CMD_INIT;
	int ret;

	strvec_push(&av, "git");
	strvec_push(&av, "-C");
	strvec_push(&av, dir);
	strvec_pushv(&av, args);
	c.argv = (const char *const *)av.v;
	c.timeout_ms = 120000;
	ret = run_command(&c) ? -1 : c.status;
	if (out) {
		buf_reset(out);
		buf_addstr(out, c.out.buf);
		buf_trim(out);
	}
	run_release(&c);
	strvec_clear(&av);
	return ret;
}

static int resolve(struct buf *err, const char *dir, const char *tree, const char *what, const char *ref, char **sha)
{
	struct buf out = BUF_INIT;
	char *spec = xasprintf("%s^{commit}", ref);
	const char *args[] = { "rev-parse", "--verify", "--quiet", spec, NULL };
	int rc = git(dir, args, &out);

	free(spec);
	if (rc || !out.len) {
		buf_release(&out);
		return error_to(err, "tree '%s': the %s '%s' is not a commit there (git rev-parse)", tree, what, ref);
	}
	*sha = buf_detach(&out, NULL);
	return 0;
}

static int runs_workload(const struct conf_job *j, const char *w)
{
	for (size_t i = 0; i < j->workloads.n; i++)
		if (!strcmp(j->workloads.v[i], w))
			return 1;
	return 0;
}

/*
 * The [job] that measures each commit (its machines, runs, warm-up and
 * tuning): the one named, or the only job of the tree that runs the
 * workload. Its dut must be able to change kernel.
 */
static const struct conf_job *template_job(const struct klab_config *cfg, const struct bisect_start_opts *o,
					    struct buf *err)
{
	const struct conf_job *j = NULL;
	const struct conf_machine *dut = NULL;

	if (o->job) {
		if (!(j = conf_job(cfg, o->job)))
			return error_to(err, "no job '%s' in the config (--job names a [job] section)", o->job), NULL;
		if (!j->tree || strcmp(j->tree, o->tree))
			return error_to(err, "job '%s' builds tree '%s', not '%s'", o->job, j->tree ? j->tree : "(the built-in one)",
				     o->tree), NULL;
		if (!runs_workload(j, o->workload))
			return error_to(err, "job '%s' does not run workload '%s'", o->job, o->workload), NULL;
	} else {
		for (size_t i = 0; i < cfg->n_jobs; i++) {
			const struct conf_job *c = &cfg->jobs[i];
			if (!c->tree || strcmp(c->tree, o->tree) || !runs_workload(c, o->workload))
				continue;
			if (j)
				return error_to(err, "jobs '%s' and '%s' both run workload '%s' on tree '%s': name one with --job",
					     j->name, c->name, o->workload, o->tree), NULL;
			j = c;
		}
		if (!j)
			return error_to(err, "no [job] of tree '%s' runs workload '%s': add one (its machines and runs measure "
				     "each commit) or name one with --job", o->tree, o->workload), NULL;
	}
	if (j->machines.n)
		dut = conf_machine(cfg, j->machines.v[0]);
	for (size_t i = 0; !dut && j->pool && i < cfg->n_machines; i++)
		if (cfg->machines[i].pool && !strcmp(cfg->machines[i].pool, j->pool) && cfg->machines[i].role == ROLE_DUT)
			dut = &cfg->machines[i];
	if (dut && dut->boot == BOOT_NONE)
		return error_to(err, "job '%s': its dut '%s' has boot = none and cannot boot the commits of a bisection "
			     "(a kexec or qemu machine can)", j->name, dut->name), NULL;
	return j;
}

int64_t bisect_start(struct db *db, const struct klab_config *cfg, const struct bisect_start_opts *o,
		     struct buf *err)
{
	const struct conf_job *job;
	const struct conf_tree *t = o->tree ? conf_tree(cfg, o->tree) : NULL;
	char *good = NULL, *bad = NULL, *range = NULL;
	struct buf out = BUF_INIT, is_git = BUF_INIT;
	struct json_object *spec = NULL, *commits, *subjects;
	struct strvec list = STRVEC_INIT;
	int64_t id = -1, runs = 0, has = 0;
	const char *metric = o->metric;

	if (!o->tree || !o->good || !o->bad || !o->workload)
		return error_to(err, "bisect start needs --tree, --good, --bad and --workload");
	if (!t)
		return error_to(err, "no tree '%s' in the config (a [tree \"%s\"] section)", o->tree, o->tree);
	if (!t->git) {
		return error_to(err, "tree '%s' has no git history (it is a tarball tree): a bisection needs one; "
			     "import the tarball into git (git init, add, commit) and name it with git = PATH", o->tree);
	}
	{
		const char *args[] = { "rev-parse", "--is-inside-work-tree", NULL };
		if (git(t->git, args, &is_git) || strcmp(is_git.buf, "true")) {
			buf_release(&is_git);
			return error_to(err, "tree '%s': '%s' is not a local git work tree (a bisection needs its history)",
				     o->tree, t->git);
		}
		buf_release(&is_git);
	}
	if (!conf_workload(cfg, o->workload))
		return error_to(err, "unknown workload '%s' (no [workload \"%s\"] in the config)", o->workload, o->workload);
	if (!(job = template_job(cfg, o, err)))
		return -1;
	if (!metric) {
		metric = conf_workload(cfg, o->workload)->headline;
		if (!metric || !*metric)
			return error_to(err, "workload '%s' has no headline metric: name one with --metric", o->workload);
	}
	/* a metric the workload never produced in any stored run is refused (when it has runs) */
	runs_workload_metric_count(db, o->workload, metric, &runs, &has);
	if (runs) {
		if (!has)
			return error_to(err, "workload '%s' does not produce metric '%s' (none in its %lld stored runs)",
				     o->workload, metric, (long long)runs);
	}
	if (resolve(err, t->git, o->tree, "good", o->good, &good) || resolve(err, t->git, o->tree, "bad", o->bad, &bad))
		goto out;
	if (!strcmp(good, bad)) {
		error_to(err, "good '%s' and bad '%s' are the same commit %s: nothing to bisect", o->good, o->bad, good);
		goto out;
	}
	{
		const char *args[] = { "merge-base", "--is-ancestor", good, bad, NULL };
		int rc = git(t->git, args, NULL);
		if (rc) {
			error_to(err, "bad '%s' does not descend from good '%s' in tree '%s'%s", o->bad, o->good, o->tree,
			      rc == 1 ? "" : " (git merge-base failed)");
			goto out;
		}
	}
	range = xasprintf("%s..%s", good, bad);
	{
		const char *args[] = { "log", "--reverse", "--first-parent", "--format=%H %s", range, NULL };
		if (git(t->git, args, &out)) {
			error_to(err, "tree '%s': cannot list the commits %s", o->tree, range);
			goto out;
		}
	}
	strvec_split(&list, out.buf, "\n");
	spec = json_object_new_object();
	commits = json_object_new_array();
	subjects = json_object_new_array();
	for (size_t i = 0; i < list.n; i++) {
		const char *sp = strchr(list.v[i], ' ');
		json_object_array_add(commits, json_object_new_string_len(list.v[i], sp ? (int)(sp - list.v[i]) :
									   (int)strlen(list.v[i])));
		json_object_array_add(subjects, json_str(sp ? sp + 1 : ""));
	}
	json_object_object_add(spec, "commits", commits);
	json_object_object_add(spec, "subjects", subjects);
	json_object_object_add(spec, "job", json_str(job->name));
	json_object_object_add(spec, "min_boots", json_object_new_int(o->min_boots));
	json_object_object_add(spec, "max_boots", json_object_new_int(o->max_boots));
	json_object_object_add(spec, "end_boots", json_object_new_int(o->end_boots > 0 ? o->end_boots : 2 * o->min_boots));
	{
		struct buf js = BUF_INIT;
		json_to_buf(&js, spec, 0);
		int64_t bid;

		if (!bisection_insert(db, o->tree, good, bad, o->good, o->bad, o->workload, metric, o->alpha, js.buf,
				      now_wall(), &bid))
			id = bid;
		else if (err)
			error_to(err, "cannot store the bisection: %s", db_errmsg(db));
		buf_release(&js);
	}
out:
	if (spec)
		json_object_put(spec);
	strvec_clear(&list);
	buf_release(&out);
	free(good);
	free(bad);
	free(range);
	return id;
}

int bisect_cancel(struct db *db, int64_t id)
{
	char *state = NULL;
	int ret = 0;

	if (bisection_state(db, id, &state) != 1)
		return error("no bisection %lld (klab bisect list shows them)", (long long)id);
	if (!strcmp(state, "queued") || !strcmp(state, "running")) {
		struct job_brief *v = NULL;
		size_t n = 0;

		ret = bisection_set_cancelled(db, id, now_wall());
		/* the job measuring a step stops at its next safe point (a queued one at once) */
		if (!ret)
			jobs_list_bisection_open(db, id, &v, &n);
		for (size_t i = 0; !ret && i < n; i++)
			ret = job_cancel(db, v[i].id);
		job_briefs_free(v, n);
	} else
		ret = error("bisection %lld is already %s", (long long)id, state);
	free(state);
	return ret;
}
