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
	"$KLAB" --db f.db db rebuild-summaries >/dev/null &&
	test "$(sqlite3 f.db "SELECT count(*) FROM runs WHERE job_id = 1")" = 48 &&
	test "$(sqlite3 f.db "SELECT count(*) FROM comparisons WHERE job_id = 1")" = 6
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
		charts/j1-udp_rr_500-hist-rtt_us.svg charts/j1-udp_rr_500-series.svg charts/j1-forest.svg \
		charts/j1-udp_tx_dummy_iouring-order.svg charts/j1-udp_tx_dummy_iouring-flame.svg \
		charts/history-udp_rr_500--tps.svg; do
		test -s out/$f || { echo "missing out/$f"; exit 1; }
	done
'

test_expect_success GNUPLOT 'every chart and local link resolves; no network fetch; nothing unescaped' '
	bash "$CHECK" out &&
	n=$(grep -o "<img src=\"charts/[^\"]*\"" out/job-1.html | wc -l) &&
	test "$n" = 11 &&
	grep -o -E "(<img src|<object [^>]*data)=\"charts/[^\"]*\"" out/*.html | sed "s/.*=\"//; s/\"$//" | sort -u >refs &&
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
	grep -q "share of samples (%)" out/charts/j1-udp_rr_500-hist-rtt_us.svg &&
	grep -q "rtt_us (us)" out/charts/j1-udp_rr_500-hist-rtt_us.svg &&
	grep -q "B: 6.1.192-klab-patched" out/charts/j1-udp_rr_500-hist-rtt_us.svg &&
	grep -q "time in the measured window (s)" out/charts/j1-udp_rr_500-series.svg
'

test_expect_success GNUPLOT 'the answer comes first: per workload the headline verdict, change, CI, claim and clock' '
	j=out/job-1.html &&
	sed -n "/<section id=\"answer\">/,/<\/section>/p" $j >answer &&
	test "$(grep -c "<li>" answer)" = 2 &&
	grep "<li>" answer | grep -F "udp_tx_dummy_iouring</a> <code>tx_pps</code>" |
		grep -F "CHANGED (better)" | grep -F "+48.75%" | grep -F "[95% CI +46.91%, +50.62%]" |
		grep -F "claim on tx_pps (+50.0%): consistent with the claim" |
		grep -q -F "measured in real time (wall-clock rates, per-CPU time)" &&
	grep "<li>" answer | grep -F "udp_rr_500</a> <code>tps</code>" | grep -F "+4.94%" |
		grep -q -F "claim on cpu_us_per_op (-15.0%, CPU time: no run counted cycles): consistent with the claim" &&
	test_grep "charts/j1-forest.svg" answer &&
	a=$(grep -n "id=\"answer\"" $j | cut -d: -f1) && s=$(grep -n "id=\"setup\"" $j | cut -d: -f1) &&
	k=$(grep -n "id=\"kpi\"" $j | cut -d: -f1) &&
	test "$a" -lt "$s" && test "$s" -lt "$k"
'

test_expect_success GNUPLOT 'the forest plot has every headline change with its CI and threshold band' '
	f=out/charts/j1-forest.svg &&
	for l in "udp_rr_500 tps" "udp_rr_500 cpu_us_per_op" "udp_rr_500 latency_p99_us" \
		"udp_tx_dummy_iouring tx_pps" "udp_tx_dummy_iouring cpu_us_per_op"; do
		grep -q -F ">$l<" $f || { echo "no row $l in the forest plot"; exit 1; }
	done &&
	! grep -q -F "bpf.@xmit" $f &&
	test_grep "practical threshold" $f
'

test_expect_success GNUPLOT 'the KPI table shows the decisive metrics, the rest folded' '
	j=out/job-1.html &&
	sed -n "/<details class=\"more\">/,/<\/details>/p" $j >more &&
	test_grep "1 more metric" more &&
	test_grep "bpf.@xmit_latency_ns_by_queue\[idpf_tx_splitq_start/eth1-TxRx-31\]" more &&
	! grep -q "<code>tx_pps</code>" more
'

test_expect_success GNUPLOT 'the index lists each job with its headline verdicts' '
	grep -F "udp_tx_dummy_iouring: <span class=\"badge v-better\">CHANGED (better)</span> <code>tx_pps</code> +48.75% [+46.91%, +50.62%]" out/index.html &&
	grep -F "udp_rr_500: <span class=\"badge v-better\">CHANGED (better)</span> <code>tps</code> +4.94% [+3.12%, +6.79%]" out/index.html &&
	grep -F "udp_rr_500: <span class=\"badge v-equivalent\">EQUIVALENT</span> <code>tps</code> +0.20% [-1.10%, +1.51%]" out/index.html
'

test_expect_success GNUPLOT 'monitor gaps are named beside their chart, per side, with the reason' '
	j=out/job-1.html &&
	sed -n "/<h3>Histograms<\/h3>/,/<h3>perf profile/p" $j | head -20 >hist &&
	grep -F "<strong>bpftrace</strong> was unavailable on 12 of 12 runs of <span class=\"side-b\">B</span> (6.1.192-klab-patched)" hist |
		grep -q -F "__dev_queue_xmit is not traceable (either non-existing, inlined, or marked as &quot;notrace&quot;)" &&
	grep -F "histogram __dev_queue_xmit_ns: only <span class=\"side-a\">A</span> (6.1.192-klab-base) has data" hist |
		grep -q "recorded none, so there is nothing to compare and no chart is drawn" &&
	! test -e out/charts/j1-udp_rr_500-hist-__dev_queue_xmit_ns.svg &&
	test_grep "<strong>perf-stat</strong> was unavailable on 1 of 12 runs of <span class=\"side-a\">A</span>" $j &&
	test_grep "perf stat: &lt;not counted&gt; task-clock &amp; co (exit status 1)" $j &&
	test "$(grep -c "class=\"gap\"" $j)" = 2 &&
	test_grep "perf record: &lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;x&quot;" out/job-11.html &&
	# the nightly runs of the fixture were stored without their monitors statuses
	test_grep "statuses were not stored for 2 of the 2 runs of A (stored by an older klab)" out/job-7.html
'

test_expect_success GNUPLOT 'the differential flame graph: B widths, gained share red, lost blue, both shares on hover' '
	test_grep "Where the CPU time moved: differential flame graph" out/job-1.html &&
	test_grep "<object style=\"aspect-ratio: 1200 / [0-9]*\" type=\"image/svg+xml\" data=\"charts/j1-udp_tx_dummy_iouring-flame.svg\">" out/job-1.html &&
	grep -A3 "Frames A ran and B did not" out/job-1.html | grep -q "ksoftirqd/0 (A 68\.[0-9][0-9]%)" &&
	python3 - out/charts/j1-udp_tx_dummy_iouring-flame.svg <<-\PY &&
	import sys, re, xml.etree.ElementTree as ET
	ns = {"s": "http://www.w3.org/2000/svg"}
	root = ET.parse(sys.argv[1]).getroot()
	frames = {}
	for g in root.findall("s:g", ns):
	    t = g.find("s:title", ns).text
	    r = g.find("s:rect", ns)
	    name = t.split("\n")[0]
	    m = re.search(r"A ([0-9.]+)%, B ([0-9.]+)%", t)
	    rgb = tuple(int(x) for x in re.findall(r"\d+", r.get("fill")))
	    frames.setdefault(name, []).append((float(m.group(1)), float(m.group(2)), float(r.get("width")), rgb))
	def check(c, msg):
	    if not c:
	        print("FAIL:", msg); sys.exit(1)
	    print("ok:", msg)
	a, b, w, rgb = frames["all"][0]
	check(a == 100 and b == 100 and abs(w - 1179.4) < 0.1, "the root spans the width")
	a, b, w, rgb = frames["skb_attempt_defer_free"][0]
	# 108 of the 835 samples per mille of a B run; A has none
	check(a == 0 and 12.5 < b < 13.4 and abs(w - b / 100 * 1180) < 1, "a frame B gained: width = B share (%.2f%%, %.1f px)" % (b, w))
	check(rgb[0] > 200 and rgb[2] < 150, "... drawn red %s" % (rgb,))
	a, b, w, rgb = frames["queued_spin_lock_slowpath"][0]
	check(b < a and rgb[2] > rgb[0], "a frame B lost share (A %.2f%%, B %.2f%%) drawn blue %s" % (a, b, rgb))
	check("tpl<script>alert(1)</script>&\"x\"" in frames, "a hostile frame name survives escaping as text")
	PY
	! grep -q "<script" out/charts/j1-udp_tx_dummy_iouring-flame.svg &&
	test_grep "f&quot;&#39;&lt;script&gt;alert(1)&lt;/script&gt;" out/charts/j11-w_script_alert_1___script_-cfd41099-flame.svg
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

test_expect_success 'the point of a night is the mean of its measured runs: a warm-up run is left out, as klab history leaves it out' '
	cp f.db wu.db &&
	sqlite3 wu.db "INSERT INTO runs (id, uid, job_id, side, kernel_id, workload, seq, machine, peer, status, created)
		       VALUES (190, '"'nightly-3-0'"', 3, '"'A'"', 1, '"'udp_rr_500'"', 0, '"'dut1'"', '"'peer1'"', '"'ok'"', 1763259200);
		       INSERT INTO metrics (run_id, name, value, unit, better) VALUES (190, '"'tps'"', 999999, '"'1/s'"', '"'higher'"')" &&
	"$KLAB" --db wu.db db rebuild-summaries >/dev/null &&
	KLAB_GNUPLOT=none "$KLAB" --db wu.db report --out wu >/dev/null &&
	p=wu/history-udp_rr_500--tps.html &&
	# every night: 2 measured runs; with the warm-up in, night 3 had 3 and a mean of 483k
	test "$(grep -c "<td class=\"num\">2</td></tr>" $p)" = 8 &&
	test_grep -v "<td class=\"num\">3</td></tr>" $p &&
	test_grep -v "483" $p
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

test_expect_success GNUPLOT 'a profile of named CPUs (profile_cpus) says so above the table; one of every CPU does not' '
	cp f.db pc.db &&
	sqlite3 pc.db "UPDATE runs SET result = '\''{\"profile_cpus\": \"1\"}'\'' WHERE job_id = 1 AND workload = '\''udp_tx_dummy_iouring'\''" &&
	"$KLAB" --db pc.db report --out pc >/dev/null &&
	test "$(grep -c "Samples of CPU 1 only" pc/job-1.html)" = 1 &&
	# in the section of the workload whose runs say so, not in udp_rr_500 before it
	sed -n "/<h2>Workload udp_tx_dummy_iouring/,\$p" pc/job-1.html >tx.html &&
	test_grep "Samples of CPU 1 only" tx.html &&
	! grep -q "Samples of CPU" out/job-1.html
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
