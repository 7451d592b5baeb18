#!/bin/bash
test_description='klab report: static pages and charts from the fixture database (golden structure, escaping, one gnuplot)'
. "$(dirname "$0")/lib.sh"

FIXTURE=$SRCDIR/tests/data/report/fixture.sql
CHECK=$SRCDIR/tests/data/report/check-pages.sh

# gnuplot wrapped so that every process it starts is counted
mkdir -p wrap
cat >wrap/gnuplot <<EOW
#!/bin/sh
echo run >>"$SCRATCH/gnuplot.count"
exec $(command -v gnuplot 2>/dev/null || echo /usr/bin/gnuplot) "\$@"
EOW
chmod +x wrap/gnuplot

test_expect_success 'build the fixture database' '
	"$KLAB" --db f.db db init >/dev/null &&
	sqlite3 f.db <"$FIXTURE" &&
	test "$(sqlite3 f.db "SELECT count(*) FROM runs WHERE job_id = 1")" = 48 &&
	test "$(sqlite3 f.db "SELECT count(*) FROM comparisons WHERE job_id = 1")" = 5
'

test_expect_success GNUPLOT 'klab report renders every page with one gnuplot process' '
	rm -f gnuplot.count &&
	KLAB_GNUPLOT=$SCRATCH/wrap/gnuplot "$KLAB" --db f.db report --out out >log 2>err &&
	cat log &&
	test_grep "1 gnuplot process" log &&
	test "$(wc -l <gnuplot.count)" = 1 &&
	for f in index.html job-1.html job-2.html job-7.html style.css \
		history-udp_rr_500--tps.html history-udp_tx_dummy_iouring--tx_pps.html \
		charts/j1-udp_rr_500-order.svg charts/j1-udp_rr_500-dist.svg charts/j1-udp_rr_500-cpu.svg \
		charts/j1-udp_rr_500-hist-__dev_queue_xmit_ns.svg charts/j1-udp_rr_500-series.svg \
		charts/j1-udp_tx_dummy_iouring-order.svg charts/history-udp_rr_500--tps.svg; do
		test -s out/$f || { echo "missing out/$f"; exit 1; }
	done
'

