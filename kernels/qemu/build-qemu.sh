#!/bin/bash
# kernels/qemu/build-qemu.sh: a qemu-system-x86_64 for the icount lab, built
# once from Debian's own qemu source package with the round-robin fairness
# change (icount-rr-fair.patch beside this script) and cached like kernels.
#
#   build-qemu.sh [--cache DIR] [--jobs N] [--version V] [--print-key]
#
# Prints the path of the binary as the last line on stdout; progress and
# errors go to stderr ("build-qemu: ..."). Exit 0 with the binary ready, 1 on
# failure, 2 on a usage error.
#
# Cache: DIR/KEY/bin/qemu-system-x86_64, KEY = the Debian source version
# (':' and '~' made '_') + '-' + the first 16 hex digits of the sha256 of the
# patch and the configure options. A second run with the same key reuses the
# binary (a few ms) and needs no network. DIR defaults to $KLAB_QEMU_CACHE or
# /var/cache/klab/qemu. Builds of one key are serialised by DIR/KEY.lock.
#
# Source: `apt-get source qemu=V` (V: --version, $KLAB_QEMU_SRC_VERSION or
# the newest version apt knows). This needs a deb-src entry for bookworm
# main; when apt knows no qemu source and we run as root, the script writes
# /etc/apt/sources.list.d/klab-deb-src.sources (Debian's archive keyring as
# Signed-By) and runs apt-get update once.
#
# Build dependencies (the Debian packages, see docs/qemu-icount.md):
#   meson ninja-build pkg-config python3 libglib2.0-dev libpixman-1-dev
#   libslirp-dev libcap-ng-dev libfdt-dev dpkg-dev
# Firmware (SeaBIOS, option ROMs) comes from the installed qemu-system-x86
# packages through --firmwarepath, so nothing else is installed system-wide.

set -u
set -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
patch_file=$here/icount-rr-fair.patch
cache=${KLAB_QEMU_CACHE:-/var/cache/klab/qemu}
jobs=2
want_version=${KLAB_QEMU_SRC_VERSION:-}
print_key=0
deps="meson ninja-build pkg-config python3 libglib2.0-dev libpixman-1-dev libslirp-dev
	libcap-ng-dev libfdt-dev dpkg-dev"
firmware=/usr/share/qemu:/usr/share/seabios:/usr/lib/ipxe/qemu
# Only what the lab uses: TCG, user networking (slirp), tap, virtio-net,
# virtio-9p (needs cap-ng and attr), virtio-rng, serial, the pc machine.
configure_opts=(--target-list=x86_64-softmmu --without-default-features
	--enable-tcg --enable-slirp --enable-virtfs --enable-cap-ng --enable-attr
	--enable-fdt=system --disable-docs --disable-tools --disable-guest-agent
	--disable-install-blobs --disable-werror --with-git-submodules=ignore
	"--firmwarepath=$firmware")

say() { echo "build-qemu: $*" >&2; }
die() { echo "build-qemu: $*" >&2; exit 1; }
usage() {
	echo "usage: build-qemu.sh [--cache DIR] [--jobs N] [--version V] [--print-key]" >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case "$1" in
	--cache) [ $# -ge 2 ] || usage; cache=$2; shift 2 ;;
	--jobs) [ $# -ge 2 ] || usage; jobs=$2; shift 2 ;;
	--version) [ $# -ge 2 ] || usage; want_version=$2; shift 2 ;;
	--print-key) print_key=1; shift ;;
	-h|--help) usage ;;
	*) echo "build-qemu: unknown argument '$1'" >&2; usage ;;
	esac
done
case "$jobs" in ''|*[!0-9]*|0) die "cannot use --jobs '$jobs': not a positive number" ;; esac
[ -r "$patch_file" ] || die "cannot read the patch '$patch_file'"

# The key part that does not depend on the source version.
recipe_hash=$( { cat "$patch_file"; printf '%s\n' "${configure_opts[@]}"; } |
	sha256sum | cut -c1-16)

# The newest qemu source version apt knows ("" when none).
apt_src_version() {
	apt-cache showsrc qemu 2>/dev/null | awk '/^Version:/ { print $2 }' | sort -V | tail -1
}

