#!/bin/bash
test_description='kernel trees from a local git repository: clone, fetch, refs, per-patch outcome (git am -3 / patch with fuzz), apply errors, failed config'
. "$(dirname "$0")/lib.sh"

# A small real git repository stands in for a kernel tree: the apply steps
# are the same commands (git am -3, patch -p1 --fuzz=2) on any tree. The
# build itself is covered by t0450 on linux-source-6.1.
export KLAB_KERNEL_CACHE=$SCRATCH/kcache KLAB_DB=$SCRATCH/klab.db
GIT="git -c user.name=t -c user.email=t@t"
# the tree belongs to the sandbox user (docs/security.md): looked at as root, past git's ownership check
KGIT="git -c safe.directory=*"

mkpatch() {	# mkpatch SUBJECT OLD NEW [CONTEXT-SED]: an mbox patch of net/core/x.c against the toy tree
	local subj=$1 old=$2 new=$3
	rm -rf pa pb && mkdir -p pa/net/core pb/net/core &&
	cp toy/net/core/x.c pa/net/core/x.c &&
	sed "s/^$old\$/$new/" pa/net/core/x.c >pb/net/core/x.c &&
	if [ $# -gt 3 ]; then sed -i "$4" pa/net/core/x.c pb/net/core/x.c; fi &&
	{ printf "From 0 Mon Sep 17 00:00:00 2001\nFrom: T <t@example.org>\nSubject: [PATCH] %s\n\nbody\n\nSigned-off-by: T <t@example.org>\n---\n" "$subj"
	  diff -u pa/net/core/x.c pb/net/core/x.c | sed -e "1s|^--- .*|--- a/net/core/x.c|" -e "2s|^+++ .*|+++ b/net/core/x.c|"; }
}

test_expect_success 'setup: a toy tree in git and a config naming it' '
	mkdir -p toy/net/core &&
	for i in $(seq 1 40); do echo "line $i"; done >toy/net/core/x.c &&
	(cd toy && $GIT init -q -b main && $GIT add . && $GIT commit -q -m base && $GIT tag v1) &&
	cat >klab.conf <<-EOF &&
	[lab]
		db = $SCRATCH/klab.db
		artifact_dir = $SCRATCH/artifacts
	[tree "toy"]
		git = $SCRATCH/toy
		branch = main
		config_base = tinyconfig
	EOF
	mkpatch "x: change line 20" "line 20" "line twenty" >clean.patch &&
	mkpatch "x: change line 5 (a local fix-up)" "line 5" "line five" >local.patch &&
	mkpatch "x: change line 30, written against other context" "line 30" "line thirty" "s/^line 28\$/line 28 (newer tree)/" >fuzz.patch &&
	mkpatch "x: change a line that is not there" "line 10" "line ten" "s/^line \(9\|10\|11\)\$/other \1/" >bad.patch &&
	grep -q "^-other 10" bad.patch
'

test_expect_success 'a clean patch: git am -3, the clone made once' '
	"$KLAB" kernels build --tree toy --series clean.patch --apply-only >out 2>err &&
	test_grep "^1/1 x: change line 20: clean (git am -3, max fuzz 0, offsets 0)$" out &&
	test -d kcache/src/toy/.git &&
	test "$($KGIT -C kcache/src/toy rev-parse HEAD)" = "$(git -C toy rev-parse main)" &&
	test -z "$($KGIT -C kcache/src/toy status --porcelain)"
'

test_expect_success 'a patch for a newer tree: patch -p1 with fuzz, recorded' '
	"$KLAB" kernels build --tree toy --series fuzz.patch --apply-only >out 2>err &&
	test_grep "^1/1 x: change line 30, written against other context: fuzz (patch -p1 --fuzz=2, max fuzz 2, offsets 0)$" out
'

test_expect_success 'two patches in order, then a local patch' '
	cat clean.patch fuzz.patch >two.mbox &&
	"$KLAB" kernels build --tree toy --series two.mbox --local-patch local.patch --apply-only >out 2>err &&
	test_grep "^1/2 x: change line 20: clean" out &&
	test_grep "^2/2 x: change line 30, written against other context: fuzz" out &&
	test_grep "^local local.patch: clean (git am -3" out ||
	{ cat out err; false; }
'

test_expect_success 'a local patch applied twice fails: already applied, named' '
	test_expect_code 1 "$KLAB" kernels build --tree toy --series clean.patch --local-patch clean.patch --apply-only >out 2>err &&
	test_grep "cannot apply local clean.patch to tree .toy." err
'

test_expect_success 'a patch that does not apply: subject, file, hunk; the work tree back at the base' '
	test_expect_code 1 "$KLAB" kernels build --tree toy --series bad.patch --apply-only >out 2>err &&
	test_grep "cannot apply patch 1/1 .x: change a line that is not there. to tree .toy. at [0-9a-f]\{12\}: net/core/x.c hunk #1 failed at line 7: @@ -7,7 +7,7 @@" err &&
	test -z "$($KGIT -C kcache/src/toy status --porcelain)" &&
	test "$($KGIT -C kcache/src/toy rev-parse HEAD)" = "$(git -C toy rev-parse main)"
'

test_expect_success 'refs: a tag, a new commit on the branch is fetched, an unknown ref' '
	(cd toy && echo "line 41" >>net/core/x.c && $GIT commit -q -am more) &&
	"$KLAB" kernels build --tree toy --series clean.patch --apply-only >out &&
	test_grep "at $(git -C toy rev-parse main)$" out &&
	"$KLAB" kernels build --tree toy --ref v1 --series clean.patch --apply-only >out &&
	test_grep "at $(git -C toy rev-parse v1)$" out &&
	test_expect_code 1 "$KLAB" kernels build --tree toy --ref nope --apply-only 2>err &&
	test_grep "tree .toy.: unknown ref .nope." err &&
	test_expect_code 1 "$KLAB" kernels build --tree nosuch --apply-only 2>err &&
	test_grep "unknown tree .nosuch.: no \[tree \"nosuch\"\] in the config" err
'

test_expect_success 'a tree that is no kernel: the config step fails, the row says failed' '
	test_expect_code 1 "$KLAB" kernels build --tree toy --series clean.patch >out 2>err &&
	test_grep "tree .toy.: .make tinyconfig. failed" err &&
	test "$(sqlite3 "$KLAB_DB" "SELECT state || \" \" || variant FROM kernels")" = "failed patched" &&
	ls artifacts/*.failed.log &&
	test -z "$($KGIT -C kcache/src/toy status --porcelain)" &&
	"$KLAB" kernels gc >gc && test_grep "removed 1 kernel(s)" gc
'

test_expect_success 'usage errors' '
	test_expect_code 2 "$KLAB" kernels build --bogus &&
	test_expect_code 2 "$KLAB" kernels show &&
	test_expect_code 2 "$KLAB" kernels frob &&
	test_expect_code 1 "$KLAB" kernels build --local-patch /nonexistent --apply-only 2>err &&
	test_grep "local patch ./nonexistent. does not exist" err
'

test_done
