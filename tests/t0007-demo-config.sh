#!/bin/bash
test_description='the demo configs (tests/demo-config.sh): after lab down the results config loads, and klab compare, query and report work on the demo database with it'
. "$(dirname "$0")/lib.sh"

# The layout tests/demo.sh writes, from the same function, with a STAND-IN
# for the fragment `klab lab up --netns` writes (same sections and keys; no
# lab is brought up: the test is about the configs) and the stats test's
# job 1 (tests/data/stats/gen.py) as the demo's results.
DEMO=$SCRATCH/demo
MODE=netns
. "$SRCDIR/tests/demo-config.sh"
unset KLAB_CONFIG KLAB_DB

test_expect_success 'the demo writes a results config and a lab config that includes the lab fragment' '
	mkdir -p "$DEMO/netns" &&
	cat >"$DEMO/netns/klab.conf" <<-EOF &&
	# STAND-IN for the fragment of klab lab up --netns (tests/t0007)
	[lab]
		ssh_key = $DEMO/netns/keys/id_ed25519
		known_hosts = $DEMO/netns/known_hosts
	[machine "dut"]
		host = 198.18.255.242
		user = root
		role = dut
		peer = peer
		nic = wl0
		addr = 198.18.0.121
		boot = none
	[machine "peer"]
		host = 198.18.255.246
		user = root
		role = peer
		nic = wl1
		addr = 198.18.0.122
		boot = none
	EOF
	demo_write_config "$DEMO/klab.conf" &&
	demo_write_config "$DEMO/lab.conf" "$DEMO/netns/klab.conf" "$SRCDIR/kernels/lab/demo-netns.conf" &&
	"$KLAB" config check "$DEMO/lab.conf" &&
	"$KLAB" config check "$DEMO/klab.conf" &&
	test_grep -v "netns/klab.conf" "$DEMO/klab.conf" &&
	KLAB_CONFIG=$DEMO/lab.conf "$KLAB" db init >/dev/null &&
	python3 "$SRCDIR/tests/data/stats/gen.py" job >job.sql &&
	sqlite3 "$DEMO/klab.db" <job.sql &&
	KLAB_CONFIG=$DEMO/lab.conf "$KLAB" db rebuild-summaries >/dev/null &&
	test "$(sqlite3 "$DEMO/klab.db" "SELECT count(*) FROM runs WHERE job_id = 1")" -gt 0 &&
	test "$(sqlite3 "$DEMO/klab.db" "SELECT count(*) FROM boot_metrics WHERE job_id = 1")" -gt 0
'

test_expect_success 'after lab down (its fragment removed) the lab config names the missing file; the results config loads' '
	rm -r "$DEMO/netns" &&
	test_expect_code 1 "$KLAB" config check "$DEMO/lab.conf" 2>err &&
	test_grep "lab.conf:[0-9]*: cannot read included file .$DEMO/netns/klab.conf." err &&
	"$KLAB" config check "$DEMO/klab.conf"
'

test_expect_success 'the commands the demo prints at its end work on the demo database' '
	demo_results_hint "$KLAB" 1 >hint &&
	test "$(grep -c "^  KLAB_CONFIG=$DEMO/klab.conf " hint)" = 3 &&
	sed -n "s/^  \(KLAB_CONFIG=.*\)$/\1/p" hint >cmds &&
	sed -n "s/^  (or without a config: \(.*\))$/\1/p" hint >>cmds &&
	test "$(wc -l <cmds)" = 4 &&
	# each line as a user would paste it (the paths have no spaces); the last without KLAB_CONFIG
	while read -r cmd; do
		env -u KLAB_CONFIG $cmd >>run.out 2>>run.err || { echo "failed: $cmd" >&2; cat run.err >&2; return 1; }
	done <cmds &&
	test "$(grep -c "^comparison of job 1" run.out)" = 2 &&
	grep -Eq "^ +1 +1 +A .* udp_rr_500 .* tps " run.out &&
	test -f "$DEMO/report/index.html"
'

