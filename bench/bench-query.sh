#!/bin/bash
# bench/bench-query.sh: time klab query / compare / history on a 1M-metric-row database.
#
#   bash bench/bench-query.sh [KLAB]       (default KLAB: build/rel/bin/klab)
#   KLAB_BENCH_DB=/path/x.db bash bench/bench-query.sh ...   (reuse or make that database)
#   KLAB_GEN_JOBS=10000 bash bench/bench-query.sh   (10M metric rows, build/bench/klab-10000j.db;
#                                                    gen-db.sh's counts x10, the labels follow)
#   KLAB_GEN_METRICS=50 KLAB_GEN_JOBS=20000 ...     (100M metric rows in 2M runs of 50 metrics,
#                                                    build/bench/klab-20000j-50m.db)
#   KLAB_BENCH_PG=local bash bench/bench-query.sh   (then the same on PostgreSQL 15: a private
#       server in build/bench/pg-N on 127.0.0.1, the sqlite database copied into it with COPY;
#       its load time and size are printed; removed at the end unless KLAB_BENCH_PG_KEEP=1, which
#       leaves it running and prints its URL and how to stop it)
#   KLAB_BENCH_PG=postgresql://... bash bench/bench-query.sh   (the commands on that database,
#       loaded before with KLAB_BENCH_PG_KEEP=1; the sqlite runs are skipped)
#
# Makes the database with bench/gen-db.sh when it is missing (about 10 s), then
# runs each command 5 times and prints the wall-clock and user CPU time of the
# fastest and the median run. Targets (issue 19, at 100M rows): query of one
# metric of one workload < 100 ms, compare of two kernels < 300 ms, history
# < 100 ms, one job's report < 1 s; the kernel comparison is timed again from
# the per-boot summaries as its peer (what it read before migration 0016).
# Output goes to /dev/null, so the figures include formatting but not the
# terminal.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
klab=${1:-$here/build/rel/bin/klab}
jobs=${KLAB_GEN_JOBS:-1000}
nmet=${KLAB_GEN_METRICS:-10}
if [ "$jobs" = 1000 ] && [ "$nmet" = 10 ]; then
	db=${KLAB_BENCH_DB:-$here/build/bench/klab-1m.db}
elif [ "$nmet" = 10 ]; then
	db=${KLAB_BENCH_DB:-$here/build/bench/klab-${jobs}j.db}
else
	db=${KLAB_BENCH_DB:-$here/build/bench/klab-${jobs}j-${nmet}m.db}
fi
export KLAB_GEN_JOBS=$jobs KLAB_GEN_METRICS=$nmet
n=5
[ -x "$klab" ] || { echo "bench-query.sh: no klab at '$klab': build it first (make)" >&2; exit 1; }
mkdir -p "$(dirname "$db")"
[ -f "$db" ] || bash "$here/bench/gen-db.sh" "$db" "$klab"
# the schema (and its indexes) as this klab has them; a database made before schema 16 gets its kernel samples
"$klab" --db "$db" db init >/dev/null
[ "$(sqlite3 "$db" "SELECT ready FROM summary_state WHERE name = 'kernel_samples'")" = 1 ] ||
	"$klab" --db "$db" db rebuild-summaries --kernel-samples

