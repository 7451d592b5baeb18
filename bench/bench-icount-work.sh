#!/bin/bash
# bench-icount-work.sh: runs sized by work on the icount lab (issue 35 items 2 and 3), against
# the timed runs with kernel-chosen ports of before, in one guest boot.
#
#   bash bench/bench-icount-work.sh [RUNS [ROUNDS]]      (root; default 4 runs, 1 round)
#
# One `klab lab up --qemu --clock icount --peer netns --smp 1` (the baseline kernel of
# linux-source-6.1, from the shared artifact cache $KLAB_KERNEL_CACHE/artifacts when it is warm), then ROUNDS times the job "before"
# and the job "after", alternating (a round is before then after): each an A/A on that guest
# (boot = none, both sides profile "same", 1 boot a side, 1 warm-up run and RUNS measured runs
# of each workload a side). The workloads are those of kernels/lab/demo-workloads.conf with
# the cpu monitor only (what a measurement run carries): udp_tx_dummy (io_uring, 64 B, to
# dummy0) and udp_rr (16 flows to the peer namespace). "before": `ops = 0`, a timed run of
# 0.5 s warm-up + 2 s with the ports the kernel picks. "after": no `ops`, the icount default
# of store/jobs.h (a run of N operations after W, timed by the guest clock, seeded ports).
#
# Prints per job and workload: the measured runs, the mean of insn_per_op and of the headline
# (tps, tx_pps), their run-to-run CoV and (max - min) / mean in ppm, the guest window, and the
# host seconds per run step (the steps' start to end in the job's steps table: the agent's
# SSH call and the run) with the 1-minute load at the job's start and end. KLAB selects the
# klab build (default build/rel/bin/klab); KLAB_BEFORE=PATH runs the job "before" with another
# klab (and the klab-agent beside it: e.g. a build of the commit before runs sized by work),
# on a database of its own, its workloads without `ops`. Copy the builds out of the tree
# first: a `make` during the bench would change the agent it uploads.
set -eu
runs=${1:-4} rounds=${2:-1}
src=$(cd "$(dirname "$0")/.." && pwd)
klab=${KLAB:-$src/build/rel/bin/klab}
before=${KLAB_BEFORE:-$klab}
[ "$(id -u)" = 0 ] || { echo "bench-icount-work: needs root (the qemu lab)" >&2; exit 1; }
[ -x "$klab" ] || { echo "bench-icount-work: no klab at $klab (make first)" >&2; exit 1; }
work=$(mktemp -d /tmp/klab-bench-icount-work.XXXXXX)
chmod 0755 "$work"	# the sandboxed build (user klab) writes the artifacts here
db=$work/klab.db
lab=$work/lab
trap '"$klab" lab down --qemu --dir "$lab" >/dev/null 2>&1 || true
      cp "$db" /tmp/klab-bench-icount-work-last.db 2>/dev/null; cp "$work/before.db" /tmp/klab-bench-icount-work-before.db 2>/dev/null
      rm -rf "$work"' EXIT

conf() {	# conf tree | conf jobs [FILE DB]: the config
	local f=${2:-$work/klab.conf}
	cat >"$f" <<EOF
[lab]
	db = ${3:-$db}
	work_dir = $work/w
	artifact_dir = ${KLAB_KERNEL_CACHE:-/var/cache/klab}/artifacts
[include]
	path = $src/kernels/lab/demo-tree.conf
EOF
	[ "$1" = tree ] && return 0
	cat >>"$f" <<EOF
[include]
	path = $work/lab-noboot.conf
[profile "same"]
EOF
	for side in before after; do
		if [ $side = before ]; then ops="ops = 0"; warm="warmup = 0.5"; else ops=""; warm=""; fi
		[ $side = before ] && [ "$before" != "$klab" ] && ops=""	# a klab from before has no ops
		cat >>"$f" <<EOF
[workload "udp_tx_dummy_$side"]
	type = udp_tx
	target = dummy
	engine = io_uring
	threads = 1
	payload_size = 64
	duration = 2
	$warm
	$ops
	monitors = cpu
	headline = tx_pps
[workload "udp_rr_$side"]
	type = udp_rr
	flows = 16
	request_size = 100
	response_size = 100
	duration = 2
	$warm
	$ops
	monitors = cpu
	headline = tps
[job "$side"]
	profile_a = same
	profile_b = same
	machines = dut peer
	workloads = udp_tx_dummy_$side udp_rr_$side
	boots = 1
	runs = $runs
	warmup_runs = 1
	order = fixed
	observe_boots = 0
EOF
	done
}

