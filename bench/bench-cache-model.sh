#!/bin/bash
# bench-cache-model.sh: what klab's cache model costs (docs/cache-model.md): host
# seconds per guest second of the same guest work, with and without the plugin.
#
#   bash bench/bench-cache-model.sh [SECONDS]     (root; KLAB_BUILD=build/rel by default)
#
# Boots the qemu lab twice (--clock icount --smp 1, peer in the dut's namespace), once
# plain and once with --cache-model, and in each runs in the dut
#   klab-udp-tx send to dummy0 (the kernel's UDP transmit path, io_uring, 64 B,
#   batch 32) for SECONDS (default 1) of guest time, and cm-walk 2048 KiB x 400 passes
#   (a user-space loop that misses L2 on every load)
# timing each on the host (wall clock around ssh, less the median of 3 ssh `true`)
# and in the guest (its icount clock). Prints host s / guest s for each work and side,
# the ratio with/without, and the host load. Nothing is asserted: figures only.
set -u
SRCDIR=$(cd "$(dirname "$0")/.." && pwd)
KLAB_BUILD=${KLAB_BUILD:-$SRCDIR/build/rel}
KLAB=$KLAB_BUILD/bin/klab
SECS=${1:-1}
[ "$(id -u)" = 0 ] || { echo "bench-cache-model: needs root (qemu lab)" >&2; exit 1; }
[ -x "$KLAB" ] && [ -f "$KLAB_BUILD/lib/klab-cache.so" ] || { echo "bench-cache-model: build first (make)" >&2; exit 1; }

W=$(mktemp -d /var/tmp/klab-bench-cm.XXXXXX) && chmod 755 "$W"	# the sandboxed kernel build writes under it
L=$W/lab
# a lab index nobody uses, held by a lock as tests/lib.sh's test_qemu_lab_index does
for ((K = 49; K >= 1; K--)); do
	exec {fd}>>"/run/lock/klab-qemu-lab-$K.test" || continue
	if flock -n "$fd" && ! pgrep -f -- "-name klab-$K-(dut|peer)( |\$)" >/dev/null &&
	   ! [ -e "/sys/class/net/klqbr$K" ]; then
		break
	fi
	exec {fd}>&-
done
[ "$K" -ge 1 ] || { echo "bench-cache-model: no free qemu lab index" >&2; exit 1; }
cleanup() { "$KLAB" lab down --qemu --dir "$L" >/dev/null 2>&1; rm -rf "$W"; }
trap cleanup EXIT
cat >"$W/klab.conf" <<CONF
[lab]
	db = $W/klab.db
	artifact_dir = $W/artifacts
	work_dir = $W/work
[include]
	path = $SRCDIR/kernels/lab/demo-tree.conf
CONF
KID=$("$KLAB" --config "$W/klab.conf" --json kernels build --tree linux-source-6.1 --variant base 2>/dev/null |
      python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])') || exit 1

ssh_g() {
	timeout 1800 ssh -F /dev/null -o BatchMode=yes -o StrictHostKeyChecking=yes \
		-o UserKnownHostsFile="$L/known_hosts" -o ConnectTimeout=30 -i "$L/keys/id_ed25519" \
		-p "$(sed -n 's/^dut.ssh_port=//p' "$L/lab.state")" root@127.0.0.1 "$@"
}
now() { date +%s.%N; }
# timed NAME CMD: host seconds (less ssh's own) and guest seconds of CMD in the dut
timed() {
	local name=$1 t0 t1 g
	shift
	t0=$(now)
	g=$(ssh_g "a=\$(date +%s.%N); $* >/dev/null 2>&1; b=\$(date +%s.%N); echo \"\$b - \$a\" | bc")
	t1=$(now)
	echo "$name $(echo "$t1 - $t0 - $ssh0" | bc) $g"
}

for side in plain model; do
	extra=()
	[ $side = model ] && extra=(--cache-model)
	t0=$(now)
	"$KLAB" --config "$W/klab.conf" lab up --qemu --clock icount --smp 1 --kernel-id "$KID" --dir "$L" \
		--index "$K" --timeout 900 "${extra[@]}" >"$W/up.$side" 2>&1 || { cat "$W/up.$side"; exit 1; }
	echo "# $side: lab up $(echo "$(now) - $t0" | bc) s, load $(cut -d' ' -f1-3 /proc/loadavg)"
	ssh0=$(for i in 1 2 3; do a=$(now); ssh_g true; echo "$(now) - $a" | bc; done | sort -n | sed -n 2p)
	timed "$side udp_tx" "$KLAB_BUILD/bin/klab-udp-tx send --addr 198.18.201.2 --port 9 --engine io_uring" \
		"--size 64 --batch 32 --duration $SECS"
	timed "$side cm_walk" "$KLAB_BUILD/cache-model/cm-walk 2048 400"
	echo "# $side: load after $(cut -d' ' -f1-3 /proc/loadavg)"
	"$KLAB" lab down --qemu --dir "$L" >/dev/null
done | tee "$W/out"
echo
python3 - "$W/out" <<'PY'
import sys
r = {}
for l in open(sys.argv[1]):
    if l.startswith("#"):
        continue
    side, work, host, guest = l.split()
    r[(side, work)] = float(host) / float(guest)
for work in ("udp_tx", "cm_walk"):
    p, m = r.get(("plain", work)), r.get(("model", work))
    if p and m:
        print("%-8s host s per guest s: plain %.2f, cache model %.2f, ratio %.1fx" % (work, p, m, m / p))
PY
