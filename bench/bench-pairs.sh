#!/bin/bash
# bench-pairs.sh: one klabd over a netns lab of many machine pairs (issue 19): PAIRS pairs
# in one pool, JOBS short tuning jobs (boot = none, one 1 s udp_rr run a side) submitted
# at once, klabd running up to AT_ONCE of them at a time.
#
#   bash bench/bench-pairs.sh [PAIRS [JOBS [AT_ONCE]]]    (root; KLAB_BUILD=build/rel by default)
#
# Prints: jobs per minute (first job start to last job end), the orchestrator's CPU
# seconds per run step (klabd and every job process it reaped: its own and its children's
# user + system time, divided by the run steps), database write latency p50/p99 (a probe
# that writes one row in a BEGIN IMMEDIATE transaction every 100 ms, as a job's steps
# do, while the jobs run), SSH connections in use (established TCP to port 22 of the
# lab, sampled every 0.5 s: peak and mean), klabd's peak RSS, job states, and the load
# average before and after. Nothing is asserted (tests/t0505-pairs.sh asserts).
set -u
SRCDIR=$(cd "$(dirname "$0")/.." && pwd)
KLAB_BUILD=${KLAB_BUILD:-$SRCDIR/build/rel}
KLAB=$KLAB_BUILD/bin/klab
KLABD=$KLAB_BUILD/bin/klabd
PAIRS=${1:-64}
JOBS=${2:-$((PAIRS + PAIRS / 8))}
AT_ONCE=${3:-16}
LIMIT_S=900	# the jobs get this long, then the bench stops them and says so
[ "$(id -u)" = 0 ] || { echo "bench-pairs: needs root (netns lab)" >&2; exit 1; }
[ -x "$KLAB" ] && [ -x "$KLABD" ] || { echo "bench-pairs: build first: make BUILD=... bins" >&2; exit 1; }

W=$(mktemp -d /var/tmp/klab-bench-pairs.XXXXXX)
L=$W/lab
DB=$W/klab.db
kpid= spid= ppid=
cleanup() {
	for p in $ppid $spid $kpid; do kill "$p" 2>/dev/null; done
	sleep 1
	[ -n "$kpid" ] && kill -9 "$kpid" 2>/dev/null
	"$KLAB" lab down --dir "$L" >/dev/null 2>&1
	rm -rf "$W"
}
trap cleanup EXIT
load0=$(cut -d" " -f1-3 /proc/loadavg)
t0=$(date +%s.%N)
"$KLAB" lab up --netns --pairs "$PAIRS" --pool p --queues 2 --index auto --dir "$L" >"$W/up" 2>&1 || {
	cat "$W/up" >&2; exit 1; }
up_s=$(echo "$(date +%s.%N) $t0" | awk '{ printf "%.1f", $1 - $2 }')
cat >"$W/klab.conf" <<CONF
[lab]
	db = $DB
	agent_dir = $W/agent
	report_dir = $W/reports
	log_level = notice
[include]
	path = $L/klab.conf
[profile "noxps"]
	xps = off
	rps = off
[profile "xps"]
	xps = auto
	rps = off
[workload "rr"]
	type = udp_rr
	flows = 1
	duration = 1s
	warmup = 200ms
	port = 9599
[job "short"]
	profile_a = noxps
	profile_b = xps
	pool = p
	workloads = rr
	boots = 1
	runs = 1
	warmup_runs = 0
	seed = 5
CONF
export KLAB_CONFIG=$W/klab.conf KLAB_DB=$DB
"$KLAB" db init >/dev/null || exit 1
sqlite3 "$DB" "CREATE TABLE bench_probe (t REAL)" || exit 1

# the write probe: one small write transaction every 100 ms, its latency in ms per line
python3 - "$DB" >"$W/probe" <<'EOF' &
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], timeout=30, isolation_level=None)
end = time.time() + 900
while time.time() < end:
    t = time.perf_counter()
    db.execute("BEGIN IMMEDIATE"); db.execute("INSERT INTO bench_probe VALUES (?)", (time.time(),)); db.execute("COMMIT")
    print("%.3f" % ((time.perf_counter() - t) * 1000), flush=True)
    time.sleep(0.1)
EOF
ppid=$!
# SSH connections to the lab's sshds (port 22 on 198.18.0.0/15), every 0.5 s, bounded
( for i in $(seq $((2 * LIMIT_S))); do
	ss -Htn state established '( dport = :22 )' dst 198.18.0.0/15 | wc -l
	sleep 0.5
  done ) >"$W/ssh" &
