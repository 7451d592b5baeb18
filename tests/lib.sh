# tests/lib.sh: the shell test library (in the manner of git's t/test-lib.sh).
#
#	#!/bin/bash
#	test_description='what this script covers'
#	. "$(dirname "$0")/lib.sh"
#	test_expect_success 'klab prints its version' '
#		"$KLAB" --version >out &&
#		grep -q klab out
#	'
#	test_expect_success ROOT,NETNS 'needs root' '...'
#	test_done
#
# Each script runs in its own scratch folder ($SCRATCH, the current folder),
# removed when every test passed. Output is TAP. Prerequisites that are not
# met skip the test with the reason printed. test_cleanup 'cmd' registers a
# command run at exit (namespaces, daemons), whatever happened.
#
# Variables: $SRCDIR (the project), $SHARED (../shared), $KLAB_BUILD, $BIN
# (its bin/ folder), $KLAB, $KLABD, $KLAB_AGENT, $KLAB_UDP_RR, $KLAB_UDP_TX,
# $TEST_NAME (script name without .sh), $TEST_NUM (NNNN).

set -u
SRCDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SHARED=${KLAB_SHARED:-$(cd "$SRCDIR/.." && pwd)/shared}
KLAB_BUILD=${KLAB_BUILD:-$SRCDIR/build/rel}
BIN=$KLAB_BUILD/bin
KLAB=$BIN/klab
KLABD=$BIN/klabd
KLAB_AGENT=$BIN/klab-agent
KLAB_UDP_RR=$BIN/klab-udp-rr
KLAB_UDP_TX=$BIN/klab-udp-tx
TEST_NAME=$(basename "$0" .sh)
TEST_NUM=${TEST_NAME#t}; TEST_NUM=${TEST_NUM%%-*}
export SRCDIR SHARED KLAB_BUILD BIN KLAB KLABD KLAB_AGENT KLAB_UDP_RR KLAB_UDP_TX
# ASan: leaks are reported by the unit tests; programs killed on purpose in
# shell tests would otherwise print noise.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

test_count=0
test_failed=0
test_skipped=0
_cleanups=()
_prereqs_ok=" "
_prereqs_no=" "

SCRATCH=${KLAB_TEST_ROOT:-$SRCDIR/build/tests}/trash-$TEST_NAME
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH" || { echo "Bail out! cannot make $SCRATCH"; exit 1; }
cd "$SCRATCH" || exit 1
export HOME=$SCRATCH
export KLAB_CONFIG=$SCRATCH/klab.conf

_run_cleanups() {
	local i
	for ((i = ${#_cleanups[@]} - 1; i >= 0; i--)); do
		eval "${_cleanups[$i]}" >/dev/null 2>&1
	done
	_cleanups=()
}
trap '_run_cleanups' EXIT
trap '_run_cleanups; exit 130' INT TERM

# test_cleanup 'shell code': run at exit, last registered first.
test_cleanup() { _cleanups+=("$1"); }

say() { echo "# $*"; }

# A prerequisite is checked once; known ones: ROOT NETNS SSHD QEMU KBUILD
# GNUPLOT CHROMIUM PERF CPUS2 BPFTRACE SCIPY SOCKPERF IPERF3 NETEM ICOUNT_GUESTS BISECT_E2E
# POSTGRES.
_check_prereq() {
	case "$1" in
	ROOT) [ "$(id -u)" = 0 ] ;;
	NETNS) [ "$(id -u)" = 0 ] && command -v ip >/dev/null &&
		ip netns add "klabprobe$$" 2>/dev/null && ip netns del "klabprobe$$" ;;
	SSHD) [ -x /usr/sbin/sshd ] ;;
	QEMU) command -v qemu-system-x86_64 >/dev/null && [ "${KLAB_SKIP_QEMU:-0}" != 1 ] ;;
	KBUILD) [ -f /usr/src/linux-source-6.1.tar.xz ] && command -v ccache >/dev/null &&
		[ "${KLAB_SKIP_KBUILD:-0}" != 1 ] ;;
	# Opt-in (KLAB_TEST_BISECT_E2E=1): t0902's three nights, confirmation and
	# bisection take 20-40 minutes on 2 cores, too long for every make check.
	BISECT_E2E) [ "${KLAB_TEST_BISECT_E2E:-0}" = 1 ] ;;
	GNUPLOT) command -v gnuplot >/dev/null ;;
	CHROMIUM) command -v chromium >/dev/null ;;
	PERF) command -v perf >/dev/null ;;
	CPUS2) [ "$(nproc)" -ge 2 ] ;;
	BPFTRACE) command -v bpftrace >/dev/null ;;
	SCIPY) /usr/bin/python3 -c 'import scipy.stats' 2>/dev/null ;;
	SOCKPERF) command -v sockperf >/dev/null ;;
	IPERF3) command -v iperf3 >/dev/null ;;
	NETEM) [ "$(id -u)" = 0 ] && command -v tc >/dev/null && { modprobe -q sch_netem 2>/dev/null;
		ip netns add klabnetem$$ && ip netns exec klabnetem$$ tc qdisc add dev lo root netem delay 1ms;
		r=$?; ip netns del klabnetem$$ 2>/dev/null; [ $r = 0 ]; } ;;
	# Opt-in (KLAB_TEST_ICOUNT_GUESTS=1): t0802's guests pass (10 of 10, 1068 s
	# at load 4-23 on 2 cores, docs/qemu-icount.md), but 18 more minutes of every
	# make check would leave CI's 90 minutes too little margin on a cold kernel cache.
	ICOUNT_GUESTS) [ "${KLAB_TEST_ICOUNT_GUESTS:-0}" = 1 ] ;;
	# PostgreSQL 15's server programs (make deps installs them; CI has them)
	POSTGRES) [ -x "$PG_BIN/initdb" ] && [ -x "$PG_BIN/pg_ctl" ] &&
		{ [ "$(id -u)" != 0 ] || getent passwd postgres >/dev/null; } ;;
	*) echo "# unknown prerequisite $1" >&2; return 1 ;;
	esac
}

