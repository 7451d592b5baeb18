#!/bin/bash
# bench/bench-workloads.sh: klab's generators against sockperf and iperf3, on a veth
# between two namespaces and on loopback, interleaved, 3 repetitions per cell.
#
#   sudo bash bench/bench-workloads.sh [-r REPS] [-d SECONDS] [-b BINDIR] [-n NICE] [-o rr|tx]
#
# -o runs only the udp_rr cells or only the udp_tx ones.
# -n runs every tool (klab's and the peers') at that nice level, e.g. -5, so that
# other work on a shared machine takes less of the CPUs from both alike.
#
# Cells: udp_rr 1 and 16 flows (100-byte request and response) vs sockperf
# ping-pong (one process per flow), and at 1 flow also vs the floor: the leanest
# pair there is, bench/udp-rr-floor.c (blocking send/recv client, blocking
# recvfrom/sendto server, two system calls per transaction on each side; built
# by this script with cc -O2); udp_tx 64 and 1400 bytes, 1 and 2 threads, vs
# iperf3 -u -b 0 (one process per thread). For every run the rates come from the
# kernel's counters as well as from the tool: datagrams sent (interface tx_packets
# of the sending side) and datagrams delivered to the receiving socket (Udp
# InDatagrams of the receiving namespace, /proc/net/snmp), with socket-buffer drops
# (RcvbufErrors) beside them, and the CPU time the tools' processes used per
# datagram (/proc/PID/stat). Each environment is a fresh namespace pair (or one
# namespace's loopback), so the counters hold this run's traffic only.
#
# Prints one line per run as it goes, then the medians and the ratio klab/peer per
# cell. Not a test: nothing is asserted. Needs root, iproute2, sockperf, iperf3.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
REPS=3 DUR=5 BIN=${KLAB_BIN:-} NICE=0 ONLY=
while getopts "r:d:b:n:o:" o; do
	case $o in
	n) NICE=$OPTARG ;;
	r) REPS=$OPTARG ;;
	d) DUR=$OPTARG ;;
	b) BIN=$OPTARG ;;
	o) ONLY=$OPTARG; case $ONLY in rr|tx) ;; *) echo "bench: -o takes rr or tx" >&2; exit 2 ;; esac ;;
	*) echo "usage: $0 [-r REPS] [-d SECONDS] [-b BINDIR] [-n NICE] [-o rr|tx]" >&2; exit 2 ;;
	esac
done
if [ -z "$BIN" ]; then
	for d in "$ROOT/build/rel/bin" "$ROOT/build/wl/bin"; do
		[ -x "$d/klab-udp-rr" ] && BIN=$d && break
	done
fi
RR=$BIN/klab-udp-rr TX=$BIN/klab-udp-tx
for t in "$RR" "$TX"; do [ -x "$t" ] || { echo "bench: $t not built (make)" >&2; exit 1; }; done
for t in sockperf iperf3 ip python3 cc; do
	command -v $t >/dev/null || { echo "bench: $t not installed" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "bench: needs root (namespaces)" >&2; exit 1; }

A=kbencha$$ B=kbenchb$$ L=kbenchl$$ VA=kba$$ VB=kbb$$
A4=198.18.230.1 B4=198.18.230.2
OUT=$(mktemp -d /tmp/klab-bench.XXXXXX)
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	ip netns del $A 2>/dev/null; ip netns del $B 2>/dev/null; ip netns del $L 2>/dev/null
	rm -rf "$OUT"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
FLOOR=$OUT/udp-rr-floor
cc -O2 -o "$FLOOR" "$ROOT/bench/udp-rr-floor.c" || { echo "bench: cannot build bench/udp-rr-floor.c" >&2; exit 1; }

ip netns add $A && ip netns add $B && ip netns add $L &&
ip link add $VA type veth peer name $VB &&
ip link set $VA netns $A && ip link set $VB netns $B &&
ip -n $A addr add $A4/24 dev $VA && ip -n $B addr add $B4/24 dev $VB &&
for ns in $A $B $L; do ip -n $ns link set lo up; done &&
ip -n $A link set $VA up && ip -n $B link set $VB up || { echo "bench: cannot make namespaces" >&2; exit 1; }

