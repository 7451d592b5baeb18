#!/bin/bash
test_description='the layers of docs/architecture.md hold in the objects under test: commands over the library over lib/, the folders in the order of the map, no circle of calls between files of any length'
. "$(dirname "$0")/lib.sh"

test_expect_success 'no dependency rule is broken in the build under test' '
	python3 "$KLAB_TEST_DATA/layers/layers.py" --summary "$KLAB_BUILD/obj" >broken 2>summary &&
	test_grep "calls between files checked" summary &&
	test_grep "layers: 0 circles between files (none), 0 arrows up the map between folders, 0 circles between folders" summary &&
	{ test ! -s broken || { cat broken; false; }; }
'

test_expect_success 'the check finds a call both ways (it can fail)' '
	mkdir -p fake/obj/orchestrator &&
	printf "int a(void);\nint b(void) { return a(); }\n" >x.c &&
	printf "int b(void);\nint a(void) { return b(); }\n" >y.c &&
	cc -c -o fake/obj/orchestrator/x.o x.c && cc -c -o fake/obj/orchestrator/y.o y.c &&
	test_must_fail python3 "$KLAB_TEST_DATA/layers/layers.py" fake/obj >broken 2>/dev/null &&
	test_grep "orchestrator/x and orchestrator/y call each other" broken
'

test_expect_success 'the check finds a file that reads the log back, lib/log.c aside (it can fail)' '
	mkdir -p fakel/obj/lib fakel/obj/orchestrator/kbuild &&
	printf "## The map\n\n\140\140\140\n kbuild/  the builds\n\140\140\140\n" >mapl.md &&
	printf "const char *log_last_error(void) { return \"\"; }\nint own(void) { return *log_last_error(); }\n" >log.c &&
	printf "const char *log_last_error(void);\nint step(void) { return *log_last_error(); }\n" >ctx.c &&
	printf "int step(void) { return 0; }\n" >ctx2.c &&
	cc -c -o fakel/obj/lib/log.o log.c && cc -c -o fakel/obj/orchestrator/kbuild/build.o ctx.c &&
	test_must_fail python3 "$KLAB_TEST_DATA/layers/layers.py" --map mapl.md fakel/obj >broken 2>/dev/null &&
	test_grep "^orchestrator/kbuild/build reads the log back with log_last_error()" broken &&
	test_grep -v "^lib/log " broken &&
	# step_fail() of the job runner read it until issue 33 item 6: no longer allowed
	mkdir -p fakel/obj/orchestrator/job && printf "## The map\n\n\140\140\140\n job/     the jobs\n kbuild/  the builds\n\140\140\140\n" >mapl.md &&
	cc -c -o fakel/obj/orchestrator/job/job_ctx.o ctx.c &&
	test_must_fail python3 "$KLAB_TEST_DATA/layers/layers.py" --map mapl.md fakel/obj >broken 2>/dev/null &&
	test_grep "^orchestrator/job/job_ctx reads the log back with log_last_error()" broken &&
	rm fakel/obj/orchestrator/job/job_ctx.o &&
	cc -c -o fakel/obj/orchestrator/kbuild/build.o ctx2.c &&
	python3 "$KLAB_TEST_DATA/layers/layers.py" --map mapl.md fakel/obj >broken 2>/dev/null &&
	{ test ! -s broken || { cat broken; false; }; }
'

test_expect_success 'SQL on a table is only in the files that own it (docs/database.md)' '
	python3 "$SRCDIR/tests/data/layers/tables.py" "$SRCDIR" >broken 2>summary &&
	test_grep "files with SQL on them" summary &&
	{ test ! -s broken || { cat broken; false; }; }
'

