#!/bin/bash
# bench/bench-store.sh: what storing a run costs with the per-kernel samples (migration 0016).
#
#   bash bench/bench-store.sh [BOOTS]     (default 1024: one sample chunk full; KLAB_BUILD=build/rel)
#
# Builds bench/store-cost.c against the release objects and stores BOOTS boots
# (jobs of 5 boots, one side; a warm-up and a measured run each, the agent fixture's ~60
# metrics, CPUs and profile) into a new sqlite database twice: "kernel" (the
# boots are of kernel 1, so every store also rewrites the sample rows of the
# boot's chunk, the worst case: one kernel holds every key of it) and "label"
# (the same boots without a kernel id: per-boot summaries only, the peer).
# Prints the store time p50/p99/mean of the first and last tenth of the boots
# and each database's size, and the load average. Nothing is asserted
# (orch-ksample checks the rows).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${KLAB_BUILD:-$here/build/rel}
boots=${1:-1024}
[ -f "$build/obj/gen/migrations.o" ] || { echo "bench-store.sh: no objects in $build: make first" >&2; exit 1; }
w=$(mktemp -d /var/tmp/klab-bench-store.XXXXXX)
trap 'rm -rf "$w"' EXIT
objs=$(ls "$build"/obj/orchestrator/*/*.o "$build"/obj/gen/migrations.o "$build"/obj/lib/*.o |
	grep -v -e '/cmd/' -e '/lib/sha256\.o$')
# shellcheck disable=SC2086
cc -O2 -g -std=gnu11 -D_GNU_SOURCE -DKLAB_SRCDIR="\"$here\"" -iquote "$here/lib" -iquote "$here/orchestrator" \
	-o "$w/store-cost" "$here/bench/store-cost.c" $objs -lsqlite3 -lpq -lcurl -lssh2 -lcrypto -ljson-c -lz -lpthread -lm
echo "store-cost: $boots boots in jobs of 5, 2 runs each; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for mode in label kernel label kernel; do
	rm -f "$w/s.db" "$w/s.db-wal" "$w/s.db-shm"
	"$w/store-cost" "$w/s.db" "$boots" "$mode"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
