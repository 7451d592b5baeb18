-- 0001_init.sql: the first klab schema. Applied by the orchestrator at open;
-- PRAGMA user_version holds the number of the last migration applied.
-- Times are Unix seconds (REAL); JSON columns hold json-c text.

CREATE TABLE machines (
	name		TEXT PRIMARY KEY,
	host		TEXT,
	port		INTEGER,
	role		TEXT,
	state		TEXT NOT NULL DEFAULT 'free'
			CHECK (state IN ('free', 'broken', 'drained')),
	state_since	REAL,
	state_reason	TEXT,
	last_kernel	TEXT,
	last_build_id	TEXT,
	last_seen	REAL,
	agent_sha256	TEXT
);

CREATE TABLE trees (
	name		TEXT PRIMARY KEY,
	source		TEXT NOT NULL,
	branch		TEXT,
	repo_path	TEXT,
	last_commit	TEXT,
	updated		REAL
);

CREATE TABLE series (
	id		INTEGER PRIMARY KEY,
	source		TEXT NOT NULL,		-- as given: mbox:PATH, lore:MSGID, patchwork:ID, file:PATH
	source_url	TEXT,
	subject		TEXT,			-- cover letter subject, or the single patch's
	author		TEXT,
	date		TEXT,
	message_id	TEXT,
	version		INTEGER NOT NULL DEFAULT 1,
	total		INTEGER NOT NULL DEFAULT 1,
	cover		TEXT,			-- cover letter body (series description)
	content_sha256	TEXT NOT NULL UNIQUE,	-- hash of the diffs in order
	created		REAL NOT NULL
);

CREATE TABLE patches (
	id		INTEGER PRIMARY KEY,
	series_id	INTEGER NOT NULL REFERENCES series(id) ON DELETE CASCADE,
	seq		INTEGER NOT NULL,	-- 1..total
	subject		TEXT,
	author		TEXT,
	date		TEXT,
	message_id	TEXT,
	body		TEXT,
	diff		TEXT,
	diffstat	TEXT,
	trailers	TEXT,			-- JSON array of {"tag","value","from"}
	UNIQUE (series_id, seq)
);

-- Performance claims found in a series ("2268 Krps -> 2380", "saves 10%-20% of cycles").
CREATE TABLE expectations (
	id		INTEGER PRIMARY KEY,
	series_id	INTEGER NOT NULL REFERENCES series(id) ON DELETE CASCADE,
	patch_seq	INTEGER,		-- 0: cover letter
	metric		TEXT NOT NULL,		-- klab metric name it maps to (e.g. tx_pps, cpu_us_per_op)
	direction	TEXT NOT NULL CHECK (direction IN ('higher', 'lower')),
	lo_pct		REAL,			-- expected % change range of the metric
	hi_pct		REAL,
	before		REAL,
	after		REAL,
	unit		TEXT,
	text		TEXT NOT NULL		-- the sentence it came from
);

-- Workloads proposed from a "Tested:" paragraph.
CREATE TABLE proposals (
	id		INTEGER PRIMARY KEY,
	series_id	INTEGER NOT NULL REFERENCES series(id) ON DELETE CASCADE,
	patch_seq	INTEGER,
	type		TEXT NOT NULL,		-- udp_rr | udp_tx
	params		TEXT NOT NULL,		-- JSON
	command		TEXT NOT NULL		-- the command line it came from
);

CREATE TABLE kernels (
	id		INTEGER PRIMARY KEY,
	key		TEXT NOT NULL UNIQUE,	-- sha256 of (tree commit, series content, config, compiler)
	tree		TEXT,
	commit_id	TEXT,
	variant		TEXT NOT NULL,		-- base | patched | a label
	series_id	INTEGER REFERENCES series(id),
	config_sha256	TEXT,
	compiler	TEXT,
	release		TEXT,			-- uname -r of the built kernel
	build_id	TEXT,
	artifact_dir	TEXT,
	state		TEXT NOT NULL DEFAULT 'building'
			CHECK (state IN ('building', 'ok', 'failed')),
	error		TEXT,
	apply_log	TEXT,			-- JSON: per patch how it applied
	duration_s	REAL,
	ccache_stats	TEXT,
	created		REAL NOT NULL
);

CREATE TABLE jobs (
	id		INTEGER PRIMARY KEY,
	name		TEXT NOT NULL,
	state		TEXT NOT NULL DEFAULT 'queued'
			CHECK (state IN ('queued', 'running', 'done', 'failed', 'cancelled')),
	spec		TEXT NOT NULL,		-- JSON: everything needed to run the job
	tree		TEXT,
	series_id	INTEGER REFERENCES series(id),
	schedule	TEXT,			-- set when a schedule fired it
	order_seed	INTEGER,
	dut		TEXT,
	peer		TEXT,
	pid		INTEGER,		-- process running it, while running
	cancel		INTEGER NOT NULL DEFAULT 0,
	error		TEXT,
	created		REAL NOT NULL,
	started		REAL,
	finished	REAL
);

-- The kernels (or tunings) a job compares: side A is the baseline.
CREATE TABLE job_sides (
	job_id		INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
	side		TEXT NOT NULL CHECK (side IN ('A', 'B')),
	label		TEXT NOT NULL,
	kernel_id	INTEGER REFERENCES kernels(id),
	profile		TEXT,
	PRIMARY KEY (job_id, side)
);

