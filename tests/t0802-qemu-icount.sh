#!/bin/bash
test_description='qemu lab under icount: the guest clock counts instructions, the peer is a namespace of the dut, runs record the clock and agree to parts per million, compare refuses to mix clocks'
. "$(dirname "$0")/lib.sh"

# a qemu lab index of its own (tests/lib.sh), so that labs of tests running at once never collide
test_qemu_lab_index
L=$SCRATCH/lab
ssh_g() {	# ssh_g GUEST CMD: OpenSSH with the lab's key and known_hosts only
	local port
	port=$(sed -n "s/^$1.ssh_port=//p" "$L/lab.state"); shift
	timeout 60 ssh -F /dev/null -o BatchMode=yes -o StrictHostKeyChecking=yes \
		-o UserKnownHostsFile="$L/known_hosts" -o ConnectTimeout=10 \
		-i "$L/keys/id_ed25519" -p "$port" root@127.0.0.1 "$@"
}
q() { sqlite3 "$SCRATCH/klab.db" "$1"; }

cat >klab.conf <<EOF
[lab]
	db = $SCRATCH/klab.db
	artifact_dir = $SCRATCH/artifacts
	work_dir = $SCRATCH/work
[include]
	path = $SRCDIR/kernels/lab/demo-tree.conf
EOF
test_cleanup '"$KLAB" lab down --qemu --dir "$L"'

test_expect_success 'icount needs TCG: --clock icount --accel kvm is refused' '
	test_expect_code 2 "$KLAB" lab up --qemu --kernel /x --clock wall 2>err &&
	test_grep "real or icount" err &&
	test_must_fail "$KLAB" lab up --qemu --kernel "$KLAB" --clock icount --accel kvm --dir "$L" 2>err &&
	test_grep "clock icount needs TCG" err &&
	! test -e "$L"
'

test_expect_success KBUILD 'the baseline kernel is built through klab (cached)' '
	"$KLAB" --json kernels build --tree linux-source-6.1 --variant base >k.json &&
	python3 -c "import json; d=json.load(open(\"k.json\")); print(d[\"id\"]); print(d[\"release\"])" >k.txt
'
KID=$(sed -n 1p k.txt 2>/dev/null)

test_expect_success ROOT,QEMU,KBUILD,ICOUNT_GUESTS 'lab up --clock icount --smp 2: one qemu with -icount, maxcpus=1, both CPUs online' '
	"$KLAB" lab up --qemu --clock icount --smp 2 --kernel-id "$KID" --dir "$L" --index $K \
		--timeout 600 >out &&
	cat out &&
	test_grep "icount clock" out && test_grep "peer in its namespace klabpeer" out &&
	test_grep "^clock=icount$" "$L/lab.state" && test_grep "^peer=netns$" "$L/lab.state" &&
	pid=$(sed -n "s/^dut.pid=//p" "$L/lab.state") &&
	test "$(sed -n "s/^peer.pid=//p" "$L/lab.state")" = "$pid" &&
	tr "\0" "\n" </proc/$pid/cmdline >cmdline &&
	test_grep "^-icount$" cmdline && test_grep "^shift=0,sleep=on$" cmdline &&
	test_grep "maxcpus=1 klab.cpus=2" cmdline &&
	# the instrument key of a calibration: the qemu version and accelerator, no host CPU under icount
	test_grep " klab.qemu=[0-9][0-9.]* klab.accel=tcg" cmdline && test_grep -v "klab.host=" cmdline &&
	test "$(pgrep -f -c -- "-pidfile $L/")" = 1 &&
	test "$(ssh_g dut cat /sys/devices/system/cpu/online)" = 0-1 &&
	test_grep "CPUs online: 0-1" "$L/dut.console"
'

test_expect_success ROOT,QEMU,KBUILD,ICOUNT_GUESTS 'the peer is the namespace klabpeer of the dut, joined by a veth' '
	ssh_g dut readlink /proc/self/ns/net >ns1 && ssh_g peer readlink /proc/self/ns/net >ns2 &&
	! cmp -s ns1 ns2 &&
	ssh_g peer ip -4 addr show eth1 >a2 && test_grep "inet 198.18.$((100 + K)).2/24" a2 &&
	ssh_g dut ip -4 addr show eth1 >a1 && test_grep "inet 198.18.$((100 + K)).1/24" a1 &&
	ssh_g dut ip -d link show eth1 >l1 && test_grep "veth" l1 &&
	test_grep "^\[127.0.0.1\]:$(sed -n "s/^peer.ssh_port=//p" "$L/lab.state") " "$L/known_hosts" &&
	"$KLAB" --json lab status --qemu --dir "$L" >st.json &&
	python3 -c "
