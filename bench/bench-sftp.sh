#!/bin/bash
# bench-sftp.sh: klab's SFTP upload (ssh_upload: libssh2, temp name, fsync, far-side
# sha256, rename) vs OpenSSH scp, 200 MB over a netns lab management link, interleaved.
#
#   bash bench/bench-sftp.sh [ROUNDS] [SIZE_MB]      (root; KLAB_BUILD=build/rel by default)
#
# Prints MB/s per round for klab (the whole ssh_upload, and its data phase alone:
# SFTP writes until fsync, from ssh.c's debug line), scp, and the median ratios
# klab/scp (target >= 0.80). Nothing is asserted: figures only.
set -u
SRCDIR=$(cd "$(dirname "$0")/.." && pwd)
KLAB_BUILD=${KLAB_BUILD:-$SRCDIR/build/rel}
KLAB=$KLAB_BUILD/bin/klab
T=$KLAB_BUILD/tests/orch-ssh
ROUNDS=${1:-3}
SIZE_MB=${2:-200}
[ "$(id -u)" = 0 ] || { echo "bench-sftp: needs root (netns lab)" >&2; exit 1; }
[ -x "$KLAB" ] && [ -x "$T" ] || { echo "bench-sftp: build first: make BUILD=... bins unit-tests" >&2; exit 1; }

W=$(mktemp -d /var/tmp/klab-bench-sftp.XXXXXX)
L=$W/lab
cleanup() { "$KLAB" lab down --dir "$L" >/dev/null 2>&1; rm -rf "$W"; }
trap cleanup EXIT
"$KLAB" lab up --netns --index auto --dir "$L" >"$W/up" || exit 1
K=$(sed -n 's/^netns lab \([0-9]*\) up.*/\1/p' "$W/up")
DUT=198.18.255.$((8 * K + 2))
head -c $((SIZE_MB * 1000000)) /dev/urandom >"$W/file"
bytes=$(stat -c %s "$W/file")

now() { date +%s.%N; }
mbps() { echo "$bytes $1" | awk '{ printf "%.1f", $1 / 1e6 / $2 }'; }

echo "# $SIZE_MB MB, $ROUNDS rounds, dut $DUT (netns lab $K), $(nproc) CPUs, load $(cut -d" " -f1 /proc/loadavg)"
printf "%-6s %12s %12s %12s %12s %12s\n" round klab_MB/s data_MB/s scp_MB/s ratio data_ratio
ratios=() dratios=()
for r in $(seq "$ROUNDS"); do
	rm -f "$W/r-klab" "$W/r-scp"
	sync
	t0=$(now)
	KLAB_T_DEBUG=1 "$T" -c "$L/klab.conf" -m dut upload "$W/file" "$W/r-klab" >/dev/null 2>"$W/err" ||
		{ cat "$W/err"; exit 1; }
	t1=$(now)
	sync
	t2=$(now)
	scp -q -F /dev/null -o BatchMode=yes -o UserKnownHostsFile="$L/known_hosts" \
		-i "$L/keys/id_ed25519" "$W/file" "root@$DUT:$W/r-scp" || exit 1
	t3=$(now)
	k=$(echo "$t1 $t0" | awk '{ print $1 - $2 }')
	s=$(echo "$t3 $t2" | awk '{ print $1 - $2 }')
	d=$(sed -n 's/.*data sent in \([0-9]*\) ms.*/\1/p' "$W/err" | awk '{ print $1 / 1000 }')
	ratio=$(echo "$s $k" | awk '{ printf "%.2f", $1 / $2 }')
	dratio=$(echo "$s $d" | awk '{ printf "%.2f", $1 / $2 }')
	ratios+=("$ratio") dratios+=("$dratio")
	printf "%-6s %12s %12s %12s %12s %12s\n" "$r" "$(mbps "$k")" "$(mbps "$d")" "$(mbps "$s")" "$ratio" "$dratio"
	cmp -s "$W/file" "$W/r-klab" || { echo "bench-sftp: klab copy differs" >&2; exit 1; }
done
med() { printf "%s\n" "$@" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
echo "median ratio klab/scp: $(med "${ratios[@]}") whole upload (incl. fsync, far-side sha256sum, rename), $(med "${dratios[@]}") data phase (target >= 0.80)"
echo "# load after: $(cut -d" " -f1-3 /proc/loadavg)"
