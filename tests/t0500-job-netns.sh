#!/bin/bash
test_description='a tuning A/B job end to end on the netns lab: real sshd, real agent, results stored'
. "$(dirname "$0")/lib.sh"
. "$SRCDIR/tests/data/jobs/lab.sh"

JOB_BOOTS=1 JOB_RUNS=2 JOB_WARMUP=1
job_lab_prereq
job_lab_up 28
cat >>"$KLAB_CONFIG" <<EOF
[workload "txp"]
	type = udp_tx
	target = peer
	payload_size = 64
	port = 9628
	duration = 1s
	warmup = 500ms
	monitors = cpu nic
[workload "txd"]
	type = udp_tx
	target = dummy
	payload_size = 64
	duration = 1s
	warmup = 500ms
	monitors = cpu
[job "txp"]
	profile_a = noxps
	profile_b = xps
	machines = dut peer
	workloads = txp
	boots = 1
	runs = 1
	warmup_runs = 0
[job "txd"]
	profile_a = noxps
	profile_b = xps
	machines = dut peer
	workloads = txd
	boots = 1
	runs = 1
	warmup_runs = 0
EOF

# the per-boot summaries of job 1, values rounded (the sums of a rebuild may add in another order)
summaries() {
	sql "SELECT bkey, side, workload, name, n, ROUND(CAST(value AS NUMERIC), 6) FROM boot_metrics WHERE job_id = 1 ORDER BY bkey, workload, name" &&
	sql "SELECT bkey, workload, cpu, ROUND(CAST(usr AS NUMERIC), 6), ROUND(CAST(idle AS NUMERIC), 6) FROM boot_cpus WHERE job_id = 1 ORDER BY bkey, workload, cpu" &&
	sql "SELECT bkey, workload, symbol, runs, ROUND(CAST(pct_sum AS NUMERIC), 6) FROM boot_profile WHERE job_id = 1 ORDER BY bkey, workload, symbol" &&
	sql "SELECT side, workload, name, n, ROUND(CAST(value AS NUMERIC), 6) FROM job_metrics WHERE job_id = 1 ORDER BY side, workload, name"
}

test_expect_success 'netns lab and config' '
	"$KLAB" config check
'

test_expect_success 'submit queues the job with its spec and sides' '
	"$KLAB" submit --job ab >out &&
	test_grep "submitted job 1 (ab)" out &&
	test "$(sql "SELECT state || \" \" || order_seed FROM jobs WHERE id = 1")" = "queued 7" &&
	test "$(sql "SELECT group_concat(side || \"=\" || profile, \",\") FROM job_sides WHERE job_id = 1")" = "A=noxps,B=xps" &&
	"$KLAB" --json jobs >jobs.json &&
	python3 -c "import json,sys; j=json.load(open(\"jobs.json\")); assert j[0][\"state\"]==\"queued\" and j[0][\"steps_total\"]==24, j"
'

test_expect_success 'klab run runs it to the end with progress lines' '
	KLAB_PROGRESS_S=1 "$KLAB" run 1 >run.out 2>run.err || { cat run.out run.err; false; } &&
	test_grep "^\[ *[0-9.]*s\] 1/24 intake" run.out &&
	# the step counter has an ETA once steps of the kind ran (run 0 of rr before run 2)
	grep -Eq "^\[ *[0-9.]*s\] [0-9]+/24 run:2:rr:2 \(job ETA [0-9hms]+\)$" run.out &&
	# a run step is a clock line: seconds of the workload'"'"'s expected time, with an ETA
	grep -Eq "^\[[0-9]+/24 run:[12]:rr:[0-9]\] [0-9]+/~[0-9]+ s [0-9]+% 00:0[0-9] ETA [0-9ms]+" run.out &&
	test_grep "run:2:rr:2" run.out &&
	test_grep "job 1 done in" run.out &&
	test "$(sql "SELECT state FROM jobs WHERE id = 1")" = done
'