# Environment: client namespace, server namespace, server address, sending device
env_set() {
	case $1 in
	veth) CNS=$A SNS=$B SADDR=$B4 CDEV=$VA ;;
	lo) CNS=$L SNS=$L SADDR=127.0.0.1 CDEV=lo ;;
	esac
}
ctr() {		# ctr: "tx_packets InDatagrams RcvbufErrors OutDatagrams" now
	local tx s
	tx=$(ip netns exec $CNS cat /sys/class/net/$CDEV/statistics/tx_packets)
	s=$(ip netns exec $SNS awk '$1 == "Udp:" { if (!n) { for (i = 2; i <= NF; i++) h[$i] = i; n = 1 } else print $h["InDatagrams"], $h["RcvbufErrors"] }' /proc/net/snmp)
	echo "$tx $s $(ip netns exec $CNS awk '$1 == "Udp:" { if (!n) { for (i = 2; i <= NF; i++) h[$i] = i; n = 1 } else print $h["OutDatagrams"] }' /proc/net/snmp)"
}
# window: counters over W = DUR-2 s of steady traffic: wait until the sending
# device's counter moves (sockperf idles ~2 s before its first packet; iperf3
# sets up its control connection first), skip 0.5 s, then sample. Sets SENT,
# DELIV, DROP (per second). DIV=2 halves them (request/response on loopback:
# both directions cross lo and the one namespace's counters).
window() {
	local a b w=$((DUR - 2)) t0 t i ta tb ms ca sa
	t0=$(ip netns exec $CNS cat /sys/class/net/$CDEV/statistics/tx_packets)
	for ((i = 0; i < 100; i++)); do
		sleep 0.1
		t=$(ip netns exec $CNS cat /sys/class/net/$CDEV/statistics/tx_packets)
		[ $((t - t0)) -gt 200 ] && break
		t0=$t
	done
	sleep 0.5
	ta=$(date +%s%N)
	a=($(ctr))
	ca=$(cpu_snap "${CP[@]}"); sa=$(cpu_snap "${SP[@]}")
	sleep $w
	tb=$(date +%s%N)
	b=($(ctr))
	CCPU=$(cpu_delta "$ca" "$(cpu_snap "${CP[@]}")") SCPU=$(cpu_delta "$sa" "$(cpu_snap "${SP[@]}")")
	ms=$(( (tb - ta) / 1000000 ))
	SENT=$(( (b[0] - a[0]) * 1000 / ms / ${DIV:-1} ))
	DELIV=$(( (b[1] - a[1]) * 1000 / ms / ${DIV:-1} ))
	DROP=$(( (b[2] - a[2]) * 1000 / ms ))
	# CPU microseconds of the sending side's processes per datagram sent, and of
	# the receiving side's per datagram delivered (udp_rr: per transaction)
	CUS=$(awk -v t=$CCPU -v hz=$HZ -v ms=$ms -v n=$SENT 'BEGIN { printf "%.2f", (n > 0 ? t * 1e9 / hz / ms / n : 0) }')
	SUS=$(awk -v t=$SCPU -v hz=$HZ -v ms=$ms -v n=$DELIV 'BEGIN { printf "%.2f", (n > 0 ? t * 1e9 / hz / ms / n : 0) }')
}
# bgs/bgc: start a receiving-side (server, sink) or sending-side (client, sender)
# process; `ip netns exec` execs the tool, so $! is the tool's own pid
SP=() CP=()
bgs() { nice -n "$NICE" "$@" & PIDS+=($!); SP+=($!); }
bgc() { nice -n "$NICE" "$@" & PIDS+=($!); CP+=($!); }
waitall() { local p; for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done; PIDS=(); SP=(); CP=(); }
# cpu_snap PID...: "pid ticks" lines, user + system clock ticks of each process
# (all threads; with tick accounting and no IRQ time accounting, softirq work
# done in a process's context is charged to it, as the receive path of veth and
# lo is). cpu_delta A B: ticks used between two snapshots by the processes in
# both (one that ended in between is left out rather than counted negative).
cpu_snap() {
	local p f
	for p in "$@"; do
		f=$(sed 's/.*) //' /proc/$p/stat 2>/dev/null) || continue
		set -- $f
		echo "$p $((${12} + ${13}))"
	done
}
cpu_delta() {
	awk 'NR == FNR { a[$1] = $2; next } ($1 in a) { s += $2 - a[$1] } END { print s + 0 }' \
		<(echo "$1") <(echo "$2")
}
HZ=$(getconf CLK_TCK)

