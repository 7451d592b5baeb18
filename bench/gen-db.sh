#!/bin/bash
# bench/gen-db.sh: make a klab database with 1M metric rows for benchmarks (sqlite3 CLI, recursive CTEs).
#
#   bash bench/gen-db.sh OUT.db [KLAB]
#   KLAB_GEN_JOBS=10000 bash bench/gen-db.sh OUT.db   (10M metric rows: every count below x10)
#   KLAB_GEN_METRICS=50 ...   (50 metrics a run, as a lab run with perf, nic and udp counters
#                              has: the 10 below and 40 more 'perf.eventN'; default 10)
#
# Shape: 20 kernels; 1000 jobs (every other one fired by the "nightly"
# schedule), each with 5 boots per side and 10 runs per boot (seq 0 is the
# warm-up): 10k boots, 100k runs; 10 metrics per run (1M rows in
# `metrics`), per-CPU rows for 3 CPUs (300k) and 5 profile rows per run
# (500k). Job j runs workload wl(j % 10) with kernel (j % 20) + 1 on side
# A and (j + 1) % 20 + 1 on side B, so `klab compare k1 k2` covers 10k runs
# and one workload has 10k runs per metric. KLAB (default: build/rel/bin/klab)
# creates the schema with every migration, so the indexes are the real ones.
set -eu
out=${1:?usage: gen-db.sh OUT.db [KLAB]}
here=$(cd "$(dirname "$0")/.." && pwd)
klab=${2:-$here/build/rel/bin/klab}
command -v sqlite3 >/dev/null || { echo "gen-db.sh: sqlite3 (the CLI) is needed: apt-get install sqlite3" >&2; exit 1; }
[ -x "$klab" ] || { echo "gen-db.sh: no klab at '$klab': build it first (make)" >&2; exit 1; }
jobs=${KLAB_GEN_JOBS:-1000}
[[ $jobs =~ ^[1-9][0-9]*$ ]] || { echo "gen-db.sh: KLAB_GEN_JOBS must be a whole number of jobs, not '$jobs'" >&2; exit 1; }
nmet=${KLAB_GEN_METRICS:-10}
[[ $nmet =~ ^[1-9][0-9]*$ ]] && [ "$nmet" -ge 10 ] ||
	{ echo "gen-db.sh: KLAB_GEN_METRICS must be a whole number of metrics, 10 or more, not '$nmet'" >&2; exit 1; }
rm -f "$out" "$out-wal" "$out-shm"
"$klab" --db "$out" db init >/dev/null
start=$(date +%s.%N)
sed "s/@JOBS@/$jobs/; s/@EXTRA@/$((nmet - 10))/" <<'SQL' | sqlite3 "$out" >/dev/null
PRAGMA journal_mode = WAL;
PRAGMA synchronous = OFF;
BEGIN;
WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 20)
INSERT INTO kernels (id, key, tree, variant, release, state, created)
SELECT i, 'key' || i, 'net-next', 'k' || i, '6.1.' || i || '-klab', 'ok', 1764633600 FROM k;

WITH RECURSIVE j(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM j WHERE i < @JOBS@)
INSERT INTO jobs (id, name, state, spec, tree, schedule, dut, peer, created)
SELECT i, 'job-' || i, 'done', '{"warmup_runs": 1, "boots": 5, "runs": 9}',
       CASE WHEN i % 2 = 0 THEN 'net-next' ELSE 'stable' END,
       CASE WHEN i % 2 = 0 THEN 'nightly' END, 'dut1', 'peer1', 1764633600 + i * 43200 FROM j;

INSERT INTO job_sides (job_id, side, label, kernel_id)
SELECT id, 'A', 'k' || (id % 20 + 1), id % 20 + 1 FROM jobs
UNION ALL SELECT id, 'B', 'k' || ((id + 1) % 20 + 1), (id + 1) % 20 + 1 FROM jobs;