import json
d = json.load(open(\"st.json\"))
assert d[\"clock\"] == \"icount\" and d[\"peer\"] == \"netns\", d
assert [g[\"running\"] for g in d[\"guests\"]] == [True, True], d"
'

test_expect_success ROOT,QEMU,KBUILD,ICOUNT_GUESTS 'the fragment says clock = icount; a job stores the clock with machine, boot and runs' '
	test $(grep -c "clock = icount" "$L/klab.conf") = 2 &&
	sed -e "s/boot = kexec/boot = none/" "$L/klab.conf" >lab-noboot.conf &&
	cat >>klab.conf <<EOF &&
[include]
	path = $SCRATCH/lab-noboot.conf
[workload "tx"]
	type = udp_tx
	target = dummy
	engine = io_uring
	payload_size = 64
	batch = 32
	duration = 3
	warmup = 1
	monitors = cpu
[workload "rr"]
	type = udp_rr
	flows = 4
	# its tps follows the host load under sleep=on (docs/qemu-icount.md): no verdict is
	# expected of it, so its runs are short (a 3 s run took 40-90 s of host time)
	duration = 1
	warmup = 0.5
	monitors = cpu
[profile "same"]
[job "ic"]
	profile_a = same
	profile_b = same
	machines = dut peer
	workloads = tx rr
	boots = 2
	runs = 3
	warmup_runs = 1
	order = fixed
EOF
	"$KLAB" config check klab.conf &&
	timeout 2400 "$KLAB" run ic >run.out 2>&1; rc=$?
	cat run.out
	test $rc = 0 &&
	test "$(q "SELECT clock FROM machines WHERE name = '\''dut'\''")" = icount &&
	test "$(q "SELECT DISTINCT clock FROM boots")" = icount &&
	test "$(q "SELECT DISTINCT clock FROM runs")" = icount &&
	# boots = 2 is 2 boots per side, ABAB (order = fixed); each boot runs warmup_runs + runs
	# = 4 rounds of both workloads (seq 0-3, seq 0 the warm-up; docs/jobs.md): 4 x 4 x 2 = 32
	test "$(q "SELECT group_concat(side, '\'''\'') FROM (SELECT side FROM boots ORDER BY seq)")" = ABAB &&
	test "$(q "SELECT COUNT(*) FROM runs WHERE status = '\''ok'\''")" = 32 &&
	test "$(q "SELECT COUNT(*) FROM runs WHERE status = '\''ok'\'' AND seq >= 1")" = 24 &&
	test "$(q "SELECT COUNT(*) FROM (SELECT boot_id FROM runs GROUP BY boot_id, workload
	                              HAVING COUNT(*) = 4 AND MIN(seq) = 0 AND MAX(seq) = 3)")" = 8
'

test_expect_success ROOT,QEMU,KBUILD,ICOUNT_GUESTS 'under icount the cost per operation is stored as insn_per_op' '
	q "SELECT r.workload, r.seq, m.name, m.value, m.unit FROM runs r JOIN metrics m ON m.run_id = r.id
	   WHERE m.name IN ('\''tx_pps'\'', '\''tps'\'', '\''insn_per_op'\'', '\''cpu_us_per_op'\'')
	   ORDER BY r.workload, m.name, r.seq" >metrics &&
	cat metrics &&
	test_grep "^tx|1|insn_per_op|[0-9.]*|insn$" metrics &&
	test_grep "^rr|1|insn_per_op|[0-9.]*|insn$" metrics &&
	! test_grep "cpu_us_per_op" metrics
'

# ppm = (max - min) / mean of measured runs (seq >= 1; seq 0 is the warm-up), per boot and
# over all 4 boots (both sides: the same kernel and tuning, an A/A). Figures and why in
# docs/qemu-icount.md, "t0802's A/A job".
ppm() {	# ppm WORKLOAD METRIC: one line per boot, then one for all boots: spread|runs
	q "SELECT (MAX(m.value) - MIN(m.value)) * 1e6 / AVG(m.value), COUNT(*) FROM runs r
	   JOIN metrics m ON m.run_id = r.id WHERE r.workload = '$1' AND m.name = '$2' AND r.seq >= 1
	   GROUP BY r.boot_id ORDER BY r.boot_id;
	   SELECT (MAX(m.value) - MIN(m.value)) * 1e6 / AVG(m.value), COUNT(*) FROM runs r
	   JOIN metrics m ON m.run_id = r.id WHERE r.workload = '$1' AND m.name = '$2' AND r.seq >= 1"
}

# tx (one sender, its CPU never idle) counts instructions only: its runs agree within a boot
# and between boots. rr (request/response across the two vCPUs, each idle ~45% of a run) waits,
# and with sleep=on a waiting guest runs on host time: its tps follows the host's load, within
# a boot as between boots (5% and more), so only its count is checked here and its spread in
# the A/A below.
test_expect_success ROOT,QEMU,KBUILD,ICOUNT_GUESTS 'tx runs of one kernel agree to parts per million, within and between boots' '
	ppm tx tx_pps >tx.ppm && ppm rr tps >rr.ppm &&
	echo "tx_pps per boot, then all: $(tr "\n" " " <tx.ppm)(ppm|runs); load $(cut -d" " -f1-3 /proc/loadavg)" &&
	echo "tps per boot, then all: $(tr "\n" " " <rr.ppm)(ppm|runs)" &&
	python3 -c "
rows = lambda f: [(float(s), int(n)) for s, n in (l.split(\"|\") for l in open(f).read().split())]
tx, rr = rows(\"tx.ppm\"), rows(\"rr.ppm\")
assert [n for _, n in tx] == [3, 3, 3, 3, 12] and [n for _, n in rr] == [3, 3, 3, 3, 12], (tx, rr)
assert all(s < 1000 for s, _ in tx), (\"tx\", tx)"
'

# tps: compare's per-boot values are the means of a boot's measured runs; its cov_a/cov_b
# (sd/mean of those, n - 1) must be the spread the runs show, whatever the verdict.
test_expect_success ROOT,QEMU,KBUILD,ICOUNT_GUESTS 'A/A on the icount lab, 2 boots per side: tx is EQUIVALENT; rr reports the spread of its boots' '
	job=$(q "SELECT id FROM jobs WHERE name = '\''ic'\''") &&
	"$KLAB" compare "$job" >aa &&
	cat aa &&
	q "SELECT workload, metric, verdict FROM comparisons WHERE job_id = $job AND metric IN ('\''tx_pps'\'', '\''tps'\'')
	   ORDER BY workload" >aa.v &&
	cat aa.v &&
	test "$(wc -l <aa.v)" = 2 &&
	test_grep "^tx|tx_pps|EQUIVALENT$" aa.v &&
	test_grep "^rr|tps|\(EQUIVALENT\|INCONCLUSIVE\)$" aa.v &&
	python3 -c "
import sqlite3, statistics as st
db = sqlite3.connect(\"$SCRATCH/klab.db\")
boots = {}
for b, side, v in db.execute(\"SELECT r.boot_id, r.side, m.value FROM runs r JOIN metrics m ON m.run_id = r.id \"
                             \"WHERE r.job_id = $job AND r.workload = '\''rr'\'' AND m.name = '\''tps'\'' AND r.seq >= 1\"):
    boots.setdefault(side, {}).setdefault(b, []).append(v)
means = {s: [st.mean(v) for v in d.values()] for s, d in boots.items()}
cov = {s: 100 * st.stdev(m) / st.mean(m) for s, m in means.items()}
n_a, n_b, mean_a, mean_b, cov_a, cov_b, extra = db.execute(
    \"SELECT n_a, n_b, mean_a, mean_b, cov_a, cov_b, extra_boots FROM comparisons \"
    \"WHERE job_id = $job AND workload = '\''rr'\'' AND metric = '\''tps'\''\").fetchone()
print(\"rr tps per boot:\", means, \"CoV %:\", cov, \"stored:\", cov_a, cov_b, \"extra boots:\", extra)
assert (n_a, n_b) == (2, 2), (n_a, n_b)
for got, want in ((mean_a, st.mean(means[\"A\"])), (mean_b, st.mean(means[\"B\"])), (cov_a, cov[\"A\"]), (cov_b, cov[\"B\"])):
    assert abs(got - want) <= 1e-9 * abs(want), (got, want)"
'

# The known-cost half of the A/A (issue 15 item 8), in the same guest: side B puts a root
# pfifo_fast on dummy0, whose default is noqueue (IFF_NO_QUEUE): every packet of tx then takes
# the qdisc path of __dev_xmit_skb (an empty pfifo_fast is bypassed, so no enqueue/dequeue, but
# its run lock, per-CPU stats and sch_direct_xmit) instead of going straight to the driver.
# The guest kernel has pfifo_fast with CONFIG_NET_SCHED=y (sch_generic.c, registered by
# pktsched_init); dummy's tx_queue_len is 1000, which its ring needs. A profile's qdisc goes on
# the dut's nic (the machine's key, not the profile's): for this job, whose packets leave by
# dummy0, the dut's nic is dummy0 instead of eth1. The job runs with cpu1 offline: with two
# vCPUs online a vCPU that TCG switched away from mid-work counts the other's instructions as
# its own busy time, which made insn_per_op spread 3150-3480 between runs of one kernel (tx_pps
# within 30 ppm) and left a 3.4% cost INCONCLUSIVE on it in one of two runs of this test; with
# one vCPU it is the sender's path length. Figures in docs/qemu-icount.md, "Known cost on side B".
test_expect_success ROOT,QEMU,KBUILD,ICOUNT_GUESTS 'a known cost on side B only (a root pfifo_fast on dummy0) is CHANGED, tx_pps down, insn_per_op up, in 2 boots per side' '
	start=$(date +%s) && load0=$(cut -d" " -f1-3 /proc/loadavg) &&
	ssh_g dut tc qdisc show dev dummy0 root >q.before &&
	test_grep "qdisc noqueue 0: root" q.before &&
	ssh_g dut "echo 0 >/sys/devices/system/cpu/cpu1/online" &&
	test "$(ssh_g dut cat /sys/devices/system/cpu/online)" = 0 &&
	sed -i "/^\[machine \"dut\"\]/,/^\[/ s/^\tnic = .*/\tnic = dummy0/" lab-noboot.conf &&
	test "$(grep -c "nic = dummy0" lab-noboot.conf)" = 1 &&
	cat >>klab.conf <<EOF &&
[profile "qdisc"]
	qdisc = pfifo_fast
[job "cost"]
	profile_a = same
	profile_b = qdisc
	machines = dut peer
	workloads = tx
	boots = 2
	runs = 3
	warmup_runs = 1
	order = fixed
EOF
	"$KLAB" config check klab.conf &&
	timeout 1800 "$KLAB" run cost >cost.out 2>&1; rc=$?
	cat cost.out
	ssh_g dut "echo 1 >/sys/devices/system/cpu/cpu1/online"
	echo "job cost: $(( $(date +%s) - start )) s wall; load $load0 at the start, $(cut -d" " -f1-3 /proc/loadavg) at the end" >cost.fig &&
	test $rc = 0 &&
	test "$(ssh_g dut cat /sys/devices/system/cpu/online)" = 0-1 &&
	# restore took the qdisc off again: the next A boot, and later tests, see noqueue
	ssh_g dut tc qdisc show dev dummy0 root >q.after &&
	test_cmp q.before q.after &&
	job=$(q "SELECT id FROM jobs WHERE name = '\''cost'\''") &&
	test "$(q "SELECT group_concat(side, '\'''\'') FROM (SELECT side FROM boots WHERE job_id = $job ORDER BY seq)")" = ABAB &&
	"$KLAB" compare "$job" >cost.cmp &&
	cat cost.cmp &&
	q "SELECT metric, verdict, n_a, n_b, mean_a, mean_b, change_pct, ci_lo, ci_hi FROM comparisons
	   WHERE job_id = $job AND workload = '\''tx'\'' AND metric IN ('\''tx_pps'\'', '\''insn_per_op'\'')
	   ORDER BY metric" >cost.v &&
	q "SELECT b.seq, b.side, m.name, AVG(m.value), COUNT(*) FROM runs r JOIN boots b ON b.id = r.boot_id
	   JOIN metrics m ON m.run_id = r.id WHERE r.job_id = $job AND r.seq >= 1
	   AND m.name IN ('\''tx_pps'\'', '\''insn_per_op'\'') GROUP BY b.seq, m.name ORDER BY m.name, b.seq" |
	sed "s/^/per boot (seq|side|metric|mean of measured runs|runs): /" >>cost.fig &&
	python3 -c "
rows = {l.split(\"|\")[0]: l.split(\"|\")[1:] for l in open(\"cost.v\").read().split()}
assert sorted(rows) == [\"insn_per_op\", \"tx_pps\"], rows
fig = open(\"cost.fig\", \"a\")
for m, (verdict, n_a, n_b, a, b, c, lo, hi) in sorted(rows.items()):
    print(\"%s: %s, A %.1f, B %.1f, change %+.3f%% [95%% CI %+.3f%%, %+.3f%%], %s/%s boots\"
          % (m, verdict, float(a), float(b), float(c), float(lo), float(hi), n_a, n_b), file=fig)
fig.close()
for m, (verdict, n_a, n_b, a, b, c, lo, hi) in sorted(rows.items()):
    assert verdict == \"CHANGED\" and (n_a, n_b) == (\"2\", \"2\"), (m, verdict, n_a, n_b)
verdict, n_a, n_b, a, b, c, lo, hi = rows[\"tx_pps\"]
assert float(c) < 0 and float(lo) < float(hi) < 0, (\"tx_pps not down, or its CI holds 0\", c, lo, hi)
verdict, n_a, n_b, a, b, c, lo, hi = rows[\"insn_per_op\"]
assert float(b) > float(a) and 0 < float(lo) < float(hi), (\"insn_per_op not up on B\", a, b, lo, hi)"
'
# the figures, in the TAP log whether the test passed or not (a passing test's output and its
# scratch folder are removed)
test -s cost.fig && sed "s/^/# /" cost.fig

test_expect_success ROOT,QEMU,KBUILD,ICOUNT_GUESTS 'compare refuses to mix icount runs with real-time runs, naming both' '
	job=$(q "SELECT id FROM jobs WHERE name = '\''ic'\''") &&
	# stand-in for a real-time lab: the same runs copied as side A of a job measured on the real clock
	q "INSERT INTO jobs (id, name, state, spec, created) VALUES (900, '\''mix'\'', '\''done'\'', '\''{}'\'', 0);
	   INSERT INTO job_sides (job_id, side, label) VALUES (900, '\''A'\'', '\''real'\''), (900, '\''B'\'', '\''icount'\'');
	   INSERT INTO runs (uid, job_id, side, workload, seq, status, created, clock)
	     SELECT uid || '\''-a'\'', 900, '\''A'\'', workload, seq, status, created, '\''real'\'' FROM runs WHERE job_id = $job;
	   INSERT INTO runs (uid, job_id, side, workload, seq, status, created, clock)
	     SELECT uid || '\''-b'\'', 900, '\''B'\'', workload, seq, status, created, clock FROM runs WHERE job_id = $job;
	   INSERT INTO metrics (run_id, name, value, unit, better)
	     SELECT n.id, m.name, m.value, m.unit, m.better FROM runs n JOIN runs o ON n.uid IN (o.uid || '\''-a'\'', o.uid || '\''-b'\'')
	     JOIN metrics m ON m.run_id = o.id WHERE n.job_id = 900;" &&
	"$KLAB" db rebuild-summaries >/dev/null &&
	test_must_fail "$KLAB" compare 900 2>err &&
	cat err &&
	test_grep "side A of job 900, measured on the real clock, with side B of job 900, measured on the icount clock" err &&
	q "UPDATE runs SET clock = '\''icount'\'' WHERE job_id = 900" &&
	"$KLAB" compare 900 >cmp &&
	test_grep "measured by instruction count (icount clock: path length, not hardware throughput)" cmp &&
	test_grep "not hardware throughput: cache misses" cmp
'

test_expect_success ROOT,QEMU,KBUILD,ICOUNT_GUESTS 'down stops the one qemu and removes the folder' '
	pid=$(sed -n "s/^dut.pid=//p" "$L/lab.state") &&
	"$KLAB" lab down --qemu --dir "$L" >out &&
	! test -e "$L" &&
	test_wait_until 5 "! kill -0 $pid 2>/dev/null"
'

test_done
