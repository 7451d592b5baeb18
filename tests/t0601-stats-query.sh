#!/bin/bash
test_description='klab query: filters, text, --json and --csv on a real sqlite database'
. "$(dirname "$0")/lib.sh"

GEN=$SRCDIR/tests/data/stats/gen.py
k() { "$KLAB" --db "$SCRATCH/db.sqlite" "$@"; }

test_expect_success 'set up job 1 and an imported run' '
	k db init &&
	python3 "$GEN" job | sqlite3 db.sqlite &&
	k db rebuild-summaries >/dev/null
'

test_expect_success 'text: one row per run and metric, with a header' '
	k query --job 1 --workload udp_rr_500 --metric tps >out &&
	test_grep "^ *run *job side kernel" out &&
	test "$(wc -l <out)" = 37 &&
	test_grep "6.1.0-klab-patched" out &&
	test_grep "2025-12-02 00:01:00" out
'

test_expect_success '--json: an array of objects with every field' '
	k query --job 1 --workload udp_rr_500 --metric tps --json >q.json &&
	python3 - <<-\EOF
	import json
	d = json.load(open("q.json"))
	assert len(d) == 36, len(d)
	r = d[0]
	assert set(r) == {"run", "job", "side", "kernel", "machine", "workload", "boot", "seq", "time", "metric", "value", "unit"}, r
	assert r["run"] == 1 and r["job"] == 1 and r["side"] == "A" and r["seq"] == 0 and r["value"] == 1.0, r
	assert r["kernel"] == "6.1.0-klab-base" and r["unit"] == "1/s" and r["time"] == "2025-12-02T00:01:00Z", r
	assert sum(1 for r in d if r["side"] == "B") == 18
	EOF
'

test_expect_success 'global --json works the same' '
	"$KLAB" --json --db db.sqlite query --job 1 --workload udp_rr_500 --metric tps >g.json &&
	test_cmp q.json g.json
'

test_expect_success '--csv: a header and quoted fields, parsed back by python csv' '
	k query --job 1 --metric "latency_*" --csv >q.csv &&
	test "$(head -n 1 q.csv)" = "run,job,side,kernel,machine,workload,boot,seq,time,metric,value,unit" &&
	python3 - <<-\EOF
	import csv
	rows = list(csv.DictReader(open("q.csv")))
	assert len(rows) == 36, len(rows)
	assert all(r["metric"] == "latency_p99_us" for r in rows)
	assert float(rows[1]["value"]) > 100
	EOF
'

test_expect_success 'kernel, machine and tree filters' '
	k query --kernel 6.1.0-klab-patched --metric tps --json >kp.json &&
	python3 -c "import json; d = json.load(open(\"kp.json\")); assert len(d) == 18 and {r[\"side\"] for r in d} == {\"B\"}, len(d)" &&
	k query --kernel patched --metric tps --csv >kl.csv &&
	test "$(wc -l <kl.csv)" = 19 &&
	k query --kernel imported-k --csv >ki.csv &&
	test "$(wc -l <ki.csv)" = 2 &&
	test_grep "^9000,,,imported-k,dut9,udp_rr_500,,1," ki.csv &&
	k query --machine dut9 --csv >m.csv &&
	test_cmp ki.csv m.csv &&
	k query --tree net-next --metric tps --csv >t.csv &&
	test "$(wc -l <t.csv)" = 37
'

test_expect_success '--since and --until (dates, seconds, ages)' '
	k query --since 2025-12-03 --csv >s.csv &&
	test "$(wc -l <s.csv)" = 2 &&
	k query --since "2025-12-03 00:00:00" --csv >s2.csv &&
	test_cmp s.csv s2.csv &&
	k query --since 1764720000 --csv >s3.csv &&
	test_cmp s.csv s3.csv &&
	k query --until 2025-12-03 --metric tps --csv >u.csv &&
	test "$(wc -l <u.csv)" = 37 &&
	k query --since 30d --csv >recent.csv &&
	test "$(wc -l <recent.csv)" = 1
'

test_expect_success '--limit and --side' '
	k query --job 1 --limit 5 --csv >l.csv &&
	test "$(wc -l <l.csv)" = 6 &&
	k query --job 1 --side B --workload udp_tx_64 --metric tx_pps --csv >b.csv &&
	test "$(wc -l <b.csv)" = 19
'

test_expect_success 'no match: a note in text, [] in JSON' '
	k query --workload nosuch >none &&
	test_grep "no results match" none &&
	k query --workload nosuch --json >none.json &&
	test "$(tr -d " \n" <none.json)" = "[]"
'

test_expect_success 'bad options are usage errors naming the option' '
	test_expect_code 2 k query --since yesterday 2>err &&
	test_grep "option .--since.: .yesterday. is not a time" err &&
	test_expect_code 2 k query --json --csv 2>err &&
	test_expect_code 2 k query --job x 2>err &&
	test_grep "option .--job.: .x. is not a number" err &&
	test_expect_code 2 k query --side C 2>err &&
	test_expect_code 2 k query --metric 2>err &&
	test_grep "needs a value" err &&
	test_expect_code 2 k query extra 2>err
