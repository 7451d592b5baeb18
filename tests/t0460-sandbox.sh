#!/bin/bash
test_description='a hostile patch builds in the sandbox: no write outside the build folder, no SSH key or config, no network; bwrap or user missing is an error, never root'
. "$(dirname "$0")/lib.sh"

# A small kernel-like tree stands in for linux (its Makefile answers
# tinyconfig, olddefconfig and bzImage the way kbuild does, with O=), so
# that the commands klab runs are the real ones (git am, make in bwrap as
# the sandbox user) in seconds; t0450 builds the real kernel the same way.
# The series adds a Makefile hunk that tries what a hostile patch would:
# write /etc and the tree's parent folder, read the configured SSH key and
# the config (a BMC password in it), connect to a listener this test runs
# on 127.0.0.1, and report its uid. Each attempt prints what happened.
export KLAB_KERNEL_CACHE=$SCRATCH/kcache KLAB_DB=$SCRATCH/klab.db
GIT="git -c user.name=t -c user.email=t@t"
PWN=/etc/klab-pwned-$$
test_cleanup "rm -f $PWN"
# Made here, not in a test: a test runs in a subshell, where test_cleanup is lost.
TMPCLONE=$(mktemp -d /tmp/klab-t0460.XXXXXX) || { echo "Bail out! cannot make a folder under /tmp"; exit 1; }
test_cleanup "rm -rf $TMPCLONE"
test_cleanup 'test -s "$SCRATCH/modes/klabd.pid" && kill $(cat "$SCRATCH/modes/klabd.pid")'

mkpatch() {	# mkpatch DIR SUBJECT: an mbox patch turning toy/Makefile into DIR/Makefile
	printf "From 0 Mon Sep 17 00:00:00 2001\nFrom: Mallory <m@example.org>\nSubject: [PATCH] %s\n\nFaster.\n\nSigned-off-by: Mallory <m@example.org>\n---\n" "$2"
	diff -u toy/Makefile "$1/Makefile" | sed -e "1s|^--- .*|--- a/Makefile|" -e "2s|^+++ .*|+++ b/Makefile|"
}

test_have_prereq ROOT && command -v bwrap >/dev/null && getent passwd klab >/dev/null && test_set_prereq SANDBOX

test_expect_success 'setup: a kernel-like tree, a secret key and config, a listener, the hostile series' '
	mkdir -p toy secrets &&
	cat >toy/Makefile <<-\EOF &&
	# a kernel-like tree: kbuild targets, O= for the build folder
	.RECIPEPREFIX = >
	O ?= .
	LOCALVERSION ?=
	tinyconfig:
	>echo CONFIG_TOY=y >$(O)/.config
	olddefconfig:
	>test -f $(O)/.config
	bzImage:
	>mkdir -p $(O)/arch/x86/boot $(O)/include/config
	>printf "toy kernel\n" >$(O)/arch/x86/boot/bzImage
	>printf "ffffffff81000000 T _stext\n" >$(O)/System.map
	>echo 6.1.0$(LOCALVERSION) >$(O)/include/config/kernel.release
	EOF
	(cd toy && $GIT init -q -b main && $GIT add . && $GIT commit -q -m base) &&
	echo "KEY-MARKER-$$" >secrets/id_test && chmod 0644 secrets/id_test &&
	: >secrets/known_hosts &&
	port=$(test_free_port) && echo $port >port &&
	cat >listener.py <<-\EOF &&
	import socket, sys, time
	s = socket.socket()
	s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
	s.bind(("127.0.0.1", int(sys.argv[1])))
	s.listen(8)
	s.settimeout(1)
	open("listener.ready", "w").write("ready\n")
	end = time.time() + 300
	while time.time() < end:
	    try:
	        c, a = s.accept()
	    except socket.timeout:
	        continue
	    open("connections", "a").write("%s\n" % (a,))
	    c.close()
	EOF
	{ python3 listener.py $port >listener.log 2>&1 & } &&
	echo $! >listener.pid &&
	test_cleanup "kill $(cat listener.pid)" &&
	test_wait_until 10 "test -f listener.ready" &&
	python3 -c "import socket,sys; socket.create_connection((\"127.0.0.1\", int(sys.argv[1])), 2).close()" $port &&
	test_wait_until 10 "test -s connections" && : >connections &&
	cat >klab.conf <<-EOF &&
	[lab]
		db = $SCRATCH/klab.db
		artifact_dir = $SCRATCH/artifacts
		ssh_key = $SCRATCH/secrets/id_test
		known_hosts = $SCRATCH/secrets/known_hosts
	[machine "dut1"]
		host = 198.18.0.1
		role = dut
		power_cycle = ipmitool -H bmc1 -P BMC-MARKER-$$ chassis power cycle
	[tree "toy"]
		git = $SCRATCH/toy
		branch = main
		config_base = tinyconfig
		localversion = -toy
	EOF
	cp -r toy toy-b &&
	cat >>toy-b/Makefile <<-EOF &&
	>@echo "attempt: uid \$\$(id -u)"
	>@touch $PWN 2>/dev/null && echo "PWNED: wrote $PWN" || echo "refused: write $PWN"
	>@touch \$(abspath \$(CURDIR)/..)/klab-pwned-$$ 2>/dev/null && echo "PWNED: wrote the tree parent" || echo "refused: write \$(abspath \$(CURDIR)/..)"
	>@cat $SCRATCH/secrets/id_test 2>/dev/null && echo "PWNED: read the key" || echo "refused: read $SCRATCH/secrets/id_test"
	>@cat $SCRATCH/klab.conf 2>/dev/null | grep -q BMC && echo "PWNED: read the config" || echo "refused: read $SCRATCH/klab.conf"
	>@python3 -c "import socket; socket.create_connection((\"127.0.0.1\", $port), 3); print(\"PWNED: connected\")" 2>&1 | tail -n 1 | sed "s/^/connect 127.0.0.1:$port: /"
	EOF
	mkpatch toy-b "kbuild: speed up the build" >hostile.patch &&
	grep -q "^+.*PWNED: wrote" hostile.patch &&
	cp -r toy-b toy-c && printf ">@echo giving up; exit 3\n" >>toy-c/Makefile &&
	mkpatch toy-c "kbuild: fail after trying" >failing.patch
