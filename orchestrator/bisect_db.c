/* bisect_db.c: bisections in the database: start (every check of the input first), cancel. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisect_db.h"
#include "jsonh.h"
#include "log.h"
#include "run.h"
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

static int resolve(const char *dir, const char *tree, const char *what, const char *ref, char **sha)
{
	struct buf out = BUF_INIT;
	char *spec = xasprintf("%s^{commit}", ref);
	const char *args[] = { "rev-parse", "--verify", "--quiet", spec, NULL };
	int rc = git(dir, args, &out);

	free(spec);
	if (rc || !out.len) {
		buf_release(&out);
		return error("tree '%s': the %s '%s' is not a commit there (git rev-parse)", tree, what, ref);
	}
	*sha = buf_detach(&out, NULL);
	return 0;
}

int64_t bisect_start(struct db *db, const struct klab_config *cfg, const struct bisect_start_opts *o)
{
	const struct conf_tree *t = o->tree ? conf_tree(cfg, o->tree) : NULL;
	char *good = NULL, *bad = NULL, *range = NULL;
	struct buf out = BUF_INIT, is_git = BUF_INIT;
	struct json_object *spec = NULL, *commits;
	struct strvec list = STRVEC_INIT;
	int64_t id = -1, runs = 0, has = 0;
	const char *metric = o->metric;

	if (!o->tree || !o->good || !o->bad || !o->workload)
		return error("bisect start needs --tree, --good, --bad and --workload");
	if (!t)
		return error("no tree '%s' in the config (a [tree \"%s\"] section)", o->tree, o->tree);
	if (!t->git) {
		return error("tree '%s' has no git history (it is a tarball tree): a bisection needs one; "
			     "import the tarball into git (git init, add, commit) and name it with git = PATH", o->tree);
	}
	{
		const char *args[] = { "rev-parse", "--is-inside-work-tree", NULL };
		if (git(t->git, args, &is_git) || strcmp(is_git.buf, "true")) {
			buf_release(&is_git);
			return error("tree '%s': '%s' is not a local git work tree (a bisection needs its history)",
				     o->tree, t->git);
		}
		buf_release(&is_git);
	}
	if (!conf_workload(cfg, o->workload))
		return error("unknown workload '%s' (no [workload \"%s\"] in the config)", o->workload, o->workload);
	if (!metric) {
		metric = conf_workload(cfg, o->workload)->headline;
		if (!metric || !*metric)
			return error("workload '%s' has no headline metric: name one with --metric", o->workload);
	}
	/* a metric the workload never produced in any stored run is refused (when it has runs) */
	db_get_int(db, &runs, "SELECT count(*) FROM runs WHERE workload = ?", "s", o->workload);
	if (runs) {
		db_get_int(db, &has, "SELECT count(*) FROM metrics m JOIN runs r ON r.id = m.run_id "
			   "WHERE r.workload = ? AND m.name = ?", "ss", o->workload, metric);
		if (!has)
			return error("workload '%s' does not produce metric '%s' (none in its %lld stored runs)",
				     o->workload, metric, (long long)runs);
	}
	if (resolve(t->git, o->tree, "good", o->good, &good) || resolve(t->git, o->tree, "bad", o->bad, &bad))
		goto out;
	if (!strcmp(good, bad)) {
		error("good '%s' and bad '%s' are the same commit %s: nothing to bisect", o->good, o->bad, good);
		goto out;
	}
	{
		const char *args[] = { "merge-base", "--is-ancestor", good, bad, NULL };
		int rc = git(t->git, args, NULL);
		if (rc) {
			error("bad '%s' does not descend from good '%s' in tree '%s'%s", o->bad, o->good, o->tree,
			      rc == 1 ? "" : " (git merge-base failed)");
			goto out;
		}
	}
	range = xasprintf("%s..%s", good, bad);
	{
		const char *args[] = { "rev-list", "--reverse", "--first-parent", range, NULL };
		if (git(t->git, args, &out)) {
			error("tree '%s': cannot list the commits %s", o->tree, range);
			goto out;
		}
	}
	strvec_split(&list, out.buf, "\n");
	spec = json_object_new_object();
	commits = json_object_new_array();
	for (size_t i = 0; i < list.n; i++)
		json_object_array_add(commits, json_str(list.v[i]));
	json_object_object_add(spec, "commits", commits);
	json_object_object_add(spec, "min_boots", json_object_new_int(o->min_boots));
	json_object_object_add(spec, "max_boots", json_object_new_int(o->max_boots));
	{
		struct buf js = BUF_INIT;
		json_to_buf(&js, spec, 0);
		if (!db_run(db, "INSERT INTO bisections (tree, good, bad, good_ref, bad_ref, workload, metric, alpha, "
			    "spec, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", "sssssssdsd", o->tree, good, bad,
			    o->good, o->bad, o->workload, metric, o->alpha, js.buf, now_wall()))
			id = db_last_id(db);
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

	if (db_get_str(db, &state, "SELECT state FROM bisections WHERE id = ?", "i", id) != 1)
		return error("no bisection %lld (klab bisect list shows them)", (long long)id);
	if (!strcmp(state, "queued") || !strcmp(state, "running"))
		ret = db_run(db, "UPDATE bisections SET state = 'cancelled', cancel = 1, finished = ?, "
			     "error = 'cancelled by request' WHERE id = ?", "di", now_wall(), id);
	else
		ret = error("bisection %lld is already %s", (long long)id, state);
	free(state);
	return ret;
}
