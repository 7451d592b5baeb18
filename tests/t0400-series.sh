#!/bin/bash
test_description='patch intake: klab series show/import/list on the seed mails and the malformed corpus'
. "$(dirname "$0")/lib.sh"

D=$SRCDIR/tests/data/series
S=$D/seeds
export KLAB_DB=$SCRATCH/klab.db

test_expect_success 'seed 000 (commit message + diff) with --subject' '
	"$KLAB" series show "$S/000_951f765891bfd14f.txt" --subject "net: control skb->ooo_okay from skb_set_owner_w()" >out &&
	test_grep "^series: net: control skb->ooo_okay from skb_set_owner_w()$" out &&
	test_grep "^patches: 1 of 1$" out &&
	test_grep "^   net/core/sock.c | 12 +++++++++++-$" out &&
	test_grep "^  patch 1: cpu_us_per_op lower by 10.00%..20.00%$" out &&
	test_grep "^  patch 1: udp_rr_500 (type udp_rr): flows=500 request_size=100 response_size=100 duration=1000$" out
'

test_expect_success 'seed 000 --json is valid JSON with the expectation and the proposal' '
	"$KLAB" series show "$S/000_951f765891bfd14f.txt" --json >out.json &&
	python3 -c "
import json,sys
d=json.load(open(\"out.json\"))
assert d[\"total\"]==1 and len(d[\"patches\"])==1, d
e=d[\"expectations\"][0]
assert (e[\"metric\"],e[\"direction\"],e[\"lo_pct\"],e[\"hi_pct\"])==(\"cpu_us_per_op\",\"lower\",10,20), e
p=d[\"proposals\"][0]
assert p[\"params\"]=={\"flows\":\"500\",\"request_size\":\"100\",\"response_size\":\"100\",\"duration\":\"1000\"}, p
assert d[\"patches\"][0][\"insertions\"]==11 and d[\"patches\"][0][\"deletions\"]==1
"
'

test_expect_success 'seed 001 alone: a reply without a diff is reported with its trailer' '
	test_expect_code 1 "$KLAB" series show "$S/001_d9fa56d5ad71ed87.txt" >out 2>err &&
	test_grep "no patch: 1 reply without a diff" err &&
	test_grep "Reviewed-by: Neal Cardwell <ncardwell@google.com>" err &&
	test_grep "net: control skb->ooo_okay from skb_set_owner_w()" err
'

test_expect_success 'seeds 000 + 001 read as one thread: patch 2/4 with the review' '
	"$KLAB" series show "$S/000_951f765891bfd14f.txt" "$S/001_d9fa56d5ad71ed87.txt" \
		--subject "[PATCH RFC net-next 2/4] net: control skb->ooo_okay from skb_set_owner_w()" >out &&
	test_grep "^patch 2/4: net: control skb->ooo_okay" out &&
	test_grep "^    Reviewed-by: Neal Cardwell <ncardwell@google.com>" out &&
	test_grep "incomplete series: patches 1/4, 3/4, 4/4 not in the input" out
'

test_expect_success 'seed 003: cover letter and two patches, claims of cover and patch 2' '
	"$KLAB" series show "$S/003_1ddf0ef0bfe7a1c4.txt" >out &&
	test_grep "^series: optimise UDP skb completion wakeups$" out &&
	test_grep "^source: .* (thread text)$" out &&
	test_grep "^patches: 2 of 2$" out &&
	test_grep "^patch 1/2: udp: introduce udp specific skb destructor$" out &&
	test_grep "^patch 2/2: udp: optimise write wakeups with SOCK_NOSPACE$" out &&
	test_grep "^   6 files changed, 60 insertions(+), 8 deletions(-)$" out &&
	test_grep "^  cover 0: throughput higher by 5.00%$" out &&
	test_grep "^  patch 2: tx_pps higher by 4.94% (2268 -> 2380 Krps)$" out
'

test_expect_success 'seed 004: patch 2/3 alone, 80 -> 120 Mpps' '
	"$KLAB" series show "$S/004_94b9a7569baa50d4.txt" >out &&
	test_grep "^patch 2/3: net: fix napi_consume_skb() with alien skbs$" out &&
	test_grep "^  patch 2: tx_pps higher by 50.00% (80 -> 120 Mpps)$" out &&
	test_grep "incomplete series: patches 1/3, 3/3 not in the input" out
'

test_expect_success 'an mbox with two versions, encodings and replies' '
	"$KLAB" series show "mbox:$D/thread-v2.mbox" >out &&
	test_grep "^version: 2$" out &&
	test_grep "^patch 1/2: foo: first äöü$" out &&
	test_grep "^  author: Jörg Müller <jm@example.org>$" out &&
	test_grep "^    Reviewed-by: Rita Reviewer <rita@example.org> (in a reply from Rita Reviewer <rita@example.org>)$" out &&
	test_grep "dropped .\[PATCH net-next 1/2\] foo: first. (line 1): version 1, the newest is v2" out &&
	test_grep "answers no patch of this input" out
'

test_expect_success 'malformed corpus: each fails with a message naming the file' '
	test_expect_code 1 "$KLAB" series show "$D/truncated.mbox" 2>err &&
	test_grep "truncated.mbox.:17: .\[PATCH net-next 1/2\] foo: first. (line 1): lib/foo.c: hunk 1 (@@ -10,3 +10,3 @@ int f(void)) is truncated: 1 old and 2 new lines missing$" err &&
	test_expect_code 1 "$KLAB" series show "$D/nodiff.mbox" 2>err &&
	test_grep "nodiff.mbox.: no diff found in the message" err &&
	test_expect_code 1 "$KLAB" series show "$D/bad-base64.mbox" 2>err &&
	test_grep "bad-base64.mbox.:8: malformed base64 body (message at line 1)" err &&
	test_expect_code 1 "$KLAB" series show "$D/empty.mbox" 2>err &&
	test_grep "empty input: no message found" err &&
	test_expect_code 1 "$KLAB" series show "$SCRATCH/nope.mbox" 2>err &&
	test_grep "nope.mbox" err
'

test_expect_success 'usage errors exit 2' '
	test_expect_code 2 "$KLAB" series show &&
	test_expect_code 2 "$KLAB" series show x --bogus &&
	test_expect_code 2 "$KLAB" series frob x
'

test_expect_success 'import stores series, patches, expectations, proposals; again gives the same id' '
	"$KLAB" series import "$S/003_1ddf0ef0bfe7a1c4.txt" >id1 2>err1 &&
	test_grep "stored: optimise UDP skb completion wakeups (2 patches, 2 expectations, 0 proposals)" err1 &&
	"$KLAB" series import "$S/003_1ddf0ef0bfe7a1c4.txt" >id2 2>err2 &&
	test_grep "already stored" err2 &&
	test_cmp id1 id2 &&
	test "$(sqlite3 "$KLAB_DB" "SELECT COUNT(*) FROM series")" = 1 &&
	test "$(sqlite3 "$KLAB_DB" "SELECT COUNT(*) FROM patches WHERE series_id = $(cat id1)")" = 2 &&
	test "$(sqlite3 "$KLAB_DB" "SELECT metric || \" \" || direction || \" \" || round(lo_pct, 2) FROM expectations WHERE patch_seq = 2")" = "tx_pps higher 4.94" &&
	"$KLAB" series import "$S/000_951f765891bfd14f.txt" --subject "net: x" >id3 2>/dev/null &&
	test "$(sqlite3 "$KLAB_DB" "SELECT type || \" \" || params FROM proposals WHERE series_id = $(cat id3)")" = \
		"udp_rr {\"flows\":\"500\",\"request_size\":\"100\",\"response_size\":\"100\",\"duration\":\"1000\"}"
'

test_expect_success 'list and show --id read the database back' '
	"$KLAB" series list >out &&
	test_grep "v1 *2/2 *2 *optimise UDP skb completion wakeups" out &&
	"$KLAB" series list --json | python3 -c "import json,sys; d=json.load(sys.stdin); assert len(d)==2, d" &&
	"$KLAB" series show --id "$(cat id1)" >out &&
	test_grep "^series $(cat id1): optimise UDP skb completion wakeups$" out &&
	test_grep "^patch 2/2: udp: optimise write wakeups with SOCK_NOSPACE$" out
'

test_expect_success 'git format-patch output of every kind of diff: renames, copies, modes, empty, deleted, binary' '
	P=$SRCDIR/tests/data/patches &&
	cat "$P"/00*.patch >all.mbox &&
	"$KLAB" series show all.mbox >out 2>err &&
	test_grep "^patches: 12 of 12$" out &&
	"$KLAB" series show all.mbox --json >j &&
	python3 -c "import json,sys; d=json.load(open(\"j\")); print(\"\\n\".join(p[\"diffstat\"] for p in d[\"patches\"]))" >stats &&
	test_grep "^ rename docs/{old.txt => new.txt} (100%)$" stats &&
	test_grep "^ copy src/{util.h => util3.h} (100%)$" stats &&
	test_grep "^ mode change 100644 => 100755 run.sh$" stats &&
	test_grep "^ create mode 100644 src/empty.c$" stats &&
	test_grep "^ delete mode 100644 gone.txt$" stats &&
	test_grep "^ big.bin | Bin 4096 -> 4096 bytes$" stats &&
	"$KLAB" --db "$SCRATCH/p.db" series import all.mbox >id &&
	test "$("$KLAB" --db "$SCRATCH/p.db" series import all.mbox)" = "$(cat id)"
'

test_done
