-- 0018_series_indexes.sql: the nightly series read from their indexes alone. `klab history`
-- reads a series' boot values (boot_metrics) and a report's history pages a workload's nightly
-- values (job_metrics), each by (workload, name) in job order. With only (workload, name,
-- job_id) in the index, PostgreSQL fetched the rows from the table, scattered over it, and
-- sorted them: at 100M metric rows (bench/bench-query.sh) history took 130 ms in that statement
-- and a report's nightly read 430 ms. With every column it reads in the index, it is an
-- index-only scan in the order wanted (15 ms and 60 ms); sqlite reads the index alone too.
DROP INDEX boot_metrics_series;
CREATE INDEX boot_metrics_series ON boot_metrics (workload, name, job_id, side, bkey, value);
DROP INDEX job_metrics_series;
CREATE INDEX job_metrics_series ON job_metrics (workload, name, job_id, side, value, n);

-- The runs without a kernel id of a job side (a side that booted no kernel of klab's, found by
-- its label): `klab query --kernel K` reads them for the sides K labels, and with only
-- runs_job it read every run of those sides (100k at 100M metric rows) to keep none.
CREATE INDEX runs_job_nokernel ON runs (job_id, side) WHERE kernel_id IS NULL;

-- A kernel's runs in id order (an index of one column ends with the rowid): `klab query
-- --kernel K` lists them in that order, which sqlite then need not sort (98k rows at 100M
-- metric rows: 0.17 s against 0.31 with runs_kernel's (kernel_id, workload) order).
CREATE INDEX runs_kernel_run ON runs (kernel_id);
