#!/bin/bash
test_description='kernel builds on linux-source-6.1 (tinyconfig + qemu.config): baseline, patched, cache hit, a patch that does not apply, seed 003 with fuzz'
# run.sh: group kernel-tree (a series is applied in the work tree of /var/cache/klab/src/linux-source-6.1 under its build lock; t0450 checks that tree outside the lock, t0902 copies it)
. "$(dirname "$0")/lib.sh"

# The tree, its build folder and the ccache live in the kernel cache
# ($KLAB_KERNEL_CACHE, default /var/cache/klab), shared with real use so a
# warm cache makes this test a few minutes; cold it is a full kernel build
# (12-27 min on 2 cores). The database and the artifacts are the test's own.
export KLAB_DB=$SCRATCH/klab.db
D=$SRCDIR/tests/data/series
A=$SCRATCH/artifacts
CACHE=${KLAB_KERNEL_CACHE:-/var/cache/klab}
SRC=$CACHE/src/linux-source-6.1
# the tree belongs to the sandbox user (docs/security.md): looked at as root, past git's ownership check
KGIT="git -c safe.directory=*"

jq_() {	# jq_ FILE EXPR: a value of a JSON file (python, no jq needed)
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); v=eval(sys.argv[2]); print(v if not isinstance(v,bool) else str(v).lower())" "$1" "$2"
}

test_expect_success KBUILD 'baseline build: artifacts, release, build id, kernels row' '
	KLAB_PROGRESS_S=1 "$KLAB" kernels build --artifact-dir "$A" --json >base.json 2>base.err &&
	dir=$(jq_ base.json "d[\"artifact_dir\"]") &&
	# the progress line (stderr not a terminal: plain lines): objects of the expected count, time, ETA
	grep -Eq "^\[build linux-source-6.1 base\] [0-9]+/(<=|~)?[0-9]+ objects [0-9]+% [0-9]{2,}:[0-9]{2} ETA .* done$" base.err &&
	test -f "$dir/bzImage" && test -f "$dir/config" && test -f "$dir/System.map" &&
	test -f "$dir/build.log" && test -f "$dir/meta.json" &&
	test "$(dd if="$dir/bzImage" bs=1 skip=514 count=4 2>/dev/null)" = HdrS &&
	test_grep "^CONFIG_VETH=y$" "$dir/config" &&
	test_grep "^CONFIG_NET_9P_VIRTIO=y$" "$dir/config" &&
	test_grep " net_defaults_init_net$" "$dir/System.map" &&
	jq_ base.json "d[\"release\"]" >release &&
	grep -Eq "^6\.1\.[0-9]+-lab-base$" release &&
	jq_ base.json "d[\"build_id\"]" | grep -Eq "^[0-9a-f]{40}$" &&
	test "$(jq_ base.json "d[\"cached\"]")" = false &&
	test_grep "CC=ccache gcc" "$dir/build.log" &&
	test "$(sqlite3 "$KLAB_DB" "SELECT state || \" \" || variant || \" \" || release FROM kernels WHERE id = $(jq_ base.json "d[\"id\"]")")" = \
		"ok base $(cat release)"
'

test_expect_success KBUILD 'patched build: one line in net/core, an incremental build in the same tree' '
	"$KLAB" kernels build --artifact-dir "$A" --series "$D/somaxconn.patch" --json >patched.json 2>patched.err &&
	dir=$(jq_ patched.json "d[\"artifact_dir\"]") &&
	jq_ patched.json "d[\"release\"]" | grep -Eq "^6\.1\.[0-9]+-lab-patched$" &&
	test "$(jq_ patched.json "d[\"applied\"][0][\"how\"]")" = clean &&
	test "$(jq_ patched.json "d[\"applied\"][0][\"method\"]")" = "git am -3" &&
	test "$(jq_ patched.json "d[\"build_id\"]")" != "$(jq_ base.json "d[\"build_id\"]")" &&
	test_grep "CC      net/core/net_namespace.o" "$dir/build.log" &&
	# incremental: far fewer compilations than the ~1500 of a full build (about
	# 10 alone; more when another build of the shared folder ran in between,
	# e.g. a series that touched include/net/sock.h)
	test $(grep -c "^  CC      " "$dir/build.log") -lt 750 &&
	sqlite3 "$KLAB_DB" "SELECT ccache_stats FROM kernels WHERE id = $(jq_ patched.json "d[\"id\"]")" >cc &&
	python3 -c "import json; d=json.load(open(\"cc\")); assert d[\"hits\"] + d[\"misses\"] >= 1, d" &&
	test "$(sqlite3 "$KLAB_DB" "SELECT series_id IS NOT NULL FROM kernels WHERE id = $(jq_ patched.json "d[\"id\"]")")" = 1
