#!/bin/bash
test_description='klab report --format=mail: the LKP-style text report of the fixture job'
. "$(dirname "$0")/lib.sh"

FIXTURE=$SRCDIR/tests/data/report/fixture.sql

test_expect_success 'build the fixture database' '
	"$KLAB" --db f.db db init >/dev/null &&
	sqlite3 f.db <"$FIXTURE" &&
	"$KLAB" --db f.db db rebuild-summaries >/dev/null
'

test_expect_success 'the mail report says what was tested' '
	"$KLAB" --db f.db report --format=mail 1 >mail &&
	cat mail &&
	test_grep "^Subject: Re: \[PATCH net-next 2/3\] net: fix napi_consume_skb() with alien skbs" mail &&
	test_grep "^In-Reply-To: <20251016000000.1-edumazet@google.com>$" mail &&
	test_grep "^author: *Eric \"E.\" Dumazet & Co <edumazet@google.com>$" mail &&
	test_grep "^base    (A):  6.1.192-klab-base  net-next a1b2c3d4e5f6$" mail &&
	test_grep "^patched (B):  6.1.192-klab-patched  net-next a1b2c3d4e5f6 + the series$" mail &&
	test_grep "^test machine: dut1 -> peer1, NIC eth1 (idpf, 32 TX / 32 RX queues)$" mail &&
	test_grep "^testcase: *udp_rr_500, udp_tx_dummy_iouring$" mail &&
	test_grep "4 boots x 3 runs per kernel, randomised ABBA order (seed 20251016)" mail
'

test_expect_success 'the answer comes first: one line per workload, then the claim verdict' '
	sed -n 1,15p mail >top &&
	test_grep "^The answer (B against A; each workload.s headline metric, 95% CI):$" top &&
	test_grep "^  udp_tx_dummy_iouring: tx_pps CHANGED (better) +48.75% \[95% CI +46.91%, +50.62%\], measured in real time (wall-clock rates, per-CPU time); claim on tx_pps (+50.0%): consistent with the claim$" top &&
	test_grep "^  udp_rr_500: tps CHANGED (better) +4.94% \[95% CI +3.12%, +6.79%\], measured in real time (wall-clock rates, per-CPU time); claim on cpu_us_per_op (-15.0%, CPU time: no run counted cycles): consistent with the claim$" top &&
	test_grep "^  The measurements support the performance claim of the series (Tested-by below).$" top &&
	# the answer precedes the details
	a=$(grep -n "^The answer" mail | cut -d: -f1) && d=$(grep -n "^series: " mail | cut -d: -f1) &&
	test "$a" -lt "$d"
'

test_expect_success 'klab compare prints the same answer lines first' '
	"$KLAB" --db f.db compare --stored 1 >cmp &&
	sed -n 3,4p cmp >cmp.top &&
	grep -F "$(grep "^  udp_rr_500: " mail | sed "s/^  //")" cmp.top &&
	test_grep "^udp_tx_dummy_iouring: tx_pps CHANGED (better) +48.75%" cmp.top
'

test_expect_success 'monitors that missed runs are named with the reason' '
	test_grep "^monitors that did not record on every run" mail &&
	test_grep "^  udp_rr_500: bpftrace unavailable on 12 of 12 runs of B: bpftrace: ERROR: kprobe:__dev_queue_xmit: __dev_queue_xmit is not traceable" mail &&
	test_grep "^  udp_tx_dummy_iouring: perf-stat unavailable on 1 of 12 runs of A: perf stat: <not counted> task-clock & co (exit status 1)$" mail
'

test_expect_success 'the before/after table takes its values from the comparisons' '
	# one line per comparison row of job 1, values as stored
	sqlite3 -separator " " f.db "SELECT workload || \".\" || metric, change_pct, ci_lo, ci_hi, cov_a, cov_b FROM comparisons WHERE job_id = 1" >rows &&
	test "$(wc -l <rows)" = 6 &&
	while read -r name ch lo hi ca cb; do
		# the table line (it has the CoVs): "... NAME (UNIT)", or "... NAME" for a metric without a unit
		line=$(grep -F " $name" mail | grep -F "±" | head -n 1) && test -n "$line" || { echo "no table line for $name"; exit 1; }
		echo "$line" | grep -q -F -e "$(printf "%+.2f%%" "$ch")" || { echo "$name: change $ch not in: $line"; exit 1; }
		echo "$line" | grep -q -F -e "[$(printf "%+.2f%%, %+.2f%%" "$lo" "$hi")]" || { echo "$name: CI not in: $line"; exit 1; }
		echo "$line" | grep -q -F -e "$(printf "%.2f%%" "$ca")" || { echo "$name: CoV A not in: $line"; exit 1; }
	done <rows &&
	grep -F "udp_tx_dummy_iouring.tx_pps (1/s)" mail | grep -q "1600000 .*+48.75% \[+46.91%, +50.62%\] .*2380000" &&
	grep -F "udp_rr_500.tps (1/s)" mail | grep -q "226800 .*+4.94% \[+3.12%, +6.79%\] .*238000"
'

