-- 0004_query_indexes.sql: indexes for klab query, compare and history (bench/bench-query.sh).
-- Measured on bench/gen-db.sh's database (1M metric rows, 100k runs): without
-- profile_rows_run `klab compare k1 k2` took 64 s (a scan of 500k profile
-- rows per run); without runs_kernel and job_sides_label a kernel comparison
-- scans every run. IF NOT EXISTS: 0005 makes two of the same, and a database
-- already at version 5 skips this file, which then loses only the speed.
CREATE INDEX IF NOT EXISTS profile_rows_run ON profile_rows (run_id);
CREATE INDEX IF NOT EXISTS runs_kernel ON runs (kernel_id, workload);
CREATE INDEX IF NOT EXISTS runs_kernel_label ON runs (kernel_label) WHERE kernel_label IS NOT NULL;
CREATE INDEX IF NOT EXISTS runs_time ON runs (COALESCE(started, created));
CREATE INDEX IF NOT EXISTS job_sides_label ON job_sides (label);
CREATE INDEX IF NOT EXISTS kernels_release ON kernels (release);
CREATE INDEX IF NOT EXISTS kernels_variant ON kernels (variant);
CREATE INDEX IF NOT EXISTS comparisons_job ON comparisons (job_id, workload, metric);
CREATE INDEX IF NOT EXISTS changepoints_series ON changepoints (workload, metric, tree, machines);
CREATE INDEX IF NOT EXISTS jobs_schedule ON jobs (schedule, tree, id);
