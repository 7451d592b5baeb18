#!/bin/bash
test_description='klab compare: a job and two kernels from a real sqlite database, checked against scipy'
. "$(dirname "$0")/lib.sh"

GEN=$SRCDIR/tests/data/stats/gen.py
# Debian's python3 has scipy; a pyenv python3 first in PATH may not.
PY=python3
for p in python3 /usr/bin/python3; do
	if "$p" -c 'import scipy.stats' 2>/dev/null; then
		PY=$p
		test_set_prereq SCIPY
		break
	fi
done
k() { "$KLAB" --db "$SCRATCH/db.sqlite" "$@"; }
sq() { sqlite3 "$SCRATCH/db.sqlite" "$1"; }

test_expect_success 'set up job 1: 6 boots per side, 3 runs per boot, two workloads' '
	k db init &&
	python3 "$GEN" job >job.sql &&
	python3 "$GEN" values >values.txt &&
	sqlite3 db.sqlite <job.sql &&
	# rows written by SQL: the per-boot summaries are made from them
	k db rebuild-summaries >/dev/null &&
	test "$(sq "SELECT COUNT(*) FROM runs")" = 73
'

test_expect_success 'klab compare JOB prints the table with verdicts, claims, per-CPU and profile' '
	k compare 1 >out &&
	test_grep "comparison of job 1: A = base, B = patched" out &&
	grep " tps \*" out >tps &&
	test_grep "CHANGED" tps &&
	test_grep "claim +4.9%: consistent" tps &&
	grep " cpu_us_per_op \*" out >cost &&
	test_grep "CHANGED" cost &&
	test_grep "claim -15.0%: consistent" cost &&
	grep " udp.SndbufErrors" out >err &&
	test_grep "EQUIVALENT" err &&
	grep " cpu_busy_pct" out >busy &&
	test_grep "DESCRIPTIVE" busy &&
	test_grep " pp " busy &&
	grep " tx_pps" out >tx &&
	test_grep "INCONCLUSIVE(+" tx &&
	test_grep "^  all .*12.0-> 18.5   +6.5" out &&
	test_grep "  31.00    9.00   -22.00  queued_spin_lock_slowpath" out
'

test_expect_success 'comparisons are stored, and a second run replaces them' '
	n=$(sq "SELECT COUNT(*) FROM comparisons WHERE job_id = 1") &&
	test "$n" -gt 20 &&
	k compare 1 >/dev/null &&
	test "$(sq "SELECT COUNT(*) FROM comparisons WHERE job_id = 1")" = "$n" &&
	test "$(sq "SELECT verdict || \" \" || claim FROM comparisons WHERE job_id = 1 AND metric = \"tps\"")" = "CHANGED consistent" &&
	test "$(sq "SELECT verdict || \" \" || unit FROM comparisons WHERE metric = \"cpu0.soft\"")" = "DESCRIPTIVE pp" &&
	test "$(sq "SELECT change_pct FROM comparisons WHERE metric = \"cpu0.soft\"")" = 6.5 &&
	test "$(sq "SELECT extra_boots > 0 FROM comparisons WHERE metric = \"tx_pps\"")" = 1
'

test_expect_success 'the warm-up run (seq 0, value 1.0) is not in the boot values' '
	want=$(awk "\$1 == \"udp_rr_500\" && \$2 == \"tps\" && \$3 == \"A\" { s = 0; for (i = 4; i <= NF; i++) s += \$i; printf \"%.6f\", s / (NF - 3) }" values.txt) &&
	got=$(sq "SELECT printf(\"%.6f\", mean_a) FROM comparisons WHERE job_id = 1 AND metric = \"tps\"") &&
	echo "want $want got $got" &&
	awk -v a="$want" -v b="$got" "BEGIN { d = a - b; exit !(d < 1e-3 && d > -1e-3) }"
'