CREATE TABLE steps (
	id		INTEGER PRIMARY KEY,
	job_id		INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
	key		TEXT NOT NULL,		-- unique within the job, e.g. "build:B", "run:3:udp_rr:2"
	name		TEXT NOT NULL,		-- intake, build, lease, deploy, boot, verify, prepare, ...
	state		TEXT NOT NULL CHECK (state IN ('running', 'done', 'failed', 'skipped')),
	attempts	INTEGER NOT NULL DEFAULT 1,
	started		REAL NOT NULL,
	finished	REAL,
	error		TEXT,
	detail		TEXT,			-- JSON
	UNIQUE (job_id, key)
);

CREATE TABLE leases (
	machine		TEXT PRIMARY KEY REFERENCES machines(name),
	job_id		INTEGER NOT NULL REFERENCES jobs(id),
	acquired	REAL NOT NULL,
	expires		REAL NOT NULL
);

CREATE TABLE boots (
	id		INTEGER PRIMARY KEY,
	job_id		INTEGER REFERENCES jobs(id) ON DELETE CASCADE,
	seq		INTEGER NOT NULL,	-- position in the ABBA order
	side		TEXT NOT NULL,
	kernel_id	INTEGER REFERENCES kernels(id),
	machine		TEXT,
	release		TEXT,
	build_id	TEXT,
	cmdline		TEXT,
	sysinfo		TEXT,			-- JSON from klab-agent sysinfo
	started		REAL,
	UNIQUE (job_id, seq)
);

CREATE TABLE runs (
	id		INTEGER PRIMARY KEY,
	uid		TEXT NOT NULL UNIQUE,	-- the agent's run id; a retry never stores twice
	job_id		INTEGER REFERENCES jobs(id),
	boot_id		INTEGER REFERENCES boots(id),
	side		TEXT,
	kernel_id	INTEGER REFERENCES kernels(id),
	kernel_label	TEXT,			-- release or label, for runs outside jobs
	workload	TEXT NOT NULL,
	seq		INTEGER NOT NULL DEFAULT 0,	-- run index within its boot
	machine		TEXT,
	peer		TEXT,
	profile		TEXT,
	started		REAL,
	duration_s	REAL,
	warmup_s	REAL,
	status		TEXT NOT NULL DEFAULT 'ok',
	result		TEXT,			-- the agent's JSON document, verbatim
	created		REAL NOT NULL
);

CREATE TABLE metrics (
	run_id		INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	name		TEXT NOT NULL,
	value		REAL NOT NULL,
	unit		TEXT,
	better		TEXT CHECK (better IN ('higher', 'lower', 'none')),
	PRIMARY KEY (run_id, name)
);

CREATE TABLE samples (
	run_id		INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	metric		TEXT NOT NULL,
	t		REAL NOT NULL,		-- seconds from the start of the measured window
	value		REAL NOT NULL,
	PRIMARY KEY (run_id, metric, t)
);

CREATE TABLE cpu_stats (
	run_id		INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	cpu		INTEGER NOT NULL,	-- -1: all CPUs
	usr REAL, nice REAL, sys REAL, iowait REAL, irq REAL, soft REAL, steal REAL, idle REAL,
	PRIMARY KEY (run_id, cpu)
);

CREATE TABLE histograms (
	run_id		INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	name		TEXT NOT NULL,
	lo		REAL NOT NULL,
	hi		REAL NOT NULL,
	count		INTEGER NOT NULL,
	PRIMARY KEY (run_id, name, lo)
);

CREATE TABLE profile_rows (
	run_id		INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	comm		TEXT,
	dso		TEXT,
	symbol		TEXT NOT NULL,
	percent		REAL NOT NULL
);

CREATE TABLE comparisons (
	id		INTEGER PRIMARY KEY,
	job_id		INTEGER REFERENCES jobs(id) ON DELETE CASCADE,
	label_a		TEXT NOT NULL,
	label_b		TEXT NOT NULL,
	workload	TEXT NOT NULL,
	metric		TEXT NOT NULL,
	unit		TEXT,
	better		TEXT,
	n_a		INTEGER, n_b INTEGER,
	mean_a		REAL, mean_b REAL,
	cov_a		REAL, cov_b REAL,	-- percent
	change_pct	REAL,
	ci_lo		REAL, ci_hi REAL,	-- 95% CI of change_pct
	p_welch		REAL,
	p_holm		REAL,
	p_mwu		REAL,
	hl_ratio	REAL,
	mde_pct		REAL,
	threshold_pct	REAL,
	verdict		TEXT CHECK (verdict IN ('CHANGED', 'EQUIVALENT', 'INCONCLUSIVE', 'DESCRIPTIVE')),
	extra_boots	INTEGER,
	claim		TEXT,			-- consistent | outside | opposite | NULL
	created		REAL NOT NULL
);

CREATE TABLE changepoints (
	id		INTEGER PRIMARY KEY,
	tree		TEXT,
	machines	TEXT,			-- "dut+peer"
	workload	TEXT NOT NULL,
	metric		TEXT NOT NULL,
	job_id		INTEGER REFERENCES jobs(id),	-- first job after the change
	idx		INTEGER NOT NULL,
	mean_before	REAL, mean_after REAL,
	change_pct	REAL,
	p		REAL,
	created		REAL NOT NULL
);

CREATE TABLE schedules (
	name		TEXT PRIMARY KEY,
	cron		TEXT NOT NULL,
	job		TEXT NOT NULL,
	last_fire	REAL,
	next_fire	REAL
);

CREATE INDEX runs_job ON runs (job_id, side);
CREATE INDEX runs_workload ON runs (workload, kernel_id);
CREATE INDEX metrics_name ON metrics (name, run_id);
CREATE INDEX steps_job ON steps (job_id, state);
CREATE INDEX jobs_state ON jobs (state, created);
