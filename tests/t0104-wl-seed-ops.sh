#!/bin/bash
test_description='klab-udp-rr and klab-udp-tx: seeded source ports (--seed) and runs sized by work (--ops) on loopback'
. "$(dirname "$0")/lib.sh"

JV="python3 $SRCDIR/tests/data/workloads/jv.py"
test_cleanup 'for p in $(cat "$SCRATCH/pids" 2>/dev/null); do kill -9 $p; done'

# echo_ports NAME PORT: a UDP echo server on 127.0.0.1:PORT that writes the
# sorted source ports it heard from into NAME.ports once it has been idle for
# 1 s (or after 20 s); "ready" goes into NAME.ready once it is bound
echo_ports() {
	python3 - "$1" "$2" <<'PY' &
import socket, sys, time
name, port = sys.argv[1], int(sys.argv[2])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", port))
s.settimeout(1.0)
open(name + ".ready", "w").write("ready\n")
seen, t0, got = set(), time.time(), False
while time.time() - t0 < 20:
    try:
        data, addr = s.recvfrom(2048)
    except socket.timeout:
        if got:
            break
        continue
    got = True
    seen.add(addr[1])
    s.sendto(data, addr)
open(name + ".ports", "w").write("".join("%d\n" % p for p in sorted(seen)))
PY
	echo $! >>"$SCRATCH/pids"
}

# rr_ports NAME CLIENT_ARGS...: a client of 16 flows against echo_ports; its ports in NAME.ports
rr_ports() {
	local name=$1 port pid; shift
	port=$(test_free_port)
	echo_ports "$name" "$port"
	pid=$!
	wait_ready "$name.ready" 10 $pid &&
	"$KLAB_UDP_RR" client --addr 127.0.0.1 --port "$port" --flows 16 --threads 1 --duration 0.3 "$@" \
		>"$name.json" 2>"$name.err" &&
	wait $pid &&
	test "$(wc -l <"$name.ports")" = 16
}

test_expect_success 'udp-rr: one seed binds the same 16 ports twice, another seed others' '
	rr_ports s7a --seed 7 && rr_ports s7b --seed 7 && rr_ports s8 --seed 8 &&
	test_cmp s7a.ports s7b.ports &&
	! cmp -s s7a.ports s8.ports &&
	test "$(sort -n s7a.ports s8.ports | uniq -d | wc -l)" -lt 8 &&
	awk "\$1 < 16384 || \$1 > 32767 { bad = 1 } END { exit bad }" s7a.ports s8.ports &&
	$JV s7a.json --check "d[\"params\"][\"seed\"] == 7" "d[\"params\"][\"src_ports\"] == \"16384-32767\""
'

test_expect_success 'udp-rr: without --seed the kernel picks ephemeral ports, and the document has no seed' '
	rr_ports rnd &&
	awk "\$1 < 32768 { bad = 1 } END { exit bad }" rnd.ports &&
	$JV rnd.json --check "\"seed\" not in d[\"params\"]" "\"ops\" not in d[\"params\"]"
'

test_expect_success 'udp-rr: --src-ports bounds the ports; a port in use is an error naming it' '
	rr_ports narrow --seed 3 --src-ports 40100-40115 &&
	seq 40100 40115 >want && test_cmp want narrow.ports &&
	port=$(test_free_port) &&
	{ "$KLAB_UDP_RR" server --port "$port" --duration 5 --addr 0.0.0.0 --ready-fd 3 >/dev/null 2>srv.err 3>srv.ready & } &&
	spid=$! && echo $spid >>"$SCRATCH/pids" && wait_ready srv.ready 10 $spid &&
	test_expect_code 1 "$KLAB_UDP_RR" client --addr 127.0.0.1 --port 9 --flows 1 --duration 0.2 \
		--seed 1 --src-ports "$port-$port" >out 2>err &&
	test_grep "cannot bind flow 1 to source port $port (--seed 1, ports $port-$port): port in use" err &&
	kill $spid && ! test -s out
'

test_expect_success 'udp-tx: senders bind seeded ports too' '
	port=$(test_free_port) &&
	echo_ports tx "$port" && pid=$! && wait_ready tx.ready 10 $pid &&
	"$KLAB_UDP_TX" send --addr 127.0.0.1 --port "$port" --threads 2 --rate 2000 --duration 0.3 \
		--seed 7 --src-ports 41000-41999 >tx.json &&
	wait $pid && test "$(wc -l <tx.ports)" = 2 &&
	rr_ports tx7 --seed 7 --src-ports 41000-41999 &&
	test -z "$(comm -23 tx.ports tx7.ports)" &&
	awk "\$1 < 41000 || \$1 > 41999 { bad = 1 } END { exit bad }" tx.ports