test_expect_success SCIPY 'change, CI, Welch p, MWU p, df and Holm agree with scipy' '
	k compare 1 --json >c.json &&
	cat >check.py <<-\EOF &&
	import json, math, sys
	import numpy as np
	from scipy import stats
	vals = {}
	for line in open("values.txt"):
	    w, m, side, *v = line.split()
	    vals[(w, m, side)] = [float(x) for x in v]
	doc = json.load(open("c.json"))
	checked = 0
	heads = []
	for r in doc["comparisons"]:
	    key = (r["workload"], r["metric"])
	    if r["verdict"] == "DESCRIPTIVE" or key + ("A",) not in vals:
	        continue
	    a, b = vals[key + ("A",)], vals[key + ("B",)]
	    if min(a + b) <= 0:
	        continue
	    la, lb = np.log(a), np.log(b)
	    t = stats.ttest_ind(lb, la, equal_var=False)
	    va, vb = la.var(ddof=1) / len(a), lb.var(ddof=1) / len(b)
	    se = math.sqrt(va + vb)
	    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
	    d = lb.mean() - la.mean()
	    q = stats.t.ppf(0.975, df)
	    want = {"change_pct": 100 * math.expm1(d), "ci_lo": 100 * math.expm1(d - q * se),
	            "ci_hi": 100 * math.expm1(d + q * se), "p_welch": t.pvalue, "t": t.statistic, "df": df,
	            "p_mwu": stats.mannwhitneyu(a, b, method="exact").pvalue}
	    for f, w in want.items():
	        g = r[f]
	        if not abs(g - w) <= 1e-7 * abs(w) + 1e-9:
	            sys.exit("%s %s: %s %r, scipy %r" % (key[0], key[1], f, g, w))
	        checked += 1
	    if r["headline"]:
	        heads.append((r["p_welch"], r["p_holm"]))
	# Holm by hand
	ps = sorted(p for p, _ in heads)
	adj, run = {}, 0
	for i, p in enumerate(ps):
	    run = max(run, min(1, (len(ps) - i) * p))
	    adj[p] = run
	for p, h in heads:
	    if abs(adj[p] - h) > 1e-12 * max(1, h):
	        sys.exit("holm: p %r adjusted %r, want %r" % (p, h, adj[p]))
	print("checked", checked, "values and", len(heads), "Holm-adjusted p values")
	if checked < 20 or len(heads) < 4:
	    sys.exit("too few checks")
	EOF
	"$PY" check.py
'

test_expect_success 'klab compare --stored prints the stored rows without recomputing' '
	k compare --stored 1 >stored &&
	grep " tps \*" stored >tps2 &&
	test_grep "CHANGED" tps2 &&
	test_grep "claim" tps2 &&
	test_grep "queued_spin_lock_slowpath" stored
'

test_expect_success 'klab compare KERNEL_A KERNEL_B by id, release and label gives the job result' '
	k compare 1 --json >job.json &&
	k compare 7 8 --json >ids.json &&
	k compare 6.1.0-klab-base 6.1.0-klab-patched --json >rel.json &&
	k compare base patched >labels.txt &&
	test_grep "comparison of kernels: A = base, B = patched" labels.txt &&
	for f in job ids rel; do
		python3 -c "import json,sys; d = json.load(open(sys.argv[1])); print([\"%.9f\" % r[\"change_pct\"] for r in d[\"comparisons\"] if r[\"metric\"] == \"tps\"][0])" $f.json >$f.tps || return 1
	done &&
	test_cmp job.tps ids.tps &&
	test_cmp job.tps rel.tps
'

test_expect_success 'a larger threshold turns the +4.7% tps into EQUIVALENT' '
	k compare 1 --threshold 10 --json >t10.json &&
	python3 -c "import json; d = json.load(open(\"t10.json\")); r = [r for r in d[\"comparisons\"] if r[\"metric\"] == \"tps\"][0]; assert r[\"verdict\"] == \"EQUIVALENT\" and r[\"threshold_pct\"] == 10, r"
'

test_expect_success 'the per-workload threshold comes from the config' '
	printf "[lab]\n\tdb = %s/db.sqlite\n[workload \"udp_rr_500\"]\n\ttype = udp_rr\n\tthreshold = 10\n" "$SCRATCH" >klab.conf &&
	"$KLAB" compare 1 --json >conf.json &&
	python3 -c "import json; d = json.load(open(\"conf.json\")); t = {r[\"workload\"]: r[\"threshold_pct\"] for r in d[\"comparisons\"] if r[\"metric\"] in (\"tps\", \"tx_pps\")}; assert t == {\"udp_rr_500\": 10, \"udp_tx_64\": 1}, t" &&
	rm klab.conf
'

