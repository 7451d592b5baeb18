#!/bin/bash
test_description='a job on several pairs of a pool (pairs = 2): its boots two at a time, one a pair, each pair both sides; one pair when the other is not free; a dying boot fails the job; killed mid-round it resumes without a run lost or doubled'
. "$(dirname "$0")/lib.sh"
. "$SRCDIR/tests/data/jobs/lab.sh"

job_lab_prereq
pairs_lab_up 2 07 "$SCRATCH/klab.db"
cat >>"$KLAB_CONFIG" <<EOF
[job "wide"]
	profile_a = noxps
	profile_b = xps
	pool = p
	pairs = 2
	workloads = rr
	boots = 2
	runs = 1
	warmup_runs = 0
	seed = 5
[job "fixed"]
	profile_a = noxps
	profile_b = xps
	machines = dut0 peer0
	workloads = rr
EOF

# boot_span JOB BOOT: when the boot's first step began and its last step ended
boot_span() {
	sql "SELECT min(started) || ' ' || max(finished) FROM steps WHERE job_id = $1 AND
	     (key LIKE 'boot:$2:%' OR key LIKE 'run:$2:%')"
}
# boots_on JOB: "SEQ SIDE MACHINE" a line per boot
boots_on() {
	sql "SELECT seq || ' ' || side || ' ' || machine FROM boots WHERE job_id = $1 ORDER BY seq"
}
# each_run_once JOB N: N runs, each stored once, each on its boot's machine
each_run_once() {
	test "$(sql "SELECT count(*) FROM runs WHERE job_id = $1")" = "$2" &&
	test "$(sql "SELECT count(DISTINCT uid) FROM runs WHERE job_id = $1")" = "$2" &&
	test "$(sql "SELECT count(*) FROM runs r JOIN boots b ON b.id = r.boot_id WHERE r.job_id = $1 AND r.machine != b.machine")" = 0
}

test_expect_success 'config: pairs needs a pool, and is 1..64' '
	cat >bad.conf <<-EOF &&
	[include]
		path = $KLAB_CONFIG
	[job "bad"]
		profile_a = noxps
		profile_b = xps
		machines = dut0 peer0
		pairs = 2
		workloads = rr
	EOF
	test_expect_code 1 "$KLAB" -c bad.conf config check >out 2>&1 &&
	test_grep "bad.conf:7: .job \"bad\".: .pairs = 2. runs boots on several pairs of a pool: give .pool., not .machines." out &&
	sed "s/machines = dut0 peer0/pool = p/; s/pairs = 2/pairs = 65/" bad.conf >bad2.conf &&
	test_expect_code 1 "$KLAB" -c bad2.conf config check >out 2>&1 &&
	test_grep "bad2.conf:7: .*pairs" out
'