'

# rr_ops NAME SERVER_ARGS -- CLIENT_ARGS: server (with --ready-fd) and client on a free port
rr_ops() {
	local name=$1 port sargs=() spid; shift
	while [ "$1" != -- ]; do sargs+=("$1"); shift; done; shift
	port=$(test_free_port)
	"$KLAB_UDP_RR" server --port "$port" "${sargs[@]}" --ready-fd 3 >"$name.srv.json" 2>"$name.srv.err" 3>"$name.srv.ready" &
	spid=$!
	echo $spid >>"$SCRATCH/pids"
	wait_ready "$name.srv.ready" 10 $spid || return 1
	"$KLAB_UDP_RR" client --addr 127.0.0.1 --port "$port" "$@" >"$name.cli.json" 2>"$name.cli.err"
	echo $? >"$name.rc"
	wait $spid
}

test_expect_success 'udp-rr --ops: N transactions in the window, the rate over its own time, the server ends when idle' '
	start=$(date +%s%N) &&
	rr_ops ops --duration 20 --idle-end 0.5 -- --flows 4 --threads 2 --duration 20 --ops 5000 --warmup-ops 500 --seed 5 &&
	end=$(date +%s%N) &&
	test "$(cat ops.rc)" = 0 &&
	$JV ops.cli.json --check "d[\"transactions\"] == 5000" \
		"abs(d[\"tps\"] * d[\"duration_s\"] - 5000) <= 0.0005 * d[\"tps\"] + 1" \
		"d[\"duration_s\"] > 0" "d[\"total\"][\"transactions\"] >= 5500" "d[\"series\"] == []" \
		"d[\"params\"][\"ops\"] == 5000 and d[\"params\"][\"warmup_ops\"] == 500" \
		"sum(b[\"count\"] for b in d[\"histogram\"][\"buckets\"]) == 5000" &&
	$JV ops.srv.json --check "d[\"duration_s\"] < 10" "d[\"received\"] >= 5500" &&
	test $(((end - start) / 1000000000)) -lt 10
'

test_expect_success 'udp-rr --ops: a run that cannot finish its work ends at its time limit, exit 1' '
	rr_ops lim --duration 5 --idle-end 0.3 -- --flows 1 --duration 0.3 --ops 1000000000 &&
	test "$(cat lim.rc)" = 1 &&
	test_grep "the run did [0-9]* of 1000000000 transactions before its time limit of 0.3 s" lim.cli.err &&
	$JV lim.cli.json --check "0 < d[\"transactions\"] < 1000000000" "d[\"duration_s\"] <= 0.31"
'

# the rate is N over the window, whose duration_s the document rounds to the ms: a window of
# 45 ms is then off by up to 1.1%, so the check is on pps x duration_s within that rounding
test_expect_success 'udp-tx --ops: exactly N packets in the window for every engine, the last batch cut' '
	for e in sendmmsg sendto io_uring; do
		"$KLAB_UDP_TX" send --addr 127.0.0.1 --port 9 --engine $e --batch 64 --duration 20 \
			--ops 30001 --warmup-ops 999 >tx-$e.json 2>tx-$e.err || return 1
		$JV tx-$e.json --check "d[\"packets\"] == 30001" "d[\"total\"][\"packets\"] == 31000" \
			"d[\"bytes\"] == 30001 * 64" "abs(d[\"pps\"] * d[\"duration_s\"] - 30001) <= 0.0005 * d[\"pps\"] + 1" \
			"d[\"series\"] == []" || return 1
	done
'

test_expect_success 'udp-tx: a sink with --idle-end ends after the sender, with every packet' '
	port=$(test_free_port) &&
	{ "$KLAB_UDP_TX" sink --port "$port" --duration 20 --idle-end 0.5 --ready-fd 3 >sink.json 2>sink.err 3>sink.ready & } &&
	spid=$! && echo $spid >>"$SCRATCH/pids" && wait_ready sink.ready 10 $spid &&
	"$KLAB_UDP_TX" send --addr 127.0.0.1 --port "$port" --rate 20000 --duration 20 --ops 4000 >snd.json &&
	wait $spid &&
	$JV sink.json --check "d[\"total\"][\"packets\"] == 4000" "d[\"duration_s\"] < 5"