target_db=$db
samples_ready() {	# samples_ready 0|1: kernel comparisons from the per-kernel samples or not, on $target_db
	if [ "$target_db" = "$db" ]; then
		sqlite3 "$db" "UPDATE summary_state SET ready = $1 WHERE name = 'kernel_samples'"
	else
		psql_ -d klab -c "UPDATE summary_state SET ready = $1 WHERE name = 'kernel_samples'" >/dev/null
	fi
}
bench() {	# bench LABEL TARGET_MS ARGS...: on $target_db
	local label=$1 target=$2 i t
	shift 2
	local times=()
	"$klab" --db "$target_db" "$@" >/dev/null || { echo "bench-query.sh: '$*' failed" >&2; exit 1; }
	for ((i = 0; i < n; i++)); do
		t=$( { TIMEFORMAT='%R %U'; time "$klab" --db "$target_db" "$@" >/dev/null 2>&1; } 2>&1 )
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
	"$(sqlite3 "$db" 'SELECT COUNT(*) FROM runs') runs, $(du -m "$db" | cut -f1) MB); klab: $klab;" \
	"$(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)"
rows=$((jobs * 10))	# runs of one workload, of one kernel pair, ...
rep=$(mktemp -d)
trap 'rm -rf "$rep"' EXIT
run_all() {	# the commands, on $target_db
	bench "query --workload wl3 --metric tps (${rows} rows)" 100 query --workload wl3 --metric tps
	bench "query ... --json (${rows} rows)" 1000 query --workload wl3 --metric tps --json
	bench "query --job 500 --metric tps" 100 query --job 500 --metric tps
	bench "query --kernel k3 --metric tps --since ..." 100 query --kernel k3 --metric tps --since 2026-06-01
	bench "compare k1 k2 (${rows} runs, $((rows * 9 / 20)) measured/side)" 300 compare k1 k2
	# the peer: the same comparison from the per-boot summaries (what it read before the kernel samples)
	samples_ready 0
	bench "compare k1 k2, per-boot summaries (peer)" 300 compare k1 k2
	samples_ready 1
	bench "compare 500 (one job, 100 runs; stores)" 1000 compare 500
	bench "history wl0 tps ($((jobs / 10)) nightly jobs)" 100 history wl0 tps
	bench "report 500 --no-charts (one job's page)" 1000 report --no-charts --out "$rep" 500
}
psql_url() { psql -qAt -v ON_ERROR_STOP=1 "$pg_url" "$@"; }
case ${KLAB_BENCH_PG:-} in
postgresql://*)
	pg_url=$KLAB_BENCH_PG
	psql_() { shift 2; psql_url "$@"; }	# psql_ -d klab ...: the database is the URL's
	echo "== PostgreSQL ($pg_url, loaded before)"
	target_db=$pg_url
	run_all
	exit 0;;
esac
echo "== sqlite"
run_all

[ "${KLAB_BENCH_PG:-}" = local ] || exit 0
# PostgreSQL 15: a private server, as the tests start one (tests/lib.sh test_pg_start)
pgbin=${PG_BIN:-/usr/lib/postgresql/15/bin}
[ -x "$pgbin/initdb" ] || { echo "bench-query.sh: no PostgreSQL 15 in $pgbin (make deps)" >&2; exit 1; }
pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
pgdir=$here/build/bench/pg-$$ port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$pgdir" && chmod 700 "$pgdir"
[ "$(id -u)" != 0 ] || chown postgres: "$pgdir"
pgstop() {
	rm -rf "$rep"
	if [ -n "${KLAB_BENCH_PG_KEEP:-}" ] && [ -n "${url:-}" ]; then
		echo "kept: KLAB_BENCH_PG=$url bash bench/bench-query.sh;" \
			"stop it with: runuser -u postgres -- $pgbin/pg_ctl -D $pgdir/data stop; rm -rf $pgdir"
		return
	fi
	pg "$pgbin/pg_ctl" -D "$pgdir/data" -m fast -w stop >/dev/null 2>&1
	rm -rf "$pgdir"
}
trap pgstop EXIT
pg "$pgbin/initdb" -D "$pgdir/data" -U postgres --auth-local=trust --auth-host=trust -E UTF8 --locale=C.UTF-8 >"$pgdir/initdb.log"
# the server as a lab host would run it for this size: 25% of RAM as shared buffers is the usual advice; 2 GB here
pg "$pgbin/pg_ctl" -D "$pgdir/data" -l "$pgdir/log" -w -o "-p $port -k $pgdir -c listen_addresses=127.0.0.1 \
	-c shared_buffers=2GB -c work_mem=64MB -c maintenance_work_mem=512MB -c max_wal_size=8GB -c fsync=off" start >/dev/null
psql_() { pg psql -h "$pgdir" -p "$port" -U postgres -qAt -v ON_ERROR_STOP=1 "$@"; }
psql_ -d postgres -c "CREATE DATABASE klab" >/dev/null
url="postgresql://postgres@127.0.0.1:$port/klab"
"$klab" --db "$url" db init >/dev/null
t0=$(date +%s.%N)
# parents first (foreign keys); the summaries as the sqlite database has them
for t in kernels jobs job_sides boots runs metrics cpu_stats profile_rows boot_metrics boot_cpus boot_profile job_metrics \
	kernel_samples; do
	cols=$(sqlite3 "$db" "SELECT group_concat(name, ', ') FROM pragma_table_info('$t')")
	sqlite3 -csv "$db" "SELECT $cols FROM $t" | psql_ -d klab -c "\\copy $t ($cols) FROM STDIN WITH (FORMAT csv)"
done
psql_ -d klab -c "VACUUM ANALYZE" >/dev/null
t1=$(date +%s.%N)
echo "== PostgreSQL 15 ($url): loaded in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", b - a }') s," \
	"$(psql_ -d klab -c "SELECT pg_database_size('klab') / 1048576") MB;" \
	"$(psql_ -d klab -c "SELECT pg_total_relation_size('metrics') / 1048576") MB of it metrics with its indexes"
target_db=$url
run_all
