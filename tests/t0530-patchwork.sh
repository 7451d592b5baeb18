#!/bin/bash
test_description='klabd watches a real Patchwork 3.1.3: series in through intake, jobs on the netns lab, checks out; killed, 500s, a malformed event'
# run.sh: exclusive
. "$(dirname "$0")/lib.sh"
. "$SRCDIR/tests/data/jobs/lab.sh"
. "$SRCDIR/tests/data/patchwork/pw.sh"

pw_prereq
job_lab_prereq
JOB_BOOTS=2 JOB_RUNS=2 JOB_WARMUP=0
job_lab_up 30

# the server and the proxy write their pids beside $SCRATCH: test_done removes $SCRATCH before the cleanups run
PIDS=$SCRATCH.pids
rm -f "$PIDS"
test_cleanup "test ! -f '$PIDS' || kill \$(cat '$PIDS') 2>/dev/null; rm -f '$PIDS'"
pw_setup || { echo "Bail out! patchwork did not set up"; exit 1; }
pw_start || { echo "Bail out! patchwork did not start"; exit 1; }
echo "$PW_PID" >>"$PIDS"
mkdir -p proxy
python3 "$SRCDIR/tests/data/patchwork/proxy.py" proxy/port "$PW_URL" proxy &
echo $! >>"$PIDS"
test_wait_until 20 "test -s proxy/port" || { echo "Bail out! the proxy did not start"; exit 1; }
PROXY=http://127.0.0.1:$(cat proxy/port)

