-- 0006_monitors_stacks.sql: what each monitor of a run said, and the folded call stacks of its profile.
-- run_monitors: one row per monitor a run asked for, from the result's "monitors" object
-- ("ok", or "unavailable: REASON"): the report names the runs and the reason beside the
-- chart a missing monitor would have fed. Runs stored before this migration have no rows
-- (their result JSON in runs.result still has the object; it is not copied back here, as
-- plain SQL cannot read it on every backend), and the pages say "not recorded" for them.
-- profile_stacks: the result's "profile_stacks" ("comm;root;...;leaf", sample count), at
-- most 2000 per run (result.c), for the differential flame graph.
CREATE TABLE run_monitors (
	run_id		INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	monitor		TEXT NOT NULL,
	status		TEXT NOT NULL,		-- ok | unavailable | failed
	reason		TEXT,			-- the agent's words after "unavailable: "
	PRIMARY KEY (run_id, monitor)
);
CREATE TABLE profile_stacks (
	run_id		INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	stack		TEXT NOT NULL,
	count		INTEGER NOT NULL
);
CREATE INDEX profile_stacks_run ON profile_stacks (run_id);
