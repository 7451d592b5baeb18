#!/bin/bash
test_description='klab-udp-rr on loopback: counts agree between client and server, deadlines, errors'
. "$(dirname "$0")/lib.sh"

JV="python3 $SRCDIR/tests/data/workloads/jv.py"
# background generators started inside test bodies record their pid here, so that
# a failing test does not leave them running (cleanups registered in a body are lost)
test_cleanup 'for p in $(cat "$SCRATCH/pids" 2>/dev/null); do kill -9 $p; done'

# rr_pair NAME SERVER_ARGS -- CLIENT_ARGS: run a server and, once it says it is
# ready, a client on a free port; documents in NAME.srv.json and NAME.cli.json
rr_pair() {
	local name=$1 port sargs=() cargs=(); shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do sargs+=("$1"); shift; done
	shift
	cargs=("$@")
	port=$(test_free_port)
	"$KLAB_UDP_RR" server --port "$port" "${sargs[@]}" --ready-fd 3 \
		>"$name.srv.json" 2>"$name.srv.err" 3>"$name.srv.ready" &
	local spid=$!
	echo $spid >>"$SCRATCH/pids"
	if ! wait_ready "$name.srv.ready" 10 $spid; then
		kill $spid 2>/dev/null; wait $spid
		cat "$name.srv.err" >&2
		return 1
	fi
	"$KLAB_UDP_RR" client --port "$port" "${cargs[@]}" >"$name.cli.json" 2>"$name.cli.err"
	local rc=$?
	wait $spid
	local src=$?
	[ $rc = 0 ] && [ $src = 0 ] && return 0
	echo "client exit $rc, server exit $src" >&2
	cat "$name.cli.err" "$name.srv.err" >&2
	return 1
}

# counts_agree NAME INFLIGHT: server received every request the client sent, and echoed
# at most INFLIGHT more responses than the client read; the histogram holds every
# measured transaction
counts_agree() {
	local n=$1 k=$2 sent srecv secho crecv
	sent=$($JV "$n.cli.json" 'd["total"]["sent"]') &&
	crecv=$($JV "$n.cli.json" 'd["total"]["received"]') &&
	srecv=$($JV "$n.srv.json" 'd["received"]') &&
	secho=$($JV "$n.srv.json" 'd["echoed"]') &&
	say "$n: client sent $sent received $crecv; server received $srecv echoed $secho (in flight <= $k)" &&
	[ "$sent" -gt 1000 ] &&
	[ "$srecv" -le "$sent" ] && [ $((sent - srecv)) -le "$k" ] &&
	[ "$crecv" -le "$secho" ] && [ $((secho - crecv)) -le "$k" ] &&
	$JV "$n.cli.json" --check \
		'd["schema"] == "klab-udp-rr/1" and d["role"] == "client"' \
		'd["total"]["transactions"] + d["total"]["late"] == d["total"]["received"]' \
		'd["transactions"] > 0 and d["tps"] > 0' \
		'sum(b["count"] for b in d["histogram"]["buckets"]) == d["transactions"]' \
		'all(b["lo"] < b["hi"] for b in d["histogram"]["buckets"])' \
		'd["latency_us"]["p50"] <= d["latency_us"]["p90"] <= d["latency_us"]["p99"] <= d["latency_us"]["p999"]' \
		'd["per_flow_tps"]["min"] <= d["per_flow_tps"]["median"] <= d["per_flow_tps"]["max"]' \
		'len(d["series"]) >= 1 and all(p["tps"] > 0 for p in d["series"])' \
		'd["errors"] == 0 and d["stopped_early"] is False' &&
	$JV "$n.srv.json" --check 'd["role"] == "server" and d["errors"] == 0'
}

test_expect_success 'one flow: client and server counts agree, document complete' '
	rr_pair one --duration 4 -- --addr 127.0.0.1 --flows 1 --duration 2 --warmup 0.5 &&
	counts_agree one 1 &&
	$JV one.cli.json --check "d[\"duration_s\"] == 2" "d[\"warmup_s\"] == 0.5" \
		"abs(d[\"series\"][-1][\"t\"] - 2) < 0.01" "d[\"params\"][\"flows\"] == 1" &&
	# one request at a time: the server reads one datagram per call, and all but
	# its first 16 and every 64th (probes for a queue) ask for one (wl_rxbatch)
	say "one: server $($JV one.srv.json "d[\"received\"], d[\"receive_calls\"], d[\"single_receives\"]")" &&
	$JV one.srv.json --check "d[\"receive_calls\"] == d[\"received\"]" \
		"d[\"single_receives\"] >= 0.95 * d[\"receive_calls\"]"
'

