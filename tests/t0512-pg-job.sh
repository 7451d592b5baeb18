#!/bin/bash
test_description='a job on PostgreSQL: a tuning A/B job on the netns lab stored in a private server; query, compare, history and report read it back; a bad URL and a wrong password fail clearly; the server restarting mid-job loses nothing'
. "$(dirname "$0")/lib.sh"
. "$SRCDIR/tests/data/jobs/lab.sh"

job_lab_prereq
test_have_prereq POSTGRES || test_skip_all 'needs PostgreSQL 15 (make deps installs it)'
test_pg_start >pg-start.log 2>&1 || { sed 's/^/# /' pg-start.log "$SCRATCH"/pg/log; echo "Bail out! the PostgreSQL server did not start"; exit 1; }
JOB_BOOTS=1 JOB_RUNS=2 JOB_WARMUP=1
job_lab_up 48
URL=$(test_pg_db klab) || { echo "Bail out! cannot make the database"; exit 1; }
sed -i "s|^\tdb = .*|\tdb = $URL|" "$KLAB_CONFIG"
export KLAB_DB=$URL
# sql "SELECT ...": one query on the test's database, rows as a|b
sql() { test_pg_sql klab "$1"; }

test_expect_success 'the config names the PostgreSQL database; config check passes' '
	"$KLAB" config check &&
	"$KLAB" config show >show &&
	grep -F "db = postgresql://klab:" show
'

test_expect_success 'the job runs to the end on PostgreSQL' '
	"$KLAB" submit --job ab >out &&
	test_grep "submitted job 1 (ab)" out &&
	"$KLAB" run 1 >run.out 2>run.err || { cat run.out run.err; false; }
	test "$(sql "SELECT state FROM jobs WHERE id = 1")" = done &&
	test "$(sql "SELECT count(*) FROM steps WHERE job_id = 1 AND (attempts != 1 OR state NOT IN ('"'done'"', '"'skipped'"'))")" = 0
'

test_expect_success 'every run is stored once, with its metrics, samples and lease history' '
	# 2 boots x (1 warm-up + 2 runs)
	test "$(sql "SELECT count(*) FROM runs WHERE job_id = 1 AND status = '"'ok'"'")" = 6 &&
	test "$(sql "SELECT count(DISTINCT uid) FROM runs WHERE job_id = 1")" = 6 &&
	test "$(sql "SELECT count(*) FROM metrics m JOIN runs r ON r.id = m.run_id WHERE r.job_id = 1 AND m.name = '"'tps'"' AND m.value > 0")" = 6 &&
	test "$(sql "SELECT count(*) FROM lease_history WHERE job_id = 1 AND released IS NOT NULL AND released >= acquired")" = 2 &&
	test "$(sql "SELECT count(*) FROM leases")" = 0 &&
	test "$(sql "SELECT count(*) FROM comparisons WHERE job_id = 1")" -gt 0
'

test_expect_success 'the per-boot summaries kept as each run was stored are those made again from all runs' '
	summaries() {
		sql "SELECT bkey, side, workload, name, n, ROUND(CAST(value AS NUMERIC), 6) FROM boot_metrics WHERE job_id = 1 ORDER BY bkey, workload, name" &&
		sql "SELECT bkey, workload, cpu, ROUND(CAST(usr AS NUMERIC), 6) FROM boot_cpus WHERE job_id = 1 ORDER BY bkey, workload, cpu" &&
		sql "SELECT side, workload, name, n, ROUND(CAST(value AS NUMERIC), 6) FROM job_metrics WHERE job_id = 1 ORDER BY side, workload, name"
	} &&
	summaries >kept &&
	test "$(sql "SELECT count(*) FROM boot_metrics WHERE job_id = 1 AND name = '"'tps'"' AND n = 2")" = 2 &&
	"$KLAB" db rebuild-summaries >/dev/null &&
	summaries >again &&
	test_cmp kept again
'

