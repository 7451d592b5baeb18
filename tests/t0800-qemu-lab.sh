#!/bin/bash
test_description='qemu lab: up boots dut and peer from a klab-built kernel, ssh and the workload link work, status, down'
. "$(dirname "$0")/lib.sh"

# a qemu lab index of its own (tests/lib.sh), so that labs of tests running at once never collide
test_qemu_lab_index
L=$SCRATCH/lab
ssh_g() {	# ssh_g PORT CMD...: OpenSSH with the lab's key and known_hosts only
	local port=$1; shift
	timeout 30 ssh -F /dev/null -o BatchMode=yes -o StrictHostKeyChecking=yes \
		-o UserKnownHostsFile="$L/known_hosts" -o ConnectTimeout=10 \
		-i "$L/keys/id_ed25519" -p "$port" root@127.0.0.1 "$@"
}
port_of() { sed -n "s/^$1.ssh_port=//p" "$L/lab.state"; }
pid_of() { sed -n "s/^$1.pid=//p" "$L/lab.state"; }

cat >klab.conf <<EOF
[lab]
	db = $SCRATCH/klab.db
	artifact_dir = $SCRATCH/artifacts
	work_dir = $SCRATCH/work
EOF
test_cleanup '"$KLAB" lab down --qemu --dir "$L"'

test_expect_success 'lab up --qemu needs a kernel, and checks its options' '
	test_expect_code 2 "$KLAB" lab up --qemu --dir "$L" 2>err &&
	test_grep "give the kernel to boot" err &&
	test_expect_code 2 "$KLAB" lab up --qemu --kernel /nonexistent --smp 99 2>err &&
	test_grep "option .--smp.: .99. is not a number from 1 to 8" err &&
	test_expect_code 2 "$KLAB" lab up --qemu --kernel /x --bogus 2>err &&
	test_grep "unknown option .--bogus." err &&
	test_must_fail "$KLAB" lab up --qemu --kernel /nonexistent --dir "$L" 2>err &&
	test_grep "kernel image ./nonexistent. not found" err &&
	test_expect_code 2 "$KLAB" lab down --qemu --smp 2 2>err &&
	test_grep "only for .klab lab up --qemu." err &&
	! test -e "$L"
'

test_expect_success 'status and down of a folder without a lab' '
	test_expect_code 1 "$KLAB" lab status --qemu --dir "$L" >out &&
	test_grep "no qemu lab" out &&
	"$KLAB" lab down --qemu --dir "$L" >out &&
	test_grep "nothing to stop" out
'

test_expect_success 'a folder that holds something else is refused' '
	mkdir other && echo x >other/file &&
	test_must_fail "$KLAB" lab up --qemu --kernel "$KLAB" --dir other 2>err &&
	test_grep "is not a klab qemu lab" err &&
	test -f other/file
'

test_expect_success KBUILD 'klab kernels build makes the baseline kernel (ccache, shared build folder)' '
	"$KLAB" --json kernels build --tree linux-source-6.1 --variant base >k.json &&
	python3 -c "import json; d=json.load(open(\"k.json\")); print(d[\"id\"]); print(d[\"release\"]); print(d[\"image\"]); print(d[\"build_id\"])" >k.txt &&
	test -s k.txt
'
KID=$(sed -n 1p k.txt 2>/dev/null)
KREL=$(sed -n 2p k.txt 2>/dev/null)
KIMG=$(sed -n 3p k.txt 2>/dev/null)
KBID=$(sed -n 4p k.txt 2>/dev/null)

test_expect_success ROOT,QEMU,KBUILD 'lab up --qemu boots dut and peer and waits for ssh' '
	"$KLAB" lab up --qemu --kernel-id "$KID" --dir "$L" --index $K --timeout 600 >out &&
	cat out &&
	test_grep "dut answers over ssh" out && test_grep "peer answers over ssh" out &&
	test_grep "qemu lab $K up" out &&
	kill -0 "$(pid_of dut)" && kill -0 "$(pid_of peer)" &&
	test -f "$L/keys/id_ed25519" && test -f "$L/keys/host_dut" &&
	test_grep "GUEST-READY dut" "$L/dut.console"
