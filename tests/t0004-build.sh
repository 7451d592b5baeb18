#!/bin/bash
test_description='build: the copied programs link json-c statically; install puts the programs under test in place'
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

# make check builds once, into $KLAB_BUILD; the install rule is tested on those
# programs without a second build: a tree of links to the sources in which the
# in-tree program paths (orchestrator/klab, agents/klab-agent, workloads/klab-NAME)
# point at the programs under test, and `make -o all install` there, so that make
# runs the real install recipe and builds nothing.
PROGS="orchestrator/klab orchestrator/klabd agents/klab-agent"
for f in "$SRCDIR"/workloads/bin-*.c; do n=${f##*/bin-}; PROGS="$PROGS workloads/klab-${n%.c}"; done

link_tree() {	# link_tree DIR: the source tree as links, the programs from $BIN
	local e f p
	mkdir -p "$1" || return 1
	for e in "$SRCDIR"/*; do
		case ${e##*/} in
		build) ;;
		orchestrator|agents|workloads)
			mkdir "$1/${e##*/}" || return 1
			for f in "$e"/*; do ln -s "$f" "$1/${e##*/}/" || return 1; done ;;
		*) ln -s "$e" "$1/" || return 1 ;;
		esac
	done
	for p in $PROGS; do ln -sfn "$BIN/${p##*/}" "$1/$p" || return 1; done
}

test_expect_success 'make install with DESTDIR installs the programs under test, schema, pages and the unit' '
	link_tree tree &&
	make -C tree --no-print-directory -o all install DESTDIR="$SCRATCH/root" PREFIX=/usr >install.log 2>&1 ||
		{ cat install.log; false; } &&
	# nothing was compiled or linked: make check builds once
	test_grep -v " -c -o \| -o build/" install.log &&
	for p in $PROGS; do
		case $p in orchestrator/*) d=bin ;; *) d=libexec/klab ;; esac &&
		test -x root/usr/$d/${p##*/} && cmp root/usr/$d/${p##*/} "$BIN/${p##*/}" || return 1
	done &&
	root/usr/bin/klab --version >v && test_grep "^klab [0-9]" v &&
	test -f root/usr/share/klab/db/schema.sql &&
	test -f root/usr/share/klab/db/migrations/0001_init.sql &&
	test -f root/usr/share/klab/config.example &&
	test -f root/usr/share/klab/web-static/$(ls "$SRCDIR/web-static" | head -n 1) &&
	test -f root/usr/lib/systemd/system/klabd.service &&
	test_grep "/usr/bin/klabd" root/usr/lib/systemd/system/klabd.service &&
	test_grep -v "@PREFIX@" root/usr/lib/systemd/system/klabd.service
'
test_done
