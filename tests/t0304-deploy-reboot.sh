#!/bin/bash
test_description='deploy: boot = reboot installs the kernel under boot_dir, selects it once with grub-reboot and reboots (GRUB, uname and the reboot are stand-ins)'
. "$(dirname "$0")/lib.sh"

# The machine runs in a network namespace of the host: it cannot have a boot loader of
# its own nor reboot, so tests/data/deploy/boot-standin.sh stands in for grub-mkconfig,
# grub-reboot, grub-editenv, update-initramfs, uname and the reboot command, first in
# the PATH of the dut's sshd (and the reboot_cmd is its absolute path). Files go to a
# private boot_dir ($L/dut/root/boot), never to the host's /boot.
L=$SCRATCH/lab
T=$KLAB_BUILD/tests/orch-ssh
SB=$SCRATCH/standin-bin
DB=$SCRATCH/klab.db
B=$L/dut/root/boot
REL=$(uname -r)
NEW=6.99.0-klab-reboot1
UUID=0f3e6bd6-5c1c-4a29-9c61-klabstandin
test_cleanup '"$KLAB" lab down --dir "$L"'

BUILD_ID=$(test_kernel_build_id)

# reboot_conf FILE [extra dut keys...]: the lab config, dut booted by (stand-in) reboot
reboot_conf() {
	local f=$1; shift
	sed -e "s|^\[lab\]|[lab]\n\tdb = $DB|" \
	    -e '/^\[machine "dut"\]/,/^$/ s/boot = none/boot = reboot/' "$L/klab.conf" >"$f.tmp" &&
	for kv in "boot_dir = $B" "reboot_cmd = $SB/reboot-standin" "$@"; do
		sed -i "/boot = reboot/a\\
	$kv" "$f.tmp" || return 1
	done
	mv "$f.tmp" "$f"
}
# boot RELEASE [driver options...]: boot the dut (stand-in) into the artifact in art/ with
# config $CONF (r.conf); stderr goes to stderr and to boots.log (kept with the scratch)
boot() {
	local rel=$1 rc; shift
	"$T" -c "${CONF:-r.conf}" -m dut boot --release "$rel" --image "$SCRATCH/art/bzImage" \
		--remote-dir "$SCRATCH/stage" --db "$DB" --boot-ms 20000 --attempt-ms 3000 "$@" 2>"$SCRATCH/boot.err"
	rc=$?
	tee -a "$SCRATCH/boots.log" <"$SCRATCH/boot.err" >&2
	return $rc
}
db_machine() { sqlite3 "$DB" "SELECT $1 FROM machines WHERE name = 'dut'"; }
reboots() { grep -c "^reboot$" "$L/dut/boot-standin.log" 2>/dev/null; }

test_expect_success ROOT,NETNS,SSHD 'set up a netns lab whose dut has GRUB, uname and reboot stand-ins first in PATH' '
	test -x "$T" && test -n "$BUILD_ID" &&
	"$KLAB" lab up --netns --dir "$L" --index auto >up.out &&
	mkdir "$SB" &&
	for t in grub-mkconfig grub-reboot grub-editenv update-initramfs uname reboot-standin \
		 systemctl reboot update-grub installkernel dracut kexec; do
		ln -s "$SRCDIR/tests/data/deploy/boot-standin.sh" "$SB/$t" || return 1
	done &&
	sed -i "s|^SetEnv |SetEnv PATH=$SB:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin |" \
		"$L/dut/sshd_config" &&
	"$SRCDIR/tests/data/ssh/lab-sshd.sh" stop "$L" dut && "$SRCDIR/tests/data/ssh/lab-sshd.sh" start "$L" dut &&
	for t in grub-mkconfig grub-reboot grub-editenv uname systemctl reboot installkernel; do
		"$T" -c "$L/klab.conf" -m dut exec --out which -- sh -c "command -v $t" &&
		test "$(cat which)" = "$SB/$t" || return 1
	done &&
	mkdir -p "$B/grub" art &&
	KLAB_LAB_DIR=$L KLAB_LAB_MACHINE=dut "$SB/grub-mkconfig" -o "$B/grub/grub.cfg" &&
	printf "# GRUB Environment Block\nsaved_entry=%s\n" "gnulinux-advanced-$UUID>gnulinux-$REL-advanced-$UUID" \
		>"$B/grub/grubenv" &&
	echo "not a kernel: the stand-ins only check where it lands" >art/bzImage &&
	echo "ffffffff81000000 T _text" >art/System.map &&
	echo "CONFIG_KLAB_TEST=y" >art/config &&
	reboot_conf r.conf &&
	"$KLAB" config check r.conf
