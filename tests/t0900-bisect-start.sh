#!/bin/bash
test_description='klab bisect start: each bad input a clear error, nothing stored; a good start queued with its commits; show, list, cancel'
. "$(dirname "$0")/lib.sh"

test_have_prereq GIT 2>/dev/null || command -v git >/dev/null || test_skip_all 'needs git'
g() { git -C "$SCRATCH/tree" -c user.name=t -c user.email=t@t "$@"; }
mkdir -p "$SCRATCH/tree" "$SCRATCH/tar" && echo not-a-real-tarball >"$SCRATCH/tar/linux.tar.xz" && g init -q && for i in 1 2 3 4 5 6 7 8 9; do
	echo "$i" >"$SCRATCH/tree/f" && g add f && g commit -qm "commit $i"; done
g checkout -q -b side HEAD~8 && echo x >"$SCRATCH/tree/g" && g add g && g commit -qm side && g checkout -q -
cat >"$KLAB_CONFIG" <<CONF
[lab]
	db = $SCRATCH/klab.db
[tree "t"]
	git = $SCRATCH/tree
[tree "tarball"]
	tarball = $SCRATCH/tar/linux.tar.xz
[workload "rr"]
	type = udp_rr
[workload "tx"]
	type = udp_tx
[machine "dut"]
	host = 198.18.255.2
	role = dut
	peer = peer
	boot = kexec
[machine "peer"]
	host = 198.18.255.3
	role = peer
	peer = dut
	boot = none
[machine "box"]
	host = 198.18.255.4
	role = dut
	peer = peer
	boot = none
[job "b"]
	tree = t
	machines = dut peer
	workloads = rr
[job "tx1"]
	tree = t
	machines = dut peer
	workloads = tx
[job "tx2"]
	tree = t
	machines = dut peer
	workloads = tx
[job "nb"]
	tree = t
	machines = box peer
	workloads = tx
[job "other"]
	tree = tarball
	machines = dut peer
	workloads = rr
CONF
export KLAB_DB=$SCRATCH/klab.db
sql() { sqlite3 -batch "$SCRATCH/klab.db" "$1"; }

test_expect_success 'bad input: each a clear error, exit 1, nothing stored' '
	"$KLAB" db init >/dev/null &&
	test_expect_code 1 "$KLAB" bisect start --tree t --good HEAD --bad HEAD --workload rr 2>e1 &&
	test_grep "good .HEAD. and bad .HEAD. are the same commit" e1 &&
	test_expect_code 1 "$KLAB" bisect start --tree t --good HEAD --bad HEAD~3 --workload rr 2>e2 &&
	test_grep "bad .HEAD~3. does not descend from good .HEAD. in tree .t." e2 &&
	test_expect_code 1 "$KLAB" bisect start --tree t --good side --bad HEAD --workload rr 2>e2b &&
	test_grep "bad .HEAD. does not descend from good .side." e2b &&
	test_expect_code 1 "$KLAB" bisect start --tree t --good HEAD~3 --bad nosuch --workload rr 2>e3 &&
	test_grep "the bad .nosuch. is not a commit there" e3 &&
	test_expect_code 1 "$KLAB" bisect start --tree t --good HEAD~3 --bad HEAD --workload nosuch 2>e4 &&
	test_grep "unknown workload .nosuch." e4 &&
	test_expect_code 1 "$KLAB" bisect start --tree tarball --good a --bad b --workload rr 2>e5 &&
	test_grep "tree .tarball. has no git history" e5 &&
	test_expect_code 1 "$KLAB" bisect start --tree nosuch --good a --bad b --workload rr 2>e6 &&
	test_grep "no tree .nosuch. in the config" e6 &&
	test_expect_code 2 "$KLAB" bisect start --tree t --good a 2>e7 &&
	test "$(sql "SELECT count(*) FROM bisections")" = 0
'

test_expect_success 'the job that measures the commits: found, or each wrong one a clear error' '
	test_expect_code 1 "$KLAB" bisect start --tree t --good HEAD~8 --bad HEAD --workload tx 2>j1 &&
	test_grep "jobs .tx1. and .tx2. both run workload .tx. on tree .t.: name one with --job" j1 &&
	test_expect_code 1 "$KLAB" bisect start --tree t --good HEAD~8 --bad HEAD --workload tx --job nb 2>j2 &&
	test_grep "job .nb.: its dut .box. has boot = none and cannot boot the commits of a bisection" j2 &&
	test_expect_code 1 "$KLAB" bisect start --tree t --good HEAD~8 --bad HEAD --workload rr --job other 2>j3 &&
	test_grep "job .other. builds tree .tarball., not .t." j3 &&
	test_expect_code 1 "$KLAB" bisect start --tree t --good HEAD~8 --bad HEAD --workload tx --job b 2>j4 &&
	test_grep "job .b. does not run workload .tx." j4 &&
	test_expect_code 1 "$KLAB" bisect start --tree t --good HEAD~8 --bad HEAD --workload rr --job nosuch 2>j5 &&
	test_grep "no job .nosuch. in the config" j5 &&
	test "$(sql "SELECT count(*) FROM bisections")" = 0