test_expect_success 'a job is judged by the thresholds of its own spec, before the config and from a bare database' '
	cp db.sqlite spec.sqlite &&
	python3 -c "import json, sqlite3; c = sqlite3.connect(\"spec.sqlite\"); s = json.loads(c.execute(\"SELECT spec FROM jobs WHERE id = 1\").fetchone()[0]); s[\"workloads\"] = [{\"name\": \"udp_tx_64\", \"threshold_pct\": 7.5}]; c.execute(\"UPDATE jobs SET spec = ? WHERE id = 1\", (json.dumps(s),)); c.commit()" &&
	test "$(sqlite3 spec.sqlite "SELECT json_extract(spec, \"\$.workloads[0].threshold_pct\") FROM jobs WHERE id = 1")" = 7.5 &&
	"$KLAB" --db spec.sqlite compare 1 --json >bare.json &&
	python3 -c "import json; d = json.load(open(\"bare.json\")); t = {r[\"workload\"]: r[\"threshold_pct\"] for r in d[\"comparisons\"] if r[\"metric\"] in (\"tps\", \"tx_pps\")}; assert t == {\"udp_rr_500\": 1, \"udp_tx_64\": 7.5}, t" &&
	printf "[lab]\n\tdb = %s/spec.sqlite\n[workload \"udp_tx_64\"]\n\ttype = udp_tx\n\tthreshold = 2\n[workload \"udp_rr_500\"]\n\ttype = udp_rr\n\tthreshold = 10\n" "$SCRATCH" >klab.conf &&
	"$KLAB" compare 1 --json >both.json &&
	python3 -c "import json; d = json.load(open(\"both.json\")); t = {r[\"workload\"]: r[\"threshold_pct\"] for r in d[\"comparisons\"] if r[\"metric\"] in (\"tps\", \"tx_pps\")}; assert t == {\"udp_rr_500\": 10, \"udp_tx_64\": 7.5}, t" &&
	"$KLAB" compare 1 --threshold 3 --json >opt.json &&
	python3 -c "import json; d = json.load(open(\"opt.json\")); assert {r[\"threshold_pct\"] for r in d[\"comparisons\"] if r[\"metric\"] in (\"tps\", \"tx_pps\")} == {3}" &&
	rm klab.conf
'

test_expect_success 'a workload filter replaces only that workload'"'"'s stored rows' '
	k compare 1 >/dev/null &&
	n=$(sq "SELECT COUNT(*) FROM comparisons WHERE job_id = 1") &&
	k compare 1 --workload udp_tx_64 --json >tx.json &&
	python3 -c "import json; d = json.load(open(\"tx.json\")); assert {r[\"workload\"] for r in d[\"comparisons\"]} == {\"udp_tx_64\"}" &&
	test "$(sq "SELECT COUNT(*) FROM comparisons WHERE job_id = 1")" = "$n"
'

test_expect_success 'the claim check says only what the data can tell' '
	sq "INSERT INTO expectations (series_id, patch_seq, metric, direction, lo_pct, hi_pct, text)
	    SELECT series_id, 0, \"tx_pps\", \"higher\", 5, 5, \"+5% pps\" FROM jobs WHERE id = 1" &&
	k compare 1 >claims.out &&
	grep " tx_pps" claims.out >tx &&
	test_grep "INCONCLUSIVE" tx &&
	test_grep "(claim +5.0%: not testable at this precision (95% CI +-[0-9.]*%))" tx &&
	test "$(sq "SELECT claim FROM comparisons WHERE job_id = 1 AND metric = \"tx_pps\"")" = untestable &&
	sq "UPDATE expectations SET lo_pct = 50, hi_pct = 50, before = NULL, after = NULL
	    WHERE metric IN (\"tps\", \"throughput\")" &&
	k compare 1 --workload udp_rr_500 >claims.out &&
	grep " tps \*" claims.out >tps &&
	test_grep "(claim +50.0%: smaller than claimed)" tps &&
	! grep -i "nan" claims.out &&
	sq "DELETE FROM expectations WHERE metric = \"tx_pps\" AND lo_pct = 5"
'

test_expect_success 'errors name what is wrong' '
	test_must_fail k compare 99 2>err &&
	test_grep "no job 99" err &&
	test_must_fail k compare nosuch 8 2>err &&
	test_grep "no runs of kernel .nosuch." err &&
	test_must_fail k compare no-such-job 2>err &&
	test_grep "no job .no-such-job." err &&
	sq "INSERT INTO jobs (id, name, state, spec, created) VALUES (2, \"half\", \"done\", \"{}\", 0)" &&
	sq "INSERT INTO runs (uid, job_id, side, workload, created) VALUES (\"h1\", 2, \"A\", \"w\", 0)" &&
	test_must_fail k compare 2 2>err &&
	test_grep "no runs on side B" err &&
	test_expect_code 2 k compare 2>err &&
	test_expect_code 2 k compare 1 --threshold abc 2>err &&
	test_grep "option .--threshold.: .abc. is not a percentage" err &&
	test_expect_code 2 k compare 1 --bogus 2>err &&
	test_grep "unknown option .--bogus." err &&
	test_expect_code 2 k compare a b c 2>err
'

test_done
