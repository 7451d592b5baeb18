-- 0012_confirm_changepoint.sql: a change point that alerts is confirmed too (docs/bisect.md).
-- A drift over several nights may never be CHANGED from one night to the next; when the
-- nightly history finds a change point, the kernel of the night before it is measured
-- again against the newest night's. cp_job is the first nightly after that change point
-- (changepoints.job_id), so that the same change point is confirmed once, not every night
-- it is found again; NULL for a confirmation of a nightly's own CHANGED verdict.
ALTER TABLE confirmations ADD COLUMN cp_job INTEGER REFERENCES jobs(id);
CREATE INDEX confirmations_cp ON confirmations(workload, metric, cp_job) WHERE cp_job IS NOT NULL;
