#!/bin/bash
# tests/run.sh: run the C unit tests and the shell tests, print one summary.
#
#   KLAB_BUILD=build/asan bash tests/run.sh [-j N] [PATTERN...]
#
# PATTERN selects tests by name (shell glob on the file name, e.g. 't01*' or
# 'lib-*'). Every test's TAP output goes to build/tests/logs/NAME.log; a
# failing test's log is printed. The last line is "N passed, N failed, N skipped".
#
# -j N runs N test files at once (default 1: one after another, unit tests
# first, in name order). Each file has its own scratch folder and log; labs,
# namespaces and ports are allocated at run time (tests/lib.sh), so files do
# not meet. A file's result is printed when it ends, whole, in the order they
# end. With N > 1 the files whose last run took longest start first (their
# times are kept in build/tests/durations; a file never timed starts before
# the timed ones, shell tests from the highest number down), so the slowest
# does not start last. A shell test may say, in a comment line near its top,
#   # run.sh: exclusive (why)       it runs alone: nothing else beside it
#   # run.sh: group NAME (why)      never beside another file of group NAME
# for what cannot be allocated: the machine itself (a scale test), or a
# shared folder that one file changes while another checks it.
#
# A test file fails, besides by a "not ok" line or a non-zero exit, when its
# TAP plan is missing (only "1..0 # SKIP reason" may stand for no tests), is
# given more than once, or differs from the number of "ok"/"not ok" lines
# it printed: a test that died half-way, or ran twice, does not pass.

set -u
SRCDIR=$(cd "$(dirname "$0")/.." && pwd)
KLAB_BUILD=${KLAB_BUILD:-$SRCDIR/build/rel}
export KLAB_BUILD KLAB_TEST_DATA=$SRCDIR/tests/data
root=${KLAB_TEST_ROOT:-$SRCDIR/build/tests}
logs=$root/logs
durations=$root/durations
mkdir -p "$logs"

jobs=1
while [ $# -gt 0 ]; do
	case "$1" in
	-j) [ $# -ge 2 ] || { echo "run.sh: -j needs a number" >&2; exit 2; }
	    jobs=$2; shift 2 ;;
	-j*) jobs=${1#-j}; shift ;;
	--) shift; break ;;
	*) break ;;
	esac
done
case "$jobs" in
''|*[!0-9]*|0) echo "run.sh: -j wants a number from 1 up, not '$jobs'" >&2; exit 2 ;;
esac

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

# --- the files to run ----------------------------------------------------------
# For each file: its name, path, kind (unit or shell), whether it runs alone,
# its group, and its last duration in ms (-1: never timed).
names=() paths=() kinds=() excl=() groups=() last=()

declare -A known=()
if [ -f "$durations" ]; then
	while read -r n ms; do
		[[ $ms =~ ^[0-9]+$ ]] && known[$n]=$ms
	done <"$durations"
fi