test_expect_success 'every run is stored once, with metrics, on the right side' '
	test "$(sql "SELECT count(*) FROM runs WHERE job_id = 1")" = 6 &&
	test "$(sql "SELECT count(DISTINCT uid) FROM runs WHERE job_id = 1")" = 6 &&
	test "$(sql "SELECT count(*) FROM runs WHERE job_id = 1 AND status = \"ok\"")" = 6 &&
	order=$(sql "SELECT group_concat(side, \"\") FROM (SELECT side FROM boots WHERE job_id = 1 ORDER BY seq)") &&
	test "$(sql "SELECT group_concat(side, \"\") FROM (SELECT side FROM runs WHERE job_id = 1 ORDER BY id)")" = "$(echo $order | sed "s/./&&&/g")" &&
	test "$(sql "SELECT count(*) FROM metrics m JOIN runs r ON r.id = m.run_id WHERE r.job_id = 1 AND m.name = \"tps\" AND m.value > 0")" = 6 &&
	test "$(sql "SELECT group_concat(profile, \",\") FROM (SELECT DISTINCT profile FROM runs WHERE job_id = 1 ORDER BY profile)")" = "noxps,xps"
'

test_expect_success 'the per-boot summaries kept as each run was stored are those made again from all runs' '
	summaries >kept &&
	# 2 boots of 1 warm-up + 2 measured runs: tps is the mean of the 2
	test "$(sql "SELECT count(*) || \",\" || min(n) || \",\" || max(n) FROM boot_metrics WHERE job_id = 1 AND name = \"tps\"")" = "2,2,2" &&
	test "$(sql "SELECT count(*) FROM boot_cpus WHERE job_id = 1")" -gt 0 &&
	test "$(sql "SELECT group_concat(side || n, \",\") FROM job_metrics WHERE job_id = 1 AND name = \"tps\"")" = "A2,B2" &&
	"$KLAB" db rebuild-summaries >out &&
	test_grep "boot_metrics rows made again" out &&
	summaries >again &&
	test_cmp kept again
'

test_expect_success 'the boot order is the recorded ABBA order of seed 7' '
	sql "SELECT group_concat(side, \"\") FROM (SELECT side FROM boots WHERE job_id = 1 ORDER BY seq)" >order &&
	test_grep "^\(AB\|BA\)$" order &&
	grep -q "boot order $(cat order), seed 7" run.out
'

test_expect_success 'every step is recorded done or skipped, once' '
	test "$(sql "SELECT count(*) FROM steps WHERE job_id = 1")" = 24 &&
	test "$(sql "SELECT count(*) FROM steps WHERE job_id = 1 AND state NOT IN (\"done\", \"skipped\")")" = 0 &&
	test "$(sql "SELECT max(attempts) FROM steps WHERE job_id = 1")" = 1 &&
	test "$(sql "SELECT error FROM steps WHERE job_id = 1 AND key = \"boot:1:deploy\"")" = "boot = none: machine '"'"'dut'"'"' keeps its kernel"
'

test_expect_success 'results were acked on the agents; tuning restored; machines released' '
	test -z "$(ls "$SCRATCH/agent/state-dut/results" 2>/dev/null | grep -v "^\.")" &&
	test -z "$(ls "$SCRATCH/agent/state-peer/results" 2>/dev/null | grep -v "^\.")" &&
	test ! -e "$SCRATCH/agent/state-dut/prepare.json" &&
	test "$(sql "SELECT count(*) FROM leases")" = 0
'

test_expect_success 'the comparison of the two profiles is stored' '
	test "$(sql "SELECT count(*) FROM comparisons WHERE job_id = 1 AND workload = \"rr\" AND metric = \"tps\"")" = 1 &&
	test_grep "comparison of job 1: A = noxps, B = xps" run.out
'

test_expect_success 'klab jobs, job show, job log (text and --json)' '
	"$KLAB" jobs >jobs &&
	test_grep "^1 *ab *done *24/24" jobs &&
	"$KLAB" job show 1 >show &&
	test_grep "run:2:rr:1 *done" show &&
	test_grep "6 runs stored" show &&
	"$KLAB" --json job show ab >show.json &&
	python3 -c "import json; j=json.load(open(\"show.json\")); assert len(j[\"runs\"])==6 and j[\"state\"]==\"done\" and len(j[\"steps\"])==24, j[\"state\"]" &&
	"$KLAB" job log 1 >log &&
	test_grep "run:1:rr:0 done after" log &&
	test_grep "job 1 done" log &&
	"$KLAB" --json job log 1 >log.json &&
	python3 -c "import json; e=json.load(open(\"log.json\")); assert len(e)==48, len(e)"