# record ENV CELL TOOL TOOL_RATE: one line per run
record() {
	printf '%-5s %-12s %-8s tool %8.0f  sent %7d/s  delivered %7d/s  drops %6d/s  cpu us/op %5.1f + %5.1f\n' \
		"$1" "$2" "$3" "$4" "$SENT" "$DELIV" "$DROP" "$CUS" "$SUS"
	echo "$1 $2 $3 $4 $SENT $DELIV $DROP $CUS $SUS" >>"$OUT/results"
}
jnum() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }

rr_klab() {	# rr_klab ENV FLOWS
	local port=9300
	bgs ip netns exec $SNS "$RR" server --port $port --duration $((DUR + 4)) >"$OUT/srv.json" 2>/dev/null
	sleep 0.3
	bgc ip netns exec $CNS "$RR" client --addr $SADDR --port $port --flows $2 --duration $DUR \
		--warmup 1 >"$OUT/cli.json" 2>"$OUT/cli.err"
	window
	wait "${PIDS[1]}"
	kill "${PIDS[0]}" 2>/dev/null
	waitall
	record "$1" "rr_${2}flow" klab "$(jnum "$OUT/cli.json" 'd["tps"]' 2>/dev/null || echo 0)"
}

rr_sockperf() {	# rr_sockperf ENV FLOWS: one ping-pong client process per flow
	local i sum
	bgs ip netns exec $SNS sockperf server -i $SADDR -p 11111 >/dev/null 2>&1
	sleep 0.5
	for ((i = 0; i < $2; i++)); do
		bgc ip netns exec $CNS sockperf ping-pong -i $SADDR -p 11111 -m 100 -t $((DUR + 1)) >"$OUT/sp.$i" 2>&1
	done
	window
	local srv=${PIDS[0]}
	PIDS=("${PIDS[@]:1}")
	waitall
	kill "$srv" 2>/dev/null; wait "$srv" 2>/dev/null
	sum=$(cat "$OUT"/sp.* | sed -n 's/.*Valid Duration\] RunTime=\([0-9.]*\) sec; SentMessages=[0-9]*; ReceivedMessages=\([0-9]*\).*/\2 \1/p' |
		awk '{ s += $1 / $2 } END { printf "%.0f", s }')
	rm -f "$OUT"/sp.*
	record "$1" "rr_${2}flow" sockperf "${sum:-0}"
}

rr_floor() {	# rr_floor ENV: the blocking pair, one flow
	bgs ip netns exec $SNS "$FLOOR" server $SADDR 9310 $((DUR + 3)) >/dev/null 2>&1
	sleep 0.3
	bgc ip netns exec $CNS "$FLOOR" client $SADDR 9310 $DUR >"$OUT/floor.out" 2>&1
	window
	waitall
	record "$1" rr_1flow floor "$(awk '$1 == "transactions" { print $6 }' "$OUT/floor.out")"
}

tx_klab() {	# tx_klab ENV SIZE THREADS
	bgs ip netns exec $SNS "$TX" sink --port 9400 --duration $((DUR + 4)) >"$OUT/sink.json" 2>/dev/null
	sleep 0.3
	bgc ip netns exec $CNS "$TX" send --addr $SADDR --port 9400 --size $2 --threads $3 \
		--duration $DUR --warmup 1 >"$OUT/send.json" 2>/dev/null
	window
	wait "${PIDS[1]}"
	kill "${PIDS[0]}" 2>/dev/null
	waitall
	record "$1" "tx_${2}B_${3}t" klab "$(jnum "$OUT/send.json" 'd["pps"]' 2>/dev/null || echo 0)"
}

tx_iperf3() {	# tx_iperf3 ENV SIZE THREADS: one iperf3 client (and server) per thread
	local i pps
	for ((i = 0; i < $3; i++)); do
		bgs ip netns exec $SNS iperf3 -s -1 -p $((5201 + i)) >/dev/null 2>&1
	done
	sleep 0.5
	for ((i = 0; i < $3; i++)); do
		bgc ip netns exec $CNS iperf3 -c $SADDR -p $((5201 + i)) -u -b 0 -l $2 -t $((DUR + 1)) --json \
			>"$OUT/ip.$i" 2>&1
	done
	window
	waitall
	pps=$(for ((i = 0; i < $3; i++)); do
		jnum "$OUT/ip.$i" 'd["end"]["sum"]["packets"] / d["end"]["sum"]["seconds"]' 2>/dev/null || echo 0
	done | awk '{ s += $1 } END { printf "%.0f", s }')
	rm -f "$OUT"/ip.*
	record "$1" "tx_${2}B_${3}t" iperf3 "$pps"
}