test_expect_success '16 flows over 2 threads, burst 4, 2 server threads (SO_REUSEPORT)' '
	rr_pair many --duration 4 --threads 2 -- --addr 127.0.0.1 --flows 16 --threads 2 --burst 4 \
		--duration 2 --warmup 0.5 &&
	counts_agree many 64 &&
	$JV many.cli.json --check "d[\"per_flow_tps\"][\"min\"] > 0" "d[\"params\"][\"threads\"] == 2" &&
	# 64 requests in flight: the server finds queues and reads them in batches
	say "many: server $($JV many.srv.json "d[\"received\"], d[\"receive_calls\"], d[\"single_receives\"]")" &&
	$JV many.srv.json --check "d[\"receive_calls\"] < 0.9 * d[\"received\"]" \
		"d[\"single_receives\"] < 0.1 * d[\"receive_calls\"]"
'

test_expect_success 'IPv6 on ::1 with request and response sizes' '
	rr_pair v6 --duration 4 -6 --addr ::1 --response-size 1000 -- -6 --addr ::1 --flows 4 \
		--request-size 200 --response-size 1000 --duration 2 --warmup 0.5 &&
	counts_agree v6 4 &&
	$JV v6.cli.json --check "d[\"bad_responses\"] == 0" "d[\"params\"][\"ipv6\"]"
'

test_expect_success 'a response of the wrong size is counted as a bad response' '
	rr_pair size --duration 3 --response-size 50 -- --addr 127.0.0.1 --flows 1 --duration 1 &&
	$JV size.cli.json --check "d[\"bad_responses\"] > 0" "d[\"bad_responses\"] == d[\"received\"]"
'

test_expect_success 'pinned to CPU 0 with busy polling' '
	rr_pair pin --duration 3 --cpus 0 --busy-poll 20 -- --addr 127.0.0.1 --flows 2 --cpus 0 \
		--busy-poll 20 --duration 1 &&
	counts_agree pin 2 &&
	$JV pin.cli.json --check "d[\"params\"][\"cpus\"] == \"0\"" "d[\"params\"][\"busy_poll_us\"] == 20"
'

test_expect_success 'port in use: a clear error, with one thread and with a SO_REUSEPORT group; never ready' '
	port=$(test_free_port) &&
	{ "$KLAB_UDP_RR" server --port $port --duration 3 --ready-fd 3 >/dev/null 2>&1 3>busy.ready & } &&
	pid=$! && echo $pid >>"$SCRATCH/pids" && wait_ready busy.ready 10 $pid &&
	test_expect_code 1 "$KLAB_UDP_RR" server --port $port --duration 1 --ready-fd 3 2>err 3>r1 &&
	test_grep "cannot bind to 0.0.0.0:$port: port in use" err &&
	test_expect_code 1 "$KLAB_UDP_RR" server --port $port --threads 2 --duration 1 --ready-fd 3 2>err 3>r2 &&
	test_grep "port in use" err &&
	test_expect_code 1 "$KLAB_UDP_TX" sink --port $port --threads 2 --duration 1 --ready-fd 3 2>err 3>r3 &&
	test_grep "port in use" err &&
	# a server or sink that could not bind never says ready
	! test -s r1 && ! test -s r2 && ! test -s r3 &&
	wait $pid
'

test_expect_success 'no server (ECONNREFUSED): counted, no spin, no hang, exit 1 at the deadline' '
	port=$(test_free_port) &&
	start=$(date +%s%N) &&
	test_expect_code 1 "$KLAB_UDP_RR" client --addr 127.0.0.1 --port $port --flows 4 --duration 1 \
		--warmup 0.5 >cli.json 2>err &&
	ms=$(( ($(date +%s%N) - start) / 1000000 )) && say "took $ms ms" &&
	[ $ms -ge 1400 ] && [ $ms -lt 4000 ] &&
	test_grep "no response from 127.0.0.1:$port in 1.5 s: .*ECONNREFUSED" err &&
	$JV cli.json --check "d[\"total\"][\"errors_by_errno\"][\"ECONNREFUSED\"] > 0" \
		"d[\"transactions\"] == 0" "d[\"timeouts\"] > 0" \
		"d[\"total\"][\"sent\"] + d[\"total\"][\"errors\"] < 4 * 2 * 20"
'

test_expect_success 'the server ends at its deadline although the client was killed' '
	port=$(test_free_port) &&
	start=$(date +%s%N) &&
	{ "$KLAB_UDP_RR" server --port $port --duration 2 --ready-fd 3 >srv.json 2>srv.err 3>srv.ready & } &&
	spid=$! && echo $spid >>"$SCRATCH/pids" && wait_ready srv.ready 10 $spid &&
	{ "$KLAB_UDP_RR" client --addr 127.0.0.1 --port $port --flows 8 --duration 30 >/dev/null 2>&1 & } &&
	cpid=$! && echo $cpid >>"$SCRATCH/pids" && sleep 0.5 &&
	kill -9 $cpid && wait $spid &&
	ms=$(( ($(date +%s%N) - start) / 1000000 )) && say "server took $ms ms" &&
	[ $ms -lt 3500 ] &&
	$JV srv.json --check "d[\"received\"] > 0" "1.9 < d[\"duration_s\"] < 2.5"