'

test_expect_success 'running a finished job again does nothing' '
	"$KLAB" run 1 >again &&
	test_grep "job 1 is already done" again &&
	test "$(sql "SELECT count(*) FROM runs")" = 6
'

test_expect_success 'cancel: a queued job is cancelled at once; a finished one cannot be' '
	"$KLAB" submit --job ab >out &&
	"$KLAB" cancel 2 >out &&
	test_grep "job 2 cancelled" out &&
	test "$(sql "SELECT state FROM jobs WHERE id = 2")" = cancelled &&
	test_must_fail "$KLAB" cancel 1 2>err &&
	test_grep "job 1 is already done" err
'

test_expect_success 'cancel of a running job stops it at the next step and releases the machines' '
	"$KLAB" submit --job ab >out &&
	{ "$KLAB" run 3 >run3.out 2>&1 & } &&
	pid=$! &&
	test_wait_until 20 "step_started 3 run:1:rr:0" &&
	"$KLAB" cancel 3 &&
	test_wait_until 30 "! kill -0 $pid 2>/dev/null" &&
	{ wait $pid; rc=$?; } && test $rc = 1 &&
	test "$(sql "SELECT state FROM jobs WHERE id = 3")" = cancelled &&
	test "$(sql "SELECT count(*) FROM leases")" = 0 &&
	test "$(sql "SELECT count(*) FROM steps WHERE job_id = 3 AND key LIKE \"run:1:rr:%\"")" -le 2 &&
	test ! -e "$SCRATCH/agent/state-dut/prepare.json" &&
	test_grep "cancelled; machines released" run3.out
'

test_expect_success 'udp_tx to a sink on the peer: both sides measured, the sink result kept in the step' '
	"$KLAB" run txp >tx.out 2>&1 || { cat tx.out; false; } &&
	id=$(sql "SELECT max(id) FROM jobs") &&
	test "$(sql "SELECT count(*) FROM runs r JOIN metrics m ON m.run_id = r.id WHERE r.job_id = $id AND m.name = \"tx_pps\" AND m.value > 0 AND r.kind = \"measure\"")" = 2 &&
	# the nic monitor runs in the observation runs of each side (docs/observation.md): with it, and bare
	test "$(sql "SELECT group_concat(observes) FROM (SELECT observes FROM runs WHERE job_id = $id AND kind = \"observe\" AND side = \"A\" ORDER BY id)")" = nic,bare &&
	sql "SELECT detail FROM steps WHERE job_id = $id AND key = \"run:1:txp:0\"" >detail &&
	test_grep "\"role\":\"sink\"" detail
'

test_expect_success 'udp_tx to a dummy target: the job makes the target on the dut, no sink' '
	"$KLAB" run txd >txd.out 2>&1 || { cat txd.out; false; } &&
	id=$(sql "SELECT max(id) FROM jobs") &&
	test "$(sql "SELECT state FROM jobs WHERE id = $id")" = done &&
	test "$(sql "SELECT count(*) FROM runs r JOIN metrics m ON m.run_id = r.id WHERE r.job_id = $id AND m.name = \"tx_pps\" AND m.value > 0")" = 2 &&
	sql "SELECT detail FROM steps WHERE job_id = $id AND key = \"run:1:txd:0\"" >detail &&
	test_grep -v "\"server\"" detail &&
	idx=$(sed -n "s/^index=//p" "$SCRATCH/lab/netns.state") &&
	ip -n klab$idx-dut link show kdummy0 >/dev/null
'

test_expect_success 'bad submissions are refused with a reason' '
	test_must_fail "$KLAB" submit --job nosuch 2>err &&
	test_grep "no job .nosuch. in the config" err &&
	test_expect_code 2 "$KLAB" submit 2>err &&
	test_grep "required" err
'

test_done
