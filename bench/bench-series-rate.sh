#!/bin/bash
# bench-series-rate.sh: how many patch series an hour this lab decides, builds included (issue
# 35's target "series decided per hour on this machine"), measured in one run of this script.
#
#   bash bench/bench-series-rate.sh [S [PAIRS]]     (root; KLAB_BUILD=build/rel by default)
#
# 1. S (default 6) one-patch series to net/ipv4/udp.c as git format-patch mails against the
#    demo tree (linux-source-6.1's import, kernels/lab/demo-tree.conf), made by
#    tests/data/series-rate/make-series.sh: the odd ones a bounded volatile loop in
#    udp_sendmsg() of SPINS iterations in turn (default "5 20 80": about 1%, 4% and 16% of the
#    path length), the even ones neutral (a comment reworded in place; two declarations
#    swapped). Each diff carries this run's stamp, so every patched kernel is a new cache key
#    and klab's build step builds it (incrementally, in linux-source-6.1's build folder).
# 2. `klab lab up --qemu --clock icount --smp 1 --pairs 2 --pool srate` on the demo's baseline
#    kernel from the artifact store (a cache hit, nothing built), on a free lab index (48..30).
# 3. The calibration (docs/statistics.md, "A calibrated instrument") of the pool: CALFILE
#    (default /var/cache/klab/calibrations/bench-series-rate.json), else the bisect bench's
#    file, imported when its rows are of this pool's instrument (an icount pool's key names
#    the pool: "pool:srate;icount;...") and of the workload "tx"; else learnt by `klab
#    calibrate run ser --ref klab-import --boots CAL_BOOTS` (3 a side, the baseline on both
#    sides, a database of its own) and exported to CALFILE, its time printed. CALIBRATE=fresh
#    learns again. All of this is before the timed part.
# 4. The timed part: every series submitted at once, `klab submit --job ser --mbox NN.mbox`
#    (the intake step reads the mail in the sandbox, docs/intake.md), the job: tree
#    linux-source-6.1, pool srate, udp_tx to the dummy target sized by work (the bisect
#    bench's workload), boots = 1..3, 1 warm-up and 2 measured runs a boot; one klabd -j 2
#    runs them, a job a pair (KLABD_JOBS=3: -j 3, a third job builds its kernels while both
#    pairs are busy and then waits for a lease). PAIRS (default 1) is the job's `pairs`
#    (docs/jobs.md, "Boots on several pairs"): 2 lets a job run its A and B boot at once when
#    the other pair is free. It ends when no job is queued or running (at most RATE_TIMEOUT,
#    3600 s).
#
# Prints the wall time from the first submit to the last verdict (the end of the last job's
# compare step), series decided per hour, per series its build (cache hit, or the kernel's
# make time, and the build steps' wall time with their wait for the tree's lock), boots, the
# tx_pps verdict with its change and CI, insn_per_op's change, whether the comparison used the
# calibration, and whether the verdict is right (CHANGED worse for a regression, not CHANGED
# for a neutral one); then the host seconds of the jobs' steps by kind (builds, deploys, rest
# of the boots, runs, the rest) as a sum and as the part of the wall time during which at
# least one such step ran; each pair's time held by no job (lease_history); the load (uptime)
# before and after. Exit 1 on a wrong verdict or a job not done. The icount lab makes no
# network namespace on the host (the peer is a namespace inside each guest); `lab down` on
# every exit stops the guests. KEEP=1 keeps the scratch folder. The patched kernels stay in
# the artifact store (6.6 MB each: about 40 MB a run of 6).
set -u
SRCDIR=$(cd "$(dirname "$0")/.." && pwd)
. "$SRCDIR/bench/lib.sh"
KLAB_BUILD=${KLAB_BUILD:-$SRCDIR/build/rel}
KLAB=$KLAB_BUILD/bin/klab
KLABD=$KLAB_BUILD/bin/klabd
S=${1:-6}
PAIRS=${2:-1}
SPINS=${SPINS:-5 20 80}
POOL=srate
CACHE=${KLAB_KERNEL_CACHE:-/var/cache/klab}
ARTIFACTS=${KLAB_ARTIFACTS:-$CACHE/artifacts}
CALFILE=${CALFILE:-$CACHE/calibrations/bench-series-rate.json}
BISECT_CALFILE=$CACHE/calibrations/bench-bisect-icount.json
CALIBRATE=${CALIBRATE:-auto}
CAL_BOOTS=${CAL_BOOTS:-3}
RATE_TIMEOUT=${RATE_TIMEOUT:-3600}
KLABD_JOBS=${KLABD_JOBS:-2}
me=bench-series-rate
[ "$(id -u)" = 0 ] || { echo "$me: needs root (qemu lab)" >&2; exit 1; }
[ -x "$KLAB" ] && [ -x "$KLABD" ] || { echo "$me: build first (make)" >&2; exit 1; }
case $S in [1-9] | [1-9][0-9]) ;; *) echo "$me: S '$S' is not a number of series 1..99" >&2; exit 1 ;; esac
case $PAIRS in 1 | 2) ;; *) echo "$me: PAIRS '$PAIRS' is not 1 or 2 (the pool has 2 pairs)" >&2; exit 1 ;; esac
case $KLABD_JOBS in [1-9]) ;; *) echo "$me: KLABD_JOBS '$KLABD_JOBS' is not 1..9" >&2; exit 1 ;; esac
case $CALIBRATE in auto | fresh) ;; *) echo "$me: CALIBRATE '$CALIBRATE' is not auto or fresh" >&2; exit 1 ;; esac

