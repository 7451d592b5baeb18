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

test_expect_success 'no source file of orchestrator/ is over 1500 lines (issue 14)' '
	for f in "$SRCDIR"/orchestrator/*.c "$SRCDIR"/orchestrator/*/*.c; do
		n=$(wc -l <"$f") && { test "$n" -le 1500 || echo "$f: $n lines"; }
	done >long &&
	{ test ! -s long || { cat long; false; }; }
'

test_done
