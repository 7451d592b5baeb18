#!/bin/bash
# tests/data/patches/gen.sh: the git fixtures of the diff parser, made by git itself.
#
#   bash gen.sh base DIR     a git repository at DIR holding the base tree
#   bash gen.sh patches DIR  the base, one commit per kind of diff, and
#                            git format-patch of them into DIR/series/ (with a
#                            cover letter) and DIR/nobinary/ (--no-binary)
#
# The contents are fixed (no random data, fixed dates), so the same git gives
# the same patches; tests/t0421 re-creates the base with "base" and applies the
# checked-in series to it. The checked-in files were made with git 2.39.5:
#   bash tests/data/patches/gen.sh patches /tmp/p && cp /tmp/p/series/* /tmp/p/nobinary/* tests/data/patches/
set -eu
G="git -c user.name=Tess -c user.email=tess@example.org -c core.abbrev=7 -c init.defaultBranch=main"
export GIT_AUTHOR_DATE="2026-01-01T00:00:00Z" GIT_COMMITTER_DATE="2026-01-01T00:00:00Z"
bytes() { python3 -c "import sys; sys.stdout.buffer.write(bytes(($2*i+$3)%256 for i in range($1)))"; }

base() {
	$G init -q "$1" && cd "$1"
	mkdir -p src docs
	for i in $(seq 1 30); do echo "line $i"; done >src/main.c
	printf '#!/bin/sh\necho hi\n' >run.sh
	for i in $(seq 1 20); do echo "doc $i"; done >docs/old.txt
	for i in $(seq 1 20); do echo "keep $i"; done >keep.txt
	for i in $(seq 1 10); do echo "gone $i"; done >gone.txt
	printf 'copy me %d\n' $(seq 1 25) >src/util.h
	for i in $(seq 1 8); do echo "note $i"; done >"my notes.txt"
	bytes 300 7 3 >blob.bin
	bytes 4096 13 1 >big.bin
	$G add . && $G commit -q -m base && $G tag base
}

c() { GIT_AUTHOR_DATE="2026-01-02T00:00:00Z" GIT_COMMITTER_DATE="2026-01-02T00:00:00Z" \
	$G commit -q "$@" -m "Signed-off-by: Tess <tess@example.org>"; }

patches() {
	local out=$1
	base "$out/repo"
	$G mv docs/old.txt docs/new.txt; c -m "docs: rename old.txt to new.txt" -m "A rename without any change."
	$G mv keep.txt src/kept.txt; sed -i 's/^keep 10$/keep ten/' src/kept.txt; $G add -A
	c -m "kept: move keep.txt to src/ and change line 10"
	cp src/util.h src/util2.h; sed -i 's/^copy me 25$/copy me twenty-five/' src/util2.h; $G add -A
	c -m "util: copy util.h to util2.h with a change"
	cp src/util.h src/util3.h; $G add -A; c -m "util: an exact copy of util.h"
	chmod +x run.sh; $G add -A; c -m "run.sh: make it executable"
	: >src/empty.c; $G add -A; c -m "src: add an empty file"
	$G rm -q gone.txt; c -m "remove gone.txt"
	bytes 200 11 5 >blob.bin; printf '\000\001\002PNG\377' >src/logo.bin; $G add -A
	c -m "blobs: a new binary file and a changed one"
	chmod +x src/main.c; sed -i 's/^line 15$/line fifteen/' src/main.c; $G add -A
	c -m "main.c: executable and line 15"
	$G rm -q src/logo.bin; c -m "remove the logo"
	python3 -c 'import sys; d=bytearray(open("big.bin","rb").read()); d[100]^=0xff; d[3000]^=0x55; sys.stdout.buffer.write(d)' >big.tmp && mv big.tmp big.bin
	$G add -A; c -m "big.bin: change two bytes (a delta binary patch)"
	mkdir notes; $G mv "my notes.txt" "notes/my notes.txt"; printf "caf\303\251\n" >"notes/caf"$'\303\251'".txt"; $G add -A
	c -m "notes: names with a space and a non-ASCII letter"
	$G format-patch -q -M -C -C --cover-letter -o "$out/series" base
	$G format-patch -q -M -C -C --no-binary --start-number 101 -o "$out/nobinary" HEAD~5..HEAD~4
}

case ${1:-} in
base) base "$2" ;;
patches) mkdir -p "$2" && d=$(cd "$2" && pwd) && patches "$d" ;;
*) echo "usage: gen.sh base DIR | patches DIR" >&2; exit 2 ;;
esac
