#!/bin/bash
# bench-pw-lag.sh: the lag from Patchwork's series-completed event to klab's final check, for
# seed 003 on the icount qemu lab, the kernels built by the job (docs/patchwork.md, "Lag on the
# icount lab").
#
#   bash bench/bench-pw-lag.sh                  # the patched kernel from the artifact store if its key is there
#   BENCH_BUILD=cold bash bench/bench-pw-lag.sh # the job builds the patched kernel (a cold artifact dir)
#
# A real Patchwork 3.1.3 on loopback (tests/data/patchwork/pw.sh), the icount qemu lab as
# README command 1 brings it up (tests/demo.sh: `klab lab up --qemu --clock icount --smp 1` from
# the baseline 6.1), a config with a [patchwork "netdev"] section whose job is the demo's
# `demo-udp-wfree` (kernels/lab/demo-qemu.conf: tree linux-source-6.1, 3 boots a side, ABBA,
# 1 warm-up + 2 runs of udp_tx_dummy and udp_rr), seed 003 fed as mails
# (tests/data/patchwork/mkmail.py), klabd polling every second until the final check is on both
# patches. Prints the lag (`klab watch --json`), its phases, the check as the API returns it
# and the load average before and after.
#
# BENCH_BUILD=cold: klabd's config points [lab] artifact_dir at an empty folder, so the patched
# kernel (no row in the bench's fresh database, no folder of its key there) is built by the job:
# an incremental build in the tree's build folder, over the throwaway overlays an untrusted
# series gets (docs/security.md). The baseline has its row from the lab's bring-up and is found
# by it. Nothing that goes into a kernel's key changes.
#
# Environment: KLAB, KLABD (default build/rel/bin), BENCH_DIR (default /var/tmp/klab-bench-pw-lag,
# removed first), KLAB_SHARED (../shared), KLAB_KERNEL_CACHE (/var/cache/klab), BENCH_TIMEOUT
# (seconds to wait for the final check, default 5400). Needs root, qemu, bwrap, the warm kernel
# cache and Debian's django packages (make deps). Everything stays on loopback and QEMU's user
# networking; the lab, klabd and the server are stopped at exit.
set -u -o pipefail
SRCDIR=$(cd "$(dirname "$0")/.." && pwd)
cd "$SRCDIR" || exit 1
KLAB=${KLAB:-$SRCDIR/build/rel/bin/klab}
KLABD=${KLABD:-$SRCDIR/build/rel/bin/klabd}
SHARED=${KLAB_SHARED:-$(cd "$SRCDIR/.." && pwd)/shared}
CACHE=${KLAB_KERNEL_CACHE:-/var/cache/klab}
DIR=${BENCH_DIR:-/var/tmp/klab-bench-pw-lag}
BUILD=${BENCH_BUILD:-cache}
TIMEOUT=${BENCH_TIMEOUT:-5400}
case "$BUILD" in cache|cold) ;; *) echo "bench-pw-lag: BENCH_BUILD must be cache or cold, not '$BUILD'" >&2; exit 2 ;; esac
for b in "$KLAB" "$KLABD"; do
	[ -x "$b" ] || { echo "bench-pw-lag: no $b (make first, or set KLAB/KLABD)" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "bench-pw-lag: the qemu lab needs root" >&2; exit 1; }
seed=$(ls "$SHARED"/seeds/003_*.txt 2>/dev/null | head -n 1)
[ -n "$seed" ] || { echo "bench-pw-lag: seed 003 not found in $SHARED/seeds" >&2; exit 1; }

# the helpers of the tests, taken from tests/lib.sh as they are (sourcing it would start a TAP script)
eval "$(sed -n '/^test_wait_until()/,/^}/p; /^test_free_port()/,/^}/p; /^test_qemu_lab_index()/,/^}/p' tests/lib.sh)"
test_skip_all() { echo "bench-pw-lag: $*" >&2; exit 1; }
SCRATCH=$DIR
. "$SRCDIR/tests/data/patchwork/pw.sh"
pw_prereq

LAB=$DIR/qemu
CONF=$DIR/klab.conf		# the lab's bring-up: database, the kernel cache's artifacts, the tree
LABCONF=$DIR/lab.conf		# klabd's: the same and the lab, the demo's jobs, [patchwork "netdev"]
DB=$DIR/klab.db
KLABD_PID=
lab_is_up=0

