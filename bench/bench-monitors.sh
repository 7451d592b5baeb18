#!/bin/bash
# bench-monitors.sh: monitor overhead of klab-agent run: udp_rr throughput with every
# monitor on vs none, interleaved (none, all, none, all, ...) between two network
# namespaces joined by an 8-queue veth; prints each run and the overhead in percent.
#
#   bash bench/bench-monitors.sh [PAIRS] [DURATION_S]     (root; default 4 pairs of 5 s)
#   KLAB_BUILD=build/rel (default) selects the klab-agent build; KLAB_MONITORS,
#   KLAB_BPFTRACE and KLAB_PIN (below) choose what is measured. KLAB_MONITORS=[]
#   measures none against none: the noise floor of the figure.
set -eu
PAIRS=${1:-4}
DUR=${2:-5}
SRCDIR=$(cd "$(dirname "$0")/.." && pwd)
AGENT=${KLAB_BUILD:-$SRCDIR/build/rel}/bin/klab-agent
[ -x "$AGENT" ] || { echo "bench-monitors: no klab-agent at $AGENT (make first)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "bench-monitors: needs root (network namespaces)" >&2; exit 1; }

NS_A=klabbench-a-$$ NS_B=klabbench-b-$$
ADDR_A=198.18.3.1 ADDR_B=198.18.3.2
WORK=$(mktemp -d /tmp/klab-bench-monitors.XXXXXX)
cleanup() { ip netns del $NS_A 2>/dev/null; ip netns del $NS_B 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
ip netns add $NS_A && ip netns add $NS_B
ip link add wl0 numtxqueues 8 numrxqueues 8 netns $NS_A type veth \
	peer name wl1 numtxqueues 8 numrxqueues 8 netns $NS_B
ip -n $NS_A addr add $ADDR_A/24 dev wl0 && ip -n $NS_B addr add $ADDR_B/24 dev wl1
ip -n $NS_A link set wl0 up && ip -n $NS_B link set wl1 up
export KLAB_AGENT_STATE=$WORK/state

# KLAB_MONITORS (a JSON list) measures a subset, KLAB_BPFTRACE another script.
ALL=${KLAB_MONITORS:-'["cpu", "perf-stat", "perf-profile", "bpftrace", "nic"]'}
# KLAB_PIN=CPU pins the generator's client and server threads to that CPU (both
# on one: on this VM a request/response pair split over two CPUs runs ~10x
# slower, and unpinned runs flip between the two placements, which is most of
# their run-to-run spread).
PIN=${KLAB_PIN:+, \"cpus\": \"$KLAB_PIN\"}
BPF=${KLAB_BPFTRACE:-'tracepoint:net:net_dev_xmit { @xmit = count(); @len = hist(args->len); }'}
one() {	# one RUN_ID MONITORS: prints tps
	local id=$1 mons=$2 port=$((9200 + RANDOM % 500))
	cat >"$WORK/srv.spec" <<JSON
{"spec_version": 1, "run_id": "$id-srv", "role": "server", "duration_s": $DUR, "warmup_s": 1,
 "linger_s": 2, "workload": {"name": "rr", "type": "udp_rr", "params": {"port": "$port"$PIN}}, "monitors": []}
JSON
	cat >"$WORK/cl.spec" <<JSON
{"spec_version": 1, "run_id": "$id", "role": "client", "duration_s": $DUR, "warmup_s": 1,
 "peer_addr": "$ADDR_B", "nic": "wl0", "monitors": $mons,
 "bpftrace_script": "$BPF",
 "workload": {"name": "rr", "type": "udp_rr", "params": {"port": "$port", "flows": "50"$PIN}}}
JSON
	ip netns exec $NS_B "$AGENT" run <"$WORK/srv.spec" >/dev/null 2>"$WORK/srv.err" &
	local spid=$!
	sleep 0.5
	ip netns exec $NS_A "$AGENT" run <"$WORK/cl.spec" >"$WORK/$id.json" 2>"$WORK/cl.err" ||
		{ cat "$WORK/cl.err" >&2; return 1; }
	wait $spid || true
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print([m['value'] for m in d['metrics'] if m['name']=='tps'][0])" "$WORK/$id.json"
}

echo "load average before: $(cut -d" " -f1-3 /proc/loadavg) on $(nproc) CPUs (the figure means little when it is high)"
echo "monitors: $ALL"
case $ALL in *bpftrace*) echo "bpftrace script: $BPF" ;; esac
none=() all=()
for i in $(seq 1 "$PAIRS"); do
	a=$(one "none-$i" '[]'); none+=("$a")
	b=$(one "all-$i" "$ALL"); all+=("$b")
	printf 'pair %d: none %.0f tps, all monitors %.0f tps\n' "$i" "$a" "$b"
done
python3 - "${none[*]}" "${all[*]}" <<'PY'
import statistics as st, sys
n = [float(x) for x in sys.argv[1].split()]; a = [float(x) for x in sys.argv[2].split()]
mn, ma = st.mean(n), st.mean(a)
sd = lambda v: st.stdev(v) / st.mean(v) * 100 if len(v) > 1 else 0.0
print("none: mean %.0f tps (cov %.1f%%), all monitors: mean %.0f tps (cov %.1f%%)" % (mn, sd(n), ma, sd(a)))
print("monitor overhead: %.1f%% throughput loss of the means (target <= 2%%)" % ((mn - ma) / mn * 100))
pairs = sorted((x - y) / x * 100 for x, y in zip(n, a))
print("monitor overhead: %.1f%% median of the per-pair losses (%s)" % (st.median(pairs), ", ".join("%.1f" % p for p in pairs)))
if len(pairs) > 2:
    # 95% interval of the mean per-pair loss (Student t, two-sided)
    t = {3: 4.30, 4: 3.18, 5: 2.78, 6: 2.57, 7: 2.45, 8: 2.36, 9: 2.31, 10: 2.26, 12: 2.20,
         15: 2.14, 20: 2.09, 25: 2.06, 30: 2.05}
    k = max(x for x in t if x <= len(pairs))
    half = t[k] * st.stdev(pairs) / len(pairs) ** 0.5
    print("monitor overhead: %.1f%% mean of the per-pair losses, 95%% interval %.1f%% .. %.1f%% (%d pairs)"
          % (st.mean(pairs), st.mean(pairs) - half, st.mean(pairs) + half, len(pairs)))
PY
