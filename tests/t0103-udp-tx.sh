#!/bin/bash
test_description='klab-udp-tx: sender, sink, interface and /proc/net/snmp counters agree; engines, GSO, dummy and blackhole targets'
. "$(dirname "$0")/lib.sh"

JV="python3 $SRCDIR/tests/data/workloads/jv.py"
test_cleanup 'for p in $(cat "$SCRATCH/pids" 2>/dev/null); do kill -9 $p; done'
A=kltxa$$ B=kltxb$$ C=kltxc$$
VA=kta$$ VB=ktb$$
A4=198.18.220.1 B4=198.18.220.2

if test_have_prereq ROOT,NETNS; then
	test_cleanup "ip netns del $A; ip netns del $B; ip netns del $C"
	if ip netns add $A && ip netns add $B && ip netns add $C &&
	   ip link add $VA type veth peer name $VB &&
	   ip link set $VA netns $A && ip link set $VB netns $B &&
	   ip -n $A addr add $A4/24 dev $VA && ip -n $B addr add $B4/24 dev $VB &&
	   ip -n $A addr add 2001:2::1/64 dev $VA nodad && ip -n $B addr add 2001:2::2/64 dev $VB nodad &&
	   ip -n $A link set lo up && ip -n $B link set lo up && ip -n $C link set lo up &&
	   ip -n $A link set $VA up && ip -n $B link set $VB up; then
		test_set_prereq PAIR
	fi
	# DUMMY: the kernel has the dummy driver (the host kernel here has not)
	ip -n $C link add d0 type dummy 2>/dev/null && test_set_prereq DUMMY
fi

snmp_udp() {	# snmp_udp NS FIELD: a Udp: counter of the namespace
	ip netns exec "$1" awk -v f="$2" '$1 == "Udp:" { if (!n) { for (i = 2; i <= NF; i++) h[$i] = i; n = 1 } else print $h[f] }' /proc/net/snmp
}
ifstat() {	# ifstat NS DEV COUNTER
	ip netns exec "$1" cat "/sys/class/net/$2/statistics/$3"
}
# within_1pct A B: |A - B| <= 1% of max(A, B)
within_1pct() {
	local a=$1 b=$2 m
	m=$(( a > b ? a : b ))
	[ "$m" -gt 0 ] && [ $(( (a > b ? a - b : b - a) * 100 )) -le "$m" ] && return 0
	echo "not within 1%: $a vs $b" >&2
	return 1
}

# tx_pair NAME SINK_ARGS -- SEND_ARGS: a sink in B and, once it is ready, a sender in A;
# counters around it
tx_pair() {
	local n=$1 sargs=() spid rc; shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do sargs+=("$1"); shift; done
	shift
	echo "$(ifstat $A $VA tx_packets) $(snmp_udp $B InDatagrams) $(snmp_udp $B RcvbufErrors)" >$n.before
	ip netns exec $B "$KLAB_UDP_TX" sink --port 9100 --duration 5 "${sargs[@]}" --ready-fd 3 \
		>$n.sink.json 2>$n.sink.err 3>$n.sink.ready &
	spid=$!
	echo $spid >>"$SCRATCH/pids"
	if ! wait_ready $n.sink.ready 10 $spid; then
		kill $spid 2>/dev/null; wait $spid
		cat $n.sink.err >&2
		return 1
	fi
	ip netns exec $A "$KLAB_UDP_TX" send --addr $B4 --port 9100 --duration 2 --warmup 0.5 "$@" \
		>$n.send.json 2>$n.send.err
	rc=$?
	wait $spid || { cat $n.sink.err >&2; return 1; }
	echo "$(ifstat $A $VA tx_packets) $(snmp_udp $B InDatagrams) $(snmp_udp $B RcvbufErrors)" >$n.after
	[ $rc = 0 ] || { cat $n.send.err >&2; return 1; }
}

