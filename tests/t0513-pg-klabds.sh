#!/bin/bash
test_description='several klabd on one PostgreSQL: 4 klabd share the queue and the leases of a netns lab of pairs; one is killed with SIGKILL (with its job processes) in the middle; its jobs resume on the others; every job done once, no run stored twice, no lease held by two jobs'
# run.sh: exclusive (4 klabd, 8 netns pairs, 32 jobs, a klabd killed mid-job and its jobs resumed by the others within 600 s: a scale test that wants the machine to itself, as t0505)
. "$(dirname "$0")/lib.sh"
. "$SRCDIR/tests/data/jobs/lab.sh"

PAIRS=${KLAB_PG_PAIRS:-8}
JOBS=${KLAB_PG_JOBS:-32}
DAEMONS=4
DONE_S=${KLAB_PG_TIMEOUT:-600}

job_lab_prereq
test_have_prereq POSTGRES || test_skip_all 'needs PostgreSQL 15 (make deps installs it)'
test_pg_start >pg-start.log 2>&1 || { sed 's/^/# /' pg-start.log "$SCRATCH"/pg/log; echo "Bail out! the PostgreSQL server did not start"; exit 1; }
URL=$(test_pg_db klab) || { echo "Bail out! cannot make the database"; exit 1; }
# the workload port 9549 is this script's
pairs_lab_up "$PAIRS" 49 "$URL"
sql() { test_pg_sql klab "$1"; }
# every klabd in a process group of its own, so that the kill takes its job processes too (a host lost)
for i in $(seq $DAEMONS); do test_cleanup "kill -9 -\$(cat '$SCRATCH/klabd-$i.pid') 2>/dev/null"; done
stamp() { while IFS= read -r l; do printf '%s %s\n' "$EPOCHREALTIME" "$l"; done; }
all_ended() { test "$(sql "SELECT count(*) FROM jobs WHERE state IN ('queued', 'running')")" = 0; }
# jobs_of I: the jobs klabd I's processes run now (jobs.pid is one of its children: a child
# that found its job taken by another klabd is not one)
jobs_of() {
	local pids
	pids=$(pgrep -P "$(cat klabd-$1.pid)" | paste -sd, -)
	[ -n "$pids" ] || return 0
	sql "SELECT id FROM jobs WHERE state = 'running' AND pid IN ($pids) ORDER BY id"
}
# busiest: the klabd that runs the most jobs now, and they ("I J1 J2 ..."); nothing when none runs one
busiest() {
	local i best= n bn=0
	for i in $(seq $DAEMONS); do
		n=$(jobs_of $i | wc -l)
		[ "$n" -gt "$bn" ] && { bn=$n; best="$i $(echo $(jobs_of $i))"; }
	done
	echo $best
}
# the logs of the klabd that were not killed
others() { local i; for i in $(seq $DAEMONS); do [ "$i" = "$(cat victim)" ] || echo klabd-$i.log; done; }

test_expect_success "$DAEMONS klabd start on one database; $JOBS jobs are queued" '
	"$KLAB" db init >/dev/null &&
	for i in $(seq $DAEMONS); do
		{ setsid "$KLABD" -d -g 30 -j "$PAIRS" -c "$KLAB_CONFIG" > >(stamp >klabd-$i.log) 2>&1 & } &&
		echo $! >klabd-$i.pid || return 1
	done &&
	for i in $(seq $DAEMONS); do test_wait_until 20 "grep -q \"klabd .* started\" klabd-$i.log" || return 1; done &&
	! grep -F "$PG_PASSWORD" klabd-*.log &&
	for i in $(seq "$JOBS"); do "$KLAB" submit --job short >/dev/null || return 1; done &&
	test "$(sql "SELECT count(*) FROM jobs")" = "$JOBS"
'

test_expect_success 'the busiest klabd is killed with SIGKILL while it runs jobs, after a quarter of the jobs are done' '
	# which klabd gets which job is a race: the one with the most jobs in flight is the victim
	test_wait_until 300 "test \$(sql \"SELECT count(*) FROM jobs WHERE state = '"'done'"'\") -ge $((JOBS / 4)) && test -n \"\$(busiest)\"" &&
	# better with two of its jobs in flight, if that comes within 20 s
	{ test_wait_until 20 "test \$(busiest | wc -w) -ge 3" 2>/dev/null || :; } &&
	set -- $(busiest) && test $# -ge 2 &&
	echo "$1" >victim && v=$1 && shift &&
	echo "$@" | tr " " "\n" >cand.jobs &&
	t_kill=$EPOCHREALTIME && kill -KILL -- -"$(cat klabd-$v.pid)" &&
	echo "$t_kill" >kill.time &&
	test_wait_until 10 "! kill -0 $(cat klabd-$v.pid) 2>/dev/null" &&
	# the jobs it ran stay running, their leases held; one that had just ended is not one of them,
	# but one another klabd has already resumed (and maybe finished: a loaded machine) is
	for j in $(cat cand.jobs); do
		state=$(sql "SELECT state FROM jobs WHERE id = $j") &&
		echo "klabd $v had a process for job $j, which is $state after the kill" >>timeline &&
		{ test "$state" = running || grep -q " resuming interrupted job $j (pid" $(others); } || continue
		echo "$j" >>killed.jobs &&
		sql "SELECT $j, min(expires) FROM leases WHERE job_id = $j" >>killed.leases || return 1
	done &&
	test -s killed.jobs &&
	echo "killed klabd $v at $t_kill running job(s) $(echo $(cat killed.jobs)); done then: $(sql "SELECT count(*) FROM jobs WHERE state = '"'done'"'")" >>timeline
