#!/bin/bash
test_description='make fuzz builds every libFuzzer target; each runs clean over its corpus in the repo and for a fixed budget'
. "$(dirname "$0")/lib.sh"

# Every tests/fuzz/NAME.c is a target; tests/fuzz/corpus/NAME/ is its corpus:
# seeds (the test fixtures) and every input that once crashed it (crash-*,
# leak-*, timeout-*), kept as regressions. Each target first runs every
# corpus file, then mutates for KLAB_FUZZ_SECONDS (default 8) seconds, at
# most KLAB_FUZZ_RUNS (default 2000000) runs; a crash, a leak, a UBSan
# report or a timeout (10 s on one input) fails the test and leaves the
# input in the scratch folder. New inputs go to the scratch folder, not the
# repo (docs/fuzzing.md says how to merge them in).
FUZZ=$SRCDIR/build/fuzz
CORPUS=$SRCDIR/tests/fuzz/corpus
SECS=${KLAB_FUZZ_SECONDS:-8}
RUNS=${KLAB_FUZZ_RUNS:-2000000}

command -v clang >/dev/null || test_skip_all 'clang is not installed (make deps)'
ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 ||
	test_skip_all 'the libFuzzer runtime is not installed (libclang-rt-14-dev, make deps)'

targets=$(cd "$SRCDIR/tests/fuzz" && ls ./*.c | sed 's|^\./||; s|\.c$||')

test_expect_success 'make fuzz builds every target; each has a corpus in the repo' '
	make -C "$SRCDIR" --no-print-directory fuzz >build.log 2>&1 || { cat build.log; false; } &&
	for n in $targets; do
		test -x "$FUZZ/$n" || { echo "no $FUZZ/$n"; exit 1; }
		test -n "$(ls "$CORPUS/$n")" || { echo "no corpus in $CORPUS/$n"; exit 1; }
	done
'

for n in $targets; do
	test_expect_success "$n: every corpus input, then ${SECS} s of fuzzing: no crash, leak or timeout" '
		mkdir -p "new-$n" &&
		ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
			nice "$FUZZ/$n" -max_total_time="$SECS" -runs="$RUNS" -timeout=10 -rss_limit_mb=2048 \
			-print_final_stats=1 -artifact_prefix="$SCRATCH/$n-" "new-$n" "$CORPUS/$n" >"$n.log" 2>&1 ||
			{ tail -n 40 "$n.log"; ls "$SCRATCH/$n-"* 2>/dev/null; false; } &&
		grep -q "^Done [0-9]* runs in [0-9]* second" "$n.log" &&
		echo "$n: $(sed -n "s/^stat::number_of_executed_units: *//p" "$n.log") runs," \
			"$(grep -o "cov: [0-9]*" "$n.log" | tail -n 1)," \
			"$(ls "$CORPUS/$n" | wc -l) corpus files" >>summary
	'
done
[ -f summary ] && sed "s/^/# /" summary

test_done
