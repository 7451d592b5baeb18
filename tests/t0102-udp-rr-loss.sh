#!/bin/bash
test_description='klab-udp-rr between two namespaces: 1% loss shows up as losses and never stalls a flow; unreachable peers'
. "$(dirname "$0")/lib.sh"

JV="python3 $SRCDIR/tests/data/workloads/jv.py"
# background generators started inside test bodies record their pid here, so that
# a failing test does not leave them running (cleanups registered in a body are lost)
test_cleanup 'for p in $(cat "$SCRATCH/pids" 2>/dev/null); do kill -9 $p; done'
A=klwa$$ B=klwb$$
VA=kwa$$ VB=kwb$$
A4=198.18.210.1 B4=198.18.210.2

# Setup runs at the top level: prerequisites and cleanups registered inside a
# test body (a subshell) would be lost.
loss_kind=none
if test_have_prereq ROOT,NETNS; then
	test_cleanup "ip netns del $A; ip netns del $B"
	if ip netns add $A && ip netns add $B &&
	   ip link add $VA type veth peer name $VB &&
	   ip link set $VA netns $A && ip link set $VB netns $B &&
	   ip -n $A addr add $A4/24 dev $VA && ip -n $B addr add $B4/24 dev $VB &&
	   ip -n $A addr add 2001:2::1/64 dev $VA nodad && ip -n $B addr add 2001:2::2/64 dev $VB nodad &&
	   ip -n $A link set lo up && ip -n $B link set lo up &&
	   ip -n $A link set $VA up && ip -n $B link set $VB up; then
		test_set_prereq PAIR
	fi
fi

# Loss on the path: tc netem where the kernel has it, else an nftables rule that
# drops 1% of the UDP datagrams at the input hook of each side (the host kernel
# here has no sch_netem; lib.sh's NETEM prerequisite does not probe for it).
if test_have_prereq PAIR; then
	if ip netns exec $A tc qdisc add dev $VA root netem loss 1% 2>/dev/null &&
	   ip netns exec $B tc qdisc add dev $VB root netem loss 1% 2>/dev/null; then
		loss_kind=netem
	elif command -v nft >/dev/null; then
		loss_kind=nft
		for ns in $A $B; do
			ip netns exec $ns nft add table inet klabloss &&
			ip netns exec $ns nft add chain inet klabloss in "{ type filter hook input priority 0; }" &&
			ip netns exec $ns nft add rule inet klabloss in meta l4proto udp numgen random mod 100 "<" 1 counter drop ||
			loss_kind=none
		done
	fi
	say "loss made with: $loss_kind"
	[ $loss_kind != none ] && test_set_prereq LOSS
fi

# dropped_total: datagrams the loss stage dropped on both sides
dropped_total() {
	local n=0 ns d
	for ns in $A $B; do
		if [ $loss_kind = netem ]; then
			d=$(ip netns exec $ns tc -s qdisc show | sed -n "s/.*dropped \([0-9]*\).*/\1/p" | head -1)
		else
			d=$(ip netns exec $ns nft list chain inet klabloss in | sed -n "s/.*packets \([0-9]*\).*/\1/p" | head -1)
		fi
		n=$((n + ${d:-0}))
	done
	echo $n
}

test_expect_success LOSS 'losses are counted, every second and every flow keeps going' '
	d0=$(dropped_total) &&
	{ ip netns exec $B "$KLAB_UDP_RR" server --port 9000 --duration 6 --ready-fd 3 >srv.json 2>srv.err 3>srv.ready & } &&
	spid=$! && echo $spid >>"$SCRATCH/pids" && wait_ready srv.ready 10 $spid &&
	ip netns exec $A "$KLAB_UDP_RR" client --addr $B4 --port 9000 --flows 8 --burst 2 --rto-ms 20 \
		--duration 3 --warmup 0.5 >cli.json 2>cli.err &&
	wait $spid &&
	d1=$(dropped_total) && dropped=$((d1 - d0)) &&
	to=$($JV cli.json "d[\"total\"][\"timeouts\"]") &&
	late=$($JV cli.json "d[\"total\"][\"late\"]") &&
	say "dropped on the path: $dropped; client timeouts $to, late $late" &&
	$JV cli.json --check "d[\"losses\"] > 0" "d[\"timeouts\"] >= d[\"losses\"]" \
		"d[\"transactions\"] > 1000" \
		"len(d[\"series\"]) >= 3 and min(p[\"tps\"] for p in d[\"series\"]) > 0.3 * d[\"tps\"]" \
		"d[\"per_flow_tps\"][\"min\"] > 0.2 * d[\"per_flow_tps\"][\"median\"]" &&
	# every datagram dropped on the path is one timeout (+- the 16 in flight at the end)
	[ $((to - late)) -le $((dropped + 16)) ] && [ $((to - late)) -ge $((dropped - 16)) ] &&
	# the loss rate seen is about 2% of transactions (1% each way), not 0 and not 10%
	$JV cli.json --check "0.005 < d[\"total\"][\"timeouts\"] / d[\"total\"][\"sent\"] < 0.06"
'

test_expect_success PAIR 'IPv6 across the namespaces' '
	{ ip netns exec $B "$KLAB_UDP_RR" server -6 --port 9001 --duration 4 --ready-fd 3 >srv6.json 2>&1 3>srv6.ready & } &&
	spid=$! && echo $spid >>"$SCRATCH/pids" && wait_ready srv6.ready 10 $spid &&
	ip netns exec $A "$KLAB_UDP_RR" client -6 --addr 2001:2::2 --port 9001 --flows 4 \
		--duration 1.5 >cli6.json &&
	wait $spid &&
	$JV cli6.json --check "d[\"transactions\"] > 100" &&
	$JV srv6.json --check "d[\"echoed\"] >= d[\"received\"] - 4"
'

test_expect_success PAIR 'no route to the peer: a clear error at once' '
	test_expect_code 1 ip netns exec $A "$KLAB_UDP_RR" client --addr 198.18.211.9 --port 9000 \
		--flows 2 --duration 1 >out 2>err &&
	test_grep "cannot connect flow 1 to 198.18.211.9:9000: Network is unreachable" err &&
	test_expect_code 1 ip netns exec $A "$KLAB_UDP_TX" send --addr 198.18.211.9 --port 9000 \
		--duration 1 >out 2>err &&
	test_grep "cannot connect to 198.18.211.9:9000: Network is unreachable" err
'

test_expect_success PAIR 'a silent peer (nothing listens, ICMP dropped): timeouts, exit 1 at the deadline' '
	ip netns exec $B nft add table inet klabsilent &&
	ip netns exec $B nft add chain inet klabsilent out "{ type filter hook output priority 0; }" &&
	ip netns exec $B nft add rule inet klabsilent out meta l4proto icmp drop &&
	start=$(date +%s%N) &&
	test_expect_code 1 ip netns exec $A "$KLAB_UDP_RR" client --addr $B4 --port 9555 --flows 3 \
		--duration 1 --rto-ms 50 >out 2>err &&
	ms=$(( ($(date +%s%N) - start) / 1000000 )) && [ $ms -lt 3500 ] &&
	test_grep "no response from $B4:9555 in 1.0 s" err &&
	$JV out --check "d[\"timeouts\"] > 3 * 10" "d[\"errors\"] == 0" "d[\"total\"][\"sent\"] < 3 * 30"
' 

test_done
