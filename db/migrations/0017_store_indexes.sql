-- 0017_store_indexes.sql: indexes that make storing a run an index search whatever the
-- statistics. klab never runs ANALYZE, so sqlite plans a lab's database by its rules of thumb:
-- the summaries of the stored run's boot (runs of job J, workload W, boot B) were read through
-- runs_workload, every run of the workload, and the side's job_metrics through
-- boot_metrics_series, every boot of the workload (it gives the GROUP BY's order). On
-- bench/gen-db.sh's 1M-row database without sqlite_stat1 one of those statements took 25 ms
-- instead of 5, growing with the workload's history (docs/query-scale.md, bench/bench-store.sh).
CREATE INDEX runs_boot ON runs (boot_id, workload);
DROP INDEX boot_metrics_job;
CREATE INDEX boot_metrics_job ON boot_metrics (job_id, side, workload, name);

-- The boots without a kernel id of a job side that a label names (compare_side.c's nokernel
-- branches): with a full ANALYZE's statistics sqlite drove those joins from the job sides of
-- the label and read every boot row of their jobs (250k rows, 187 ms a statement for
-- `klab compare k1 k2` at 100M rows) to keep none. Indexes of just the boots without a kernel id
-- make that probe empty whichever side the planner starts from.
CREATE INDEX boot_metrics_nokernel ON boot_metrics (job_id, side) WHERE kernel_id IS NULL;
CREATE INDEX boot_cpus_nokernel ON boot_cpus (job_id, side) WHERE kernel_id IS NULL;
CREATE INDEX boot_profile_nokernel ON boot_profile (job_id, side) WHERE kernel_id IS NULL;