# A cached build of this recipe, any source version (for hosts without apt
# source lists): the most recently built one.
cached_any() {
	ls -1td "$cache"/*-"$recipe_hash"/bin/qemu-system-x86_64 2>/dev/null | head -1
}

add_deb_src() {
	local f=/etc/apt/sources.list.d/klab-deb-src.sources
	[ "$(id -u)" = 0 ] || return 1
	[ -e "$f" ] && return 1
	say "apt knows no qemu source package: adding $f (deb-src bookworm main) and running apt-get update"
	cat > "$f" <<-EOF || return 1
	Types: deb-src
	URIs: http://deb.debian.org/debian
	Suites: bookworm
	Components: main
	Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
	EOF
	apt-get update -q >&2 || say "apt-get update failed (see above)"
	return 0
}

version=$want_version
if [ -z "$version" ]; then
	version=$(apt_src_version)
	if [ -z "$version" ]; then
		bin=$(cached_any)
		if [ -n "$bin" ]; then
			say "apt knows no qemu source package; using the cached build '$bin'"
			[ $print_key = 1 ] && basename "$(dirname "$(dirname "$bin")")"
			echo "$bin"
			exit 0
		fi
		add_deb_src && version=$(apt_src_version)
		[ -n "$version" ] || die "cannot find the qemu source package: apt has no deb-src entry for bookworm main (add one with Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg, then apt-get update; see docs/qemu-icount.md)"
	fi
fi
key=$(printf '%s' "$version" | tr ':~/' '___')-$recipe_hash
dest=$cache/$key
bin=$dest/bin/qemu-system-x86_64

if [ $print_key = 1 ]; then
	echo "$key"
fi
if [ -x "$bin" ]; then
	say "cached: $bin"
	echo "$bin"
	exit 0
fi

mkdir -p "$cache" || die "cannot create the cache folder '$cache'"
exec 9> "$dest.lock" || die "cannot open the lock '$dest.lock'"
if ! flock -n 9; then
	say "another build of '$key' is running; waiting for its lock '$dest.lock'"
	flock 9 || die "cannot take the lock '$dest.lock'"
fi
if [ -x "$bin" ]; then	# built while we waited
	say "cached: $bin"
	echo "$bin"
	exit 0
fi

missing=
for p in $deps; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $p"
done
[ -z "$missing" ] || die "cannot build qemu: build dependencies missing:$missing (apt-get install --no-install-recommends$missing)"

work=$cache/.build-$key
rm -rf "$work"
mkdir -p "$work/src" || die "cannot create the build folder '$work'"
start=$(date +%s)

say "fetching the Debian source package qemu=$version into $work/src"
# apt's _apt user must be able to write there, or apt warns and downloads unsandboxed.
chown _apt "$work/src" 2>/dev/null
if ! (cd "$work/src" && apt-get source -q --download-only "qemu=$version") > "$work/fetch.log" 2>&1; then
	tail -5 "$work/fetch.log" >&2
	die "cannot fetch the qemu source package 'qemu=$version' (no deb-src entry for bookworm main, no network, or the version left the archive: try --version with the one 'apt-cache showsrc qemu' lists); log: $work/fetch.log"
fi
dsc=$(ls "$work"/src/qemu_*.dsc 2>/dev/null | head -1)
[ -n "$dsc" ] || die "cannot find the .dsc of qemu=$version in '$work/src'"
say "unpacking $(basename "$dsc") (Debian's patches applied by dpkg-source)"
(cd "$work/src" && dpkg-source -q -x "$dsc" tree) > "$work/unpack.log" 2>&1 ||
	die "cannot unpack '$dsc'; log: $work/unpack.log"
src=$work/src/tree

say "applying $(basename "$patch_file")"
patch -d "$src" -p1 --forward --batch < "$patch_file" > "$work/patch.log" 2>&1 ||
	{ cat "$work/patch.log" >&2; die "cannot apply '$patch_file' to qemu $version (its round-robin code changed: the patch needs a refresh)"; }

mkdir -p "$work/build"
say "configuring (x86_64-softmmu only; log: $work/configure.log)"
(cd "$work/build" && nice -n 19 "$src/configure" "${configure_opts[@]}" \
	"--prefix=$dest" "--with-pkgversion=klab $key") > "$work/configure.log" 2>&1 ||
	{ tail -15 "$work/configure.log" >&2; die "cannot configure qemu $version; log: $work/configure.log"; }

# ninja prints "[N/M] ..." per step into the log; show where it is every 30 s.
say "compiling with -j$jobs under nice 19 (about 20-30 min on 2 busy cores; log: $work/build.log)"
# Only the emulator: the default target also builds ~800 test programs.
nice -n 19 ninja -C "$work/build" -j "$jobs" qemu-system-x86_64 > "$work/build.log" 2>&1 &
ninja_pid=$!
trap 'kill $ninja_pid 2>/dev/null' EXIT
while kill -0 $ninja_pid 2>/dev/null; do
	for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do
		sleep 2
		kill -0 $ninja_pid 2>/dev/null || break
	done
	step=$(grep -o '^\[[0-9]*/[0-9]*\]' "$work/build.log" 2>/dev/null | tail -1)
	say "compiling ${step:-[starting]} after $(( $(date +%s) - start )) s"
done
wait $ninja_pid
rc=$?
trap - EXIT
if [ $rc != 0 ]; then
	grep -B2 -A8 -m3 'error' "$work/build.log" >&2 || tail -20 "$work/build.log" >&2
	die "cannot compile qemu $version (ninja exit $rc); log: $work/build.log"
fi

# Staged, checked, then renamed into place: a half-installed folder never
# looks like a cached build. The binary alone is enough: firmware comes
# from --firmwarepath, and keymaps serve only the displays the lab has none of.
say "installing into $dest"
install -D -m 0755 "$work/build/qemu-system-x86_64" "$work/stage$bin" ||
	die "cannot install qemu into '$work/stage$dest'"
"$work/stage$bin" --version > "$work/version.txt" 2>&1 ||
	{ cat "$work/version.txt" >&2; die "the built '$work/stage$bin' does not run"; }
secs=$(( $(date +%s) - start ))
{
	echo "source: qemu $version (Debian source package)"
	echo "patch: $(basename "$patch_file") sha256 $(sha256sum < "$patch_file" | cut -d' ' -f1)"
	echo "configure: ${configure_opts[*]}"
	echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) in $secs s, load $(cut -d' ' -f1-3 /proc/loadavg)"
	head -1 "$work/version.txt"
} > "$work/stage$dest/KLAB-BUILD"
rm -rf "$dest"
mv "$work/stage$dest" "$dest" || die "cannot move the build into '$dest'"
rm -rf "$work"
say "built $bin in $secs s"
echo "$bin"