# The qemu demo's jobs (kernels/lab/demo-qemu.conf) with a STAND-IN for the fragment
# of klab lab up --qemu (same sections and keys, no guests): every job's seed, local
# patch, workloads and profiles resolve, and submitting seed 004's job gives the spec
# its experiment needs (the sender on CPU 0, the profile of CPU 1, the txcompl tuning).
test_expect_success 'the qemu demo config loads; seed 004 job: sender on CPU 0, profile of CPU 1, NIC interrupts on CPU 1' '
	mkdir -p "$DEMO/qemu" &&
	cat >"$DEMO/qemu/klab.conf" <<-EOF &&
	# STAND-IN for the fragment of klab lab up --qemu (tests/t0007)
	[lab]
		ssh_key = $DEMO/qemu/keys/id_ed25519
		known_hosts = $DEMO/qemu/known_hosts
	[machine "dut"]
		host = 127.0.0.1
		port = 10022
		user = root
		role = dut
		peer = peer
		nic = eth1
		addr = 198.18.142.1
		boot = kexec
		profile = txcompl
		pool = demo
	[machine "peer"]
		host = 127.0.0.1
		port = 10023
		user = root
		role = peer
		nic = eth1
		addr = 198.18.142.2
		boot = none
		profile = txcompl
	EOF
	MODE=qemu demo_write_config "$DEMO/qlab.conf" "$DEMO/qemu/klab.conf" "$SRCDIR/kernels/lab/demo-qemu.conf" &&
	"$KLAB" config check "$DEMO/qlab.conf" &&
	"$KLAB" config show "$DEMO/qlab.conf" >show &&
	sed -n "/^\[job \"demo-napi-consume\"\]/,/^\[/p" show >job004 &&
	test_grep "004-6.1-release-head-state-twice.patch" job004 &&
	test_grep "004_94b9a7569baa50d4.txt" job004 &&
	KLAB_CONFIG=$DEMO/qlab.conf "$KLAB" --db "$SCRATCH/q.db" --json submit --job demo-napi-consume >sub.json &&
	id=$(python3 -c "import json; print(json.load(open(\"sub.json\"))[\"id\"])") &&
	sqlite3 "$SCRATCH/q.db" "SELECT spec FROM jobs WHERE id = $id" >spec.json &&
	python3 - <<-\PY
	import json
	s = json.load(open("spec.json"))
	w = s["workloads"][0]
	assert w["name"] == "udp_tx_mq" and w["profile_cpus"] == "1", w
	assert w["params"]["cpus"] == "0" and "perf-profile" in w["monitors"] and "cpu" in w["monitors"], w
	prof = [x["profile"] for x in s["sides"]]
	assert prof == ["txcompl", "txcompl"], s["sides"]
	PY
'

# The cache-model variants (docs/cache-model.md "Seeds 000 and 004 on the model"):
# the same series and 6.1 fix-up as their job above (so the same kernel, found by
# key), the headline on the modeled cycles, seed 004's CPU layout kept.
test_expect_success 'the -cm jobs: the same kernels as demo-ooo-okay and demo-napi-consume, headline model_cycles_per_op' '
	for j in demo-ooo-okay demo-napi-consume; do
		sed -n "/^\[job \"$j\"\]/,/^\[/p" show | grep -E "^\s*(series|local_patches|tree) " >plain-$j &&
		sed -n "/^\[job \"$j-cm\"\]/,/^\[/p" show | grep -E "^\s*(series|local_patches|tree) " >cm-$j &&
		test "$(wc -l <cm-$j)" = 3 &&
		test_cmp plain-$j cm-$j || return 1
	done &&
	KLAB_CONFIG=$DEMO/qlab.conf "$KLAB" --db "$SCRATCH/q.db" --json submit --job demo-napi-consume-cm >sub.json &&
	id=$(python3 -c "import json; print(json.load(open(\"sub.json\"))[\"id\"])") &&
	sqlite3 "$SCRATCH/q.db" "SELECT spec FROM jobs WHERE id = $id" >spec.json &&
	python3 - <<-\PY
	import json
	s = json.load(open("spec.json"))
	w = s["workloads"][0]
	assert w["name"] == "udp_tx_mq_cm" and w["profile_cpus"] == "1" and w["params"]["cpus"] == "0", w
	assert w["headline"] == "model_cycles_per_op", w
	PY
'

test_done
