#!/bin/bash
test_description='klab calibrate: learn an instrument'"'"'s noise from an A/A job, a one-boot job judged with it, stale on a new key, exported to and imported from a file'
. "$(dirname "$0")/lib.sh"

k() { "$KLAB" --db "$SCRATCH/db.sqlite" "$@"; }
sq() { sqlite3 "$SCRATCH/db.sqlite" "$1"; }

# Job 1: A/A, 12 boots of kernel 1 on dut1 (icount, 2 vCPUs), 2 runs a boot, instructions
# with a boot sd of 20 ppm and a run sd of 5 ppm (fixed seed). Job 2: kernel 1 against
# kernel 2 (+0.5%), one boot a side. Job 3: the same on 4 vCPUs.
gen() {
	python3 - <<'PY'
import math, random
random.seed(7)
si = lambda n: ('{"cpu": {"model": "QEMU TCG CPU", "count": %d}, "kernel": {"cmdline":'
                ' "console=ttyS0 klab.name=dut1 klab.mgmt=198.18.0.2 klab.cpus=%d"}}' % (n, n))
spec = ('{"runs": 2, "warmup_runs": 0, "workloads": [{"name": "udp_rr", "type": "udp_rr",'
        ' "duration_s": 1}]}')
print("INSERT INTO kernels (id, key, variant, created) VALUES (1, 'k1', 'base', 0), (2, 'k2', 'patched', 0);")
for j in (1, 2, 3):
    print("INSERT INTO jobs (id, name, state, spec, created) VALUES (%d, 'aa%d', 'done', '%s', 0);" % (j, j, spec))
boot = run = 0
def add(job, seq, side, kernel, cpus, level):
    global boot, run
    boot += 1
    b = random.gauss(0, 20e-6)
    print("INSERT INTO boots (id, job_id, seq, side, kernel_id, machine, clock, sysinfo, started) VALUES"
          " (%d, %d, %d, '%s', %d, 'dut1', 'icount', '%s', %d);" % (boot, job, seq, side, kernel, si(cpus), boot))
    for r in range(2):
        run += 1
        v = level * math.exp(b + random.gauss(0, 5e-6))
        print("INSERT INTO runs (id, uid, job_id, boot_id, side, kernel_id, workload, seq, machine, clock, created)"
              " VALUES (%d, 'r%d', %d, %d, '%s', %d, 'udp_rr', %d, 'dut1', 'icount', 0);"
              % (run, run, job, boot, side, kernel, r))
        print("INSERT INTO metrics (run_id, name, value, unit, better) VALUES (%d, 'instructions', %r, 'insn', 'lower');"
              % (run, v))
for s in range(12):
    add(1, s, "AB"[s % 2], 1, 2, 1e9)
for job, cpus in ((2, 2), (3, 4)):
    add(job, 0, "A", 1, cpus, 1e9)
    add(job, 1, "B", 2, cpus, 1.005e9)
PY
}

test_expect_success 'set up: an A/A job and two one-boot jobs' '
	k db init >/dev/null &&
	gen >jobs.sql &&
	sqlite3 db.sqlite <jobs.sql &&
	k db rebuild-summaries >/dev/null &&
	test "$(sq "SELECT COUNT(*) FROM runs")" = 32
'

test_expect_success 'uncalibrated: one boot a side is no test' '
	k calibrate list >out &&
	test_grep "no calibrations" out &&
	k compare 2 >out &&
	grep " instructions" out >row &&
	test_grep "INCONCLUSIVE" row &&
	test_must_fail grep "noise from" out
'

test_expect_success 'klab calibrate learn aa1 stores the noise of 12 A/A boots' '
	k calibrate learn aa1 >out &&
	test_grep "dut1 icount udp_rr.instructions: boot sd .* ppm (10 df; run sd .* ppm, 2 runs a boot), 12 boots (12 A/A), jobs 1" out &&
	test "$(sq "SELECT boots || \" \" || boot_df || \" \" || run_df FROM calibrations")" = "12 10.0 12.0" &&
	sd=$(sq "SELECT round(1e6 * sqrt(boot_var)) FROM calibrations") &&
	test "${sd%.0}" -ge 8 && test "${sd%.0}" -le 35 &&
	k calibrate learn 1 >out &&
	test_grep "nothing new" out &&
	test "$(sq "SELECT boot_df FROM calibrations")" = 10.0