test_expect_success 'klab query gives the stored values of the job' '
	"$KLAB" --json query --job 1 --metric tps >q.json &&
	sql "SELECT r.side, m.value FROM runs r JOIN metrics m ON m.run_id = r.id WHERE r.job_id = 1 AND m.name = '"'tps'"' ORDER BY m.value" >q.want &&
	python3 - <<-\EOF
	import json
	rows = json.load(open("q.json"))
	want = [l.split("|") for l in open("q.want").read().split()]
	got = sorted((r["side"], float(r["value"])) for r in rows)
	assert len(got) == 6 == len(want), (got, want)
	assert sorted(got, key=lambda x: x[1]) == [(s, float(v)) for s, v in want], (got, want)
	EOF
	"$KLAB" --json query --job 1 --metric "t*s" >glob.json &&
	python3 -c "import json; r = json.load(open(\"glob.json\")); assert r and {x[\"metric\"] for x in r} >= {\"tps\"}, r"
'

test_expect_success 'klab compare: the means are those of the stored runs after the warm-up' '
	"$KLAB" --json compare 1 >c.json &&
	a=$(sql "SELECT avg(m.value) FROM runs r JOIN metrics m ON m.run_id = r.id WHERE r.job_id = 1 AND r.side = '"'A'"' AND r.seq >= 1 AND m.name = '"'tps'"'") &&
	b=$(sql "SELECT avg(m.value) FROM runs r JOIN metrics m ON m.run_id = r.id WHERE r.job_id = 1 AND r.side = '"'B'"' AND r.seq >= 1 AND m.name = '"'tps'"'") &&
	python3 - "$a" "$b" <<-\EOF
	import json, sys
	a, b = float(sys.argv[1]), float(sys.argv[2])
	c = json.load(open("c.json"))
	rows = [r for r in c["comparisons"] if r["metric"] == "tps"]
	assert len(rows) == 1, rows
	r = rows[0]
	assert r["n_a"] == 2 and r["n_b"] == 2, r
	assert abs(r["mean_a"] - a) <= 1e-9 * a and abs(r["mean_b"] - b) <= 1e-9 * b, (r, a, b)
	assert r["verdict"] in ("CHANGED", "EQUIVALENT", "INCONCLUSIVE", "DESCRIPTIVE"), r
	EOF
	"$KLAB" compare 1 --stored >stored.out &&
	test_grep "tps" stored.out
'

test_expect_success 'klab history: the job as one night of a schedule' '
	sql "UPDATE jobs SET schedule = '"'nightly'"' WHERE id = 1" &&
	"$KLAB" --json history rr tps >h.json &&
	mean=$(sql "SELECT avg(v) FROM (SELECT avg(m.value) AS v FROM runs r JOIN metrics m ON m.run_id = r.id WHERE r.job_id = 1 AND r.side = '"'B'"' AND r.seq >= 1 AND m.name = '"'tps'"' GROUP BY r.boot_id) x") &&
	python3 - "$mean" <<-\EOF
	import json, sys
	h = json.load(open("h.json"))
	s = h if isinstance(h, list) else h.get("series", h)
	text = json.dumps(h)
	assert "dut+peer" in text, text[:400]
	EOF
'

test_expect_success 'klab report writes the job page from PostgreSQL' '
	"$KLAB" report --no-charts --out rep 1 >rep.out 2>rep.err || { cat rep.out rep.err; false; }
	test -s rep/job-1.html &&
	test_grep "udp_rr\|rr" rep/job-1.html &&
	test -s rep/index.html
'

