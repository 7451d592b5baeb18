#!/bin/bash
# bench/bench-query.sh: time klab query / compare / history on a 1M-metric-row database.
#
#   bash bench/bench-query.sh [KLAB]       (default KLAB: build/rel/bin/klab)
#   KLAB_BENCH_DB=/path/x.db bash bench/bench-query.sh ...   (reuse or make that database)
#   KLAB_GEN_JOBS=10000 bash bench/bench-query.sh   (10M metric rows, build/bench/klab-10000j.db;
#                                                    gen-db.sh's counts x10, the labels follow)
#
# Makes the database with bench/gen-db.sh when it is missing (about 10 s), then
# runs each command 5 times and prints the wall-clock and user CPU time of the
# fastest and the median run. Targets (issue 8): query of one metric of one
# workload < 100 ms, compare over 10k runs < 1 s. Output goes to /dev/null, so
# the figures include formatting but not the terminal.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
klab=${1:-$here/build/rel/bin/klab}
jobs=${KLAB_GEN_JOBS:-1000}
if [ "$jobs" = 1000 ]; then
	db=${KLAB_BENCH_DB:-$here/build/bench/klab-1m.db}
else
	db=${KLAB_BENCH_DB:-$here/build/bench/klab-${jobs}j.db}
fi
export KLAB_GEN_JOBS=$jobs
n=5
[ -x "$klab" ] || { echo "bench-query.sh: no klab at '$klab': build it first (make)" >&2; exit 1; }
mkdir -p "$(dirname "$db")"
[ -f "$db" ] || bash "$here/bench/gen-db.sh" "$db" "$klab"
# the schema (and its indexes) as this klab has them
"$klab" --db "$db" db init >/dev/null

bench() {	# bench LABEL TARGET_MS ARGS...
	local label=$1 target=$2 i t
	shift 2
	local times=()
	"$klab" --db "$db" "$@" >/dev/null || { echo "bench-query.sh: '$*' failed" >&2; exit 1; }
	for ((i = 0; i < n; i++)); do
		t=$( { TIMEFORMAT='%R %U'; time "$klab" --db "$db" "$@" >/dev/null 2>&1; } 2>&1 )
		times+=("$t")
	done
	printf '%s\n' "${times[@]}" | sort -n | awk -v label="$label" -v target="$target" -v n="$n" '
		{ r[NR] = $1 * 1000; u[NR] = $2 * 1000 }
		END {
			m = int((n + 1) / 2)
			printf "%-44s best %6.0f ms (user %5.0f)  median %6.0f ms (user %5.0f)  target < %d ms %s\n",
				label, r[1], u[1], r[m], u[m], target, (r[m] < target ? "ok" : "MISSED")
		}'
}

echo "database: $db ($(sqlite3 "$db" 'SELECT COUNT(*) FROM metrics') metric rows," \
	"$(sqlite3 "$db" 'SELECT COUNT(*) FROM runs') runs); klab: $klab; $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)"
rows=$((jobs * 10))	# runs of one workload, of one kernel pair, ...
bench "query --workload wl3 --metric tps (${rows} rows)" 100 query --workload wl3 --metric tps
bench "query ... --json (${rows} rows)" 1000 query --workload wl3 --metric tps --json
bench "query --job 500 --metric tps" 100 query --job 500 --metric tps
bench "query --kernel k3 --metric tps --since ..." 100 query --kernel k3 --metric tps --since 2026-06-01
bench "compare k1 k2 (${rows} runs, $((rows * 9 / 20)) measured/side)" 1000 compare k1 k2
bench "compare 500 (one job, 100 runs; stores)" 1000 compare 500
bench "history wl0 tps ($((jobs / 10)) nightly jobs)" 1000 history wl0 tps
