#!/bin/bash
test_description='the cache model (klab-cache.so in qemu): known-answer programs in a guest give the expected misses per operation within 10%, two runs agree, bad arguments are refused'
. "$(dirname "$0")/lib.sh"

# a qemu lab index of its own (tests/lib.sh), so that labs of tests running at once never collide
test_qemu_lab_index
L=$SCRATCH/lab
CM=$KLAB_BUILD/cache-model
ssh_g() {	# ssh_g GUEST CMD: OpenSSH with the lab's key and known_hosts only
	local port
	port=$(sed -n "s/^$1.ssh_port=//p" "$L/lab.state"); shift
	timeout 600 ssh -F /dev/null -o BatchMode=yes -o StrictHostKeyChecking=yes \
		-o UserKnownHostsFile="$L/known_hosts" -o ConnectTimeout=30 \
		-i "$L/keys/id_ed25519" -p "$port" root@127.0.0.1 "$@"
}
# window_check FILE OPS 'COND': COND (Python, over the last window's counts per
# operation: l1d, l2, llc, coh, cycles, insn) holds; prints the figures
cat >per_op.py <<'EOF'
import json, sys
w = json.loads(open(sys.argv[1]).read().splitlines()[-1])
ops = float(sys.argv[2])
v = {k: w[k + "_miss"] / ops for k in ("l1d", "l2", "llc", "coh")}
v["cycles"], v["insn"] = w["cycles"] / ops, w["insn"] / ops
print("# window %d, %d ops: " % (w["window"], ops) + ", ".join("%s %.4f" % kv for kv in sorted(v.items())))
assert w["model"].startswith("l1d 32K/8-way, l2 1024K/16-way per vCPU, llc 8192K/16-way shared"), w["model"]
sys.exit(0 if eval(sys.argv[3], {}, v) else 1)
EOF
window_check() { python3 per_op.py "$L/cache-model/dut.jsonl" "$2" "$3"; }
# run PROG ARGS in the dut, the ops it reports into ops
run_g() { ssh_g dut "$CM/$*" >out && sed -n "s/^ops //p" out >ops && test -s ops; }

cat >klab.conf <<EOF
[lab]
	db = $SCRATCH/klab.db
	artifact_dir = $SCRATCH/artifacts
	work_dir = $SCRATCH/work
[include]
	path = $SRCDIR/kernels/lab/demo-tree.conf
EOF
test_cleanup '"$KLAB" lab down --qemu --dir "$L"'

test_expect_success 'the plugin exports the API version and its entry point only' '
	nm -D --defined-only "$KLAB_BUILD/lib/klab-cache.so" | awk "{print \$3}" | sort >syms &&
	printf "qemu_plugin_install\nqemu_plugin_version\n" >want && test_cmp want syms
'

test_expect_success QEMU 'qemu refuses the plugin with a bad argument or without out=' '
	test_must_fail timeout 60 qemu-system-x86_64 -machine none -accel tcg -display none \
		-plugin "$KLAB_BUILD/lib/klab-cache.so,out=$SCRATCH/x.jsonl,l2=1M:0" 2>err &&
	test_grep "klab-cache: bad value in .l2=1M:0." err &&
	test_must_fail timeout 60 qemu-system-x86_64 -machine none -accel tcg -display none \
		-plugin "$KLAB_BUILD/lib/klab-cache.so" 2>err &&
	test_grep "out=PATH is required" err
'

test_expect_success 'lab up refuses --cache-model on KVM, unknown --cache-args, --cache-args alone' '
	test_must_fail "$KLAB" lab up --qemu --kernel "$KLAB" --cache-model --accel kvm --dir "$L" 2>err &&
	test_grep "cache-model needs TCG" err &&
	test_must_fail "$KLAB" lab up --qemu --kernel "$KLAB" --cache-model --cache-args l3=4M:8 --dir "$L" 2>err &&
	test_grep "argument .l3. is unknown" err &&
	test_must_fail "$KLAB" lab up --qemu --kernel "$KLAB" --cache-args l2=2M:16 --dir "$L" 2>err &&
	test_grep "cache-args without --cache-model" err &&
	! test -e "$L"
