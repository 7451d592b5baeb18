/* job_pairs.c: a job's boots on several pairs of its pool at once (spec pairs > 1): a round of boots, a child process each. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "store/db.h"
#include "store/runs.h"
#include "job/job_int.h"
#include "lab/lease.h"
#include "log.h"
#include "util.h"

/* What a child of a round exits with. */
enum { CHILD_OK = 0, CHILD_FAIL = 1, CHILD_STOP = 2, CHILD_CANCEL = 3 };

/* One boot of a round: the boot, the pair it runs on, its child. */
struct round_boot {
	int b;
	const struct conf_machine *dut;	/* its pair's dut; the peer is dut->peer */
	pid_t pid;
	int fd;				/* read end of the child's pipe: "KEY\tREASON" when it did not end well */
	int code;			/* CHILD_* once it ended, -1 while it runs */
	struct buf msg;
};

/* 1 when every step of boot B is done or skipped. */
static int boot_done(struct job_ctx *j, int b)
{
	for (size_t i = 0; i < j->plan.n; i++) {
		const char *k = j->plan.v[i];
		char *st = NULL;
		int done;

		if (step_boot(k) != b)
			continue;
		step_state(j, k, &st);
		done = st && (!strcmp(st, "done") || !strcmp(st, "skipped"));
		free(st);
		if (!done)
			return 0;
	}
	return 1;
}

/* 1 when the plan looks at the job right after boot B (look:N follows boot 2N): a round stops there. */
static int look_after(const struct job_ctx *j, int b)
{
	char k[32];

	if (b % 2)
		return 0;
	snprintf(k, sizeof(k), "look:%d", b / 2);
	for (size_t i = 0; i < j->plan.n; i++)
		if (!strcmp(j->plan.v[i], k))
			return 1;
	return 0;
}

/*
 * Give each boot of the round a pair of PAIRS: a boot that began already
 * (a resumed job) keeps its machine; the others take, in boot order, a pair
 * whose last boot in this job was of the other side, else a pair with no
 * boot yet, else any. So each pair alternates between the sides, and the
 * ABBA balance holds on every pair as well as over time.
 */
static void assign_pairs(struct job_ctx *j, struct round_boot *rb, int n, const struct conf_machine **pairs)
{
	char last[64] = { 0 };
	int used[64] = { 0 };

	for (int b = 1; b < rb[0].b; b++) {
		char *on = NULL;

		boots_get(j->db, j->id, b, BOOT_MACHINE, &on);
		for (int k = 0; on && k < n; k++)
			if (!strcmp(on, pairs[k]->name))
				last[k] = j->order[b - 1];
		free(on);
	}
	for (int i = 0; i < n; i++) {
		char *on = NULL;

		rb[i].dut = NULL;
		boots_get(j->db, j->id, rb[i].b, BOOT_MACHINE, &on);
		for (int k = 0; on && k < n; k++)
			if (!used[k] && !strcmp(on, pairs[k]->name)) {
				rb[i].dut = pairs[k];
				used[k] = 1;
				break;
			}
		free(on);
	}
	for (int i = 0; i < n; i++) {
		char side = j->order[rb[i].b - 1];
		int pick = -1;

		if (rb[i].dut)
			continue;
		for (int k = 0; k < n && pick < 0; k++)
			if (!used[k] && last[k] && last[k] != side)
				pick = k;
		for (int k = 0; k < n && pick < 0; k++)
			if (!used[k] && !last[k])
				pick = k;
		for (int k = 0; k < n && pick < 0; k++)
			if (!used[k])
				pick = k;
		rb[i].dut = pairs[pick];
		used[pick] = 1;
	}
}

/* The child of boot R: its own database connection and SSH sessions, the boot's steps on its pair. */
static void KLAB_NORETURN run_child(struct job_ctx *j, const struct round_boot *r, int slot, int fd,
				     int (*run_boot)(struct job_ctx *j, int b))
{
	struct db *db;
	int rc, code;

	j->slot = slot;
	if (db_reopen(j->db, &db)) {
		dprintf(fd, "boot:%d:deploy\tcannot open the database in the process of boot %d", r->b, r->b);
		_exit(CHILD_FAIL);
	}
	j->db = db;
	use_machines(j, r->dut, conf_machine(j->cfg, r->dut->peer));
	/* a boot that fails is restored by the job's cleanup, as a boot whose process died */
	rc = run_boot(j, r->b);
	code = rc == STEP_OK ? CHILD_OK : rc == STEP_STOP ? CHILD_STOP : rc == STEP_CANCEL ? CHILD_CANCEL : CHILD_FAIL;
	if (code != CHILD_OK)
		/* short of a pipe buffer, so the child never waits on a parent that reads after it ended */
		dprintf(fd, "%s\t%.4000s", j->pos < j->plan.n ? j->plan.v[j->pos] : "", j->why.buf);
	close_machines(j);
	db_close(db);
	fflush(NULL);
	_exit(code);
}

/* The step of boot B that was running (its process died in it), else its deploy: the plan's string. */
static const char *running_key(struct job_ctx *j, int b)
{
	const char *key = NULL;

	for (size_t i = 0; i < j->plan.n; i++) {
		char *st = NULL;

		if (step_boot(j->plan.v[i]) != b)
			continue;
		if (!key)
			key = j->plan.v[i];
		step_state(j, j->plan.v[i], &st);
		if (st && !strcmp(st, "running"))
			key = j->plan.v[i];
		free(st);
	}
	return key ? key : "";
}

