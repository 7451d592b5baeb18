#!/bin/bash
test_description='SFTP upload/download with sha256 checked on the far side, resume, agent deployment and calls'
. "$(dirname "$0")/lib.sh"

L=$SCRATCH/lab
T=$KLAB_BUILD/tests/orch-ssh
R=$SCRATCH/remote		# the namespace shares our file system: "remote" paths land here
test_cleanup '"$KLAB" lab down --dir "$L"'

test_expect_success ROOT,NETNS,SSHD 'set up a netns lab' '
	test -x "$T" &&
	"$KLAB" lab up --netns --dir "$L" --index auto >up.out &&
	mkdir -p "$R"
'
# by index too: when every test passed, test_done removes $SCRATCH (and the lab's state) first
K=$(sed -n 's/^netns lab \([0-9]*\) up.*/\1/p' up.out 2>/dev/null)
[ -n "$K" ] && test_cleanup "'$KLAB' lab down --dir '$L' --index $K"

test_expect_success ROOT,NETNS,SSHD 'a 200 MB upload arrives with the right sha256' '
	head -c 200000000 /dev/urandom >big &&
	"$T" -c "$L/klab.conf" -m dut upload "$SCRATCH/big" "$R/big" >out 2>err &&
	test_grep "uploaded in" out &&
	test "$(sha256sum <big)" = "$(sha256sum <"$R/big")" &&
	! test -e "$R/big.klab-part-dut" &&
	test_grep "uploading to dut: 190 of 190 MiB (100%" err
'

test_expect_success ROOT,NETNS,SSHD 'an upload replaces the old file whole' '
	echo old >"$R/small" &&
	head -c 1000 /dev/urandom >small &&
	"$T" -c "$L/klab.conf" -m dut upload "$SCRATCH/small" "$R/small" &&
	cmp small "$R/small"
'

test_expect_success ROOT,NETNS,SSHD 'sizes around the sha256 block boundaries upload and verify' '
	for n in 0 1 55 56 64 119 1048577; do
		head -c $n /dev/urandom >f$n &&
		"$T" -c "$L/klab.conf" -m dut upload "$SCRATCH/f$n" "$R/f$n" &&
		cmp f$n "$R/f$n" || return 1
	done
'

test_expect_success ROOT,NETNS,SSHD 'an interrupted upload resumes from a matching partial file' '
	head -c 50000000 big >"$R/big2.klab-part-dut" &&
	"$T" -c "$L/klab.conf" -m dut upload "$SCRATCH/big" "$R/big2" >out 2>err &&
	test_grep "resuming the upload of .* at 50000000 bytes" err &&
	cmp big "$R/big2"
'

test_expect_success ROOT,NETNS,SSHD 'a partial file that is not a prefix is started over' '
	head -c 1000 /dev/urandom >"$R/big3.klab-part-dut" &&
	"$T" -c "$L/klab.conf" -m dut upload "$SCRATCH/small" "$R/big3" 2>err &&
	! grep -q resuming err &&
	cmp small "$R/big3"
'

test_expect_success ROOT,NETNS,SSHD 'uploading to a folder that does not exist fails clearly and leaves nothing' '
	test_must_fail "$T" -c "$L/klab.conf" -m dut upload "$SCRATCH/small" "$R/nope/x" 2>err &&
	test_grep "cannot open .*nope/x.klab-part-dut. on machine .dut.: no such file" err
'

test_expect_success ROOT,NETNS,SSHD 'download checks the sha256 and renames into place' '
	"$T" -c "$L/klab.conf" -m dut download "$R/big" "$SCRATCH/back" &&
	cmp big back && ! test -e back.klab-part &&
	test_must_fail "$T" -c "$L/klab.conf" -m dut download "$R/missing" "$SCRATCH/m" 2>err &&
	test_grep "no such file" err && ! test -e m
'

test_expect_success ROOT,NETNS,SSHD 'the agent is uploaded only when its sha256 differs' '
	printf "#!/bin/sh\necho agent-v1 \"\$@\"\n" >agent && chmod +x agent &&
	"$T" -c "$L/klab.conf" -m dut agent-deploy "$SCRATCH/agent" "$R/opt/klab-agent" >out &&
	test_grep "uploaded=1" out && test -x "$R/opt/klab-agent" &&
	before=$(stat -c %Y.%i "$R/opt/klab-agent") &&
	"$T" -c "$L/klab.conf" -m dut agent-deploy "$SCRATCH/agent" "$R/opt/klab-agent" >out &&
	test_grep "uploaded=0" out &&
	test "$(stat -c %Y.%i "$R/opt/klab-agent")" = "$before" &&
	printf "#!/bin/sh\necho agent-v2 \"\$@\"\n" >agent &&
	"$T" -c "$L/klab.conf" -m dut agent-deploy "$SCRATCH/agent" "$R/opt/klab-agent" >out &&
	test_grep "uploaded=1" out && cmp agent "$R/opt/klab-agent"
'

test_expect_success ROOT,NETNS,SSHD 'agent_exec passes argv and stdin JSON and returns stdout' '
	"$T" -c "$L/klab.conf" -m dut agent-call "$R/opt/klab-agent" -- sysinfo "a b" >out &&
	test "$(cat out)" = "agent-v2 sysinfo a b" &&
	echo "{\"spec_version\": 1}" >spec.json &&
	"$T" -c "$L/klab.conf" -m dut agent-call --stdin spec.json /bin/cat >out &&
	cmp spec.json out &&
	test_must_fail "$T" -c "$L/klab.conf" -m dut agent-call /bin/sh -- -c "echo bad spec >&2; exit 3" 2>err &&
	test_grep "klab-agent -c failed on machine .dut. (exit status 3: bad spec)" err
'

# A sync stand-in first in the dut's sshd PATH: it logs its arguments and then
# flushes for real, or fails when the "fail" flag file exists.
test_expect_success ROOT,NETNS,SSHD 'the upload is flushed to disk (file and folder) before it replaces the target' '
	mkdir -p syncbin &&
	printf "%s\n" "#!/bin/sh" "echo \"\$@\" >>$SCRATCH/sync.log" \
		"[ -e $SCRATCH/sync.fail ] && { echo \"sync: stand-in refuses\" >&2; exit 1; }" \
		"exec /bin/sync \"\$@\"" >syncbin/sync && chmod +x syncbin/sync &&
	sed -i "s|^SetEnv |SetEnv PATH=$SCRATCH/syncbin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin |" \
		"$L/dut/sshd_config" &&
	"$SRCDIR/tests/data/ssh/lab-sshd.sh" stop "$L" dut && "$SRCDIR/tests/data/ssh/lab-sshd.sh" start "$L" dut &&
	head -c 3000000 /dev/urandom >synced &&
	"$T" -c "$L/klab.conf" -m dut upload "$SCRATCH/synced" "$R/synced" &&
	cmp synced "$R/synced" &&
	test_grep "^-- $R/synced.klab-part-dut\$" sync.log &&
	test_grep "^-- $R\$" sync.log
'

test_expect_success ROOT,NETNS,SSHD 'a far side that cannot flush: a clear error, and the old target stays' '
	echo old >"$R/kept" && : >sync.fail &&
	test_must_fail "$T" -c "$L/klab.conf" -m dut upload "$SCRATCH/synced" "$R/kept" 2>err &&
	test_grep "cannot flush the upload .*kept.klab-part-dut. to disk on machine .dut." err &&
	test_grep "stand-in refuses" err &&
	test "$(cat "$R/kept")" = old &&
	rm sync.fail
'

test_done
