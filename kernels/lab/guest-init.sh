#!/bin/sh
# kernels/lab/guest-init.sh: PID 1 of a klab qemu guest (host root over 9p, sshd, lab NICs).
#
# `klab lab up --qemu` copies this file into LABDIR/guest/init.sh and boots
# the guest with init=LABDIR/guest/init.sh and these kernel parameters:
#   klab.name=dut            machine name (hostname, host key file); dutP in a lab of pairs
#   klab.dir=LABDIR          the lab folder on the host (seen read-only)
#   klab.mgmt=198.18.2.15/24 address of the management NIC (qemu user net)
#   klab.mgmt_mac=MAC        MAC of the management NIC (renamed eth0)
#   klab.lab=198.18.100.1/24 address of the workload NIC (renamed eth1)
#   klab.lab_mac=MAC         MAC of the workload NIC
#   klab.dummy=198.18.201.1/24  address of dummy0: udp_tx to 198.18.201.2 is dropped there
#   klab.cpus=N              (icount lab, with maxcpus=1) bring CPUs 1..N-1 online here
#   klab.peerns=ADDR/24      the peer is the namespace klabpeer of this guest: a veth
#                            eth1 <-> eth1 (klab.queues=N queues) joins it, and a second
#                            sshd on port 2222 (host key host_peer, host_peerP for
#                            dutP) runs every session inside it (/30 in a lab of pairs)
#   klab.cachemodel=1        mount the cache model's windows (9p tag klabcm) at
#                            /run/klab/cache-model
# The same parameters survive `kexec` (the deploy code reuses /proc/cmdline),
# so a kexec'd kernel comes up exactly like the first one.
#
# The root is the host's, read-only; an overlay with a tmpfs upper layer
# makes it writable for this guest alone (so kexec images, klab-agent and
# its results can be written anywhere, as on a real machine). If the
# overlay cannot be mounted, tmpfs goes over the folders that need writing.

PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
umask 022

log() { echo "klab-init: $*" >/dev/console 2>/dev/null || echo "klab-init: $*"; }

param() {	# param NAME: value of klab.NAME= on the kernel command line
	for w in $(cat /proc/cmdline); do
		case "$w" in "klab.$1="*) echo "${w#*=}"; return 0 ;; esac
	done
	return 1
}

# stage 1: runs on the 9p root; builds the overlay root and re-executes there.
if [ "$1" != stage2 ]; then
	mount -t proc proc /proc
	mount -t tmpfs -o mode=0755,size=64m tmpfs /run || log "cannot mount /run"
	mkdir -p /run/ovl/upper /run/ovl/work /run/ovl/root
	if mount -t tmpfs -o mode=0755 tmpfs /run/ovl/upper 2>/dev/null &&
	   mkdir -p /run/ovl/upper/u /run/ovl/upper/w &&
	   mount -t overlay overlay \
		-o lowerdir=/,upperdir=/run/ovl/upper/u,workdir=/run/ovl/upper/w /run/ovl/root; then
		umount /proc
		mkdir -p /run/ovl/root/.klab-old
		cd /run/ovl/root || exit 1
		pivot_root . .klab-old && exec chroot . /bin/sh "$0" stage2 overlay
		log "pivot_root failed; continuing on the read-only root"
	else
		log "cannot mount the overlay root; using tmpfs over writable folders"
	fi
	umount /proc 2>/dev/null
	exec /bin/sh "$0" stage2 tmpfs
fi

mode=$2
mount -t proc proc /proc 2>/dev/null
mount -t sysfs sysfs /sys 2>/dev/null
mountpoint -q /dev || mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts 2>/dev/null
mount -t tmpfs -o mode=1777 tmpfs /dev/shm 2>/dev/null

name=$(param name) || name=guest
dir=$(param dir)

# The lab folder, readable at a fixed place (before tmpfs may hide it).
mountpoint -q /run || mount -t tmpfs -o mode=0755,size=64m tmpfs /run
mkdir -p /run/klab/lab
if [ -n "$dir" ]; then
	mount --bind "$dir" /run/klab/lab || log "cannot bind the lab folder '$dir'"