/* Wait for every child of the round; a stop request is passed on to them (each ends after its step). */
static void wait_round(struct job_ctx *j, struct round_boot *rb, int n)
{
	int left = n, told = 0;

	while (left) {
		for (int i = 0; i < n; i++) {
			int status;
			pid_t p;

			if (rb[i].code >= 0)
				continue;
			p = waitpid(rb[i].pid, &status, WNOHANG);
			if (p == 0)
				continue;
			if (p < 0 && errno == EINTR)
				continue;
			left--;
			buf_read_fd(&rb[i].msg, rb[i].fd);
			close(rb[i].fd);
			if (p < 0) {
				rb[i].code = CHILD_FAIL;
				buf_addf(&rb[i].msg, "\tcannot wait for the process of boot %d: %s", rb[i].b, strerror(errno));
			} else if (WIFEXITED(status)) {
				rb[i].code = WEXITSTATUS(status) <= CHILD_CANCEL ? WEXITSTATUS(status) : CHILD_FAIL;
			} else {
				rb[i].code = CHILD_FAIL;
				buf_reset(&rb[i].msg);
				buf_addf(&rb[i].msg, "%s\tthe process of boot %d died (signal %d)", running_key(j, rb[i].b),
					 rb[i].b, WIFSIGNALED(status) ? WTERMSIG(status) : 0);
			}
		}
		if (left && j->o->stop && *j->o->stop && !told) {
			for (int i = 0; i < n; i++)
				if (rb[i].code < 0)
					kill(rb[i].pid, SIGTERM);
			told = 1;
		}
		if (left)
			usleep(100 * 1000);
	}
}

/* The outcome of a round: the first failure in boot order, else a cancel, else a stop; j->pos and j->why at it. */
static int round_outcome(struct job_ctx *j, struct round_boot *rb, int n)
{
	static const int rank[] = { [CHILD_OK] = 0, [CHILD_STOP] = 1, [CHILD_CANCEL] = 2, [CHILD_FAIL] = 3 };
	int worst = -1;
	const char *tab, *key;

	for (int i = 0; i < n; i++)
		if (rb[i].code != CHILD_OK && (worst < 0 || rank[rb[i].code] > rank[rb[worst].code]))
			worst = i;
	if (worst < 0)
		return STEP_OK;
	key = rb[worst].msg.buf;
	tab = strchr(key, '\t');
	buf_reset(&j->why);
	if (rb[worst].code == CHILD_FAIL)
		buf_addf(&j->why, "on machine '%s': %s", rb[worst].dut->name, tab ? tab + 1 : "its process ended badly");
	for (size_t i = 0; tab && i < j->plan.n; i++)
		if (strlen(j->plan.v[i]) == (size_t)(tab - key) && !strncmp(j->plan.v[i], key, (size_t)(tab - key)))
			j->pos = i;
	return rb[worst].code == CHILD_FAIL ? STEP_FAIL : rb[worst].code == CHILD_CANCEL ? STEP_CANCEL : STEP_STOP;
}

int run_round(struct job_ctx *j, int b, int (*run_boot)(struct job_ctx *j, int b))
{
	const struct conf_machine *pairs[64];
	struct round_boot rb[64];
	struct buf why = BUF_INIT;
	int n = 0, got, rc;
	size_t nboots = strlen(j->order);

	if (boot_done(j, b))
		return STEP_OK;
	/* the round: boot B and the unfinished boots after it, up to the spec's pairs, not past a look */
	for (int k = b; (size_t)k <= nboots && n < j->spec.pairs && n < 64; k++) {
		if (!boot_done(j, k))
			rb[n++].b = k;
		if (look_after(j, k) || (j->last_boot && k >= j->last_boot))
			break;
	}
	if (n < 2)
		return STEP_OK;
	if (!j->dut && resolve_machines(j, &why)) {
		step_fail(j, "the job has no machines: %s", why.buf);
		buf_release(&why);
		return STEP_FAIL;
	}
	pairs[0] = j->dut;
	got = lease_acquire_more(j->db, j->cfg, j->id, j->spec.pool, j->dut->name, n - 1, j->ttl_s, pairs + 1);
	if (got < 0)
		return step_fail(j, "cannot lease more pairs of pool '%s': %s", j->spec.pool, db_error(j->db));
	if (got == 0)
		return STEP_OK;	/* no other pair free: boot B on the job's own pair, as without pairs */
	n = got + 1;
	assign_pairs(j, rb, n, pairs);
	{
		struct buf line = BUF_INIT;

		for (int i = 0; i < n; i++)
			buf_addf(&line, "%s%d (%c) on '%s'", i ? ", " : "", rb[i].b, j->order[rb[i].b - 1], rb[i].dut->name);
		job_print(j, "  boots %s at once", line.buf);
		buf_release(&line);
	}
	/* the children open their own SSH sessions: the parent's may not be shared across fork() */
	close_machines(j);
	fflush(NULL);
	for (int i = 0; i < n; i++) {
		int p[2];

		rb[i].code = -1;
		buf_init(&rb[i].msg, 0);
		if (pipe2(p, O_CLOEXEC) || (rb[i].pid = fork()) < 0) {
			rc = step_fail(j, "cannot start the process of boot %d: %s", rb[i].b, strerror(errno));
			for (int k = 0; k < i; k++)
				kill(rb[k].pid, SIGTERM);
			wait_round(j, rb, i);
			for (int k = 0; k <= i; k++)
				buf_release(&rb[k].msg);
			return rc;
		}
		if (rb[i].pid == 0) {
			close(p[0]);
			run_child(j, &rb[i], i + 1, p[1], run_boot);
		}
		close(p[1]);
		rb[i].fd = p[0];
	}
	wait_round(j, rb, n);
	rc = round_outcome(j, rb, n);
	for (int i = 0; i < n; i++)
		buf_release(&rb[i].msg);
	return rc;
}
