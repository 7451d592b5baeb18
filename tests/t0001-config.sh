#!/bin/bash
test_description='configuration: config.example is valid, every broken config fails with FILE:LINE: message'
. "$(dirname "$0")/lib.sh"

test_expect_success 'config.example passes the check' '
	"$KLAB" config check "$SRCDIR/config.example" >out 2>err &&
	test_grep "ok (2 machines, 2 trees, 2 profiles" out &&
	test_must_fail test -s err
'

test_expect_success 'klabd -n checks a config too' '
	"$KLABD" -n "$SRCDIR/config.example" >out &&
	test_grep "configuration ok" out
'

test_expect_success 'config show prints it back normalised and the print-back is stable' '
	"$KLAB" config show "$SRCDIR/config.example" >show1 &&
	test_grep "^\[machine \"dut1\"\]" show1 &&
	test_grep "boot = kexec" show1 &&
	test_grep "sysctl.net.core.busy_poll = 0" show1 &&
	cp show1 again.conf &&
	"$KLAB" config show again.conf >show2 &&
	test_cmp show1 show2
'

test_expect_success 'the bad-configs corpus has at least 15 files' '
	test $(ls "$SRCDIR"/tests/data/bad-configs/*.conf | wc -l) -ge 15
'

for f in "$SRCDIR"/tests/data/bad-configs/*.conf; do
	name=$(basename "$f")
	test_expect_success "broken config $name fails with its FILE:LINE: message" '
		expect=$(sed -n "1s/^# expect: //p" "$f") &&
		line=${expect%%:*} &&
		msg=${expect#*: } &&
		test_expect_code 1 "$KLAB" config check "$f" >out 2>err &&
		grep -F -- "$f:$line: $msg" err ||
		{ echo "wanted: $f:$line: $msg"; cat err; false; }
	'
done

test_expect_success 'all errors of a file are reported in one pass' '
	cat >many.conf <<-\CONF &&
	[machine "a"]
		role = dut
		port = 0
	[workload "w"]
		type = nope
	[bogus]
	CONF
	test_expect_code 1 "$KLAB" config check many.conf 2>err &&
	test_grep "many.conf:1: \[machine \"a\"\]: missing required key .host." err &&
	test_grep "many.conf:3: .*port" err &&
	test_grep "many.conf:5: .*type" err &&
	test_grep "many.conf:6: unknown section" err &&
	test_grep "4 errors in the configuration" err
'

test_expect_success 'a missing config file is a clear error' '
	test_expect_code 1 "$KLAB" config check nope.conf 2>err &&
	test_grep "cannot read configuration .nope.conf." err
'

test_expect_success 'includes are read relative to the including file' '
	mkdir -p sub &&
	printf "[workload \"w\"]\n\ttype = udp_rr\n\tflows = 4\n" >sub/w.conf &&
	printf "[include]\n\tpath = sub/w.conf\n[lab]\n\tdb = x.db\n" >main.conf &&
	"$KLAB" config show main.conf >out &&
	test_grep "flows = 4" out &&
	test_grep "db = $PWD/x.db" out
'
test_done
