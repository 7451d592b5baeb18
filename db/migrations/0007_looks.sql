-- 0007_looks.sql: the looks of a job with adaptive boots (boots = MIN..MAX, docs/jobs.md).
-- After each ABBA round from MIN boots per side on, the job computes the headline verdicts
-- at the look's level alpha = 0.05 / looks (docs/statistics.md, "Looking more than once")
-- and stops adding boots when every one is CHANGED or EQUIVALENT (decided = 1), or at MAX.
-- One row per (job, look, headline metric): what the look saw. A look that is run again
-- (the job resumed after a crash during it) replaces its rows.
CREATE TABLE looks (
	job_id		INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
	look		INTEGER NOT NULL,	-- 1-based
	looks		INTEGER NOT NULL,	-- K, the looks of the plan
	boots		INTEGER NOT NULL,	-- boots per side the look was planned at
	alpha		REAL NOT NULL,		-- the level of its verdicts (0.05 / K)
	decided		INTEGER NOT NULL,	-- 1: every headline verdict CHANGED or EQUIVALENT
	workload	TEXT NOT NULL,
	metric		TEXT NOT NULL,
	n_a		INTEGER,		-- boots with a value, per side
	n_b		INTEGER,
	verdict		TEXT,
	change_pct	REAL,
	ci_lo		REAL,			-- 95% CI
	ci_hi		REAL,
	p_holm		REAL,
	created		REAL NOT NULL,
	PRIMARY KEY (job_id, look, workload, metric)
);
