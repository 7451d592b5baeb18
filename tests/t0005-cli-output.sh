#!/bin/bash
test_description='the klab command line from its tables: --help of every command, --json and --csv of every listing, the man pages'
. "$(dirname "$0")/lib.sh"

GEN=$SRCDIR/tests/data/stats/gen.py
k() { "$KLAB" --db "$SCRATCH/db.sqlite" "$@"; }

# Every command and subcommand; each must answer --help from its table.
COMMANDS="lab up --qemu|lab down --qemu|lab status --qemu|config check|config show|db init|db info|machines|machine trust|machine show|machine drain|machine undrain|machine repair|lab up|lab down|lab status|series show|series import|series list|kernels list|kernels show|kernels build|kernels gc|submit|run|jobs|job show|job log|cancel|schedule list|bisect start|bisect show|bisect list|bisect cancel|bisect run|lab power-cycle|query|compare|history|report|help|version"

test_expect_success 'klab CMD [SUB] --help: exit 0, the usage of that command on stdout, nothing on stderr' '
	IFS="|" && for c in $COMMANDS; do
		IFS=" " && "$KLAB" $c --help >out 2>err || { echo "klab $c --help failed"; return 1; }
		test_grep "^usage: klab $c" out && test ! -s err || { echo "klab $c --help"; cat out err; return 1; }
		case "$c" in *--qemu) ;; *) "$KLAB" help $c >out2 && test_cmp out out2 || return 1;; esac
		IFS="|"
	done
'

test_expect_success 'klab kernels build --help lists its options from the table' '
	"$KLAB" kernels build --help >out &&
	test_grep "^      --series-id ID  " out &&
	test_grep "^      --local-patch FILE" out &&
	test_grep "^usage: klab kernels build \[--tree NAME\]" out
'

test_expect_success 'a family without a subcommand lists them; an unknown one is a usage error' '
	"$KLAB" job --help >out &&
	test_grep "^  show  *a job" out && test_grep "^  log  *a job" out &&
	test_expect_code 2 "$KLAB" job frob 2>err &&
	test_grep "^klab job: unknown subcommand .frob. (show, log)" err
'

test_expect_success 'an unknown option is exit 2 naming the command and the option' '
	IFS="|" && for c in $COMMANDS; do
		IFS=" " && test_expect_code 2 "$KLAB" $c --bogus 2>err >out || { echo "klab $c --bogus"; return 1; }
		test_grep "^klab ${c% --qemu}: unknown option .--bogus.$" err || return 1
		IFS="|"
	done
'

test_expect_success 'bad values: the option, the value and what was wanted' '
	test_expect_code 2 "$KLAB" jobs --limit 0 2>err &&
	test_grep "^klab jobs: option .--limit.: .0. is not a number from 1 to 100000$" err &&
	test_expect_code 2 "$KLAB" kernels gc --older-than soon 2>err &&
	test_grep "^klab kernels gc: option .--older-than.: .soon. is not a duration" err &&
	test_expect_code 2 "$KLAB" query --side C 2>err &&
	test_grep "^klab query: option .--side.: .C. is not A or B$" err &&
	test_expect_code 2 "$KLAB" jobs --json --csv 2>err &&
	test_grep "options .--json. and .--csv. exclude each other" err &&
	test_expect_code 2 "$KLAB" --csv job show 1 2>err &&
	test_grep "^klab job show: --csv is for listings" err
'

test_expect_success 'the man pages are what the tables produce (make man)' '
	"$KLAB" help --man >klab.1 &&
	test_cmp "$SRCDIR/docs/man/klab.1" klab.1 &&
	"$KLABD" --man >klabd.8 &&
	test_cmp "$SRCDIR/docs/man/klabd.8" klabd.8 &&
	test_grep "^\.SS klab kernels build$" klab.1 &&
	test_grep "^\\\\fB\\\\-\\\\-series\\\\-id\\\\fR \\\\fIID\\\\fR$" klab.1
'

cat >klab.conf <<EOF
[lab]
	db = $SCRATCH/db.sqlite
[machine "dut1"]
	host = 198.18.0.1
	role = dut
	boot = none
[machine "peer1"]
	host = 198.18.0.2
	role = peer
	boot = none
[profile "a"]
[profile "b"]
[workload "rr"]
	type = udp_rr
[job "nightly-rr"]
	workloads = rr
	machines = dut1 peer1
	profile_a = a
	profile_b = b
[schedule "nightly"]
	cron = 0 3 * * *
	job = nightly-rr
EOF

