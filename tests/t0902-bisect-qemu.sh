#!/bin/bash
test_description='nightly regressions found, confirmed and bisected on the icount qemu lab: a 9-commit tree whose commit 5 adds a known cost to udp_sendmsg; klabd fires three nights (a test clock), the third is CHANGED, a confirmation job agrees, the bisection klabd starts names commit 5, and resumes after klabd is killed; a range of commits that change nothing ends "no regression confirmed"'
# run.sh: group kernel-tree (a series is applied in the work tree of /var/cache/klab/src/linux-source-6.1 under its build lock; t0450 checks that tree outside the lock, t0902 copies it)
. "$(dirname "$0")/lib.sh"

# a qemu lab index of its own (tests/lib.sh), so that labs of tests running at once never collide
test_qemu_lab_index
L=$SCRATCH/lab
CACHE=${KLAB_KERNEL_CACHE:-/var/cache/klab}
q() { sqlite3 "$SCRATCH/klab.db" "$1"; }
export TZ=UTC

write_conf() {
	cat >klab.conf <<EOF
[lab]
	db = $SCRATCH/klab.db
	artifact_dir = $SCRATCH/artifacts
	work_dir = $SCRATCH/work
	report_dir = $SCRATCH/report
	# a kexec that works takes 20-40 s here; one that hangs is power-cycled after this
	boot_timeout = 300s
[include]
	path = $SRCDIR/kernels/lab/demo-tree.conf
# the test tree: linux-source-6.1's import and 9 commits, built in its work tree
[tree "net-bisect"]
	git = $SCRATCH/tree
	branch = bisect
	share = linux-source-6.1
	config_base = tinyconfig
	fragments = qemu.config
	localversion = ""
EOF
	[ $# = 0 ] && return 0
	cat >>klab.conf <<EOF
[include]
	path = $L/klab.conf
[workload "tx"]
	type = udp_tx
	target = dummy
	engine = io_uring
	payload_size = 64
	batch = 32
	duration = 1
	warmup = 0.5
# the tree's tip against the previous night's kernel
[job "nightly-tx"]
	tree = net-bisect
	machines = dut peer
	workloads = tx
	boots = 2
	runs = 1
	warmup_runs = 1
[schedule "nightly"]
	cron = 0 3 * * *
	job = nightly-tx
EOF
}
write_conf
test_cleanup 'kill -9 -$(cat "$SCRATCH/klabd.pid" 2>/dev/null) 2>/dev/null; sleep 0.5; "$KLAB" lab down --qemu --dir "$L"'

test_expect_success KBUILD,BISECT_E2E 'the baseline kernel is built through klab (cached)' '
	"$KLAB" --json kernels build --tree linux-source-6.1 --variant base >k.json &&
	python3 -c "import json; d=json.load(open(\"k.json\")); print(d[\"id\"])" >k.txt
'
KID=$(cat k.txt 2>/dev/null)

test_expect_success KBUILD,BISECT_E2E 'the test tree: 9 commits on the import, commit 5 spins in udp_sendmsg' '
	bash "$SRCDIR/tests/data/bisect/make-tree.sh" "$CACHE/src/linux-source-6.1" "$SCRATCH/tree" 5 >commits &&
	cat commits &&
	test $(wc -l <commits) = 9 &&
	chmod -R a+rX "$SCRATCH/tree" &&
	sed -n 4p commits | cut -d" " -f1 >c4 && sed -n 5p commits | cut -d" " -f1 >c5 &&
	sed -n 9p commits | cut -d" " -f1 >c9 &&
	test_grep "spin in udp_sendmsg" commits
'
# the tip of the tree on night N: the import, commit 4, commit 9
tip() { git -C "$SCRATCH/tree" update-ref refs/heads/bisect "$1"; }

test_expect_success ROOT,QEMU,KBUILD,BISECT_E2E 'the icount lab boots from the baseline' '
	"$KLAB" lab up --qemu --clock icount --kernel-id "$KID" --dir "$L" --index $K --timeout 600 >out &&
	cat out && write_conf lab && "$KLAB" config check klab.conf
'

test_expect_success ROOT,QEMU,KBUILD,BISECT_E2E 'commits that change nothing measurable: "no regression confirmed", nothing bisected' '
	"$KLAB" bisect start --tree net-bisect --good klab-import --bad $(cat c4) --workload tx --metric tx_pps \
		--min-boots 2 --end-boots 2 >start1 &&
	cat start1 && test_grep "bisection 1 queued" start1 &&
	timeout 1800 "$KLAB" bisect run 1 >run1.out 2>&1; rc=$?
	tail -3 run1.out
	test $rc = 0 &&
	test_grep "bisection 1: done, no-regression" run1.out &&
	test "$(q "SELECT state, result, first_bad IS NULL FROM bisections WHERE id = 1")" = "done|no-regression|1" &&
	test "$(q "SELECT group_concat(role) FROM bisect_steps WHERE bisection_id = 1")" = "good,bad" &&
	test_expect_code 1 "$KLAB" bisect show --mail 1 2>m1 &&
	test_grep "bisection 1 names no commit: done no-regression" m1 &&
	test_grep "No commit named" "$SCRATCH/report/bisect-1.html"
'

# klabd with the test clock: each night is 03:00:30 UTC of 1, 2, 3 December
clock() { date -u -d "$1" +%s >"$SCRATCH/clock"; }
nightly_state() {	# nightly_state N: the state of the Nth scheduled job
	q "SELECT state FROM jobs WHERE schedule = 'nightly' ORDER BY id LIMIT 1 OFFSET $(($1 - 1))"
}
bisection_state() { q "SELECT state FROM bisections WHERE id = $1"; }
night() {	# night N DATE REF: the tree's tip at REF, the clock past 03:00 of DATE, until that nightly ends
	tip "$3" && clock "$2 03:00:30" &&
	test_wait_until 1500 "case \$(nightly_state $1) in done|failed|cancelled) true ;; *) false ;; esac" &&
	test "$(nightly_state $1)" = done
}
start_klabd() {
	( KLAB_TEST_CLOCK=$SCRATCH/clock setsid "$KLABD" -d -g 30 -c "$SCRATCH/klab.conf" >>"$SCRATCH/$1" 2>&1 &
	  echo $! >"$SCRATCH/klabd.pid" ) &&
	test_wait_until 10 "grep -q \"klabd .* started\" \"$SCRATCH/$1\""
}

test_expect_success ROOT,QEMU,KBUILD,BISECT_E2E 'klabd fires night 1: the tip built and measured, nothing to compare yet' '
	tip klab-import && clock "2026-12-01 02:59:00" &&
	start_klabd klabd1.log &&
	test_wait_until 30 "test \"\$(q \"SELECT count(*) FROM schedules\")\" = 1" &&
	night 1 2026-12-01 klab-import &&
	test "$(q "SELECT count(*) FROM jobs WHERE schedule = '\''nightly'\''")" = 1 &&
	test "$(q "SELECT count(*) FROM job_sides s JOIN jobs j ON j.id = s.job_id WHERE j.schedule = '\''nightly'\''")" = 1
'

# not CHANGED (EQUIVALENT, or INCONCLUSIVE when one boot'\''s run dips 3%, seen once under icount);
# if it were CHANGED its confirmation would have to say "not confirmed": no bisection either way
test_expect_success ROOT,QEMU,KBUILD,BISECT_E2E 'night 2 (commits 1-4, no code change): nothing confirmed, no bisection' '
	night 2 2026-12-02 $(cat c4) &&
	j2=$(q "SELECT id FROM jobs WHERE schedule = '\''nightly'\'' ORDER BY id LIMIT 1 OFFSET 1") &&
	v=$(q "SELECT verdict FROM comparisons WHERE job_id = $j2 AND workload = '\''tx'\'' AND metric = '\''tx_pps'\''") &&
	echo "night 2: tx_pps $v" &&
	test_wait_until 900 "test \"\$(q \"SELECT count(*) FROM confirmations WHERE state = '\''pending'\''\")\" = 0" &&
	test "$(q "SELECT count(*) FROM confirmations WHERE state = '\''confirmed'\''")" = 0 &&
	test "$(q "SELECT count(*) FROM bisections")" = 1
'

test_expect_success ROOT,QEMU,KBUILD,BISECT_E2E 'night 3 (commits 5-9): CHANGED, confirmed by a second job, a bisection queued' '
	night 3 2026-12-03 $(cat c9) &&
	j3=$(q "SELECT id FROM jobs WHERE schedule = '\''nightly'\'' ORDER BY id LIMIT 1 OFFSET 2") &&
	echo $j3 >j3 &&
	test "$(q "SELECT verdict FROM comparisons WHERE job_id = $j3 AND workload = '\''tx'\'' AND metric = '\''tx_pps'\''")" = CHANGED &&
	# the confirmation (fresh boots of both kernels) took over 900 s at load 4-5 (2026-12-05)
	test_wait_until 1800 "test -n \"\$(q \"SELECT 1 FROM confirmations WHERE state != '\''pending'\''\")\"" &&
	q "SELECT job_id, workload, metric, state, bisection_id FROM confirmations WHERE job_id = $j3" >conf &&
	cat conf && test "$(cat conf)" = "$j3|tx|tx_pps|confirmed|2" &&
	test "$(q "SELECT json_extract(spec, '\''$.kind'\'') FROM jobs WHERE id = (SELECT confirm_job FROM confirmations WHERE job_id = $j3)")" = confirm &&
	"$KLAB" job show $j3 >show3 && test_grep "tx.tx_pps -28.[0-9]*%: confirmed by job" show3 &&
	test "$(q "SELECT good, bad, workload, metric FROM bisections WHERE id = 2")" = "$(cat c4)|$(cat c9)|tx|tx_pps"
'

# the bisection's second measured commit is its step seq 3
step2_runs() {
	q "SELECT count(*) FROM steps s JOIN jobs j ON j.id = s.job_id WHERE j.bisection_id = 2 AND
	   j.bisect_seq = 3 AND s.key LIKE 'run:%' AND s.state = 'done'"
}

test_expect_success ROOT,QEMU,KBUILD,BISECT_E2E 'klabd killed mid-bisection and the guest power-cycled: the next klabd resumes, redoing the boot' '
	test_wait_until 2400 "test \$(step2_runs) -ge 1 || case \$(bisection_state 2) in done|failed|cancelled) true ;; *) false ;; esac" &&
	kill -9 -$(cat klabd.pid) && sleep 1 &&
	test "$(q "SELECT state FROM bisections WHERE id = 2")" = running &&
	q "SELECT id, state FROM jobs WHERE bisection_id = 2 AND bisect_seq = 3" >killed &&
	cat killed && test_grep "|running$" killed &&
	# the machine restarts on its default kernel meanwhile (what the fragment'\''s power_cycle runs)
	"$KLAB" lab power-cycle --qemu --dir "$L" >pc && cat pc && test_grep "power-cycled" pc &&
	test_wait_until 600 "\"$KLAB\" lab status --qemu --dir \"$L\" >/dev/null 2>&1" &&
	start_klabd klabd2.log &&
	test_wait_until 10 "grep -q \"resuming interrupted bisection 2\" klabd2.log" &&
	test_wait_until 2400 "case \$(bisection_state 2) in done|failed|cancelled) true ;; *) false ;; esac" &&
	cat klabd2.log &&
	test_grep "machine .dut. rebooted since boot 1" klabd2.log &&
	test "$(q "SELECT state, result, first_bad FROM bisections WHERE id = 2")" = "done|found|$(cat c5)" &&
	test "$(q "SELECT count(*) FROM jobs WHERE bisection_id = 2 AND bisect_seq = 3")" = "$(wc -l <killed)"
'

test_expect_success ROOT,QEMU,KBUILD,BISECT_E2E 'commit 5 named in at most ceil(log2 5) + 2 = 5 steps; no run stored twice' '
	"$KLAB" bisect show 2 >show && cat show &&
	test "$(q "SELECT count(*) FROM bisect_steps WHERE bisection_id = 2 AND role = '\''step'\''")" -le 5 &&
	test "$(q "SELECT verdict FROM bisect_steps WHERE bisection_id = 2 AND commit_id = '\''$(cat c5)'\''")" = bad &&
	python3 -c "c = float(\"$(q "SELECT change_pct FROM bisections WHERE id = 2")\"); assert c < -1, c" &&
	test "$(q "SELECT count(*) FROM runs")" = "$(q "SELECT count(DISTINCT uid) FROM runs")" &&
	q "SELECT j.bisect_seq, s.detail FROM steps s JOIN jobs j ON j.id = s.job_id WHERE j.bisection_id = 2 AND
	   s.key LIKE '\''build:%'\'' AND s.state = '\''done'\'' ORDER BY s.id" >builds &&
	python3 -c "
import json
for l in open(\"builds\"):
    seq, d = l.split(\"|\", 1)
    d = json.loads(d)
    print(\"step\", seq, \"kernel\", d.get(\"kernel_id\"), \"cached\", d.get(\"cached\"), \"%.0f s\" % d.get(\"duration_s\", 0))"
'

test_expect_success ROOT,QEMU,KBUILD,BISECT_E2E 'show --json, --mail and the page name the commit' '
	"$KLAB" --json bisect show 2 >show.json &&
	python3 -c "
import json
d = json.load(open(\"show.json\"))
assert d[\"state\"] == \"done\" and d[\"first_bad\"] == open(\"c5\").read().strip(), d
assert len(d[\"steps\"]) >= 3, d" &&
	"$KLAB" bisect show --mail 2 >mail && cat mail &&
	test_grep "klab noticed a -[0-9.]*% regression of tx.tx_pps on commit $(cut -c1-12 c5) (\"udp: spin in udp_sendmsg" mail &&
	test_grep "measured by instruction count (icount)" mail &&
	test_grep "^Reported-by: " mail &&
	test_grep "udp: spin in udp_sendmsg" "$SCRATCH/report/bisect-2.html" &&
	test -s "$SCRATCH/report/charts/bisect-2.svg"
'

test_expect_success ROOT,QEMU,KBUILD,BISECT_E2E 'klabd stops; the lab goes down' '
	kill -TERM $(cat klabd.pid) && test_wait_until 60 "! kill -0 $(cat klabd.pid) 2>/dev/null" &&
	"$KLAB" lab down --qemu --dir "$L"
'

test_done