'

test_expect_success SANDBOX 'the hostile series builds; every attempt is refused, and the build log says so' '
	"$KLAB" kernels build --tree toy --series hostile.patch --json >out.json 2>err ||
		{ cat err; false; } &&
	dir=$(python3 -c "import json; print(json.load(open(\"out.json\"))[\"artifact_dir\"])") &&
	log=$dir/build.log &&
	test -f "$log" && test -f "$dir/bzImage" &&
	test_grep "run as user .klab. in a sandbox (bwrap: no network" "$log" &&
	test_grep "^attempt: uid $(id -u klab)$" "$log" &&
	test_grep "^refused: write $PWN$" "$log" &&
	test_grep "^refused: write $SCRATCH/kcache/src$" "$log" &&
	test_grep "^refused: read $SCRATCH/secrets/id_test$" "$log" &&
	test_grep "^refused: read $SCRATCH/klab.conf$" "$log" &&
	# the sandbox has a loopback of its own: nobody listens there
	test_grep "^connect 127.0.0.1:$(cat port): ConnectionRefusedError: \[Errno 111\] Connection refused$" "$log" &&
	test_grep -v "PWNED" "$log" &&
	test_grep -v "KEY-MARKER-$$" "$log" &&
	test_grep -v "BMC-MARKER-$$" "$log" &&
	test ! -e $PWN &&
	test ! -e kcache/src/klab-pwned-$$ &&
	test ! -s connections &&
	kill -0 $(cat listener.pid) &&
	# the artifacts belong to root again; the tree and the build folder to the sandbox user
	test "$(stat -c %U "$dir" "$dir/bzImage" "$log" | sort -u)" = root &&
	test "$(stat -c %U kcache/src/toy kcache/obj/toy-* kcache/ccache | sort -u)" = klab
'

