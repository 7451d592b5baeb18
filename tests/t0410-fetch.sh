#!/bin/bash
test_description='patch intake over HTTP: lore thread mbox (gzip) and patchwork series through local servers with real libcurl'
. "$(dirname "$0")/lib.sh"

# loopback only, whatever proxy the environment names
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy
export no_proxy='*'
D=$SRCDIR/tests/data/series
export KLAB_DB=$SCRATCH/klab.db

start_http() {	# start_http DIR: a python http.server on a free port, prints the port; fails if it never accepts
	local port
	port=$(test_free_port)
	python3 -m http.server --bind 127.0.0.1 --directory "$1" "$port" >"$SCRATCH/http-$port.log" 2>&1 &
	echo $! >"$SCRATCH/http-$port.pid"
	test_wait_until 5 "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", $port), 0.2)' 2>/dev/null" ||
		{ cat "$SCRATCH/http-$port.log" >&2; return 1; }
	echo "$port"
}
test_cleanup 'for p in "$SCRATCH"/*.pid; do [ -f "$p" ] && kill "$(cat "$p")"; done'

test_expect_success 'setup: a lore-like archive and a patchwork-like API' '
	mkdir -p www/all/v2-0@example.org www/api/series/7 www/series/7/mbox &&
	gzip -c "$D/thread-v2.mbox" >www/all/v2-0@example.org/t.mbox.gz &&
	cp "$SRCDIR/tests/data/series/seeds/003_1ddf0ef0bfe7a1c4.txt" www/series/7/mbox/index.html &&
	PORT=$(start_http "$SCRATCH/www") &&
	echo "$PORT" >port &&
	printf "{\"id\": 7, \"name\": \"optimise UDP\", \"version\": 1, \"mbox\": \"http://127.0.0.1:%s/series/7/mbox\"}\n" \
		"$PORT" >www/api/series/7/index.html
'

test_expect_success 'lore: the thread mbox is fetched, gunzipped and parsed' '
	"$KLAB" series show "lore:<v2-0@example.org>" --lore-url "http://127.0.0.1:$(cat port)/all" >out &&
	test_grep "^series: foo: make it faster$" out &&
	test_grep "^url: http://127.0.0.1:$(cat port)/all/v2-0@example.org/t.mbox.gz$" out &&
	test_grep "^patches: 2 of 2$" out &&
	test_grep "^version: 2$" out
'

test_expect_success 'lore: the base URL from KLAB_LORE_URL, a bare Message-ID' '
	KLAB_LORE_URL="http://127.0.0.1:$(cat port)/all/" "$KLAB" series show "v2-0@example.org" >out &&
	test_grep "^series: foo: make it faster$" out
'

test_expect_success 'lore: an unknown Message-ID is HTTP 404, named in the error' '
	test_expect_code 1 "$KLAB" series show "lore:nope@example.org" --lore-url "http://127.0.0.1:$(cat port)/all" 2>err &&
	test_grep "cannot fetch .http://127.0.0.1:$(cat port)/all/nope@example.org/t.mbox.gz.: HTTP 404 Not Found" err
'

test_expect_success 'patchwork: API JSON, then its mbox URL (through a redirect)' '
	KLAB_PATCHWORK_URL="http://127.0.0.1:$(cat port)" "$KLAB" series show patchwork:7 >out &&
	test_grep "^series: optimise UDP skb completion wakeups$" out &&
	test_grep "^url: http://127.0.0.1:$(cat port)/series/7/mbox$" out &&
	test_grep "^patches: 2 of 2$" out &&
	grep "GET /series/7/mbox HTTP/1.1\" 301" "$SCRATCH"/http-*.log
'

test_expect_success 'patchwork: import stores it with its URL' '
	"$KLAB" series import patchwork:7 --patchwork-url "http://127.0.0.1:$(cat port)" >id &&
	test "$(sqlite3 "$KLAB_DB" "SELECT source || \" \" || source_url FROM series WHERE id = $(cat id)")" = \
		"patchwork:7 http://127.0.0.1:$(cat port)/series/7/mbox"
'

test_expect_success 'patchwork: unknown series, bad JSON, bad id' '
	test_expect_code 1 "$KLAB" series show patchwork:8 --patchwork-url "http://127.0.0.1:$(cat port)" 2>err &&
	test_grep "cannot fetch .http://127.0.0.1:$(cat port)/api/series/8/.: HTTP 404 Not Found" err &&
	mkdir -p www/api/series/9 && echo "{not json" >www/api/series/9/index.html &&
	test_expect_code 1 "$KLAB" series show patchwork:9 --patchwork-url "http://127.0.0.1:$(cat port)" 2>err &&
	test_grep "api/series/9/: malformed JSON" err &&
	test_expect_code 1 "$KLAB" series show patchwork:x1 2>err &&
	test_grep "invalid patchwork series id .x1." err
'

test_expect_success 'a server that never answers: timed out, named' '
	port=$(test_free_port) && echo "$port" >mute.port &&
	{ python3 -c "
import socket,time,sys
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((\"127.0.0.1\", $port)); s.listen(5)
open(\"$SCRATCH/mute.ready\",\"w\").write(\"ready\\n\")
c=s.accept(); time.sleep(20)
" & } &&
	echo $! >"$SCRATCH/mute.pid" &&
	wait_ready "$SCRATCH/mute.ready" 5 $(cat "$SCRATCH/mute.pid") &&
	start=$(date +%s) &&
	test_expect_code 1 "$KLAB" series show "lore:x@y" --lore-url "http://127.0.0.1:$port" --timeout 2s 2>err &&
	test_grep "cannot fetch .http://127.0.0.1:$port/x@y/t.mbox.gz.: timed out after 2 s" err &&
	test $(( $(date +%s) - start )) -le 10
'

test_expect_success 'nothing listening: the connection error is named' '
	port=$(test_free_port) &&
	test_expect_code 1 "$KLAB" series show "lore:x@y" --lore-url "http://127.0.0.1:$port" 2>err &&
	test_grep "cannot fetch .http://127.0.0.1:$port/x@y/t.mbox.gz.: .*onnect" err
'

test_done
