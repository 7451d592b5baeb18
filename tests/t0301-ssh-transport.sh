#!/bin/bash
test_description='ssh transport against real sshd in a netns lab: host keys, key auth, exact argv, timeouts, dropped connections'
. "$(dirname "$0")/lib.sh"

L=$SCRATCH/lab
T=$KLAB_BUILD/tests/orch-ssh
S=$SRCDIR/tests/data/ssh
test_cleanup '"$KLAB" lab down --dir "$L"; test -f "$SCRATCH/agent-cleanup" && sh "$SCRATCH/agent-cleanup"'

# a config of our own: the lab machines, our own known_hosts and db
mkconf() {	# mkconf FILE KNOWN_HOSTS KEY
	sed -e "s|^\tknown_hosts = .*|\tknown_hosts = $2|" -e "s|^\tssh_key = .*|\tssh_key = $3|" \
		-e "s|^\[lab\]|[lab]\n\tdb = $SCRATCH/klab.db|" "$L/klab.conf" >"$1"
}

test_expect_success ROOT,NETNS,SSHD 'set up a netns lab' '
	test -x "$T" &&
	"$KLAB" lab up --netns --dir "$L" --index auto >up.out &&
	K=$(sed -n "s/^netns lab \([0-9]*\) up.*/\1/p" up.out) && test -n "$K"
'
# the lab index --index auto chose, and so the address of dut
K=$(sed -n 's/^netns lab \([0-9]*\) up.*/\1/p' up.out 2>/dev/null)
DUT=198.18.255.$((8 * ${K:-0} + 2))
# by index too: when every test passed, test_done removes $SCRATCH (and the lab's state) first
[ -n "$K" ] && test_cleanup "'$KLAB' lab down --dir '$L' --index $K"

test_expect_success ROOT,NETNS,SSHD 'the lab config connects (host key known, key accepted)' '
	"$T" -c "$L/klab.conf" -m dut connect >out &&
	test_grep "connected to dut" out
'

test_expect_success ROOT,NETNS,SSHD 'an unknown host is refused, with a hint to trust it' '
	mkconf k1.conf "$SCRATCH/kh1" "$L/keys/id_ed25519" &&
	test_must_fail "$T" -c k1.conf -m dut connect 2>err &&
	test_grep "machine .dut. ($DUT:22) is not in known_hosts" err &&
	test_grep "klab machine trust dut" err &&
	test_grep "SHA256:" err
'

test_expect_success ROOT,NETNS,SSHD 'klab machine trust records the key; then the host is accepted' '
	fp=$(ssh-keygen -lf "$L/dut/ssh_host_ed25519_key.pub" | cut -d" " -f2) &&
	test_must_fail "$KLAB" --config k1.conf machine trust dut --fingerprint SHA256:wrong 2>err &&
	test_grep "not the expected SHA256:wrong" err &&
	! test -s "$SCRATCH/kh1" &&
	"$KLAB" --config k1.conf machine trust dut >out &&
	test_grep "trusted machine .dut." out && test_grep "$fp" out &&
	test_grep "^$DUT ssh-ed25519 " "$SCRATCH/kh1" &&
	"$KLAB" --config k1.conf machine trust dut >out &&
	test_grep "already trusted" out &&
	test $(wc -l <"$SCRATCH/kh1") = 1 &&
	"$T" -c k1.conf -m dut connect
'

test_expect_success ROOT,NETNS,SSHD 'a hashed known_hosts entry is accepted' '
	cp "$SCRATCH/kh1" "$SCRATCH/khh" && ssh-keygen -H -f "$SCRATCH/khh" >/dev/null 2>&1 &&
	test_grep "^|1|" "$SCRATCH/khh" && ! grep -q 198.18 "$SCRATCH/khh" &&
	mkconf kh.conf "$SCRATCH/khh" "$L/keys/id_ed25519" &&
	"$T" -c kh.conf -m dut connect
'

test_expect_success ROOT,NETNS,SSHD 'a host key mismatch is refused naming the host and both fingerprints' '
	want=$(ssh-keygen -lf "$L/dut/ssh_host_ed25519_key.pub" | cut -d" " -f2) &&
	other=$(ssh-keygen -lf "$L/peer/ssh_host_ed25519_key.pub" | cut -d" " -f2) &&
	echo "$DUT $(cut -d" " -f1,2 "$L/peer/ssh_host_ed25519_key.pub")" >"$SCRATCH/kh2" &&
	mkconf k2.conf "$SCRATCH/kh2" "$L/keys/id_ed25519" &&
	test_must_fail "$T" -c k2.conf -m dut connect 2>err &&
	test_grep "host key of machine .dut. ($DUT:22) does not match" err &&
	test_grep "$want" err && test_grep "$other" err &&
	test_must_fail "$KLAB" --config k2.conf machine trust dut 2>err &&
	test_grep "$other" err &&
	test $(wc -l <"$SCRATCH/kh2") = 1
'

