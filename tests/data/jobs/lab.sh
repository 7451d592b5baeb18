# tests/data/jobs/lab.sh: shared setup of the job tests (sourced after tests/lib.sh).
#
# job_lab_up NN: a netns lab (real sshd in two namespaces) in $SCRATCH/lab
# with a free lab index, workload port 95NN (NN: unique per script), and a
# config $KLAB_CONFIG that includes its fragment and
# defines two tuning profiles, a short udp_rr workload and a tuning A/B job.
# Call it at the top level of a script, not inside test_expect_success (a
# test runs in a subshell, where test_cleanup would be lost).

job_lab_up() {
	local index
	# --index auto takes a free lab index (the highest), so that these
	# tests can run beside other lab users; $1 is only a name for ports.
	"$KLAB" lab up --netns --queues 4 --dir "$SCRATCH/lab" --index auto >lab-up.log 2>&1 || {
		sed 's/^/# /' lab-up.log; echo "Bail out! the netns lab did not come up"; exit 1; }
	index=$(sed -n 's/^index=//p' "$SCRATCH/lab/netns.state")
	# by index: test_done removes $SCRATCH before the cleanups run
	test_cleanup "'$KLAB' lab down --dir '$SCRATCH/lab' --index $index"
	index=$1
	mkdir -p "$SCRATCH/reports"
	cat >"$KLAB_CONFIG" <<CONF
[lab]
	db = $SCRATCH/klab.db
	agent_dir = $SCRATCH/agent
	report_dir = $SCRATCH/reports
	log_level = notice
[include]
	path = $SCRATCH/lab/klab.conf
[profile "noxps"]
	xps = off
	rps = off
[profile "xps"]
	xps = auto
	rps = off
[workload "rr"]
	type = udp_rr
	flows = 4
	duration = 1s
	warmup = 500ms
	port = 95$index
	monitors = cpu
[job "ab"]
	profile_a = noxps
	profile_b = xps
	machines = dut peer
	workloads = rr
	boots = ${JOB_BOOTS:-1}
	runs = ${JOB_RUNS:-1}
	warmup_runs = ${JOB_WARMUP:-1}
	seed = 7
CONF
	export KLAB_DB=$SCRATCH/klab.db
}

# pairs_lab_up PAIRS NN DB: a netns lab of PAIRS machine pairs in pool p
# ($SCRATCH/lab, a free lab index, taken down at exit; $index is its index)
# and a config $KLAB_CONFIG on database DB with one short tuning A/B job,
# "short" (one boot a side, one 1 s udp_rr run a boot, port 95NN), that
# takes a free pair of the pool. Top level only, as job_lab_up.
pairs_lab_up() {
	local pairs=$1 nn=$2 db=$3
	"$KLAB" lab up --netns --pairs "$pairs" --pool p --queues 2 --dir "$SCRATCH/lab" --index auto >lab-up.log 2>&1 || {
		sed 's/^/# /' lab-up.log; "$KLAB" lab down --dir "$SCRATCH/lab" >/dev/null 2>&1
		echo "Bail out! the netns lab of $pairs pairs did not come up"; exit 1; }
	index=$(sed -n 's/^index=//p' "$SCRATCH/lab/netns.state")
	# by index: test_done removes $SCRATCH before the cleanups run
	test_cleanup "'$KLAB' lab down --dir '$SCRATCH/lab' --index $index"
	cat >"$KLAB_CONFIG" <<CONF
[lab]
	db = $db
	agent_dir = $SCRATCH/agent
	report_dir = $SCRATCH/reports
	log_level = notice
[include]
	path = $SCRATCH/lab/klab.conf
[profile "noxps"]
	xps = off
	rps = off
[profile "xps"]
	xps = auto
	rps = off
[workload "rr"]
	type = udp_rr
	flows = 1
	duration = 1s
	warmup = 200ms
	port = 95$nn
[job "short"]
	profile_a = noxps
	profile_b = xps
	pool = p
	workloads = rr
	boots = 1
	runs = 1
	warmup_runs = 0
	seed = 5
CONF
	export KLAB_DB=$db
}

# sql "SELECT ...": one query on the test's database.
sql() { sqlite3 -batch "$SCRATCH/klab.db" "$1"; }

# Conditions for test_wait_until (lib.sh):
# step_started JOB KEY: the job has begun the step (its row exists);
# step_in JOB KEY STATE: the step of the job is in that state.
step_started() {
	test "$(sql "SELECT count(*) FROM steps WHERE job_id = $1 AND key = '$2'")" = 1
}
step_in() {
	test "$(sql "SELECT state FROM steps WHERE job_id = $1 AND key = '$2'")" = "$3"
}

# job_lab_prereq: skip the whole script unless the netns lab can run here.
job_lab_prereq() {
	test_have_prereq ROOT,NETNS,SSHD || test_skip_all 'needs ROOT, NETNS and SSHD (a netns lab with real sshd)'
}