cleanup() {
	if [ -n "$KLABD_PID" ]; then
		kill "$KLABD_PID" 2>/dev/null
		for _ in $(seq 600); do kill -0 "$KLABD_PID" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$KLABD_PID" 2>/dev/null
	fi
	[ $lab_is_up = 0 ] || "$KLAB" lab down --qemu --dir "$LAB" >/dev/null 2>&1 ||
		echo "bench-pw-lag: 'klab lab down --qemu --dir $LAB' failed: stop it by hand" >&2
	pw_stop
	# a cold artifact folder holds only the patched kernel of this run
	[ "$BUILD" != cold ] || rm -rf "$DIR/artifacts-cold"
}
trap cleanup EXIT
trap 'echo "bench-pw-lag: interrupted" >&2; exit 1' INT TERM
die() { echo "bench-pw-lag: $*" >&2; exit 1; }

echo "bench-pw-lag: $(nproc) CPUs; load before: $(uptime)"
rm -rf "$DIR" && mkdir -p "$DIR/work" "$DIR/report" || die "cannot make $DIR"
test_qemu_lab_index

t0=$(date +%s.%N)
pw_setup || die "patchwork did not set up ($DIR/pw/setup.log)"
pw_start || die "patchwork did not start ($DIR/pw/server.log)"
printf '%s\n' "$PW_TOKEN" >"$DIR/token" && chmod 600 "$DIR/token"
echo "patchwork 3.1.3 on $PW_URL ($(python3 -c "print(round($(date +%s.%N) - $t0, 1))") s to set up)"

# the results config of tests/demo-config.sh: the database, the kernel cache's artifacts, the tree
lab_section() {	# lab_section ARTIFACT_DIR
	printf '[lab]\n\tdb = %s\n\twork_dir = %s/work\n\tartifact_dir = %s\n\treport_dir = %s/report\n' \
		"$DB" "$DIR" "$1" "$DIR"
}
{ lab_section "$CACHE/artifacts"; printf '[include]\n\tpath = %s/kernels/lab/demo-tree.conf\n' "$SRCDIR"; } >"$CONF"
export KLAB_CONFIG=$CONF
t0=$(date +%s.%N)
"$KLAB" --json kernels build --tree linux-source-6.1 --variant base >"$DIR/base.json" 2>"$DIR/base.log" ||
	die "the baseline build failed ($DIR/base.log)"
base_id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$DIR/base.json") || die "no kernel id"
echo "baseline: kernel $base_id, $(python3 -c "print(round($(date +%s.%N) - $t0, 1))") s ($(python3 -c '
import json,sys; k = json.load(open(sys.argv[1])); print("cache hit: " + k["artifact_dir"] if k["cached"] else "built")' "$DIR/base.json"))"

t0=$(date +%s.%N)
lab_is_up=1
"$KLAB" lab up --qemu --clock icount --kernel-id "$base_id" --smp 1 --index "$K" --dir "$LAB" \
	>"$DIR/lab-up.log" 2>&1 || { cat "$DIR/lab-up.log" >&2; die "klab lab up --qemu failed"; }
echo "lab: icount qemu lab, index $K, up in $(python3 -c "print(round($(date +%s.%N) - $t0, 1))") s"