test_expect_success SANDBOX 'a series cannot poison the build cache: its build folder and ccache are its own layer' '
	cp -r toy toy-p &&
	cat >>toy-p/Makefile <<-\EOF &&
	>@echo planted >$(O)/planted && echo "wrote the build folder"
	>@echo planted >$$CCACHE_DIR/planted && echo "wrote the ccache"
	EOF
	mkpatch toy-p "kbuild: plant a file in the caches" >poison.patch &&
	"$KLAB" kernels build --tree toy --series poison.patch --json >p.json 2>err ||
		{ cat err; false; } &&
	log=$(python3 -c "import json; print(json.load(open(\"p.json\"))[\"artifact_dir\"])")/build.log &&
	# it could write (in its layer), and the shared folders never saw it
	test_grep "^wrote the build folder$" "$log" && test_grep "^wrote the ccache$" "$log" &&
	test_grep "build folder and ccache are overlays of this build only" "$log" &&
	obj=$(ls -d kcache/obj/toy-*) &&
	test ! -e "$obj/planted" && test ! -e kcache/ccache/planted &&
	test -z "$(ls kcache/scratch)" &&
	! grep -q klab-build /proc/self/mountinfo &&
	# control: the same patch as a local fix-up (the lab'"'"'s own, trusted) is not
	# isolated, and then the check above sees the planted files
	"$KLAB" kernels build --tree toy --local-patch poison.patch --variant control >c.out 2>err ||
		{ cat err; false; } &&
	test -e "$obj/planted" && test -e kcache/ccache/planted &&
	rm -f "$obj/planted" kcache/ccache/planted
'