'
K=$(sed -n 's/^netns lab \([0-9]*\) up.*/\1/p' up.out 2>/dev/null)
[ -n "$K" ] && test_cleanup "'$KLAB' lab down --dir '$L' --index $K"

test_expect_success ROOT,NETNS,SSHD 'reboot: files land in boot_dir, the new entry is selected once, the machine comes back on it, verified' '
	boot "$NEW" --build-id "$BUILD_ID" >out 2>err &&
	test_grep "release=$NEW build_id=$BUILD_ID wrong_kernel=0 power_cycled=0 fenced=0" out &&
	cmp art/bzImage "$B/vmlinuz-$NEW" &&
	cmp art/System.map "$B/System.map-$NEW" &&
	cmp art/config "$B/config-$NEW" &&
	! test -e "$B/initrd.img-$NEW" &&
	test_grep "^mkconfig $B/grub/grub.cfg" "$L/dut/boot-standin.log" &&
	test_grep "menuentry .Debian GNU/Linux, with Linux $NEW. " "$B/grub/grub.cfg" &&
	test_grep "^grub-reboot --boot-directory=$B gnulinux-advanced-$UUID>gnulinux-$NEW-advanced-$UUID\$" \
		"$L/dut/boot-standin.log" &&
	test_grep "^booting $NEW" "$L/dut/boot-standin.log" &&
	test_grep "^back" "$L/dut/boot-standin.log" &&
	test_grep "rebooting into $NEW once" err &&
	test_grep "answers SSH again" err &&
	test_grep "runs the expected kernel $NEW build id $BUILD_ID" err &&
	test "$(db_machine last_kernel)" = "$NEW" &&
	test "$(db_machine last_build_id)" = "$BUILD_ID"
'

test_expect_success ROOT,NETNS,SSHD 'reboot: a wrong build id after the boot is reported (release and build id both verified)' '
	test_must_fail boot "$NEW" --build-id 0123456789abcdef >out 2>err &&
	test_grep "wrong_kernel=1" out &&
	test_grep "expected build id 0123456789abcdef: same release, another build" err
'

test_expect_success ROOT,NETNS,SSHD 'reboot: initramfs = yes runs update-initramfs for the release into boot_dir' '
	reboot_conf ri.conf "initramfs = yes" &&
	CONF=ri.conf boot 6.99.1-klab-initrd >out 2>err &&
	test_grep "wrong_kernel=0" out &&
	test_grep "^initramfs -c -k 6.99.1-klab-initrd -b $B\$" "$L/dut/boot-standin.log" &&
	test -s "$B/initrd.img-6.99.1-klab-initrd"
'

test_expect_success ROOT,NETNS,SSHD 'reboot: a machine that comes back on its default kernel is reported naming both releases' '
	touch "$L/dut/standin-boots-default" &&
	test_must_fail boot 6.99.2-klab-fallback >out 2>err &&
	rm -f "$L/dut/standin-boots-default" &&
	test_grep "release=$REL .*wrong_kernel=1 power_cycled=0 fenced=0" out &&
	test_grep "machine .dut. runs kernel .$REL. .*expected .6.99.2-klab-fallback.*came back on another kernel" err &&
	test_grep "did not boot its one-time entry .gnulinux-advanced-$UUID>gnulinux-6.99.2-klab-fallback-advanced-$UUID.: it came back on kernel .$REL." err &&
	test "$(db_machine last_kernel)" = "$REL" &&
	test "$(db_machine "coalesce(state, '"'"'free'"'"')")" != broken
'