test_expect_success ROOT,NETNS,SSHD 'a wrong client key is refused' '
	ssh-keygen -q -t ed25519 -N "" -f "$SCRATCH/wrongkey" &&
	mkconf k3.conf "$L/known_hosts" "$SCRATCH/wrongkey" &&
	test_must_fail "$T" -c k3.conf -m dut connect 2>err &&
	test_grep "refused public key authentication of user .root. with key" err &&
	mkconf k4.conf "$L/known_hosts" "$SCRATCH/no-such-key" &&
	test_must_fail "$T" -c k4.conf -m dut connect 2>err &&
	test_grep "cannot read ssh key" err
'

test_expect_success ROOT,NETNS,SSHD 'without a key file, the keys of ssh-agent are used' '
	eval "$(ssh-agent -s)" >/dev/null &&
	echo "kill $SSH_AGENT_PID" >>"$SCRATCH/agent-cleanup" &&
	ssh-add -q "$L/keys/id_ed25519" 2>/dev/null &&
	grep -v "ssh_key = " "$L/klab.conf" >ka.conf &&
	"$T" -c ka.conf -m dut connect >out &&
	test_grep "connected to dut" out &&
	ssh-add -q -D 2>/dev/null &&
	test_must_fail "$T" -c ka.conf -m dut connect 2>err &&
	test_grep "with the keys of ssh-agent" err &&
	kill $SSH_AGENT_PID &&
	unset SSH_AUTH_SOCK &&
	test_must_fail "$T" -c ka.conf -m dut connect 2>err &&
	test_grep "no ssh key for machine .dut." err
'

test_expect_success ROOT,NETNS,SSHD 'hostile arguments arrive as the exact argv and run nothing' '
	canary=$SCRATCH/canary &&
	"$T" -c "$L/klab.conf" -m dut exec --out got -- printf "%s\0" \
		"it'"'"'s" "\$(touch $canary)" "\`touch $canary\`" "; touch $canary" "a
b" "" "*" "\\" "\"q\"" "| touch $canary" "&& touch $canary" "\$HOME" >out &&
	test_grep "rc=0 status=0" out &&
	printf "%s\0" "it'"'"'s" "\$(touch $canary)" "\`touch $canary\`" "; touch $canary" "a
b" "" "*" "\\" "\"q\"" "| touch $canary" "&& touch $canary" "\$HOME" >want &&
	cmp want got &&
	! test -e "$canary"
'

test_expect_success ROOT,NETNS,SSHD 'stdin data, stderr and the exit status come back' '
	head -c 300000 /dev/urandom >in.bin &&
	"$T" -c "$L/klab.conf" -m dut exec --stdin in.bin --out out.bin -- cat >out &&
	cmp in.bin out.bin &&
	"$T" -c "$L/klab.conf" -m dut exec -- sh -c "echo oops >&2; exit 7" >out 2>err &&
	test_grep "status=7" out && test_grep oops err
'

test_expect_success ROOT,NETNS,SSHD 'a command timeout is reported and stops the remote command' '
	start=$(date +%s) &&
	test_must_fail "$T" -c "$L/klab.conf" -m dut exec --timeout 1500 -- sh -c "sleep 30; touch $SCRATCH/late" >out 2>err &&
	test_grep "timed_out=1" out &&
	test_grep "timed out after 1500 ms" err &&
	test $(( $(date +%s) - start )) -lt 15 &&
	sleep 4 && ! test -e "$SCRATCH/late"
'

test_expect_success ROOT,NETNS,SSHD 'sshd killed mid-exec: a clear error, and a retry succeeds once sshd is back' '
	rm -f flag &&
	("$T" -c "$L/klab.conf" -m dut drop-retry --wait 30000 --out dr.out -- \
		sh -c "if [ -e $SCRATCH/flag ]; then echo second run; else touch $SCRATCH/flag; sleep 30; fi" \
		>dr.log 2>dr.err; echo "exit=$?" >>dr.log) &
	drpid=$! &&
	test_wait_until 10 "test -e flag" &&
	"$S/lab-sshd.sh" stop "$L" dut &&
	sleep 2 &&
	"$S/lab-sshd.sh" start "$L" dut &&
	wait $drpid &&
	cat dr.log dr.err &&
	test_grep "dropped on attempt 1" dr.log &&
	test_grep "lost the connection to machine .dut. ($DUT:22) while running .sh." dr.err &&
	test_grep "reconnect and retry" dr.err &&
	test_grep "rc=0 status=0 .*attempt=2" dr.log &&
	test_grep "exit=0" dr.log &&
	test "$(cat dr.out)" = "second run"
'

test_expect_success ROOT,NETNS,SSHD 'klab machine drain/undrain/show/machines' '
	"$KLAB" --config k1.conf machine drain dut --reason "fan noise" >out &&
	"$KLAB" --config k1.conf machine show dut >show &&
	test_grep "state       drained since .*: fan noise" show &&
	"$KLAB" --config k1.conf --json machines >m.json &&
	python3 -c "
import json; d={m[\"name\"]: m for m in json.load(open(\"m.json\"))}
assert d[\"dut\"][\"state\"] == \"drained\" and d[\"dut\"][\"state_reason\"] == \"fan noise\", d
assert d[\"peer\"][\"state\"] == \"free\"" &&
	"$KLAB" --config k1.conf machine undrain dut &&
	"$KLAB" --config k1.conf machines >list &&
	test_grep "^dut .* free" list
'

test_done
