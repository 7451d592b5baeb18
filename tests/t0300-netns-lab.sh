#!/bin/bash
test_description='netns lab: up makes two namespaces with sshd and a multi-queue veth, status shows it, down removes all'
. "$(dirname "$0")/lib.sh"

# lab indices come from --index auto (so that labs of tests running at once never collide)
L1=$SCRATCH/lab1 L2=$SCRATCH/lab2
# a killed daemon may stay a zombie until init reaps it
gone_or_zombie() {
	local i
	for i in $(seq 50); do
		[ -e /proc/$1 ] || return 0
		[ "$(awk "{print \$3}" /proc/$1/stat 2>/dev/null)" = Z ] && return 0
		sleep 0.1
	done
	echo "process $1 still alive" >&2; return 1
}
test_cleanup '"$KLAB" lab down --dir "$L1"; "$KLAB" lab down --dir "$L2"'
index_of() { sed -n 's/^netns lab \([0-9]*\) up.*/\1/p' "$1" 2>/dev/null; }

test_expect_success ROOT,NETNS,SSHD 'lab up --netns with 4 queues' '
	"$KLAB" lab up --netns --queues 4 --dir "$L1" --index auto >up1 &&
	K1=$(index_of up1) && test -n "$K1" &&
	ip netns list >ns && test_grep "^klab$K1-dut" ns && test_grep "^klab$K1-peer" ns
'
K1=$(index_of up1)
# by index too: when every test passed, test_done removes $SCRATCH (and the lab's state) first
[ -n "$K1" ] && test_cleanup "'$KLAB' lab down --dir '$L1' --index $K1"
DUT1=198.18.255.$((8 * K1 + 2)) PEER1=198.18.255.$((8 * K1 + 6))
WL0=198.18.0.$((4 * K1 + 1)) WL1=198.18.0.$((4 * K1 + 2))

