#!/bin/bash
test_description='adaptive boots (boots = 2..4) on the netns lab: a look after each ABBA round stops the job once every headline verdict is decided; killed and resumed over a look'
# run.sh: exclusive (the first look must call a paced tx_pps EQUIVALENT within 5% after 2 boots per side: a measurement that tests beside it turn INCONCLUSIVE, seen at -j4)
. "$(dirname "$0")/lib.sh"
. "$SRCDIR/tests/data/jobs/lab.sh"

job_lab_prereq
job_lab_up 04
# A paced sender to a dummy target (no monitors, so tx_pps is the one headline
# metric): the same rate on both sides of a tuning A/B, so the first look
# (2 boots per side) can already call it EQUIVALENT within the 5% threshold.
cat >>"$KLAB_CONFIG" <<EOF
[workload "paced"]
	type = udp_tx
	target = dummy
	payload_size = 64
	rate_pps = 20000
	duration = 1s
	warmup = 300ms
	threshold = 5
[job "adapt"]
	profile_a = noxps
	profile_b = xps
	machines = dut peer
	workloads = paced
	boots = 2..4
	runs = 3
	warmup_runs = 1
	seed = 11
EOF

step() {	# step JOB KEY COLUMN
	sql "SELECT $3 FROM steps WHERE job_id = $1 AND key = '$2'"
}

test_expect_success 'boots = 2..4 is a range in the spec; a bad range names file, line and field' '
	"$KLAB" config check &&
	"$KLAB" config show >show &&
	test_grep "boots = 2\.\.4" show &&
	printf "[job \"x\"]\n\tworkloads = w\n\tboots = 5..2\n" >bad.conf &&
	test_must_fail "$KLAB" --config bad.conf config check 2>err &&
	test_grep "bad.conf:3: .*boots.* MIN\.\.MAX .*not .5\.\.2." err
'

test_expect_success 'submit: the plan has a look after 2 and after 4 boots per side' '
	"$KLAB" submit --job adapt >out &&
	test_grep "submitted job 1 (adapt)" out &&
	test "$(sql "SELECT json_extract(spec, \"$.boots_min\") || \"..\" || json_extract(spec, \"$.boots\") FROM jobs WHERE id = 1")" = "2..4"
'

test_expect_success 'run: decided at the first look, boots 5..8 are skipped' '
	"$KLAB" run 1 >run.out 2>run.err || { cat run.out run.err; false; } &&
	test "$(sql "SELECT state FROM jobs WHERE id = 1")" = done &&
	test_grep "look 1/2 (2 boots per side, alpha 0.025): paced tx_pps EQUIVALENT" run.out &&
	test_grep "every headline verdict is decided after 2 boots per side" run.out &&
	test "$(step 1 look:2 state)" = done &&
	test "$(sql "SELECT look || \" \" || looks || \" \" || boots || \" \" || alpha || \" \" || decided || \" \" || verdict || \" \" || n_a || \" \" || n_b FROM looks WHERE job_id = 1")" = "1 2 2 0.025 1 EQUIVALENT 2 2" &&
	test "$(sql "SELECT count(*) FROM steps WHERE job_id = 1 AND key GLOB \"*:[5-8]:*\" AND state = \"skipped\"")" = \
	     "$(sql "SELECT count(*) FROM steps WHERE job_id = 1 AND key GLOB \"*:[5-8]:*\"")" &&
	test "$(sql "SELECT count(*) FROM steps WHERE job_id = 1 AND key GLOB \"*:[5-8]:*\"")" -gt 0 &&
	test "$(step 1 look:4 state)" = skipped &&
	step 1 boot:5:deploy error >why && test_grep "not needed: every headline verdict was decided after 2 boots per side" why &&
	test "$(sql "SELECT count(*) FROM runs WHERE job_id = 1")" = 16 &&
	test "$(sql "SELECT count(*) FROM boots WHERE job_id = 1")" = 4 &&
	test "$(sql "SELECT verdict FROM comparisons WHERE job_id = 1 AND metric = \"tx_pps\"")" = EQUIVALENT
'

test_expect_success 'klab compare JOB decides at the job.s look level too; the job page shows the looks' '
	"$KLAB" compare 1 >cmp &&
	grep " tx_pps" cmp >tx && test_grep "EQUIVALENT" tx &&
	"$KLAB" report 1 >/dev/null &&
	page="$SCRATCH/reports/job-1.html" &&
	test_grep "<h3>Looks</h3>" "$page" &&
	test_grep "alpha = 0.05 / 2 per look" "$page" &&
	test_grep "<td class=\"num\">1/2</td><td class=\"num\">2</td><td class=\"num\">0.025</td><td>paced</td><td><code>tx_pps</code></td><td>EQUIVALENT</td>" "$page" &&
	test_grep "yes: no more boots" "$page"
'

test_expect_success 'killed after the deciding look was stored: resumed, the look runs again, the same boots are skipped' '
	"$KLAB" submit --job adapt >/dev/null &&
	test_expect_code 137 env "KLAB_TEST_KILL_AT=look:2@after-store" "$KLAB" run 2 >k.out 2>k.err &&
	test_grep "SIGKILL at step look:2" k.err &&
	test "$(step 2 look:2 state)" = running &&
	test "$(sql "SELECT decided FROM looks WHERE job_id = 2 AND look = 1")" = 1 &&
	test "$(sql "SELECT count(*) FROM runs WHERE job_id = 2")" = 16 &&
	"$KLAB" run 2 >r.out 2>r.err || { cat r.out r.err; false; } &&
	test_grep "look:2 (resumed)" r.out &&
	test "$(sql "SELECT state FROM jobs WHERE id = 2")" = done &&
	test "$(step 2 look:2 state)/$(step 2 look:2 attempts)" = done/2 &&
	test "$(sql "SELECT count(*) FROM looks WHERE job_id = 2")" = 1 &&
	test "$(step 2 boot:5:deploy state)" = skipped &&
	test "$(sql "SELECT count(*) FROM runs WHERE job_id = 2")" = 16 &&
	test "$(sql "SELECT count(*) FROM leases")" = 0
'

test_expect_success 'killed at the start of a look: nothing of it stored, resumed to the same end' '
	"$KLAB" submit --job adapt >/dev/null &&
	test_expect_code 137 env "KLAB_TEST_KILL_AT=look:2" "$KLAB" run 3 >k3.out 2>k3.err &&
	test "$(sql "SELECT count(*) FROM looks WHERE job_id = 3")" = 0 &&
	"$KLAB" run 3 >r3.out 2>r3.err || { cat r3.out r3.err; false; } &&
	test "$(sql "SELECT decided || \" \" || verdict FROM looks WHERE job_id = 3")" = "1 EQUIVALENT" &&
	test "$(sql "SELECT count(*) FROM runs WHERE job_id = 3")" = 16
'

test_done