'

test_expect_success 'udp-tx and udp-rr --window-fd: start then end, once each, and not without --ops' '
	"$KLAB_UDP_TX" send --addr 127.0.0.1 --port 9 --engine io_uring --batch 32 --duration 20 \
		--ops 20000 --warmup-ops 4000 --window-fd 7 >wtx.json 7>wtx.lines &&
	printf "start\nend\n" >expect && test_cmp expect wtx.lines &&
	"$KLAB_UDP_TX" send --addr 127.0.0.1 --port 9 --duration 20 --ops 5000 --window-fd 7 >wtx0.json 7>wtx0.lines &&
	test_cmp expect wtx0.lines &&
	rr_ops wrr --duration 20 --idle-end 0.3 -- --flows 8 --threads 2 --duration 20 --ops 6000 --warmup-ops 1000 \
		--window-fd 7 7>wrr.lines &&
	test "$(cat wrr.rc)" = 0 && test_cmp expect wrr.lines &&
	test_expect_code 2 "$KLAB_UDP_TX" send --addr 127.0.0.1 --port 9 --duration 1 --window-fd 7 7>/dev/null 2>err &&
	test_grep "window-fd. needs .--ops." err &&
	for f in wtx.json wtx0.json wrr.cli.json; do
		$JV $f --check "\"window_ack\" not in d" || return 1
	done
'

# ack_after DELAY OUT GENERATOR ARGS...: runs the generator with --window-fd
# and --window-ack-fd on two pipes of its own, reads its lines, and after
# "start" waits DELAY s before it acknowledges, as klab-agent run does after
# its snapshots; OUT.lines gets each line and "ack" where it was sent, so a
# line the generator wrote while it should have waited comes before "ack"
ack_after() {
	python3 - "$@" <<'PY'
import os, select, subprocess, sys, time
delay, out, argv = float(sys.argv[1]), sys.argv[2], sys.argv[3:]
lines_r, lines_w = os.pipe()
ack_r, ack_w = os.pipe()
argv += ["--window-fd", str(lines_w), "--window-ack-fd", str(ack_r)]
p = subprocess.Popen(argv, pass_fds=(lines_w, ack_r), stdout=open(out + ".json", "w"))
os.close(lines_w)
os.close(ack_r)
got, buf, acked = [], b"", None
while True:
    timeout = None if acked is not None or "start" not in got else max(0, acked_at - time.monotonic())
    r, _, _ = select.select([lines_r], [], [], timeout)
    if not r:
        os.write(ack_w, b"k")
        got.append("ack")
        acked = True
        continue
    b = os.read(lines_r, 64)
    if not b:
        break
    buf += b
    while b"\n" in buf:
        l, buf = buf.split(b"\n", 1)
        got.append(l.decode())
        if l == b"start":
            acked_at = time.monotonic() + delay
open(out + ".lines", "w").write("".join(l + "\n" for l in got))
sys.exit(p.wait())
PY
}

test_expect_success 'udp-tx and udp-rr --window-ack-fd: the window starts after the ack, the other threads held meanwhile' '
	printf "start\nack\nend\n" >expect &&
	ack_after 2 atx "$KLAB_UDP_TX" send --addr 127.0.0.1 --port 9 --threads 4 --engine sendto --batch 8 \
		--duration 30 --ops 2000 --warmup-ops 4000 &&
	test_cmp expect atx.lines &&
	$JV atx.json --check "d[\"window_ack\"][\"status\"] == \"acked\"" "d[\"window_ack\"][\"wait_s\"] >= 2" \
		"d[\"packets\"] == 2000" "d[\"duration_s\"] < 1.5" \
		"abs((d[\"window_ack\"][\"end_ns\"] - d[\"window_ack\"][\"start_ns\"]) / 1e9 - d[\"duration_s\"]) < 0.001" &&
	ack_after 1 atx0 "$KLAB_UDP_TX" send --addr 127.0.0.1 --port 9 --duration 30 --ops 2000 &&
	test_cmp expect atx0.lines &&
	$JV atx0.json --check "d[\"window_ack\"][\"status\"] == \"acked\"" "d[\"duration_s\"] < 0.9" &&
	port=$(test_free_port) &&
	{ "$KLAB_UDP_RR" server --port "$port" --duration 30 --idle-end 5 --ready-fd 3 >arr.srv.json 3>arr.ready & } &&
	spid=$! && echo $spid >>"$SCRATCH/pids" && wait_ready arr.ready 10 $spid &&
	ack_after 2 arr "$KLAB_UDP_RR" client --addr 127.0.0.1 --port "$port" --flows 8 --threads 2 --duration 30 \
		--ops 3000 --warmup-ops 1000 &&
	wait $spid &&
	test_cmp expect arr.lines &&
	$JV arr.json --check "d[\"window_ack\"][\"status\"] == \"acked\"" "d[\"window_ack\"][\"wait_s\"] >= 2" \
		"d[\"transactions\"] == 3000" "d[\"duration_s\"] < 1.5"
