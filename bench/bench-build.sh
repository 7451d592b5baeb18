#!/bin/bash
# bench-build.sh: the clean kernel build time against the patched build right after it, same run.
#
#   bash bench/bench-build.sh            # clean = empty build folder and an empty ccache
#   BENCH_CCACHE=warm bash bench/bench-build.sh   # clean = empty build folder, the shared ccache
#
# Tree: the built-in linux-source-6.1 (tinyconfig + kernels/configs/qemu.config).
# The bench has its own kernel cache root ($BENCH_ROOT, default
# /var/tmp/klab-bench) whose source repository is a `git clone --shared` of
# the main one (or a fresh import of the tarball), so the main build folder
# is not touched. Patch: tests/data/series/somaxconn.patch (one line in
# net/core/net_namespace.c). Target: patched <= 15% of clean.
# Prints one line per build and the ratio. Builds run at nice 19.
set -eu
SRCDIR=$(cd "$(dirname "$0")/.." && pwd)
KLAB=${KLAB:-$SRCDIR/build/rel/bin/klab}
ROOT=${BENCH_ROOT:-/var/tmp/klab-bench}
MAIN=${KLAB_KERNEL_CACHE:-/var/cache/klab}
MODE=${BENCH_CCACHE:-cold}

[ -x "$KLAB" ] || { echo "bench-build: no $KLAB (make first, or set KLAB)" >&2; exit 1; }
rm -rf "$ROOT/obj" "$ROOT/artifacts" "$ROOT/bench.db"*
mkdir -p "$ROOT/src"
if [ ! -d "$ROOT/src/linux-source-6.1/.git" ] && [ -d "$MAIN/src/linux-source-6.1/.git" ]; then
	git clone -q --shared "$MAIN/src/linux-source-6.1" "$ROOT/src/linux-source-6.1"
fi
export KLAB_KERNEL_CACHE=$ROOT KLAB_DB=$ROOT/bench.db
unset KLAB_CONFIG
if [ "$MODE" = cold ]; then
	export CCACHE_DIR=$ROOT/ccache
	rm -rf "$CCACHE_DIR"
else
	export CCACHE_DIR=${CCACHE_DIR:-$MAIN/ccache}
fi

secs() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['duration_s'])" "$1"; }

echo "bench-build: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), ccache $MODE ($CCACHE_DIR)"
t0=$(date +%s.%N)
"$KLAB" kernels build --json >"$ROOT/base.json"
t1=$(date +%s.%N)
"$KLAB" kernels build --series "$SRCDIR/tests/data/series/somaxconn.patch" --json >"$ROOT/patched.json"
t2=$(date +%s.%N)
clean=$(secs "$ROOT/base.json") patched=$(secs "$ROOT/patched.json")
python3 - "$clean" "$patched" "$t0" "$t1" "$t2" <<'PY'
import sys
clean, patched, t0, t1, t2 = map(float, sys.argv[1:])
print(f"clean build:   make {clean:7.1f} s, whole command {t1 - t0:7.1f} s")
print(f"patched build: make {patched:7.1f} s, whole command {t2 - t1:7.1f} s")
print(f"patched / clean: make {100 * patched / clean:.1f} %, whole command {100 * (t2 - t1) / (t1 - t0):.1f} % (target <= 15 %)")
PY
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
