#!/bin/bash
test_description='deploy: boot = none verifies the release, kexec through a stand-in, power cycle, fencing of a machine that never returns (boot = reboot: t0304)'
. "$(dirname "$0")/lib.sh"

L=$SCRATCH/lab
T=$KLAB_BUILD/tests/orch-ssh
S=$SRCDIR/tests/data/ssh
DB=$SCRATCH/klab.db
REL=$(uname -r)
test_cleanup '"$KLAB" lab down --dir "$L"'

# The build id of the running kernel, parsed independently of deploy.c.
BUILD_ID=$(test_kernel_build_id)

# kexec_conf FILE [extra dut keys...]: the lab config with dut booted by kexec and our db
kexec_conf() {
	local f=$1; shift
	sed -e "s|^\[lab\]|[lab]\n\tdb = $DB|" \
	    -e '/^\[machine "dut"\]/,/^$/ s/boot = none/boot = kexec/' "$L/klab.conf" >"$f.tmp" &&
	for kv in "$@"; do
		sed -i "/boot = kexec/a\\
	$kv" "$f.tmp" || return 1
	done
	mv "$f.tmp" "$f"
}
BOOT_OPTS="--release $REL --image $SCRATCH/bzImage --remote-dir $SCRATCH/boot --db $DB"

test_expect_success ROOT,NETNS,SSHD 'set up a netns lab whose dut has a kexec stand-in first in PATH' '
	test -x "$T" && test -n "$BUILD_ID" &&
	"$KLAB" lab up --netns --dir "$L" --index auto >up.out &&
	mkdir standin-bin && ln -s "$S/kexec-standin.sh" standin-bin/kexec &&
	sed -i "s|^SetEnv |SetEnv PATH=$SCRATCH/standin-bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin |" \
		"$L/dut/sshd_config" &&
	"$S/lab-sshd.sh" stop "$L" dut && "$S/lab-sshd.sh" start "$L" dut &&
	"$T" -c "$L/klab.conf" -m dut exec --out which -- sh -c "command -v kexec" &&
	test "$(cat which)" = "$SCRATCH/standin-bin/kexec" &&
	echo "not a kernel: the stand-in only checks that it arrived" >bzImage
'
# by index too: when every test passed, test_done removes $SCRATCH (and the lab's state) first
K=$(sed -n 's/^netns lab \([0-9]*\) up.*/\1/p' up.out 2>/dev/null)
[ -n "$K" ] && test_cleanup "'$KLAB' lab down --dir '$L' --index $K"

test_expect_success ROOT,NETNS,SSHD 'boot = none: the release and build id are verified' '
	"$T" -c "$L/klab.conf" -m peer boot --release "$REL" --build-id "$BUILD_ID" >out 2>err &&
	test_grep "release=$REL build_id=$BUILD_ID wrong_kernel=0" out &&
	test_grep "runs the expected kernel" err
'

test_expect_success ROOT,NETNS,SSHD 'boot = none: another release is reported as the wrong kernel' '
	test_must_fail "$T" -c "$L/klab.conf" -m peer boot --release 6.1.0-klab-patched >out 2>err &&
	test_grep "wrong_kernel=1" out &&
	test_grep "machine .peer. runs kernel .$REL. .*expected .6.1.0-klab-patched.*came back on another kernel" err &&
	# what a job step puts in its reason: the same message, handed up by the connection (ssh_error)
	test_grep "^why=machine .peer. runs kernel .$REL. .*expected .6.1.0-klab-patched.*came back on another kernel" out
'

test_expect_success ROOT,NETNS,SSHD 'boot = none: same release with another build id is the wrong kernel' '
	test_must_fail "$T" -c "$L/klab.conf" -m peer boot --release "$REL" --build-id 0123456789abcdef >out 2>err &&
	test_grep "wrong_kernel=1" out &&
	test_grep "expected build id 0123456789abcdef: same release, another build" err
'

