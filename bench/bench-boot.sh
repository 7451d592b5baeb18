#!/bin/bash
# bench-boot.sh: what one boot of a side's kernel costs on the icount qemu lab (issue 35 item 5):
# the job steps deploy (of which boot_wait: kexec -e until SSH answers), verify and agent,
# per boot, with the kernel uploaded over SFTP (`upload`: the fragment without shared_root)
# and kexec'd from the host's root shared into the guest (`shared`: the fragment as written),
# the modes interleaved in one run so that both see the same host load.
#
#   bash bench/bench-boot.sh [ROUNDS [MODES]]    (root; KLAB_BUILD=build/rel by default)
#
# ROUNDS (2) rounds of one job per mode, the order of the modes reversed every other round;
# MODES ("upload shared"): give "upload" for a build whose lab has no shared_root. Each job
# is seed 003 against the baseline (both kernels from the warm artifact store), 2 boots a
# side (ABBA) and one 1 s udp_tx_dummy run a boot. Prints a line per boot and the medians
# per mode, with the load average before and after. `rest` is deploy minus boot_wait: the
# connect, the upload or the shared read with its sha256 check, kexec -l and the build id
# check, the part shared_root changes; boot_wait is the guest's boot under TCG, which it does
# not. `shared` counts the job's boots that the deploy says it loaded from the shared root
# (klab -v run); a job of mode shared with fewer, or of mode upload with any, stops the bench.
set -u
SRCDIR=$(cd "$(dirname "$0")/.." && pwd)
. "$SRCDIR/bench/lib.sh"
KLAB_BUILD=${KLAB_BUILD:-$SRCDIR/build/rel}
KLAB=$KLAB_BUILD/bin/klab
ROUNDS=${1:-2}
MODES=${2:-upload shared}
ARTIFACTS=${KLAB_ARTIFACTS:-/var/cache/klab/artifacts}
SEED=$(ls "$SRCDIR"/../shared/seeds/003_*.txt /work/shared/seeds/003_*.txt 2>/dev/null | head -n 1)
[ "$(id -u)" = 0 ] || { echo "bench-boot: needs root (qemu lab)" >&2; exit 1; }
[ -x "$KLAB" ] || { echo "bench-boot: build first (make)" >&2; exit 1; }
[ -n "$SEED" ] || { echo "bench-boot: seed 003 not found beside the project (../shared/seeds)" >&2; exit 1; }

# a qemu lab index of its own (bench/lib.sh)
bench_qemu_lab_index "bench-boot"

W=$(mktemp -d /var/tmp/klab-bench-boot.XXXXXX)
L=$W/lab
export KLAB_CONFIG=$W/klab.conf
cleanup() {
	"$KLAB" lab down --qemu --dir "$L" >/dev/null 2>&1
	[ "${KEEP:-0}" = 1 ] && echo "bench-boot: kept $W" >&2 || rm -rf "$W"
}
trap cleanup EXIT
cat >"$W/base.conf" <<CONF
[lab]
	db = $W/klab.db
	artifact_dir = $ARTIFACTS
	work_dir = $W/work
	agent_dir = $W/agent
	report_dir = $W/reports
	log_level = notice
[include]
	path = $SRCDIR/kernels/lab/demo-tree.conf
[workload "tx"]
	type = udp_tx
	target = dummy
	engine = io_uring
	threads = 1
	payload_size = 64
	duration = 1
	warmup = 0
	monitors = cpu
CONF
cat >"$W/job.conf" <<CONF
[job "boot"]
	tree = linux-source-6.1
	series = $SEED
	machines = dut peer
	workloads = tx
	boots = 2
	runs = 1
	warmup_runs = 0
	order = abba
CONF
cp "$W/base.conf" "$KLAB_CONFIG"
load0=$(cut -d" " -f1-3 /proc/loadavg)
"$KLAB" --json kernels build --tree linux-source-6.1 --variant base >"$W/base.json" 2>"$W/build.err" || {
	cat "$W/build.err" >&2; exit 1; }