'

# The series was built in an overlay of the shared build folder that is
# thrown away (docs/security.md, "Cache poisoning"), so the patched code is
# looked for in the artifact that boots: vmlinux out of the bzImage, the
# function's bounds from its System.map.
disasm_fn() {	# disasm_fn ARTIFACT_DIR FUNCTION: the function's disassembly from the artifact
	"$SRC/scripts/extract-vmlinux" "$1/bzImage" >vmlinux &&
	start=$(awk -v f="$2" '$3 == f { print $1; exit }' "$1/System.map") &&
	test -n "$start" &&
	stop=$(sort "$1/System.map" | awk -v s="$start" '$1 > s { print $1; exit }') &&
	objdump -d --start-address=0x$start --stop-address=0x$stop vmlinux
}

test_expect_success KBUILD 'the patched kernel has the new behaviour: somaxconn 4242 (0x1092) in net_defaults_init_net' '
	disasm_fn "$(jq_ patched.json "d[\"artifact_dir\"]")" net_defaults_init_net >fn &&
	test_grep "0x1092" fn &&
	disasm_fn "$(jq_ base.json "d[\"artifact_dir\"]")" net_defaults_init_net >fn.base &&
	test_grep "0x1000" fn.base &&
	! grep -q "0x1092" fn.base &&
	# the shared build folder keeps the baseline: the series did not write it
	obj=$(ls -d "$CACHE"/obj/linux-source-6.1-*/ | head -n 1) &&
	objdump -d "$obj/net/core/net_namespace.o" >dis &&
	sed -n "/<net_defaults_init_net>:/,/^$/p" dis >fn.shared &&
	! grep -q "0x1092" fn.shared
'

