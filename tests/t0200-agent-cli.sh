#!/bin/bash
test_description='klab-agent: version, usage, sysinfo, run spec errors, fetch/ack/list of kept results'
. "$(dirname "$0")/lib.sh"

export KLAB_AGENT_STATE=$SCRATCH/state

test_expect_success 'version and usage' '
	"$KLAB_AGENT" version >out && test_grep "klab-agent 0.1.0 (result schema 1" out &&
	test_expect_code 2 "$KLAB_AGENT" 2>err && test_grep "usage: klab-agent" err &&
	test_expect_code 2 "$KLAB_AGENT" frobnicate 2>err && test_grep "unknown command .frobnicate." err &&
	"$KLAB_AGENT" --help >out && test_grep "prepare" out && test_grep -v "_tracefs" out
'

test_expect_success 'udp-rr and udp-tx subcommands reach the generators' '
	test_expect_code 2 "$KLAB_AGENT" udp-rr bogus 2>err && test_grep "bogus" err &&
	test_expect_code 2 "$KLAB_AGENT" udp-tx 2>err
'

test_expect_success 'sysinfo is one JSON document with the kernel, CPUs, NICs, sysctls and tools' '
	"$KLAB_AGENT" sysinfo >si.json &&
	python3 - si.json <<-\PY
	import json, os, sys
	d = json.load(open(sys.argv[1]))
	assert d["kernel"]["release"] == os.uname().release, d["kernel"]
	assert d["cpu"]["count"] == os.cpu_count(), d["cpu"]
	assert d["mem_kb"] > 0
	assert "lo" not in d["nics"]
	assert "net.core.rmem_max" in d["sysctls"]
	assert d["tools"]["perf"].startswith("perf version"), d["tools"]
	bid = d["kernel"]["build_id"]
	assert bid is None or len(bid) == 40, bid
	PY
	"$KLAB_AGENT" sysinfo --no-tools >si2.json && test_grep -v "\"tools\"" si2.json
'

test_expect_success 'the build id matches the one perf reads from the running kernel' '
	bid=$(python3 -c "import json; print(json.load(open(\"si.json\"))[\"kernel\"][\"build_id\"])") &&
	if command -v perf >/dev/null && perf buildid-list -k >pk 2>/dev/null && test -s pk; then
		test_grep "$bid" pk
	fi
'

run_spec() { "$KLAB_AGENT" run; }

test_expect_success 'run: a bad spec is refused with the field named, nothing kept' '
	echo "{\"spec_version\": 2, \"run_id\": \"x\"}" >s1 &&
	test_must_fail run_spec <s1 2>err && test_grep "unknown spec_version 2" err &&
	echo "{\"spec_version\": 1}" >s2 &&
	test_must_fail run_spec <s2 2>err && test_grep "missing .run_id." err &&
	echo "{\"spec_version\": 1, \"run_id\": \"../x\", \"role\": \"client\"}" >s3 &&
	test_must_fail run_spec <s3 2>err && test_grep "bad run_id" err &&
	echo "{\"spec_version\": 1, \"run_id\": \"a\", \"role\": \"client\", \"workload\": {\"type\": \"tcp_rr\"}}" >s4 &&
	test_must_fail run_spec <s4 2>err && test_grep "unknown workload type .tcp_rr." err &&
	echo "{\"spec_version\": 1, \"run_id\": \"a\", \"role\": \"sink\", \"workload\": {\"type\": \"udp_rr\"}}" >s5 &&
	test_must_fail run_spec <s5 2>err && test_grep "role .sink. does not fit" err &&
	echo "{\"spec_version\": 1, \"run_id\": \"a\", \"role\": \"client\", \"peer_addr\": \"127.0.0.1\",
	       \"duration_s\": 2, \"workload\": {\"type\": \"udp_rr\", \"params\": {\"flowz\": \"5\"}}}" >s6 &&
	test_must_fail run_spec <s6 2>err && test_grep "unknown parameter .flowz." err &&
	echo "{\"spec_version\": 1, \"run_id\": \"a\", \"role\": \"client\", \"peer_addr\": \"127.0.0.1\",
	       \"duration_s\": 2, \"monitors\": [\"cpu\", \"tcpdump\"], \"workload\": {\"type\": \"udp_rr\"}}" >s7 &&
	test_must_fail run_spec <s7 2>err && test_grep "unknown monitor .tcpdump." err &&
	echo "{\"spec_version\": 1, \"run_id\": \"a\", \"role\": \"client\", \"peer_addr\": \"127.0.0.1\",
	       \"duration_s\": 2, \"perf_profile_hz\": 0, \"workload\": {\"type\": \"udp_rr\"}}" >s7b &&
	test_must_fail run_spec <s7b 2>err && test_grep "perf_profile_hz. must be an integer from 1 to 20000" err &&
	echo "{\"spec_version\": 1, \"run_id\": \"a\", \"role\": \"client\", \"peer_addr\": \"127.0.0.1\",
	       \"duration_s\": 2, \"perf_profile_cpus\": \"1-\", \"workload\": {\"type\": \"udp_rr\"}}" >s7c &&
	test_must_fail run_spec <s7c 2>err && test_grep "perf_profile_cpus. must be a CPU list such as 1 or 0-3,8, not .1-." err &&
	echo "{\"spec_version\": 1, \"run_id\": \"a\", \"role\": \"client\", \"workload\": {\"type\": \"udp_rr\"}, \"duration_s\": 2}" >s8 &&
	test_must_fail run_spec <s8 2>err && test_grep "needs .peer_addr." err &&
	echo "{\"spec_version\": 1, \"run_id\": \"a\", \"role\": \"client\", \"peer_addr\": \"127.0.0.1\",
	       \"duration_s\": 2, \"start_wait_s\": 5, \"workload\": {\"type\": \"udp_rr\"}}" >s8b &&
	test_must_fail run_spec <s8b 2>err && test_grep "start_wait_s. is for a server or a sink, not role .client." err &&
	echo "{\"spec_version\": 1, " >s9 &&
	test_must_fail run_spec <s9 2>err && test_grep "malformed JSON" err &&
	test ! -e state/results || test -z "$(ls state/results)"
