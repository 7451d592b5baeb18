#!/bin/sh
# lab-sshd.sh stop|start|status LABDIR MACHINE: the sshd of one netns lab machine (tests only).
# stop kills every sshd process inside the machine's namespace (the listener and the
# sessions, by pid), start runs a new one with the lab's config. Works from the root
# namespace and from inside the machine (the kexec stand-in calls it there).
set -u
op=$1 dir=$2 m=$3
idx=$(sed -n 's/^index=//p' "$dir/netns.state")
ns=klab$idx-$m
sshd_pids() {
	for p in $(ip netns pids "$ns" 2>/dev/null); do
		[ "$(cat /proc/$p/comm 2>/dev/null)" = sshd ] && echo "$p"
	done
}
case $op in
stop)
	pids=$(sshd_pids)
	[ -n "$pids" ] && kill -TERM $pids 2>/dev/null
	i=0
	while [ -n "$(sshd_pids)" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	pids=$(sshd_pids)
	[ -n "$pids" ] && kill -KILL $pids 2>/dev/null
	rm -f "$dir/$m/sshd.pid"
	exit 0 ;;
start)
	# sshd forks before it listens and writes its pid file once it listens: wait for that
	mkdir -p /run/sshd
	rm -f "$dir/$m/sshd.pid"
	ip netns exec "$ns" /usr/sbin/sshd -f "$dir/$m/sshd_config" -E "$dir/$m/sshd.log" || exit 1
	i=0
	while [ ! -s "$dir/$m/sshd.pid" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	[ -s "$dir/$m/sshd.pid" ] ;;
status)
	[ -n "$(sshd_pids)" ] ;;
*)
	echo "usage: lab-sshd.sh stop|start|status LABDIR MACHINE" >&2; exit 2 ;;
esac
