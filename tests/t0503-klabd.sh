#!/bin/bash
test_description='klabd: config check, one instance per database, runs and resumes jobs, SIGHUP, SIGTERM, a missed nightly fires once'
. "$(dirname "$0")/lib.sh"
. "$SRCDIR/tests/data/jobs/lab.sh"

JOB_BOOTS=1 JOB_RUNS=1 JOB_WARMUP=1
job_lab_prereq
job_lab_up 31
cat >>"$KLAB_CONFIG" <<EOF
[tree "t"]
	tarball = /usr/src/linux-source-6.1.tar.xz
[job "nightly-rr"]
	tree = t
	machines = dut peer
	workloads = rr
	boots = 1
	runs = 1
	warmup_runs = 0
[schedule "nightly"]
	cron = 0 3 * * *
	job = nightly-rr
EOF
cp "$KLAB_CONFIG" good.conf

start_klabd() {	# start_klabd LOG: klabd -d in the background, pid in klabd.pid
	"$KLABD" -d -g 60 -c "$KLAB_CONFIG" >>"$1" 2>&1 &
	echo $! >klabd.pid
	for i in $(seq 50); do grep -q "klabd .* started" "$1" && return 0; sleep 0.1; done
	cat "$1"; return 1
}
stop_klabd() {
	kill -TERM "$(cat klabd.pid)" 2>/dev/null
	for i in $(seq 700); do kill -0 "$(cat klabd.pid)" 2>/dev/null || return 0; sleep 0.1; done	# the grace (-g 60) and then some
	return 1
}
test_cleanup 'kill -9 $(cat "$SCRATCH/klabd.pid") 2>/dev/null; sleep 0.2'
wait_for() {	# wait_for SECONDS SQL EXPECTED
	local i
	for i in $(seq $(($1 * 5))); do
		[ "$(sql "$2")" = "$3" ] && return 0
		sleep 0.2
	done
	echo "timed out waiting for [$2] = [$3], got [$(sql "$2")]" >&2
	return 1
}

wait_log() {	# wait_log FILE PATTERN: up to 20 s for a line of the daemon's log
	local i
	for i in $(seq 100); do grep -q -e "$2" "$1" && return 0; sleep 0.2; done
	echo "'$2' not in $1:" >&2; cat "$1" >&2; return 1
}

test_expect_success 'klabd -n checks the config' '
	"$KLABD" -n -c "$KLAB_CONFIG" >out &&
	test_grep "configuration ok" out &&
	printf "[lab]\n\tbogus = 1\n" >bad.conf &&
	test_expect_code 1 "$KLABD" -n -c bad.conf 2>err &&
	test_grep "bad.conf:2" err
'

test_expect_success 'a missed nightly fires once at start and says so' '
	sql "SELECT 1" >/dev/null &&
	"$KLAB" db init >/dev/null &&
	sql "INSERT INTO schedules (name, cron, job, last_fire, next_fire) VALUES (\"nightly\", \"0 3 * * *\", \"nightly-rr\", strftime(\"%s\", \"now\") - 3 * 86400, strftime(\"%s\", \"now\") - 2 * 86400)" &&
	start_klabd d1.log &&
	wait_for 10 "SELECT count(*) FROM jobs WHERE schedule = \"nightly\"" 1 &&
	test_grep "schedule .nightly. missed its fire time .* firing once now" d1.log &&
	wait_for 90 "SELECT state FROM jobs WHERE schedule = \"nightly\"" done &&
	sleep 2 &&
	test "$(sql "SELECT count(*) FROM jobs WHERE schedule = \"nightly\"")" = 1 &&
	test "$(sql "SELECT next_fire > strftime(\"%s\", \"now\") FROM schedules")" = 1 &&
	"$KLAB" schedule list >sl &&
	test_grep "^nightly *0 3 \* \* \* *nightly-rr .* 03:00:00" sl &&
	"$KLAB" --json schedule list >sl.json &&
	python3 -c "import json; s=json.load(open(\"sl.json\")); assert s[0][\"last_fire\"] and not s[0][\"overdue\"], s"
