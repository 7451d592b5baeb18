#!/bin/bash
test_description='the layers of docs/architecture.md hold in the objects under test: commands over the library over lib/, no two files calling each other both ways'
. "$(dirname "$0")/lib.sh"

test_expect_success 'no dependency rule is broken in the build under test' '
	python3 "$KLAB_TEST_DATA/layers/layers.py" "$KLAB_BUILD/obj" >broken 2>summary &&
	test_grep "calls between files checked" summary &&
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

test_expect_success 'no source file of orchestrator/ is over 1500 lines (issue 14)' '
	for f in "$SRCDIR"/orchestrator/*.c "$SRCDIR"/orchestrator/*/*.c; do
		n=$(wc -l <"$f") && { test "$n" -le 1500 || echo "$f: $n lines"; }
	done >long &&
	{ test ! -s long || { cat long; false; }; }
'

test_done