'

test_expect_success KBUILD 'the baseline kernel is built through klab (cached)' '
	"$KLAB" --json kernels build --tree linux-source-6.1 --variant base >k.json &&
	python3 -c "import json; print(json.load(open(\"k.json\"))[\"id\"])" >k.txt
'
KID=$(cat k.txt 2>/dev/null)

test_expect_success ROOT,QEMU,KBUILD 'lab up --cache-model --clock icount --smp 2: qemu loads the plugin, one TCG thread' '
	"$KLAB" --config klab.conf lab up --qemu --clock icount --smp 2 --cache-model --kernel-id "$KID" \
		--dir "$L" --index $K --timeout 900 >out &&
	test_grep "^cache_model=1$" "$L/lab.state" &&
	pid=$(sed -n "s/^dut.pid=//p" "$L/lab.state") &&
	tr "\0" "\n" </proc/$pid/cmdline >cmdline &&
	test_grep "^tcg,thread=single$" cmdline &&
	test_grep "^$L/klab-cache.so,out=$L/cache-model/dut.jsonl$" cmdline &&
	test "$(ssh_g dut cat /sys/devices/system/cpu/online)" = 0-1 &&
	ssh_g dut "grep -c \" /run/klab/cache-model 9p \" /proc/mounts" >n && test "$(cat n)" = 1
'

# A walk of 256 KiB: larger than L1d (32 KiB), inside L2 (1 MiB): every load
# misses L1d, almost none misses L2.
test_expect_success ROOT,QEMU,KBUILD 'an array walk that fits L2: one L1d miss per load, no L2 miss' '
	run_g cm-walk 256 4 && test "$(cat ops)" = 16384 &&
	window_check dut "$(cat ops)" "0.9 <= l1d <= 1.1 and l2 < 0.1 and coh < 0.1"
'

# 2 MiB: twice L2, inside the LLC (8 MiB): every load misses L2, hits the LLC.
test_expect_success ROOT,QEMU,KBUILD 'an array walk that does not fit L2: one L2 miss per load, no LLC miss' '
	run_g cm-walk 2048 2 && test "$(cat ops)" = 65536 &&
	window_check dut "$(cat ops)" "0.9 <= l2 <= 1.1 and llc < 0.1" &&
	cp "$L/cache-model/dut.jsonl" walk1.jsonl
'

# 32 MiB: four times the LLC: every load goes to memory.
test_expect_success ROOT,QEMU,KBUILD 'an array walk larger than the LLC: one LLC miss per load' '
	run_g cm-walk 32768 1 && test "$(cat ops)" = 524288 &&
	window_check dut "$(cat ops)" "0.9 <= llc <= 1.1 and 200 <= cycles - insn <= 230"
'

test_expect_success ROOT,QEMU,KBUILD 'two vCPUs storing to one cache line: one coherence miss per store' '
	run_g cm-share shared 20000 && test "$(cat ops)" = 40000 &&
	window_check dut "$(cat ops)" "0.9 <= coh <= 1.1"
'

test_expect_success ROOT,QEMU,KBUILD 'two vCPUs storing to their own lines: about no coherence miss' '
	run_g cm-share padded 20000 && test "$(cat ops)" = 40000 &&
	window_check dut "$(cat ops)" "coh < 0.1"
'

