#!/bin/bash
# bench-qemu-pool.sh: jobs per hour on the icount qemu lab with 1 guest and with 2 guests side
# by side (issue 35 item 4), for the same short job set, measured in one run of this script.
#
#   bash bench/bench-qemu-pool.sh [JOBS [ORDER]]    (root; KLAB_BUILD=build/rel by default)
#
# A phase brings up `klab lab up --qemu --clock icount --smp 1 --pairs N --pool qp` (N = 1 or 2,
# the baseline kernel of the demo from the artifact store), submits JOBS (4) A/A jobs of the pool
# (a tuning job with one profile on both sides: the baseline kexec'd once a side, one warm-up and
# two measured runs of udp_tx_dummy sized by work, the cpu monitor only), lets one klabd run them
# (one job per pair) and takes the lab down. ORDER ("1 2") is the phases' order. Prints per phase
# the wall time from the first submit to the last job done, jobs per hour, the median job, the
# load average before and after, the CPU time the guests' qemus took (and what share of a host
# core that is over the wall time), and the phase's insn_per_op: the mean of its measured runs,
# the least one, and how many runs klab set aside as disturbed and ran again (a window that
# took in 30 M instructions of work not the workload's, docs/qemu-icount.md); then the ratio of
# the two phases' jobs per hour and how far apart their figures are in ppm (under icount a
# guest's path length should not depend on how many guests run beside it). The machine's own
# load moves the wall times: say the load with the figures.
set -u
SRCDIR=$(cd "$(dirname "$0")/.." && pwd)
. "$SRCDIR/bench/lib.sh"
KLAB_BUILD=${KLAB_BUILD:-$SRCDIR/build/rel}
KLAB=$KLAB_BUILD/bin/klab
KLABD=$KLAB_BUILD/bin/klabd
JOBS=${1:-4}
ORDER=${2:-1 2}
ARTIFACTS=${KLAB_ARTIFACTS:-/var/cache/klab/artifacts}
[ "$(id -u)" = 0 ] || { echo "bench-qemu-pool: needs root (qemu lab)" >&2; exit 1; }
[ -x "$KLAB" ] && [ -x "$KLABD" ] || { echo "bench-qemu-pool: build first (make)" >&2; exit 1; }

# a qemu lab index of its own (bench/lib.sh)
bench_qemu_lab_index "bench-qemu-pool"

W=$(mktemp -d /var/tmp/klab-bench-qemu-pool.XXXXXX)
L=$W/lab
export KLAB_CONFIG=$W/klab.conf
klabd_pid=
cleanup() {
	[ -n "$klabd_pid" ] && kill -9 "$klabd_pid" 2>/dev/null
	"$KLAB" lab down --qemu --dir "$L" >/dev/null 2>&1
	[ "${KEEP:-0}" = 1 ] && echo "bench-qemu-pool: kept $W" >&2 || rm -rf "$W"
}
trap cleanup EXIT

conf() {	# conf DB [FRAGMENT]
	cat <<CONF
[lab]
	db = $1
	artifact_dir = $ARTIFACTS
	work_dir = $W/work
	agent_dir = $W/agent
	report_dir = $W/reports
	boot_timeout = 900s
	log_level = notice
[include]
	path = $SRCDIR/kernels/lab/demo-tree.conf
[workload "tx"]
	type = udp_tx
	target = dummy
	engine = io_uring
	threads = 1
	payload_size = 64
	duration = 20
	warmup = 0.5
	monitors = cpu
CONF
	[ $# -gt 1 ] || return 0
	cat <<CONF
[include]
	path = $2
[profile "same"]
[job "aa"]
	tree = linux-source-6.1
	profile_a = same
	profile_b = same
	pool = qp
	workloads = tx
	boots = 1
	runs = 2
	warmup_runs = 1
	order = fixed
CONF
}
conf "$W/build.db" >"$KLAB_CONFIG"
"$KLAB" --json kernels build --tree linux-source-6.1 --variant base >"$W/base.json" 2>"$W/build.err" || {
	cat "$W/build.err" >&2; exit 1; }
kid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$W/base.json")
img=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["image"])' "$W/base.json")

echo "bench-qemu-pool: $JOBS A/A jobs a phase (baseline kernel, 1 boot a side, 1 warm-up + 2 runs of udp_tx_dummy by work), phases: $ORDER; $(nproc) host CPUs"
printf '%-6s %4s %7s %9s %10s %-15s %-15s %12s %9s %9s %9s\n' guests jobs wall_s jobs/hour median_job \
	load_before load_after qemu_cpu_s insn/op insn/op disturbed