test_have_prereq() {
	local p
	local IFS=,
	for p in $1; do
		case "$_prereqs_ok" in *" $p "*) continue ;; esac
		case "$_prereqs_no" in *" $p "*) return 1 ;; esac
		if (unset IFS; _check_prereq "$p") >/dev/null 2>&1; then
			_prereqs_ok="$_prereqs_ok$p "
		else
			_prereqs_no="$_prereqs_no$p "
			return 1
		fi
	done
	return 0
}

test_set_prereq() { _prereqs_ok="$_prereqs_ok$1 "; }

# test_expect_success [PREREQS] 'title' 'script'
test_expect_success() {
	local prereq="" title script
	if [ $# = 3 ]; then prereq=$1; shift; fi
	title=$1 script=$2
	test_count=$((test_count + 1))
	if [ -n "$prereq" ] && ! test_have_prereq "$prereq"; then
		test_skipped=$((test_skipped + 1))
		echo "ok $test_count # skip $title (missing prerequisite: $prereq)"
		return 0
	fi
	local out="$SCRATCH/.test-$test_count.log"
	if (eval "$script") >"$out" 2>&1; then
		echo "ok $test_count - $title"
	else
		test_failed=$((test_failed + 1))
		echo "not ok $test_count - $title"
		sed -e 's/^/#   /' "$out" | tail -n 60
		echo "#   script:"
		printf '%s\n' "$script" | sed -e 's/^/#     /'
	fi
}

# test_skip_all 'reason': skip the whole script.
test_skip_all() {
	echo "1..0 # SKIP $1"
	exit 0
}

test_must_fail() {
	"$@"
	local rc=$?
	if [ $rc = 0 ]; then echo "test_must_fail: '$*' succeeded" >&2; return 1; fi
	if [ $rc -gt 128 ] && [ $rc != 255 ]; then echo "test_must_fail: '$*' died by signal $((rc - 128))" >&2; return 1; fi
	return 0
}

# test_expect_code CODE cmd...: the command exits with CODE exactly.
test_expect_code() {
	local want=$1; shift
	"$@"
	local rc=$?
	[ $rc = "$want" ] && return 0
	echo "test_expect_code: '$*' exited $rc, wanted $want" >&2
	return 1
}

test_cmp() { diff -u "$1" "$2"; }

# test_grep [-v] PATTERN FILE: like grep -q but shows the file on failure.
test_grep() {
	if [ "$1" = -v ]; then
		shift
		grep -q -e "$1" "$2" || return 0
		echo "test_grep: '$1' found in $2:" >&2; cat "$2" >&2; return 1
	fi
	grep -q -e "$1" "$2" && return 0
	echo "test_grep: '$1' not found in $2:" >&2; cat "$2" >&2; return 1
}

# The GNU build id of the running kernel (hex) from /sys/kernel/notes, parsed
# here independently of klab's own reader; empty when it has none.
test_kernel_build_id() {
	python3 -c '
import struct
d = open("/sys/kernel/notes", "rb").read(); o = 0
while o + 12 <= len(d):
    n, s, t = struct.unpack_from("=III", d, o)
    name = d[o + 12:o + 12 + n]; do = o + 12 + ((n + 3) & ~3)
    if t == 3 and name == b"GNU\0":
        print(d[do:do + s].hex()); break
    o = do + ((s + 3) & ~3)
' 2>/dev/null
}

# wait_ready FILE [SECONDS [PID]]: wait until FILE holds a ready line: the
# "ready" a generator's server or sink writes to its --ready-fd once it is
# bound and serving, or the "klab-agent: ready" that `klab-agent run` of a
# server or sink role passes on to its stderr. Start the client after it,
# never after a guessed sleep. Fails when SECONDS (default 10) pass without
# the line, or as soon as PID (when given) has ended without writing it.
#	{ "$KLAB_UDP_RR" server --port $p --duration 3 --ready-fd 3 3>srv.ready & } &&
#	spid=$! && wait_ready srv.ready 10 $spid && "$KLAB_UDP_RR" client ...
wait_ready() {
	local file=$1 secs=${2:-10} pid=${3:-} i
	for ((i = 0; i < secs * 20; i++)); do
		grep -qxE 'ready|klab-agent: ready' "$file" 2>/dev/null && return 0
		if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
			grep -qxE 'ready|klab-agent: ready' "$file" 2>/dev/null && return 0
			echo "wait_ready: process $pid ended without a ready line in $file" >&2
			cat "$file" >&2 2>/dev/null
			return 1
		fi
		sleep 0.05
	done
	echo "wait_ready: no ready line in $file after $secs s" >&2
	cat "$file" >&2 2>/dev/null
	return 1
}

# test_wait_until SECONDS 'shell condition': evaluate the condition every
# 0.1 s until it holds; fails, naming it, when it still does not after
# SECONDS (a wait that passes on its timeout would hide what it waits for).
test_wait_until() {
	local secs=$1 cond=$2 i
	for ((i = 0; i < secs * 10; i++)); do
		eval "$cond" && return 0
		sleep 0.1
	done
	eval "$cond" && return 0
	echo "test_wait_until: still false after $secs s: $cond" >&2
	return 1
}

# A free TCP/UDP port on loopback.
test_free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# test_qemu_lab_index: set K to a qemu lab index (49 down to 1; 0 is the
# default of `klab lab up --qemu`) that no other lab uses, and keep it for
# this script: an flock on /run/lock/klab-qemu-lab-K.test, held until the
# script ends (the netns lab has `--index auto` of its own). An index is in
# use when another script holds its lock, a qemu runs with its name
# (klab-K-dut or klab-K-peer; klab-K-dutP in a lab of pairs), or its bridge
# klqbrK exists. Call it at the top level of a script (the lock is an open
# file of the script's shell).
test_qemu_lab_index() {
	local k fd=
	for ((k = 49; k >= 1; k--)); do
		if [ "$(id -u)" = 0 ]; then	# (without root there is no qemu lab to keep apart)
			exec {fd}>>"/run/lock/klab-qemu-lab-$k.test" || continue
			flock -n "$fd" || { exec {fd}>&-; continue; }
		fi
		if ! pgrep -f -- "-name klab-$k-(dut|peer)[0-9]*( |\$)" >/dev/null &&
		   ! [ -e "/sys/class/net/klqbr$k" ]; then
			K=$k
			return 0
		fi
		[ -z "$fd" ] || exec {fd}>&-
	done
	echo "Bail out! no free qemu lab index (1 to 49)"
	exit 1
}

# A private PostgreSQL 15 server for one test script (prerequisite POSTGRES).
# test_pg_start makes a cluster in $SCRATCH/pg (initdb; as root it runs as
# the postgres user, which owns the folder), listening on 127.0.0.1:$PG_PORT
# (a free port) and on a unix socket in $PG_DIR, with password (scram)
# authentication over TCP for the role klab, password $PG_PASSWORD. It is
# stopped and removed at exit. test_pg_db NAME makes a fresh database NAME
# owned by klab and prints its URL; test_pg_ctl ARGS runs pg_ctl on it
# (restart, stop, start). fsync is off: the tests restart the server with
# pg_ctl, which flushes, and never pull the power.
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
_pg() {
	if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
test_pg_ctl() {
	_pg "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/log" -w \
		-o "-p $PG_PORT -k $PG_DIR -c listen_addresses=127.0.0.1 -c fsync=off" "$@" >/dev/null
}
test_pg_start() {
	PG_DIR=$SCRATCH/pg PG_PORT=$(test_free_port) PG_PASSWORD=klab-pw-$$
	mkdir -p "$PG_DIR" && chmod 700 "$PG_DIR" &&
	{ [ "$(id -u)" != 0 ] || chown postgres: "$PG_DIR"; } &&
	_pg "$PG_BIN/initdb" -D "$PG_DIR/data" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
		-E UTF8 --locale=C.UTF-8 >"$PG_DIR/initdb.log" 2>&1 &&
	test_cleanup "_pg '$PG_BIN/pg_ctl' -D '$PG_DIR/data' -m immediate -w stop; rm -rf '$PG_DIR'" &&
	test_pg_ctl start &&
	_pg psql -h "$PG_DIR" -p "$PG_PORT" -U postgres -d postgres -qAt \
		-c "CREATE ROLE klab LOGIN PASSWORD '$PG_PASSWORD'" >/dev/null
}
test_pg_db() {
	_pg psql -h "$PG_DIR" -p "$PG_PORT" -U postgres -d postgres -qAt -c "CREATE DATABASE $1 OWNER klab" >/dev/null &&
	echo "postgresql://klab:$PG_PASSWORD@127.0.0.1:$PG_PORT/$1"
}
# test_pg_sql DB 'SQL': run SQL as the superuser on database DB, rows as a|b lines.
test_pg_sql() {
	_pg psql -h "$PG_DIR" -p "$PG_PORT" -U postgres -d "$1" -qAt -v ON_ERROR_STOP=1 -c "$2"
}

test_done() {
	echo "1..$test_count"
	# cleanups first: they may use files in the scratch folder (pid files, lab dirs)
	_run_cleanups
	if [ "$test_failed" = 0 ]; then
		cd / && rm -rf "$SCRATCH"
		exit 0
	fi
	echo "# failed $test_failed among $test_count test(s); scratch kept in $SCRATCH"
	exit 1
}
