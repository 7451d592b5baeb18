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