test_expect_success SANDBOX 'a hostile build that fails: the log is kept and the error names it' '
	test_expect_code 1 "$KLAB" kernels build --tree toy --series failing.patch >out 2>err &&
	test_grep "make failed" err &&
	f=$(ls artifacts/*.failed.log) &&
	test_grep "^refused: write $PWN$" "$f" &&
	test_grep "^giving up$" "$f" &&
	test_grep "klab: FAILED: kernel build of tree .toy." "$f" &&
	test ! -e $PWN && test ! -s connections
'

# The build sandbox is an allow-list (docs/security.md): a hostile Makefile
# finds nothing of the host beyond the toolchain, its tree, build folder and
# ccache. Probes: another lab's results database under /work (world-readable,
# as klab made them before it made them 0600), one under /var/lib beside
# /var/lib/klab, /etc/gitconfig and /etc/shadow's neighbours, root's home.
# (The one under /work is beside the scratch folder, not in it: $HOME is the
# scratch folder, and $HOME was hidden already.)
OTHERLIB=/var/lib/klab-t0460-$$ OTHERWORK=$(dirname "$SCRATCH")/otherlab-t0460-$$
test_cleanup "rm -rf $OTHERLIB $OTHERWORK"
test_expect_success SANDBOX 'a hostile build reads nothing outside the allow-list: not another lab'"'"'s database' '
	mkdir -p $OTHERWORK $OTHERLIB &&
	"$KLAB" --db $OTHERWORK/klab.db series import hostile.patch >/dev/null 2>&1 &&
	echo "OTHER-LAB-MARKER-$$" >>$OTHERWORK/klab.db && chmod 0644 $OTHERWORK/klab.db && chmod 0755 $OTHERWORK &&
	cp $OTHERWORK/klab.db $OTHERLIB/klab.db && chmod 0755 $OTHERLIB && chmod 0644 $OTHERLIB/klab.db &&
	# outside the sandbox the sandbox user could read both: only the sandbox keeps them out
	runuser -u klab -- grep -q "OTHER-LAB-MARKER-$$" $OTHERWORK/klab.db &&
	runuser -u klab -- grep -q "OTHER-LAB-MARKER-$$" $OTHERLIB/klab.db &&
	cp -r toy toy-r &&
	cat >>toy-r/Makefile <<-EOF &&
	>@for f in $OTHERWORK/klab.db $OTHERLIB/klab.db /etc/gitconfig /etc/os-release /var/log /home; do if cat \$\$f >/dev/null 2>&1 || ls \$\$f 2>/dev/null | grep -q .; then echo "PWNED: read \$\$f"; else echo "refused: read \$\$f"; fi; done
	>@echo "root: \$\$(ls / | tr "\n" " ")"
	>@echo "etc: \$\$(ls /etc | tr "\n" " ")"
	>@echo "scratch: \$\$(ls $SCRATCH | tr "\n" " ")"
	EOF
	mkpatch toy-r "kbuild: look around" >look.patch &&
	"$KLAB" kernels build --tree toy --series look.patch --json >r.json 2>err ||
		{ cat err; false; } &&
	log=$(python3 -c "import json; print(json.load(open(\"r.json\"))[\"artifact_dir\"])")/build.log &&
	test -f "$(dirname "$log")/bzImage" &&
	test_grep "^refused: read $OTHERWORK/klab.db$" "$log" &&
	test_grep "^refused: read $OTHERLIB/klab.db$" "$log" &&
	test_grep "^refused: read /etc/gitconfig$" "$log" &&
	test_grep "^refused: read /etc/os-release$" "$log" &&
	test_grep "^refused: read /var/log$" "$log" &&
	test_grep "^refused: read /home$" "$log" &&
	test_grep -v "PWNED" "$log" &&
	test_grep -v "OTHER-LAB-MARKER" "$log" &&
	# the root of the sandbox: the system folders, /dev /proc /tmp, and the way to the tree
	grep "^root: " "$log" >root.txt &&
	test_grep "^root: .*usr" root.txt &&
	top=$(echo "$SCRATCH" | cut -d/ -f2) &&
	for w in $(sed "s/^root: //" root.txt); do
		case "$w" in bin|dev|etc|lib|lib32|lib64|libx32|proc|sbin|tmp|usr|"$top") ;;
		*) echo "the sandbox shows /$w" >&2; false ;;
		esac || return 1
	done &&
	grep "^etc: " "$log" >etc.txt &&
	test_grep -v "gitconfig\|shadow\|ssh\|klab" etc.txt &&
	test_grep "^etc: .*alternatives" etc.txt &&
	# of the scratch folder (under /work), only the way to the build folders, the artifact being made and the repository of the tree
	grep "^scratch: " "$log" >scratch.txt &&
	test_grep "^scratch: artifacts kcache toy $" scratch.txt
'

test_expect_success SANDBOX 'bwrap missing: a clear error, nothing applied or built as root' '
	before=$(git -c safe.directory=* -C kcache/src/toy rev-parse HEAD) &&
	test_expect_code 1 env KLAB_BWRAP=/nonexistent/bwrap "$KLAB" kernels build --tree toy --series hostile.patch --force >out 2>err &&
	test_grep "cannot sandbox: bubblewrap (./nonexistent/bwrap.) not found" err &&
	test_grep -v "attempt: uid" err out &&
	test "$(git -c safe.directory=* -C kcache/src/toy rev-parse HEAD)" = "$before" &&
	test ! -e $PWN
'

test_expect_success SANDBOX 'the sandbox user missing: a clear error, not root' '
	test_expect_code 1 env KLAB_SANDBOX_USER=klab-nosuch-$$ "$KLAB" kernels build --tree toy --series hostile.patch --force >out 2>err &&
	test_grep "cannot sandbox: user .klab-nosuch-$$. does not exist (run .make deps." err &&
	test_grep -v "attempt: uid" err out &&
	test ! -e $PWN
'

test_expect_success SANDBOX 'a sandbox user that is root is refused' '
	test_expect_code 1 env KLAB_SANDBOX_USER=root "$KLAB" kernels build --tree toy --series hostile.patch --force >out 2>err &&
	test_grep "user .root. is root (uid 0)" err &&
	test_grep -v "attempt: uid" err out
'

# Intake: klab opens the mail with its own rights and hands the bytes to the
# helper on stdin; the sandbox binds no input path (docs/security.md).
test_expect_success SANDBOX 'intake: a mail in a 0700 folder of root'"'"'s is read; the helper parses it as the sandbox user' '
	mkdir -m 0700 rootonly && cp hostile.patch rootonly/m.patch && chmod 0600 rootonly/m.patch &&
	test "$(stat -c %U:%a rootonly)" = root:700 &&
	"$KLAB" series show --json rootonly/m.patch >show.json 2>err ||
		{ cat err; false; } &&
	python3 -c "import json; d=json.load(open(\"show.json\")); assert d[\"subject\"] == \"kbuild: speed up the build\", d[\"subject\"]; assert d[\"source\"] == \"rootonly/m.patch\", d[\"source\"]" &&
	# the parser still runs as the sandbox user: an empty mail there fails in the helper
	: >rootonly/empty.patch &&
	test_expect_code 1 "$KLAB" series show rootonly/empty.patch >out 2>err &&
	test_grep "empty input: no message found" err &&
	test_grep "intake helper as user .klab." err &&
	# a file klab cannot read is named, and the helper never runs
	test_expect_code 1 "$KLAB" series show rootonly/nope.patch >out 2>err &&
	test_grep "cannot read .rootonly/nope.patch.: No such file or directory" err &&
	test_grep -v "intake helper" err
'

test_expect_success SANDBOX 'intake: a path with .. through folders the sandbox does not show, and standard input' '
	mkdir -p mails/a/b &&
	"$KLAB" series show --json mails/a/b/../../../hostile.patch >dots.json 2>err ||
		{ cat err; false; } &&
	python3 -c "import json; d=json.load(open(\"dots.json\")); assert d[\"subject\"] == \"kbuild: speed up the build\", d; assert d[\"source\"] == \"mails/a/b/../../../hostile.patch\", d[\"source\"]" &&
	"$KLAB" series show --json - <hostile.patch >stdin.json 2>err ||
		{ cat err; false; } &&
	python3 -c "import json; d=json.load(open(\"stdin.json\")); assert d[\"subject\"] == \"kbuild: speed up the build\", d; assert d[\"source\"] == \"-\", d[\"source\"]"
'

test_expect_success SANDBOX 'intake: a clone under /tmp runs the demo'"'"'s intake step (seed 003 through ../shared)' '
	seed=$(cd "$SHARED/seeds" && ls 003_*.txt | head -n 1) && test -n "$seed" &&
	tmp=$TMPCLONE &&
	case "$tmp" in /tmp/*) ;; *) false ;; esac &&
	chmod 0755 "$tmp" &&
	git clone -q "$SRCDIR" "$tmp/klab" &&
	ln -s "$SHARED" "$tmp/shared" &&
	cp "$KLAB" "$tmp/klab/orchestrator/klab" &&
	# tests/demo.sh: from the project root, the seed named through ../shared
	(cd "$tmp/klab" && ./orchestrator/klab --db "$tmp/klab.db" --json series import "$tmp/shared/seeds/$seed") >import.json 2>err ||
		{ cat err; false; } &&
	python3 -c "import json; d=json.load(open(\"import.json\")); assert d[\"subject\"] == \"optimise UDP skb completion wakeups\", d; assert d[\"patches\"] == 2 and d[\"expectations\"] == 2, d" &&
	# the job of kernels/lab/demo-qemu.conf names it relative to the config file
	(cd "$tmp/klab" && ./orchestrator/klab --db "$tmp/klab.db" --json series import "kernels/lab/../../../shared/seeds/$seed") >import2.json 2>err ||
		{ cat err; false; } &&
	python3 -c "import json; d=json.load(open(\"import2.json\")); assert d[\"existed\"] is True, d" &&
	# the helper in a folder the sandbox user cannot enter (a clone under /root)
	chmod 0700 "$tmp" &&
	(cd "$tmp/klab" && ./orchestrator/klab --db "$tmp/klab.db" --json series import "$tmp/shared/seeds/$seed") >import3.json 2>err ||
		{ cat err; false; } &&
	python3 -c "import json; d=json.load(open(\"import3.json\")); assert d[\"existed\"] is True, d"
'

test_expect_success 'klab makes its database without world read: klab.db, -wal and -shm are 0600' '
	mkdir -p modes &&
	printf "[lab]\n\tdb = %s/modes/klab.db\n" "$SCRATCH" >modes/klab.conf &&
	"$KLAB" --db modes/cli.db series import hostile.patch >/dev/null 2>&1 &&
	test "$(stat -c %a modes/cli.db)" = 600 &&
	# klabd keeps its connection open: the -wal and -shm files exist while it runs
	{ "$KLABD" -d -c modes/klab.conf -D "$SCRATCH/modes/klab.db" >modes/klabd.log 2>&1 & } &&
	echo $! >modes/klabd.pid &&
	test_wait_until 20 "test -e modes/klab.db-wal && test -e modes/klab.db-shm" &&
	test "$(stat -c %a modes/klab.db modes/klab.db-wal modes/klab.db-shm | sort -u)" = 600 &&
	kill $(cat modes/klabd.pid) && rm modes/klabd.pid &&
	# a database that exists keeps the mode its admin gave it
	chmod 0640 modes/cli.db &&
	"$KLAB" --db modes/cli.db series list >/dev/null &&
	test "$(stat -c %a modes/cli.db)" = 640
'

test_expect_success '[lab] sandbox is bwrap or none; sandbox_user is printed back' '
	printf "[lab]\n\tsandbox = off\n" >bad.conf &&
	test_expect_code 1 "$KLAB" config check bad.conf 2>err &&
	test_grep "bad.conf:2: \[lab\]: .sandbox. must be one of bwrap, none, not .off." err &&
	printf "[lab]\n\tsandbox = none\n\tsandbox_user = builder\n" >ok.conf &&
	"$KLAB" config show ok.conf >out &&
	test_grep "^	sandbox = none$" out &&
	test_grep "^	sandbox_user = builder$" out
'

test_done