fi
# The host's root as the 9p share shows it, read-only, where no tmpfs of
# this guest hides any of it (the overlay's lower layer, or the 9p root
# itself before the tmpfs below): the deploy kexecs kernels from the
# artifact store there instead of uploading them (shared_root in the
# lab's fragment).
mkdir -p /run/klab/host
if [ "$mode" = overlay ]; then hostroot=/.klab-old; else hostroot=/; fi
mount --bind "$hostroot" /run/klab/host && mount -o remount,bind,ro /run/klab/host ||
	log "cannot bind the host's root at /run/klab/host: kernels are uploaded instead"
# The cache model's windows (klab lab up --cache-model): a 9p share of their
# own, without the root's page cache, so a window the plugin has just written
# is read as it is now (docs/cache-model.md).
if [ "$(param cachemodel)" = 1 ]; then
	mkdir -p /run/klab/cache-model
	mount -t 9p -o trans=virtio,version=9p2000.L,cache=none,ro klabcm /run/klab/cache-model ||
		log "cannot mount the cache model's folder (tag klabcm)"
fi
if [ "$mode" = tmpfs ]; then
	for d in /tmp /var/tmp /root /home /var/lib /var/log /var/cache /boot /mnt /srv /opt; do
		[ -d "$d" ] && mount -t tmpfs -o mode=0755 tmpfs "$d"
	done
	chmod 1777 /tmp /var/tmp
else
	# The host's home folders may hold shell start-up files that are slow
	# under TCG (pyenv took 10 s per login): the guest's own are empty.
	# /tmp and /var/tmp stay the host's, seen through the overlay (writes
	# stay in the guest): a project or a test folder under /tmp must be
	# visible in the guest like everywhere else.
	[ -d /root ] && mount -t tmpfs -o mode=0755 tmpfs /root
fi
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t bpf bpf /sys/fs/bpf 2>/dev/null

hostname "$name"

# The icount lab boots with maxcpus=1 (qemu 7.2 livelocks bringing up more
# than one vCPU under -icount) and onlines the other CPUs here, before the
# NICs (virtio-net sizes its queues by the online CPUs). `klab lab up`
# checks /sys/devices/system/cpu/online and refuses a guest short of CPUs.
if cpus=$(param cpus); then
	c=1
	while [ "$c" -lt "$cpus" ]; do
		f=/sys/devices/system/cpu/cpu$c/online
		if [ -e "$f" ]; then
			echo 1 >"$f" || log "ERROR: cannot online cpu$c"
		else
			log "ERROR: no $f: the kernel cannot online cpu$c (CONFIG_HOTPLUG_CPU?)"
		fi
		c=$((c + 1))
	done
	log "CPUs online: $(cat /sys/devices/system/cpu/online) (wanted 0-$((cpus - 1)))"
fi
echo 0 >/proc/sys/kernel/kptr_restrict 2>/dev/null
echo -1 >/proc/sys/kernel/perf_event_paranoid 2>/dev/null