test_expect_success ROOT,NETNS,SSHD 'kexec: image uploaded, kexec -l --reuse-cmdline, kexec -e drops sshd, it comes back, verified' '
	kexec_conf k.conf &&
	"$T" -c k.conf -m dut boot $BOOT_OPTS --boot-ms 20000 --attempt-ms 3000 --progress >out 2>err &&
	test_grep "release=$REL .*wrong_kernel=0 power_cycled=0 fenced=0" out &&
	cmp bzImage "$SCRATCH/boot/vmlinuz-$REL" &&
	# the upload says how much of the image went (KiB, rounded up), of its size (stderr is a file: a plain last line)
	kib=$(( ($(stat -c %s bzImage) + 1023) / 1024 )) &&
	grep -Eq "^\[upload bzImage to dut\] $kib/$kib KiB 100% 00:[0-9]{2} ETA 0s done$" err &&
	test_grep "^load -l $SCRATCH/boot/vmlinuz-$REL --reuse-cmdline" "$L/dut/kexec-standin.log" &&
	test_grep "^exec" "$L/dut/kexec-standin.log" &&
	test_grep "^back" "$L/dut/kexec-standin.log" &&
	test_grep "answers SSH again" err &&
	test "$(sqlite3 "$DB" "SELECT last_kernel FROM machines WHERE name = '"'"'dut'"'"'")" = "$REL"
'

test_expect_success ROOT,NETNS,SSHD 'kexec with an explicit kernel_cmdline' '
	kexec_conf kc.conf "kernel_cmdline = console=ttyS0 quiet klab.x=1" &&
	: >"$L/dut/kexec-standin.log" &&
	"$T" -c kc.conf -m dut boot $BOOT_OPTS --boot-ms 20000 --attempt-ms 3000 >out 2>err &&
	test_grep "^load -l $SCRATCH/boot/vmlinuz-$REL --command-line=console=ttyS0 quiet klab.x=1" "$L/dut/kexec-standin.log"
'

# A netns machine's sshd runs on the host's own root, so shared_root = / is true of it:
# the shared-root load reads the image where the host has it, as a qemu guest does at
# /run/klab/host (t0801 boots real kernels that way).
test_expect_success ROOT,NETNS,SSHD 'kexec with shared_root: nothing uploaded, the host file is loaded where it is, sha256 checked there' '
	kexec_conf ks.conf "shared_root = /" &&
	: >"$L/dut/kexec-standin.log" &&
	"$T" -c ks.conf -m dut boot $BOOT_OPTS --remote-dir "$SCRATCH/boot-s" --boot-ms 20000 --attempt-ms 3000 \
		--progress >out 2>err &&
	test_grep "release=$REL .*wrong_kernel=0 power_cycled=0 fenced=0" out &&
	test_grep "machine .dut.: loaded $REL from the shared root ($(readlink -f bzImage), sha256 [0-9a-f]\{12\} checked there): nothing uploaded" err &&
	! test_grep "upload bzImage to dut" err &&
	! test -e "$SCRATCH/boot-s/vmlinuz-$REL" &&
	test_grep "^load -l $(readlink -f bzImage) --reuse-cmdline" "$L/dut/kexec-standin.log" &&
	test_grep "^back" "$L/dut/kexec-standin.log"
'

test_expect_success ROOT,NETNS,SSHD 'a shared root that shows other bytes at that path, or nothing: warned, uploaded instead' '
	img=$(readlink -f bzImage) &&
	mkdir -p "decoy$(dirname "$img")" && echo "an older image" >"decoy$img" &&
	kexec_conf kd.conf "shared_root = $SCRATCH/decoy/" &&
	: >"$L/dut/kexec-standin.log" && rm -rf "$SCRATCH/boot-d" &&
	"$T" -c kd.conf -m dut boot $BOOT_OPTS --remote-dir "$SCRATCH/boot-d" --boot-ms 20000 --attempt-ms 3000 \
		--progress >out 2>err &&
	test_grep "wrong_kernel=0 power_cycled=0 fenced=0" out &&
	test_grep "upload bzImage to dut" err &&
	test_grep "cannot boot $REL from its shared root .$SCRATCH/decoy/. (.$SCRATCH/decoy$img. has sha256 $(sha256sum "decoy$img" | cut -c1-64) there, the host.s file $(sha256sum bzImage | cut -c1-64)): uploading it instead" err &&
	cmp bzImage "$SCRATCH/boot-d/vmlinuz-$REL" &&
	test_grep "^load -l $SCRATCH/boot-d/vmlinuz-$REL --reuse-cmdline" "$L/dut/kexec-standin.log" &&
	kexec_conf kn2.conf "shared_root = $SCRATCH/nothing" && rm -rf "$SCRATCH/boot-d" &&
	"$T" -c kn2.conf -m dut boot $BOOT_OPTS --remote-dir "$SCRATCH/boot-d" --boot-ms 20000 --attempt-ms 3000 \
		>out 2>err &&
	test_grep "wrong_kernel=0" out &&
	test_grep "cannot boot $REL from its shared root .$SCRATCH/nothing. (.$SCRATCH/nothing$img. is not readable there): uploading it instead" err &&
	cmp bzImage "$SCRATCH/boot-d/vmlinuz-$REL"
