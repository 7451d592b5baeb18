#!/bin/bash
test_description='klab-agent prepare/restore on a multi-queue veth: everything back exactly, nothing half-applied'
. "$(dirname "$0")/lib.sh"

NS_A=klab$TEST_NUM-a-$$
NS_B=klab$TEST_NUM-b-$$
# at the top level: a test body runs in a subshell, its registrations are lost
test_cleanup "ip netns del $NS_A; ip netns del $NS_B"
export KLAB_AGENT_STATE=$SCRATCH/state

# every knob a profile may touch, with its value, one per line
snapshot() {
	ip netns exec $NS_A sh -c '
		for f in /sys/class/net/wl0/queues/*/xps_cpus /sys/class/net/wl0/queues/*/rps_cpus; do
			echo "$f $(cat $f)"; done
		ethtool -l wl0 | sed -n "/Current/,\$p"
		for s in net/core/somaxconn net/ipv4/udp_rmem_min net/core/rmem_max; do
			echo "$s $(cat /proc/sys/$s)"; done'
}

agent() { ip netns exec $NS_A "$KLAB_AGENT" "$@"; }

test_expect_success ROOT,NETNS 'a namespace with an 8-queue veth and non-default masks' '
	ip netns add $NS_A && ip netns add $NS_B &&
	ip link add wl0 numtxqueues 8 numrxqueues 8 netns $NS_A type veth \
		peer name wl1 numtxqueues 8 numrxqueues 8 netns $NS_B &&
	ip netns exec $NS_A sh -c "echo 2 >/sys/class/net/wl0/queues/tx-6/xps_cpus &&
		echo 1 >/sys/class/net/wl0/queues/rx-7/rps_cpus && echo 333 >/proc/sys/net/core/somaxconn" &&
	snapshot >before &&
	test $(grep -c xps_cpus before) = 8 && test_grep "tx-6/xps_cpus 2" before
'

test_expect_success ROOT,NETNS 'prepare applies channels, XPS, RPS and sysctls' '
	echo "{\"nic\": \"wl0\", \"channels\": 4, \"xps\": \"auto\", \"rps\": \"3\",
	       \"sysctls\": {\"net.core.somaxconn\": \"1234\", \"net.ipv4.udp_rmem_min\": 8192}}" >prof.json &&
	agent prepare xps-on <prof.json >prep.out &&
	test -f state/prepare.json &&
	snapshot >during &&
	test $(grep -c xps_cpus during) = 4 &&
	test_grep "tx-0/xps_cpus 1" during && test_grep "tx-1/xps_cpus 2" during &&
	test_grep "tx-2/xps_cpus 1" during &&
	test_grep "rx-3/rps_cpus 3" during &&
	test_grep "somaxconn 1234" during && test_grep "udp_rmem_min 8192" during &&
	test_grep "xps-on" prep.out
'

test_expect_success ROOT,NETNS 'a second prepare is refused while one is applied' '
	test_must_fail agent prepare <prof.json 2>err &&
	test_grep "already applied" err
'

test_expect_success ROOT,NETNS 'restore puts every mask, the channels and every sysctl back exactly' '
	agent restore >out &&
	snapshot >after &&
	test_cmp before after &&
	test ! -e state/prepare.json &&
	agent restore >out2 && test_grep "nothing to restore" out2
'

test_expect_success ROOT,NETNS 'a knob that does not exist: clear error, nothing changed' '
	echo "{\"nic\": \"wl0\", \"xps\": \"auto\", \"sysctls\": {\"net.core.no_such_knob\": \"1\"}}" >bad.json &&
	test_must_fail agent prepare <bad.json 2>err &&
	test_grep "sysctl .net.core.no_such_knob. does not exist" err &&
	snapshot >after2 && test_cmp before after2 &&
	test ! -e state/prepare.json
'

