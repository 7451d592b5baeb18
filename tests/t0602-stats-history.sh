#!/bin/bash
test_description='klab history: nightly series with change points (a +5% step found at its night, a spike ignored)'
. "$(dirname "$0")/lib.sh"

GEN=$SRCDIR/tests/data/stats/gen.py
k() { "$KLAB" --db "$SCRATCH/db.sqlite" "$@"; }
sq() { sqlite3 "$SCRATCH/db.sqlite" "$1"; }

test_expect_success 'set up 30 nights on two trees' '
	k db init &&
	python3 "$GEN" nightly | sqlite3 db.sqlite &&
	k db rebuild-summaries >/dev/null &&
	test "$(sq "SELECT COUNT(*) FROM jobs WHERE schedule = \"nightly\"")" = 60
'

test_expect_success 'the +5% step at night 20 is marked, once' '
	k history udp_rr_500 tps --tree net-next >out &&
	test_grep "tree net-next, machines dut1+peer1, 30 nights, 1 change point" out &&
	test "$(grep -c "<== change" out)" = 1 &&
	grep "<== change" out >cp &&
	test_grep "^   20    120 " cp &&
	test_grep "change +4\.[89]" cp
'

test_expect_success 'the change point is stored with its first job after the change' '
	test "$(sq "SELECT tree || \" \" || machines || \" \" || idx || \" \" || job_id || \" \" || (change_pct BETWEEN 4.5 AND 5.5) || \" \" || (p < 0.001) FROM changepoints")" = "net-next dut1+peer1 20 120 1 1"
'

test_expect_success 'running it again does not duplicate stored change points' '
	k history udp_rr_500 tps >/dev/null &&
	k history udp_rr_500 tps >/dev/null &&
	test "$(sq "SELECT COUNT(*) FROM changepoints")" = 1
'

test_expect_success 'a one-night +30% spike on the other tree is not a change point' '
	k history udp_rr_500 tps --tree stable >st &&
	test_grep "30 nights, 0 change points" st &&
	test_grep -v "<== change" st &&
	test "$(sq "SELECT COUNT(*) FROM changepoints WHERE tree = \"stable\"")" = 0
'

test_expect_success '--json: both series, points and change points; warm-up runs excluded' '
	k history udp_rr_500 tps --json >h.json &&
	python3 - <<-\EOF
	import json
	d = json.load(open("h.json"))
	assert len(d) == 2, len(d)
	s = {x["tree"]: x for x in d}
	nn = s["net-next"]
	assert [c["idx"] for c in nn["changepoints"]] == [20], nn["changepoints"]
	assert nn["changepoints"][0]["job_id"] == 120 and nn["changepoints"][0]["alert"]
	assert [p["idx"] for p in nn["points"] if p["changepoint"]] == [20]
	assert s["stable"]["changepoints"] == []
	# the seq-0 runs hold 5.0: with them the boot means would be 2/3 of the level
	v = nn["points"][0]["value"]
	assert 2.24e6 < v < 2.30e6, v
	assert nn["points"][0]["boots"] == 3
	assert s["stable"]["points"][12]["value"] > 1.9e6
	EOF
'

test_expect_success '--machines filter and a high threshold' '
	k history udp_rr_500 tps --machines dut2+peer2 --json >m.json &&
	python3 -c "import json; d = json.load(open(\"m.json\")); assert [x[\"tree\"] for x in d] == [\"stable\"], d" &&
	k history udp_rr_500 tps --tree net-next --threshold 10 >t10 &&
	test_grep "0 change points (T = 10%)" t10
'

test_expect_success 'jobs that are not nightly, or not done, are not in the series' '
	sq "UPDATE jobs SET state = \"failed\" WHERE id = 129" &&
	k history udp_rr_500 tps --tree net-next >f &&
	test_grep "29 nights" f
'

test_expect_success 'no data: a note, or [] in JSON; usage errors' '
	k history nosuch tps >none &&
	test_grep "no nightly results for nosuch tps" none &&
	k history nosuch tps --json >none.json &&
	test "$(tr -d " \n" <none.json)" = "[]" &&
	test_expect_code 2 k history udp_rr_500 2>err &&
	test_expect_code 2 k history udp_rr_500 tps --threshold -1 2>err &&
	test_grep "option .--threshold.: .-1. is not a percentage" err
'

test_expect_success 'series in tree order, each night once and in job order, however their jobs interleave' '
	# tree "aaa" on a third pair, its jobs numbered between the net-next (100..) and stable (1100..) ones,
	# each with boots on both sides (a night is its B side)
	for n in 0 1 2; do
		j=$((150 + n)) t=$((1764547200 + n * 86400))
		sq "INSERT INTO jobs (id, name, state, spec, tree, schedule, dut, peer, created) VALUES ($j, \"n\", \"done\", \"{}\", \"aaa\", \"nightly\", \"dut3\", \"peer3\", $t)" &&
		for side in A B; do
			if [ $side = B ]; then k1=1 v=$((2000 + n)); else k1=0 v=1000; fi &&
			b=$((j * 10 + k1))
			sq "INSERT INTO boots (id, job_id, seq, side, machine) VALUES ($b, $j, $((k1 + 1)), \"$side\", \"dut3\")" &&
			sq "INSERT INTO runs (id, uid, job_id, boot_id, side, workload, seq, started, created) VALUES ($b, \"a$b\", $j, $b, \"$side\", \"udp_rr_500\", 1, $t, $t)" &&
			sq "INSERT INTO metrics (run_id, name, value) VALUES ($b, \"tps\", $v)" || return 1
		done || return 1
	done &&
	k db rebuild-summaries >/dev/null &&
	k history udp_rr_500 tps --json >o.json &&
	python3 - <<-\EOF
	import json
	d = json.load(open("o.json"))
	assert [x["tree"] for x in d] == ["aaa", "net-next", "stable"], [x["tree"] for x in d]
	for s in d:
	    jobs = [p["job_id"] for p in s["points"]]
	    assert jobs == sorted(set(jobs)), (s["tree"], jobs)
	assert [p["value"] for p in d[0]["points"]] == [2000, 2001, 2002], d[0]["points"]
	EOF
'

test_done
