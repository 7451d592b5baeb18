/* job_ctx.c: what the job runner's files share about the running job: its step's failure and progress, its sides, workloads and machines. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/db.h"
#include "job/job_int.h"
#include "jsonh.h"
#include "lab/lease.h"
#include "log.h"
#include "progress.h"
#include "util.h"

int step_fail(struct job_ctx *j, const char *fmt, ...)
{
	struct buf msg = BUF_INIT;
	va_list ap;

	/* formatted aside first: an argument may be the reason of the step before (j->why.buf) */
	va_start(ap, fmt);
	buf_vaddf(&msg, fmt, ap);
	va_end(ap);
	buf_reset(&j->why);
	buf_addstr(&j->why, msg.buf);
	buf_release(&msg);
	return STEP_FAIL;
}

int skip_step(struct job_ctx *j, const char *fmt, ...)
{
	va_list ap;

	buf_reset(&j->why);
	va_start(ap, fmt);
	buf_vaddf(&j->why, fmt, ap);
	va_end(ap);
	return SKIPPED;
}

void job_print(struct job_ctx *j, const char *fmt, ...)
{
	va_list ap;
	char msg[1024];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (j->o->progress) {
		progress_clear();
		printf("[%7.1fs] %s%s%s\n", (now_ms() - j->t0) / 1000.0, j->slot ? j->dut->name : "",
		       j->slot ? ": " : "", msg);
		fflush(stdout);
	} else if (j->slot) {
		info("%s: %s", j->dut->name, msg);
	} else {
		info("%s", msg);
	}
}

const char *obj_str(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

struct json_object *obj_get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	json_object_object_get_ex(o, key, &v);
	return v;
}

int64_t side_kernel(struct job_ctx *j, char side)
{
	int64_t k = 0;

	if (job_sides_kernel(j->db, j->id, side, &k) != 1)
		return 0;
	return k;
}

/* Test hook: KLAB_TEST_KILL_AT=KEY[@PHASE] kills this process on the first attempt of KEY. */
void test_kill_point(struct job_ctx *j, const char *key, const char *phase)
{
	const char *spec = getenv("KLAB_TEST_KILL_AT");
	const char *at;
	size_t n;

	if (!spec || j->attempt != 1)
		return;
	at = strchr(spec, '@');
	n = at ? (size_t)(at - spec) : strlen(spec);
	if (strlen(key) != n || strncmp(spec, key, n))
		return;
	if (strcmp(at ? at + 1 : "start", phase))
		return;
	fprintf(stderr, "klab: test hook: SIGKILL at step %s (%s)\n", key, phase);
	fflush(NULL);
	raise(SIGKILL);
}

void use_machines(struct job_ctx *j, const struct conf_machine *dut, const struct conf_machine *peer)
{
	j->dut = dut;
	j->peer = peer;
	free(j->state_dut);
	free(j->state_peer);
	j->state_dut = xasprintf("%s/state-%s", j->cfg->lab.agent_dir, dut->name);
	j->state_peer = xasprintf("%s/state-%s", j->cfg->lab.agent_dir, peer->name);
}

/* Resolve dut and peer from the config (after the lease, from the job row). */
int resolve_machines(struct job_ctx *j, struct buf *err)
{
	char *dut = NULL, *peer = NULL;
	int ret = -1;

	if (j->dut)
		return 0;
	jobs_get_str(j->db, j->id, JOB_DUT, &dut);
	jobs_get_str(j->db, j->id, JOB_PEER, &peer);
	if (!dut || !peer) {
		ret = error_to(err, "job %lld has no machines yet", (long long)j->id);
		goto out;
	}
	if (!conf_machine(j->cfg, dut) || !conf_machine(j->cfg, peer)) {
		ret = error_to(err, "machine '%s' of job %lld is no longer in the config",
			       !conf_machine(j->cfg, dut) ? dut : peer, (long long)j->id);
		goto out;
	}
	use_machines(j, conf_machine(j->cfg, dut), conf_machine(j->cfg, peer));
	ret = 0;
out:
	free(dut);
	free(peer);
	return ret;
}

int cancel_requested(struct job_ctx *j)
{
	int64_t c = 0;

	jobs_get_int(j->db, j->id, JOB_CANCEL, &c);
	return c != 0;
}

int step_state(struct job_ctx *j, const char *key, char **state)
{
	*state = NULL;
	return steps_get_state(j->db, j->id, key, state);
}

long guest_ms(const struct job_ctx *j, long ms)
{
	return job_icount(j) ? ms * 20 : ms;
}

int job_icount(const struct job_ctx *j)
{
	return j->dut && j->dut->clock && !strcmp(j->dut->clock, "icount");
}
