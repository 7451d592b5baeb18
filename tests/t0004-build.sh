#!/bin/bash
test_description='build: the copied programs link json-c statically; install puts everything in place'
. "$(dirname "$0")/lib.sh"

test_expect_success 'klab-agent and the generators do not need libjson-c or liburing at run time' '
	for p in "$KLAB_AGENT" "$KLAB_UDP_RR" "$KLAB_UDP_TX"; do
		test -x "$p" &&
		ldd "$p" >ldd.out &&
		test_grep -v "libjson-c" ldd.out &&
		test_grep -v "liburing" ldd.out || return 1
	done
'

test_expect_success 'klab links json-c dynamically (it stays on the klab host)' '
	ldd "$KLAB" >ldd.out && test_grep "libjson-c" ldd.out && test_grep "libsqlite3" ldd.out
'

test_expect_success 'make install with DESTDIR installs programs, schema, pages and the unit' '
	make -C "$SRCDIR" --no-print-directory install DESTDIR="$SCRATCH/root" PREFIX=/usr >install.log 2>&1 ||
		{ cat install.log; false; } &&
	test -x root/usr/bin/klab && test -x root/usr/bin/klabd &&
	test -x root/usr/libexec/klab/klab-agent &&
	test -f root/usr/share/klab/db/schema.sql &&
	test -f root/usr/share/klab/db/migrations/0001_init.sql &&
	test -f root/usr/share/klab/config.example &&
	test -f root/usr/lib/systemd/system/klabd.service &&
	test_grep "/usr/bin/klabd" root/usr/lib/systemd/system/klabd.service
'
test_done