test_expect_success ROOT,NETNS 'a NIC that does not exist, an unknown key, a bad mask: refused' '
	echo "{\"nic\": \"wl9\", \"xps\": \"auto\"}" >nonic.json &&
	test_must_fail agent prepare <nonic.json 2>err && test_grep "no network interface .wl9." err &&
	echo "{\"nic\": \"wl0\", \"xsp\": \"auto\"}" >typo.json &&
	test_must_fail agent prepare <typo.json 2>err && test_grep "unknown key .xsp." err &&
	echo "{\"nic\": \"wl0\", \"xps\": \"1,zz\"}" >mask.json &&
	test_must_fail agent prepare <mask.json 2>err && test_grep "bad .xps. value" err &&
	echo "{\"nic\": \"wl0\", \"channels\": 64}" >many.json &&
	test_must_fail agent prepare <many.json 2>err && test_grep "at most 8 channels" err &&
	echo "{\"nic\": \"wl0\", \"irq_affinity\": \"auto\"}" >irq.json &&
	test_must_fail agent prepare <irq.json 2>err && test_grep "no IRQs of its own" err &&
	snapshot >after3 && test_cmp before after3
'

test_expect_success ROOT,NETNS 'a value the kernel rejects half way: everything applied is rolled back' '
	echo "{\"nic\": \"wl0\", \"channels\": 2, \"xps\": \"off\", \"rps\": \"2\",
	       \"sysctls\": {\"net.ipv4.udp_rmem_min\": \"9000\", \"net.core.somaxconn\": \"not-a-number\"}}" >half.json &&
	test_must_fail agent prepare <half.json 2>err &&
	test_grep "cannot write .not-a-number." err &&
	test_grep "rolled back" err &&
	snapshot >after4 && test_cmp before after4 &&
	test ! -e state/prepare.json
'

test_expect_success ROOT,NETNS 'a knob that exists but is read-only here: refused before anything changes' '
	echo "{\"nic\": \"wl0\", \"xps\": \"off\", \"sysctls\": {\"net.core.rmem_max\": \"300000\"}}" >ro.json &&
	test_must_fail agent prepare <ro.json 2>err &&
	test_grep "rmem_max. cannot be written here" err &&
	snapshot >after5 && test_cmp before after5 &&
	test ! -e state/prepare.json
'

test_expect_success ROOT,NETNS 'a governor on a machine without cpufreq: refused, nothing changed' '
	if test -e /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor; then
		say "this machine has cpufreq: nothing to check"
	else
		echo "{\"nic\": \"wl0\", \"xps\": \"auto\", \"governor\": \"performance\"}" >gov.json &&
		test_must_fail agent prepare <gov.json 2>err &&
		test_grep "cpufreq governor knob does not exist" err &&
		snapshot >after6 && test_cmp before after6 && test ! -e state/prepare.json
	fi
'

test_expect_success ROOT,NETNS 'a qdisc profile puts a root qdisc on the NIC, restore takes it away again' '
	ip netns exec $NS_A tc qdisc show dev wl0 root >q.before &&
	echo "{\"nic\": \"wl0\", \"qdisc\": \"tbf rate 2mbit burst 8kbit latency 20ms\"}" >q.json &&
	agent prepare slow <q.json >q.out &&
	ip netns exec $NS_A tc qdisc show dev wl0 root >q.during &&
	test_grep "qdisc tbf" q.during &&
	agent restore >r.out &&
	ip netns exec $NS_A tc qdisc show dev wl0 root >q.after &&
	test_cmp q.before q.after
'

test_expect_success ROOT,NETNS 'a NIC whose root qdisc someone else set is refused, and left as it was' '
	ip netns exec $NS_A tc qdisc replace dev wl0 root handle 9: tbf rate 5mbit burst 8kbit latency 50ms &&
	ip netns exec $NS_A tc qdisc show dev wl0 root >own.before &&
	test_must_fail agent prepare slow <q.json 2>err &&
	test_grep "already has a root qdisc of its own" err &&
	ip netns exec $NS_A tc qdisc show dev wl0 root >own.after &&
	test_cmp own.before own.after &&
	ip netns exec $NS_A tc qdisc del dev wl0 root
'

test_expect_success ROOT,NETNS 'a qdisc tc refuses rolls back every knob written before it' '
	snapshot >s.before &&
	echo "{\"nic\": \"wl0\", \"xps\": \"auto\", \"qdisc\": \"klab-no-such-qdisc\"}" >bad.json &&
	test_must_fail agent prepare bad <bad.json 2>err &&
	test_grep "rolled back every change" err &&
	snapshot >s.after &&
	test_cmp s.before s.after
'

test_done