'

test_expect_success "the other klabd run every job to the end within $DONE_S s" '
	test_wait_until "$DONE_S" all_ended &&
	sql "SELECT state, count(*) FROM jobs GROUP BY state" >states &&
	echo "done|$JOBS" >states.want &&
	test_cmp states.want states
'

test_expect_success 'the killed klabd'"'"'s jobs resumed on the others (timeline)' '
	t_kill=$(cat kill.time) &&
	resumed=0 &&
	for j in $(cat killed.jobs); do
		line=$(grep -h " resuming interrupted job $j (pid" $(others) | head -n 1)
		if test -z "$line"; then
			# the victim had only a child that stood back: another klabd ran the job all along
			grep -q " job $j ended: done" $(others) ||
				{ echo "job $j was neither resumed nor run to the end by another klabd"; return 1; }
			echo "job $j: its runner was another klabd'"'"'s, which ran it to the end" >>timeline
			continue
		fi
		resumed=$((resumed + 1)) &&
		t_res=${line%% *} &&
		exp=$(sed -n "s/^$j|//p" killed.leases) &&
		fin=$(sql "SELECT finished FROM jobs WHERE id = $j") &&
		echo "$(python3 -c "import sys; k, r, e, f = map(float, sys.argv[1:]); print(\"job %s: killed at +0.0 s, resumed at +%.1f s, its lease would have expired at +%.1f s, done at +%.1f s\" % (\"$j\", r - k, e - k, f - k))" "$t_kill" "$t_res" "${exp:-$t_kill}" "$fin")" >>timeline || return 1
	done &&
	echo "jobs of the killed klabd resumed by another: $resumed" >>timeline
'

test_expect_success 'no job lost, none run twice, no run stored twice' '
	# 2 boots (A, B) x 1 run a job
	test "$(sql "SELECT count(*) FROM runs")" = $((2 * JOBS)) &&
	test "$(sql "SELECT count(DISTINCT uid) FROM runs")" = $((2 * JOBS)) &&
	test "$(sql "SELECT count(*) FROM (SELECT job_id FROM runs GROUP BY job_id HAVING count(*) = 2 AND count(DISTINCT boot_id) = 2) x")" = "$JOBS" &&
	test "$(sql "SELECT count(*) FROM (SELECT run_id, name FROM metrics GROUP BY run_id, name HAVING count(*) > 1) x")" = 0 &&
	test "$(sql "SELECT count(*) FROM steps WHERE state NOT IN ('"'done'"', '"'skipped'"')")" = 0 &&
	# a step ran twice only where the victim was killed in it
	sql "SELECT DISTINCT job_id FROM steps WHERE attempts > 1 ORDER BY job_id" >again &&
	echo "steps run again in job(s): $(echo $(cat again))" >>timeline &&
	comm -23 again killed.jobs >again.others &&
	test_cmp /dev/null again.others &&
	# every job was started by one klabd (a second that raced for it stood back)
	for j in $(seq "$JOBS"); do
		n=$(grep -h " starting job $j (pid" klabd-*.log | wc -l) &&
		test "$n" -ge 1 || { echo "job $j never started"; return 1; }
	done &&
	! grep -h "is being run by another process\|killed by signal\|cannot\|error" $(others)
'

test_expect_success 'the work was shared: each surviving klabd ran jobs' '
	for i in $(seq $DAEMONS); do
		test "$i" != "$(cat victim)" || continue
		n=$(grep -c "job [0-9]* ended: done" klabd-$i.log) &&
		echo "klabd $i: $n job(s) ended done" >>timeline &&
		test "$n" -gt 0 || return 1
	done
'

# the timeline as TAP comments
[ -f timeline ] && sed 's/^/# /' timeline

test_expect_success 'no machine was leased to two jobs at once (lease_history)' '
	test "$(sql "SELECT count(*) FROM lease_history WHERE released IS NULL OR released < acquired")" = 0 &&
	test "$(sql "SELECT count(*) FROM leases")" = 0 &&
	test "$(sql "SELECT count(*) FROM (SELECT job_id FROM lease_history GROUP BY job_id HAVING count(*) >= 2) x")" = "$JOBS" &&
	sql "SELECT a.machine, a.job_id, b.job_id FROM lease_history a JOIN lease_history b
	     ON a.machine = b.machine AND a.id < b.id
	     AND b.acquired < a.released AND a.acquired < b.released" >overlaps &&
	test_cmp /dev/null overlaps &&
	test "$(sql "SELECT count(*) FROM jobs WHERE substr(dut, 4) != substr(peer, 5)")" = 0 &&
	test "$(sql "SELECT count(*) FROM runs r JOIN jobs j ON j.id = r.job_id WHERE r.machine != j.dut OR r.peer != j.peer")" = 0
'

test_expect_success 'the surviving klabd stop on SIGTERM; lab down removes the namespaces' '
	for i in $(seq $DAEMONS); do test "$i" = "$(cat victim)" || kill -TERM "$(cat klabd-$i.pid)" || return 1; done &&
	for i in $(seq $DAEMONS); do test_wait_until 40 "! kill -0 $(cat klabd-$i.pid) 2>/dev/null" || return 1; done &&
	"$KLAB" lab down --dir "$SCRATCH/lab" >down.out &&
	ip netns list >ns &&
	test_grep -v "^klab$index-" ns
'

test_done
