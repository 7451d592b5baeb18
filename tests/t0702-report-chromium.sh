#!/bin/bash
test_description='klab report: headless Chromium loads the index and a comparison page from file:// without console errors, and every table fits at 1280 px'
. "$(dirname "$0")/lib.sh"

FIXTURE=$SRCDIR/tests/data/report/fixture.sql
ARTIFACTS=$SRCDIR/build/tests/artifacts
mkdir -p "$ARTIFACTS"

# chromium PAGE PNG HEIGHT: load PAGE from file://, screenshot to PNG, log to PNG.log
chromium_shot() {
	local profile
	profile=$(mktemp -d "$SCRATCH/chromium-XXXXXX") || return 1
	# in a network namespace of its own with only loopback (when we may make
	# one): a file:// page needs no network, and Chromium reaches for Google
	# at start-up; resolver rules and no proxy keep it off the network otherwise
	local netns=
	[ "$(id -u)" = 0 ] && unshare -n true 2>/dev/null && netns="unshare -n"
	timeout 120 $netns chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--host-resolver-rules="MAP * ~NOTFOUND" --no-proxy-server \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$profile" --enable-logging=stderr --v=0 --hide-scrollbars \
		--window-size=1280,"$3" --screenshot="$2" --virtual-time-budget=5000 \
		"file://$1" >"$2.log" 2>&1
	local rc=$?
	rm -rf "$profile"
	return $rc
}

# Problems a page can cause: console messages (the pages have no script, so any
# is an error: CSP, a parse error), failed loads, blocked network requests.
page_errors() {
	# messages of the page (file://); Chromium's own chrome:// pages may log
	# about the missing network, which is not the page's fault
	grep -E "CONSOLE|ERR_FILE_NOT_FOUND|net::ERR|Failed to load|Uncaught" "$1" | grep -v -i dbus |
		grep -v "source: chrome://"
}

# fit PAGE WIDTH: the tables of PAGE that do not fit a window WIDTH px wide, one line each.
# The pages have no script, so the check runs in a copy with one added: after the load it
# opens every <details>, compares each table's width with its wrapper's (a .table-wrap scrolls, so a table wider
# than the page is cut off at the window's edge) and each cell's content with the cell, and
# writes what it found into the DOM, which --dump-dom prints after layout at --window-size
# (Debian's chromium has no DevTools client here; --dump-dom needs none).
fit() {
	local dir copy profile
	dir=$(dirname "$1")
	copy="$dir/fit-$(basename "$1")"
	cat >"$dir/fit-probe.js" <<-\EOJS
	window.addEventListener("load", function () {
		// folded tables count too: open them before measuring
		document.querySelectorAll("details").forEach(function (d) { d.open = true; });
		var out = [], vw = document.documentElement.clientWidth;
		document.querySelectorAll("table").forEach(function (t, i) {
			var w = t.parentElement, r = t.getBoundingClientRect();
			if (t.scrollWidth > w.clientWidth + 1 || r.right > vw + 1)
				out.push("table " + i + " is " + t.scrollWidth + " px wide in " + w.clientWidth + " px: " +
					 t.rows[0].textContent.replace(/\s+/g, " ").slice(0, 60));
			t.querySelectorAll("td, th").forEach(function (c) {
				if (c.scrollWidth > c.clientWidth + 1)
					out.push("cell clipped in table " + i + ": " + c.textContent.slice(0, 60));
			});
		});
		var p = document.createElement("pre");
		p.id = "klab-fit";
		p.textContent = "viewport " + vw + "\n" + out.join("\n");
		document.body.appendChild(p);
	});
	EOJS
	sed 's#</head>#<script src="fit-probe.js"></script></head>#' "$1" >"$copy" || return 1
	profile=$(mktemp -d "$SCRATCH/chromium-XXXXXX") || return 1
	timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--host-resolver-rules="MAP * ~NOTFOUND" --no-proxy-server --disable-background-networking \
		--disable-component-update --disable-sync --user-data-dir="$profile" \
		--window-size="$2",2000 --virtual-time-budget=5000 --dump-dom "file://$copy" 2>/dev/null |
		sed -n "/<pre id=\"klab-fit\">/,/<\/pre>/p" | sed "s/<[^>]*>//g" >"$copy.fit"
	rm -rf "$profile" "$copy"
	grep -q "^viewport " "$copy.fit" || { echo "the fit probe did not run on $1"; return 1; }
	grep -v -e "^viewport " -e "^$" "$copy.fit"
	return 0
}

