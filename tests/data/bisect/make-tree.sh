#!/bin/bash
# tests/data/bisect/make-tree.sh BASE_REPO DIR [CULPRIT [COMMITS [SPIN]]]: a test tree for
# bisections. DIR becomes a bare-bones git clone of BASE_REPO (klab's import of
# linux-source-6.1: its klab-import commit is the good end) with COMMITS (default 9) commits
# on branch "bisect": comment and documentation changes that change nothing measurable, and
# at position CULPRIT (1..COMMITS, default 5; 0: none) one that adds a known cost to the UDP
# transmit path: a bounded busy loop of SPIN (default 200) iterations in udp_sendmsg(). 200
# made udp_tx to the dummy target 28% slower on the icount lab (t0902); 20 is about 4% of
# its path length (bench/bench-bisect-icount.sh). The commits are made without a checkout
# (75k files). Prints them, oldest first, "SHA SUBJECT" each.
set -eu
base=$1 dir=$2 culprit=${3:-5} commits=${4:-9} spin=${5:-200}
case $commits$spin in *[!0-9]*) echo "make-tree.sh: COMMITS and SPIN must be numbers" >&2; exit 1 ;; esac
export GIT_AUTHOR_NAME=klab-test GIT_AUTHOR_EMAIL=klab-test@localhost
export GIT_COMMITTER_NAME=klab-test GIT_COMMITTER_EMAIL=klab-test@localhost
export GIT_AUTHOR_DATE='2026-12-01T00:00:00Z' GIT_COMMITTER_DATE='2026-12-01T00:00:00Z'
# the base repository belongs to klab's build user
export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0='*'
g() { git -C "$dir" "$@"; }

rm -rf "$dir"
git clone -q --shared --no-checkout -u "git -c safe.directory='*' upload-pack" "$base" "$dir"
g read-tree klab-import
g update-ref refs/heads/bisect klab-import
g symbolic-ref HEAD refs/heads/bisect
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
# edit FILE PYTHON-EXPR-OF-s: the file's new content in the index, committed as MESSAGE
edit() {
	local path=$1 expr=$2 msg=$3 blob tree c
	g show "HEAD:$path" >"$tmp"
	python3 -c "import sys; p = sys.argv[1]; s = open(p).read(); open(p, 'w').write($expr)" "$tmp"
	blob=$(g hash-object -w "$tmp")
	g update-index --cacheinfo "100644,$blob,$path"
	tree=$(g write-tree)
	c=$(g commit-tree "$tree" -p HEAD -m "$msg")
	g update-ref refs/heads/bisect "$c"
}
udp=net/ipv4/udp.c doc=Documentation/networking/udplite.rst
anchor='int udp_sendmsg(struct sock *sk, struct msghdr *msg, size_t len)\n{'
for ((i = 1; i <= commits; i++)); do
	if [ "$i" = "$culprit" ]; then
		# the known cost: SPIN iterations of a volatile loop per datagram sent,
		# after the declarations of udp_sendmsg (the first check is 'if (len > 0xFFFF)')
		edit $udp "s.replace('\tif (len > 0xFFFF)\n\t\treturn -EMSGSIZE;\n', '\t{\t/* klab bisect test: a known cost on the transmit path */\n\t\tvolatile unsigned int klab_spin;\n\n\t\tfor (klab_spin = 0; klab_spin < $spin; klab_spin++)\n\t\t\t;\n\t}\n\tif (len > 0xFFFF)\n\t\treturn -EMSGSIZE;\n', 1) if '$anchor' in s else sys.exit('no udp_sendmsg in ' + p)" \
			"udp: spin in udp_sendmsg (the known cost of the bisect test)"
	elif [ $((i % 2)) = 0 ]; then
		edit $udp "s + '/* klab bisect test: comment $i */\n'" "udp: comment $i (no code change)"
	else
		edit $doc "s + 'klab bisect test: note $i\n'" "docs: udplite note $i"
	fi
done
g log --reverse --format='%H %s' klab-import..bisect