# A/A: the same programs again give the same counts (icount, one TCG thread).
# A window counts every vCPU, and under icount with sleep=on an idle vCPU's wake-ups follow host
# time: on a quiet host the walk repeats to 0 ppm, but the CI run of 6a0f83d (3 test files at
# once) saw 13126 ppm of instructions and 10 coherence misses in it. The ppm claim is for a quiet
# host, so this check is opt-in with the other long icount guests (KLAB_TEST_ICOUNT_GUESTS=1).
test_expect_success ROOT,QEMU,KBUILD,ICOUNT_GUESTS 'A/A: a second run of the walk and the shared line gives the same counts' '
	run_g cm-walk 2048 2 && tail -1 "$L/cache-model/dut.jsonl" >walk2.jsonl &&
	run_g cm-share shared 20000 && tail -1 "$L/cache-model/dut.jsonl" >share2.jsonl &&
	run_g cm-share shared 20000 && tail -1 "$L/cache-model/dut.jsonl" >share3.jsonl &&
	python3 - walk1.jsonl walk2.jsonl share2.jsonl share3.jsonl <<-\EOF
	import json, sys
	last = lambda p: json.loads(open(p).read().splitlines()[-1])
	bad = 0
	# the shared line: its spin-waits (start, end) run as long as the
	# interleaving makes them, so only the modeled counts are bounded there
	for a, b, lim, keys in ((sys.argv[1], sys.argv[2], 1000, ("insn", "l1d_miss", "l2_miss", "cycles")),
	                        (sys.argv[3], sys.argv[4], 10000, ("l1d_miss", "l2_miss", "coh_miss", "cycles"))):
	    a, b = last(a), last(b)
	    for k in ("insn", "l1d_miss", "l2_miss", "coh_miss", "cycles"):
	        ppm = abs(a[k] - b[k]) / max(a[k], b[k], 1) * 1e6
	        print("# A/A window %d vs %d: %s %d vs %d, %.0f ppm" % (a["window"], b["window"], k, a[k], b[k], ppm))
	        bad += k in keys and ppm > lim
	sys.exit(bad)
	EOF
'

# The agent marks its measured window itself and stores the modeled counts
# per operation (udp_tx to dummy0 in the dut: packets are the operations).
cat >tx.spec <<EOF
{ "spec_version": 1, "run_id": "cm-tx", "role": "send",
  "workload": { "name": "tx", "type": "udp_tx", "params": { "port": "9", "size": "64" } },
  "peer_addr": "198.18.201.2", "duration_s": 1, "warmup_s": 0.5,
  "monitors": ["cpu"], "results_dir": "/tmp/klab-results" }
EOF
cat >tx_check.py <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
w = json.loads(open(sys.argv[2]).read().splitlines()[-1])
m = {x["name"]: x for x in r["metrics"]}
print("# agent run: status %s, cache_model %s" % (r["status"], r.get("cache_model")))
print("# metrics: " + ", ".join("%s %.3f %s" % (k, v["value"], v["unit"]) for k, v in sorted(m.items()) if k.startswith("model_")))
assert r["status"] == "ok", r.get("error")
assert r["cache_model"]["window"] == w["window"] and r["cache_model"]["model"] == w["model"]
for k in ("l1d", "l2", "llc", "coh"):
    assert m["model_%s_miss_per_op" % k]["unit"] == "modeled miss", m
c = m["model_cycles_per_op"]
assert c["unit"] == "modeled cycle" and c["value"] > 0
ops = w["cycles"] / c["value"]
assert abs(w["l1d_miss"] / ops / m["model_l1d_miss_per_op"]["value"] - 1) < 1e-9
EOF
test_expect_success ROOT,QEMU,KBUILD 'klab-agent run: its window is marked and the modeled counts per packet are metrics' '
	n=$(wc -l <"$L/cache-model/dut.jsonl") &&
	ssh_g dut "$KLAB_AGENT run" <tx.spec >tx.json &&
	test "$(wc -l <"$L/cache-model/dut.jsonl")" = $((n + 1)) &&
	python3 tx_check.py tx.json "$L/cache-model/dut.jsonl"
'

test_expect_success ROOT,QEMU,KBUILD 'klab-cache-mark: a stop without a start is counted, not a window' '
	n=$(wc -l <"$L/cache-model/dut.jsonl") &&
	ssh_g dut "$KLAB_BUILD/bin/klab-cache-mark stop; $KLAB_BUILD/bin/klab-cache-mark start; $KLAB_BUILD/bin/klab-cache-mark stop" &&
	test "$(wc -l <"$L/cache-model/dut.jsonl")" = $((n + 1)) &&
	tail -1 "$L/cache-model/dut.jsonl" | python3 -c "import json,sys; d=json.load(sys.stdin); assert d[\"ignored_marks\"] == 1, d" &&
	test_expect_code 2 ssh_g dut "$KLAB_BUILD/bin/klab-cache-mark"
'

test_done
