# bench/lib.sh: what the qemu benches share (sourced after SRCDIR is set).

# bench_qemu_lab_index NAME: set K to a qemu lab index (48 down to 30) that no
# other lab uses, as tests/lib.sh's test_qemu_lab_index picks one: an flock on
# /run/lock/klab-qemu-lab-K.test, kept open until the bench ends, and no qemu
# of that index (any pair) running. Exits 1 with "NAME: no free qemu lab index"
# when none is free.
bench_qemu_lab_index() {
	local k
	K=
	for ((k = 48; k >= 30; k--)); do
		exec {bench_lab_fd}>>"/run/lock/klab-qemu-lab-$k.test" || continue
		flock -n "$bench_lab_fd" || { exec {bench_lab_fd}>&-; continue; }
		if ! pgrep -f -- "-name klab-$k-(dut|peer)[0-9]*( |\$)" >/dev/null; then K=$k; return 0; fi
		exec {bench_lab_fd}>&-
	done
	echo "$1: no free qemu lab index" >&2
	exit 1
}