printf '%s\n' "$PW_TOKEN" >token && chmod 600 token
sed -i "s|^\[lab\]$|[lab]\n\twork_dir = $SCRATCH/work|" "$KLAB_CONFIG"
cat >>"$KLAB_CONFIG" <<EOF
[patchwork "netdev"]
	url = $PROXY
	project = netdev
	token_file = $SCRATCH/token
	job = ab
	paths = net/** drivers/net/** include/net/**
	interval = 1s
	timeout = 10s
	context = klab-perf
	report_url = https://klab.example.org/reports
	max_lag = 1s
	since = 2000-01-01T00:00:00
EOF

# the seeds as mails: seed 003 (two patches and a cover letter, net/ and drivers/net/) as v1
# and v2, and a one-patch series that touches Documentation/ only
"$KLAB" series show --json "$SHARED/seeds/003_1ddf0ef0bfe7a1c4.txt" >s003.json &&
python3 "$SRCDIR/tests/data/patchwork/mkmail.py" s003.json mail-v1 1 udpwake &&
python3 "$SRCDIR/tests/data/patchwork/mkmail.py" s003.json mail-v2 2 udpwake || { echo "Bail out! no mails"; exit 1; }
python3 - <<'PY'
import json
diff = ("diff --git a/Documentation/networking/udp.rst b/Documentation/networking/udp.rst\n"
        "index 1111111..2222222 100644\n--- a/Documentation/networking/udp.rst\n"
        "+++ b/Documentation/networking/udp.rst\n@@ -1,3 +1,4 @@\n UDP\n ===\n+Wakeups of completions are batched.\n \n")
json.dump({"subject": "docs: udp: say how wakeups are batched", "author": "Doc Writer <doc@example.org>",
           "cover": None, "patches": [{"seq": 1, "subject": "docs: udp: say how wakeups are batched",
           "author": "Doc Writer <doc@example.org>", "body": "Say it.\n\nSigned-off-by: Doc Writer <doc@example.org>\n",
           "diffstat": " Documentation/networking/udp.rst | 1 +\n 1 file changed, 1 insertion(+)", "diff": diff}]},
          open("docs.json", "w"))
PY
python3 "$SRCDIR/tests/data/patchwork/mkmail.py" docs.json mail-docs 1 udpdocs || { echo "Bail out! no mails"; exit 1; }
# a patch Patchwork takes and klab cannot read: a new file whose hunk takes old lines away
python3 - <<'PY'
import json
diff = ("diff --git a/net/ipv4/udp_new.c b/net/ipv4/udp_new.c\nnew file mode 100644\n"
        "index 0000000..1111111\n--- /dev/null\n+++ b/net/ipv4/udp_new.c\n@@ -1,2 +0,0 @@\n-a\n-b\n")
json.dump({"subject": "udp: a new file that takes lines away", "author": "Odd Sender <odd@example.org>",
           "cover": None, "patches": [{"seq": 1, "subject": "udp: a new file that takes lines away",
           "author": "Odd Sender <odd@example.org>", "body": "Odd.\n\nSigned-off-by: Odd Sender <odd@example.org>\n",
           "diffstat": " net/ipv4/udp_new.c | 2 --\n 1 file changed, 2 deletions(-)", "diff": diff}]},
          open("odd.json", "w"))
PY
python3 "$SRCDIR/tests/data/patchwork/mkmail.py" odd.json mail-odd 1 udpodd || { echo "Bail out! no mails"; exit 1; }

# checks of a patch as the API returns them, one "context state" line each
checks() { curl -sf "$PW_URL/api/1.3/patches/$1/checks/" | python3 -c '
import json, sys
for c in json.load(sys.stdin): print(c["context"], c["state"])'; }
# the patch ids of patchwork series $1
patch_ids() { pw_api "series/$1/" | python3 -c 'import json,sys; print(" ".join(str(p["id"]) for p in json.load(sys.stdin)["patches"]))'; }
watch_state() { sql "SELECT state FROM pw_series WHERE pw_id = $1"; }

test_expect_success 'the config takes the [patchwork] section and prints it back' '
	"$KLAB" config check &&
	"$KLAB" config show >show &&
	test_grep "^\[patchwork \"netdev\"\]" show &&
	test_grep "paths = net/\*\* drivers/net/\*\* include/net/\*\*" show &&
	test_grep "context = klab-perf" show &&
	sed "s/context = klab-perf/context = klab perf/" "$KLAB_CONFIG" >bad.conf &&
	test_must_fail "$KLAB" --config bad.conf config check 2>err &&
	test_grep ".context. may hold letters, digits" err
'

test_expect_success 'a token file others can read is refused, naming the file, never the token' '
	cp token open-token && chmod 644 open-token &&
	sed "s|token_file = .*|token_file = $SCRATCH/open-token|" "$KLAB_CONFIG" >open.conf &&
	{ timeout 20 "$KLABD" -d -c open.conf -D "$SCRATCH/open.db" >open.log 2>&1 & pid=$!; } &&
	test_wait_until 15 "grep -q \"readable by others\" open.log" &&
	kill $pid; wait $pid;
	test_grep "token file .*open-token. is readable by others (mode 0644)" open.log &&
	! grep -F "$PW_TOKEN" open.log
'

test_expect_success 'patchwork takes the mails: two complete series' '
	for f in mail-v1/*.eml mail-docs/*.eml; do pw_mail "$f" || return 1; done &&
	pw_api "series/" >series.json &&
	python3 -c "import json; s=json.load(open(\"series.json\")); assert len(s)==2 and all(x[\"received_all\"] for x in s), s" &&
	pw_api "events/?category=series-completed" >ev.json &&
	test "$(python3 -c "import json; print(len(json.load(open(\"ev.json\"))))")" = 2
'

# max_lag is 1 s: klabd starts 2 s after the series completed, so that its pending checks
# say the lab is behind however fast it answers (the CI run of 6a0f83d posted within 1 s)
test_expect_success 'klabd sees them, filters the docs series with the reason, queues one job; killed right after its first post' '
	sleep 2 &&
	{ KLAB_TEST_PW_KILL=after-post "$KLABD" -d -j 1 >klabd1.log 2>&1 & pid=$!; } &&
	test_wait_until 120 "! kill -0 $pid 2>/dev/null";
	wait $pid; rc=$? &&
	test $rc = 137 &&
	test "$(watch_state 1)" = queued && test "$(watch_state 2)" = filtered &&
	test_grep "touches no path of net/\*\* drivers/net/\*\* include/net/\*\* (it touches Documentation/networking/udp.rst)" \
		klabd1.log &&
	test "$(sql "SELECT count(*) FROM jobs")" = 1 &&
	test "$(sql "SELECT count(*) FROM pw_checks WHERE attempts = 1 AND posted IS NULL")" = 1 &&
	p1=$(patch_ids 1 | cut -d" " -f1) && test "$(checks $p1)" = "klab-perf pending"
'

test_expect_success 'restarted, it finds the check it posted, posts the rest once, and the job runs' '
	{ "$KLABD" -d -j 1 >klabd2.log 2>&1 & echo $! >klabd.pid; } &&
	test_wait_until 60 "test \"\$(sql \"SELECT count(*) FROM pw_checks WHERE state = '"'"'pending'"'"' AND posted IS NOT NULL\")\" = 2" &&
	test_grep "the pending check of patch .* is on the server already; not posted again" klabd2.log &&
	test "$(sql "SELECT count(*) FROM pw_checks WHERE found = 1")" = 1 &&
	for p in $(patch_ids 1); do test "$(checks $p)" = "klab-perf pending" || return 1; done &&
	curl -sf "$PW_URL/api/1.3/patches/$(patch_ids 1 | cut -d" " -f2)/checks/" >pending.json &&
	python3 -c "
import json; c = json.load(open(\"pending.json\"))[0]
assert c[\"description\"].startswith(\"queued as job 1: place 1 of 1\"), c
assert \"the lab is behind\" in c[\"description\"] and \"max_lag 1s\" in c[\"description\"], c
assert c[\"target_url\"] == \"https://klab.example.org/reports/job-1.html\", c" &&
	test_wait_until 120 "test \"\$(watch_state 1)\" = running"
'

test_expect_success 'v2 arrives while v1 runs, through 500s and a malformed event: v1 is cancelled and says so' '
	echo 3 >proxy/fail && touch proxy/inject &&
	for f in mail-v2/*.eml; do pw_mail "$f" || return 1; done &&
	test_wait_until 120 "test \"\$(watch_state 3)\" = queued" &&
	test_wait_until 60 "test \"\$(watch_state 1)\" = superseded" &&
	test "$(grep -c " 500$" proxy/proxy.log)" = 3 &&
	test_grep "trying again in 1000 ms (attempt 2 of 5)" klabd2.log &&
	test_grep "patchwork event 999999: field .payload.series.id. is missing" klabd2.log &&
	test_grep "injected a malformed event" proxy/proxy.log &&
	test_wait_until 120 "test \"\$(sql \"SELECT state FROM jobs WHERE id = 1\")\" = cancelled" &&
	test_wait_until 60 "test \"\$(sql \"SELECT count(*) FROM pw_checks WHERE pw_series = 1 AND state = '"'"'warning'"'"' AND posted IS NOT NULL\")\" = 2" &&
	for p in $(patch_ids 1); do
		curl -sf "$PW_URL/api/1.3/patches/$p/checks/" >c.json &&
		python3 -c "
import json; c = [x for x in json.load(open(\"c.json\")) if x[\"state\"] == \"warning\"]
assert len(c) == 1 and c[0][\"description\"] == \"not tested: superseded by v2 (patchwork series 3)\", c" || return 1
	done
'

# the faults of a server, while v2's job runs: its next check's POST reaches the server but the
# answer comes after klab's timeout of 10 s (klab must look before posting again, or post twice),
# the server stopped (SIGSTOP: requests hang until klab's timeout), the server's port refusing
# connections (the proxy killed, then started again on its port)
test_expect_success 'a slow answer to a post, a stopped server, a refused connection: klabd waits and goes on' '
	test_wait_until 120 "test \"\$(sql \"SELECT count(*) FROM pw_checks WHERE pw_series = 3 AND state = '"'"'pending'"'"' AND posted IS NOT NULL\")\" = 2" &&
	echo 14 >proxy/slowpost &&
	pw=$(cat "$SCRATCH/pw/server.pid") && kill -STOP $pw &&
	test_wait_until 60 "grep -q \"events/.*timed out after 10000 ms; trying again\" klabd2.log";
	rc=$?; kill -CONT $pw; test $rc = 0 &&
	port=$(cat proxy/port) && kill $(sed -n 2p "$PIDS") &&
	test_wait_until 60 "grep -q \"127.0.0.1 port $port.*trying again\" klabd2.log" &&
	{ python3 "$SRCDIR/tests/data/patchwork/proxy.py" proxy/port2 "$PW_URL" proxy $port & echo $! >>"$PIDS"; } &&
	test_wait_until 20 "test -s proxy/port2" && test "$(cat proxy/port2)" = $port &&
	test_wait_until 60 "tail -1 proxy/proxy.log | grep -q \" 200$\""
'

test_expect_success 'v2 ends with its final check on every patch, read back through the API' '
	test_wait_until 400 "test \"\$(watch_state 3)\" = done" &&
	test_wait_until 60 "test -n \"\$(sql \"SELECT final FROM pw_series WHERE pw_id = 3\")\"" &&
	for p in $(patch_ids 3); do
		curl -sf "$PW_URL/api/1.3/patches/$p/checks/" >final-$p.json &&
		python3 -c "
import json; c = json.load(open(\"final-$p.json\"))
assert [x[\"state\"] for x in c][0] == \"pending\" and len(c) == 2, c
f = c[1]
assert f[\"state\"] in (\"success\", \"warning\") and f[\"context\"] == \"klab-perf\", f
assert f[\"description\"].startswith(\"no headline worse (wall clock, real): \") or f[\"description\"].startswith(\"1 headline worse (wall clock, real): \"), f
assert \": tps \" in f[\"description\"] or \", tps \" in f[\"description\"], f
assert \"\\n\" not in f[\"description\"] and f[\"target_url\"].endswith(\"/job-2.html\"), f" || return 1
	done &&
	test_grep "slowed a POST by 14 s" proxy/proxy.log &&
	test_grep "looking for the check on the server in 1000 ms before trying again" klabd2.log &&
	test_grep "the post that got no answer went through; not posted again" klabd2.log
'

test_expect_success 'nothing posted twice, nothing missed, the token nowhere' '
	kill $(cat klabd.pid) && test_wait_until 60 "! kill -0 $(cat klabd.pid) 2>/dev/null" &&
	posts=$(grep -c "^POST /api/1.3/patches/[0-9]*/checks/ 201$" proxy/proxy.log) &&
	# 2 v1 pending + 2 v1 superseded + 2 v2 pending + 2 v2 final
	test "$posts" = 8 &&
	test "$(sql "SELECT count(*) FROM pw_checks WHERE posted IS NOT NULL")" = 8 &&
	for p in $(patch_ids 1) $(patch_ids 3) $(patch_ids 2); do checks $p | sed "s/^/patch $p /" || return 1; done >all-checks &&
	test "$(sort all-checks | uniq -d | wc -l)" = 0 &&
	test "$(wc -l <all-checks)" = 8 &&
	test "$(checks $(patch_ids 2))" = "" &&
	sqlite3 klab.db .dump >dump.sql &&
	"$KLAB" watch >w.txt && "$KLAB" watch --json >w.json && "$KLAB" watch --csv >w.csv &&
	"$KLAB" watch --checks >wc.txt && "$KLAB" config show >cs.txt &&
	! grep -F "$PW_TOKEN" klabd1.log klabd2.log dump.sql w.txt w.json w.csv wc.txt cs.txt proxy/proxy.log
