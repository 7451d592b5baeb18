-- 0020_patchwork.sql: what klabd's patchwork watcher saw and did (docs/patchwork.md).
-- pw_cursors: per [patchwork "NAME"], the date of the newest series-completed event
-- handled; the next poll asks for events since it (patchwork's `since` is inclusive, and
-- pw_series' UNIQUE (watch, pw_id) drops an event seen twice), so a restarted klabd neither
-- misses nor repeats a series.
CREATE TABLE pw_cursors (
	watch		TEXT PRIMARY KEY,
	since		TEXT NOT NULL,		-- patchwork's own ISO 8601 text (UTC)
	updated		REAL NOT NULL
);
-- pw_series: one row per series seen, in arrival order (completed, id).
CREATE TABLE pw_series (
	id		INTEGER PRIMARY KEY,
	watch		TEXT NOT NULL,
	pw_id		INTEGER NOT NULL,	-- patchwork's series id
	version		INTEGER NOT NULL DEFAULT 1,
	name		TEXT,
	submitter	TEXT,
	completed	REAL NOT NULL,		-- the series-completed event's date (unix time)
	seen		REAL NOT NULL,
	state		TEXT NOT NULL DEFAULT 'seen'
			CHECK (state IN ('seen', 'filtered', 'queued', 'running', 'done', 'superseded', 'error')),
	reason		TEXT,			-- why filtered out, superseded, or the error
	series_id	INTEGER REFERENCES series(id),
	job_id		INTEGER REFERENCES jobs(id),
	outcome		TEXT,			-- the final check's state: success | warning | fail
	description	TEXT,			-- the final check's description
	final		REAL,			-- when the final check was on every patch (lag = final - completed)
	UNIQUE (watch, pw_id)
);
CREATE INDEX pw_series_state ON pw_series (watch, state, completed);
-- pw_patches: the patches of a series, in order.
CREATE TABLE pw_patches (
	watch		TEXT NOT NULL,
	pw_series	INTEGER NOT NULL,	-- patchwork's series id
	patch_id	INTEGER NOT NULL,	-- patchwork's patch id
	seq		INTEGER NOT NULL,
	name		TEXT,
	PRIMARY KEY (watch, pw_series, patch_id)
);
-- pw_checks: every check klab means to post, written before it is posted (the intent) and
-- marked when the API confirmed it (posted) or when it was found on the server already after
-- an interrupted post (found = 1), so each (patch, context, state) is posted at most once.
CREATE TABLE pw_checks (
	id		INTEGER PRIMARY KEY,
	watch		TEXT NOT NULL,
	pw_series	INTEGER NOT NULL,
	patch_id	INTEGER NOT NULL,
	context		TEXT NOT NULL,
	state		TEXT NOT NULL CHECK (state IN ('pending', 'success', 'warning', 'fail')),
	description	TEXT NOT NULL,
	target_url	TEXT,
	intended	REAL NOT NULL,
	attempts	INTEGER NOT NULL DEFAULT 0,
	posted		REAL,
	found		INTEGER NOT NULL DEFAULT 0,
	error		TEXT,			-- the last failure (a 4xx names the field)
	UNIQUE (patch_id, context, state)
);
CREATE INDEX pw_checks_unposted ON pw_checks (watch, posted, id);
