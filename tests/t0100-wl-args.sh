#!/bin/bash
test_description='klab-udp-rr and klab-udp-tx: every bad argument exits 2 with a message naming it'
. "$(dirname "$0")/lib.sh"

# expect_usage NAME PROGRAM ARGS...: exit status 2, and the message names NAME
expect_usage() {
	local name=$1; shift
	test_expect_code 2 "$@" >out 2>err || return 1
	test_grep "$name" err || return 1
	test_grep "usage:" err || return 1
	if [ -s out ]; then echo "stdout not empty on a usage error:" >&2; cat out >&2; return 1; fi
}

RR="client --addr 127.0.0.1 --port 9 --flows 1 --duration 1"
TX="send --addr 127.0.0.1 --port 9 --duration 1"

test_expect_success 'udp-rr: role missing or unknown' '
	expect_usage "missing role" "$KLAB_UDP_RR" &&
	expect_usage "unknown role .bogus." "$KLAB_UDP_RR" bogus
'

test_expect_success 'udp-rr: required options' '
	expect_usage "missing --port" "$KLAB_UDP_RR" client --addr 127.0.0.1 --flows 1 --duration 1 &&
	expect_usage "missing --addr" "$KLAB_UDP_RR" client --port 9 --flows 1 --duration 1 &&
	expect_usage "missing --flows" "$KLAB_UDP_RR" client --addr 127.0.0.1 --port 9 --duration 1 &&
	expect_usage "missing --duration" "$KLAB_UDP_RR" client --addr 127.0.0.1 --port 9 --flows 1 &&
	expect_usage "missing --duration" "$KLAB_UDP_RR" server --port 9
'

test_expect_success 'udp-rr: each numeric option out of range' '
	expect_usage "invalid --flows .0." "$KLAB_UDP_RR" $RR --flows 0 &&
	expect_usage "invalid --flows .70000." "$KLAB_UDP_RR" $RR --flows 70000 &&
	expect_usage "invalid --port .0." "$KLAB_UDP_RR" $RR --port 0 &&
	expect_usage "invalid --port .65536." "$KLAB_UDP_RR" $RR --port 65536 &&
	expect_usage "invalid --threads .0." "$KLAB_UDP_RR" $RR --threads 0 &&
	expect_usage "invalid --request-size .7." "$KLAB_UDP_RR" $RR --request-size 7 &&
	expect_usage "invalid --request-size .65508." "$KLAB_UDP_RR" $RR --request-size 65508 &&
	expect_usage "invalid --response-size .abc." "$KLAB_UDP_RR" $RR --response-size abc &&
	expect_usage "invalid --burst .0." "$KLAB_UDP_RR" $RR --burst 0 &&
	expect_usage "invalid --rto-ms .0." "$KLAB_UDP_RR" $RR --rto-ms 0 &&
	expect_usage "invalid --busy-poll .-1." "$KLAB_UDP_RR" $RR --busy-poll -1 &&
	expect_usage "invalid --duration .1x." "$KLAB_UDP_RR" $RR --duration 1x &&
	expect_usage "invalid --duration .10ms." "$KLAB_UDP_RR" $RR --duration 10ms &&
	expect_usage "invalid --warmup .-1." "$KLAB_UDP_RR" $RR --warmup -1
'

test_expect_success 'udp-rr: addresses, CPUs, unknown and misplaced options' '
	expect_usage "invalid --addr .::1.*-6" "$KLAB_UDP_RR" $RR --addr ::1 &&
	expect_usage "invalid --addr .127.0.0.1.*IPv6" "$KLAB_UDP_RR" $RR -6 &&
	expect_usage "invalid --addr .localhost." "$KLAB_UDP_RR" $RR --addr localhost &&
	expect_usage "invalid --cpus .4096." "$KLAB_UDP_RR" $RR --cpus 4096 &&
	expect_usage "invalid --cpus .1-0." "$KLAB_UDP_RR" $RR --cpus 1-0 &&
	expect_usage "invalid --cpus .a." "$KLAB_UDP_RR" $RR --cpus a &&
	expect_usage "unknown option .--bogus." "$KLAB_UDP_RR" $RR --bogus 1 &&
	expect_usage "unexpected argument .extra." "$KLAB_UDP_RR" $RR extra &&
	expect_usage "option .--burst. needs a value" "$KLAB_UDP_RR" $RR --burst &&
	expect_usage "unknown option .-6=1." "$KLAB_UDP_RR" $RR -6=1 &&
	expect_usage "--flows. is for the client only" "$KLAB_UDP_RR" server --port 9 --duration 1 --flows 2 &&
	expect_usage "--ready-fd. is for the server only" "$KLAB_UDP_RR" $RR --ready-fd 3 3>/dev/null &&
	expect_usage "--start-wait. is for the server only" "$KLAB_UDP_RR" $RR --start-wait 5 &&
	expect_usage "invalid --start-wait .-1." "$KLAB_UDP_RR" server --port 9 --duration 1 --start-wait -1 &&
	expect_usage "invalid --start-wait .2h." "$KLAB_UDP_RR" server --port 9 --duration 1 --start-wait 2h &&
	expect_usage "invalid --ready-fd .2.: expected a descriptor number from 3 up" \
		"$KLAB_UDP_RR" server --port 9 --duration 1 --ready-fd 2 &&
	expect_usage "invalid --ready-fd .77.: descriptor 77 is not open" \
		"$KLAB_UDP_RR" server --port 9 --duration 1 --ready-fd 77