test_expect_success 'the owner check finds SQL on runs outside store/ (it can fail)' '
	mkdir -p own/db own/docs own/orchestrator/cmd own/orchestrator/store &&
	cp "$SRCDIR/db/schema.sql" own/db/ && cp "$SRCDIR/docs/database.md" own/docs/ &&
	printf "int f(void);\nconst char *q = \"SELECT id, uid\"\n\t\" FROM \"\n\t\"runs WHERE id = ?\";\n" \
		>own/orchestrator/cmd/fake.c &&
	printf "const char *w = \"UPDATE runs SET status = ?\";\n" >own/orchestrator/store/kernels.c &&
	printf "const char *r = \"SELECT k.id FROM kernels k, runs r WHERE r.kernel_id = k.id\";\n" \
		>>own/orchestrator/store/kernels.c &&
	test_must_fail python3 "$SRCDIR/tests/data/layers/tables.py" own >broken 2>/dev/null &&
	test_grep "orchestrator/cmd/fake.c:4: SQL on .runs. outside its owners" broken &&
	test_grep "orchestrator/store/kernels.c:1: SQL on .runs." broken &&
	test_grep -v "orchestrator/store/kernels.c:2:" broken
'

test_expect_success 'the check finds a circle of three files, with one call per arrow' '
	mkdir -p fake3/obj/orchestrator &&
	printf "int c(void);\nint a(void) { return c(); }\n" >x.c &&
	printf "int a(void);\nint b(void) { return a(); }\n" >y.c &&
	printf "int b(void);\nint c(void) { return b(); }\n" >z.c &&
	for f in x y z; do cc -c -o fake3/obj/orchestrator/$f.o $f.c || exit 1; done &&
	test_must_fail python3 "$KLAB_TEST_DATA/layers/layers.py" --summary fake3/obj >broken 2>summary &&
	test_grep "a circle of 3 files: orchestrator/x orchestrator/y orchestrator/z" broken &&
	test_grep "  orchestrator/x -> orchestrator/z (c)" broken &&
	test_grep "  orchestrator/y -> orchestrator/x (a)" broken &&
	test_grep "  orchestrator/z -> orchestrator/y (b)" broken &&
	test_grep "layers: 1 circles between files" summary
'

test_expect_success 'the check finds a folder calling one above it in the map, and a circle of folders' '
	mkdir -p fakef/obj/orchestrator/up fakef/obj/orchestrator/down &&
	printf "## The map\n\n\140\140\140\n up/    the top\n down/  below it\n\140\140\140\n" >map.md &&
	printf "int p1(void) { return 1; }\n" >p1.c &&
	printf "int q2(void);\nint p2(void) { return q2(); }\n" >p2.c &&
	printf "int p1(void);\nint q1(void) { return p1(); }\n" >q1.c &&
	printf "int q2(void) { return 2; }\n" >q2.c &&
	cc -c -o fakef/obj/orchestrator/up/p1.o p1.c && cc -c -o fakef/obj/orchestrator/up/p2.o p2.c &&
	cc -c -o fakef/obj/orchestrator/down/q1.o q1.c && cc -c -o fakef/obj/orchestrator/down/q2.o q2.c &&
	test_must_fail python3 "$KLAB_TEST_DATA/layers/layers.py" --summary --map map.md fakef/obj >broken 2>summary &&
	test_grep "orchestrator/down/ calls orchestrator/up/, which is above it in the map" broken &&
	test_grep "  orchestrator/down/q1 -> orchestrator/up/p1 (p1)" broken &&
	test_grep "a circle between folders: orchestrator/down/ orchestrator/up/" broken &&
	! grep "circle of" broken &&
	test_grep "0 circles between files (none), 1 arrows up the map between folders, 1 circles between folders" summary
'

test_expect_success 'no source file of orchestrator/ is over 1500 lines (issue 14)' '
	for f in "$SRCDIR"/orchestrator/*.c "$SRCDIR"/orchestrator/*/*.c; do
		n=$(wc -l <"$f") && { test "$n" -le 1500 || echo "$f: $n lines"; }
	done >long &&
	{ test ! -s long || { cat long; false; }; }
'

test_done