[ "$DUR" -ge 4 ] || { echo "bench: -d must be at least 4" >&2; exit 2; }
echo "# $(date -u '+%Y-%m-%d %H:%M UTC') $(uname -r), $(nproc) CPUs, load $(cut -d" " -f1-3 /proc/loadavg); $REPS repetitions of $DUR s; nice $NICE; binaries $BIN"
echo "# tool: the tool's own rate (udp_rr: transactions/s; udp_tx: packets/s sent)"
echo "# sent: interface tx_packets/s of the sending side; delivered: Udp InDatagrams/s of the receiving namespace"
for ((rep = 1; rep <= REPS; rep++)); do
	for env in veth lo; do
		env_set $env
		DIV=1; [ $env = lo ] && DIV=2
		for fl in 1 16; do
			[ "$ONLY" = tx ] && break
			rr_klab $env $fl
			rr_sockperf $env $fl
			[ $fl = 1 ] && rr_floor $env
		done
		DIV=1
		for size in 64 1400; do
			[ "$ONLY" = rr ] && break
			for th in 1 2; do
				tx_klab $env $size $th
				tx_iperf3 $env $size $th
			done
		done
	done
done

echo
echo "# load at the end: $(cut -d" " -f1-3 /proc/loadavg)"
echo "# medians of $REPS runs. klab, tool: the tool's own rate; sent/s, deliv/s: kernel counters (see above);"
echo "# us/op: CPU microseconds of the sending processes per datagram sent + of the receiving processes"
echo "# per datagram delivered (udp_rr: per transaction). rate = klab / peer on counters (udp_rr: delivered requests/s = transactions/s;"
echo "# udp_tx: sent packets/s); cost = peer us/op / klab us/op (above 1: klab uses less CPU per op)"
python3 - "$OUT/results" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
cells = {}
for env, cell, tool, rate, sent, deliv, drop, cus, sus in rows:
    cells.setdefault((env, cell), {}).setdefault(tool, []).append(
        (float(rate), int(sent), int(deliv), int(drop), float(cus) + float(sus)))
def med(v, i): return statistics.median(x[i] for x in v) if v else 0
print("%-5s %-11s | %8s %8s %8s %6s | %-8s %8s %8s %8s %6s | %5s %5s" % (
    "env", "cell", "klab", "sent/s", "deliv/s", "us/op", "peer", "tool", "sent/s", "deliv/s",
    "us/op", "rate", "cost"))
rr = {}
floor = {}
for (env, cell), tools in sorted(cells.items(), key=lambda kv: (kv[0][0] != "veth", kv[0][1])):
    k = tools.get("klab", [])
    col = 2 if cell.startswith("rr") else 1
    kr, kc = med(k, col), med(k, 4)
    for name in sorted((t for t in tools if t != "klab"), key=lambda t: t == "floor"):
        p = tools[name]
        pr, pc = med(p, col), med(p, 4)
        print("%-5s %-11s | %8.0f %8.0f %8.0f %6.1f | %-8s %8.0f %8.0f %8.0f %6.1f | %5.2f %5.2f" % (
            env, cell, med(k, 0), med(k, 1), med(k, 2), kc, name,
            med(p, 0), med(p, 1), med(p, 2), pc, kr / pr if pr else 0, pc / kc if kc else 0))
        if name == "floor":
            floor[env] = (kr, pr, [x[col] for x in k], [x[col] for x in p])
        elif cell.startswith("rr"):
            rr.setdefault(env, {})[cell] = (kr, pr)
for env, (kr, pr, kv, pv) in floor.items():
    print("%s: udp_rr 1 flow, klab / floor (the blocking pair) = %.3fx (transactions/s, medians: klab %.0f %s, floor %.0f %s)" % (
        env, kr / pr if pr else 0, kr, kv, pr, pv))
for env, c in rr.items():
    if "rr_1flow" in c and "rr_16flow" in c and c["rr_1flow"][0] and c["rr_1flow"][1]:
        print("%s: 16 flows / 1 flow (transactions/s): klab %.2fx, sockperf %.2fx" % (
            env, c["rr_16flow"][0] / c["rr_1flow"][0], c["rr_16flow"][1] / c["rr_1flow"][1]))
EOF
