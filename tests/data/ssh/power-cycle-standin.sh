#!/bin/sh
# power-cycle-standin.sh LABDIR MACHINE [restart]: a STAND-IN for a BMC power cycle
# (`ipmitool ... chassis power cycle`), run locally by deploy.c as the machine's
# power_cycle argv. It records that it ran; with "restart" it brings the machine's
# sshd back (the machine "rebooted"), without it the machine stays dead.
set -u
dir=$1 m=$2
here=$(dirname "$(readlink -f "$0")")
echo "power cycle $(date +%s)" >>"$dir/$m/power-cycle.log"
if [ "${3:-}" = restart ]; then
	rm -f "$dir/$m/standin-no-return"
	"$here/lab-sshd.sh" stop "$dir" "$m"
	"$here/lab-sshd.sh" start "$dir" "$m"
fi
exit 0