kid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$W/base.json")
t0=$(date +%s.%N)
"$KLAB" lab up --qemu --clock icount --smp 1 --kernel-id "$kid" --dir "$L" --index "$K" >"$W/up" 2>&1 || {
	cat "$W/up" >&2; exit 1; }
echo "bench-boot: lab up in $(echo "$(date +%s.%N) $t0" | awk '{ printf "%.1f", $1 - $2 }') s (index $K);" \
	"fragment: $(grep -c 'shared_root' "$L/klab.conf") machine(s) with shared_root"
grep -v 'shared_root' "$L/klab.conf" >"$W/upload.conf"
cp "$L/klab.conf" "$W/shared.conf"

printf '%-7s %4s %4s %5s %8s %10s %6s %7s %6s %6s\n' mode job boot side deploy boot_wait rest verify agent shared
for ((r = 1; r <= ROUNDS; r++)); do
	order=$MODES
	[ $((r % 2)) = 0 ] && order=$(echo "$MODES" | tr ' ' '\n' | tac | tr '\n' ' ')
	for mode in $order; do
		{ cat "$W/base.conf"; printf '[include]\n\tpath = %s\n' "$W/$mode.conf"; cat "$W/job.conf"; } \
			>"$KLAB_CONFIG"
		id=$("$KLAB" --json submit --job boot | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])') ||
			exit 1
		"$KLAB" -v run "$id" >"$W/run-$id.log" 2>&1 || { echo "bench-boot: job $id ($mode) failed:" >&2;
			tail -n 20 "$W/run-$id.log" >&2; exit 1; }
		nsh=$(grep -c "from the shared root .*nothing uploaded" "$W/run-$id.log")
		nb=$(sqlite3 "$W/klab.db" "select count(*) from boots where job_id = $id")
		if [ "$mode" = shared ] && [ "$nsh" != "$nb" ] || [ "$mode" = upload ] && [ "$nsh" != 0 ]; then
			echo "bench-boot: job $id ($mode): $nsh of $nb boots loaded from the shared root" >&2
			exit 1
		fi
		sqlite3 -separator ' ' "$W/klab.db" "
			select '$mode', $id, b.seq, b.side,
			       printf('%.1f', d.finished - d.started),
			       printf('%.1f', coalesce(json_extract(d.detail, '\$.boot_wait_s'), 0)),
			       printf('%.1f', d.finished - d.started - coalesce(json_extract(d.detail, '\$.boot_wait_s'), 0)),
			       printf('%.1f', v.finished - v.started), printf('%.1f', a.finished - a.started), $nsh
			from boots b
			join steps d on d.job_id = b.job_id and d.key = 'boot:' || b.seq || ':deploy'
			join steps v on v.job_id = b.job_id and v.key = 'boot:' || b.seq || ':verify'
			join steps a on a.job_id = b.job_id and a.key = 'boot:' || b.seq || ':agent'
			where b.job_id = $id order by b.seq" | tee -a "$W/boots.txt" |
			awk '{ printf "%-7s %4s %4s %5s %8s %10s %6s %7s %6s %6s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10 }'
	done
done
echo "load average before: $load0, after: $(cut -d" " -f1-3 /proc/loadavg)"
for mode in $MODES; do
	awk -v m="$mode" '$1 == m { d[n] = $5; w[n] = $6; r[n] = $7; v[n] = $8; a[n] = $9; n++ }
	function med(x, k,   i, j, t) { for (i = 0; i < k; i++) for (j = i + 1; j < k; j++)
		if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t }
		return k % 2 ? x[int(k / 2)] : (x[k / 2 - 1] + x[k / 2]) / 2 }
	END { if (n) printf "%-7s median of %d boots: deploy %.1f s (boot_wait %.1f s, rest %.1f s), verify %.1f s, agent %.1f s\n",
		m, n, med(d, n), med(w, n), med(r, n), med(v, n), med(a, n) }' "$W/boots.txt"
done