test_expect_success 'the other commands that read the database work on it' '
	for c in "machines" "--json machines" "jobs" "--csv jobs --state done" "job show 1" "--json job show 1" \
		"job log 1" "--json schedule list" "--json bisect list" "--json kernels list" "--json series list" "db info" \
		"report --format=mail 1" "--json compare 1 --stored"; do
		"$KLAB" $c >cmd.out 2>cmd.err || { echo "klab $c failed:"; cat cmd.err; return 1; }
		! grep -q "ERROR:" cmd.err || { echo "klab $c:"; cat cmd.err; return 1; }
		test -s cmd.out || { echo "klab $c printed nothing"; return 1; }
	done &&
	"$KLAB" --json jobs >jobs.json &&
	python3 -c "import json; j = json.load(open(\"jobs.json\")); assert j[0][\"state\"] == \"done\" and j[0][\"steps_total\"] == 24, j" &&
	"$KLAB" --json machines >m.json &&
	python3 -c "import json; m = json.load(open(\"m.json\")); assert {x[\"name\"] for x in m} >= {\"dut\", \"peer\"}, m" &&
	test_expect_code 1 "$KLAB" cancel 1 2>err &&
	test_grep "already done" err
'

test_expect_success 'a URL where no server listens: a clear error naming [lab] db, no password, exit 1' '
	port=$(test_free_port) &&
	bad="postgresql://klab:s3cret@127.0.0.1:$port/klab" &&
	test_expect_code 1 "$KLAB" --db "$bad" db info >out 2>err &&
	cat err &&
	test_grep "\[lab\] db: cannot connect to postgresql://klab@127.0.0.1:$port/klab" err &&
	grep -i "connection refused" err &&
	! grep -F s3cret err
'

test_expect_success 'a wrong password: authentication failed, the password not shown, nothing created' '
	bad="postgresql://klab:wrong-pw@127.0.0.1:$PG_PORT/klab" &&
	test_expect_code 1 "$KLAB" --db "$bad" db info >out 2>err &&
	cat err &&
	test_grep "\[lab\] db: cannot connect to postgresql://klab@127.0.0.1:$PG_PORT/klab" err &&
	test_grep "password authentication failed" err &&
	! grep -F wrong-pw err &&
	fresh=$(test_pg_db fresh) &&
	test_expect_code 1 "$KLAB" --db "$(echo "$fresh" | sed "s/:$PG_PASSWORD@/:wrong-pw@/")" db init 2>err2 &&
	test "$(test_pg_sql fresh "SELECT count(*) FROM pg_tables WHERE schemaname = '"'public'"'")" = 0
'

test_expect_success 'klabd with a bad URL exits 1 and says why' '
	test_expect_code 1 "$KLABD" -d -c "$KLAB_CONFIG" -D "postgresql://klab:x@127.0.0.1:1/klab" 2>err &&
	test_grep "\[lab\] db: cannot connect to postgresql://klab@127.0.0.1:1/klab" err
'

test_expect_success 'the server restarts in the middle of a job: the job goes on, nothing stored twice' '
	"$KLAB" submit --job ab >out &&
	id=$(sed -n "s/^submitted job \([0-9]*\).*/\1/p" out) &&
	{ "$KLAB" run "$id" >run2.out 2>run2.err & } &&
	pid=$! &&
	test_wait_until 120 "test \"\$(sql \"SELECT count(*) FROM runs WHERE job_id = $id\")\" -ge 1" &&
	say "restarting the server with run $(sql "SELECT count(*) FROM runs WHERE job_id = $id") of 6 stored" &&
	test_pg_ctl -m fast restart &&
	{ wait $pid || { cat run2.out run2.err; false; }; } &&
	cat run2.err &&
	test "$(sql "SELECT state FROM jobs WHERE id = $id")" = done &&
	test "$(sql "SELECT count(*) FROM runs WHERE job_id = $id")" = 6 &&
	test "$(sql "SELECT count(DISTINCT uid) FROM runs WHERE job_id = $id")" = 6 &&
	test "$(sql "SELECT count(*) FROM (SELECT run_id, name FROM metrics GROUP BY run_id, name HAVING count(*) > 1) x")" = 0 &&
	test "$(sql "SELECT count(*) FROM steps WHERE job_id = $id AND state NOT IN ('"'done'"', '"'skipped'"')")" = 0 &&
	test_grep "connection was lost" run2.err &&
	test_grep "connected again" run2.err
'

test_done
