# tests/data/jobs/lab.sh: shared setup of the job tests (sourced after tests/lib.sh).
#
# job_lab_up INDEX: a netns lab (real sshd in two namespaces) in $SCRATCH/lab
# with index INDEX (the t05NN tests use 28..31; t03NN use 20..24, so they
# can run at once), and a config $KLAB_CONFIG that includes its fragment and
# defines two tuning profiles, a short udp_rr workload and a tuning A/B job.
# Call it at the top level of a script, not inside test_expect_success (a
# test runs in a subshell, where test_cleanup would be lost).

job_lab_up() {
	local index=$1
	"$KLAB" lab down --dir "$SCRATCH/lab" >/dev/null 2>&1
	test_cleanup "'$KLAB' lab down --dir '$SCRATCH/lab'"
	"$KLAB" lab up --netns --queues 4 --dir "$SCRATCH/lab" --index "$index" >lab-up.log 2>&1 || {
		sed 's/^/# /' lab-up.log; echo "Bail out! the netns lab did not come up"; exit 1; }
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
	warmup = ${JOB_WARMUP:-1}
	seed = 7
CONF
	export KLAB_DB=$SCRATCH/klab.db
}

# sql "SELECT ...": one query on the test's database.
sql() { sqlite3 -batch "$SCRATCH/klab.db" "$1"; }

# job_lab_prereq: skip the whole script unless the netns lab can run here.
job_lab_prereq() {
	test_have_prereq ROOT,NETNS,SSHD || test_skip_all 'needs ROOT, NETNS and SSHD (a netns lab with real sshd)'
}
