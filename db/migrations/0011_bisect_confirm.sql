-- 0011_bisect_confirm.sql: the jobs of a bisection, and the confirmation of nightly changes (docs/bisect.md).
-- A bisection's step may take several jobs (more boots while it is undecided, a retry
-- after a lab failure): each carries its bisection and the step's seq, so a runner
-- killed at any point finds them again; bisect_steps.job_id is the latest. klabd leaves
-- these jobs to the bisection's runner.
ALTER TABLE jobs ADD COLUMN bisection_id INTEGER REFERENCES bisections(id);
ALTER TABLE jobs ADD COLUMN bisect_seq INTEGER;
CREATE INDEX jobs_bisection ON jobs(bisection_id, bisect_seq) WHERE bisection_id IS NOT NULL;
-- A nightly's headline CHANGED is reported only when a confirmation job (the same two
-- kernels, fresh boots) agrees; a confirmed regression is bisected.
CREATE TABLE confirmations (
	id		INTEGER PRIMARY KEY,
	job_id		INTEGER NOT NULL REFERENCES jobs(id),	-- the nightly whose change it is
	confirm_job	INTEGER REFERENCES jobs(id),
	workload	TEXT NOT NULL,
	metric		TEXT NOT NULL,
	better		TEXT,
	change_pct	REAL,			-- as the nightly measured it
	state		TEXT NOT NULL DEFAULT 'pending'
			CHECK (state IN ('pending', 'confirmed', 'not confirmed')),
	confirm_change	REAL,
	confirm_verdict	TEXT,
	bisection_id	INTEGER REFERENCES bisections(id),
	error		TEXT,			-- why no bisection was started
	created		REAL NOT NULL,
	decided		REAL,
	UNIQUE (job_id, workload, metric)
);
CREATE INDEX confirmations_confirm_job ON confirmations(confirm_job);