WITH RECURSIVE b(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM b WHERE i < 10)
INSERT INTO boots (id, job_id, seq, side, kernel_id, machine, started)
SELECT (jobs.id - 1) * 10 + b.i, jobs.id, b.i, CASE WHEN b.i IN (1, 4, 5, 8, 9) THEN 'A' ELSE 'B' END,
       CASE WHEN b.i IN (1, 4, 5, 8, 9) THEN jobs.id % 20 + 1 ELSE (jobs.id + 1) % 20 + 1 END,
       'dut1', jobs.created + b.i * 600
FROM jobs, b;

WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < 9)
INSERT INTO runs (id, uid, job_id, boot_id, side, kernel_id, workload, seq, machine, peer, started, duration_s, warmup_s, created)
SELECT boots.id * 10 + s.i, 'r' || (boots.id * 10 + s.i), boots.job_id, boots.id, boots.side, boots.kernel_id,
       'wl' || (boots.job_id % 10), s.i, 'dut1', 'peer1', boots.started + s.i * 12, 10, 2, boots.started + s.i * 12
FROM boots, s;

-- values: a per-kernel level (+0.5% per kernel id), boot and run noise of ~1%
INSERT INTO metrics (run_id, name, value, unit, better)
SELECT r.id, m.name,
       m.base * (1 + 0.005 * r.kernel_id) * (1 + (abs(random()) % 20000 - 10000) / 1000000.0),
       m.unit, m.better
FROM runs r, (SELECT 'tps' AS name, 2268000.0 AS base, '1/s' AS unit, 'higher' AS better
              UNION ALL SELECT 'latency_p50_us', 180, 'us', 'lower'
              UNION ALL SELECT 'latency_p99_us', 420, 'us', 'lower'
              UNION ALL SELECT 'cpu_us_per_op', 3.1, 'us', 'lower'
              UNION ALL SELECT 'cpu_busy_pct', 61, '%', 'none'
              UNION ALL SELECT 'perf.context-switches', 120000, '1/s', 'none'
              UNION ALL SELECT 'nic.rx_packets', 2300000, '1/s', 'none'
              UNION ALL SELECT 'nic.tx_packets', 2300000, '1/s', 'none'
              UNION ALL SELECT 'udp.InErrors', 3, '1/s', 'lower'
              UNION ALL SELECT 'udp.SndbufErrors', 1, '1/s', 'lower'
              UNION ALL SELECT * FROM (WITH RECURSIVE e(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM e WHERE i < @EXTRA@)
                                       SELECT 'perf.event' || i, 1000.0 * i, '1/s', 'none' FROM e WHERE @EXTRA@ > 0)) m;

INSERT INTO cpu_stats (run_id, cpu, usr, nice, sys, iowait, irq, soft, steal, idle)
SELECT r.id, c.cpu, 5, 0, 20, 0, 1, 12 + (abs(random()) % 100) / 100.0, 0, 61 FROM runs r,
       (SELECT -1 AS cpu UNION ALL SELECT 0 UNION ALL SELECT 1) c;

INSERT INTO profile_rows (run_id, comm, dso, symbol, percent)
SELECT r.id, 'udp-rr', '[kernel.kallsyms]', p.sym, p.pct + (abs(random()) % 100) / 100.0 FROM runs r,
       (SELECT 'queued_spin_lock_slowpath' AS sym, 31.0 AS pct UNION ALL SELECT 'udp_sendmsg', 7
        UNION ALL SELECT '__dev_queue_xmit', 4 UNION ALL SELECT 'ip_finish_output2', 3
        UNION ALL SELECT 'copy_user_generic', 2) p;
COMMIT;
SQL
# rows written by SQL: the per-boot summaries that compare and history read; rebuild-summaries
# also makes the planner's statistics as klab makes them in a lab (ANALYZE with an analysis
# limit: docs/query-scale.md), so the benchmarks plan as a lab's database does
"$klab" --db "$out" db rebuild-summaries >/dev/null
end=$(date +%s.%N)
printf 'gen-db: %s: %s metric rows, %s runs in %.1f s\n' "$out" \
	"$(sqlite3 "$out" 'SELECT COUNT(*) FROM metrics')" "$(sqlite3 "$out" 'SELECT COUNT(*) FROM runs')" \
	"$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')"