# counts_agree NAME SEGS: sender, sink, interface and snmp agree within 1%, nothing dropped
counts_agree() {
	local n=$1 segs=${2:-1} sent got tx0 in0 err0 tx1 in1 err1
	sent=$($JV $n.send.json 'd["total"]["packets"]') &&
	got=$($JV $n.sink.json 'd["total"]["packets"]') &&
	read -r tx0 in0 err0 <$n.before && read -r tx1 in1 err1 <$n.after &&
	say "$n: sent $sent, veth tx $((tx1 - tx0)) skbs, snmp InDatagrams $((in1 - in0)), RcvbufErrors $((err1 - err0)), sink $got" &&
	[ "$sent" -gt 10000 ] &&
	[ $((err1 - err0)) = 0 ] &&
	within_1pct "$sent" "$got" &&
	within_1pct "$got" $((in1 - in0)) &&
	within_1pct $((sent / segs)) $((tx1 - tx0)) &&
	$JV $n.send.json --check 'd["schema"] == "klab-udp-tx/1" and d["role"] == "send"' \
		'd["packets"] > 0 and d["pps"] > 0 and d["bps"] > 0' \
		'd["errors_total"] == 0 and d["errors"] == {}' \
		'len(d["series"]) >= 2 and all(p["pps"] > 0 for p in d["series"])' &&
	$JV $n.sink.json --check 'd["role"] == "sink" and d["packets"] > 0'
}

test_expect_success PAIR 'sendmmsg, capped at 40 kpps: sender = sink = veth = snmp within 1%' '
	tx_pair mm -- --rate 40000 --size 64 &&
	counts_agree mm &&
	$JV mm.send.json --check "35000 < d[\"pps\"] < 41000" "d[\"bytes\"] == 64 * d[\"packets\"]"
'

test_expect_success PAIR 'sendto, 1400 bytes, 2 threads and a 2-thread sink' '
	tx_pair st --threads 2 -- --engine sendto --size 1400 --threads 2 --rate 30000 &&
	counts_agree st &&
	$JV st.sink.json --check "d[\"bytes\"] == 1400 * d[\"packets\"]"
'

test_expect_success PAIR 'a sink that blocks in recvmmsg (--poll-us 0) and one that polls every 5 ms count alike' '
	tx_pair blk --poll-us 0 -- --rate 40000 --size 64 &&
	counts_agree blk &&
	$JV blk.sink.json --check "d[\"params\"][\"poll_us\"] == 0" &&
	tx_pair slow --poll-us 5000 -- --rate 40000 --size 64 &&
	counts_agree slow &&
	$JV slow.sink.json --check "d[\"params\"][\"poll_us\"] == 5000"
'

test_expect_success PAIR 'io_uring engine' '
	tx_pair iou -- --engine io_uring --size 64 --batch 32 --rate 40000 &&
	counts_agree iou
'

test_expect_success PAIR 'UDP GSO: 10 segments of 1400 bytes per send' '
	tx_pair gso -- --size 14000 --gso 1400 --rate 30000 &&
	sent=$($JV gso.send.json "d[\"total\"][\"packets\"]") &&
	calls=$($JV gso.send.json "d[\"total\"][\"calls\"]") &&
	got=$($JV gso.sink.json "d[\"total\"][\"packets\"]") &&
	within_1pct "$sent" "$got" && [ "$sent" -gt 10000 ] &&
	$JV gso.sink.json --check "d[\"bytes\"] == 1400 * d[\"packets\"]"
'

test_expect_success PAIR 'IPv6, unlimited rate: the document is complete' '
	{ ip netns exec $B "$KLAB_UDP_TX" sink -6 --port 9101 --duration 3 --ready-fd 3 >s6.json 2>&1 3>s6.ready & } &&
	spid=$! && echo $spid >>"$SCRATCH/pids" && wait_ready s6.ready 10 $spid &&
	ip netns exec $A "$KLAB_UDP_TX" send -6 --addr 2001:2::2 --port 9101 --duration 1 >x6.json &&
	wait $spid &&
	$JV x6.json --check "d[\"packets\"] > 1000" "d[\"params\"][\"engine\"] == \"sendmmsg\"" &&
	$JV s6.json --check "d[\"packets\"] > 1000"
