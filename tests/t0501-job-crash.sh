#!/bin/bash
test_description='SIGKILL of the job process at intake, build, before store, after store and mid-run: resumed with exact run counts'
. "$(dirname "$0")/lib.sh"
. "$SRCDIR/tests/data/jobs/lab.sh"

# 2 boots (AB or BA) x (1 warm-up + 1 measured run) = 4 runs, 22 steps
JOB_BOOTS=1 JOB_RUNS=1 JOB_WARMUP=1
job_lab_prereq
job_lab_up 29

step() {	# step KEY COLUMN
	sql "SELECT $2 FROM steps WHERE job_id = 1 AND key = '$1'"
}

step_of() {	# step_of JOB KEY COLUMN
	sql "SELECT $3 FROM steps WHERE job_id = $1 AND key = '$2'"
}

client_running() {	# the agent on the dut made the work folder of run b2-rr-r0
	ls -a "$SCRATCH/agent/state-dut/results" 2>/dev/null | grep -q "^\.work-j1-.*-b2-rr-r0$"
}

test_expect_success 'submit' '
	"$KLAB" submit --job ab >out &&
	test "$(sql "SELECT state FROM jobs")" = queued
'

test_expect_success 'killed at the start of intake: the step stays running, the job resumable' '
	test_expect_code 137 env KLAB_TEST_KILL_AT=intake "$KLAB" run 1 >out 2>err &&
	test_grep "SIGKILL at step intake" err &&
	test "$(step intake state)" = running &&
	test "$(sql "SELECT state FROM jobs WHERE id = 1")" = running
'

test_expect_success 'killed at build:A: intake is done on its second attempt' '
	test_expect_code 137 env KLAB_TEST_KILL_AT=build:A "$KLAB" run 1 >out 2>err &&
	test_grep "1/22 intake (resumed)" out &&
	test "$(step intake state)/$(step intake attempts)" = skipped/2 &&
	test "$(step build:A state)/$(step build:A attempts)" = running/1
'

test_expect_success 'killed after the first run, before storing it: the result stays on the agent' '
	test_expect_code 137 env "KLAB_TEST_KILL_AT=run:1:rr:0@before-store" "$KLAB" run 1 >out 2>err &&
	test "$(step build:A state)/$(step build:A attempts)" = skipped/2 &&
	test "$(sql "SELECT count(*) FROM runs")" = 0 &&
	uid=$(step run:1:rr:0 detail | python3 -c "import json,sys; print(json.load(sys.stdin)[\"uid\"])" 2>/dev/null ||
	      ls "$SCRATCH/agent/state-dut/results" | sed -n "s/\(.*-b1-rr-r0\)\.json$/\1/p") &&
	echo "$uid" >uid0 &&
	test -s "$SCRATCH/agent/state-dut/results/$uid.json"
'

test_expect_success 'killed after storing run 1:0 but before the step ended: stored once' '
	test_expect_code 137 env "KLAB_TEST_KILL_AT=run:1:rr:1@after-store" "$KLAB" run 1 >out 2>err &&
	test_grep "recovered from the agent" out &&
	test "$(step run:1:rr:0 state)/$(step run:1:rr:0 attempts)" = done/2 &&
	test "$(sql "SELECT count(*) FROM runs")" = 2 &&
	test "$(sql "SELECT count(*) FROM runs WHERE uid = \"$(cat uid0)\"")" = 1 &&
	test ! -e "$SCRATCH/agent/state-dut/results/$(cat uid0).json"
'

test_expect_success 'killed mid-run (SIGKILL from outside while the client runs)' '
	{ "$KLAB" run 1 >bg.out 2>&1 & } &&
	pid=$! &&
	test_wait_until 30 "step_in 1 run:2:rr:0 running" &&
	# the client is running on the dut once the agent made its work folder
	test_wait_until 15 client_running &&
	sleep 0.3 &&
	kill -9 $pid && { wait $pid; rc=$?; } && test $rc = 137 &&
	test_grep "run j1-.*-b1-rr-r1 was already stored" bg.out &&
	test "$(step run:1:rr:1 state)/$(step run:1:rr:1 attempts)" = done/2 &&
	test "$(step run:2:rr:0 state)" = running &&
	test "$(sql "SELECT count(*) FROM runs")" = 2
