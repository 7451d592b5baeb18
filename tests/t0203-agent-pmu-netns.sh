#!/bin/bash
test_description='klab-agent run: hardware counters where the machine has a PMU, and on one without (this VM) no hardware metric and the reason'
. "$(dirname "$0")/lib.sh"

NS_A=klab$TEST_NUM-a-$$
NS_B=klab$TEST_NUM-b-$$
# at the top level: a test body runs in a subshell, its registrations are lost
test_cleanup "ip netns del $NS_A; ip netns del $NS_B"
ADDR_A=198.18.2.5
ADDR_B=198.18.2.6

test_expect_success ROOT,NETNS 'two namespaces joined by a veth' '
	ip netns add $NS_A && ip netns add $NS_B &&
	ip link add wl0 netns $NS_A type veth peer name wl1 netns $NS_B &&
	ip -n $NS_A addr add $ADDR_A/24 dev wl0 && ip -n $NS_B addr add $ADDR_B/24 dev wl1 &&
	ip -n $NS_A link set wl0 up && ip -n $NS_B link set wl1 up &&
	ip -n $NS_A link set lo up && ip -n $NS_B link set lo up
'

test_expect_success 'sysinfo records the PMU it found' '
	"$KLAB_AGENT" sysinfo --no-tools >si.json &&
	python3 - si.json <<-\PY
	import json, os, sys
	p = json.load(open(sys.argv[1]))["pmu"]
	def check(cond, msg):
	    if not cond:
	        print("FAIL:", msg); sys.exit(1)
	    print("ok:", msg)
	devs = os.listdir("/sys/bus/event_source/devices")
	cpu = sorted(d for d in devs if d in ("cpu", "cpu_core", "cpu_atom") or d.startswith("armv8_") or d.startswith("armv7_"))
	check(p["present"] == bool(cpu), "present %s, event sources %s" % (p["present"], devs))
	par = int(open("/proc/sys/kernel/perf_event_paranoid").read())
	check(p["perf_event_paranoid"] == par, "perf_event_paranoid %d" % par)
	if cpu:
	    check(p["devices"] == " ".join(cpu), "devices %s" % p["devices"])
	else:
	    check(not p["usable"] and p["reason"].startswith("no hardware PMU") and
	          " ".join(sorted(devs)) in p["reason"], "the reason names what there is: %s" % p["reason"])
	PY
'

# spec ROLE RUN_ID PARAMS MONITORS NIC: a udp_tx run spec on stdout
spec() {
	cat <<JSON
{ "spec_version": 1, "run_id": "$2", "role": "$1",
  "workload": { "name": "tx_pmu", "type": "udp_tx", "params": $3 },
  "peer_addr": "$ADDR_B", "nic": "$5", "duration_s": 2, "warmup_s": 0.5,
  "monitors": $4, "results_dir": "$SCRATCH/results-$1", "perf_profile_cpus": "0" }
JSON
}

