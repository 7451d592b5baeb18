-- 0016_kernel_samples.sql: per kernel, the boot values of every boot with that kernel, so that a
-- comparison of two kernels reads a few rows per metric instead of a row per boot
-- (docs/query-scale.md). On bench/gen-db.sh's 100M-row database a kernel has 10k boots of a
-- workload: `klab compare k1 k2` read 1M rows of boot_metrics a side and took 5.8 s.
--   kind 0: a metric (unit, better), one value per boot: the boot_metrics value;
--   kind 1: a CPU share, name cpuN.FIELD or cpuall.FIELD (unit '%'), the boot_cpus value;
--   kind 2: a profile symbol (unit = its dso), two values per boot: pct_sum and runs;
--   kind 3: a clock (name 'real' or 'icount'), one value per boot: its measured runs.
-- A row holds the boots whose key (boot_metrics.bkey) falls in one CHUNK of 1024 keys:
-- `data` is base64 of n entries sorted by key, each the key (int64) and the values (float64),
-- little-endian; unit and better are those of its first entry. result_store() keeps the rows
-- of the stored run's boot in the run's transaction; `klab db rebuild-summaries` makes them
-- all. Boots without a kernel id (labels only) stay in the boot tables.
CREATE TABLE kernel_samples (
	kernel_id	INTEGER NOT NULL,
	kind		INTEGER NOT NULL,
	workload	TEXT NOT NULL,
	name		TEXT NOT NULL,
	chunk		INTEGER NOT NULL,
	unit		TEXT,
	better		TEXT,
	n		INTEGER NOT NULL,
	data		TEXT NOT NULL,
	PRIMARY KEY (kernel_id, kind, workload, name, chunk)
);
CREATE INDEX kernel_samples_chunk ON kernel_samples (kernel_id, workload, chunk);

-- Which summaries are whole. A migration cannot make the encoded rows, so a database that
-- already holds boots of kernels starts with kernel_samples not ready: readers use the boot
-- tables until `klab db rebuild-summaries` makes them (and says so).
CREATE TABLE summary_state (
	name		TEXT PRIMARY KEY,
	ready		INTEGER NOT NULL
);
INSERT INTO summary_state (name, ready)
SELECT 'kernel_samples', CASE WHEN EXISTS (SELECT 1 FROM boot_metrics WHERE kernel_id IS NOT NULL)
	OR EXISTS (SELECT 1 FROM boot_cpus WHERE kernel_id IS NOT NULL)
	OR EXISTS (SELECT 1 FROM boot_profile WHERE kernel_id IS NOT NULL) THEN 0 ELSE 1 END;

-- The boots a label finds beside the kernel samples are those without a kernel id: an index
-- of just those, so that a label that every run of a kernel carries (its release) costs nothing.
DROP INDEX boot_metrics_label;
DROP INDEX boot_cpus_label;
DROP INDEX boot_profile_label;
CREATE INDEX boot_metrics_label ON boot_metrics (kernel_label) WHERE kernel_id IS NULL;
CREATE INDEX boot_cpus_label ON boot_cpus (kernel_label) WHERE kernel_id IS NULL;
CREATE INDEX boot_profile_label ON boot_profile (kernel_label) WHERE kernel_id IS NULL;
CREATE INDEX runs_label_nokernel ON runs (kernel_label) WHERE kernel_id IS NULL;