'

test_expect_success ROOT,QEMU,KBUILD 'known_hosts was written before boot; OpenSSH checks it strictly' '
	test $(wc -l <"$L/known_hosts") = 2 &&
	test_grep "^\[127.0.0.1\]:$(port_of dut) ssh-ed25519 " "$L/known_hosts" &&
	ssh_g "$(port_of dut)" hostname >h1 && test "$(cat h1)" = dut &&
	ssh_g "$(port_of peer)" hostname >h2 && test "$(cat h2)" = peer &&
	ssh_g "$(port_of dut)" uname -r >rel && test "$(cat rel)" = "$KREL" &&
	sed "s/ssh-ed25519 [^ ]*/ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl/" \
		"$L/known_hosts" >bad_known_hosts &&
	test_must_fail timeout 30 ssh -F /dev/null -o BatchMode=yes -o StrictHostKeyChecking=yes \
		-o UserKnownHostsFile=bad_known_hosts -i "$L/keys/id_ed25519" \
		-p "$(port_of dut)" root@127.0.0.1 true 2>err &&
	grep -i "host key" err
'

test_expect_success ROOT,QEMU,KBUILD 'the guest sees the host root read-only under a private writable overlay' '
	echo "host-$$" >"$SCRATCH/marker" &&
	ssh_g "$(port_of dut)" cat "$SCRATCH/marker" >m && test "$(cat m)" = "host-$$" &&
	ssh_g "$(port_of dut)" "echo guest >$SCRATCH/guest-wrote && cat /proc/mounts" >mounts &&
	! test -e "$SCRATCH/guest-wrote" &&
	test_grep "^overlay / overlay" mounts &&
	test_grep " 9p " mounts &&
	ssh_g "$(port_of dut)" "command -v kexec && test -d /sys/kernel/tracing/events" >kx &&
	test_grep "kexec" kx
'

test_expect_success ROOT,QEMU,KBUILD 'the workload link joins the guests (udp-rr from dut to peer)' '
	ssh_g "$(port_of dut)" ip -4 addr show eth1 >a1 && test_grep "inet 198.18.$((100 + K)).1/24" a1 &&
	ssh_g "$(port_of peer)" ip -4 addr show eth1 >a2 && test_grep "inet 198.18.$((100 + K)).2/24" a2 &&
	# the server says ready on its fd 3, which the guest shell points at stderr
	{ ssh_g "$(port_of peer)" timeout 20 "$KLAB_UDP_RR" server --addr 198.18.$((100 + K)).2 \
		--port 7700 --duration 12 --ready-fd 3 "3>&2" >server.json 2>server.err & } &&
	spid=$! && wait_ready server.err 30 $spid &&
	ssh_g "$(port_of dut)" "$KLAB_UDP_RR" client --addr 198.18.$((100 + K)).2 --port 7700 \
		--flows 4 --duration 3 --warmup 1 >client.json &&
	wait $spid &&
	python3 -c "
