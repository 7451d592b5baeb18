#!/bin/bash
# bench/bench-rr-floor.sh: klab-udp-rr at one flow against the floor (bench/udp-rr-floor.c,
# a blocking send/recv client and recvfrom/sendto server), pinned, on a veth between two
# namespaces: client and server on one CPU (a wakeup is a context switch) and on two
# (client CPU 0, server CPU 1: a wakeup is an IPI), interleaved.
#
#   sudo bash bench/bench-rr-floor.sh [-r REPS] [-d SECONDS] [-b BINDIR] [-B OTHER_BINDIR]
#
# -B adds a second klab-udp-rr (an older build, say) to every round. Unpinned, the
# one-flow rate is whichever of the two placements the scheduler picked (docs/workloads.md,
# "One flow against the floor"); pinned, the comparison is of the code. Prints every run,
# then the medians and each one's ratio to the floor. Not a test: nothing is asserted.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
REPS=5 DUR=3 BIN=$ROOT/build/rel/bin OTHER=
while getopts "r:d:b:B:" o; do
	case $o in
	r) REPS=$OPTARG ;;
	d) DUR=$OPTARG ;;
	b) BIN=$OPTARG ;;
	B) OTHER=$OPTARG ;;
	*) echo "usage: $0 [-r REPS] [-d SECONDS] [-b BINDIR] [-B OTHER_BINDIR]" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "bench: needs root (namespaces)" >&2; exit 1; }
[ "$(nproc)" -ge 2 ] || { echo "bench: needs 2 CPUs" >&2; exit 1; }
for t in "$BIN/klab-udp-rr" ${OTHER:+"$OTHER/klab-udp-rr"}; do
	[ -x "$t" ] || { echo "bench: $t not built (make)" >&2; exit 1; }
done
A=kfla$$ B=kflb$$ VA=kfa$$ VB=kfb$$ SADDR=198.18.231.2
OUT=$(mktemp -d /tmp/klab-floor.XXXXXX)
cleanup() { ip netns del $A 2>/dev/null; ip netns del $B 2>/dev/null; rm -rf "$OUT"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
cc -O2 -o "$OUT/floor" "$ROOT/bench/udp-rr-floor.c" || { echo "bench: cannot build the floor" >&2; exit 1; }
ip netns add $A && ip netns add $B && ip link add $VA type veth peer name $VB &&
ip link set $VA netns $A && ip link set $VB netns $B &&
ip -n $A addr add 198.18.231.1/24 dev $VA && ip -n $B addr add $SADDR/24 dev $VB &&
ip -n $A link set $VA up && ip -n $B link set $VB up || { echo "bench: cannot make namespaces" >&2; exit 1; }

TOOLS="floor klab"
[ -n "$OTHER" ] && TOOLS="$TOOLS other"
# run PLACEMENT TOOL: one run, prints transactions/s
run() {
	local scpu=0 rr=$BIN/klab-udp-rr t
	[ "$1" = cross ] && scpu=1
	[ "$2" = other ] && rr=$OTHER/klab-udp-rr
	if [ "$2" = floor ]; then
		ip netns exec $B taskset -c $scpu "$OUT/floor" server $SADDR 9320 $((DUR + 2)) >/dev/null &
	else
		ip netns exec $B taskset -c $scpu "$rr" server --port 9320 --duration $((DUR + 2)) >/dev/null 2>&1 &
	fi
	sleep 0.3
	if [ "$2" = floor ]; then
		t=$(ip netns exec $A taskset -c 0 "$OUT/floor" client $SADDR 9320 $DUR | awk '{ print $6 }')
	else
		t=$(ip netns exec $A taskset -c 0 "$rr" client --addr $SADDR --port 9320 --flows 1 \
			--duration $DUR --warmup 0.3 2>/dev/null |
			python3 -c 'import json, sys; print(int(json.load(sys.stdin)["tps"]))')
	fi
	wait
	echo "${t:-0}"
}

echo "# $(date -u '+%Y-%m-%d %H:%M UTC') $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg); $REPS x $DUR s; klab $BIN${OTHER:+, other $OTHER}"
for ((r = 1; r <= REPS; r++)); do
	for pl in same cross; do
		for tool in $TOOLS; do
			t=$(run $pl $tool)
			echo "$pl $tool $t" | tee -a "$OUT/results"
		done
	done
done
echo "# load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$OUT/results" <<'EOF'
import statistics, sys
d = {}
for line in open(sys.argv[1]):
    pl, tool, t = line.split()
    d.setdefault((pl, tool), []).append(int(t))
for pl in ("same", "cross"):
    f = statistics.median(d[(pl, "floor")])
    for tool in ("floor", "klab", "other"):
        if (pl, tool) in d:
            v = d[(pl, tool)]
            m = statistics.median(v)
            print("%-5s CPU  %-5s median %6d tps  %.3fx floor  %s" % (pl, tool, m, m / f if f else 0, v))
EOF