test_expect_success KBUILD 'a second request for the baseline is a cache hit: nothing rebuilt' '
	stamp=$(stat -c %Y "$(jq_ base.json "d[\"artifact_dir\"]")/bzImage") &&
	"$KLAB" kernels build --artifact-dir "$A" --json >again.json 2>again.err &&
	test "$(jq_ again.json "d[\"cached\"]")" = true &&
	test "$(jq_ again.json "d[\"id\"]")" = "$(jq_ base.json "d[\"id\"]")" &&
	test "$(stat -c %Y "$(jq_ base.json "d[\"artifact_dir\"]")/bzImage")" = "$stamp" &&
	test "$(sqlite3 "$KLAB_DB" "SELECT COUNT(*) FROM kernels")" = 2
'

test_expect_success KBUILD 'another database finds both kernels in the artifact store by key: rows from meta.json, nothing rebuilt' '
	stamp=$(stat -c %Y "$(jq_ patched.json "d[\"artifact_dir\"]")/bzImage") &&
	KLAB_DB=$SCRATCH/other.db "$KLAB" kernels build --artifact-dir "$A" --json >adopt-base.json 2>adopt-base.err &&
	KLAB_DB=$SCRATCH/other.db "$KLAB" -v kernels build --artifact-dir "$A" --series "$D/somaxconn.patch" \
		--json >adopt.json 2>adopt.err &&
	test_grep "found in the artifact store, built before by key" adopt.err &&
	test "$(jq_ adopt.json "d[\"cached\"]")" = true &&
	for f in key release build_id artifact_dir; do
		test "$(jq_ adopt.json "d[\"$f\"]")" = "$(jq_ patched.json "d[\"$f\"]")" || return 1
	done &&
	test "$(jq_ adopt-base.json "d[\"build_id\"]")" = "$(jq_ base.json "d[\"build_id\"]")" &&
	test "$(stat -c %Y "$(jq_ patched.json "d[\"artifact_dir\"]")/bzImage")" = "$stamp" &&
	test "$(sqlite3 "$SCRATCH/other.db" "SELECT state, variant, series_id IS NOT NULL, json_extract(apply_log, \"\$[0].how\"),
		length(config_sha256) FROM kernels ORDER BY id")" = "ok|base|0||64
ok|patched|1|clean|64" &&
	KLAB_DB=$SCRATCH/other.db "$KLAB" kernels show "$(jq_ adopt.json "d[\"id\"]")" >adopt-show.txt &&
	test_grep "^release *$(jq_ patched.json "d[\"release\"]")$" adopt-show.txt
'

test_expect_success KBUILD 'an artifact folder whose meta.json names another key is not taken: a warning, and a build' '
	base=$(jq_ base.json "d[\"artifact_dir\"]") &&
	mkdir -p "$SCRATCH/a2" &&
	cp -a "$base" "$SCRATCH/a2/" &&
	sed -i "s/\"key\": *\"[0-9a-f]*\"/\"key\": \"$(printf "%064d" 0)\"/" "$SCRATCH/a2/$(basename "$base")/meta.json" &&
	grep -q "\"key\": \"0000" "$SCRATCH/a2/$(basename "$base")/meta.json" &&
	KLAB_DB=$SCRATCH/third.db "$KLAB" kernels build --artifact-dir "$SCRATCH/a2" --json >t.json 2>t.err &&
	test_grep "has no usable meta.json for key" t.err &&
	test "$(jq_ t.json "d[\"cached\"]")" = false &&
	grep -q "\"key\": \"$(jq_ base.json "d[\"key\"]")\"" "$SCRATCH/a2/$(basename "$base")/meta.json"
'

test_expect_success KBUILD 'a patch that does not apply: subject and failing hunk named, nothing stored touched' '
	sum=$(sha256sum <"$(jq_ base.json "d[\"artifact_dir\"]")/bzImage") &&
	test_expect_code 1 "$KLAB" kernels build --artifact-dir "$A" --series "$D/notapply.patch" >out 2>err &&
	test_grep "cannot apply patch 1/1 .net: a change written for some other tree (klab build test). to tree .linux-source-6.1." err &&
	test_grep "net/core/net_namespace.c hunk #1 failed at line 377: @@ -377,7 +377,7 @@" err &&
	test "$(sqlite3 "$KLAB_DB" "SELECT COUNT(*) FROM kernels WHERE state = \"failed\" AND error LIKE \"%hunk #1 failed%\"")" = 1 &&
	test "$(sha256sum <"$(jq_ base.json "d[\"artifact_dir\"]")/bzImage")" = "$sum" &&
	test -z "$($KGIT -C "$SRC" status --porcelain)" &&
	test "$($KGIT -C "$SRC" rev-parse HEAD)" = "$($KGIT -C "$SRC" rev-parse "klab-import^{commit}")"
'

test_expect_success KBUILD 'seed 003 through intake applies to 6.1 with fuzz (patch -p1), recorded per patch' '
	"$KLAB" kernels build --series "$D/seeds/003_1ddf0ef0bfe7a1c4.txt" --apply-only >out 2>err &&
	test_grep "^1/2 udp: introduce udp specific skb destructor: fuzz (patch -p1 --fuzz=2, max fuzz 2," out &&
	test_grep "^2/2 udp: optimise write wakeups with SOCK_NOSPACE: " out &&
	test -z "$($KGIT -C "$SRC" status --porcelain)"
'

test_expect_success KBUILD 'kernels list, show, gc' '
	"$KLAB" kernels list >out &&
	test_grep "ok .*linux-source-6.1 *base" out &&
	test_grep "failed .*linux-source-6.1 *patched" out &&
	"$KLAB" kernels show "$(jq_ patched.json "d[\"id\"]")" --json >show.json &&
	test "$(jq_ show.json "d[\"apply_log\"][0][\"how\"]")" = clean &&
	"$KLAB" kernels show "$(jq_ base.json "d[\"key\"]" | cut -c1-12)" >show.txt &&
	test_grep "^variant *base$" show.txt &&
	"$KLAB" kernels gc --dry-run >gc &&
	test_grep "would remove 1 kernel(s)" gc &&
	"$KLAB" kernels gc >gc &&
	test_grep "removed 1 kernel(s)" gc &&
	test "$(sqlite3 "$KLAB_DB" "SELECT COUNT(*) FROM kernels")" = 2
'

test_done