png_size() {	# width height of a PNG
	python3 -c 'import struct,sys; d=open(sys.argv[1],"rb").read(24); print(*struct.unpack(">II", d[16:24]))' "$1"
}

test_expect_success 'build the fixture database and the report' '
	"$KLAB" --db f.db db init >/dev/null &&
	sqlite3 f.db <"$FIXTURE" &&
	"$KLAB" --db f.db db rebuild-summaries >/dev/null &&
	"$KLAB" --db f.db report --out "$SCRATCH/out" >/dev/null
'

test_expect_success CHROMIUM 'the console check sees an error on a bad page (control)' '
	printf "<html><body><script>console.error(\"boom\")</script><img src=\"nope.svg\"></body></html>" >bad.html &&
	chromium_shot "$SCRATCH/bad.html" "$SCRATCH/bad.png" 400 &&
	page_errors bad.png.log >found &&
	test_grep boom found
'

test_expect_success CHROMIUM 'the index loads from file:// without console errors' '
	chromium_shot "$SCRATCH/out/index.html" "$ARTIFACTS/report-index.png" 1400 &&
	cp "$ARTIFACTS/report-index.png.log" index.log &&
	! page_errors index.log &&
	test -s "$ARTIFACTS/report-index.png" &&
	test "$(png_size "$ARTIFACTS/report-index.png")" = "1280 1400"
'

test_expect_success CHROMIUM 'the comparison page loads with its charts and without console errors' '
	chromium_shot "$SCRATCH/out/job-1.html" "$ARTIFACTS/report-job-1.png" 6000 &&
	cp "$ARTIFACTS/report-job-1.png.log" job.log &&
	! page_errors job.log &&
	test "$(png_size "$ARTIFACTS/report-job-1.png")" = "1280 6000" &&
	# a page with eleven SVG charts is far from a blank screenshot
	test "$(stat -c %s "$ARTIFACTS/report-job-1.png")" -gt 200000
'

test_expect_success CHROMIUM 'the history page loads without console errors' '
	chromium_shot "$SCRATCH/out/history-udp_rr_500--tps.html" "$ARTIFACTS/report-history.png" 1400 &&
	! page_errors "$ARTIFACTS/report-history.png.log"
'

test_expect_success CHROMIUM 'the fit check sees a table that is too wide (control: the job page at 800 px)' '
	fit "$SCRATCH/out/job-1.html" 800 >narrow &&
	cat narrow &&
	test_grep "^table .* px wide in" narrow
'

test_expect_success CHROMIUM 'at 1280 px no table is wider than the page and no cell is clipped' '
	for p in index.html job-1.html job-11.html history-udp_rr_500--tps.html; do
		fit "$SCRATCH/out/$p" 1280 >found || exit 1
		if test -s found; then echo "$p at 1280 px:"; cat found; exit 1; fi
	done
'

test_expect_success CHROMIUM 'the answer is the first thing on the job page (screenshot at 1280 px)' '
	chromium_shot "$SCRATCH/out/job-1.html" "$ARTIFACTS/report-job-1-top.png" 1000 &&
	! page_errors "$ARTIFACTS/report-job-1-top.png.log" &&
	test "$(png_size "$ARTIFACTS/report-job-1-top.png")" = "1280 1000" &&
	# in the HTML the answer, with its forest plot, precedes what was tested and the KPI table
	a=$(grep -n "id=\"answer\"" "$SCRATCH/out/job-1.html" | cut -d: -f1) &&
	f=$(grep -n "charts/j1-forest.svg" "$SCRATCH/out/job-1.html" | cut -d: -f1) &&
	s=$(grep -n "id=\"setup\"" "$SCRATCH/out/job-1.html" | cut -d: -f1) &&
	test "$a" -lt "$f" && test "$f" -lt "$s"
'

test_done