'

test_expect_success 'run on loopback: result on stdout and kept; a failing generator gives status failed' '
	port=$(test_free_port) &&
	cat >srv.spec <<-JSON &&
	{"spec_version": 1, "run_id": "lo-srv", "role": "server", "duration_s": 2, "warmup_s": 0, "linger_s": 2,
	 "start_wait_s": 20,
	 "workload": {"name": "rr", "type": "udp_rr", "params": {"port": "$port"}}, "monitors": ["cpu"]}
	JSON
	cat >cl.spec <<-JSON &&
	{"spec_version": 1, "run_id": "lo-cl", "role": "client", "duration_s": 2, "warmup_s": 0,
	 "peer_addr": "127.0.0.1", "nic": "lo",
	 "workload": {"name": "rr", "type": "udp_rr", "params": {"port": "$port", "flows": 4}},
	 "monitors": ["cpu", "nic"]}
	JSON
	{ "$KLAB_AGENT" run <srv.spec >srv.json 2>srv.err & } &&
	spid=$! && wait_ready srv.err 20 $spid &&
	"$KLAB_AGENT" run <cl.spec >cl.json &&
	wait $spid &&
	test_cmp cl.json state/results/lo-cl.json &&
	python3 -c "import json; d=json.load(open(\"srv.json\")); w=d[\"workload\"]; assert d[\"status\"] == \"ok\" and w[\"received\"] > 0 and w[\"params\"][\"start_wait_s\"] == 20 and w[\"first_request_s\"] is not None, d" &&
	python3 -c "import json; d=json.load(open(\"cl.json\")); assert d[\"status\"] == \"ok\" and d[\"monitors\"] == {\"cpu\": \"ok\", \"nic\": \"ok\"}, d[\"monitors\"]" &&
	sed -e "s/lo-cl/lo-bad/; s/\"flows\": 4/\"flows\": 0/" cl.spec >bad.spec &&
	test_must_fail "$KLAB_AGENT" run <bad.spec >bad.json 2>err &&
	test_grep "generator failed" err &&
	python3 -c "import json; d=json.load(open(\"bad.json\")); assert d[\"status\"] == \"failed\" and \"flows\" in d[\"error\"], d[\"error\"]"
'

test_expect_success 'a server role that cannot bind never says ready; the run fails with the reason' '
	port=$(test_free_port) &&
	{ "$KLAB_UDP_RR" server --port $port --duration 10 --ready-fd 3 >/dev/null 2>&1 3>holder.ready & } &&
	hpid=$! && wait_ready holder.ready 10 $hpid &&
	sed -e "s/lo-srv/busy-srv/; s/\"port\": \"[0-9]*\"/\"port\": \"$port\"/" srv.spec >busy.spec &&
	test_must_fail "$KLAB_AGENT" run <busy.spec >busy.json 2>busy.err &&
	kill $hpid && wait $hpid &&
	test_grep "port in use" busy.err &&
	test_grep -v "ready" busy.err &&
	"$KLAB_AGENT" ack busy-srv
