-- 0009_boot_state_bisect.sql: the machine's state of each boot and run (issue 16 item 6), and bisections.
-- boots.machine_boot_id: /proc/sys/kernel/random/boot_id when the boot was verified; a run
-- step first checks the machine still has it (and the boot's release and its tuning), else
-- the boot is redone. runs.machine_*: what the agent's result said the machine ran.
ALTER TABLE boots ADD COLUMN machine_boot_id TEXT;
ALTER TABLE runs ADD COLUMN machine_boot_id TEXT;
ALTER TABLE runs ADD COLUMN machine_release TEXT;
ALTER TABLE runs ADD COLUMN machine_build_id TEXT;
-- A bisection of a performance change between two commits of a tree (docs/bisect.md):
-- the two ends are measured first (steps with role 'good'/'bad'), then one commit per step.
CREATE TABLE bisections (
	id		INTEGER PRIMARY KEY,
	tree		TEXT NOT NULL,
	good		TEXT NOT NULL,		-- commit ids, resolved at start
	bad		TEXT NOT NULL,
	good_ref	TEXT NOT NULL,		-- as the user wrote them
	bad_ref		TEXT NOT NULL,
	workload	TEXT NOT NULL,
	metric		TEXT NOT NULL,
	alpha		REAL NOT NULL,		-- the stated error rate of one classification
	state		TEXT NOT NULL DEFAULT 'queued'
			CHECK (state IN ('queued', 'running', 'done', 'failed', 'cancelled')),
	spec		TEXT NOT NULL,		-- JSON: commits, machines, boots, job template
	result		TEXT,			-- found | no-regression | ambiguous
	first_bad	TEXT,			-- the commit found
	first_bad_subject TEXT,
	change_pct	REAL,			-- bad end against good end, %
	ci_lo		REAL,
	ci_hi		REAL,
	pid		INTEGER,
	cancel		INTEGER NOT NULL DEFAULT 0,
	error		TEXT,
	created		REAL NOT NULL,
	started		REAL,
	finished	REAL
);
CREATE TABLE bisect_steps (
	bisection_id	INTEGER NOT NULL REFERENCES bisections(id) ON DELETE CASCADE,
	seq		INTEGER NOT NULL,	-- 0 good end, 1 bad end, then the bisection's steps
	role		TEXT NOT NULL CHECK (role IN ('good', 'bad', 'step')),
	commit_id	TEXT NOT NULL,
	subject		TEXT,
	remaining	INTEGER,		-- commits left in the range when it was chosen
	job_id		INTEGER REFERENCES jobs(id),
	kernel_id	INTEGER REFERENCES kernels(id),
	boots		INTEGER NOT NULL DEFAULT 0,
	value		REAL,			-- mean of the per-boot values of the metric
	p_good		REAL,			-- Welch p against the good end
	p_bad		REAL,			-- and against the bad end
	verdict		TEXT CHECK (verdict IN ('good', 'bad', 'skip')),
	reason		TEXT,
	started		REAL,
	finished	REAL,
	PRIMARY KEY (bisection_id, seq)
);