# a qemu lab index of its own (bench/lib.sh)
bench_qemu_lab_index "$me"

W=$(mktemp -d /var/tmp/klab-bench-series-rate.XXXXXX)
chmod 0755 "$W"	# the sandboxed intake and build (user klab) read here
L=$W/lab
export KLAB_CONFIG=$W/klab.conf
klabd_pid=
cleanup() {
	if [ -n "$klabd_pid" ]; then
		kill -TERM "$klabd_pid" 2>/dev/null
		for i in $(seq 40); do kill -0 "$klabd_pid" 2>/dev/null || break; sleep 0.5; done
		kill -9 "$klabd_pid" 2>/dev/null
	fi
	"$KLAB" lab down --qemu --dir "$L" >/dev/null 2>&1
	if [ "${KEEP:-0}" = 1 ]; then echo "$me: kept $W" >&2; else rm -rf "$W"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
now() { date +%s.%N; }
since() { echo "$(now) $1" | awk '{ printf "%.0f", $1 - $2 }'; }
load() { cut -d" " -f1-3 /proc/loadavg; }

conf() {	# conf DB [FRAGMENT]: the config
	cat <<CONF
[lab]
	db = $1
	artifact_dir = $ARTIFACTS
	work_dir = $W/work
	agent_dir = $W/agent
	report_dir = $W/report
	boot_timeout = 600s
	log_level = notice
[include]
	path = $SRCDIR/kernels/lab/demo-tree.conf
CONF
	[ $# -gt 1 ] || return 0
	cat <<CONF
[include]
	path = $2
# bench/bench-bisect-icount.sh's workload
[workload "tx"]
	type = udp_tx
	target = dummy
	engine = io_uring
	threads = 1
	payload_size = 64
	batch = 32
	monitors = cpu
[job "ser"]
	tree = linux-source-6.1
	pool = $POOL
	workloads = tx
	boots = 1..3
	runs = 2
	warmup_runs = 1
	pairs = $PAIRS
CONF
}

# cal_fits FILE: FILE holds a calibration of this pool's instrument for the workload tx
cal_fits() {
	[ -s "$1" ] && python3 - "$1" "$POOL" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1])).get("rows", [])
ok = [r for r in rows if r.get("instrument", "").startswith("pool:%s;icount;" % sys.argv[2])
      and r.get("workload") == "tx" and r.get("metric") == "tx_pps"]
sys.exit(0 if ok else 1)
PY
}

stamp=$(date -u +%Y%m%d-%H%M%S)-$$
echo "$me: $S series (regressions of $SPINS loop iterations in turn, neutral ones between), pool '$POOL'" \
	"of 2 icount pairs at lab index $K, klabd -j $KLABD_JOBS, boots = 1..3, pairs = $PAIRS; $(nproc) host CPUs; stamp $stamp"
echo "$me: uptime at start: $(uptime)"
t_all=$(now)
bash "$SRCDIR/tests/data/series-rate/make-series.sh" "$CACHE/src/linux-source-6.1" "$W/series" "$stamp" "$S" "$SPINS" \
	>"$W/series.txt" || { echo "$me: cannot make the series" >&2; exit 1; }