'

test_expect_success 'udp-tx: role and required options' '
	expect_usage "missing role" "$KLAB_UDP_TX" &&
	expect_usage "unknown role .client." "$KLAB_UDP_TX" client &&
	expect_usage "missing --addr" "$KLAB_UDP_TX" send --port 9 --duration 1 &&
	expect_usage "missing --port" "$KLAB_UDP_TX" sink --duration 1 &&
	expect_usage "missing --duration" "$KLAB_UDP_TX" sink --port 9
'

test_expect_success 'udp-tx: each option out of range' '
	expect_usage "invalid --size .0." "$KLAB_UDP_TX" $TX --size 0 &&
	expect_usage "invalid --size .65508." "$KLAB_UDP_TX" $TX --size 65508 &&
	expect_usage "invalid --threads .2000." "$KLAB_UDP_TX" $TX --threads 2000 &&
	expect_usage "invalid --engine .splice." "$KLAB_UDP_TX" $TX --engine splice &&
	expect_usage "invalid --batch .0." "$KLAB_UDP_TX" $TX --batch 0 &&
	expect_usage "invalid --batch .5000." "$KLAB_UDP_TX" $TX --batch 5000 &&
	expect_usage "invalid --rate .-5." "$KLAB_UDP_TX" $TX --rate -5 &&
	expect_usage "invalid --gso .0." "$KLAB_UDP_TX" $TX --gso 0 &&
	expect_usage "invalid --gso .10.*segments" "$KLAB_UDP_TX" $TX --size 1400 --gso 10 &&
	expect_usage "invalid --duration .forever." "$KLAB_UDP_TX" $TX --duration forever &&
	expect_usage "invalid --addr .fe80::1." "$KLAB_UDP_TX" $TX --addr fe80::1 &&
	expect_usage "invalid --cpus .9999." "$KLAB_UDP_TX" $TX --cpus 9999 &&
	expect_usage "--engine. is for the sender only" "$KLAB_UDP_TX" sink --port 9 --duration 1 --engine sendto &&
	expect_usage "--poll-us. is for the sink only" "$KLAB_UDP_TX" $TX --poll-us 100 &&
	expect_usage "invalid --poll-us .100001." "$KLAB_UDP_TX" sink --port 9 --duration 1 --poll-us 100001 &&
	expect_usage "invalid --poll-us .-1." "$KLAB_UDP_TX" sink --port 9 --duration 1 --poll-us -1 &&
	expect_usage "unknown option .--flows." "$KLAB_UDP_TX" $TX --flows 3 &&
	expect_usage "--ready-fd. is for the sink only" "$KLAB_UDP_TX" $TX --ready-fd 3 3>/dev/null &&
	expect_usage "--start-wait. is for the sink only" "$KLAB_UDP_TX" $TX --start-wait 5 &&
	expect_usage "invalid --start-wait .x." "$KLAB_UDP_TX" sink --port 9 --duration 1 --start-wait x &&
	expect_usage "invalid --ready-fd .x." "$KLAB_UDP_TX" sink --port 9 --duration 1 --ready-fd x
'

test_expect_success '--help prints the usage and exits 0' '
	"$KLAB_UDP_RR" --help >out &&
	test_grep "klab-udp-rr client" out &&
	"$KLAB_UDP_TX" --help >out &&
	test_grep "klab-udp-tx send" out
'

test_done
