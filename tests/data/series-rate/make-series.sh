#!/bin/bash
# tests/data/series-rate/make-series.sh BASE_REPO DIR STAMP COUNT [SPINS]: COUNT one-patch series
# to net/ipv4/udp.c as git format-patch mails, for bench/bench-series-rate.sh. DIR becomes a
# bare-bones clone of BASE_REPO (klab's import of linux-source-6.1; every patch applies to its
# klab-import commit) and gets DIR/NN.mbox, one mail a series. Odd series are path-length
# regressions: a bounded volatile loop in udp_sendmsg() (as tests/data/bisect/make-tree.sh's
# culprit), of the sizes in SPINS in turn (default "5 20 80": about 1%, 4% and 16% of udp_tx's
# path length to the dummy target on the icount lab). Even series are neutral: the flags
# comment of udp_sendmsg reworded in place, or two of its declarations swapped with a comment at
# the end of the file, both compiling to the same instructions. STAMP (letters, digits, '-') goes
# into every diff, so each run of the bench has new series contents and new kernel cache keys:
# its patched kernels are built, not found. Prints "NN KIND SIZE FILE SUBJECT" a series, KIND
# regression (SIZE: the loop's iterations) or neutral (SIZE 0).
set -eu
base=$1 dir=$2 stamp=$3 count=$4 spins=${5:-5 20 80}
case $count in '' | *[!0-9]*) echo "make-series.sh: COUNT '$count' is not a number" >&2; exit 1 ;; esac
case $stamp in '' | *[!A-Za-z0-9-]*) echo "make-series.sh: STAMP '$stamp' is not letters, digits and '-'" >&2; exit 1 ;; esac
read -ra spin <<<"$spins"
[ ${#spin[@]} -gt 0 ] || { echo "make-series.sh: no SPINS" >&2; exit 1; }
for s in "${spin[@]}"; do
	case $s in *[!0-9]* | 0) echo "make-series.sh: SPINS: '$s' is not a count of iterations" >&2; exit 1 ;; esac
done
export GIT_AUTHOR_NAME=klab-test GIT_AUTHOR_EMAIL=klab-test@localhost
export GIT_COMMITTER_NAME=klab-test GIT_COMMITTER_EMAIL=klab-test@localhost
export GIT_AUTHOR_DATE='2026-12-01T00:00:00Z' GIT_COMMITTER_DATE='2026-12-01T00:00:00Z'
# the base repository belongs to klab's build user
export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0='*'
g() { git -C "$dir/git" "$@"; }

rm -rf "$dir"
mkdir -p "$dir"
git clone -q --shared --no-checkout -u "git -c safe.directory='*' upload-pack" "$base" "$dir/git"
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
udp=net/ipv4/udp.c
# series NN EXPR SUBJECT BODY: udp.c as the python expression EXPR of its text s, committed on
# klab-import and written as DIR/NN.mbox
series() {
	local nn=$1 expr=$2 subject=$3 body=$4 blob tree c
	g show "klab-import:$udp" >"$tmp"
	python3 -c "import sys; p = sys.argv[1]; s = open(p).read(); t = $expr; open(p, 'w').write(t)" "$tmp" ||
		{ echo "make-series.sh: cannot edit $udp for series $nn" >&2; exit 1; }
	g read-tree klab-import
	blob=$(g hash-object -w "$tmp")
	g update-index --cacheinfo "100644,$blob,$udp"
	tree=$(g write-tree)
	c=$(printf '%s\n\n%s\n\nSigned-off-by: klab-test <klab-test@localhost>\n' "$subject" "$body" |
		g commit-tree "$tree" -p klab-import)
	g format-patch -1 --stdout --subject-prefix=PATCH "$c" >"$dir/$nn.mbox"
	[ -s "$dir/$nn.mbox" ] || { echo "make-series.sh: no mail for series $nn" >&2; exit 1; }
}
# each edit must change the file: a missing anchor is an error, not an empty patch
need() { echo "(s.replace($1, $2, 1) if $1 in s else sys.exit('no anchor for series in ' + p))"; }
decl="'\tint free = 0;\n\tint connected = 0;\n'"
swapped="'\tint connected = 0;\n\tint free = 0;\n'"
flags="' *\tCheck the flags.\n'"
sendmsg="'\tif (len > 0xFFFF)\n\t\treturn -EMSGSIZE;\n\n\t/*\n\t *\tCheck the flags.'"
r=0 n=0
for ((i = 1; i <= count; i++)); do
	nn=$(printf %02d "$i")
	if [ $((i % 2)) = 1 ]; then
		size=${spin[r % ${#spin[@]}]}
		r=$((r + 1))
		subj="udp: spin $size times in udp_sendmsg (series $nn)"
		series "$nn" "$(need "$sendmsg" "'\t{\t/* klab series bench $stamp $nn: a known cost on the transmit path */\n\t\tvolatile unsigned int klab_spin;\n\n\t\tfor (klab_spin = 0; klab_spin < $size; klab_spin++)\n\t\t\t;\n\t}\n' + $sendmsg")" \
			"$subj" "A known path-length cost of $size loop iterations per datagram sent, for the series rate bench ($stamp)."
		echo "$nn regression $size $dir/$nn.mbox $subj"
	else
		if [ $((n % 2)) = 0 ]; then
			subj="udp: reword the flags comment of udp_sendmsg (series $nn)"
			series "$nn" "$(need "$flags" "' *\tCheck the message flags (klab series bench $stamp $nn).\n'")" \
				"$subj" "A comment only, on the line it was: no code changes ($stamp)."
		else
			subj="udp: swap two declarations of udp_sendmsg (series $nn)"
			series "$nn" "$(need "$decl" "$swapped") + '/* klab series bench $stamp $nn */\n'" \
				"$subj" "Declaration order and a comment at the end of the file: the same instructions ($stamp)."
		fi
		n=$((n + 1))
		echo "$nn neutral 0 $dir/$nn.mbox $subj"
	fi
done
