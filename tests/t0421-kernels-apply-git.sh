#!/bin/bash
test_description='every kind of git diff applied to a git tree: renames, copies, modes, empty and deleted files, binary (git am -3; what patch -p1 cannot take over)'
. "$(dirname "$0")/lib.sh"

# The tree is tests/data/patches/gen.sh's base, made again here with the
# same fixed contents; the series is the checked-in git format-patch output
# of gen.sh's commits, so the applied tree must be the one git had.
export KLAB_KERNEL_CACHE=$SCRATCH/kcache KLAB_DB=$SCRATCH/klab.db
P=$SRCDIR/tests/data/patches
GIT="git -c user.name=t -c user.email=t@t"
KGIT="git -c safe.directory=*"	# the cache tree belongs to the sandbox user (docs/security.md)
R=kcache/src/toy

test_expect_success 'setup: the base tree, gen.sh repository for reference, a config' '
	bash "$P/gen.sh" base "$SCRATCH/toy" &&
	bash "$P/gen.sh" patches "$SCRATCH/ref" &&
	cat >klab.conf <<-EOF &&
	[lab]
		db = $SCRATCH/klab.db
		artifact_dir = $SCRATCH/artifacts
	[tree "toy"]
		git = $SCRATCH/toy
		branch = main
		config_base = tinyconfig
	EOF
	cat "$P"/00*.patch >all.mbox
'

test_expect_success 'the series applies with git am -3, every patch clean' '
	"$KLAB" kernels build --tree toy --series all.mbox --apply-only >out 2>err &&
	test "$(grep -c ": clean (git am -3, max fuzz 0, offsets 0)$" out)" = 12 &&
	test_grep "^8/12 blobs: a new binary file and a changed one: clean (git am -3" out &&
	test_grep "^11/12 big.bin: change two bytes (a delta binary patch): clean (git am -3" out &&
	test -z "$($KGIT -C $R status --porcelain)" &&
	test "$($KGIT -C $R rev-parse HEAD)" = "$(git -C toy rev-parse main)"
'

test_expect_success 'the result is the tree git made: same tree object as gen.sh'"'"'s last commit' '
	test "$($KGIT -C $R rev-parse refs/klab/apply-only^{tree})" = "$(git -C ref/repo rev-parse HEAD^{tree})"
'

test_expect_success 'renames, copies, deletions, the empty file, mode bits, binary contents' '
	A=refs/klab/apply-only &&
	$KGIT -C $R ls-tree -r $A >tree &&
	test_grep "	docs/new.txt$" tree && ! grep -q "	docs/old.txt$" tree &&
	test_grep "	src/kept.txt$" tree && ! grep -q "	keep.txt$" tree &&
	test_grep "	\"notes/my notes.txt\"$\|	notes/my notes.txt$" tree &&
	! grep -q "	gone.txt$" tree && ! grep -q "	src/logo.bin$" tree &&
	test "$($KGIT -C $R show $A:src/util3.h | sha256sum)" = "$($KGIT -C $R show $A:src/util.h | sha256sum)" &&
	test_grep "^100644 blob e69de29bb2d1d6434b8b29ae775ad8c2e48c5391	src/empty.c$" tree &&
	test_grep "^100755 blob [0-9a-f]*	run.sh$" tree &&
	test_grep "^100755 blob [0-9a-f]*	src/main.c$" tree &&
	test "$($KGIT -C $R show $A:blob.bin | sha256sum)" = "$(sha256sum <ref/repo/blob.bin)" &&
	test "$($KGIT -C $R show $A:big.bin | sha256sum)" = "$(sha256sum <ref/repo/big.bin)" &&
	test "$($KGIT -C $R show $A:blob.bin | wc -c)" = 200 &&
	$KGIT -C $R show $A~3:src/logo.bin | od -An -tx1 | tr -d " \n" >logo &&
	test "$(cat logo)" = "000102504e47ff" &&
	test "$($KGIT -C $R log --format=%s -1 $A)" = "notes: names with a space and a non-ASCII letter"
'

test_expect_success 'a binary patch git am cannot apply: patch -p1 is not tried, the outcome says why' '
	(cd toy && printf "other\n" >blob.bin && $GIT commit -q -am "blob.bin changed") &&
	test_expect_code 1 "$KLAB" kernels build --tree toy --series "$P/0008-blobs-a-new-binary-file-and-a-changed-one.patch" --apply-only >out 2>err &&
	test_grep "cannot apply patch 8/12 .blobs: a new binary file and a changed one. to tree .toy. at [0-9a-f]\{12\}: git am -3: Cannot merge binary files: blob.bin (HEAD vs. blobs: a new binary file and a changed one); patch -p1 cannot apply the binary diff of .blob.bin. (GIT binary patch)$" err &&
	test -z "$($KGIT -C $R status --porcelain)"
'

test_expect_success '"Binary files ... differ" (format-patch --no-binary): refused, not skipped by patch -p1' '
	test_expect_code 1 "$KLAB" kernels build --tree toy --series "$P/0101-blobs-a-new-binary-file-and-a-changed-one.patch" --apply-only >out 2>err &&
	test_grep "the diff of .blob.bin. has no binary data (.Binary files ... differ.): patch -p1 would leave the file as it is; it needs git format-patch --binary$" err
'

test_expect_success 'a rename-only diff whose file is not in the tree: the outcome names it' '
	(cd toy && $GIT rm -q docs/old.txt && $GIT commit -q -m "old.txt gone") &&
	test_expect_code 1 "$KLAB" kernels build --tree toy --series "$P/0001-docs-rename-old.txt-to-new.txt.patch" --apply-only >out 2>err &&
	test_grep "the rename-only diff .docs/{old.txt => new.txt}. has no content to patch and .docs/old.txt. is not in the tree (git am -3: .*docs/old.txt" err
'

test_expect_success 'a rename with changes and a mode change on a tree without their blobs: patch -p1 takes over' '
	bash "$P/gen.sh" base "$SCRATCH/toy2" &&
	(cd toy2 && sed -i "s/^keep 7\$/keep 7 (newer)/" keep.txt && sed -i "s/^line 12\$/line 12 (newer)/" src/main.c &&
	 $GIT commit -q -a --amend -m base && git tag -d base >/dev/null &&
	 git reflog expire --expire=now --all && git gc -q --prune=now) &&
	cat >>klab.conf <<-EOF &&
	[tree "toy2"]
		git = $SCRATCH/toy2
		branch = main
		config_base = tinyconfig
	EOF
	cat "$P"/0002-*.patch "$P"/0009-*.patch >two.mbox &&
	"$KLAB" kernels build --tree toy2 --series two.mbox --apply-only >out 2>err &&
	test_grep "^2/12 kept: move keep.txt to src/ and change line 10: fuzz (patch -p1 --fuzz=2, max fuzz 1, offsets 0)$" out &&
	test_grep "^9/12 main.c: executable and line 15: fuzz (patch -p1 --fuzz=2, max fuzz 1, offsets 0)$" out &&
	$KGIT -C kcache/src/toy2 ls-tree -r refs/klab/apply-only >tree &&
	test_grep "^100755 blob [0-9a-f]*	src/main.c$" tree &&
	test_grep "^100644 blob [0-9a-f]*	src/kept.txt$" tree && ! grep -q "	keep.txt$" tree &&
	$KGIT -C kcache/src/toy2 show refs/klab/apply-only:src/kept.txt >kept &&
	test "$(sed -n 10p kept)" = "keep ten" && test "$(sed -n 7p kept)" = "keep 7 (newer)"
'

test_done
