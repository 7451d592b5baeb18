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
	"$KLAB" bisect show 1 --json >s.json &&
	python3 -c "import json; j = json.load(open(\"s.json\")); assert j[\"commits\"] == 8 and j[\"state\"] == \"queued\" and j[\"steps\"] == [], j" &&
	"$KLAB" bisect list --csv >l.csv && test "$(wc -l <l.csv)" = 2 &&
	"$KLAB" bisect cancel 1 >c && test_grep "bisection 1 cancelled" c &&
	test_expect_code 1 "$KLAB" bisect cancel 1 2>e9 && test_grep "already cancelled" e9
'

test_done