'

test_expect_success 'a metric the workload does not produce (in its stored runs)' '
	sql "INSERT INTO runs (uid, workload, created) VALUES (\"u1\", \"rr\", 0);
	     INSERT INTO metrics (run_id, name, value) VALUES (1, \"tps\", 5)" &&
	test_expect_code 1 "$KLAB" bisect start --tree t --good HEAD~8 --bad HEAD --workload rr --metric nosuch 2>e8 &&
	test_grep "workload .rr. does not produce metric .nosuch. (none in its 1 stored runs)" e8 &&
	test "$(sql "SELECT count(*) FROM bisections")" = 0
'

test_expect_success 'start queues it with the 8 commits of good..bad; show, list, cancel' '
	"$KLAB" bisect start --tree t --good HEAD~8 --bad HEAD --workload rr --metric tps >o &&
	test_grep "bisection 1 queued" o &&
	test "$(sql "SELECT state || \" \" || json_array_length(json_extract(spec, \"\$.commits\")) FROM bisections")" = "queued 8" &&
	test "$(sql "SELECT json_extract(spec, \"\$.job\") || \" \" || json_extract(spec, \"\$.subjects[7]\") FROM bisections")" = "b commit 9" &&
	"$KLAB" bisect show 1 --json >s.json &&
	python3 -c "import json; j = json.load(open(\"s.json\")); assert j[\"commits\"] == 8 and j[\"state\"] == \"queued\" and j[\"steps\"] == [], j" &&
	test_expect_code 1 "$KLAB" bisect show --mail 1 2>m1 &&
	test_grep "bisection 1 names no commit: queued" m1 &&
	"$KLAB" bisect list --csv >l.csv && test "$(wc -l <l.csv)" = 2 &&
	sql "INSERT INTO jobs (name, state, spec, created, bisection_id, bisect_seq) VALUES (\"b\", \"queued\", \"{}\", 0, 1, 0)" &&
	"$KLAB" bisect cancel 1 >c && test_grep "bisection 1 cancelled" c &&
	test "$(sql "SELECT state FROM jobs WHERE bisection_id = 1")" = cancelled &&
	test_expect_code 1 "$KLAB" bisect cancel 1 2>e9 && test_grep "already cancelled" e9 &&
	test_expect_code 1 "$KLAB" bisect run 1 >r1 2>&1 && test_grep "bisection 1 is cancelled already" r1 &&
	test_expect_code 1 "$KLAB" bisect run 99 2>r2 && test_grep "no bisection 99" r2
'

test_expect_success 'share = TREE: a git tree of another tree'\''s history; anything else is refused by name' '
	cp "$KLAB_CONFIG" share.conf &&
	printf "[tree \"fork\"]\n\tgit = %s\n\tshare = t\n" "$SCRATCH/tree" >>share.conf &&
	"$KLAB" config check share.conf &&
	printf "[tree \"bad1\"]\n\tgit = %s\n\tshare = nosuch\n" "$SCRATCH/tree" >s1.conf &&
	test_must_fail "$KLAB" config check s1.conf 2>s1 &&
	test_grep "s1.conf:.*share .nosuch. is not a \[tree\]" s1 &&
	printf "[tree \"bad2\"]\n\ttarball = %s\n\tshare = linux-source-6.1\n" "$SCRATCH/tar/linux.tar.xz" >s2.conf &&
	test_must_fail "$KLAB" config check s2.conf 2>s2 &&
	test_grep "share = linux-source-6.1 needs a git tree of another tree.s history" s2 &&
	cat share.conf >s3.conf &&
	printf "[tree \"bad3\"]\n\tgit = %s\n\tshare = fork\n" "$SCRATCH/tree" >>s3.conf &&
	test_must_fail "$KLAB" config check s3.conf 2>s3 &&
	test_grep "share .fork. shares tree .t. itself: share that one" s3
'

test_done
