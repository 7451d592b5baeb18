-- 0015_job_metrics.sql: per job, side, workload and metric, the mean of the side's measured
-- runs (the boot means of boot_metrics weighted by their runs) and their number: a night's
-- point on the report's history pages (docs/query-scale.md). One job's report draws the
-- history of every metric of its workloads; on bench/gen-db.sh's 100M-row database (2000
-- nights of wl0, 50 metrics) reading boot_metrics for them took 48 ms a metric, 2.4 s in all.
-- result_store() keeps it with boot_metrics; this fills it for the runs stored before.
CREATE TABLE job_metrics (
	job_id		INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
	side		TEXT NOT NULL,
	workload	TEXT NOT NULL,
	name		TEXT NOT NULL,
	value		REAL NOT NULL,
	n		INTEGER NOT NULL,
	PRIMARY KEY (job_id, side, workload, name)
);
INSERT INTO job_metrics (job_id, side, workload, name, value, n)
SELECT job_id, side, workload, name, SUM(value * n) / SUM(n), SUM(n) FROM boot_metrics
WHERE side IS NOT NULL GROUP BY job_id, side, workload, name;
CREATE INDEX job_metrics_series ON job_metrics (workload, name, job_id);
