#!/bin/bash
test_description='klab calibrate on the netns lab: an A/A job run and learnt, a one-boot job on the same instrument judged with its noise; boots = 1..2 decided at one boot a side only when calibrated'
. "$(dirname "$0")/lib.sh"
. "$SRCDIR/tests/data/jobs/lab.sh"

job_lab_prereq
job_lab_up 63
# A paced sender to a dummy target: the same profile on both sides is an A/A job.
# Its tx_pps repeats exactly (boot sd 0 ppm in the run of 2026-12-07): the
# comparison floors it at 1 ppm (docs/statistics.md).
cat >>"$KLAB_CONFIG" <<EOF
[workload "paced"]
	type = udp_tx
	target = dummy
	payload_size = 64
	rate_pps = 20000
	duration = 1s
	warmup = 300ms
	threshold = 5
[job "aa"]
	profile_a = noxps
	profile_b = noxps
	machines = dut peer
	workloads = paced
	boots = 3
	runs = 2
	warmup_runs = 1
	seed = 5
[job "adapt1"]
	profile_a = noxps
	profile_b = noxps
	machines = dut peer
	workloads = paced
	boots = 1..2
	runs = 2
	warmup_runs = 1
	seed = 5
EOF

test_expect_success 'klab calibrate run refuses a job whose sides differ, before it runs anything' '
	test_must_fail "$KLAB" calibrate run ab 2>err &&
	test_grep "job .ab. is not an A/A job: its two tuning profiles differ (give --ref REF" err &&
	test "$(sql "SELECT count(*) FROM jobs")" = 0
'

test_expect_success 'klab calibrate run aa: an A/A job of 3 boots a side, learnt when done' '
	"$KLAB" calibrate run --quiet aa >out &&
	test "$(sql "SELECT state FROM jobs WHERE id = 1")" = done &&
	test "$(sql "SELECT count(*) FROM boots WHERE job_id = 1 AND sysinfo IS NOT NULL")" = 6 &&
	grep "^dut real paced.tx_pps: " out >row &&
	test_grep "(4 df; run sd .* ppm, 2 runs a boot), 6 boots (6 A/A), jobs 1" row &&
	test_grep "^    instrument dut;real;.* x[0-9]" out &&
	"$KLAB" calibrate learn 1 >again &&
	test_grep "paced.tx_pps: .*; nothing new" again &&
	"$KLAB" --json calibrate list >l.json &&
	python3 -c "
import json
l = [c for c in json.load(open(\"l.json\")) if c[\"metric\"] == \"tx_pps\"]
assert len(l) == 1 and l[0][\"stale\"] is None and l[0][\"aa_boots\"] == 6, l
"
'

test_expect_success 'a one-boot job on the same instrument is judged with the calibration' '
	"$KLAB" submit --job aa --boots 1 >out &&
	test_grep "submitted job 2 (aa)" out &&
	"$KLAB" run --quiet 2 &&
	"$KLAB" compare 2 >cmp &&
	grep " tx_pps" cmp >row &&
	test_grep "(noise from 6 A/A boots, 20[0-9-]* (sd .* ppm, 4 df))" row &&
	test_must_fail grep "INCONCLUSIVE" row &&
	"$KLAB" compare 2 --no-calibration >cmp &&
	grep " tx_pps" cmp >row &&
	test_grep "INCONCLUSIVE" row
'

# boots = 1..2 (docs/jobs.md): a look after boots 1 and 2 (one of each side)
# decides only when every headline was judged with a calibration.
test_expect_success 'boots = 1..2 on the calibrated instrument: decided at one boot a side, boots 3-4 skipped' '
	"$KLAB" submit --job adapt1 >out &&
	test_grep "submitted job 3 (adapt1)" out &&
	"$KLAB" run 3 >run.out 2>run.err || { cat run.out run.err; false; } &&
	test_grep "look 1/2 (1 boots per side, alpha 0.025): paced tx_pps EQUIVALENT" run.out &&
	test_grep "every headline verdict is decided after 1 boots per side" run.out &&
	test "$(sql "SELECT look || \" \" || boots || \" \" || decided || \" \" || n_a || \" \" || n_b FROM looks WHERE job_id = 3")" = "1 1 1 1 1" &&
	test "$(sql "SELECT state FROM steps WHERE job_id = 3 AND key = \"boot:3:deploy\"")" = skipped &&
	test "$(sql "SELECT count(*) FROM boots WHERE job_id = 3")" = 2
'

test_expect_success 'without a calibration the look at one boot a side does not decide: the job goes on to 2 a side' '
	"$KLAB" calibrate forget --all >/dev/null &&
	"$KLAB" submit --job adapt1 >out &&
	test_grep "submitted job 4 (adapt1)" out &&
	"$KLAB" run 4 >run.out 2>run.err || { cat run.out run.err; false; } &&
	test_grep "look 1/2: one boot a side decides only on a calibrated instrument, and paced tx_pps has no calibration here" run.out &&
	test_grep "look 1/2: not every headline verdict is decided; adding boots" run.out &&
	test "$(sql "SELECT decided FROM looks WHERE job_id = 4 AND look = 1")" = 0 &&
	test "$(sql "SELECT state FROM steps WHERE job_id = 4 AND key = \"look:2\"")" = done &&
	test "$(sql "SELECT count(*) FROM boots WHERE job_id = 4")" = 4
'

test_done