artdir=$CACHE/artifacts
[ "$BUILD" = cache ] || { artdir=$DIR/artifacts-cold; mkdir -p "$artdir"; }
{
	lab_section "$artdir"
	printf '[include]\n\tpath = %s/klab.conf\n[include]\n\tpath = %s/kernels/lab/demo-qemu.conf\n' "$LAB" "$SRCDIR"
	cat <<EOF
[patchwork "netdev"]
	url = $PW_URL
	project = netdev
	token_file = $DIR/token
	job = demo-udp-wfree
	tree = linux-source-6.1
	paths = net/** drivers/net/** include/net/**
	interval = 1s
	timeout = 30s
	context = klab-perf
	report_url = https://klab.example.org/reports
	since = 2000-01-01T00:00:00
EOF
} >"$LABCONF"
export KLAB_CONFIG=$LABCONF
"$KLAB" config check "$LABCONF" || die "the bench's lab config does not load"

"$KLAB" series show --json "$seed" >"$DIR/s003.json" &&
python3 tests/data/patchwork/mkmail.py "$DIR/s003.json" "$DIR/mail" 1 udpwake || die "no mails of seed 003"

{ "$KLABD" -d -j 1 >"$DIR/klabd.log" 2>&1 & KLABD_PID=$!; }
sleep 2
for f in "$DIR"/mail/*.eml; do pw_mail "$f" || die "parsemail refused $f ($DIR/pw/mail.log)"; done
echo "seed 003 mailed as $(ls "$DIR"/mail/*.eml | wc -l) messages at $(date -u +%H:%M:%S); klabd $KLABD_PID polls every 1 s"

state() { sqlite3 "$DB" "SELECT state || '/' || coalesce(final, '') FROM pw_series WHERE pw_id = 1" 2>/dev/null; }
last=
for ((i = 0; i < TIMEOUT; i += 5)); do
	s=$(state)
	[ "$s" = "$last" ] || { echo "  [$(date -u +%H:%M:%S)] series 1: ${s%/*}"; last=$s; }
	case "$s" in done/?*|error/*|superseded/*|filtered/*) break ;; esac
	kill -0 "$KLABD_PID" 2>/dev/null || die "klabd died ($DIR/klabd.log)"
	sleep 5
done
case "$s" in done/?*) ;; *) die "no final check after $i s (state '${s%/*}'; $DIR/klabd.log)" ;; esac
load_after=$(uptime)

"$KLAB" watch --json >"$DIR/watch.json" || die "klab watch --json"
"$KLAB" watch >"$DIR/watch.txt"
pids=$(pw_api "series/1/" | python3 -c 'import json,sys; print(" ".join(str(p["id"]) for p in json.load(sys.stdin)["patches"]))')
for p in $pids; do pw_api "patches/$p/checks/" >"$DIR/checks-$p.json" || die "GET patches/$p/checks/"; done

echo
echo "bench-pw-lag ($BUILD): seed 003 through Patchwork, job demo-udp-wfree on the icount lab"
python3 - "$DB" "$DIR" "$BUILD" $pids <<'PY'
import json, sqlite3, sys
db, d, build, pids = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
w = [x for x in json.load(open(d + "/watch.json")) if x["series"] == 1][0]
c = sqlite3.connect(db)
completed, seen, job, final = c.execute(
    "SELECT completed, seen, job_id, final FROM pw_series WHERE pw_id = 1").fetchone()
created, started, finished, jstate = c.execute(
    "SELECT created, started, finished, state FROM jobs WHERE id = ?", (job,)).fetchone()
steps = c.execute("SELECT key, state, started, finished, detail FROM steps WHERE job_id = ? ORDER BY id",
                  (job,)).fetchall()
print("lag (klab watch --json): %.1f s = %.1f min, series-completed -> final check on both patches"
      % (w["lag_s"], w["lag_s"] / 60))
print("  job %d %s, outcome %s" % (job, jstate, w["outcome"]))


def row(name, secs, what=""):
    print("  %-44s %8.1f s%s" % (name, secs, "  " + what if what else ""))


row("poll: completed -> seen by the watcher", seen - completed)
row("watcher intake: mbox, sandboxed parse, queued", created - seen)
row("queue: job queued -> started", started - created)
groups = {}
for key, st, s0, s1, det in steps:
    dur = (s1 or s0) - s0
    name = key.split(":")[0]
    if key.startswith("build:"):
        dt = json.loads(det or "{}")
        what = ("cache hit (kernel %s)" % dt.get("kernel_id") if dt.get("cached")
                else "built: make %.1f s (kernel %s)" % (dt.get("duration_s", 0), dt.get("kernel_id")))
        row("job step %s (%s side)" % (key, "baseline" if key.endswith("A") else "patched"), dur, what)
        continue
    if name == "intake":
        row("job step intake", dur, st)
        continue
    g = groups.setdefault(name, [0, 0.0, 0])
    g[0] += 1
    g[1] += dur
    g[2] += st == "skipped"
boots = len({k.split(":")[1] for k, *_ in steps if k.startswith("boot:")})
runs = sum(1 for k, st, *_ in steps if k.startswith("run:") and st == "done")
for name, (n, secs, skipped) in groups.items():
    what = "%d steps%s" % (n, ", %d skipped" % skipped if skipped else "")
    if name == "boot":
        what += ", %d boots (deploy, verify, agent, prepare, restore)" % boots
    if name == "run":
        what += ", %d runs done" % runs
    label = {"boot": "boots", "run": "measurement runs", "obs": "observation runs (the monitors)",
             "look": "looks"}.get(name, name)
    row("job steps %s:* (%s)" % (name, label), secs, what)
row("job: started -> finished", finished - started)
row("final check: job finished -> on every patch", final - finished)
row("total (final - completed)", final - completed)
for p in pids:
    for ch in json.load(open("%s/checks-%s.json" % (d, p))):
        print("check of patch %s: %s %s: %s" % (p, ch["context"], ch["state"], ch["description"]))
PY
echo "load before: see the first line; load after: $load_after"