'

test_expect_success 'resumed to the end: every run exactly once, none lost' '
	"$KLAB" run 1 >out 2>err || { cat out err; false; } &&
	test "$(sql "SELECT state FROM jobs WHERE id = 1")" = done &&
	test "$(sql "SELECT count(*) FROM runs WHERE job_id = 1")" = 4 &&
	test "$(sql "SELECT count(DISTINCT uid) FROM runs WHERE job_id = 1")" = 4 &&
	test "$(sql "SELECT count(*) FROM runs WHERE job_id = 1 AND boot_id IS NOT NULL AND status = \"ok\"")" = 4 &&
	test "$(step run:2:rr:0 attempts)" = 2 &&
	step run:2:rr:0 detail >d && test_grep "\"recovered\":\"agent\"" d &&
	test "$(sql "SELECT count(*) FROM steps WHERE job_id = 1 AND state NOT IN (\"done\", \"skipped\")")" = 0 &&
	test "$(sql "SELECT count(*) FROM leases")" = 0 &&
	test -z "$(ls "$SCRATCH/agent/state-dut/results" | grep -v "^\.")"
'

test_expect_success 'klab job show names the resumed steps' '
	"$KLAB" job show 1 >show &&
	test_grep "intake *skipped *2" show &&
	test_grep "run:2:rr:0 *done *2" show &&
	test_grep "4 runs stored" show
'

test_expect_success 'SIGINT to klab run finishes the current step and leaves the job resumable' '
	"$KLAB" submit --job ab >/dev/null &&
	{ "$KLAB" run 2 >int.out 2>&1 & } &&
	pid=$! &&
	test_wait_until 30 "step_in 2 run:1:rr:0 running" &&
	kill -INT $pid &&
	{ wait $pid; rc=$?; } &&
	test "$rc" = 2 &&
	test_grep "job 2 stopped; it resumes from step run:1:rr:1" int.out &&
	test "$(sql "SELECT state || \",\" || coalesce(pid, \"-\") FROM jobs WHERE id = 2")" = "running,-" &&
	test "$(sql "SELECT state FROM steps WHERE job_id = 2 AND key = \"run:1:rr:0\"")" = done &&
	"$KLAB" run 2 >int2.out 2>&1 &&
	test "$(sql "SELECT count(*) FROM runs WHERE job_id = 2")" = 4 &&
	test "$(sql "SELECT max(attempts) FROM steps WHERE job_id = 2")" = 1
'

test_expect_success 'killed with the server up on the peer: the resumed step waits for that server to end, then runs once' '
	"$KLAB" submit --job ab >/dev/null &&
	id=$(sql "SELECT max(id) FROM jobs") &&
	test_expect_code 137 env "KLAB_TEST_KILL_AT=run:1:rr:0@server-up" "$KLAB" run $id >srv.out 2>srv.err &&
	test_grep "SIGKILL at step run:1:rr:0 (server-up)" srv.err &&
	# the earlier server waits on the peer for a client that never comes
	ls -a "$SCRATCH/agent/state-peer/results" >peer.ls &&
	test_grep "^\.work-j$id-.*-b1-rr-r0-srv$" peer.ls &&
	"$KLAB" run $id >srv2.out 2>&1 || { cat srv2.out; false; } &&
	test_grep "the server of an earlier attempt of j$id-.*-b1-rr-r0 still runs on .peer.; waiting for it to end" srv2.out &&
	test_grep -v "retrying once" srv2.out &&
	test "$(sql "SELECT state FROM jobs WHERE id = $id")" = done &&
	test "$(sql "SELECT count(*) FROM runs WHERE job_id = $id")" = 4 &&
	test "$(step_of $id run:1:rr:0 attempts)" = 2 &&
	test -z "$(ls "$SCRATCH/agent/state-peer/results" | grep -v "^\.")"
'

test_done