'

test_expect_success 'klab watch lists what the watcher saw and did, in text, JSON and CSV' '
	test_grep "3 series: 1 filtered out, 0 queued, 0 running, 1 done, 1 other; lag to the final check" w.txt &&
	python3 -c "
import json; w = json.load(open(\"w.json\"))
assert [x[\"state\"] for x in w] == [\"superseded\", \"filtered\", \"done\"], w
assert w[2][\"lag_s\"] > 0 and w[2][\"job\"] == 2 and w[2][\"version\"] == 2, w
assert w[1][\"reason\"].startswith(\"touches no path of\"), w
print(\"# lag of v2: %.1f s\" % w[2][\"lag_s\"])" &&
	head -1 w.csv | grep -q "^watch,series,version,name,submitter,state,reason,job,job_state,outcome,description,completed,seen,final,lag_s" &&
	test "$(wc -l <w.csv)" = 4 &&
	test_grep "found" wc.txt &&
	test_grep "<td>superseded</td>" reports/patchwork.html &&
	test_grep "<a href=\"job-2.html\">job 2</a>" reports/patchwork.html &&
	test_grep "touches no path of net/\*\*" reports/patchwork.html
'

test_expect_success 'a series klab cannot read is not tested, and its patch says why in a warning' '
	pw_mail mail-odd/01.eml &&
	{ "$KLABD" -d -j 1 >klabd3.log 2>&1 & echo $! >klabd.pid; } &&
	test_wait_until 60 "test \"\$(sql \"SELECT count(*) FROM pw_checks WHERE pw_series = 4 AND posted IS NOT NULL\")\" = 1" &&
	kill $(cat klabd.pid) && test_wait_until 60 "! kill -0 $(cat klabd.pid) 2>/dev/null" &&
	test "$(watch_state 4)" = error &&
	test "$(sql "SELECT count(*) FROM jobs")" = 2 &&
	curl -sf "$PW_URL/api/1.3/patches/$(patch_ids 4)/checks/" >odd.json &&
	python3 -c "
import json; c = json.load(open(\"odd.json\"))
assert len(c) == 1 and c[0][\"state\"] == \"warning\" and c[0][\"context\"] == \"klab-perf\", c
d = c[0][\"description\"]
assert d.startswith(\"not tested: the series cannot be read: the mbox\"), d
assert \"net/ipv4/udp_new.c: hunk 1 (@@ -1,2 +0,0 @@) has old lines in a new file\" in d, d
assert \"/patchwork/\" not in d and \"\\n\" not in d, d" &&
	"$KLAB" watch --json >w2.json &&
	python3 -c "
import json; w = json.load(open(\"w2.json\"))
assert w[3][\"state\"] == \"error\" and \"has old lines in a new file\" in w[3][\"reason\"], w[3]"
'

test_done
