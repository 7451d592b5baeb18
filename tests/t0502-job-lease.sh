#!/bin/bash
test_description='leases: two jobs for one machine pair run one after the other; broken and drained machines; a failing run'
. "$(dirname "$0")/lib.sh"
. "$SRCDIR/tests/data/jobs/lab.sh"

# 2 boots x 1 run, no warm-up: 2 runs per job
JOB_BOOTS=1 JOB_RUNS=1 JOB_WARMUP=0
job_lab_prereq
job_lab_up 30
cat >>"$KLAB_CONFIG" <<EOF
[workload "bad"]
	type = udp_rr
	flows = 0
	duration = 1s
	warmup = 0s
	port = 9531
[job "failing"]
	profile_a = noxps
	profile_b = xps
	machines = dut peer
	workloads = rr bad
	boots = 1
	runs = 1
	warmup_runs = 0
	seed = 1
EOF

step_time() {	# step_time JOB KEY started|finished: when the step began or ended
	sql "SELECT $3 FROM steps WHERE job_id = $1 AND key = '$2'"
}
runs_span() {	# runs_span JOB: first run start, last run end
	sql "SELECT min(started) || ' ' || max(started + duration_s) FROM runs WHERE job_id = $1"
}

test_expect_success 'without --wait a job whose machines are busy stays queued' '
	{ "$KLAB" submit --job ab >/dev/null && "$KLAB" submit --job ab >/dev/null || exit 1; } &&
	{ "$KLAB" run 1 >run1.out 2>&1 & } &&
	pid=$! &&
	test_wait_until 20 "step_in 1 lease done" &&
	test_expect_code 2 "$KLAB" run 2 >run2.out 2>&1 &&
	test_grep "job 2 stays queued: machines busy: machine .dut. is leased to job 1" run2.out &&
	test "$(sql "SELECT state FROM jobs WHERE id = 2")" = queued &&
	wait $pid &&
	test "$(sql "SELECT state FROM jobs WHERE id = 1")" = done
'

test_expect_success 'two jobs started at once on one pair: one waits, they do not overlap' '
	"$KLAB" submit --job ab >/dev/null &&
	{ "$KLAB" run --wait 2 >a.out 2>&1 & } &&
	a=$! &&
	{ "$KLAB" run --wait 3 >b.out 2>&1 & } &&
	b=$! &&
	wait $a && wait $b &&
	test "$(sql "SELECT count(*) FROM jobs WHERE id IN (2, 3) AND state = \"done\"")" = 2 &&
	test "$(sql "SELECT count(*) FROM runs WHERE job_id IN (2, 3)")" = 4 &&
	cat a.out b.out | grep -q "waiting for machines: machine .dut. is leased to job" &&
	# the second lease was taken after the first job began releasing the pair
	# (the release step ends after the lease row is gone, so its start is
	# the bound), and no run of one job overlaps a run of the other
	l2=$(step_time 2 lease finished) r2=$(step_time 2 release started) &&
	l3=$(step_time 3 lease finished) r3=$(step_time 3 release started) &&
	python3 -c "import sys; l2,r2,l3,r3=map(float,sys.argv[1:]); assert r2 <= l3 or r3 <= l2, (l2,r2,l3,r3)" $l2 $r2 $l3 $r3 &&
	python3 -c "import sys; a0,a1,b0,b1=map(float,sys.argv[1:]); assert a1 <= b0 or b1 <= a0, (a0,a1,b0,b1)" $(runs_span 2) $(runs_span 3) &&
	test "$(sql "SELECT count(*) FROM leases")" = 0
'

test_expect_success 'a broken machine fails the job with a readable reason' '
	sql "UPDATE machines SET state = \"broken\", state_since = strftime(\"%s\", \"now\"), state_reason = \"did not come back after kexec\" WHERE name = \"dut\"" &&
	"$KLAB" submit --job ab >/dev/null &&
	test_expect_code 1 "$KLAB" run --wait 4 >out 2>&1 &&
	test "$(sql "SELECT state FROM jobs WHERE id = 4")" = failed &&
	sql "SELECT error FROM jobs WHERE id = 4" >err &&
	test_grep "step lease failed: cannot lease machines: machine .dut. is broken since .*: did not come back after kexec" err &&
	"$KLAB" jobs >jobs && test_grep "^4 .*failed.*broken since" jobs &&
	test "$(sql "SELECT count(*) FROM leases")" = 0
'

test_expect_success 'a drained machine is not leased either' '
	sql "UPDATE machines SET state = \"drained\", state_reason = \"maintenance\" WHERE name = \"dut\"" &&
	"$KLAB" submit --job ab >/dev/null &&
	test_expect_code 1 "$KLAB" run 5 >out 2>&1 &&
	sql "SELECT error FROM jobs WHERE id = 5" >err &&
	test_grep "machine .dut. is drained since .*maintenance" err &&
	sql "UPDATE machines SET state = \"free\", state_reason = NULL WHERE name = \"dut\""
'

test_expect_success 'an expired lease of a dead job is reclaimed' '
	"$KLAB" submit --job ab >/dev/null &&
	sql "UPDATE jobs SET state = \"running\" WHERE id = 6" &&
	sql "INSERT INTO leases (machine, job_id, acquired, expires) VALUES (\"dut\", 6, 0, 1), (\"peer\", 6, 0, 1)" &&
	"$KLAB" submit --job ab >/dev/null &&
	"$KLAB" run 7 >out 2>err &&
	test_grep "reclaiming machine .dut. from job 6: its lease expired" err &&
	test "$(sql "SELECT state FROM jobs WHERE id = 7")" = done
'

test_expect_success 'a run that fails is retried once, then the job fails; stored runs remain' '
	"$KLAB" submit --job failing >/dev/null &&
	printf "#!/bin/sh\necho \"\$KLAB_JOB_ID \$KLAB_JOB_NAME \$KLAB_JOB_STATE \$KLAB_JOB_ERROR\" >>\"$SCRATCH/notified\"\n" >notify.sh &&
	chmod +x notify.sh &&
	test_expect_code 1 env KLAB_NOTIFY_CMD="$SCRATCH/notify.sh" "$KLAB" run 8 >out 2>err &&
	test_grep "^8 failing failed step run:1:bad:0 failed" notified &&
	test_grep "retrying once" err &&
	sql "SELECT error FROM jobs WHERE id = 8" >err8 &&
	test_grep "step run:1:bad:0 failed: run j8-.*-b1-bad-r0 failed twice: .*flows" err8 &&
	test "$(sql "SELECT count(*) FROM runs WHERE job_id = 8 AND workload = \"rr\"")" = 1 &&
	test "$(sql "SELECT count(*) FROM runs WHERE job_id = 8 AND workload = \"bad\"")" = 0 &&
	test "$(sql "SELECT state FROM steps WHERE job_id = 8 AND key = \"run:1:bad:0\"")" = failed &&
	test ! -e "$SCRATCH/agent/state-dut/prepare.json" &&
	test "$(sql "SELECT count(*) FROM leases")" = 0
'

test_done
