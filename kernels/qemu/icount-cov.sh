#!/bin/bash
# kernels/qemu/icount-cov.sh: run-to-run and boot-to-boot spread of the seed
# workloads on the qemu lab, under the icount clock and under real time.
#
#   kernels/qemu/icount-cov.sh [BOOTS [RUNS [SMP]]]   (defaults 3, 4, 2)
#
# The kernel is the baseline of linux-source-6.1 (`klab kernels build`, from
# the shared build cache when it is warm). For each clock (icount, then real)
# and each boot: `klab lab up --qemu --clock C --peer netns --smp SMP` (a new
# qemu: a boot), a boot = none job running udp_tx to dummy0 and udp_rr to the
# peer namespace RUNS times each (the first of each boot is a warm-up and is
# not counted), `lab down`. Then per clock and workload: run-to-run CoV = the
# mean over boots of the CoV of the measured runs within a boot; boot-to-boot
# CoV = the CoV of the boot means; both in percent, and the largest
# (max - min) / mean within a boot in ppm. Prints a markdown table and
# `uptime`. Needs root (qemu lab) and a klab build (KLAB, default
# build/rel/bin/klab).
set -eu
boots=${1:-3} runs=${2:-4} smp=${3:-2}
src=$(cd "$(dirname "$0")/../.." && pwd)
klab=${KLAB:-$src/build/rel/bin/klab}
work=$(mktemp -d /tmp/klab-icount-cov.XXXXXX)
# kernels are built as the sandbox user klab (docs/security.md): it must reach the artifacts
chmod 0755 "$work"
db=$work/klab.db
lab=$work/lab
trap '"$klab" lab down --qemu --dir "$lab" >/dev/null 2>&1 || true' EXIT

conf() {	# conf tree | conf CLOCK: the config (of one boot's job)
	cat >"$work/klab.conf" <<EOF
[lab]
	db = $db
	work_dir = $work/w
	artifact_dir = $work/artifacts
[include]
	path = $src/kernels/lab/demo-tree.conf
EOF
	[ "$1" = tree ] && return 0
	cat >>"$work/klab.conf" <<EOF
[include]
	path = $work/lab-noboot.conf
[workload "udp_tx_dummy"]
	type = udp_tx
	target = dummy
	engine = io_uring
	payload_size = 64
	batch = 32
	duration = 3
	warmup = 1
	monitors = cpu
[workload "udp_rr"]
	type = udp_rr
	flows = 4
	request_size = 100
	response_size = 100
	duration = 3
	warmup = 1
	monitors = cpu
[profile "same"]
# an A/A on the one guest boot: both sides the same tuning (boot = none)
[job "cov-$1"]
	profile_a = same
	profile_b = same
	machines = dut peer
	workloads = udp_tx_dummy udp_rr
	boots = 1
	runs = $runs
	warmup_runs = 1
	order = fixed
EOF
}

conf tree
kid=$("$klab" --config "$work/klab.conf" --json kernels build --tree linux-source-6.1 --variant base |
	python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])')
echo "icount-cov: kernel $kid, $boots boots x $runs runs per clock, smp $smp; uptime: $(uptime)" >&2
for clock in icount real; do
	for b in $(seq 1 "$boots"); do
		"$klab" --config "$work/klab.conf" lab up --qemu --clock "$clock" --peer netns --smp "$smp" \
			--kernel-id "$kid" --dir "$lab" --index "${KLAB_COV_INDEX:-47}" --timeout 900 >"$work/up.out"
		sed -e "s/boot = kexec/boot = none/" "$lab/klab.conf" >"$work/lab-noboot.conf"
		conf "$clock"
		(cd "$work" && "$klab" --config "$work/klab.conf" run "cov-$clock" >"$work/run-$clock-$b.out" 2>&1) ||
			{ tail -20 "$work/run-$clock-$b.out" >&2; exit 1; }
		"$klab" lab down --qemu --dir "$lab" >/dev/null
		echo "icount-cov: $clock boot $b done; load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
	done
done

# per (clock, workload, boot): mean, sd and spread of the measured runs' headline metric
echo "| workload | clock | boots x runs | run-to-run CoV | max spread in a boot | boot-to-boot CoV | mean |"
echo "|---|---|---|---|---|---|---|"
sqlite3 -separator ' ' "$db" "
WITH v AS (SELECT r.clock, r.workload, r.job_id AS boot, m.value FROM runs r JOIN jobs j ON j.id = r.job_id
           JOIN metrics m ON m.run_id = r.id
           WHERE j.name LIKE 'cov-%' AND r.seq >= 1 AND r.status = 'ok'
             AND m.name = CASE r.workload WHEN 'udp_rr' THEN 'tps' ELSE 'tx_pps' END),
     b AS (SELECT clock, workload, boot, AVG(value) AS mean, COUNT(*) AS n,
                  (MAX(value) - MIN(value)) * 1e6 / AVG(value) AS ppm,
                  sqrt(MAX(SUM(value * value) - SUM(value) * SUM(value) / COUNT(*), 0) / (COUNT(*) - 1))
                    / AVG(value) * 100 AS cov
           FROM v GROUP BY clock, workload, boot)
SELECT clock, workload, COUNT(*), MIN(n), AVG(cov), MAX(ppm),
       sqrt(MAX(SUM(mean * mean) - SUM(mean) * SUM(mean) / COUNT(*), 0) / (COUNT(*) - 1)) / AVG(mean) * 100,
       AVG(mean)
FROM b GROUP BY clock, workload ORDER BY workload, clock" |
while read -r clock wl nb nr rr ppm bb mean; do
	printf '| %s | %s | %s x %s | %.4f%% | %.0f ppm | %.4f%% | %.0f |\n' "$wl" "$clock" "$nb" "$nr" "$rr" "$ppm" "$bb" "$mean"
done
echo "uptime at the end: $(uptime)"
cp "$db" /tmp/klab-icount-cov-last.db
rm -rf "$work"