conf tree
kid=$("$klab" --config "$work/klab.conf" --json kernels build --tree linux-source-6.1 --variant base |
	python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])')
echo "bench-icount-work: kernel $kid, $runs runs a side, $rounds round(s); uptime: $(uptime)"
"$klab" --config "$work/klab.conf" lab up --qemu --clock icount --peer netns --smp 1 \
	--kernel-id "$kid" --dir "$lab" --index "${KLAB_BENCH_INDEX:-43}" --timeout 900 >"$work/up.out"
sed -e "s/boot = kexec/boot = none/" "$lab/klab.conf" >"$work/lab-noboot.conf"
conf jobs
conf jobs "$work/before.conf" "$work/before.db"
for r in $(seq 1 "$rounds"); do
	for job in before after; do
		k=$klab c=$work/klab.conf
		[ $job = before ] && k=$before c=$work/before.conf
		echo "bench-icount-work: round $r, job $job; load at start $(cut -d' ' -f1 /proc/loadavg)"
		(cd "$work" && "$k" --config "$c" run "$job" >"$work/run-$job-$r.out" 2>&1) ||
			{ tail -20 "$work/run-$job-$r.out" >&2; exit 1; }
		echo "bench-icount-work: round $r, job $job done; load at end $(cut -d' ' -f1 /proc/loadavg)"
	done
done

python3 - "$work/before.db" "$db" <<'PY'
import sqlite3, statistics as st, sys
def spread(v):
    m = st.mean(v)
    return m, (100 * st.stdev(v) / m if len(v) > 1 else 0.0), (max(v) - min(v)) * 1e6 / m
print("| job | workload | runs | busy from | seed | insn_per_op mean | CoV | spread | headline mean | CoV | spread | guest window s | host s per run step |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for job, path in (("before", sys.argv[1]), ("after", sys.argv[2])):
    db = sqlite3.connect(path)
    for wl in ("udp_tx_dummy", "udp_rr"):
        name = "%s_%s" % (wl, job)
        head = "tps" if wl == "udp_rr" else "tx_pps"
        rows = db.execute("""SELECT r.id, r.duration_s,
                   (SELECT value FROM metrics WHERE run_id = r.id AND name = 'insn_per_op'),
                   (SELECT value FROM metrics WHERE run_id = r.id AND name = ?),
                   coalesce(json_extract(r.result, '$.cpu_busy_source'), 'proc_stat'), r.seed, r.warmup_s
                 FROM runs r JOIN jobs j ON j.id = r.job_id
                 WHERE j.name = ? AND r.workload = ? AND r.seq >= 1 AND r.status = 'ok'""",
                          (head, job, name)).fetchall()
        if not rows:
            print("| %s | %s | 0 | | | | | | | | | | |" % (job, wl)); continue
        ins = [x[2] for x in rows if x[2] is not None]
        hd = [x[3] for x in rows if x[3] is not None]
        win = st.mean(x[1] for x in rows)
        secs = [f - s for (s, f) in db.execute("""SELECT s.started, s.finished FROM steps s JOIN jobs j ON j.id = s.job_id
                 WHERE j.name = ? AND s.key LIKE 'run:%%:' || ? || ':%%' AND s.state = 'done'""", (job, name))]
        im, ic, ip = spread(ins) if ins else (0, 0, 0)
        hm, hc, hp = spread(hd)
        src = ",".join(sorted(set(x[4] for x in rows)))
        seeds = ",".join(sorted(set(str(x[5]) for x in rows)))
        print("| %s | %s | %d | %s | %s | %.1f | %.4f%% | %.0f ppm | %.1f | %.4f%% | %.0f ppm | %.3f | %.1f (%.1f-%.1f, %d steps) |" % (
            job, wl, len(rows), src, seeds, im, ic, ip, hm, hc, hp, win, st.mean(secs), min(secs), max(secs), len(secs)))
PY
echo "uptime at the end: $(uptime)"