test_expect_success GNUPLOT 'every chart and local link resolves; no network fetch; nothing unescaped' '
	bash "$CHECK" out &&
	n=$(grep -o "<img src=\"charts/[^\"]*\"" out/job-1.html | wc -l) &&
	test "$n" = 11 &&
	grep -o "<img src=\"charts/[^\"]*\"" out/*.html | sed "s/.*src=\"//; s/\"$//" | sort -u >refs &&
	(cd out && ls charts/*.svg) | sort >made &&
	test_cmp refs made
'

test_expect_success GNUPLOT 'the structure check catches a broken link and raw script' '
	cp -R out broken &&
	rm broken/charts/j1-udp_rr_500-cpu.svg &&
	echo "<p><script>alert(1)</script><a href=\"job-99.html\">x</a></p>" >>broken/index.html &&
	test_must_fail bash "$CHECK" broken >problems &&
	test_grep "broken src: charts/j1-udp_rr_500-cpu.svg" problems &&
	test_grep "broken href: job-99.html" problems &&
	test_grep "script" problems
'

test_expect_success GNUPLOT 'hostile strings are escaped in every field' '
	! grep -l "<script>alert" out/*.html out/charts/*.svg &&
	test_grep "alien skbs &lt;script&gt;alert(1)&lt;/script&gt; &quot;quoted&quot; &#39;single&#39;" out/job-1.html &&
	test_grep "Eric &quot;E.&quot; Dumazet &amp; Co &lt;edumazet@google.com&gt;" out/job-1.html &&
	test_grep "tpl&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;x&quot;" out/job-1.html &&
	test_grep "dut1&lt;b&gt;.lab.example" out/index.html &&
	test_grep "after &quot;kexec&quot; &amp; &lt;hang&gt;" out/index.html &&
	test_grep "cycles &lt;b&gt;&amp;&lt;/b&gt;" out/job-1.html &&
	test_grep "alien skbs &lt;script&gt;" out/index.html &&
	test_grep "href=\"https://lore.kernel.org/netdev/20251016000000.1-edumazet@google.com/\"" out/job-1.html
'

test_expect_success GNUPLOT 'hostile names, labels, tree, profile, workload, metric, NIC and error (job 11) are escaped' '
	j=out/job-11.html &&
	for s in "Job 11: n&lt;script&gt;alert(1)&lt;/script&gt;" "e&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;q&quot;" \
		"la&lt;script&gt;alert(1)&lt;/script&gt;" "lb&quot;&#39;&lt;script&gt;" "t&lt;script&gt;alert(1)&lt;/script&gt;" \
		"pa&lt;script&gt;alert(1)&lt;/script&gt; (A), pb&lt;script&gt;" "Workload w&lt;script&gt;alert(1)&lt;/script&gt;" \
		"x&lt;script&gt;alert(1)&lt;/script&gt;" "u&quot;&#39;&lt;b&gt;" "d&lt;script&gt;alert(1)&lt;/script&gt;" \
		"c&lt;script&gt;alert(1)&lt;/script&gt;" "s&quot;&#39;&lt;script&gt;alert(1)&lt;/script&gt;" \
		"d&lt;script&gt;alert(1)&lt;/script&gt;" "r&lt;script&gt;alert(1)&lt;/script&gt;"; do
		grep -q -F -e "$s" $j || { echo "not found escaped in $j: $s"; exit 1; }
	done &&
	test_grep "h&quot;onload=&quot;alert(1)" out/index.html &&
	test_grep "&lt;img src=x onerror=alert(1)&gt;" out/index.html &&
	ls out/history-w_script_alert_1___script_-*--tps.html &&
	! ls out/charts | grep -q "[<>\"'"'"']"
'

test_expect_success GNUPLOT 'the job page carries the header facts and the KPI values of the fixture' '
	for s in "net-next a1b2c3d4e5f6" "6.1.192-klab-base" "6.1.192-klab-patched" \
		"driver <code>idpf</code>, 32 TX / 32 RX queues" "mitigations=off" "xps-auto" \
		"A 4 boots &times; 3 runs, B 4 boots &times; 3 runs" "seed <code>20251016</code>" \
		"&plusmn;1.31% (95% CI half-width" "+48.75%" "[+46.91%, +50.62%]" "-13.64%" \
		"CHANGED (better)" "EQUIVALENT" "consistent with the claim" "1.6M" "2.38M" \
		"queued_spin_lock_slowpath" "skb_attempt_defer_free" "-36.2"; do
		grep -q -F -e "$s" out/job-1.html || { echo "not found: $s"; exit 1; }
	done
'

test_expect_success GNUPLOT 'the charts carry labelled axes, both sides and reboot lines' '
	grep -q "tps (1/s)" out/charts/j1-udp_rr_500-order.svg &&
	grep -q "A: 6.1.192-klab-base" out/charts/j1-udp_rr_500-order.svg &&
	grep -q "B: 6.1.192-klab-patched" out/charts/j1-udp_rr_500-order.svg &&
	grep -q "reboots" out/charts/j1-udp_rr_500-order.svg &&
	grep -q "CPU time (%)" out/charts/j1-udp_rr_500-cpu.svg &&
	grep -q "share of samples (%)" out/charts/j1-udp_rr_500-hist-__dev_queue_xmit_ns.svg &&
	grep -q "__dev_queue_xmit_ns (ns)" out/charts/j1-udp_rr_500-hist-__dev_queue_xmit_ns.svg &&
	grep -q "time in the measured window (s)" out/charts/j1-udp_rr_500-series.svg
'

test_expect_success GNUPLOT 'a chart with no data says so' '
	test_grep "no data: no run stored a value" out/charts/j2-udp_rr_500-order.svg &&
	test_grep "no data: no histogram" out/charts/j1-udp_tx_dummy_iouring-hist.svg &&
	test_grep "No data: no perf profile" out/job-1.html
'

test_expect_success GNUPLOT 'the history page shows the change point linked to its job, and segment means' '
	p=out/history-udp_rr_500--tps.html &&
	test_grep "8 nightly point(s), 1 change point(s)" $p &&
	test_grep "<a href=\"job-7.html\">job 7</a>" $p &&
	test_grep "+5.54%" $p &&
	test_grep "last change point: <strong>+5.54%</strong> at <a href=\"job-7.html\">" out/index.html &&
	test "$(grep -c "lc rgb .#222222. front\|stroke=.rgb( 34,  34,  34)" out/charts/history-udp_rr_500--tps.svg)" -ge 1
'

test_expect_success 'without gnuplot the pages still render, with a note where each chart would be' '
	KLAB_GNUPLOT=none "$KLAB" --db f.db report --out nogp >log &&
	test_grep "0/.* chart(s) drawn by 0 gnuplot" log &&
	! grep -q "<img" nogp/job-1.html &&
	test "$(grep -c "class=\"chart-missing\">Chart not drawn" nogp/job-1.html)" -ge 10 &&
	test_grep "gnuplot is not installed" nogp/job-1.html &&
	bash "$CHECK" nogp
'

test_expect_success GNUPLOT 'klab report JOB renders that job, the index and histories; links stay valid' '
	"$KLAB" --db f.db report --out one 1 >log &&
	test -f one/job-1.html && ! test -f one/job-2.html &&
	test_grep "<a href=\"job-1.html\">job 1</a>" one/index.html &&
	! grep -q "href=\"job-2.html\"" one/index.html &&
	bash "$CHECK" one
'

test_expect_success GNUPLOT 'a second run rewrites the same pages (no stale state)' '
	"$KLAB" --db f.db report --out out >/dev/null &&
	bash "$CHECK" out &&
	! ls out | grep -q "\.tmp"
'

test_expect_success GNUPLOT '--json prints a summary of the run' '
	"$KLAB" --json --db f.db report --out js >js.json &&
	python3 -c "import json,sys; d=json.load(open(\"js.json\")); assert d[\"gnuplot_processes\"] == 1 and d[\"charts_drawn\"] == d[\"charts\"] > 20 and d[\"pages\"] >= 14, d"
'

test_expect_success 'bad arguments are refused with clear errors' '
	test_expect_code 2 "$KLAB" --db f.db report --out x abc 2>err &&
	test_grep "not a job id" err &&
	test_expect_code 1 "$KLAB" --db f.db report --out x 999 2>err &&
	test_grep "no such job" err &&
	test_expect_code 2 "$KLAB" --db f.db report --format=pdf 1 2>err &&
	test_grep "unknown format" err
'

test_expect_success GNUPLOT 'report_dir from the config is the default folder' '
	cat >klab.conf <<-EOC &&
	[lab]
		db = $SCRATCH/f.db
		report_dir = $SCRATCH/fromconf
	EOC
	"$KLAB" report >log &&
	test -f fromconf/index.html
'

test_done