'

test_expect_success 'udp-tx --window-ack-fd: a reader that closes it unread does not hold the run' '
	python3 -c "
import os, subprocess, sys
lr, lw = os.pipe(); ar, aw = os.pipe()
p = subprocess.Popen(sys.argv[1:] + [\"--window-fd\", str(lw), \"--window-ack-fd\", str(ar)],
                     pass_fds=(lw, ar), stdout=open(\"aclosed.json\", \"w\"), stderr=open(\"aclosed.err\", \"w\"))
os.close(lw); os.close(ar); os.close(aw)
while os.read(lr, 64): pass
sys.exit(p.wait())" "$KLAB_UDP_TX" send --addr 127.0.0.1 --port 9 --duration 30 --ops 2000 --warmup-ops 1000 &&
	$JV aclosed.json --check "d[\"window_ack\"][\"status\"] == \"closed\"" "d[\"window_ack\"][\"wait_s\"] < 5" \
		"d[\"window_ack\"][\"end_ns\"] > d[\"window_ack\"][\"start_ns\"] > 0" \
		"d[\"packets\"] == 2000" &&
	test_grep "no acknowledgement of the window.s start on descriptor [0-9]* (closed after" aclosed.err
'

test_expect_success 'usage: the new options are checked and named' '
	for a in "--ops 0:invalid --ops .0." "--warmup-ops 5:--warmup-ops. needs .--ops." \
		 "--ops 10 --warmup 1:--warmup. does not go with .--ops." "--src-ports 1-2:--src-ports. needs .--seed." \
		 "--seed -1:invalid --seed .-1." "--seed 1 --src-ports 9-8:invalid --src-ports .9-8." \
		 "--seed 1 --src-ports 100-102 --flows 4:4 sockets need 4 source ports, the range has 3" \
		 "--idle-end 1:--idle-end. is for the listening role" \
		 "--ops 10 --window-ack-fd 3:--window-ack-fd. needs .--window-fd." \
		 "--ops 10 --window-fd 1 --window-ack-fd 3:invalid --window-fd .1.: expected a descriptor number from 3 up" \
		 "--ops 10 --window-fd 3 --window-ack-fd 2:invalid --window-ack-fd .2.: expected a descriptor number from 3 up" \
		 "--ops 10 --window-fd 3 --window-ack-fd 97:invalid --window-ack-fd .97.: descriptor 97 is not open" \
		 "--ops 10 --window-fd 3 --window-ack-fd 3:invalid --window-ack-fd .3.: it is the --window-fd descriptor"; do
		test_expect_code 2 "$KLAB_UDP_RR" client --addr 127.0.0.1 --port 9 --flows 1 --duration 1 ${a%%:*} \
			>out 2>err 3>/dev/null || return 1
		test_grep "${a#*:}" err || return 1
	done &&
	test_expect_code 2 "$KLAB_UDP_RR" server --port 9 --duration 1 --seed 1 2>err &&
	test_grep "seed. is for the sending role" err &&
	test_expect_code 2 "$KLAB_UDP_TX" sink --port 9 --duration 1 --window-ack-fd 3 2>err 3>/dev/null &&
	test_grep "window-ack-fd. is for the sending role" err &&
	test_expect_code 2 "$KLAB_UDP_TX" send --addr 127.0.0.1 --port 9 --duration 1 --size 3000 --gso 1000 --ops 10 2>err &&
	test_grep "invalid --ops .10.: expected a multiple of 3" err
'

test_done
