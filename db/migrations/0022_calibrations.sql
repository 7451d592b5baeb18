-- 0022_calibrations.sql: the calibrated noise model (issue 35 item 1, docs/statistics.md "A
-- calibrated instrument"): per instrument, workload and metric, the spread of a boot's and of a
-- run's log value that A/A data measured, which a comparison on that instrument pools with its
-- own boots. The instrument key is made from what a job's boots recorded (machine, clock, CPU
-- model and count, the lab's words of the kernel command line: store/calib.c); a workload is keyed
-- by a digest of its definition in the job spec (type, parameters, window, warm-up). When either
-- changes the old row no longer matches: it is stale, never silently reused.
CREATE TABLE calibrations (
	id		INTEGER PRIMARY KEY,
	instrument	TEXT NOT NULL,		-- the instrument key
	machine		TEXT NOT NULL,
	clock		TEXT NOT NULL,
	workload	TEXT NOT NULL,
	wl_key		TEXT NOT NULL,		-- digest of the workload's definition
	metric		TEXT NOT NULL,
	boot_var	REAL NOT NULL,		-- variance of a boot's ln value (pooled within same-kernel groups)
	boot_df		REAL NOT NULL,		-- its degrees of freedom
	boots		INTEGER NOT NULL,	-- boots it came from
	aa_boots	INTEGER NOT NULL,	-- of them, boots of A/A jobs
	runs_per_boot	REAL NOT NULL,		-- mean measured runs per boot
	run_var		REAL,			-- variance of a run's ln value within its boot (NULL: one run a boot)
	run_df		REAL,
	jobs		TEXT NOT NULL,		-- the jobs it came from, "3,5"
	created		REAL NOT NULL,		-- when it was first learnt
	updated		REAL NOT NULL,		-- when a job was last added
	UNIQUE (instrument, workload, wl_key, metric)
);
CREATE INDEX calibrations_machine ON calibrations (machine, clock);
