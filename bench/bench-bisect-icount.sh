#!/bin/bash
# bench-bisect-icount.sh: the time of a bisection on the icount qemu lab, incremental builds
# included (issue 35's target: a 12-commit range with a ~4% path-length regression in one
# commit bisected to that commit in <= 20 minutes on this 2-core machine).
#
#   bash bench/bench-bisect-icount.sh [CULPRIT]     (root; KLAB_BUILD=build/rel by default)
#
# 1. A tree of COMMITS (12) commits on linux-source-6.1's import (tests/data/bisect/make-tree.sh):
#    comment and documentation commits, and at position CULPRIT (default 7) a loop of SPIN (20)
#    volatile iterations in udp_sendmsg(), about 4% of udp_tx's path length to the dummy
#    target (200 made it 28% slower in t0902). The [tree] shares linux-source-6.1's work tree
#    and build folder (`share`), so each commit's build is incremental (ccache warm).
# 2. `klab lab up --qemu --clock icount --smp 1 --index 44` on the baseline kernel of the
#    shared artifact store (/var/cache/klab/artifacts: a cache hit, nothing built).
# 3. The calibration (docs/statistics.md, "A calibrated instrument"): imported from CALFILE
#    (default /var/cache/klab/calibrations/bench-bisect-icount.json) when that exists, else
#    learnt by `klab calibrate run bis --ref GOOD --boots CAL_BOOTS` (3: an A/A of the good end,
#    its own database and artifact folder, so that the bisection below builds the same kernels
#    either way) and exported there; its time is printed. CALIBRATE=no bisects uncalibrated
#    (the peer figure: 2 boots a step at least); CALIBRATE=fresh learns again.
# 4. `klab bisect start --tree bisect --good C0 --bad C12 --workload tx --job bis --min-boots
#    MIN_BOOTS (2) --end-boots END_BOOTS (2)` and `klab bisect run`, timed to the end (at most
#    BISECT_TIMEOUT, 3000 s), the kernels built into an artifact folder of this run.
#
# Prints the wall time of the bisection, the host seconds of its steps by kind (kernel builds,
# with the kernels' own build times; deploys; the rest of each boot; runs), the steps and boots,
# each step's verdict and reason, the commit named and whether it is the culprit, and the load
# (uptime) before and after. The workload: udp_tx to the dummy target, io_uring, 64 B, batch 32
# (t0902's), sized by work (the icount default), the cpu monitor only; its headline tx_pps is
# the metric. KEEP=1 keeps the scratch folder.
set -u
SRCDIR=$(cd "$(dirname "$0")/.." && pwd)
KLAB_BUILD=${KLAB_BUILD:-$SRCDIR/build/rel}
KLAB=$KLAB_BUILD/bin/klab
CULPRIT=${1:-7}
COMMITS=${COMMITS:-12}
SPIN=${SPIN:-20}
INDEX=${KLAB_BENCH_INDEX:-44}
CACHE=${KLAB_KERNEL_CACHE:-/var/cache/klab}
CALFILE=${CALFILE:-$CACHE/calibrations/bench-bisect-icount.json}
CALIBRATE=${CALIBRATE:-auto}
CAL_BOOTS=${CAL_BOOTS:-3}
MIN_BOOTS=${MIN_BOOTS:-2}
END_BOOTS=${END_BOOTS:-2}
BISECT_TIMEOUT=${BISECT_TIMEOUT:-3000}
me=bench-bisect-icount
[ "$(id -u)" = 0 ] || { echo "$me: needs root (qemu lab)" >&2; exit 1; }
[ -x "$KLAB" ] || { echo "$me: build first (make)" >&2; exit 1; }
case $CULPRIT in [1-9]|[1-9][0-9]) ;; *) echo "$me: CULPRIT '$CULPRIT' is not 1..$COMMITS" >&2; exit 1 ;; esac
[ "$CULPRIT" -le "$COMMITS" ] || { echo "$me: CULPRIT $CULPRIT is past the $COMMITS commits" >&2; exit 1; }
case $CALIBRATE in auto|no|fresh) ;; *) echo "$me: CALIBRATE '$CALIBRATE' is not auto, no or fresh" >&2; exit 1 ;; esac

# the lab index: free (no guest of it runs) and held for this run, as tests/lib.sh does
exec {lockfd}>>"/run/lock/klab-qemu-lab-$INDEX.test" && flock -n "$lockfd" ||
	{ echo "$me: qemu lab index $INDEX is held by another test" >&2; exit 1; }
if pgrep -f -- "-name klab-$INDEX-(dut|peer)[0-9]*( |\$)" >/dev/null; then
	echo "$me: a qemu guest of lab index $INDEX runs already" >&2; exit 1
fi

