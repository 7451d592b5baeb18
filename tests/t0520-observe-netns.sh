#!/bin/bash
test_description='measurement runs apart from observation runs (issue 34) on the netns lab: probes and samplers only in the observation runs of the first boot of each side, verdicts from the measurement runs, each monitor'"'"'s cost on the page and in the mail'
. "$(dirname "$0")/lib.sh"
. "$SRCDIR/tests/data/jobs/lab.sh"

job_lab_prereq
job_lab_up 20
cat >"$SCRATCH/xmit.bt" <<'EOF'
tracepoint:net:net_dev_xmit { @xmit = count(); @len = hist(args->len); }
EOF
cat >>"$KLAB_CONFIG" <<EOF
[workload "rro"]
	type = udp_rr
	flows = 4
	duration = 1s
	warmup = 500ms
	monitors = cpu perf-stat perf-profile bpftrace
	bpftrace = $SCRATCH/xmit.bt
[job "obs"]
	profile_a = noxps
	profile_b = xps
	machines = dut peer
	workloads = rro
	boots = 2
	runs = 2
	warmup_runs = 1
	seed = 7
EOF

test_expect_success 'the job runs: 2 boots a side, the first of each with its observation runs' '
	"$KLAB" run obs >run.out 2>&1 || { cat run.out; false; } &&
	test "$(sql "SELECT state FROM jobs WHERE id = 1")" = done &&
	test "$(sql "SELECT count(*) FROM steps WHERE job_id = 1 AND key LIKE \"obs:%\" AND state = \"done\"")" = 8 &&
	sql "SELECT key FROM steps WHERE job_id = 1 AND key LIKE \"obs:%\" ORDER BY id" >obs-keys &&
	printf "obs:%s:rro:%s\n" 1 perf-stat 1 perf-profile 1 bpftrace 1 bare 2 perf-stat 2 perf-profile 2 bpftrace 2 bare >expect &&
	test_cmp expect obs-keys &&
	test "$(sql "SELECT count(*) FROM runs WHERE job_id = 1 AND kind = \"measure\"")" = 12 &&
	s1=$(sql "SELECT side FROM boots WHERE job_id = 1 AND seq = 1") && s2=$(sql "SELECT side FROM boots WHERE job_id = 1 AND seq = 2") &&
	test "$s1$s2" = AB -o "$s1$s2" = BA &&
	test "$(sql "SELECT group_concat(side || r.observes, \",\") FROM (SELECT side, observes FROM runs r WHERE job_id = 1 AND kind = \"observe\" ORDER BY id) r")" = \
	     "${s1}perf-stat,${s1}perf-profile,${s1}bpftrace,${s1}bare,${s2}perf-stat,${s2}perf-profile,${s2}bpftrace,${s2}bare"
'

test_expect_success 'no measurement run carried a probe or a sampler; each observation run carried only its own' '
	test "$(sql "SELECT count(*) FROM run_monitors m JOIN runs r ON r.id = m.run_id WHERE r.job_id = 1 AND r.kind = \"measure\" AND m.monitor != \"cpu\"")" = 0 &&
	test "$(sql "SELECT count(*) FROM run_monitors m JOIN runs r ON r.id = m.run_id WHERE r.job_id = 1 AND r.kind = \"measure\" AND m.monitor = \"cpu\"")" = 12 &&
	test "$(sql "SELECT count(*) FROM run_monitors m JOIN runs r ON r.id = m.run_id WHERE r.job_id = 1 AND r.observes = \"perf-stat\" AND m.monitor = \"perf-stat\"")" = 2 &&
	test "$(sql "SELECT count(*) FROM run_monitors m JOIN runs r ON r.id = m.run_id WHERE r.job_id = 1 AND r.observes = \"bpftrace\" AND m.monitor = \"bpftrace\" AND m.status = \"ok\"")" = 2 &&
	test "$(sql "SELECT count(*) FROM run_monitors m JOIN runs r ON r.id = m.run_id WHERE r.job_id = 1 AND r.observes = \"bpftrace\" AND m.monitor = \"perf-profile\"")" = 0 &&
	test "$(sql "SELECT count(*) FROM run_monitors m JOIN runs r ON r.id = m.run_id WHERE r.job_id = 1 AND r.observes = \"bare\"")" = 0 &&
	test "$(sql "SELECT count(*) FROM histograms h JOIN runs r ON r.id = h.run_id WHERE r.job_id = 1 AND h.name = \"@len\" AND r.kind = \"measure\"")" = 0 &&
	test "$(sql "SELECT count(DISTINCT h.run_id) FROM histograms h JOIN runs r ON r.id = h.run_id WHERE r.job_id = 1 AND h.name = \"@len\"")" = 2 &&
	test "$(sql "SELECT count(DISTINCT p.run_id) FROM profile_rows p JOIN runs r ON r.id = p.run_id WHERE r.job_id = 1 AND r.kind = \"measure\"")" = 0
'

test_expect_success 'the verdicts and the boot summaries are from the measurement runs alone' '
	test "$(sql "SELECT group_concat(DISTINCT n) FROM boot_metrics WHERE job_id = 1 AND name = \"tps\"")" = 2 &&
	test "$(sql "SELECT count(*) FROM boot_metrics WHERE job_id = 1 AND name = \"tps\"")" = 4 &&
	"$KLAB" compare 1 --json >cmp.json &&
	python3 - <<-\PY
	import json
	rows = [r for r in json.load(open("cmp.json"))["comparisons"] if r["metric"] == "tps"]
	assert len(rows) == 1 and rows[0]["n_a"] == 2 and rows[0]["n_b"] == 2, rows
	PY
'

test_expect_success 'the job page and the mail show what each monitor cost, per side' '
	"$KLAB" report 1 >rep.out 2>&1 || { cat rep.out; false; } &&
	page=$(ls "$SCRATCH"/reports/job-1*.html | head -n 1) &&
	test_grep "<h3>Monitor cost</h3>" "$page" &&
	test_grep "<td>bpftrace</td>" "$page" &&
	test_grep "<td>perf-profile</td>" "$page" &&
	test_grep "<td>perf-stat</td>" "$page" &&
	test_grep "<td>cpu, in every measurement run (against none)</td>" "$page" &&
	test_grep "come from observation runs" "$page" &&
	"$KLAB" report --format=mail 1 >mail.txt &&
	test_grep "^monitor cost (observation runs" mail.txt &&
	test_grep "^  rro: bpftrace: .* CPU us/op .* on A, .* on B" mail.txt
'

test_done
