#!/bin/bash
test_description='a full disk under the database: the job stops with an error that names the file and the cause, nothing stored is lost, and it resumes once there is room'
. "$(dirname "$0")/lib.sh"
. "$SRCDIR/tests/data/jobs/lab.sh"

JOB_BOOTS=1 JOB_RUNS=2 JOB_WARMUP=0
job_lab_prereq
job_lab_up 06
# the database alone on a small file system of its own (tmpfs, 8 MB)
SMALL=$SCRATCH/small
mkdir -p "$SMALL" && mount -t tmpfs -o size=8m klabtest "$SMALL" ||
	{ echo "Bail out! cannot mount a tmpfs on $SMALL"; exit 1; }
test_cleanup "umount '$SMALL'"
sed -i "s#^	db = .*#	db = $SMALL/klab.db#" "$KLAB_CONFIG"
export KLAB_DB=$SMALL/klab.db
sq() { sqlite3 -batch "$SMALL/klab.db" "$1"; }
fill() {	# take every free block of the small file system (dd stops at ENOSPC)
	dd if=/dev/zero of="$SMALL/filler" bs=64k 2>/dev/null
	test "$(df --output=avail "$SMALL" | tail -1)" -lt 64
}

test_expect_success 'a job is submitted and its database has room' '
	"$KLAB" config check &&
	"$KLAB" submit --job ab >out &&
	test_grep "submitted job 1 (ab)" out &&
	sq "SELECT spec FROM jobs WHERE id = 1" >spec.before &&
	sq "SELECT side, profile FROM job_sides WHERE job_id = 1 ORDER BY side" >sides.before &&
	test -s spec.before && test "$(wc -l <sides.before)" = 2
'

test_expect_success 'with the disk full, klab run fails and says which file is full' '
	fill &&
	test_must_fail "$KLAB" run 1 >run1.out 2>run1.err &&
	cat run1.out run1.err &&
	test_grep "$SMALL/klab.db" run1.err &&
	test_grep "the file system of .$SMALL. is full" run1.err &&
	test "$(sq "SELECT state FROM jobs WHERE id = 1")" != done
'

test_expect_success 'nothing stored before is lost: the database is sound and the job as it was' '
	rm -f "$SMALL/filler" &&
	test "$(sq "PRAGMA integrity_check")" = ok &&
	sq "SELECT spec FROM jobs WHERE id = 1" >spec.after &&
	sq "SELECT side, profile FROM job_sides WHERE job_id = 1 ORDER BY side" >sides.after &&
	test_cmp spec.before spec.after &&
	test_cmp sides.before sides.after
'

test_expect_success 'with room again, klab run resumes the job to the end: every run stored once' '
	"$KLAB" run 1 >run2.out 2>run2.err || { cat run2.out run2.err; false; } &&
	test "$(sq "SELECT state FROM jobs WHERE id = 1")" = done &&
	# 1 boot per side, 2 runs of rr each
	test "$(sq "SELECT count(*) FROM runs WHERE job_id = 1 AND status = '\''ok'\''")" = 4 &&
	test "$(sq "SELECT count(DISTINCT uid) FROM runs WHERE job_id = 1")" = 4 &&
	test "$(sq "SELECT count(*) FROM runs WHERE job_id = 1")" = 4 &&
	test "$(sq "SELECT count(*) FROM metrics m JOIN runs r ON r.id = m.run_id WHERE r.job_id = 1 AND m.name = '\''tps'\'' AND m.value > 0")" = 4
'

# The disk fills while a job runs: the step that cannot store stops the job with
# the same error, the runs stored before stay, and the resumed job stores the
# rest once each (the agent keeps a result until the orchestrator has stored it).
test_expect_success 'the disk fills in the middle of a job: it stops, and resumes without a run lost or stored twice' '
	"$KLAB" submit --job ab >out &&
	test_grep "submitted job 2 (ab)" out &&
	{ "$KLAB" run 2 >run3.out 2>run3.err & pid=$!; } &&
	test_wait_until 120 "test \$(sq \"SELECT count(*) FROM runs WHERE job_id = 2\") -ge 1" &&
	fill &&
	{ wait $pid; rc=$?; } ; cat run3.out run3.err &&
	test $rc != 0 &&
	test_grep "the file system of .$SMALL. is full" run3.err &&
	stored=$(sq "SELECT count(*) FROM runs WHERE job_id = 2") &&
	echo "runs stored before the disk was full: $stored" &&
	test "$stored" -ge 1 && test "$stored" -lt 4 &&
	rm -f "$SMALL/filler" &&
	test "$(sq "PRAGMA integrity_check")" = ok &&
	"$KLAB" run 2 >run4.out 2>run4.err || { cat run4.out run4.err; false; } &&
	test "$(sq "SELECT state FROM jobs WHERE id = 2")" = done &&
	test "$(sq "SELECT count(*) FROM runs WHERE job_id = 2")" = 4 &&
	test "$(sq "SELECT count(DISTINCT uid) FROM runs WHERE job_id = 2")" = 4 &&
	test "$(sq "SELECT count(*) FROM runs WHERE job_id = 1")" = 4
'

test_done