test_expect_success ROOT,NETNS,SSHD 'the workload veth has 4 tx and 4 rx queues and the planned addresses' '
	ls /sys/class/net >/dev/null &&
	ip netns exec klab$K1-dut ls /sys/class/net/wl0/queues >q &&
	test $(grep -c "^tx-" q) = 4 && test $(grep -c "^rx-" q) = 4 &&
	ip -n klab$K1-dut -4 addr show wl0 >a && test_grep "inet $WL0/24" a &&
	ip -n klab$K1-peer -4 addr show wl1 >a && test_grep "inet $WL1/24" a &&
	{ ip netns exec klab$K1-peer timeout 10 python3 -c "
import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind((\"$WL1\", 9)); s.settimeout(8)
open(\"rx.ready\", \"w\").write(\"ready\\n\")
open(\"got\", \"wb\").write(s.recvfrom(100)[0])" & } &&
	rpid=$! && wait_ready rx.ready 10 $rpid &&
	ip netns exec klab$K1-dut python3 -c "
import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b\"hello-wl\", (\"$WL1\", 9))" &&
	wait $rpid &&
	test "$(cat got)" = hello-wl
'

test_expect_success ROOT,NETNS,SSHD 'the config fragment names dut and peer with boot = none and the lab keys' '
	"$KLAB" config check "$L1/klab.conf" >chk 2>&1 &&
	test_grep "host = $DUT1" "$L1/klab.conf" &&
	test_grep "host = $PEER1" "$L1/klab.conf" &&
	test_grep "boot = none" "$L1/klab.conf" &&
	test_grep "nic = wl0" "$L1/klab.conf" &&
	test_grep "known_hosts = $L1/known_hosts" "$L1/klab.conf" &&
	test $(wc -l <"$L1/known_hosts") = 2
'

test_expect_success ROOT,NETNS,SSHD 'OpenSSH reaches both machines with the lab key and known_hosts only' '
	for h in $DUT1 $PEER1; do
		ssh -F /dev/null -o BatchMode=yes -o StrictHostKeyChecking=yes \
			-o UserKnownHostsFile="$L1/known_hosts" -i "$L1/keys/id_ed25519" root@$h \
			cat /proc/self/net/dev >dev.$h || return 1
	done &&
	test_grep "wl0" dev.$DUT1 && test_grep "wl1" dev.$PEER1
'

test_expect_success ROOT,NETNS,SSHD 'password login is refused (key only)' '
	test_must_fail ssh -F /dev/null -o BatchMode=yes -o PubkeyAuthentication=no \
		-o UserKnownHostsFile="$L1/known_hosts" root@$DUT1 true 2>err &&
	test_grep "Permission denied" err
'

test_expect_success ROOT,NETNS,SSHD 'a second lab with another index runs beside the first' '
	"$KLAB" lab up --netns --dir "$L2" --index auto >up2 &&
	K2=$(index_of up2) && test "$K2" != "$K1" &&
	ip netns exec klab$K2-dut ls /sys/class/net/wl0/queues >q2 &&
	test $(grep -c "^tx-" q2) = 8 &&
	"$KLAB" lab status --dir "$L1" --index $K1 >st1 &&
	"$KLAB" lab status --dir "$L2" --index $K2 >st2 &&
	test_grep "up" st1 && test_grep "198.18.255.$((8 * K2 + 2))" st2
'
K2=$(index_of up2)
[ -n "$K2" ] && test_cleanup "'$KLAB' lab down --dir '$L2' --index $K2"

test_expect_success ROOT,NETNS,SSHD 'lab up again on the same folder or index is refused' '
	test_must_fail "$KLAB" lab up --netns --dir "$L1" --index $K1 2>err &&
	test_grep "already up" err &&
	test_must_fail "$KLAB" lab up --netns --dir "$SCRATCH/other" --index $K1 2>err &&
	test_grep "exists already" err
'

test_expect_success ROOT,NETNS,SSHD 'lab status --json' '
	"$KLAB" lab status --json --dir "$L1" --index $K1 >st.json &&
	python3 -c "
import json,sys
d=json.load(open(\"st.json\"))
assert d[\"state\"]==\"up\", d
assert d[\"queues\"]==4
m={x[\"name\"]:x for x in d[\"machines\"]}
assert m[\"dut\"][\"sshd_running\"] and m[\"peer\"][\"sshd_running\"]
assert m[\"dut\"][\"host\"]==\"$DUT1\"
"
'

test_expect_success ROOT,NETNS,SSHD 'status notices a dead sshd' '
	"$SRCDIR/tests/data/ssh/lab-sshd.sh" stop "$L2" peer &&
	test_expect_code 1 "$KLAB" lab status --dir "$L2" --index $K2 >st &&
	test_grep "degraded" st && test_grep "NOT running" st
'

test_expect_success ROOT,NETNS,SSHD 'lab down removes namespaces, veths, sshd and the folder' '
	pid=$(cat "$L1/dut/sshd.pid") &&
	"$KLAB" lab down --dir "$L1" --index $K1 >out &&
	test_grep "is down" out &&
	! ip netns list | grep -q "^klab$K1-" &&
	! test -e /sys/class/net/klab${K1}d &&
	! test -e /sys/class/net/klab${K1}p &&
	gone_or_zombie $pid &&
	! test -e "$L1" &&
	test_expect_code 1 "$KLAB" lab status --dir "$L1" --index $K1 >st &&
	test_grep "no netns lab" st &&
	"$KLAB" lab down --dir "$L2" --index $K2 &&
	! ip netns list | grep -q "^klab$K2-"
'

test_expect_success ROOT,NETNS,SSHD 'down by index after the folder is gone removes only a lab made for that folder' '
	L3=$SCRATCH/lab3 &&
	"$KLAB" lab up --netns --dir "$L3" --index auto >up3 &&
	K3=$(index_of up3) && test -n "$K3" &&
	echo "$K3" >k3 &&
	"$KLAB" lab down --dir "$L1" --index $K3 >out &&
	test_grep "belongs to $L3: left alone" out &&
	ip netns list | grep -q "^klab$K3-dut" &&
	rm -rf "$L3" &&
	"$KLAB" lab down --dir "$L3" --index $K3 >out &&
	test_grep "removed the namespaces of lab $K3" out &&
	! ip netns list | grep -q "^klab$K3-" &&
	"$KLAB" lab down --dir "$L3" --index $K3 >out &&
	test_grep "no owner record: left alone" out
'
test -s k3 && test_cleanup "'$KLAB' lab down --dir '$SCRATCH/lab3' --index $(cat k3)"

test_expect_success 'bad options are usage errors' '
	test_expect_code 2 "$KLAB" lab up --netns --queues 0 2>err &&
	test_grep "queues" err &&
	test_expect_code 2 "$KLAB" lab up --netns --index 99 2>err &&
	test_grep "index" err &&
	test_expect_code 2 "$KLAB" lab frobnicate 2>err
'

test_done