chmod -R a+rX "$W/series"
[ "$(wc -l <"$W/series.txt")" = "$S" ] || { echo "$me: make-series.sh made $(wc -l <"$W/series.txt") of $S series" >&2; exit 1; }

# the lab's kernel: the demo's baseline from the shared artifact store (a cache hit)
conf "$W/base.db" >"$KLAB_CONFIG"
"$KLAB" --json kernels build --tree linux-source-6.1 --variant base >"$W/base.json" 2>"$W/base.err" ||
	{ cat "$W/base.err" >&2; exit 1; }
img=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["image"])' "$W/base.json")
t0=$(now)
"$KLAB" lab up --qemu --clock icount --smp 1 --pairs 2 --pool "$POOL" --kernel "$img" --dir "$L" --index "$K" \
	--timeout 900 >"$W/up.out" 2>&1 || { cat "$W/up.out" >&2; exit 1; }
echo "$me: lab up in $(since "$t0") s (setup from the start: $(since "$t_all") s)"

# the calibration: a file of this pool's instrument, else learnt in a database of its own
cal=
if [ "$CALIBRATE" = auto ]; then
	for f in "$CALFILE" "$BISECT_CALFILE"; do
		if cal_fits "$f"; then cal=$f; break; fi
		[ -s "$f" ] && echo "$me: $f is not of this pool's instrument (pool:$POOL;icount;...) and workload tx: not used"
	done
fi
if [ -z "$cal" ]; then
	conf "$W/cal.db" "$L/klab.conf" >"$KLAB_CONFIG"
	"$KLAB" db init >/dev/null || exit 1
	echo "$me: calibrating: klab calibrate run ser --ref klab-import --boots $CAL_BOOTS (load $(load))"
	t0=$(now)
	timeout -k 30 1800 "$KLAB" calibrate run ser --ref klab-import --boots "$CAL_BOOTS" --wait --quiet \
		>"$W/cal.out" 2>&1 || { tail -20 "$W/cal.out" >&2; echo "$me: the calibration failed" >&2; exit 1; }
	cal_s=$(since "$t0")
	grep -v '^    instrument ' "$W/cal.out" | grep -e '^klab:' -e 'tx\.tx_pps'
	mkdir -p "$(dirname "$CALFILE")" && "$KLAB" calibrate export "$CALFILE" >/dev/null || exit 1
	cal_fits "$CALFILE" || { echo "$me: the calibration learnt is not of pool $POOL's instrument" >&2; exit 1; }
	echo "$me: calibration learnt in $cal_s s (the baseline, a cache hit; $((2 * CAL_BOOTS)) boots; load $(load)), kept in $CALFILE"
	cal=$CALFILE
fi

conf "$W/klab.db" "$L/klab.conf" >"$KLAB_CONFIG"
"$KLAB" db init >/dev/null || exit 1
"$KLAB" config check "$KLAB_CONFIG" >/dev/null || exit 1
"$KLAB" calibrate import "$cal" >/dev/null || { echo "$me: cannot import $cal" >&2; exit 1; }
"$KLAB" calibrate list | grep -v '^    instrument ' | grep "tx\.tx_pps" | sed "s|^|$me: calibration ($cal): |"
"$KLABD" -d -g 30 -j "$KLABD_JOBS" -c "$KLAB_CONFIG" >"$W/klabd.log" 2>&1 &
klabd_pid=$!
for i in $(seq 50); do grep -q "klabd .* started" "$W/klabd.log" && break; sleep 0.2; done
grep -q "klabd .* started" "$W/klabd.log" || { cat "$W/klabd.log" >&2; echo "$me: klabd did not start" >&2; exit 1; }

# the timed part: every series submitted at once, to the last verdict
uptime0=$(uptime)
load0=$(load)
echo "$me: submitting $S series; uptime: $uptime0"
t0=$(now)
while read -r nn kind size mbox subject; do
	"$KLAB" --json submit --job ser --mbox "$mbox" >"$W/submit-$nn.json" ||
		{ echo "$me: klab submit --mbox $mbox failed" >&2; exit 1; }
	id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$W/submit-$nn.json")
	echo "$nn $kind $size $id $subject" >>"$W/jobs.txt"