'

test_expect_success 'the nightly ran one side (nothing to compare with yet)' '
	test "$(sql "SELECT count(*) FROM runs r JOIN jobs j ON j.id = r.job_id WHERE j.schedule = \"nightly\" AND r.side = \"B\"")" = 1 &&
	test "$(sql "SELECT s.state FROM steps s JOIN jobs j ON j.id = s.job_id WHERE j.schedule = \"nightly\" AND s.key = \"compare\"")" = skipped
'

test_expect_success 'a second klabd on the same database is refused' '
	test_expect_code 1 "$KLABD" -d -c "$KLAB_CONFIG" 2>err &&
	test_grep "another klabd is running on database .* as pid $(cat klabd.pid)" err
'

test_expect_success 'klabd starts a submitted job and runs it to the end' '
	"$KLAB" submit --job ab >/dev/null &&
	id=$(sql "SELECT max(id) FROM jobs") &&
	wait_for 90 "SELECT state FROM jobs WHERE id = $id" done &&
	test "$(sql "SELECT count(*) FROM runs WHERE job_id = $id")" = 4 &&
	test_grep "starting job $id" d1.log &&
	wait_log d1.log "job $id ended: done"
'

test_expect_success 'a job that ended refreshed the query planner statistics (sqlite_stat1)' '
	wait_for 10 "SELECT count(*) > 0 FROM sqlite_stat1 WHERE tbl = \"runs\"" 1 &&
	test "$(sql "SELECT count(*) > 0 FROM sqlite_stat1 WHERE tbl = \"metrics\"")" = 1
'

test_expect_success 'klab job show --follow follows a job klabd runs, step by step with the ETA, to its end' '
	"$KLAB" submit --job ab >/dev/null &&
	id=$(sql "SELECT max(id) FROM jobs") &&
	"$KLAB" --json job show "$id" >js.json &&
	n=$(python3 -c "import json; print(json.load(open(\"js.json\"))[\"steps_total\"])") &&
	KLAB_PROGRESS_S=1 "$KLAB" job show "$id" --follow --timeout 120s >follow.out 2>follow.err &&
	test "$(sql "SELECT state FROM jobs WHERE id = $id")" = done &&
	grep -Eq "^\[[0-9:]{8}\] 1/$n intake" follow.out &&
	# the earlier job of the same name gives every step kind a duration: an ETA from the start
	grep -Eq "^\[[0-9:]{8}\] [0-9]+/$n run:1:rr:1 \(job ETA [0-9hms]+\)$" follow.out &&
	grep -Eq "^\[[0-9:]{8}\] [0-9]+/$n run:1:rr:1 done in [0-9.]+ s$" follow.out &&
	grep -Eq "^\[[0-9]+/$n run:[12]:rr:[01]\] [0-9]+/~[0-9]+ s [0-9]+% 00:[0-9]{2} ETA " follow.out &&
	test "$(grep -c " run:.* done in " follow.out)" = 4 &&
	tail -n 1 follow.out | grep -Eq "^\[[0-9:]{8}\] job $id done in [0-9.]+ s$"
'

test_expect_success 'SIGHUP with a broken config keeps the old one; a good one is taken' '
	printf "[nosuchsection]\n" >>"$KLAB_CONFIG" &&
	kill -HUP $(cat klabd.pid) &&
	wait_log d1.log "keeping the configuration" &&
	test_grep "reload of .* failed (errors above); keeping the configuration loaded before" d1.log &&
	kill -0 $(cat klabd.pid) &&
	cp good.conf "$KLAB_CONFIG" &&
	kill -HUP $(cat klabd.pid) &&
	wait_log d1.log "configuration reloaded" &&
	test_grep "configuration reloaded: 2 machines" d1.log
'