test_expect_success 'set up: a job with runs and steps, a series, nightly results, a drained machine' '
	k db init >/dev/null &&
	python3 "$GEN" job | sqlite3 db.sqlite &&
	python3 "$GEN" nightly | sqlite3 db.sqlite &&
	sqlite3 db.sqlite "INSERT INTO steps (job_id, key, name, state, attempts, started, finished, error) VALUES
		(1, \"intake\", \"intake\", \"done\", 1, 1764633600.25, 1764633601.5, NULL),
		(1, \"build:A\", \"build\", \"failed\", 2, 1764633602, 1764633700, \"make: \"\"bzImage\"\", failed,
	second line\")" &&
	sqlite3 db.sqlite "UPDATE jobs SET error = \"a \"\"quoted\"\", comma\\back\" WHERE id = 1" &&
	k db rebuild-summaries >/dev/null &&
	"$KLAB" series import "$SHARED/seeds/000_951f765891bfd14f.txt" >/dev/null 2>&1 &&
	"$KLAB" machine drain dut1 --reason "fan, \"noise\"" >/dev/null
'

# listing name, the command, whether its CSV records are the JSON array's elements
LISTINGS="jobs|machines|kernels list|schedule list|series list|job log 1|query --job 1|history udp_rr_500 tps"

test_expect_success 'every listing: JSON parses, CSV parses (header + records), the same rows, same field values' '
	IFS="|" && for c in $LISTINGS; do
		IFS=" " &&
		"$KLAB" $c --json >l.json && "$KLAB" $c --csv >l.csv && "$KLAB" --json $c >g.json &&
		"$KLAB" $c >l.txt || { echo "klab $c"; return 1; }
		python3 - "$c" <<-\EOF || return 1
		import csv, json, re, sys
		cmd = sys.argv[1]
		d = json.load(open("l.json"))
		g = json.load(open("g.json"))
		rows = list(csv.DictReader(open("l.csv", newline="")))
		assert isinstance(d, list) and d, (cmd, d)
		if cmd.startswith("history"):
		    cps = lambda s, i: next(({"change_pct": c["change_pct"], "p": c["p"], "alert": c["alert"]}
		                             for c in s["changepoints"] if c["idx"] == i), {})
		    d = [dict(p, tree=s["tree"], machines=s["machines"], workload=s["workload"], metric=s["metric"],
		              **cps(s, p["idx"])) for s in d for p in s["points"]]
		    assert sum(1 for p in d if "change_pct" in p) == 1, d
		assert len(rows) == len(d), (cmd, len(rows), len(d))
		iso = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
		for r, o in zip(rows, d):
		    for k, v in r.items():
		        j = o.get(k)
		        if j is None:
		            assert v == "", (cmd, k, v)
		        elif isinstance(j, bool):
		            assert v == ("true" if j else "false"), (cmd, k, v, j)
		        elif isinstance(j, (int, float)):
		            assert float(v) == j or k == "age_s", (cmd, k, v, j)
		        elif isinstance(j, str):
		            assert v == j, (cmd, k, v, j)
		        if k in ("time", "created", "started", "finished", "state_since", "last_fire", "next_fire") and v:
		            assert iso.match(v), (cmd, k, v)
		if not cmd.startswith("jobs"):
		    assert g == json.load(open("l.json")), (cmd, "global --json differs")
		EOF
		IFS="|"
	done
'

test_expect_success 'CSV and JSON numbers are the shortest that read back; text stays as it was' '
	k query --job 1 --metric tps --csv >q.csv &&
	python3 - <<-\EOF &&
	import csv
	def digits(s):
	    m = s.lower().split("e")[0].lstrip("-").replace(".", "").lstrip("0")
	    return len(m)
	n = 0
	for r in csv.DictReader(open("q.csv")):
	    v = r["value"]
	    assert digits(v) <= digits(repr(float(v))), (v, repr(float(v)))
	    n += 1
	assert n == 36, n
	EOF
	! grep -E "[0-9]{16,}" q.csv &&
	test_grep ",2279059.09416," q.csv &&
	k query --job 1 --metric tps >q.txt &&
	test_grep "^ *2 *1 *A 6.1.0-klab-base *dut1 *udp_rr_500 *1 *1 2025-12-02 00:02:00 tps  *2.27906e+06 1/s$" q.txt
'

test_expect_success 'quotes, commas, backslashes and newlines survive JSON and CSV' '
	k jobs --limit 1000 --json >j.json &&
	python3 -c "import json; j = [x for x in json.load(open(\"j.json\")) if x[\"id\"] == 1][0]; assert j[\"error\"] == \"a \\\"quoted\\\", comma\\\\back\", j" &&
	k job log 1 --csv >log.csv &&
	python3 -c "
import csv
r = list(csv.DictReader(open(\"log.csv\", newline=\"\")))
assert [x[\"event\"] for x in r] == [\"started\", \"done\", \"started\", \"failed\"], r
assert r[3][\"error\"] == \"make: \\\"bzImage\\\", failed,\n\tsecond line\", r[3]
assert r[0][\"time\"] == \"2025-12-02T00:00:00Z\" and r[1][\"seconds\"] == \"1.25\", r[:2]" &&
	"$KLAB" machines --csv >m.csv &&
	test_grep "^dut1,198.18.0.1,22,dut,none,drained,[0-9T:Z-]*,\"fan, \"\"noise\"\"\"," m.csv
'

test_expect_success 'an empty listing: [] in JSON, the header alone in CSV' '
	k jobs --state nosuch --json >e.json &&
	test "$(tr -d " \n" <e.json)" = "[]" &&
	k jobs --state nosuch --csv >e.csv &&
	test "$(cat e.csv)" = "id,name,state,steps_done,steps_total,created,started,finished,age_s,duration_s,dut,peer,schedule,error,pid" &&
	k history nosuch tps --csv >h.csv &&
	test "$(wc -l <h.csv)" = 1
'

test_expect_success 'show commands and the other commands speak --json through json-c' '
	k --json job show 1 >s.json &&
	python3 -c "import json; j = json.load(open(\"s.json\")); assert j[\"id\"] == 1 and j[\"created\"].endswith(\"Z\") and len(j[\"steps\"]) == 2, j" &&
	k --json db init >i.json &&
	python3 -c "import json; j = json.load(open(\"i.json\")); assert j[\"schema_version\"] > 0, j" &&
	"$KLAB" --json config check >c.json &&
	python3 -c "import json; j = json.load(open(\"c.json\")); assert j[\"ok\"] is True and j[\"machines\"] == 2, j" &&
	"$KLAB" --json machine show dut1 >ms.json &&
	python3 -c "import json; j = json.load(open(\"ms.json\")); assert j[\"state\"] == \"drained\", j" &&
	"$KLAB" machine undrain dut1 --json >u.json &&
	python3 -c "import json; j = json.load(open(\"u.json\")); assert j == {\"machine\": \"dut1\", \"state\": \"free\"}, j"
'
test_done