# NICs: find them by MAC, name them eth0 (management) and eth1 (workload).
ifname_of() {	# ifname_of MAC
	for n in /sys/class/net/*; do
		[ "$(cat "$n/address" 2>/dev/null)" = "$1" ] && { basename "$n"; return 0; }
	done
	return 1
}
setup_nic() {	# setup_nic WANTED_NAME MAC ADDR
	want=$1 mac=$2 addr=$3
	[ -n "$mac" ] || return 0
	cur=$(ifname_of "$mac") || { log "no NIC with MAC $mac"; return 1; }
	if [ "$cur" != "$want" ]; then
		if [ -e "/sys/class/net/$want" ]; then
			ip link set dev "$want" name "klabtmp$$"
		fi
		ip link set dev "$cur" name "$want"
	fi
	ip link set dev "$want" up
	[ -n "$addr" ] && ip addr add "$addr" dev "$want"
	return 0
}
ip link set lo up
# The peer in a namespace of this guest (the icount lab): client and server
# then run in one qemu, and no packet waits for another qemu process.
if peer=$(param peerns); then
	q=$(param queues) || q=1
	ip netns add klabpeer &&
	ip link add eth1 numtxqueues "$q" numrxqueues "$q" type veth \
		peer name klabp1 numtxqueues "$q" numrxqueues "$q" &&
	ip link set klabp1 netns klabpeer &&
	ip -n klabpeer link set klabp1 name eth1 &&
	ip -n klabpeer addr add "$peer" dev eth1 &&
	ip -n klabpeer link set eth1 up &&
	ip -n klabpeer link set lo up || log "ERROR: cannot make the peer namespace klabpeer"
fi
# Two passes so that a swap of eth0 and eth1 works out.
setup_nic eth0 "$(param mgmt_mac)" "" && setup_nic eth1 "$(param lab_mac)" ""
n=$(ifname_of "$(param mgmt_mac)") && ip link set dev "$n" name eth0 2>/dev/null
mgmt=$(param mgmt) && ip addr add "$mgmt" dev eth0
lab=$(param lab) && ip addr add "$lab" dev eth1
ip link set eth0 up 2>/dev/null
ip link set eth1 up 2>/dev/null
# dummy0 (the kernel makes one with CONFIG_DUMMY=y): the drop target of
# udp_tx, whose packets take the whole tx path and are freed by the driver.
if dummy=$(param dummy); then
	[ -e /sys/class/net/dummy0 ] || ip link add dummy0 type dummy
	ip addr add "$dummy" dev dummy0 && ip link set dummy0 up
fi

# sshd with the lab's host key for this machine and the lab's client key.
mkdir -p /run/ssh /run/sshd
chmod 0755 /run/sshd
cp "/run/klab/lab/keys/host_$name" /run/ssh/ssh_host_ed25519_key &&
	chmod 0600 /run/ssh/ssh_host_ed25519_key || log "no host key for '$name' in the lab folder"
cp /run/klab/lab/keys/id_ed25519.pub /run/ssh/authorized_keys
chmod 0600 /run/ssh/authorized_keys
ulimit -l unlimited 2>/dev/null
ulimit -n 65536 2>/dev/null
/usr/sbin/sshd -f /run/klab/lab/guest/sshd_config -E /run/ssh/sshd.log || log "sshd failed to start"
if [ -n "$peer" ]; then
	# The peer's sshd: its own host key and port; every session (commands and
	# sftp alike, through ForceCommand) is entered into the namespace.
	# the pair's peer: peer for the dut, peerP for dutP (a lab of several pairs)
	pname=peer${name#dut}
	cp "/run/klab/lab/keys/host_$pname" /run/ssh/ssh_host_peer_key &&
		chmod 0600 /run/ssh/ssh_host_peer_key || log "no host key for '$pname' in the lab folder"
	cat >/run/ssh/peer-session <<'EOS'
#!/bin/sh
# A session of the peer machine: run it in the network namespace klabpeer.
[ -n "$SSH_ORIGINAL_COMMAND" ] && exec ip netns exec klabpeer /bin/sh -c "$SSH_ORIGINAL_COMMAND"
exec ip netns exec klabpeer /bin/sh -l
EOS
	chmod 0755 /run/ssh/peer-session
	sed -e 's/^Port .*/Port 2222/' -e 's|^HostKey .*|HostKey /run/ssh/ssh_host_peer_key|' \
		-e 's|^PidFile .*|PidFile /run/ssh/sshd-peer.pid|' \
		-e 's|^Subsystem .*|Subsystem sftp /usr/lib/openssh/sftp-server|' \
		/run/klab/lab/guest/sshd_config >/run/ssh/sshd_peer_config &&
	echo "ForceCommand /run/ssh/peer-session" >>/run/ssh/sshd_peer_config &&
	/usr/sbin/sshd -f /run/ssh/sshd_peer_config -E /run/ssh/sshd-peer.log ||
		log "the peer's sshd failed to start"
fi

log "GUEST-READY $name $(uname -r) root=$mode"

# PID 1 must never exit; it also reaps orphans (the shell's wait does that).
trap '' TERM INT HUP
while :; do
	sleep 60 &
	wait
done
