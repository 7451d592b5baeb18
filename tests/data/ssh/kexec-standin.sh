#!/bin/sh
# kexec-standin.sh: a STAND-IN for kexec(8) on a netns lab machine, for the kexec path
# tests (t03NN). A network namespace cannot change its kernel, so this does what a
# kexec looks like from the orchestrator: `kexec -l IMAGE ...` checks the image exists
# and records the call; `kexec -e` takes the machine's sshd down (every session drops)
# and, unless LABDIR/MACHINE/standin-no-return exists, brings it back after 2 s.
# Real kexec is exercised by the qemu lab. Put it first in PATH as "kexec" (the lab
# sshd's SetEnv) and nowhere else.
set -u
dir=${KLAB_LAB_DIR:?not a netns lab session} m=${KLAB_LAB_MACHINE:?not a netns lab session}
here=$(dirname "$(readlink -f "$0")")
log=$dir/$m/kexec-standin.log
case "${1:-}" in
-l)
	echo "load $*" >>"$log"
	[ -f "${2:-}" ] || { echo "kexec-standin: cannot read image '${2:-}'" >&2; exit 1; }
	exit 0 ;;
-e)
	echo "exec" >>"$log"
	sleep 1
	"$here/lab-sshd.sh" stop "$dir" "$m"
	if [ -e "$dir/$m/standin-no-return" ]; then
		echo "down for good" >>"$log"
		exit 0
	fi
	sleep 2
	# logged before sshd starts: the orchestrator may see it back and finish first
	echo "back (sshd starting)" >>"$log"
	"$here/lab-sshd.sh" start "$dir" "$m"
	exit 0 ;;
*)
	echo "kexec-standin: unsupported arguments: $*" >&2
	exit 1 ;;
esac