# header FILE NAME: read its "# run.sh:" lines into excl[] and groups[] of the last file.
header() {
	local file=$1 name=$2 line words i=$((${#names[@]} - 1))
	while IFS= read -r line; do
		read -r -a words <<<"$line"
		case "${words[0]:-}" in
		exclusive) excl[i]=1 ;;
		group) if [ -n "${words[1]:-}" ] && [[ ${words[1]} != \(* ]]; then groups[i]=${words[1]}; else
			echo "run.sh: $name: '# run.sh: group' wants a group name" >&2; exit 2; fi ;;
		*) echo "run.sh: $name: unknown '# run.sh: $line' (exclusive or group NAME)" >&2; exit 2 ;;
		esac
	done < <(head -n 30 "$file" | sed -n 's/^# run\.sh: *//p')
}

add() {	# add NAME PATH KIND
	names+=("$1") paths+=("$2") kinds+=("$3") excl+=(0) groups+=("") last+=("${known[$1]:--1}")
}

for t in "$KLAB_BUILD"/tests/*; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	want "$name" "$@" || continue
	add "$name" "$t" unit
done
for t in "$SRCDIR"/tests/t[0-9][0-9][0-9][0-9]-*.sh; do
	[ -f "$t" ] || continue
	name=$(basename "$t" .sh)
	want "$name" "$@" || continue
	add "$name" "$t" shell
	header "$t" "$name"
done

# The order to start them in: as found with -j1; else the files that run
# alone first (they must wait for an empty machine: better at the start than
# at the end), then the longest (never timed before timed, shell tests before
# unit tests, the highest number first: the end-to-end tests are at the top).
order=()
if [ "$jobs" = 1 ]; then
	for i in "${!names[@]}"; do order+=("$i"); done
else
	while read -r _ _ _ i; do order+=("$i"); done < <(
		for i in "${!names[@]}"; do
			unit=0; [ "${kinds[i]}" = unit ] && unit=1
			printf '%d %d %d %d\n' $((1 - excl[i])) $((last[i] < 0 ? 0 : 1)) \
				$((last[i] < 0 ? unit : -last[i])) "$i"
		done | sort -k1,1n -k2,2n -k3,3n -k4,4nr)
fi

# --- running them ----------------------------------------------------------------
# start I: run file I in the background, its output to its log.
declare -A running=()	# pid -> file index
declare -A began=()	# file index -> start time (ms)
declare -A busy=()	# group -> 1 while a file of it runs
alone=0			# 1 while a file that runs alone runs

now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }

start() {
	local i=$1 log=$logs/${names[$1]}.log
	if [ "${kinds[i]}" = unit ]; then
		( cd "$SRCDIR" && exec timeout 600 "${paths[i]}" ) >"$log" 2>&1 &
	else
		( exec timeout "${KLAB_TEST_TIMEOUT:-2400}" bash "${paths[i]}" ) >"$log" 2>&1 &
	fi
	running[$!]=$i
	began[$i]=$(now_ms)
	[ "${excl[i]}" = 1 ] && alone=1
	[ -n "${groups[i]}" ] && busy[${groups[i]}]=1
}

# can_start I: 0 when file I may start beside what runs now.
can_start() {
	local i=$1
	[ "$alone" = 0 ] || return 1
	[ "${excl[i]}" = 0 ] || [ ${#running[@]} = 0 ] || return 1
	[ -z "${groups[i]}" ] || [ -z "${busy[${groups[i]}]:-}" ]
}

# finish PID RC: count the file that ran as PID, print its result and time.
declare -A took=()
finish() {
	local i=${running[$1]} ms
	unset "running[$1]"
	ms=$(( $(now_ms) - began[$i] ))
	took[${names[i]}]=$ms
	[ "${excl[i]}" = 1 ] && alone=0
	[ -n "${groups[i]}" ] && unset "busy[${groups[i]}]"
	count "$logs/${names[i]}.log" "${names[i]}" "$2"
	[ "${kinds[i]}" = shell ] && echo "      ($((ms / 1000)) s)"
}

# Ctrl-C or TERM: stop the files that run (timeout passes the signal on to
# each test's process group; their cleanups run), then leave.
stop_all() {
	local pid
	for pid in "${!running[@]}"; do kill -TERM "$pid" 2>/dev/null; done
	wait
	exit 130
}
trap stop_all INT TERM

queue=("${order[@]}")
while [ ${#queue[@]} -gt 0 ] || [ ${#running[@]} -gt 0 ]; do
	while [ ${#running[@]} -lt "$jobs" ] && [ ${#queue[@]} -gt 0 ]; do
		picked=-1
		for k in "${!queue[@]}"; do
			if can_start "${queue[k]}"; then picked=$k; break; fi
		done
		[ "$picked" -ge 0 ] || break
		start "${queue[picked]}"
		unset "queue[picked]"
		queue=("${queue[@]}")
	done
	# a file ended: which one (wait -p), and its status
	pid=
	wait -n -p pid
	rc=$?
	if [ -n "$pid" ] && [ -n "${running[$pid]:-}" ]; then
		finish "$pid" "$rc"
	elif [ "$rc" = 127 ]; then	# none left to wait for: collect each by its pid
		for pid in "${!running[@]}"; do wait "$pid"; finish "$pid" $?; done
	fi
done

# Keep the times of the files that ran, beside those of the others.
if [ ${#took[@]} -gt 0 ]; then
	{
		for n in "${!known[@]}"; do [ -n "${took[$n]:-}" ] || echo "$n ${known[$n]}"; done
		for n in "${!took[@]}"; do echo "$n ${took[$n]}"; done
	} | sort >"$durations.tmp" && mv "$durations.tmp" "$durations"
fi

if [ ${#failed_names[@]} -gt 0 ]; then
	echo "failed: ${failed_names[*]}"
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
