#!/bin/bash
test_description='netns lab end to end: an A/A tuning job is not CHANGED; an injected slowdown (a qdisc) on side B is CHANGED, tps down'
# run.sh: exclusive (an A/A job must not be CHANGED and a 2 Mbit/s tbf must be: real tps measurements, which the load of tests beside it would disturb between boots)
. "$(dirname "$0")/lib.sh"

K=	# netns lab index: a free one (--index auto), read from the lab's state
L=$SCRATCH/lab
q() { sqlite3 "$SCRATCH/klab.db" "$1"; }

write_conf() {
	cat >klab.conf <<EOF
[lab]
	db = $SCRATCH/klab.db
	work_dir = $SCRATCH/work
	report_dir = $SCRATCH/report
	# netns machines share the host's files: a folder of our own keeps the
	# agent's tuning state apart from other netns labs named dut
	agent_dir = $SCRATCH/agent
[include]
	path = $L/klab.conf
[profile "plain"]
[workload "rr"]
	type = udp_rr
	flows = 4
	duration = 3
	warmup = 1
	monitors = cpu
	threshold = 10
[job "aa"]
	profile_a = plain
	profile_b = plain
	machines = dut peer
	workloads = rr
	boots = 3
	runs = 2
	warmup_runs = 1
EOF
	[ "${1:-}" = slow ] || return 0
	# The host kernel here has no sch_netem ("Specified qdisc kind is
	# unknown"); tbf is built in: 2 Mbit/s caps 100-byte udp_rr far below
	# what the veth does unshaped.
	cat >>klab.conf <<EOF
[profile "slow"]
	qdisc = tbf rate 2mbit burst 8kbit latency 20ms
[job "ab"]
	profile_a = plain
	profile_b = slow
	machines = dut peer
	workloads = rr
	boots = 3
	runs = 2
	warmup_runs = 1
EOF
}

# verdict JOB: "VERDICT CHANGE_PCT" of the job's tps comparison
verdict() {
	q "SELECT verdict, change_pct FROM comparisons WHERE job_id = $1 AND metric = 'tps'
	   ORDER BY id DESC LIMIT 1" | tr '|' ' '
}

# at the top level: K is needed by every later test and by the cleanup
if test_have_prereq ROOT,NETNS,SSHD; then
	"$KLAB" lab up --netns --dir "$L" --index auto >lab-up.out 2>&1
	K=$(sed -n 's/^index=//p' "$L/netns.state" 2>/dev/null)
	[ -n "$K" ] && test_cleanup "\"\$KLAB\" lab down --netns --dir \"\$L\" --index $K"
fi

test_expect_success ROOT,NETNS,SSHD 'the netns lab comes up and the job config loads' '
	cat lab-up.out &&
	test -n "$K" &&
	write_conf &&
	"$KLAB" config check klab.conf
'

# The injected slowdown: profile key `qdisc` puts a root qdisc on the dut's
# workload NIC for side B only and restore takes it off (a netem delay
# where the kernel has sch_netem; this host has none, tbf works everywhere).
test_expect_success ROOT,NETNS,SSHD 'A/A: the same tuning on both sides is not CHANGED' '
	timeout 900 "$KLAB" run aa >aa.out 2>&1; rc=$?
	cat aa.out
	test $rc = 0 &&
	job=$(q "SELECT id FROM jobs WHERE name = '\''aa'\''") &&
	verdict $job >v && cat v &&
	test -s v && test_grep -v "^CHANGED" v
'

test_expect_success ROOT,NETNS,SSHD 'A/B: a 2 Mbit/s tbf on side B is CHANGED with tps down' '
	write_conf slow &&
	timeout 900 "$KLAB" run ab >ab.out 2>&1; rc=$?
	cat ab.out
	test $rc = 0 &&
	job=$(q "SELECT id FROM jobs WHERE name = '\''ab'\''") &&
	verdict $job >v && cat v &&
	test_grep "^CHANGED -" v &&
	! tc -n klab$K-dut qdisc show dev wl0 | grep -q tbf
'

test_expect_success ROOT,NETNS,SSHD 'the report of the A/A job is written' '
	job=$(q "SELECT id FROM jobs WHERE name = '\''aa'\''") &&
	"$KLAB" report --out "$SCRATCH/pages" $job &&
	test -f "$SCRATCH/pages/index.html"
'

test_expect_success ROOT,NETNS,SSHD 'lab down' '
	"$KLAB" lab down --netns --dir "$L" --index $K && ! test -e "$L"
'

test_done