printf '%-6s %4s %7s %9s %10s %-15s %-15s %12s %9s %9s %9s\n' "" "" "" "" "" "" "" "(cores)" mean least ""
for n in $ORDER; do
	db=$W/p$n.db
	t0=$(date +%s.%N)
	"$KLAB" lab up --qemu --clock icount --smp 1 --pairs "$n" --pool qp --kernel "$img" --dir "$L" --index "$K" \
		--timeout 900 >"$W/up-$n" 2>&1 || { cat "$W/up-$n" >&2; exit 1; }
	up_s=$(echo "$(date +%s.%N) $t0" | awk '{ printf "%.1f", $1 - $2 }')
	conf "$db" "$L/klab.conf" >"$KLAB_CONFIG"
	"$KLAB" db init >/dev/null || exit 1
	load0=$(cut -d" " -f1-3 /proc/loadavg | tr ' ' /)
	"$KLABD" -d -g 30 -c "$KLAB_CONFIG" >"$W/klabd-$n.log" 2>&1 &
	klabd_pid=$!
	for i in $(seq 50); do grep -q "klabd .* started" "$W/klabd-$n.log" && break; sleep 0.2; done
	t0=$(date +%s.%N)
	for i in $(seq "$JOBS"); do "$KLAB" submit --job aa >/dev/null || exit 1; done
	while [ "$(sqlite3 "$db" "SELECT count(*) FROM jobs WHERE state IN ('queued', 'running')")" != 0 ]; do
		sleep 2
		kill -0 "$klabd_pid" 2>/dev/null || { echo "bench-qemu-pool: klabd died" >&2; tail "$W/klabd-$n.log" >&2; exit 1; }
	done
	wall=$(echo "$(date +%s.%N) $t0" | awk '{ printf "%.1f", $1 - $2 }')
	load1=$(cut -d" " -f1-3 /proc/loadavg | tr ' ' /)
	# the CPU time of the guests' qemus (utime + stime of /proc/PID/stat), from lab up to now
	cpu=0
	for pid in $(sed -n 's/^dut[0-9]*\.pid=//p' "$L/lab.state" | sort -u); do
		c=$(awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$pid/stat" 2>/dev/null || echo 0)
		cpu=$(echo "$cpu $c" | awk '{ print $1 + $2 }')
	done
	kill -TERM "$klabd_pid"; wait "$klabd_pid" 2>/dev/null; klabd_pid=
	"$KLAB" lab down --qemu --dir "$L" >/dev/null || exit 1
	done_n=$(sqlite3 "$db" "SELECT count(*) FROM jobs WHERE state = 'done'")
	[ "$done_n" = "$JOBS" ] || { echo "bench-qemu-pool: $done_n of $JOBS jobs done with $n guest(s)" >&2;
		sqlite3 "$db" "SELECT id, state, error FROM jobs" >&2; exit 1; }
	# a job's time: from its first step's start to its last step's end
	med=$(sqlite3 "$db" "SELECT MAX(finished) - MIN(started) FROM steps GROUP BY job_id" | sort -g |
		awk '{ x[n++] = $1 } END { printf "%.1f", n % 2 ? x[int(n / 2)] : (x[n / 2 - 1] + x[n / 2]) / 2 }')
	fig=$(sqlite3 -separator ' ' "$db" "SELECT printf('%.2f', AVG(m.value)), printf('%.2f', MIN(m.value)),
		(SELECT count(*) FROM runs WHERE status = 'disturbed') || '/' || (SELECT count(*) FROM runs)
		FROM runs r JOIN metrics m ON m.run_id = r.id WHERE r.seq >= 1 AND r.status = 'ok' AND m.name = 'insn_per_op'")
	guests=$(sqlite3 "$db" "SELECT group_concat(dut, ' ') FROM (SELECT DISTINCT dut FROM jobs ORDER BY dut)")
	echo "$n $JOBS $wall $fig" >>"$W/phases"
	printf '%-6s %4s %7s %9.2f %10s %-15s %-15s %12s %9s %9s %9s\n' "$n" "$JOBS" "$wall" \
		"$(echo "$JOBS $wall" | awk '{ print 3600 * $1 / $2 }')" "$med" "$load0" "$load1" \
		"$(echo "$cpu $wall $up_s" | awk '{ printf "%.0f (%.2f)", $1, $1 / ($2 + $3) }')" $fig
	echo "        (lab up $up_s s; jobs ran on: $guests)"
done
awk '{ jph[$1] = 3600 * $2 / $3; mean[$1] = $4; least[$1] = $5 }
     END { if (1 in jph && 2 in jph)
	printf "2 guests / 1 guest: %.2fx the jobs per hour; insn_per_op, 2 guests against 1: least run %+.0f ppm, mean %+.0f ppm\n",
		jph[2] / jph[1], (least[2] - least[1]) * 1e6 / least[1], (mean[2] - mean[1]) * 1e6 / mean[1] }' "$W/phases"