'

test_expect_success 'job 2 (one boot a side, +0.5%) is CHANGED with the calibration, and says so' '
	k compare 2 >out &&
	grep " instructions" out >row &&
	test_grep "CHANGED" row &&
	test_grep "(noise from 12 A/A boots, 20[0-9-]* (sd .* ppm, 10 df))" row &&
	k --json compare 2 >c.json &&
	python3 -c "
import json
r = [r for r in json.load(open(\"c.json\"))[\"comparisons\"] if r[\"metric\"] == \"instructions\"][0]
assert r[\"verdict\"] == \"CHANGED\" and r[\"noise\"][\"source\"] == \"calibration\", r
assert r[\"noise\"][\"aa_boots\"] == 12 and r[\"noise\"][\"df\"] == 10, r[\"noise\"]
" &&
	k compare 1 >out &&
	test_must_fail grep "noise from" out &&
	k compare 2 --no-calibration >out &&
	grep " instructions" out >row &&
	test_grep "INCONCLUSIVE" row
'

test_expect_success 'job 3 on 4 vCPUs is another instrument: not calibrated, and the calibration is stale' '
	k compare 3 >out &&
	grep " instructions" out >row &&
	test_grep "INCONCLUSIVE" row &&
	k calibrate list >out &&
	test_grep "STALE: the newest boot of dut1 is on instrument .dut1;icount;QEMU TCG CPU x4" out &&
	k --json calibrate list >l.json &&
	python3 -c "
import json
l = json.load(open(\"l.json\"))
assert len(l) == 1 and l[0][\"stale\"] and l[0][\"boots\"] == 12, l
"
'

test_expect_success 'export and import: another database takes the calibration, its jobs judged with it' '
	k calibrate export cal.json >out &&
	test_grep "1 calibration(s) written to cal.json" out &&
	k2() { "$KLAB" --db "$SCRATCH/db2.sqlite" "$@"; } &&
	k2 db init >/dev/null &&
	sqlite3 db2.sqlite <jobs.sql &&
	k2 db rebuild-summaries >/dev/null &&
	k2 calibrate import cal.json >out &&
	test_grep "1 calibration(s) imported, 0 kept" out &&
	test "$(sqlite3 db2.sqlite "SELECT boots || \" \" || aa_boots || \" \" || boot_df || \" [\" || jobs || \"]\" FROM calibrations")" = "12 12 10.0 []" &&
	test "$(sqlite3 db2.sqlite "SELECT printf(\"%.12e\", boot_var) FROM calibrations")" = \
	     "$(sq "SELECT printf(\"%.12e\", boot_var) FROM calibrations")" &&
	k2 compare 2 >out &&
	grep " instructions" out >row &&
	test_grep "CHANGED" row &&
	test_grep "noise from 12 A/A boots" row &&
	k2 calibrate import cal.json >out &&
	test_grep "0 calibration(s) imported, 1 kept" out &&
	k2 calibrate import --replace cal.json >out &&
	test_grep "1 calibration(s) imported, 0 kept" out &&
	echo "{\"klab_calibrations\": 1, \"rows\": [{\"instrument\": \"x\"}]}" >bad.json &&
	test_must_fail k2 calibrate import bad.json 2>err &&
	test_grep "bad.json: row 1: no .machine. string" err &&
	echo "{\"rows\": []}" >bad2.json &&
	test_must_fail k2 calibrate import bad2.json 2>err &&
	test_grep "bad2.json: not a klab calibration file of version 1" err
'

test_expect_success 'learning needs done jobs; forget deletes' '
	sq "UPDATE jobs SET state = \"failed\" WHERE id = 3" &&
	test_must_fail k calibrate learn 3 2>err &&
	test_grep "cannot learn from job 3: it is failed" err &&
	test_must_fail k calibrate learn nosuch 2>err &&
	test_grep "no job .nosuch." err &&
	test_must_fail k calibrate forget 2>err &&
	k calibrate forget --machine dut1 >out &&
	test_grep "1 calibration(s) deleted" out &&
	test "$(sq "SELECT COUNT(*) FROM calibrations")" = 0
'

test_done
