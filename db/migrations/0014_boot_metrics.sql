-- 0014_boot_metrics.sql: per-boot summaries of the runs of jobs, what
-- comparisons and the nightly history read (docs/query-scale.md), so that
-- they read a row per boot instead of a row per run:
--   boot_metrics: per boot, workload and metric, the mean of the boot's
--     measured runs (seq at or past its job's warm-up runs), n of them;
--   boot_cpus: per boot, workload and CPU, the means of the CPU shares;
--   boot_profile: per boot, workload and symbol, the sum of its shares over
--     the measured runs that have a profile, `runs` of them.
-- result_store() keeps them in the run's own transaction; this fills them
-- for the runs stored before. bkey is the boot's id, or -(run id) for a run
-- of a job stored without a boot (each such run is a group of its own, as
-- before). Runs outside jobs are read from runs. Measured on
-- bench/gen-db.sh's 10M-row database (1M runs): klab history wl0 tps 264 ->
-- 28 ms; the kernel comparison read 100k runs' rows of metrics, cpu_stats
-- and profile_rows a side.
CREATE TABLE boot_metrics (
	job_id		INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
	bkey		INTEGER NOT NULL,
	side		TEXT,
	kernel_id	INTEGER,
	kernel_label	TEXT,
	workload	TEXT NOT NULL,
	name		TEXT NOT NULL,
	unit		TEXT,
	better		TEXT,
	value		REAL NOT NULL,
	n		INTEGER NOT NULL,
	PRIMARY KEY (bkey, workload, name)
);
INSERT INTO boot_metrics (job_id, bkey, side, kernel_id, kernel_label, workload, name, unit, better, value, n)
SELECT r.job_id, COALESCE(r.boot_id, -r.id), MAX(r.side), MAX(r.kernel_id), MAX(r.kernel_label), r.workload,
       m.name, MAX(m.unit), MAX(m.better), AVG(m.value), COUNT(*)
FROM runs r JOIN jobs j ON j.id = r.job_id JOIN metrics m ON m.run_id = r.id
WHERE r.status = 'ok'
  AND r.seq >= COALESCE(CAST(json_extract(j.spec, '$.warmup_runs') AS DOUBLE PRECISION),
	CASE WHEN CAST(json_extract(j.spec, '$.warmup') AS DOUBLE PRECISION) BETWEEN 0 AND 100
	THEN CAST(json_extract(j.spec, '$.warmup') AS DOUBLE PRECISION) END, 1)
GROUP BY r.job_id, COALESCE(r.boot_id, -r.id), r.workload, m.name;
CREATE INDEX boot_metrics_series ON boot_metrics (workload, name, job_id);
CREATE INDEX boot_metrics_job ON boot_metrics (job_id, side);
CREATE INDEX boot_metrics_kernel ON boot_metrics (kernel_id, workload, name);
CREATE INDEX boot_metrics_label ON boot_metrics (kernel_label) WHERE kernel_label IS NOT NULL;

CREATE TABLE boot_cpus (
	job_id		INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
	bkey		INTEGER NOT NULL,
	side		TEXT,
	kernel_id	INTEGER,
	kernel_label	TEXT,
	workload	TEXT NOT NULL,
	cpu		INTEGER NOT NULL,
	usr REAL, sys REAL, irq REAL, soft REAL, idle REAL,
	PRIMARY KEY (bkey, workload, cpu)
);
INSERT INTO boot_cpus (job_id, bkey, side, kernel_id, kernel_label, workload, cpu, usr, sys, irq, soft, idle)
SELECT r.job_id, COALESCE(r.boot_id, -r.id), MAX(r.side), MAX(r.kernel_id), MAX(r.kernel_label), r.workload,
       c.cpu, AVG(c.usr), AVG(c.sys), AVG(c.irq), AVG(c.soft), AVG(c.idle)
FROM runs r JOIN jobs j ON j.id = r.job_id JOIN cpu_stats c ON c.run_id = r.id
WHERE r.status = 'ok'
  AND r.seq >= COALESCE(CAST(json_extract(j.spec, '$.warmup_runs') AS DOUBLE PRECISION),
	CASE WHEN CAST(json_extract(j.spec, '$.warmup') AS DOUBLE PRECISION) BETWEEN 0 AND 100
	THEN CAST(json_extract(j.spec, '$.warmup') AS DOUBLE PRECISION) END, 1)
GROUP BY r.job_id, COALESCE(r.boot_id, -r.id), r.workload, c.cpu;
CREATE INDEX boot_cpus_job ON boot_cpus (job_id, side);
CREATE INDEX boot_cpus_kernel ON boot_cpus (kernel_id, workload);
CREATE INDEX boot_cpus_label ON boot_cpus (kernel_label) WHERE kernel_label IS NOT NULL;

CREATE TABLE boot_profile (
	job_id		INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
	bkey		INTEGER NOT NULL,
	side		TEXT,
	kernel_id	INTEGER,
	kernel_label	TEXT,
	workload	TEXT NOT NULL,
	symbol		TEXT NOT NULL,
	dso		TEXT,
	pct_sum		REAL NOT NULL,
	runs		INTEGER NOT NULL,
	PRIMARY KEY (bkey, workload, symbol)
);
WITH rr AS (SELECT r.id, r.job_id, COALESCE(r.boot_id, -r.id) AS bkey, r.side, r.kernel_id, r.kernel_label, r.workload
	FROM runs r JOIN jobs j ON j.id = r.job_id
	WHERE r.status = 'ok'
	  AND r.seq >= COALESCE(CAST(json_extract(j.spec, '$.warmup_runs') AS DOUBLE PRECISION),
		CASE WHEN CAST(json_extract(j.spec, '$.warmup') AS DOUBLE PRECISION) BETWEEN 0 AND 100
		THEN CAST(json_extract(j.spec, '$.warmup') AS DOUBLE PRECISION) END, 1)
	  AND EXISTS (SELECT 1 FROM profile_rows p WHERE p.run_id = r.id)),
     nb AS (SELECT bkey, workload, COUNT(*) AS runs FROM rr GROUP BY bkey, workload)
INSERT INTO boot_profile (job_id, bkey, side, kernel_id, kernel_label, workload, symbol, dso, pct_sum, runs)
SELECT rr.job_id, rr.bkey, MAX(rr.side), MAX(rr.kernel_id), MAX(rr.kernel_label), rr.workload, p.symbol, MAX(p.dso),
       SUM(p.percent), MAX(nb.runs)
FROM rr JOIN profile_rows p ON p.run_id = rr.id JOIN nb ON nb.bkey = rr.bkey AND nb.workload = rr.workload
GROUP BY rr.job_id, rr.bkey, rr.workload, p.symbol;
CREATE INDEX boot_profile_job ON boot_profile (job_id, side);
CREATE INDEX boot_profile_kernel ON boot_profile (kernel_id, workload);
CREATE INDEX boot_profile_label ON boot_profile (kernel_label) WHERE kernel_label IS NOT NULL;