test_expect_success ROOT,NETNS,SSHD 'reboot: a failing grub-reboot is a clear error and nothing is rebooted' '
	n=$(reboots) &&
	touch "$L/dut/standin-grub-reboot-fails" &&
	test_must_fail boot 6.99.4-klab-nogrubenv >out 2>err &&
	rm -f "$L/dut/standin-grub-reboot-fails" &&
	test_grep "cannot select the one-time boot entry (grub-reboot) on machine .dut.: .grub-reboot. exited with status 1: grub-reboot: error: cannot open .$B/grub/grubenv.new.: Read-only file system" err &&
	test "$(reboots)" = "$n" &&
	test_grep -v "rebooting into" err &&
	test_grep "wrong_kernel=0 power_cycled=0 fenced=0" out
'

test_expect_success ROOT,NETNS,SSHD 'reboot: a grub.cfg without GRUB_DEFAULT=saved is refused before anything is installed' '
	n=$(reboots) &&
	touch "$L/dut/standin-default-0" &&
	KLAB_LAB_DIR=$L KLAB_LAB_MACHINE=dut "$SB/grub-mkconfig" -o "$B/grub/grub.cfg" &&
	test_must_fail boot 6.99.5-klab-default0 >out 2>err &&
	rm -f "$L/dut/standin-default-0" &&
	KLAB_LAB_DIR=$L KLAB_LAB_MACHINE=dut "$SB/grub-mkconfig" -o "$B/grub/grub.cfg" &&
	test_grep "machine .dut. is not set up for a one-time boot: .$B/grub/grub.cfg. does not default to the saved entry" err &&
	test_grep "GRUB_DEFAULT=saved" err &&
	! test -e "$B/vmlinuz-6.99.5-klab-default0" &&
	test "$(reboots)" = "$n"
'

test_expect_success ROOT,NETNS,SSHD 'reboot: a saved default that would boot the newest kernel is refused before anything is installed' '
	n=$(reboots) && cp "$B/grub/grubenv" grubenv.good &&
	for bad in "" "saved_entry=0" "saved_entry=gnulinux-simple-$UUID"; do
		printf "# GRUB Environment Block\n%s\n" "$bad" >"$B/grub/grubenv" &&
		test_must_fail boot 6.99.7-klab-nosaved >out 2>err &&
		test_grep "machine .dut. has no known-good default kernel: saved_entry in .$B/grub/grubenv. is" err &&
		! test -e "$B/vmlinuz-6.99.7-klab-nosaved" || return 1
	done &&
	cp grubenv.good "$B/grub/grubenv" &&
	test "$(reboots)" = "$n"
'

test_expect_success ROOT,NETNS,SSHD 'reboot: the kernel under test as the saved default is refused; the one-time entry is cleared again' '
	n=$(reboots) && cp "$B/grub/grubenv" grubenv.good &&
	printf "# GRUB Environment Block\nsaved_entry=%s\n" "gnulinux-advanced-$UUID>gnulinux-6.99.8-klab-self-advanced-$UUID" \
		>"$B/grub/grubenv" &&
	test_must_fail boot 6.99.8-klab-self >out 2>err &&
	cp grubenv.good "$B/grub/grubenv" &&
	test_grep "has the kernel under test .6.99.8-klab-self. as its saved default entry" err &&
	test "$(reboots)" = "$n"
'

test_expect_success ROOT,NETNS,SSHD 'reboot: a reboot command that does not take the machine down: the one-time entry is cleared' '
	reboot_conf rn.conf &&
	printf "#!/bin/sh\nexit 0\n" >"$SCRATCH/noop-reboot" && chmod +x "$SCRATCH/noop-reboot" &&
	sed -i "s|reboot_cmd = .*|reboot_cmd = $SCRATCH/noop-reboot|" rn.conf &&
	CONF=rn.conf test_must_fail boot 6.99.10-klab-stays --down-ms 3000 >out 2>err &&
	test_grep "one-time boot entry cleared after the failure" err &&
	test_grep "^editenv unset next_entry\$" "$L/dut/boot-standin.log" &&
	! grep -q "^next_entry=" "$B/grub/grubenv" &&
	test_grep "saved_entry=gnulinux-advanced-$UUID>gnulinux-$REL-advanced-$UUID" "$B/grub/grubenv"
'