'

test_expect_success 'values with quotes and commas survive --csv and --json' '
	sqlite3 db.sqlite "INSERT INTO runs (id, uid, workload, machine, created) VALUES (9001, \"q\", \"w,\"\"x\"\"\", \"m\", 1)" &&
	sqlite3 db.sqlite "INSERT INTO metrics (run_id, name, value) VALUES (9001, \"n\", 2.5)" &&
	k query --machine m --csv >qq.csv &&
	python3 -c "import csv; r = list(csv.DictReader(open(\"qq.csv\"))); assert r[0][\"workload\"] == \"w,\\\"x\\\"\" and r[0][\"value\"] == \"2.5\", r" &&
	k query --machine m --json >qq.json &&
	python3 -c "import json; r = json.load(open(\"qq.json\")); assert r[0][\"workload\"] == \"w,\\\"x\\\"\" and r[0][\"unit\"] is None, r"
'

test_expect_success 'migration 0004 made the query indexes, and a kernel query uses them' '
	sqlite3 db.sqlite "SELECT name FROM sqlite_master WHERE type = \"index\" ORDER BY name" >idx &&
	for i in profile_rows_run runs_kernel runs_kernel_label runs_time job_sides_label kernels_release \
		kernels_variant comparisons_job changepoints_series jobs_schedule; do
		test_grep "^$i\$" idx || return 1
	done &&
	# the plan a large history gets: klab refreshed the statistics of this small one (rebuild-summaries),
	# and with them sqlite rightly scans a table of a few job sides; a copy without them plans by its rules
	cp db.sqlite plan.sqlite &&
	test "$(sqlite3 plan.sqlite "SELECT count(*) > 0 FROM sqlite_stat1 WHERE tbl = \"job_sides\"")" = 1 &&
	sqlite3 plan.sqlite "DROP TABLE sqlite_stat1" &&
	# the branches of query.c: the runs of the kernel ids in id order (no sort), the runs without
	# a kernel id of the sides a label names (migration 0018)
	sqlite3 plan.sqlite "EXPLAIN QUERY PLAN SELECT r.id, m.name FROM runs r CROSS JOIN metrics m WHERE r.status = \"ok\" AND m.name = \"tps\" AND m.run_id = r.id AND r.kernel_id IN (8) ORDER BY 1, 2" >plan &&
	test_grep "SEARCH r USING INDEX runs_kernel_run (kernel_id=?)" plan &&
	test_grep -v "TEMP B-TREE" plan &&
	sqlite3 plan.sqlite "EXPLAIN QUERY PLAN SELECT r.id FROM job_sides js CROSS JOIN runs r WHERE r.job_id = js.job_id AND r.side = js.side AND js.label = \"patched\" AND r.kernel_id IS NULL" >plan &&
	test_grep "job_sides_label" plan &&
	test_grep "runs_job_nokernel" plan
'

test_expect_success 'a kernel query: a run with a kernel id is that kernel'"'"'s, one without is its label'"'"'s' '
	cp db.sqlite kq.sqlite &&
	# a run of a side labelled "patched" that records another kernel (6.1.0-klab-base) belongs to that one;
	# a run without a kernel id in that side is the label'"'"'s
	sqlite3 kq.sqlite "INSERT INTO runs (id, uid, job_id, side, kernel_id, workload, machine, status, seq, created)
		SELECT 9100, \"kq1\", job_id, side, (SELECT id FROM kernels WHERE release = \"6.1.0-klab-base\"), \"udp_rr_500\", \"dut\", \"ok\", 0, 1764633600
		FROM job_sides WHERE label = \"patched\" LIMIT 1" &&
	sqlite3 kq.sqlite "INSERT INTO runs (id, uid, job_id, side, kernel_id, workload, machine, status, seq, created)
		SELECT 9101, \"kq2\", job_id, side, NULL, \"udp_rr_500\", \"dut\", \"ok\", 0, 1764633600
		FROM job_sides WHERE label = \"patched\" LIMIT 1" &&
	sqlite3 kq.sqlite "INSERT INTO metrics (run_id, name, value) VALUES (9100, \"kqm\", 1), (9101, \"kqm\", 2)" &&
	"$KLAB" --db kq.sqlite query --kernel patched --metric kqm --csv >kq.csv &&
	test "$(wc -l <kq.csv)" = 2 &&
	test_grep "^9101," kq.csv &&
	"$KLAB" --db kq.sqlite query --kernel 6.1.0-klab-base --metric kqm --csv >kb.csv &&
	test "$(wc -l <kb.csv)" = 2 &&
	test_grep "^9100," kb.csv
'

test_done
