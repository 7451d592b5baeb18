#!/bin/bash
test_description='klab report: headless Chromium loads the index and a comparison page from file:// without console errors'
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

png_size() {	# width height of a PNG
	python3 -c 'import struct,sys; d=open(sys.argv[1],"rb").read(24); print(*struct.unpack(">II", d[16:24]))' "$1"
}

test_expect_success 'build the fixture database and the report' '
	"$KLAB" --db f.db db init >/dev/null &&
	sqlite3 f.db <"$FIXTURE" &&
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

test_done
