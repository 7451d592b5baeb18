#!/bin/bash
# bench/bench-report.sh: time `klab report` for a job with 100 comparisons and count gnuplot processes.
#
#   bash bench/bench-report.sh [BUILD]      (default build/rel; e.g. build/report)
#
# The database is the report fixture (tests/data/report/fixture.sql) with job 1's
# two workloads copied 20 times: 40 workloads, 100 comparison rows, 960 runs with
# their metrics, per-second samples, per-CPU stats, histograms, profiles with their
# folded stacks, and monitor statuses. gnuplot
# is wrapped to count the processes started. Prints one line per figure.
set -eu
SRCDIR=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$SRCDIR/build/rel}
case $BUILD in /*) ;; *) BUILD=$SRCDIR/$BUILD ;; esac
KLAB=$BUILD/bin/klab
[ -x "$KLAB" ] || { echo "bench-report: no $KLAB (make BUILD=... bins)" >&2; exit 1; }
command -v gnuplot >/dev/null || { echo "bench-report: gnuplot not installed" >&2; exit 1; }
command -v sqlite3 >/dev/null || { echo "bench-report: sqlite3 not installed" >&2; exit 1; }

W=$(mktemp -d /tmp/klab-bench-report.XXXXXX)
trap 'rm -rf "$W"' EXIT
"$KLAB" --db "$W/b.db" db init >/dev/null
sqlite3 "$W/b.db" <"$SRCDIR/tests/data/report/fixture.sql"
sqlite3 "$W/b.db" <<'SQL'
BEGIN;
CREATE TEMP TABLE k(k INTEGER);
WITH RECURSIVE c(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM c WHERE k < 19) INSERT INTO k SELECT k FROM c;
INSERT INTO runs (id, uid, job_id, boot_id, side, kernel_id, kernel_label, workload, seq, machine, peer, profile,
                  started, duration_s, warmup_s, status, result, created)
SELECT r.id + k.k * 1000, r.uid || '-copy' || k.k, r.job_id, r.boot_id, r.side, r.kernel_id, r.kernel_label,
       r.workload || '_' || k.k, r.seq, r.machine, r.peer, r.profile, r.started, r.duration_s, r.warmup_s, r.status,
       r.result, r.created
FROM runs r, k WHERE r.job_id = 1;
INSERT INTO metrics SELECT m.run_id + k.k * 1000, m.name, m.value * (1 + k.k / 1000.0), m.unit, m.better
FROM metrics m JOIN runs r ON r.id = m.run_id, k WHERE r.job_id = 1 AND r.id < 1000;
INSERT INTO samples SELECT s.run_id + k.k * 1000, s.metric, s.t, s.value FROM samples s JOIN runs r ON r.id = s.run_id, k
WHERE r.job_id = 1 AND r.id < 1000;
INSERT INTO cpu_stats SELECT c.run_id + k.k * 1000, c.cpu, c.usr, c.nice, c.sys, c.iowait, c.irq, c.soft, c.steal, c.idle
FROM cpu_stats c JOIN runs r ON r.id = c.run_id, k WHERE r.job_id = 1 AND r.id < 1000;
INSERT INTO histograms SELECT h.run_id + k.k * 1000, h.name, h.lo, h.hi, h.count FROM histograms h JOIN runs r ON r.id = h.run_id, k
WHERE r.job_id = 1 AND r.id < 1000;
INSERT INTO profile_rows SELECT p.run_id + k.k * 1000, p.comm, p.dso, p.symbol, p.percent FROM profile_rows p
JOIN runs r ON r.id = p.run_id, k WHERE r.job_id = 1 AND r.id < 1000;
INSERT INTO profile_stacks SELECT p.run_id + k.k * 1000, p.stack, p.count FROM profile_stacks p
JOIN runs r ON r.id = p.run_id, k WHERE r.job_id = 1 AND r.id < 1000;
INSERT INTO run_monitors SELECT m.run_id + k.k * 1000, m.monitor, m.status, m.reason FROM run_monitors m
JOIN runs r ON r.id = m.run_id, k WHERE r.job_id = 1 AND r.id < 1000;
INSERT INTO comparisons (job_id, label_a, label_b, workload, metric, unit, better, n_a, n_b, mean_a, mean_b, cov_a, cov_b,
                         change_pct, ci_lo, ci_hi, p_welch, p_holm, p_mwu, hl_ratio, mde_pct, threshold_pct, verdict,
                         extra_boots, claim, created)
SELECT job_id, label_a, label_b, workload || '_' || k.k, metric, unit, better, n_a, n_b, mean_a, mean_b, cov_a, cov_b,
       change_pct, ci_lo, ci_hi, p_welch, p_holm, p_mwu, hl_ratio, mde_pct, threshold_pct, verdict, extra_boots, claim, created
FROM comparisons, k WHERE job_id = 1 AND id <= 5;
COMMIT;
SQL
# rows written by SQL: their per-boot summaries (what klab compare reads)
"$KLAB" --db "$W/b.db" db rebuild-summaries >/dev/null
ncmp=$(sqlite3 "$W/b.db" "SELECT count(*) FROM comparisons WHERE job_id = 1")
nruns=$(sqlite3 "$W/b.db" "SELECT count(*) FROM runs WHERE job_id = 1")

cat >"$W/gnuplot" <<EOW
#!/bin/sh
echo run >>"$W/gnuplot.count"
exec $(command -v gnuplot) "\$@"
EOW
chmod +x "$W/gnuplot"

run() {	# run LABEL ARGS...: one timed report run
	local label=$1 t0 t1 out
	shift
	rm -f "$W/gnuplot.count"
	t0=$(date +%s.%N)
	out=$(KLAB_GNUPLOT=$W/gnuplot "$KLAB" --db "$W/b.db" report --out "$W/out-$label" "$@")
	t1=$(date +%s.%N)
	printf '%-28s %6.2f s  %s gnuplot process(es)  [%s]\n' "$label" "$(echo "$t1 - $t0" | bc)" \
		"$(cat "$W/gnuplot.count" 2>/dev/null | wc -l)" "$out"
}
echo "bench-report: job 1 with $ncmp comparisons, $nruns runs; $(nproc) CPUs; $(gnuplot --version)"
run job-1 1
run all-pages
KLAB_GNUPLOT=none "$KLAB" --db "$W/b.db" report --out "$W/nogp" 1 >/dev/null
t0=$(date +%s.%N); KLAB_GNUPLOT=none "$KLAB" --db "$W/b.db" report --out "$W/nogp" 1 >/dev/null; t1=$(date +%s.%N)
printf '%-28s %6.2f s  (pages only, no gnuplot)\n' "job-1-no-charts" "$(echo "$t1 - $t0" | bc)"
printf 'job-1.html: %s bytes, %s chart(s) on it\n' "$(stat -c %s "$W/out-job-1/job-1.html")" \
	"$(grep -o '<img src=' "$W/out-job-1/job-1.html" | wc -l)"