test_expect_success 'SIGKILL of klabd and its job mid-run: the next klabd resumes it, no run lost or doubled' '
	"$KLAB" submit --job ab >/dev/null &&
	id=$(sql "SELECT max(id) FROM jobs") &&
	wait_for 60 "SELECT state FROM steps WHERE job_id = $id AND key = \"run:1:rr:1\"" running &&
	sleep 0.8 &&
	child=$(sql "SELECT pid FROM jobs WHERE id = $id") &&
	kill -9 $(cat klabd.pid) $child &&
	sleep 0.5 &&
	test "$(sql "SELECT state FROM jobs WHERE id = $id")" = running &&
	start_klabd d2.log &&
	wait_for 10 "SELECT count(*) FROM jobs WHERE id = $id AND pid IS NOT NULL AND pid != $child" 1 &&
	test_grep "resuming interrupted job $id" d2.log &&
	wait_for 90 "SELECT state FROM jobs WHERE id = $id" done &&
	test "$(sql "SELECT count(*) FROM runs WHERE job_id = $id")" = 4 &&
	test "$(sql "SELECT count(DISTINCT uid) FROM runs WHERE job_id = $id")" = 4 &&
	test "$(sql "SELECT attempts FROM steps WHERE job_id = $id AND key = \"run:1:rr:1\"")" = 2
'

test_expect_success 'SIGKILL of klabd alone: its job keeps running and is not started twice' '
	"$KLAB" submit --job ab >/dev/null &&
	id=$(sql "SELECT max(id) FROM jobs") &&
	wait_for 60 "SELECT state FROM steps WHERE job_id = $id AND key = \"run:1:rr:0\"" running &&
	child=$(sql "SELECT pid FROM jobs WHERE id = $id") &&
	kill -9 $(cat klabd.pid) &&
	start_klabd d3.log &&
	wait_for 90 "SELECT state FROM jobs WHERE id = $id" done &&
	test_grep -v "job $id" d3.log &&
	test "$(sql "SELECT count(*) FROM runs WHERE job_id = $id")" = 4 &&
	test "$(sql "SELECT max(attempts) FROM steps WHERE job_id = $id")" = 1
'

test_expect_success 'SIGTERM lets the running step finish, leaves the job resumable, and exits' '
	"$KLAB" submit --job ab >/dev/null &&
	id=$(sql "SELECT max(id) FROM jobs") &&
	wait_for 60 "SELECT state FROM steps WHERE job_id = $id AND key = \"run:1:rr:0\"" running &&
	stop_klabd &&
	test_grep "SIGTERM: no new jobs; 1 running job(s)" d3.log &&
	test_grep "klabd stopped" d3.log &&
	test "$(sql "SELECT state FROM steps WHERE job_id = $id AND key = \"run:1:rr:0\"")" = done &&
	test "$(sql "SELECT state || \",\" || coalesce(pid, \"-\") FROM jobs WHERE id = $id")" = "running,-" &&
	start_klabd d4.log &&
	wait_for 90 "SELECT state FROM jobs WHERE id = $id" done &&
	test "$(sql "SELECT count(*) FROM runs WHERE job_id = $id")" = 4 &&
	test "$(sql "SELECT max(attempts) FROM steps WHERE job_id = $id")" = 1 &&
	stop_klabd
'

test_expect_success 'klab job show --follow is bounded: a job nobody runs ends it at --timeout, exit 1' '
	"$KLAB" submit --job ab >/dev/null &&
	id=$(sql "SELECT max(id) FROM jobs") &&
	test_expect_code 1 "$KLAB" job show "$id" --follow --timeout 2s >fq.out 2>fq.err &&
	test_grep "job $id is queued" fq.out &&
	test_grep "error: job $id is still queued after --timeout 2 s" fq.err &&
	test_expect_code 2 "$KLAB" --json job show "$id" --follow 2>fj.err &&
	test_grep "follow prints text" fj.err
'

test_done