'

test_expect_success 'tools missing: each monitor says unavailable, the run still succeeds' '
	port=$(test_free_port) &&
	mkdir -p empty &&
	cat >srv2.spec <<-JSON &&
	{"spec_version": 1, "run_id": "np-srv", "role": "server", "duration_s": 1, "warmup_s": 0, "linger_s": 2,
	 "workload": {"name": "rr", "type": "udp_rr", "params": {"port": "$port"}}}
	JSON
	cat >np.spec <<-JSON &&
	{"spec_version": 1, "run_id": "np", "role": "client", "duration_s": 1, "warmup_s": 0,
	 "peer_addr": "127.0.0.1", "nic": "no-such-nic0", "bpftrace_script": "tracepoint:net:net_dev_xmit { @n = count(); }",
	 "workload": {"name": "rr", "type": "udp_rr", "params": {"port": "$port", "flows": 2}},
	 "monitors": ["cpu", "perf-stat", "perf-profile", "bpftrace", "nic"]}
	JSON
	{ "$KLAB_AGENT" run <srv2.spec >/dev/null 2>srv2.err & } &&
	spid=$! && wait_ready srv2.err 20 $spid &&
	PATH=$SCRATCH/empty "$KLAB_AGENT" run <np.spec >np.json &&
	wait $spid &&
	python3 - np.json <<-\PY
	import json, sys
	d = json.load(open(sys.argv[1])); m = d["monitors"]; print(m)
	assert d["status"] == "ok"
	assert m["cpu"] == "ok"
	assert m["perf-stat"] == "unavailable: perf not found", m
	assert m["perf-profile"] == "unavailable: perf not found", m
	assert m["bpftrace"] == "unavailable: bpftrace not found", m
	assert m["nic"].startswith("unavailable: no interface \x27no-such-nic0\x27"), m
	PY
	"$KLAB_AGENT" ack np && "$KLAB_AGENT" ack np-srv
'

test_expect_success 'a run that goes on holds its id: fetch exits 3, a second run of it is refused with 3 and changes nothing' '
	port=$(test_free_port) &&
	sed -e "s/lo-srv/live-srv/; s/\"port\": \"[0-9]*\"/\"port\": \"$port\"/; s/\"start_wait_s\": 20/\"start_wait_s\": 4/" \
		srv.spec >live.spec &&
	{ "$KLAB_AGENT" run <live.spec >live.json 2>live.err & } &&
	lpid=$! && wait_ready live.err 20 $lpid &&
	test_expect_code 3 "$KLAB_AGENT" fetch live-srv 2>err &&
	test_grep "run .live-srv. is still running" err &&
	test_expect_code 3 "$KLAB_AGENT" run <live.spec >again.json 2>err &&
	test_grep "run .live-srv. is being run now" err &&
	test ! -s again.json &&
	test -e state/results/.work-live-srv/lock &&
	# the first run ends by itself (no client came within its start wait) and keeps its result
	wait $lpid &&
	python3 -c "import json; d=json.load(open(\"live.json\")); assert d[\"status\"] == \"ok\" and d[\"workload\"][\"first_request_s\"] is None, d" &&
	"$KLAB_AGENT" fetch live-srv >f.json && test_cmp live.json f.json &&
	test ! -e state/results/.work-live-srv &&
	"$KLAB_AGENT" ack live-srv &&
	test_must_fail "$KLAB_AGENT" fetch live-srv 2>err && test_grep "no kept result" err
'

test_expect_success 'list, fetch, ack' '
	"$KLAB_AGENT" list >list && printf "lo-bad\nlo-cl\nlo-srv\n" >expect && test_cmp expect list &&
	"$KLAB_AGENT" fetch lo-cl >f.json && test_cmp cl.json f.json &&
	"$KLAB_AGENT" ack lo-cl && "$KLAB_AGENT" ack lo-bad && "$KLAB_AGENT" ack lo-srv &&
	"$KLAB_AGENT" list >list2 && test ! -s list2 &&
	test_must_fail "$KLAB_AGENT" fetch lo-cl 2>err && test_grep "no kept result" err &&
	test_expect_code 2 "$KLAB_AGENT" fetch "../../etc/passwd" 2>err && test_grep "bad run id" err &&
	test_expect_code 2 "$KLAB_AGENT" fetch 2>err && test_grep usage err
'

test_done