test_expect_success 'verdicts, claim check and profile differences' '
	test_grep "udp_tx_dummy_iouring.tx_pps  *CHANGED (better)  *p=<0.0001 (Holm <0.0001), MWU p=0.029, MDE 1.93%" mail &&
	test_grep "udp_rr_500.latency_p99_us  *EQUIVALENT  *p=0.280" mail &&
	test_grep "the series says: \"80 Mpps -> 120 Mpps.\"" mail &&
	test_grep "expected: tx_pps higher by 40% to 60%" mail &&
	test_grep "measured: udp_tx_dummy_iouring.tx_pps +48.75% \[+46.91%, +50.62%\], CHANGED (better): consistent with the claim" mail &&
	test_grep "top profile differences, udp_tx_dummy_iouring (perf, 12 profiled runs of A, 12 of B)" mail &&
	grep -A2 "B-A pp" mail | grep -q "queued_spin_lock_slowpath" &&
	grep -A2 "B-A pp" mail | grep -q -- "-36\.[0-9][0-9]"
'

test_expect_success 'Tested-by only when the measurements support the claim' '
	test "$(grep -c "^Tested-by: " mail)" = 1 &&
	KLAB_TESTED_BY="Lab Robot <robot@example.org>" "$KLAB" --db f.db report --format=mail 1 >mail2 &&
	test_grep "^Tested-by: Lab Robot <robot@example.org>$" mail2 &&
	"$KLAB" --db f.db report --format=mail --tested-by "X <x@example.org>" 1 >mail3 &&
	test_grep "^Tested-by: X <x@example.org>$" mail3 &&
	cp f.db g.db &&
	sqlite3 g.db "UPDATE comparisons SET claim = '"'"'opposite'"'"', change_pct = -5, verdict = '"'"'CHANGED'"'"' WHERE job_id = 1 AND metric = '"'"'tx_pps'"'"'" &&
	"$KLAB" --db g.db report --format=mail 1 >mail4 &&
	! grep -q "^Tested-by:" mail4 &&
	test_grep "^No Tested-by: 1 of 2 claim checks do not agree with the claim.$" mail4 &&
	test_grep "^  No Tested-by: 1 of 2 claim checks do not agree with the claim.$" mail4 &&
	test_grep "^  udp_tx_dummy_iouring: tx_pps CHANGED (worse) -5.00%.*claim on tx_pps (+50.0%): opposite to the claim$" mail4 &&
	cp f.db u.db &&
	sqlite3 u.db "UPDATE comparisons SET claim = '"'"'untestable'"'"', change_pct = -24, ci_lo = -65, ci_hi = 65, verdict = '"'"'INCONCLUSIVE'"'"' WHERE job_id = 1 AND metric = '"'"'tx_pps'"'"'" &&
	"$KLAB" --db u.db report --format=mail 1 >mail6 &&
	! grep -q "^Tested-by:" mail6 &&
	test_grep "^  udp_tx_dummy_iouring: tx_pps INCONCLUSIVE.* -24.00% \[95% CI -65.00%, +65.00%\].*claim on tx_pps (+50.0%): not testable at this precision (95% CI +-65.00%)$" mail6 &&
	test_grep "^    measured: udp_tx_dummy_iouring.tx_pps -24.00% \[-65.00%, +65.00%\], INCONCLUSIVE.*: not testable at this precision (95% CI +-65.00%)$" mail6 &&
	! grep -q "nan" mail6 &&
	cp f.db h.db &&
	sqlite3 h.db "DELETE FROM expectations; UPDATE comparisons SET claim = NULL" &&
	"$KLAB" --db h.db report --format=mail 1 >mail5 &&
	! grep -q "^Tested-by:" mail5 &&
	test_grep "no performance claim was found" mail5
'

test_expect_success 'a subject with a newline cannot add mail headers' '
	cp f.db n.db &&
	sqlite3 n.db "UPDATE series SET subject = '"'"'evil'"'"' || char(10) || '"'"'Bcc: victim@example.org'"'"'" &&
	"$KLAB" --db n.db report --format=mail 1 >mail6 &&
	! grep -q "^Bcc:" mail6 &&
	test_grep "^Subject: Re: evil Bcc: victim@example.org$" mail6
'

test_expect_success GNUPLOT '--out draws PNG charts to attach' '
	"$KLAB" --db f.db report --format=mail --out png 1 >mail7 &&
	test_grep "attached charts" mail7 &&
	for f in png/j1-udp_rr_500-dist.png png/j1-udp_tx_dummy_iouring-dist.png; do
		test "$(head -c 8 $f | od -An -c | tr -d " ")" = "211PNG\r\n032\n" || { echo "$f is not a PNG"; exit 1; }
	done
'

test_expect_success 'errors: no job, no comparison, usage' '
	test_expect_code 1 "$KLAB" --db f.db report --format=mail 999 2>err &&
	test_grep "no such job" err &&
	test_expect_code 1 "$KLAB" --db f.db report --format=mail 3 2>err &&
	test_grep "no comparison computed yet" err &&
	test_expect_code 2 "$KLAB" --db f.db report --format=mail 2>err &&
	test_grep "exactly one JOB" err
'

test_done