import json, sys
c = json.load(open(\"client.json\")); s = json.load(open(\"server.json\"))
print(c[\"transactions\"], c[\"tps\"], s[\"received\"])
sys.exit(0 if c[\"transactions\"] > 0 and s[\"received\"] >= c[\"total\"][\"transactions\"] else 1)"
'

test_expect_success ROOT,QEMU,KBUILD 'the fragment names dut and peer (boot = kexec) and loads' '
	test_grep "\[machine \"dut\"\]" "$L/klab.conf" &&
	test_grep "boot = kexec" "$L/klab.conf" &&
	test_grep "port = $(port_of peer)" "$L/klab.conf" &&
	test_grep "known_hosts = $L/known_hosts" "$L/klab.conf" &&
	printf "[include]\n\tpath = %s\n" "$L/klab.conf" >>klab.conf &&
	"$KLAB" config check klab.conf
'

# shared_root: guest-init binds the 9p root (the host's /, read-only) at /run/klab/host, and the
# deploy kexecs the artifact from there (t0303 covers the fallback to the upload).
test_expect_success ROOT,QEMU,KBUILD 'the dut kexecs its kernel from the host'\''s artifact store through the 9p root: nothing uploaded' '
	test_grep "shared_root = /run/klab/host" "$L/klab.conf" &&
	img=$(readlink -f "$KIMG") && test -f "$img" &&
	ssh_g "$(port_of dut)" "sha256sum /run/klab/host$img; cat /proc/sys/kernel/random/boot_id;
		touch /run/klab/host$SCRATCH/guest-wrote-ro" >g1 2>g1.err;
	test_grep "Read-only file system" g1.err && ! test -e "$SCRATCH/guest-wrote-ro" &&
	test "$(sed -n 1p g1 | cut -c1-64)" = "$(sha256sum "$img" | cut -c1-64)" &&
	"$KLAB_BUILD/tests/orch-ssh" -c klab.conf -m dut boot --release "$KREL" --build-id "$KBID" --image "$KIMG" \
		--boot-ms 600000 --progress >out 2>err &&
	cat err &&
	test_grep "release=$KREL build_id=$KBID wrong_kernel=0 power_cycled=0 fenced=0" out &&
	test_grep "machine .dut.: loaded $KREL from the shared root (/run/klab/host$img, sha256 [0-9a-f]\{12\} checked there): nothing uploaded" err &&
	! test_grep "upload bzImage" err &&
	ssh_g "$(port_of dut)" cat /proc/sys/kernel/random/boot_id >b2 &&
	test "$(cat b2)" != "$(sed -n 2p g1)"
'

# A connection the deploy gave up on while the guest was down is not dropped by
# qemu's user networking: it reaches the next boot's sshd 15-18 s later, in the
# middle of the first runs (30 M instructions; 13-27 s after a deploy of 13 s
# here, so the test waits 20 s). The deploy asks the kernel on
# boot_probe_port (a closed port) first and never leaves one (docs/qemu-icount.md).
test_expect_success ROOT,QEMU,KBUILD 'the kexec left no connection behind for the new boot'"'"'s sshd' '
	port=$(sed -n "/machine \"dut\"/,/^\[/s/.*boot_probe_port = //p" "$L/klab.conf") &&
	test -n "$port" &&
	python3 -c "
import socket, sys, time
s = socket.create_connection((\"127.0.0.1\", int(sys.argv[1]))); s.settimeout(10); t = time.time()
sys.exit(0 if s.recv(16) == b\"\" and time.time() - t < 5 else 1)" "$port" &&
	sleep 20 &&
	ssh_g "$(port_of dut)" cat /run/ssh/sshd.log >sshd.log &&
	cat sshd.log &&
	! grep -E "kex_exchange_identification|Connection closed by .*preauth|Did not receive identification|dispatch_protocol_error" sshd.log
'

test_expect_success ROOT,QEMU,KBUILD 'status shows both guests running their kernel; --json too' '
	"$KLAB" lab status --qemu --dir "$L" >st &&
	test_grep "^dut .*running.*$KREL" st && test_grep "^peer .*running" st &&
	"$KLAB" --json lab status --qemu --dir "$L" >st.json &&
	python3 -c "
import json
d = json.load(open(\"st.json\"))
assert [g[\"running\"] for g in d[\"guests\"]] == [True, True], d
assert d[\"guests\"][0][\"release\"] == \"$KREL\", d"
'

test_expect_success ROOT,QEMU,KBUILD 'a second lab up on the same folder is refused' '
	test_must_fail "$KLAB" lab up --qemu --kernel-id "$KID" --dir "$L" 2>err &&
	test_grep "already up" err
'

test_expect_success ROOT,QEMU,KBUILD 'down kills both qemus by pid and removes the folder' '
	p1=$(pid_of dut) p2=$(pid_of peer) &&
	"$KLAB" lab down --qemu --dir "$L" >out &&
	test_grep "stopped" out &&
	! test -e "$L" &&
	test_wait_until 5 "! kill -0 $p1 2>/dev/null && ! kill -0 $p2 2>/dev/null"
'

test_done
