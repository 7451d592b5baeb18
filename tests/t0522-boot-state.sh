#!/bin/bash
test_description='a run step checks its machine is still in its boot state (boot id, kernel, tuning); else the boot is redone, nothing measured outside it stored'
. "$(dirname "$0")/lib.sh"
. "$SRCDIR/tests/data/jobs/lab.sh"

# 2 boots x (1 warm-up + 2 measured runs) = 6 runs
JOB_BOOTS=1 JOB_RUNS=2 JOB_WARMUP=1
job_lab_prereq
job_lab_up 22
index=$(sed -n 's/^index=//p' "$SCRATCH/lab/netns.state")
state=$SCRATCH/agent/state-dut/prepare.json

step() {	# step KEY COLUMN
	sql "SELECT $2 FROM steps WHERE job_id = 1 AND key = '$1'"
}

# the first knob prepare set, and a value other than the one it shows now
knob() {
	python3 -c 'import json,sys
f=[f for f in json.load(open(sys.argv[1]))["files"] if f.get("got") is not None][0]
print(f["path"], "1" if f["got"].strip("0,") == "" else "0")' "$state"
}

test_expect_success 'klab-agent prepare --check: the boot id, and no tuning on a fresh state folder' '
	"$KLAB_AGENT" --state "$SCRATCH/fresh" prepare --check >chk &&
	test_grep "\"boot_id\":\"$(cat /proc/sys/kernel/random/boot_id)\"" chk &&
	test_grep "\"tuning\":\"none\"" chk
'

test_expect_success 'killed after boot 1 prepared and its first run stored' '
	"$KLAB" submit --job ab >/dev/null &&
	test_expect_code 137 env KLAB_TEST_KILL_AT=run:1:rr:1 "$KLAB" run 1 >out 2>err &&
	test "$(step boot:1:prepare state)" = done &&
	test "$(sql "SELECT count(*) FROM runs")" = 1 &&
	test "$(sql "SELECT machine_boot_id FROM boots WHERE job_id = 1 AND seq = 1")" = \
	     "$(cat /proc/sys/kernel/random/boot_id)" &&
	test -s "$state"
'

test_expect_success 'the tuning is changed behind the job: prepare --check says so' '
	set -- $(knob) &&
	ip netns exec "klab$index-dut" sh -c "echo $2 > $1" &&
	test_expect_code 1 ip netns exec "klab$index-dut" "$KLAB_AGENT" \
		--state "$SCRATCH/agent/state-dut" prepare --check >chk 2>chkerr &&
	test_grep "\"tuning\":\"lost\"" chk &&
	test_grep "the prepared tuning is lost: .$1. is" chkerr
'

test_expect_success 'resumed: the boot is redone (prepare again), no run measured without its tuning' '
	"$KLAB" run 1 >out 2>err || { cat out err; false; } &&
	test_grep "run j1-.*-b1-rr-r1 not stored: the tuning of boot 1 is gone from machine .dut.: .* is .*, not .* as prepared; boot 1 is redone" out &&
	test "$(step boot:1:prepare state)/$(step boot:1:prepare attempts)" = done/2 &&
	test "$(step run:1:rr:1 state)/$(step run:1:rr:1 attempts)" = done/3 &&
	test_must_fail grep "Network is unreachable" out err &&
	test "$(sql "SELECT state FROM jobs WHERE id = 1")" = done &&
	test "$(sql "SELECT count(*) FROM runs WHERE job_id = 1")" = 6 &&
	test "$(sql "SELECT count(DISTINCT uid) FROM runs WHERE job_id = 1")" = 6 &&
	test "$(sql "SELECT count(*) FROM runs WHERE machine_boot_id = \"$(cat /proc/sys/kernel/random/boot_id)\"")" = 6 &&
	test ! -e "$state"
'

# No reboot can happen here: a boot id recorded for boot 2 that the machine
# does not have stands in for one (the machine "rebooted" since verify).
test_expect_success 'a machine whose boot id changed since its boot (stand-in): the boot is redone' '
	"$KLAB" submit --job ab >/dev/null &&
	test_expect_code 137 env KLAB_TEST_KILL_AT=run:2:rr:0 "$KLAB" run 2 >out 2>err &&
	sqlite3 "$SCRATCH/klab.db" "UPDATE boots SET machine_boot_id = \"00000000-stand-in-for-a-reboot\" WHERE job_id = 2 AND seq = 2" &&
	"$KLAB" run 2 >out 2>err || { cat out err; false; } &&
	test_grep "run j2-.*-b2-rr-r0 not stored: machine .dut. rebooted since boot 2" out &&
	test "$(sql "SELECT attempts FROM steps WHERE job_id = 2 AND key = \"boot:2:verify\"")" = 2 &&
	test "$(sql "SELECT machine_boot_id FROM boots WHERE job_id = 2 AND seq = 2")" = "$(cat /proc/sys/kernel/random/boot_id)" &&
	test "$(sql "SELECT count(DISTINCT uid) || \"/\" || count(*) FROM runs WHERE job_id = 2")" = 6/6
'

test_done
