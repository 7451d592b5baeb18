#!/bin/sh
# kernels/qemu/icount-probe-init.sh: PID 1 for the experiments of docs/qemu-icount.md: host root over 9p (read-only), a
# workload named on the kernel command line (kq.test=), results on the
# console, then power off.
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mountpoint -q /dev || mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /root
param() { for w in $(cat /proc/cmdline); do case "$w" in "kq.$1="*) echo "${w#*=}"; return 0;; esac; done; return 1; }
say() { echo "KQ: $*" > /dev/console; }
ip link set lo up
[ -e /sys/class/net/dummy0 ] || ip link add dummy0 type dummy
ip addr add 198.18.201.1/24 dev dummy0 && ip link set dummy0 up
say "GUEST-READY $(uname -r) online=$(cat /sys/devices/system/cpu/online) uptime=$(cut -d' ' -f1 /proc/uptime)"
t=$(param test) || t=none
bin=$(param bin) || bin=/tmp/qemu-work/bin	# klab-udp-tx, klab-udp-rr
n=$(param runs) || n=3
case "$t" in
online|onlinerr)	# bring CPU 1 up from user space (booted with maxcpus=1)
	say "onlining cpu1"
	echo 1 > /sys/devices/system/cpu/cpu1/online
	say "online now $(cat /sys/devices/system/cpu/online) rc=$?" ;;
esac
case "$t" in
tx|online)
	i=1
	while [ $i -le $n ]; do
		out=$($bin/klab-udp-tx send --addr 198.18.201.2 --port 9000 \
			--engine io_uring --size 64 --batch 32 --duration 3 --warmup 1 2>&1 | tr -d '\n')
		say "run $i $out"
		i=$((i + 1))
	done ;;
tx2)	# two sender threads, one per CPU
	i=1
	while [ $i -le $n ]; do
		out=$($bin/klab-udp-tx send --addr 198.18.201.2 --port 9000 \
			--engine io_uring --size 64 --batch 32 --threads 2 --cpus 0,1 \
			--duration 3 --warmup 1 2>&1 | tr -d '\n')
		say "run $i $out"
		i=$((i + 1))
	done ;;
rr|onlinerr)	# request/response over loopback: server on CPU 0, client on CPU 1
	$bin/klab-udp-rr server --addr 127.0.0.1 --port 9100 --cpus 0 \
		--duration $((n * 5 + 5)) > /run/server.out 2>&1 &
	sleep 1
	i=1
	while [ $i -le $n ]; do
		out=$($bin/klab-udp-rr client --addr 127.0.0.1 --port 9100 --flows 4 \
			--cpus 1 --duration 3 --warmup 1 2>&1 | tr -d '\n')
		say "run $i $out"
		i=$((i + 1))
	done
	wait ;;
loop)	# a CPU-bound shell-free loop: count iterations of busybox in 3 s
	i=1
	while [ $i -le $n ]; do
		say "run $i $(timeout 3 sh -c 'n=0; while :; do n=$((n+1)); echo $n > /run/cnt; done'; cat /run/cnt)"
		i=$((i + 1))
	done ;;
esac
say "irq $(grep -E 'virtio|LOC|RES|CAL' /proc/interrupts | tr -s ' ' | tr '\n' '|')"
say "softirq $(grep -E 'NET_TX|NET_RX|TIMER' /proc/softirqs | tr -s ' ' | tr '\n' '|')"
say "DONE uptime=$(cut -d' ' -f1 /proc/uptime)"
reboot -f

poweroff -f
