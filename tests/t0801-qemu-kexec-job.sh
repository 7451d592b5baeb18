#!/bin/bash
test_description='qemu lab: a baseline-vs-patched job kexecs the guests into each kernel, verifies it, runs, stores, reports'
# run.sh: group kernel-tree (a series is applied in the work tree of /var/cache/klab/src/linux-source-6.1 under its build lock; t0450 checks that tree outside the lock, t0902 copies it)
. "$(dirname "$0")/lib.sh"

test_qemu_lab_index	# a qemu lab index of its own (tests/lib.sh)
L=$SCRATCH/lab
PATCH=$SRCDIR/tests/data/qemu/0001-klab-test-marker.patch
ssh_g() {	# ssh_g GUEST CMD: OpenSSH with the lab's key and known_hosts only
	local port
	port=$(sed -n "s/^$1.ssh_port=//p" "$L/lab.state"); shift
	timeout 60 ssh -F /dev/null -o BatchMode=yes -o StrictHostKeyChecking=yes \
		-o UserKnownHostsFile="$L/known_hosts" -o ConnectTimeout=10 \
		-i "$L/keys/id_ed25519" -p "$port" root@127.0.0.1 "$@"
}
q() { sqlite3 "$SCRATCH/klab.db" "$1"; }

write_conf() {
	cat >klab.conf <<EOF
[lab]
	db = $SCRATCH/klab.db
	artifact_dir = $SCRATCH/artifacts
	work_dir = $SCRATCH/work
	report_dir = $SCRATCH/report
	boot_timeout = 600s
[include]
	path = $SRCDIR/kernels/lab/demo-tree.conf
EOF
	[ $# = 0 ] && return 0
	cat >>klab.conf <<EOF
[include]
	path = $L/klab.conf
[workload "rr"]
	type = udp_rr
	flows = 4
	duration = 3
	warmup = 1
	monitors = cpu
[job "t0801"]
	tree = linux-source-6.1
	series = $PATCH
	machines = dut peer
	workloads = rr
	boots = 1
	runs = 1
	warmup_runs = 0
	order = fixed
EOF
}
write_conf
test_cleanup '"$KLAB" lab down --qemu --dir "$L"'

test_expect_success KBUILD 'the baseline kernel is built through klab (reusing the warm build folder)' '
	"$KLAB" --json kernels build --tree linux-source-6.1 --variant base >k.json &&
	python3 -c "import json; d=json.load(open(\"k.json\")); print(d[\"id\"]); print(d[\"release\"])" >k.txt
'
KID=$(sed -n 1p k.txt 2>/dev/null)
KREL=$(sed -n 2p k.txt 2>/dev/null)

test_expect_success ROOT,QEMU,KBUILD 'the qemu lab boots from the baseline' '
	"$KLAB" lab up --qemu --kernel-id "$KID" --dir "$L" --index $K --timeout 600 >out &&
	test_grep "qemu lab $K up" out &&
	write_conf with-lab &&
	"$KLAB" config check klab.conf
'

test_expect_success ROOT,QEMU,KBUILD 'klab run: intake, both builds, kexec into A then B, verify, run, compare, report' '
	timeout 2400 "$KLAB" run t0801 >run.out 2>&1; rc=$?
	cat run.out
	test $rc = 0 &&
	test "$(q "SELECT state FROM jobs WHERE name = '\''t0801'\''")" = done
'
JOB=$(q "SELECT id FROM jobs WHERE name = 't0801' ORDER BY id DESC LIMIT 1" 2>/dev/null)

test_expect_success ROOT,QEMU,KBUILD 'the patched kernel carries the series and a release/build id of its own' '
	q "SELECT variant, release, build_id FROM kernels WHERE state = '\''ok'\'' ORDER BY id" >kernels &&
	cat kernels &&
	test_grep "^patched|.*-patched|[0-9a-f]\{40\}" kernels &&
	test_grep "^base|$KREL|[0-9a-f]\{40\}" kernels
'

test_expect_success ROOT,QEMU,KBUILD 'each boot ran the kernel of its side (release and build id verified)' '
	q "SELECT b.side, b.release = k.release, b.build_id = k.build_id FROM boots b
	   JOIN kernels k ON k.id = b.kernel_id WHERE b.job_id = $JOB ORDER BY b.seq" >boots &&
	cat boots &&
	test "$(cat boots)" = "$(printf "A|1|1\nB|1|1")"
'

test_expect_success ROOT,QEMU,KBUILD 'the guests now run the patched kernel, switched by kexec (no qemu restart)' '
	ssh_g dut uname -r >rel && grep -q -e "-patched$" rel &&
	ssh_g dut dmesg >dmesg && test_grep "klab-test: the patched kernel of t0801 runs" dmesg &&
	"$KLAB" lab status --qemu --dir "$L" >st && test_grep "^dut .*running.*-patched" st &&
	test "$(sed -n "s/^dut.pid=//p" "$L/lab.state")" = "$(pgrep -f "$L/dut.pid" | head -n 1)"
'

test_expect_success ROOT,QEMU,KBUILD 'the udp_rr results of both sides are stored with their metrics' '
	test "$(q "SELECT count(*) FROM runs WHERE job_id = $JOB AND status = '\''ok'\''")" -ge 2 &&
	q "SELECT r.side, m.value > 0 FROM runs r JOIN metrics m ON m.run_id = r.id
	   WHERE r.job_id = $JOB AND m.name = '\''tps'\'' ORDER BY r.side" >tps &&
	test_grep "^A|1" tps && test_grep "^B|1" tps
'

test_expect_success ROOT,QEMU,KBUILD 'klab compare and klab report show both kernels' '
	"$KLAB" compare "$JOB" >cmp && cat cmp && test_grep "tps" cmp &&
	"$KLAB" report --out "$SCRATCH/pages" "$JOB" >rep &&
	test -f "$SCRATCH/pages/index.html" &&
	grep -rl -e "-patched" "$SCRATCH/pages" >/dev/null
'

test_expect_success ROOT,QEMU,KBUILD 'lab down stops the guests' '
	"$KLAB" lab down --qemu --dir "$L" && ! test -e "$L"
'

test_done