test_expect_success ROOT,NETNS,SSHD 'reboot: a reboot_cmd the machine does not have is refused before anything is installed' '
	reboot_conf rx.conf &&
	sed -i "s|reboot_cmd = .*|reboot_cmd = $SCRATCH/no-such-reboot now|" rx.conf &&
	CONF=rx.conf && test_must_fail boot 6.99.9-klab-noreboot >out 2>err &&
	test_grep "machine .dut. has no .$SCRATCH/no-such-reboot. to reboot with (its reboot_cmd)" err &&
	! test -e "$B/vmlinuz-6.99.9-klab-noreboot"
'

test_expect_success ROOT,NETNS,SSHD 'reboot: a hostile release reaches the far side as one argument' '
	home=$(getent passwd root | cut -d: -f6) &&
	rm -f "$home/klab-canary-t0304" &&
	boot "6.99.6-klab;\$(touch\${IFS}klab-canary-t0304)" >out 2>err &&
	test_grep "wrong_kernel=0" out &&
	test -e "$B/vmlinuz-6.99.6-klab;\$(touch\${IFS}klab-canary-t0304)" &&
	! test -e "$home/klab-canary-t0304"
'

test_expect_success ROOT,NETNS,SSHD 'reboot: in an Ubuntu-style grub.cfg the release is found in its submenu, not its recovery entry nor a longer release' '
	echo "$SRCDIR/tests/data/deploy/grub-ubuntu.cfg" >"$L/dut/standin-cfg" &&
	boot 5.15.0-91-generic >out 2>err &&
	rm -f "$L/dut/standin-cfg" &&
	test_grep "wrong_kernel=0" out &&
	test_grep "^grub-reboot --boot-directory=$B gnulinux-advanced-5d2b0c6e-0b8a-4d4e-9d51-7b1c0e3f2a11>gnulinux-5.15.0-91-generic-advanced-5d2b0c6e-0b8a-4d4e-9d51-7b1c0e3f2a11\$" \
		"$L/dut/boot-standin.log" &&
	test_grep "(Advanced options for Ubuntu>Ubuntu, with Linux 5.15.0-91-generic)" err
'

test_expect_success ROOT,NETNS,SSHD 'reboot: a grub.cfg of BootLoaderSpec entries (Fedora) is reported, nothing rebooted' '
	n=$(reboots) &&
	echo "$SRCDIR/tests/data/deploy/grub-fedora-bls.cfg" >"$L/dut/standin-cfg" &&
	test_must_fail boot 6.99.8-klab-bls >out 2>err;
	rc=$?; rm -f "$L/dut/standin-cfg"; KLAB_LAB_DIR=$L KLAB_LAB_MACHINE=dut "$SB/grub-mkconfig" -o "$B/grub/grub.cfg" &&
	test $rc = 0 &&
	test_grep "no boot entry for kernel .6.99.8-klab-bls. in .$B/grub/grub.cfg. on machine .dut. after grub-mkconfig (it boots BootLoaderSpec entries, which klab does not write)" err &&
	test "$(reboots)" = "$n"
'

test_expect_success ROOT,NETNS,SSHD 'reboot: a machine that never comes back is fenced after its power_cycle stand-in' '
	reboot_conf rf.conf "power_cycle = $SRCDIR/tests/data/ssh/power-cycle-standin.sh $L dut" &&
	rm -f "$L/dut/power-cycle.log" &&
	touch "$L/dut/standin-no-return" &&
	start=$(date +%s) &&
	test_must_fail "$T" -c rf.conf -m dut boot --release 6.99.7-klab-hang --image "$SCRATCH/art/bzImage" \
		--db "$DB" --boot-ms 4000 --attempt-ms 2000 >out 2>err &&
	test $(( $(date +%s) - start )) -lt 90 &&
	test_grep "power_cycled=1 fenced=1" out &&
	test_grep "^power cycle" "$L/dut/power-cycle.log" &&
	test_grep "^down for good" "$L/dut/boot-standin.log" &&
	test_grep "machine .dut. is fenced (state broken): did not answer SSH within 4 s of booting 6.99.7-klab-hang, nor after its power_cycle command" err &&
	test "$(db_machine state)" = broken &&
	rm -f "$L/dut/standin-no-return" &&
	"$SRCDIR/tests/data/ssh/lab-sshd.sh" start "$L" dut
'

test_done