test_expect_success 'klab submit --pairs N sets the pairs of a pool job; a job of fixed machines refuses it' '
	"$KLAB" --db "$SCRATCH/sub.db" --json submit --job short --pairs 2 >s1.json &&
	"$KLAB" --db "$SCRATCH/sub.db" --json submit --job wide --pairs 1 >s2.json &&
	"$KLAB" --db "$SCRATCH/sub.db" --json submit --job wide >s3.json &&
	test "$(sqlite3 "$SCRATCH/sub.db" "SELECT group_concat(coalesce(json_extract(spec, \"$.pairs\"), 1)) FROM jobs ORDER BY id")" = "2,1,2" &&
	test_expect_code 1 "$KLAB" --db "$SCRATCH/sub.db" submit --job fixed --pairs 2 2>err &&
	test_grep "job .fixed.: --pairs 2 runs boots on several pairs of a pool, and the job names machines, not a pool" err
'

test_expect_success 'pairs = 2: boots two at a time, one on each pair, each pair both sides' '
	"$KLAB" submit --job wide >/dev/null &&
	"$KLAB" run --wait 1 >run1.out 2>&1 &&
	cat run1.out &&
	test "$(sql "SELECT state FROM jobs WHERE id = 1")" = done &&
	test_grep "boots 1 (.) on .dut0., 2 (.) on .dut1. at once" run1.out &&
	test_grep "boots 3 (.) on .dut[01]., 4 (.) on .dut[01]. at once" run1.out &&
	boots_on 1 >boots &&
	cat boots &&
	# a round puts its two boots on two pairs; each pair runs one boot of each side
	test "$(sql "SELECT count(DISTINCT machine) FROM boots WHERE job_id = 1 AND seq IN (1, 2)")" = 2 &&
	test "$(sql "SELECT count(DISTINCT machine) FROM boots WHERE job_id = 1 AND seq IN (3, 4)")" = 2 &&
	test "$(sql "SELECT count(*) FROM (SELECT machine FROM boots WHERE job_id = 1 GROUP BY machine
	           HAVING count(*) = 2 AND count(DISTINCT side) = 2)")" = 2 &&
	# the two boots of a round ran at the same time
	python3 -c "import sys; a0,a1,b0,b1=map(float,sys.argv[1:]); assert max(a0,b0) < min(a1,b1), (a0,a1,b0,b1)" \
		$(boot_span 1 1) $(boot_span 1 2) &&
	each_run_once 1 4 &&
	test "$(sql "SELECT count(*) FROM steps WHERE job_id = 1 AND (attempts != 1 OR state NOT IN (\"done\", \"skipped\"))")" = 0 &&
	test "$(sql "SELECT state FROM steps WHERE job_id = 1 AND key = \"compare\"")" = done &&
	# the job held both pairs and gave them all back
	test "$(sql "SELECT group_concat(machine) FROM (SELECT DISTINCT machine FROM lease_history WHERE job_id = 1 ORDER BY machine)")" = "dut0,dut1,peer0,peer1" &&
	test "$(sql "SELECT count(*) FROM leases")" = 0
'

test_expect_success 'the other pair not free: the boots run one after the other on the job'"'"'s own pair' '
	sql "UPDATE machines SET state = \"drained\", state_reason = \"test\" WHERE name = \"dut1\"" &&
	"$KLAB" submit --job wide >/dev/null &&
	"$KLAB" run --wait 2 >run2.out 2>&1 &&
	sql "UPDATE machines SET state = \"free\" WHERE name = \"dut1\"" &&
	test "$(sql "SELECT state FROM jobs WHERE id = 2")" = done &&
	! grep "at once" run2.out &&
	test "$(sql "SELECT group_concat(DISTINCT machine) FROM boots WHERE job_id = 2")" = dut0 &&
	each_run_once 2 4
'

test_expect_success 'a boot whose process dies fails the job, names the machine, releases both pairs' '
	"$KLAB" submit --job wide >/dev/null &&
	test_expect_code 1 env KLAB_TEST_KILL_AT=run:2:rr:0 "$KLAB" run --wait 3 >run3.out 2>&1 &&
	cat run3.out &&
	test "$(sql "SELECT state FROM jobs WHERE id = 3")" = failed &&
	sql "SELECT error FROM jobs WHERE id = 3" >err &&
	test_grep "step run:2:rr:0 failed: on machine .dut1.: the process of boot 2 died (signal 9)" err &&
	# the job put its tuning back on dut1 (its process could not)
	test ! -e "$SCRATCH/agent/state-dut1/prepare.json" &&
	test "$(sql "SELECT count(*) FROM leases")" = 0
'

test_expect_success 'killed during a round, the job resumes: each run stored once' '
	"$KLAB" submit --job wide >/dev/null &&
	{ "$KLAB" run --wait 4 >run4.out 2>&1 & } &&
	pid=$! &&
	test_wait_until 120 "step_in 4 run:1:rr:0 running || step_in 4 run:1:rr:0 done" &&
	kill -9 $pid &&
	wait $pid; test $? = 137 &&
	# its boots processes end their boots; then nobody holds the job
	test_wait_until 120 "flock -n \"$SCRATCH/klab.db.job-4.lock\" true" &&
	test "$(sql "SELECT state FROM steps WHERE job_id = 4 AND key = \"boot:2:restore\"")" = done &&
	"$KLAB" run --wait 4 >run4b.out 2>&1 &&
	cat run4b.out &&
	test "$(sql "SELECT state FROM jobs WHERE id = 4")" = done &&
	test_grep "resuming" run4b.out &&
	each_run_once 4 4 &&
	test "$(sql "SELECT count(*) FROM steps WHERE job_id = 4 AND key LIKE \"run:%\" AND attempts != 1")" = 0 &&
	test "$(sql "SELECT count(*) FROM leases")" = 0
'

test_done