W=$(mktemp -d /var/tmp/klab-bench-bisect-icount.XXXXXX)
chmod 0755 "$W"	# the sandboxed build (user klab) reads the tree and writes the artifacts here
L=$W/lab
export KLAB_CONFIG=$W/klab.conf
cleanup() {
	"$KLAB" lab down --qemu --dir "$L" >/dev/null 2>&1
	if [ "${KEEP:-0}" = 1 ]; then echo "$me: kept $W" >&2; else rm -rf "$W"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
now() { date +%s.%N; }
since() { echo "$(now) $1" | awk '{ printf "%.0f", $1 - $2 }'; }
load() { cut -d" " -f1-3 /proc/loadavg; }

conf() {	# conf DB ARTIFACTS [FRAGMENT]: the config
	cat <<CONF
[lab]
	db = $1
	artifact_dir = $2
	work_dir = $W/work
	agent_dir = $W/agent
	report_dir = $W/report
	boot_timeout = 600s
	log_level = notice
[include]
	path = $SRCDIR/kernels/lab/demo-tree.conf
# the bench's tree, built in linux-source-6.1's work tree and build folder (incremental)
[tree "bisect"]
	git = $W/tree
	branch = bisect
	share = linux-source-6.1
	config_base = tinyconfig
	fragments = qemu.config
	localversion = ""
CONF
	[ $# -gt 2 ] || return 0
	cat <<CONF
[include]
	path = $3
[workload "tx"]
	type = udp_tx
	target = dummy
	engine = io_uring
	threads = 1
	payload_size = 64
	batch = 32
	monitors = cpu
[job "bis"]
	tree = bisect
	machines = dut peer
	workloads = tx
	boots = 2
	runs = 2
	warmup_runs = 1
CONF
}

echo "$me: $COMMITS commits, culprit $CULPRIT ($SPIN iterations in udp_sendmsg), lab index $INDEX," \
	"min-boots $MIN_BOOTS, end-boots $END_BOOTS, calibration $CALIBRATE; $(nproc) host CPUs"
echo "$me: uptime at start: $(uptime)"
t_all=$(now)
bash "$SRCDIR/tests/data/bisect/make-tree.sh" "$CACHE/src/linux-source-6.1" "$W/tree" "$CULPRIT" "$COMMITS" "$SPIN" \
	>"$W/commits" || { echo "$me: cannot make the test tree" >&2; exit 1; }
chmod -R a+rX "$W/tree"
good=$(git -C "$W/tree" -c safe.directory='*' rev-parse klab-import)
bad=$(tail -1 "$W/commits" | cut -d" " -f1)
culprit=$(sed -n "${CULPRIT}p" "$W/commits" | cut -d" " -f1)
grep -q "^$culprit udp: spin in udp_sendmsg" "$W/commits" || { echo "$me: commit $CULPRIT is not the culprit" >&2; exit 1; }

# the lab's kernel: the demo's baseline from the shared artifact store (a cache hit)
conf "$W/base.db" "$CACHE/artifacts" >"$KLAB_CONFIG"
"$KLAB" --json kernels build --tree linux-source-6.1 --variant base >"$W/base.json" 2>"$W/base.err" ||
	{ cat "$W/base.err" >&2; exit 1; }
img=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["image"])' "$W/base.json")
t0=$(now)
"$KLAB" lab up --qemu --clock icount --smp 1 --kernel "$img" --dir "$L" --index "$INDEX" --timeout 900 \
	>"$W/up.out" 2>&1 || { cat "$W/up.out" >&2; exit 1; }
echo "$me: lab up in $(since "$t0") s (setup from the start: $(since "$t_all") s)"

# the calibration, learnt in a database and artifact folder of its own
if [ "$CALIBRATE" = fresh ] || { [ "$CALIBRATE" = auto ] && [ ! -s "$CALFILE" ]; }; then
	conf "$W/cal.db" "$W/cal-artifacts" "$L/klab.conf" >"$KLAB_CONFIG"
	"$KLAB" db init >/dev/null || exit 1
	echo "$me: calibrating: klab calibrate run bis --ref ${good:0:12} (the good end) --boots $CAL_BOOTS (load $(load))"
	t0=$(now)
	timeout -k 30 1800 "$KLAB" calibrate run bis --ref "$good" --boots "$CAL_BOOTS" --wait --quiet \
		>"$W/cal.out" 2>&1 || { tail -20 "$W/cal.out" >&2; echo "$me: the calibration failed" >&2; exit 1; }
	cal_s=$(since "$t0")
	grep -v '^    instrument ' "$W/cal.out" | grep -e '^klab:' -e 'tx\.tx_pps'
	mkdir -p "$(dirname "$CALFILE")" && "$KLAB" calibrate export "$CALFILE" >/dev/null || exit 1
	echo "$me: calibration learnt in $cal_s s (build of the good end, $((2 * CAL_BOOTS)) boots; load $(load)), kept in $CALFILE"
fi

conf "$W/klab.db" "$W/artifacts" "$L/klab.conf" >"$KLAB_CONFIG"
"$KLAB" db init >/dev/null || exit 1
"$KLAB" config check "$KLAB_CONFIG" >/dev/null || exit 1
if [ "$CALIBRATE" != no ]; then
	"$KLAB" calibrate import "$CALFILE" >/dev/null || { echo "$me: cannot import $CALFILE" >&2; exit 1; }
	"$KLAB" calibrate list | grep -v '^    instrument ' | grep "tx\.tx_pps" | sed "s/^/$me: calibration: /"
fi

load0=$(load)
echo "$me: bisecting $good..$bad; uptime: $(uptime)"
t0=$(now)
"$KLAB" bisect start --tree bisect --good "$good" --bad "$bad" --workload tx --job bis \
	--min-boots "$MIN_BOOTS" --end-boots "$END_BOOTS" >"$W/start.out" 2>&1 || { cat "$W/start.out" >&2; exit 1; }
id=$(sed -n 's/^bisection \([0-9]*\) queued.*/\1/p' "$W/start.out")
[ -n "$id" ] || { cat "$W/start.out" >&2; exit 1; }
timeout -k 60 "$BISECT_TIMEOUT" "$KLAB" bisect run "$id" >"$W/run.out" 2>&1
rc=$?
wall=$(since "$t0")
load1=$(load)
[ $rc = 0 ] || { tail -20 "$W/run.out" >&2; echo "$me: klab bisect run $id exited $rc after $wall s" >&2; }

q() { sqlite3 "$W/klab.db" "$1"; }
jobs="SELECT id FROM jobs WHERE bisection_id = $id"
secs() {	# secs WHERE: the host seconds of the bisection's steps matching WHERE, and their count
	q "SELECT printf('%.0f s (%d steps)', COALESCE(SUM(finished - started), 0), count(*)) FROM steps
	   WHERE job_id IN ($jobs) AND finished IS NOT NULL AND ($1)"
}
echo
echo "$me: bisection $id: $(q "SELECT state || ' ' || COALESCE(result, '') || COALESCE(' ' || error, '') FROM bisections WHERE id = $id")"
echo "  wall time                 $wall s ($(echo "$wall" | awk '{ printf "%d min %02d s", $1 / 60, $1 % 60 }'))"
echo "  kernel builds (steps)     $(secs "name = 'build'")"
echo "  kernels built             $(q "SELECT printf('%d, %.0f s of build (kernels.duration_s), %.0f-%.0f s each', count(*),
	SUM(duration_s), MIN(duration_s), MAX(duration_s)) FROM kernels WHERE state = 'ok'")"
echo "  deploys (kexec)           $(secs "name = 'deploy'")"
echo "  rest of the boots         $(secs "key LIKE 'boot:%' AND name != 'deploy'") (verify, agent, prepare, restore)"
echo "  runs                      $(secs "name = 'run'")"
echo "  everything else           $(secs "name NOT IN ('build', 'deploy', 'run') AND key NOT LIKE 'boot:%'")"
echo "  jobs                      $(q "SELECT count(*) FROM jobs WHERE bisection_id = $id")"
echo "  steps (after the ends)    $(q "SELECT count(*) FROM bisect_steps WHERE bisection_id = $id AND role = 'step'")"
echo "  steps decided calibrated  $(q "SELECT count(*) FROM bisect_steps WHERE bisection_id = $id AND role = 'step' AND
	reason LIKE '%(calibrated:%'") (a calibration whose instrument key no longer matches is not used: CALIBRATE=fresh)"
echo "  boots                     $(q "SELECT SUM(boots) || ' (ends ' || SUM(CASE WHEN role != 'step' THEN boots ELSE 0 END) ||
	', steps ' || SUM(CASE WHEN role = 'step' THEN boots ELSE 0 END) || ')' FROM bisect_steps WHERE bisection_id = $id")"
echo "  ends                      $(q "SELECT printf('%+.2f%% (95%% CI %+.2f%% to %+.2f%%) %s', change_pct, ci_lo, ci_hi, metric)
	FROM bisections WHERE id = $id")"
q "SELECT printf('  %-5s %-12s %5.0f s  boots %d  %-4s  %s', role, substr(commit_id, 1, 12), finished - started, boots,
	COALESCE(verdict, '-'), COALESCE(reason, '')) FROM bisect_steps WHERE bisection_id = $id ORDER BY seq"
named=$(q "SELECT COALESCE(first_bad, '') FROM bisections WHERE id = $id")
pos=$(grep -n "^$named " "$W/commits" | cut -d: -f1)
if [ -n "$named" ] && [ "$named" = "$culprit" ]; then verdict="the culprit"; else verdict="NOT the culprit (commit $CULPRIT, ${culprit:0:12})"; fi
echo "  commit named              ${named:0:12} (commit ${pos:-none} of $COMMITS): $verdict"
echo "  load before / after       $load0 / $load1"
echo "$me: uptime at end: $(uptime)"
[ $rc = 0 ] && [ "$named" = "$culprit" ]