'

test_expect_success ROOT,NETNS,SSHD 'shared_root must be an absolute path (file:line)' '
	kexec_conf kr.conf "shared_root = run/klab/host" &&
	test_must_fail "$KLAB" config check kr.conf 2>err &&
	test_grep "kr.conf:[0-9]*: \[machine \"dut\"\]: .shared_root. must be an absolute path on the machine" err
'

test_expect_success ROOT,NETNS,SSHD 'a machine that does not return is power cycled and then verified' '
	kexec_conf kp.conf "power_cycle = $S/power-cycle-standin.sh $L dut restart" &&
	touch "$L/dut/standin-no-return" &&
	"$T" -c kp.conf -m dut boot $BOOT_OPTS --boot-ms 4000 --attempt-ms 2000 >out 2>err &&
	test_grep "wrong_kernel=0 power_cycled=1 fenced=0" out &&
	test_grep "running its power_cycle command" err &&
	test_grep "^power cycle" "$L/dut/power-cycle.log" &&
	! test -e "$L/dut/standin-no-return"
'

test_expect_success ROOT,NETNS,SSHD 'a machine that never comes back is fenced after its power_cycle stand-in' '
	kexec_conf kf.conf "power_cycle = $S/power-cycle-standin.sh $L dut" &&
	rm -f "$L/dut/power-cycle.log" &&
	touch "$L/dut/standin-no-return" &&
	start=$(date +%s) &&
	test_must_fail "$T" -c kf.conf -m dut boot $BOOT_OPTS --boot-ms 4000 --attempt-ms 2000 >out 2>err &&
	test $(( $(date +%s) - start )) -lt 60 &&
	test_grep "power_cycled=1 fenced=1" out &&
	test_grep "^why=machine .dut. is fenced (state broken): did not answer SSH within 4 s" out &&
	test_grep "^power cycle" "$L/dut/power-cycle.log" &&
	test_grep "machine .dut. is fenced (state broken): did not answer SSH within 4 s" err &&
	test "$(sqlite3 "$DB" "SELECT state FROM machines WHERE name = '"'"'dut'"'"'")" = broken &&
	sqlite3 "$DB" "SELECT state_reason, state_since > 0 FROM machines WHERE name = '"'"'dut'"'"'" >st &&
	test_grep "nor after its power_cycle command|1" st &&
	"$KLAB" --config kf.conf machines >list &&
	test_grep "^dut .* broken" list && test_grep "reason: did not answer SSH" list
'

test_expect_success ROOT,NETNS,SSHD 'repair refuses while the machine is down, frees it once SSH works' '
	test_must_fail "$KLAB" --config kf.conf machine repair dut 2>err &&
	test_grep "not repaired" err &&
	test_must_fail "$KLAB" --config kf.conf machine undrain dut 2>err &&
	test_grep "is broken, not drained" err &&
	rm -f "$L/dut/standin-no-return" &&
	"$S/lab-sshd.sh" start "$L" dut &&
	"$KLAB" --config kf.conf machine repair dut >out &&
	test_grep "free again (runs $REL)" out &&
	test "$(sqlite3 "$DB" "SELECT state FROM machines WHERE name = '"'"'dut'"'"'")" = free
'

test_expect_success ROOT,NETNS,SSHD 'no power_cycle configured: fenced with that reason' '
	kexec_conf kn.conf &&
	touch "$L/dut/standin-no-return" &&
	test_must_fail "$T" -c kn.conf -m dut boot $BOOT_OPTS --boot-ms 3000 --attempt-ms 1500 >out 2>err &&
	test_grep "power_cycled=0 fenced=1" out &&
	test_grep "no power_cycle configured" err
'

test_done