spid=$!

"$KLABD" -d -j "$AT_ONCE" -c "$W/klab.conf" >"$W/klabd.log" 2>&1 &
kpid=$!
for i in $(seq 50); do grep -q "klabd .* started" "$W/klabd.log" && break; sleep 0.1; done
pids=
for i in $(seq "$JOBS"); do "$KLAB" submit --job short >/dev/null 2>>"$W/submit.err" & pids="$pids $!"; done
for p in $pids; do wait "$p"; done
end=$(( $(date +%s) + LIMIT_S ))
while [ "$(date +%s)" -lt "$end" ]; do
	[ "$(sqlite3 "$DB" "SELECT count(*) FROM jobs WHERE state IN ('queued', 'running')")" = 0 ] && break
	sleep 1
done
left=$(sqlite3 "$DB" "SELECT count(*) FROM jobs WHERE state IN ('queued', 'running')")
load1=$(cut -d" " -f1-3 /proc/loadavg)
hwm=$(awk '/VmHWM/ { print $2 }' /proc/$kpid/status)
# klabd's CPU and that of every job process it reaped (utime stime cutime cstime,
# fields 14-17 of /proc/PID/stat), once the last job process has been reaped
sleep 2
awk '{ print $14, $15, $16, $17 }' /proc/$kpid/stat >"$W/klabd.cpu"
kill -TERM "$kpid"
for i in $(seq 400); do kill -0 "$kpid" 2>/dev/null || break; sleep 0.1; done
kill "$ppid" "$spid" 2>/dev/null
tck=$(getconf CLK_TCK)
runsteps=$(sqlite3 "$DB" "SELECT count(*) FROM steps WHERE key LIKE 'run:%'")

echo "# bench-pairs: $PAIRS pairs, $JOBS jobs, up to $AT_ONCE at once; $(nproc) CPUs; load before $load0, at the end $load1"
echo "lab up:                  $up_s s"
sqlite3 "$DB" "SELECT 'jobs:                    ' || group_concat(state || ' ' || n, ', ') FROM (SELECT state, count(*) n FROM jobs GROUP BY state)"
[ "$left" = 0 ] || echo "NOT FINISHED: $left jobs still queued or running after $LIMIT_S s"
sqlite3 "$DB" "SELECT printf('jobs per minute:         %.1f (%d jobs in %.1f s)', count(*) * 60.0 / (max(finished) - min(started)), count(*), max(finished) - min(started)) FROM jobs WHERE state = 'done'"
sqlite3 "$DB" "SELECT printf('run step:                %.1f s mean, %.1f s max (%d steps)', avg(finished - started), max(finished - started), count(*)) FROM steps WHERE key LIKE 'run:%'"
awk -v n="$runsteps" -v t="$tck" '{ printf "orchestrator CPU:        %.2f s per run step (klabd %.1f s + its jobs %.1f s, %d run steps)\n", ($1 + $2 + $3 + $4) / t / n, ($1 + $2) / t, ($3 + $4) / t, n }' "$W/klabd.cpu"
sort -n "$W/probe" | awk '{ v[NR] = $1 } END { if (!NR) exit; i = int(NR * 0.99) + 1; if (i > NR) i = NR
	printf "db write latency:        p50 %.1f ms, p99 %.1f ms, max %.1f ms (%d probes)\n", v[int(NR * 0.5) + 1], v[i], v[NR], NR }'
awk '{ s += $1; if ($1 > m) m = $1 } END { if (NR) printf "ssh connections in use:  peak %d, mean %.1f (%d samples)\n", m, s / NR, NR }' "$W/ssh"
echo "klabd peak RSS:          $((hwm / 1024)) MB ($hwm kB)"
sqlite3 "$DB" "SELECT printf('step time by kind:       %s', group_concat(name || ' ' || printf('%.1f', a), ', ')) FROM (SELECT name, avg(finished - started) a FROM steps GROUP BY name ORDER BY a DESC LIMIT 6)"
grep -c "warning" "$W/klabd.log" | sed 's/^/klabd warnings:          /'
grep -c "retrying once" "$W/klabd.log" | sed 's/^/runs retried:            /'
# what they were: job numbers, run ids and figures taken out, most frequent first
grep "warning" "$W/klabd.log" | sed -E 's/job [0-9]+/job N/g; s/j[0-9]+-[0-9a-z-]+/RUN/g; s/[0-9]+(\.[0-9]+)?/#/g' |
	sort | uniq -c | sort -rn | head -5 | sed 's/^/  /'
