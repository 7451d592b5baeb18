#!/bin/bash
# bench-cpu-monitor-icount.sh: what the measurement runs' own monitor (cpu) costs on the icount
# lab, with the klab of before the window's acknowledged start and with this one, in one guest.
#
#   KLAB_BEFORE=PATH bash bench/bench-cpu-monitor-icount.sh [RUNS [BOOTS]]   (root; default 2, 2)
#
# One `klab lab up --qemu --clock icount --peer netns --smp 1` of the baseline kernel of
# linux-source-6.1 (from the artifact store), then the job "before" (the klab at KLAB_BEFORE
# and the klab-agent beside it, on a database of its own) and the job "after" (KLAB, default
# build/rel/bin/klab): each an A/A on that guest (boot = none, both sides profile "same"),
# BOOTS boots a side of 1 warm-up and RUNS measured runs of each workload, sized by work (the
# icount defaults), with `monitors = cpu nic`: so every boot also has the observation runs
# obs:B:WL:nic and obs:B:WL:bare (observe_boots = BOOTS). The workloads are the demo's
# udp_tx_dummy and udp_rr (kernels/lab/demo-workloads.conf).
#
# Prints per job, workload and boot: the cpu monitor's cost in time per op (the measured runs'
# mean time per op against the bare run's, as the job page's row "cpu, in every measurement run
# (against none)"), nic's (against the measured runs), and for the measured runs the part of
# insn_per_op outside the generator's window, (insn_per_op - 1e9 / rate) / insn_per_op in ppm:
# under icount (shift=0) the busy nanoseconds between the idle snapshots are instructions, and
# 1e9 / rate is the generator's window per operation, so what is left is the monitor's own
# reads and wake-ups in the busy time. KLAB_BENCH_INDEX (default 41) is the lab's index. Copy
# the builds out of the tree first: a `make` during the bench would change the agent it uploads.
set -eu
runs=${1:-2} boots=${2:-2}
src=$(cd "$(dirname "$0")/.." && pwd)
klab=${KLAB:-$src/build/rel/bin/klab}
before=${KLAB_BEFORE:-$klab}
[ "$(id -u)" = 0 ] || { echo "bench-cpu-monitor-icount: needs root (the qemu lab)" >&2; exit 1; }
[ -x "$klab" ] || { echo "bench-cpu-monitor-icount: no klab at $klab (make first)" >&2; exit 1; }
work=$(mktemp -d /tmp/klab-bench-cpu-monitor.XXXXXX)
chmod 0755 "$work"
db=$work/klab.db
lab=$work/lab
trap '"$klab" --config "$work/klab.conf" lab down --qemu --dir "$lab" >/dev/null 2>&1 || true
      cp "$db" /tmp/klab-bench-cpu-monitor-after.db 2>/dev/null; cp "$work/before.db" /tmp/klab-bench-cpu-monitor-before.db 2>/dev/null
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
[workload "udp_tx_dummy"]
	type = udp_tx
	target = dummy
	engine = io_uring
	threads = 1
	payload_size = 64
	duration = 2
	monitors = cpu nic
	headline = tx_pps
[workload "udp_rr"]
	type = udp_rr
	flows = 16
	request_size = 100
	response_size = 100
	duration = 2
	monitors = cpu nic
	headline = tps
EOF
	for job in before after; do
		cat >>"$f" <<EOF
[job "$job"]
	profile_a = same
	profile_b = same
	machines = dut peer
	workloads = udp_tx_dummy udp_rr
	boots = $boots
	runs = $runs
	warmup_runs = 1
	order = fixed
	observe_boots = $boots
EOF
	done
}

conf tree
kid=$("$klab" --config "$work/klab.conf" --json kernels build --tree linux-source-6.1 --variant base |
	python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])')
echo "bench-cpu-monitor-icount: kernel $kid, $boots boots a side of $runs runs; uptime: $(uptime)"
"$klab" --config "$work/klab.conf" lab up --qemu --clock icount --peer netns --smp 1 \
	--kernel-id "$kid" --dir "$lab" --index "${KLAB_BENCH_INDEX:-41}" --timeout 900 >"$work/up.out"
sed -e "s/boot = kexec/boot = none/" "$lab/klab.conf" >"$work/lab-noboot.conf"
conf jobs
conf jobs "$work/before.conf" "$work/before.db"
for job in before after; do
	k=$klab c=$work/klab.conf
	[ $job = before ] && k=$before c=$work/before.conf
	echo "bench-cpu-monitor-icount: job $job; load at start $(cut -d' ' -f1-3 /proc/loadavg)"
	(cd "$work" && "$k" --config "$c" run "$job" >"$work/run-$job.out" 2>&1) ||
		{ tail -20 "$work/run-$job.out" >&2; exit 1; }
	echo "bench-cpu-monitor-icount: job $job done; load at end $(cut -d' ' -f1-3 /proc/loadavg)"
done

python3 - "$work/before.db" "$db" <<'PY'
import sqlite3, statistics as st, sys
print("| job | workload | side | boot | cpu: time per op | nic: time per op | measured runs: insn_per_op | outside the window (ppm of insn_per_op) |")
print("|---|---|---|---|---|---|---|---|")
for job, path in (("before", sys.argv[1]), ("after", sys.argv[2])):
    db = sqlite3.connect(path)
    for wl, head in (("udp_tx_dummy", "tx_pps"), ("udp_rr", "tps")):
        for side, boot in db.execute("SELECT side, id FROM boots ORDER BY seq").fetchall():
            rows = db.execute("""SELECT r.kind, coalesce(r.observes, ''),
                       (SELECT value FROM metrics WHERE run_id = r.id AND name = ?),
                       (SELECT value FROM metrics WHERE run_id = r.id AND name = 'insn_per_op')
                     FROM runs r WHERE r.boot_id = ? AND r.workload = ? AND r.status = 'ok'
                       AND (r.kind != 'measure' OR r.seq >= 1)""", (head, boot, wl)).fetchall()
            meas = [(rate, ipo) for kind, obs, rate, ipo in rows if kind == 'measure']
            bare = [rate for kind, obs, rate, ipo in rows if obs == 'bare']
            nic = [rate for kind, obs, rate, ipo in rows if obs == 'nic']
            if not meas:
                continue
            ref = st.mean(r for r, _ in meas)
            cpu = "%+.4f%%" % (100 * (bare[0] / ref - 1)) if bare else "-"
            nicc = "%+.4f%%" % (100 * (ref / nic[0] - 1)) if nic else "-"
            out = ["%.0f" % (1e6 * (ipo - 1e9 / rate) / ipo) for rate, ipo in meas if ipo]
            print("| %s | %s | %s | %d | %s | %s | %s | %s |" % (
                job, wl, side, boot, cpu, nicc, " ".join("%.1f" % ipo for _, ipo in meas if ipo), " ".join(out)))
PY
echo "uptime at the end: $(uptime)"