'

# A client that starts late (its agent slow to start on a loaded lab): without
# --start-wait the server's 2 s are over and the client finds the port closed;
# with it, the 2 s run from the first request.
test_expect_success 'a client 3 s late finds no server without --start-wait' '
	port=$(test_free_port) &&
	{ "$KLAB_UDP_RR" server --port $port --duration 2 --ready-fd 3 >late0.srv.json 2>late0.srv.err 3>late0.ready & } &&
	spid=$! && echo $spid >>"$SCRATCH/pids" && wait_ready late0.ready 10 $spid &&
	sleep 3 &&
	test_expect_code 1 "$KLAB_UDP_RR" client --addr 127.0.0.1 --port $port --flows 2 --duration 1 \
		--warmup 0.2 >late0.cli.json 2>late0.cli.err &&
	test_grep "ECONNREFUSED" late0.cli.err &&
	wait $spid &&
	$JV late0.srv.json --check "d[\"first_request_s\"] is None" "d[\"received\"] == 0"
'

test_expect_success 'with --start-wait the server runs its duration from a client 3 s late' '
	port=$(test_free_port) &&
	start=$(date +%s%N) &&
	{ "$KLAB_UDP_RR" server --port $port --duration 2 --start-wait 20 --ready-fd 3 \
		>late.srv.json 2>late.srv.err 3>late.ready & } &&
	spid=$! && echo $spid >>"$SCRATCH/pids" && wait_ready late.ready 10 $spid &&
	sleep 3 &&
	"$KLAB_UDP_RR" client --addr 127.0.0.1 --port $port --flows 2 --duration 1 --warmup 0.2 \
		>late.cli.json 2>late.cli.err &&
	wait $spid &&
	ms=$(( ($(date +%s%N) - start) / 1000000 )) && say "server took $ms ms" &&
	[ $ms -lt 8000 ] &&
	$JV late.cli.json --check "d[\"errors\"] == 0" "d[\"transactions\"] > 0" &&
	$JV late.srv.json --check "d[\"params\"][\"start_wait_s\"] == 20" \
		"d[\"first_request_s\"] >= 2.9" "d[\"received\"] > 0" "d[\"errors\"] == 0" \
		"abs(d[\"duration_s\"] - d[\"first_request_s\"] - 2) < 0.5"
'

test_expect_success 'with --start-wait and no client the server ends after the wait and its duration' '
	port=$(test_free_port) &&
	start=$(date +%s%N) &&
	"$KLAB_UDP_RR" server --port $port --duration 1 --start-wait 1 >idle.srv.json &&
	ms=$(( ($(date +%s%N) - start) / 1000000 )) && say "server took $ms ms" &&
	[ $ms -ge 1900 ] && [ $ms -lt 4000 ] &&
	$JV idle.srv.json --check "d[\"first_request_s\"] is None" "d[\"received\"] == 0"
'

test_expect_success 'SIGTERM ends a client, and a server, early with its document' '
	port=$(test_free_port) &&
	{ "$KLAB_UDP_RR" server --port $port --duration 20 --ready-fd 3 >srv.json 2>srv.err 3>srv.ready & } &&
	spid=$! && echo $spid >>"$SCRATCH/pids" && wait_ready srv.ready 10 $spid &&
	{ "$KLAB_UDP_RR" client --addr 127.0.0.1 --port $port --flows 2 --duration 30 >cli.json 2>err & } &&
	cpid=$! && echo $cpid >>"$SCRATCH/pids" && sleep 1.5 &&
	kill -TERM $cpid && wait $cpid &&
	$JV cli.json --check "d[\"stopped_early\"]" "d[\"transactions\"] > 0" "d[\"duration_s\"] < 5" &&
	kill -TERM $spid && wait $spid &&
	$JV srv.json --check "d[\"stopped_early\"]" "d[\"received\"] > 0" "d[\"duration_s\"] < 15"
'

test_expect_success 'the hard deadline (duration + 5 s) ends a run that was held past it' '
	port=$(test_free_port) &&
	{ "$KLAB_UDP_RR" server --port $port --duration 1 --ready-fd 3 >held.json 2>held.err 3>held.ready & } &&
	spid=$! && echo $spid >>"$SCRATCH/pids" &&
	wait_ready held.ready 10 $spid && kill -STOP $spid && sleep 6.5 && kill -CONT $spid &&
	test_expect_code 1 wait $spid &&
	test_grep "hard deadline of 6.0 s passed" held.err &&
	! test -s held.json
'

test_done
