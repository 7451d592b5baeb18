#!/bin/bash
test_description='patch intake on Patchwork 3.1.3 own test mails (patchwork/tests/series and mail): each is read or refused with an error naming it, as git am would'
. "$(dirname "$0")/lib.sh"

PW_TARBALL=${PW_TARBALL:-$SHARED/vendor/patchwork-3.1.3.tar.gz}
test -f "$PW_TARBALL" || test_skip_all "no Patchwork tarball at $PW_TARBALL (../shared/vendor/README.md)"
tar -xzf "$PW_TARBALL" -C "$SCRATCH" --wildcards '*/patchwork/tests/series/*' '*/patchwork/tests/mail/*' ||
	test_skip_all "cannot unpack the test mails of $PW_TARBALL"
cd "$SCRATCH"/patchwork-*/patchwork/tests || exit 1

# What klab makes of each file: "patches total version cover|-" when read, "refused: TEXT"
# (a piece of the error) when not. The refusals agree with git am: pull requests carry no
# diff, base-extra-patches' 3/2 adds a file with a hunk of old lines and 0009's renamed file
# has a hunk without its ---/+++ lines (git apply: "corrupt patch" for both).
cat >"$SCRATCH/expect" <<'EOF'
series/base-cover-letter.mbox 2 2 1 cover
series/base-deep-threaded.mbox 2 2 1 cover
series/base-different-versions.mbox 4 4 1 -
series/base-extra-patches.mbox refused: test.txt: hunk 1 (@@ -1,8 +0,0 @@) has old lines in a new file
series/base-incomplete.mbox 1 2 1 cover
series/base-no-cover-letter.mbox 2 2 1 -
series/base-no-references-no-cover.mbox 2 2 1 cover
series/base-no-references.mbox 2 2 2 -
series/base-out-of-order.mbox 2 2 1 cover
series/base-single-patch.mbox 1 1 1 -
series/bugs-mixed-versions.mbox 1 2 2 -
series/bugs-multiple-content-types.mbox 1 1 1 -
series/bugs-multiple-references.mbox 4 4 2 cover
series/bugs-nocover-noversion.mbox 2 2 1 -
series/bugs-nocover.mbox 2 2 2 -
series/bugs-spamming.mbox 1 4 2 -
series/bugs-unnumbered.mbox 1 2 1 cover
series/mercurial-cover-letter.mbox 2 2 1 -
series/mercurial-no-cover-letter.mbox 2 2 1 -
series/revision-basic.mbox 2 2 2 cover
series/revision-no-cover-letter.mbox 2 2 2 -
series/revision-out-of-order.mbox 2 2 2 cover
series/revision-threaded-to-cover.mbox 2 2 2 cover
series/revision-threaded-to-patch.mbox 2 2 2 cover
series/revision-threaded-to-single-patch.mbox 1 1 2 -
series/revision-unlabeled-noreferences.mbox 2 2 2 -
series/revision-unlabeled.mbox 2 2 1 cover
mail/0001-git-pull-request.mbox refused: no diff found in the message '[git pull] Please pull powerpc.git next branch'
mail/0002-git-pull-request-wrapped.mbox refused: no diff found in the message
mail/0003-git-pull-request-with-diff.mbox 1 1 1 -
mail/0004-git-pull-request-git+ssh.mbox refused: no diff found in the message
mail/0005-git-pull-request-ssh.mbox refused: no diff found in the message
mail/0006-git-pull-request-http.mbox refused: no diff found in the message
mail/0007-cvs-format-diff.mbox 1 1 1 -
mail/0008-git-rename.mbox 1 11 1 -
mail/0009-git-rename-with-diff.mbox refused: a hunk before the '---'/'+++' lines of its file
mail/0010-invalid-charset.mbox 1 1 1 -
mail/0011-no-newline-at-end-of-file.mbox 1 5 3 -
mail/0012-invalid-header-char.mbox 1 1 1 -
mail/0013-with-utf8-body.mbox 1 1 1 -
mail/0014-with-unencoded-utf8-headers.mbox 1 1 1 -
mail/0015-with-invalid-utf8-headers.mbox 1 1 1 -
mail/0016-no-subject.mbox 1 1 1 -
mail/0017-git-pull-request-git-2-14-3.mbox refused: no diff found in the message '[GIT] Networking'
mail/0019-multipart-patch.mbox 1 1 1 -
mail/0020-multipart-comment.mbox refused: no patch: 1 reply without a diff
mail/0021-git-empty-new-file.mbox 1 3 1 -
mail/0022-git-mode-change.mbox 1 1 1 -
mail/0023-git-pull-request-newline-in-url.mbox refused: no diff found in the message '[GIT PULL] soc: updates for v5.5'
mail/0024-git-pull-request-trailing-space.mbox refused: no diff found in the message '[GIT PULL] DaVinci SoC updates for v5.6'
mail/0025-git-add-binary-file.mbox 1 1 1 -
mail/0026-git-add-mixed-binary-text-files.mbox 1 1 1 -
mail/0027-git-modify-binary-file.mbox 1 1 1 -
EOF

test_expect_success 'the table covers every test mail of the release (none added or left out)' '
	ls series/*.mbox mail/*.mbox | sort >"$SCRATCH/have" &&
	cut -d" " -f1 "$SCRATCH/expect" | sort >"$SCRATCH/want" &&
	test_cmp "$SCRATCH/want" "$SCRATCH/have"
'

test_expect_success 'every mail is read as its table line says, or refused with an error naming the file' '
	while read -r f want; do
		"$KLAB" series show --json "$f" >"$SCRATCH/o.json" 2>"$SCRATCH/e"
		rc=$?
		case $want in
		refused:*)
			test $rc = 1 || { echo "$f: exit $rc, expected a refusal (1)"; return 1; }
			grep -qF "klab: error: '\''$f'\''" "$SCRATCH/e" &&
			grep -qF "${want#refused: }" "$SCRATCH/e" ||
				{ echo "$f: expected \"${want#refused: }\" naming the file in:"; cat "$SCRATCH/e"; return 1; }
			;;
		*)
			test $rc = 0 || { echo "$f: exit $rc"; cat "$SCRATCH/e"; return 1; }
			got=$(python3 -c "import json; d = json.load(open(\"$SCRATCH/o.json\"))
print(len(d[\"patches\"]), d[\"total\"], d[\"version\"], \"cover\" if d[\"cover\"] else \"-\")") &&
			test "$got" = "$want" || { echo "$f: got \"$got\", expected \"$want\""; return 1; }
			;;
		esac
	done <"$SCRATCH/expect"
'

test_expect_success 'a read series keeps its patches whole: every patch has a diff, the binary ones included' '
	"$KLAB" series show --json mail/0026-git-add-mixed-binary-text-files.mbox >o.json &&
	"$KLAB" series show --json series/base-different-versions.mbox >v.json &&
	python3 -c "
import json
d = json.load(open(\"o.json\"))
p = d[\"patches\"][0]
assert p[\"insertions\"] > 0, p
v = json.load(open(\"v.json\"))
assert [q[\"seq\"] for q in v[\"patches\"]] == [1, 2, 3, 4], v[\"patches\"]
"
'

test_done