'

test_expect_success PAIR 'a sink-less veth (the drop target where there is no dummy driver): sent = interface tx' '
	ip -n $C link add tc0 type veth peer name tc1 &&
	ip -n $C addr add 198.18.221.1/24 dev tc0 && ip -n $C link set tc0 up && ip -n $C link set tc1 up &&
	mac=$(ip netns exec $C cat /sys/class/net/tc1/address) &&
	ip -n $C neigh add 198.18.221.2 lladdr $mac dev tc0 nud permanent &&
	tx0=$(ifstat $C tc0 tx_packets) &&
	ip netns exec $C "$KLAB_UDP_TX" send --addr 198.18.221.2 --port 9 --engine io_uring \
		--duration 1 --rate 50000 >dv.json &&
	tx1=$(ifstat $C tc0 tx_packets) &&
	within_1pct $($JV dv.json "d[\"total\"][\"packets\"]") $((tx1 - tx0))
'

test_expect_success PAIR,DUMMY 'a dummy device: sent = d0 tx_packets' '
	ip -n $C addr add 198.18.222.1/24 dev d0 && ip -n $C link set d0 up &&
	tx0=$(ifstat $C d0 tx_packets) &&
	ip netns exec $C "$KLAB_UDP_TX" send --addr 198.18.222.2 --port 9 --engine io_uring --duration 1 >d0.json &&
	tx1=$(ifstat $C d0 tx_packets) &&
	within_1pct $($JV d0.json "d[\"total\"][\"packets\"]") $((tx1 - tx0))
'

test_expect_success PAIR 'a blackhole route: a clear error, not a hang' '
	ip -n $C route add blackhole 198.18.223.0/24 &&
	test_expect_code 1 ip netns exec $C "$KLAB_UDP_TX" send --addr 198.18.223.1 --port 9 --duration 1 2>err &&
	test_grep "cannot connect to 198.18.223.1:9 (a blackhole or prohibit route?): Invalid argument" err
'

test_expect_success 'a sink with --start-wait counts its warm-up and window from a sender 2 s late' '
	port=$(test_free_port) &&
	{ "$KLAB_UDP_TX" sink --port $port --addr 127.0.0.1 --duration 1.5 --warmup 0.3 --start-wait 20 \
		--ready-fd 3 >late.sink.json 2>late.sink.err 3>late.ready & } &&
	spid=$! && echo $spid >>"$SCRATCH/pids" && wait_ready late.ready 10 $spid &&
	sleep 2 &&
	"$KLAB_UDP_TX" send --addr 127.0.0.1 --port $port --duration 1 --warmup 0.3 --rate 20000 \
		>late.send.json 2>late.send.err &&
	wait $spid &&
	sent=$($JV late.send.json "d[\"packets\"]") && got=$($JV late.sink.json "d[\"packets\"]") &&
	say "sender window $sent packets, sink window $got" &&
	$JV late.sink.json --check "d[\"params\"][\"start_wait_s\"] == 20" \
		"d[\"first_packet_s\"] >= 1.9" "d[\"packets\"] > 0" &&
	within_1pct "$sent" "$got"
'

test_expect_success 'no sink on loopback (ECONNREFUSED): counted by name, run completes' '
	port=$(test_free_port) &&
	"$KLAB_UDP_TX" send --addr 127.0.0.1 --port $port --duration 1 --engine sendto >refused.json &&
	$JV refused.json --check "d[\"total\"][\"errors\"].get(\"ECONNREFUSED\", 0) > 0" "d[\"total\"][\"packets\"] > 0"
'

test_done
