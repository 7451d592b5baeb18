-- 0005_report_indexes.sql: indexes the report pages need. profile_rows had no
-- index, so every per-workload profile query scanned the whole table (the
-- report of a 100-comparison job spent 80% of its CPU there); comparisons are
-- read per job and per (workload, metric) for the history pages.
CREATE INDEX IF NOT EXISTS profile_rows_run ON profile_rows (run_id);
CREATE INDEX IF NOT EXISTS comparisons_job ON comparisons (job_id, workload, metric);
CREATE INDEX IF NOT EXISTS comparisons_metric ON comparisons (workload, metric);