done <"$W/series.txt"
q() { sqlite3 "$W/klab.db" "$1"; }
while [ "$(q "SELECT count(*) FROM jobs WHERE state IN ('queued', 'running')")" != 0 ]; do
	sleep 2
	kill -0 "$klabd_pid" 2>/dev/null || { echo "$me: klabd died" >&2; tail "$W/klabd.log" >&2; exit 1; }
	[ "$(since "$t0")" -le "$RATE_TIMEOUT" ] ||
		{ echo "$me: jobs still queued or running after $RATE_TIMEOUT s" >&2; q "SELECT id, state FROM jobs" >&2; exit 1; }
done
t1=$(now)
uptime1=$(uptime)
load1=$(load)
kill -TERM "$klabd_pid"; wait "$klabd_pid" 2>/dev/null; klabd_pid=
while read -r nn kind size id subject; do
	"$KLAB" --json compare "$id" >"$W/compare-$id.json" 2>"$W/compare-$id.err" || : >"$W/compare-$id.json"
done <"$W/jobs.txt"

python3 - "$W/klab.db" "$W/jobs.txt" "$W" "$t0" "$t1" "$S" <<'PY'
import json, sqlite3, sys
db, jobs_txt, w, t0, t1, S = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
c = sqlite3.connect(db)
jobs = [l.split(None, 4) for l in open(jobs_txt).read().splitlines()]
ids = [int(j[3]) for j in jobs]
idl = ",".join(map(str, ids))
# the last verdict: the end of the last compare step
last = c.execute("SELECT MAX(finished) FROM steps WHERE job_id IN (%s) AND name = 'compare' AND state = 'done'" % idl).fetchone()[0]
end = last if last else t1
wall = end - t0
wrong = failed = 0
rows = []
for nn, kind, size, jid, subject in jobs:
    jid = int(jid)
    state, err = c.execute("SELECT state, COALESCE(error, '') FROM jobs WHERE id = ?", (jid,)).fetchone()
    dut = "+".join(m for (m,) in c.execute("SELECT DISTINCT machine FROM boots WHERE job_id = ? ORDER BY machine", (jid,))) or "-"
    b = c.execute("SELECT started, finished, detail FROM steps WHERE job_id = ? AND key = 'build:B'", (jid,)).fetchone()
    build = "-"
    if b and b[1]:
        d = json.loads(b[2] or "{}")
        k = c.execute("SELECT k.duration_s FROM job_sides s JOIN kernels k ON k.id = s.kernel_id WHERE s.job_id = ? AND s.side = 'B'",
                      (jid,)).fetchone()
        build = "cache hit" if d.get("cached") else "built, make %.0f s" % ((k[0] or 0) if k else 0)
    ab = c.execute("SELECT COALESCE(SUM(finished - started), 0) FROM steps WHERE job_id = ? AND name = 'build'", (jid,)).fetchone()[0]
    at = c.execute("SELECT MAX(finished) FROM steps WHERE job_id = ? AND name = 'compare' AND state = 'done'", (jid,)).fetchone()[0]
    at = "+%.0f s" % (at - t0) if at else "-"
    boots = c.execute("SELECT COUNT(*) FROM boots WHERE job_id = ?", (jid,)).fetchone()[0]
    cmp = {}
    try:
        doc = json.load(open("%s/compare-%d.json" % (w, jid)))
        for r in doc.get("comparisons", []):
            if r.get("workload") == "tx":
                cmp[r["metric"]] = r
    except (ValueError, OSError):
        pass
    tx = cmp.get("tx_pps")
    ins = cmp.get("insn_per_op")
    verdict = tx["verdict"] if tx else "-"
    if state != "done":
        failed += 1
        right = "FAILED: " + err
    elif not tx:
        right = "no tx_pps comparison"
    elif kind == "regression":
        right = "right" if verdict == "CHANGED" and tx["change_pct"] < 0 else "WRONG (a regression)"
    else:
        right = "right" if verdict != "CHANGED" else "WRONG (neutral)"
    if not right.startswith("right"):
        wrong += 1
    f = lambda r: "%+.2f%% [%+.2f, %+.2f]" % (r["change_pct"], r["ci_lo"], r["ci_hi"]) if r else "-"
    cal = "calibrated" if tx and tx.get("noise") and tx["noise"].get("source") == "calibration" else "own boots"
    what = "spin %s" % size if kind == "regression" else "neutral"
    rows.append((nn, jid, what, dut, build, ab, boots, at, verdict, f(tx), f(ins), cal, right))

decided = sum(1 for r in rows if r[8] in ("CHANGED", "EQUIVALENT"))
calibrated = sum(1 for r in rows if r[11] == "calibrated")
print()
print("bench-series-rate: %d series, %d done, %d decided (CHANGED or EQUIVALENT), %d wrong or undecided" %
      (S, S - failed, decided, wrong))