test_expect_success ROOT,NETNS,PERF 'udp_tx with perf-stat: the hardware metrics, or none and the reason' '
	spec sink pmu-sink "{\"port\": \"9111\"}" "[\"cpu\"]" wl1 >sink.spec &&
	spec send pmu-1 "{\"port\": \"9111\", \"size\": \"64\", \"rate\": \"20000\"}" \
		"[\"cpu\", \"perf-stat\"]" wl0 >send.spec &&
	{ ip netns exec $NS_B "$KLAB_AGENT" run <sink.spec >sink.json 2>sink.err & } &&
	kpid=$! && wait_ready sink.err 20 $kpid &&
	ip netns exec $NS_A "$KLAB_AGENT" run <send.spec >send.json 2>send.err &&
	wait $kpid &&
	cat send.err &&
	python3 - send.json si.json <<-\PY
	import json, sys
	t = json.load(open(sys.argv[1])); si = json.load(open(sys.argv[2]))["pmu"]
	def check(cond, msg):
	    if not cond:
	        print("FAIL:", msg); sys.exit(1)
	    print("ok:", msg)
	check(t["status"] == "ok" and t["monitors"]["perf-stat"] == "ok", "run and perf-stat ok")
	m = {x["name"]: x["value"] for x in t["metrics"]}
	p = t["pmu"]
	hw = ("cycles_per_op", "hw_insn_per_op", "ipc", "cache_misses_per_op", "llc_load_misses_per_op",
	      "l1d_load_misses_per_op", "branch_misses_per_op")
	check(m["packets"] > 1000 and m["perf.cpu-clock"] > 0, "packets %d, software events counted" % m["packets"])
	check(p["present"] == si["present"] and p["usable"] == si["usable"], "the run found what sysinfo found")
	if p["usable"]:
	    check(all(k in m for k in ("cycles_per_op", "hw_insn_per_op", "ipc")), "hardware metrics")
	    check("cycles" in p["events"] and "cpus0.cycles_per_op" in m, "cycles counted, CPU set 0 too")
	    check(t["monitors"]["pmu"] == "ok", "monitors.pmu ok")
	else:
	    names = [k for k in m if k in hw or k.split(".")[-1] in hw]
	    check(not names, "no hardware metric: %s" % names)
	    check(p["reason"] == si["reason"] and p["reason"].startswith("no hardware PMU"),
	          "the run carries the reason: %s" % p["reason"])
	    check("cycles" not in p["events"].split(","), "no hardware event asked for: %s" % p["events"])
	    check(t["monitors"]["pmu"] == "unavailable: " + si["reason"], "monitors.pmu says why: %s" % t["monitors"]["pmu"])
	    check(not any(not e["supported"] for e in t["perf_stat"]), "so no <not supported> row either")
	PY
'

test_expect_success ROOT,NETNS 'udp_tx with the pmu monitor alone (a measurement run): no perf stat without a PMU, and the reason' '
	spec sink pmu-sink2 "{\"port\": \"9112\"}" "[\"cpu\"]" wl1 >sink2.spec &&
	spec send pmu-2 "{\"port\": \"9112\", \"size\": \"64\", \"rate\": \"20000\"}" \
		"[\"cpu\", \"pmu\"]" wl0 >send2.spec &&
	{ ip netns exec $NS_B "$KLAB_AGENT" run <sink2.spec >sink2.json 2>sink2.err & } &&
	kpid=$! && wait_ready sink2.err 20 $kpid &&
	ip netns exec $NS_A "$KLAB_AGENT" run <send2.spec >send2.json 2>send2.err &&
	wait $kpid &&
	python3 - send2.json si.json <<-\PY
	import json, sys
	t = json.load(open(sys.argv[1])); si = json.load(open(sys.argv[2]))["pmu"]
	def check(cond, msg):
	    if not cond:
	        print("FAIL:", msg); sys.exit(1)
	    print("ok:", msg)
	m = {x["name"]: x["value"] for x in t["metrics"]}
	check(t["status"] == "ok" and m["packets"] > 1000 and "cpu_us_per_op" in m, "run ok, cpu_us_per_op")
	check(set(t["monitors"]) == {"cpu", "pmu"}, "monitors %s" % sorted(t["monitors"]))
	if si["usable"]:
	    check(t["monitors"]["pmu"] == "ok" and "cycles_per_op" in m and "perf.cpu-clock" not in m,
	          "hardware counters alone, no software event")
	else:
	    check(t["monitors"]["pmu"] == "unavailable: " + si["reason"], "monitors.pmu: %s" % t["monitors"]["pmu"])
	    check(t["pmu"]["reason"] == si["reason"] and "perf_stat" not in t, "the reason in pmu, and no perf stat ran")
	    check(not any(k.startswith("perf.") or k in ("cycles_per_op", "ipc") for k in m), "no perf figure")
	PY
'

test_done
