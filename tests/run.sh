#!/bin/bash
# tests/run.sh: run the C unit tests and the shell tests, print one summary.
#
#   KLAB_BUILD=build/asan bash tests/run.sh [PATTERN...]
#
# PATTERN selects tests by name (shell glob on the file name, e.g. 't01*' or
# 'lib-*'). Every test's TAP output goes to build/tests/logs/NAME.log; a
# failing test's log is printed. The last line is "N passed, N failed, N skipped".
#
# A test file fails, besides by a "not ok" line or a non-zero exit, when its
# TAP plan is missing (only "1..0 # SKIP reason" may stand for no tests), is
# given more than once, or differs from the number of "ok"/"not ok" lines
# it printed: a test that died half-way, or ran twice, does not pass.

set -u
SRCDIR=$(cd "$(dirname "$0")/.." && pwd)
KLAB_BUILD=${KLAB_BUILD:-$SRCDIR/build/rel}
export KLAB_BUILD KLAB_TEST_DATA=$SRCDIR/tests/data
logs=${KLAB_TEST_ROOT:-$SRCDIR/build/tests}/logs
mkdir -p "$logs"

pass=0 fail=0 skip=0
failed_names=()

want() {
	local name=$1 p
	[ $# -gt 1 ] || return 0
	shift
	for p in "$@"; do
		# shellcheck disable=SC2053
		[[ $name == $p || $name == $p.sh ]] && return 0
	done
	return 1
}

count() {	# count TAP lines of a log into the totals
	local log=$1 name=$2 rc=$3 p f s plans plan
	p=$(grep -cE '^ok [0-9]+' "$log")
	s=$(grep -cE '^ok [0-9]+.*# (skip|SKIP)' "$log")
	f=$(grep -cE '^not ok [0-9]+' "$log")
	plans=$(grep -cE '^1\.\.[0-9]+' "$log")
	plan=$(sed -n 's/^1\.\.\([0-9]*\).*/\1/p' "$log" | head -n 1)
	if [ "$plans" = 0 ]; then
		echo "not ok - $name printed no TAP plan (1..N)" >>"$log"
		f=$((f + 1))
	elif [ "$plans" != 1 ]; then
		echo "not ok - $name printed $plans TAP plans" >>"$log"
		f=$((f + 1))
	elif [ "$plan" != $((p + f)) ]; then
		echo "not ok - $name planned $plan tests but reported $((p + f))" >>"$log"
		f=$((f + 1))
	fi
	p=$((p - s))
	if grep -qE '^1\.\.0 # SKIP' "$log"; then
		s=$((s + 1))
		echo "skip: $name: $(sed -n 's/^1\.\.0 # SKIP //p' "$log")"
	fi
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		f=1	# crashed or exited non-zero without saying which test
		echo "not ok - $name exited with status $rc" >>"$log"
	fi
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
	if [ "$f" != 0 ]; then
		failed_names+=("$name")
		echo "FAIL: $name"
		grep -vE '^ok ' "$log" | tail -n 80 | sed 's/^/    /'
	else
		if [ "$s" != 0 ]; then echo "ok:   $name ($p passed, $s skipped)"; else echo "ok:   $name ($p passed)"; fi
	fi
}

for t in "$KLAB_BUILD"/tests/*; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	want "$name" "$@" || continue
	log=$logs/$name.log
	( cd "$SRCDIR" && timeout 600 "$t" ) >"$log" 2>&1
	count "$log" "$name" $?
done

for t in "$SRCDIR"/tests/t[0-9][0-9][0-9][0-9]-*.sh; do
	[ -f "$t" ] || continue
	name=$(basename "$t" .sh)
	want "$name" "$@" || continue
	log=$logs/$name.log
	start=$(date +%s)
	timeout "${KLAB_TEST_TIMEOUT:-2400}" bash "$t" >"$log" 2>&1
	rc=$?
	count "$log" "$name" $rc
	echo "      ($(( $(date +%s) - start )) s)"
done

if [ ${#failed_names[@]} -gt 0 ]; then
	echo "failed: ${failed_names[*]}"
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
