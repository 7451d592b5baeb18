/* orch-disturbed.c: a run that did other work on a one-CPU icount machine (runs_icount_excess, runs_uid_stored). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "log.h"
#include "store/db.h"
#include "store/runs.h"
#include "tap.h"

static int64_t boot_id;

/* Run UID of boot_id, its insn_per_op (NAN: none) and its CPUs (rows of cpu_stats with cpu >= 0). */
static int64_t add_run(struct db *db, const char *uid, const char *kind, int seq, double insn, int cpus)
{
	int64_t id;

	db_run(db, "INSERT INTO runs (uid, job_id, boot_id, side, workload, seq, kind, created) "
		   "VALUES (?, 1, ?, 'A', 'tx', ?, ?, 1)", "siis", uid, boot_id, (int64_t)seq, kind);
	id = db_last_id(db);
	if (!isnan(insn))
		db_run(db, "INSERT INTO metrics (run_id, name, value) VALUES (?, 'insn_per_op', ?)", "id", id, insn);
	db_run(db, "INSERT INTO cpu_stats (run_id, cpu, usr, sys) VALUES (?, -1, 10, 90)", "i", id);
	for (int c = 0; c < cpus; c++)
		db_run(db, "INSERT INTO cpu_stats (run_id, cpu, usr, sys) VALUES (?, ?, 10, 90)", "ii", id, (int64_t)c);
	return id;
}

static double excess(struct db *db, int64_t run)
{
	double pct = -1;

	ok(!runs_icount_excess(db, run, &pct), "runs_icount_excess answers for run %lld", (long long)run);
	return pct;
}

int main(void)
{
	char *path = tap_db_path("disturbed.db");
	struct db *db = NULL;
	int64_t w, r1, r2, o, r3, other;

	log_init("orch-disturbed", 0, LOG_ERR);
	if (!ok(!db_open(path, &db), "database opens"))
		return done_testing();
	db_run(db, "INSERT INTO jobs (id, name, spec, created) VALUES (1, 'j', '{}', 1)", "");
	db_run(db, "INSERT INTO boots (job_id, seq, side) VALUES (1, 1, 'A')", "");
	boot_id = db_last_id(db);

	/* t0804's case of 2026-12-07: warm-up 3264.19, the measured run 3414.53 (+4.6%) */
	w = add_run(db, "w", "measure", 0, 3264.19, 1);
	ok(isnan(excess(db, w)), "the boot's first run: nothing to compare with");
	r1 = add_run(db, "r1", "measure", 1, 3414.53, 1);
	is_double(excess(db, r1), (3414.53 / 3264.19 - 1) * 100, 1e-9, "+4.61%% above the warm-up");
	o = add_run(db, "o", "observe", 0, 2000, 1);
	is_double(excess(db, r1), (3414.53 / 3264.19 - 1) * 100, 1e-9, "an observation run is no reference");
	ok(!runs_set_status(db, r1, RUN_DISTURBED), "set aside as disturbed");
	is_int(runs_uid_stored(db, "r1"), 2, "stored, not ok");
	is_int(runs_uid_stored(db, "w"), 1, "stored, ok");
	is_int(runs_uid_stored(db, "r9"), 0, "not stored");
	r2 = add_run(db, "r1-again1", "measure", 1, 3264.20, 1);
	is_double(excess(db, r2), (3264.20 / 3264.19 - 1) * 100, 1e-9, "the take again: 3 ppm from the warm-up");
	r3 = add_run(db, "r2", "measure", 2, 3200, 1);
	ok(excess(db, r3) < 0, "a run below the others is not above them (%.3f%%)", excess(db, r3));
	ok(excess(db, r2) > 1.9, "the disturbed run is no reference, the lower one is: %.3f%%", excess(db, r2));
	other = add_run(db, "x", "measure", 1, 4000, 2);
	ok(isnan(excess(db, other)), "a run on two CPUs: no path length to hold it to");
	other = add_run(db, "y", "measure", 1, NAN, 1);
	ok(isnan(excess(db, other)), "no insn_per_op (a real clock): nothing to say");
	(void)o;
	db_close(db);
	free(path);
	return done_testing();
}