print("  wall time, first submit to last verdict   %.0f s (%d min %02d s)" % (wall, wall // 60, wall % 60))
print("  series decided per hour                   %.1f" % (3600 * decided / wall))
print("  judged with the calibration               %d of %d%s" % (calibrated, S, "" if calibrated == S else
      " (a calibration whose instrument or workload key no longer matches is not used: CALIBRATE=fresh)"))
print()
print("%-3s %-4s %-9s %-9s %-19s %7s %5s %8s %-11s %-24s %-24s %-10s %s" % ("nn", "job", "patch", "pair", "patched kernel",
      "build s", "boots", "verdict", "tx_pps", "tx_pps change [95% CI]", "insn_per_op change", "noise", "verdict is"))
for r in rows:
    print("%-3s %-4d %-9s %-9s %-19s %7.0f %5d %8s %-11s %-24s %-24s %-10s %s" % r)
print("  (build s: the job's build:A and build:B steps, the wait for the tree's lock included; verdict: when its compare step ended)")

# the host seconds of the steps by kind, summed and as the part of the wall time during
# which at least one step of that kind ran (two jobs run at once, so sums exceed the wall)
kinds = [("kernel builds", "name = 'build'"),
         ("deploys (kexec)", "name = 'deploy'"),
         ("rest of the boots", "key LIKE 'boot:%' AND name != 'deploy'"),
         ("runs", "name = 'run'"),
         ("looks, compare, report", "name IN ('look', 'compare', 'report')"),
         ("everything else", "name NOT IN ('build', 'deploy', 'run', 'look', 'compare', 'report') AND key NOT LIKE 'boot:%'")]
def union(iv):
    tot, cur = 0.0, None
    for a, b in sorted(iv):
        a, b = max(a, t0), min(b, end)
        if b <= a:
            continue
        if cur and a <= cur[1]:
            cur[1] = max(cur[1], b)
        else:
            if cur:
                tot += cur[1] - cur[0]
            cur = [a, b]
    return tot + (cur[1] - cur[0] if cur else 0)
print()
print("  %-24s %10s %7s %18s" % ("steps of the jobs", "host s", "steps", "wall covered"))
for name, where in kinds:
    iv = c.execute("SELECT started, finished FROM steps WHERE job_id IN (%s) AND finished IS NOT NULL AND state = 'done' AND (%s)"
                   % (idl, where)).fetchall()
    print("  %-24s %10.0f %7d %10.0f s (%2.0f%%)" % (name, sum(b - a for a, b in iv), len(iv), union(iv), 100 * union(iv) / wall))
built = c.execute("SELECT COUNT(*), COALESCE(SUM(k.duration_s), 0), COALESCE(MIN(k.duration_s), 0), COALESCE(MAX(k.duration_s), 0) "
                  "FROM job_sides s JOIN kernels k ON k.id = s.kernel_id JOIN steps st ON st.job_id = s.job_id AND st.key = 'build:' || s.side "
                  "WHERE s.job_id IN (%s) AND json_extract(st.detail, '$.cached') = 0" % idl).fetchone()
print("  kernels built            %d, %.0f s of make (kernels.duration_s), %.0f-%.0f s each" % built)
both = union([(a, b) for a, b in c.execute("SELECT MIN(started), MAX(finished) FROM steps WHERE job_id IN (%s) GROUP BY job_id" % idl)])
print("  some job running         %.0f s of the wall time" % both)
# each pair: held by a job while it had the pair's dut leased (lease_history); idle otherwise
held = {}
for dut, a, b in c.execute("SELECT machine, acquired, COALESCE(released, ?) FROM lease_history WHERE job_id IN (%s) "
                           "AND machine IN (SELECT DISTINCT machine FROM boots)" % idl, (end,)):
    held.setdefault(dut, []).append((a, b))
for dut in sorted(held):
    h = union(held[dut])
    print("  pair %-19s held by a job %.0f s, idle %.0f s (%.0f%%) of the wall time" % (dut, h, wall - h, 100 * (wall - h) / wall))
sys.exit(1 if wrong or failed else 0)
PY
rc=$?
echo "  load before / after      $load0 / $load1"
echo "$me: uptime before: $uptime0"
echo "$me: uptime after:  $uptime1"
exit $rc
