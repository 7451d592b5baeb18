#!/bin/bash
# tests/demo.sh: README command 1 (`make demo`): a real baseline-vs-patched kernel job, end to end.
#
#   bash tests/demo.sh qemu     # make demo: seed 003 on 6.1, two qemu guests, kexec, ABBA
#   bash tests/demo.sh netns    # make demo-netns: a tuning A/B on the netns lab (boot = none)
#
# qemu: imports linux-source-6.1 and seed 003 (udp_wfree, ../shared/seeds)
# through the intake path (`klab series import`), builds the baseline and
# the patched kernel (`klab kernels build`), boots the qemu lab from the
# baseline, runs the job `demo-udp-wfree` of kernels/lab/demo-qemu.conf
# (udp_tx to a dummy device with io_uring, udp_rr between the guests, the
# cpu nic perf-stat perf-profile bpftrace monitors, 2 boots per kernel in
# ABBA order with kexec inside the guests), prints the comparison, writes
# the report pages and prints the path of their index.
#
# Environment:
#   KLAB             the klab program (default: orchestrator/klab, made by `make`)
#   KLAB_DEMO_DIR    scratch folder (default: lab/demo-MODE in the project)
#   KLAB_DEMO_FRESH  1: remove the scratch folder first (default: keep its
#                    database). The kernels stay in the kernel cache's artifact
#                    store (KLAB_KERNEL_CACHE, default /var/cache/klab), where
#                    any later demo finds them by key and skips the builds
#   KLAB_DEMO_JOBS   jobs to run (default: demo-udp-wfree; add demo-napi-consume,
#                    seed 004, or demo-ooo-okay
#                    for seed 000 with its 6.1 fix-up; demo-ooo-okay-cm or
#                    demo-napi-consume-cm: the same on the cache model,
#                    docs/cache-model.md; netns: demo-netns-xps)
#   KLAB_DEMO_PAIRS  guests of the lab's pool "demo" (default 2 on the icount clock
#                    with one vCPU, else 1): seed 003's job (pairs = 2) boots
#                    its two sides on two guests at once
#   KLAB_DEMO_CLOCK  icount|real: the lab's clock instead of the job's own
#                    (a cache-model lab on icount answered ssh in 2 minutes at
#                    load 13-28: docs/cache-model.md)
#   KLAB_DEMO_LAB_ARGS  more options of `klab lab up --qemu`, e.g. "--index 31
#                    --timeout 900" (two demos' labs apart; a cache-model lab
#                    on a busy host answers ssh after more than 300 s)
#   KLAB_SHARED      the shared folder with seeds/ (default: ../shared)
#   KLAB_DEMO_CALIBRATIONS  the demo's calibration file, kept across clones (default:
#                    KLAB_KERNEL_CACHE/calibrations/demo-MODE.json): imported into
#                    the demo's database before the jobs, written back after them
#                    (docs/demo.md, "The calibration"); empty: none
#   KLAB_DEMO_NO_CALIBRATION  1: neither import nor learn (a first demo on this machine)
# Each phase prints its progress; the wall time of every phase is printed at
# the end. The lab is stopped at exit, also on failure or Ctrl-C.

set -u -o pipefail
MODE=${1:-qemu}
case "$MODE" in qemu|netns) ;; *) echo "usage: bash tests/demo.sh qemu|netns" >&2; exit 2 ;; esac

SRCDIR=$(cd "$(dirname "$0")/.." && pwd)
# The demo configs name the seeds as ../shared/seeds, read from the project root.
cd "$SRCDIR" || exit 1
SHARED=${KLAB_SHARED:-$(cd "$SRCDIR/.." && pwd)/shared}
KLAB=${KLAB:-$SRCDIR/orchestrator/klab}
DEMO=${KLAB_DEMO_DIR:-$SRCDIR/lab/demo-$MODE}
if [ "$MODE" = qemu ]; then
	JOBS=${KLAB_DEMO_JOBS:-demo-udp-wfree}
	for j in demo-napi-consume demo-napi-consume-cm; do
		case " $JOBS " in *" $j "*)
			[ "$(echo $JOBS)" = $j ] || {
				echo "demo: $j (seed 004) runs on a lab of its own (real clock, peer guest):" \
				     "run it alone, KLAB_DEMO_JOBS=$j, not with '$JOBS'" >&2
				exit 2
			}
		esac
	done
else
	JOBS=${KLAB_DEMO_JOBS:-demo-netns-xps}
fi
LAB=$DEMO/$MODE
# the results config (loads without the lab) and the lab phases' config: tests/demo-config.sh
CONF=$DEMO/klab.conf
LABCONF=$DEMO/lab.conf
export KLAB_CONFIG=$CONF
. "$SRCDIR/tests/demo-config.sh"

phase_names=()
phase_secs=()
phase_t0=0
demo_t0=$(date +%s.%N)
cur_phase=""

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

phase() {	# phase NAME: close the previous phase, open this one
	phase_end
	cur_phase=$1
	phase_t0=$(now)
	echo
	echo "==> [$(date -u +%H:%M:%S)] $cur_phase"
}

phase_end() {
	[ -n "$cur_phase" ] || return 0
	phase_names+=("$cur_phase")
	phase_secs+=("$(elapsed "$phase_t0")")
	cur_phase=""
}

print_times() {
	local i total
	phase_end
	total=$(elapsed "$demo_t0")
	echo
	echo "demo ($MODE): wall time per phase"
	for i in "${!phase_names[@]}"; do
		printf '  %-44s %8s s\n' "${phase_names[$i]}" "${phase_secs[$i]}"
	done
	printf '  %-44s %8s s\n' "total" "$total"
}

lab_down() {
	if [ -f "$LAB/lab.state" ] || [ -f "$LAB/netns.state" ]; then
		echo "demo: stopping the $MODE lab in $LAB"
		"$KLAB" lab down --"$MODE" --dir "$LAB" >/dev/null 2>&1 ||
			"$KLAB" lab down --"$MODE" --dir "$LAB"
	fi
}

fail() {
	echo "demo: FAILED in phase '$cur_phase': $*" >&2
	lab_down
	print_times
	echo "demo: scratch folder kept: $DEMO" >&2
	exit 1
}

trap 'echo; fail "interrupted"' INT TERM

# json_field FILE KEY: a top-level number or string of a JSON document.
json_field() {
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"
}

[ -x "$KLAB" ] || { echo "demo: $KLAB not found: run make first" >&2; exit 1; }

phase "setup: scratch folder $DEMO"
if [ -d "$DEMO" ]; then
	lab_down
	if [ "${KLAB_DEMO_FRESH:-0}" = 1 ]; then
		rm -rf "$DEMO"
	else
		# keep the database; the kernels are found by key in the
		# artifact store either way
		echo "reusing the database of an earlier run (KLAB_DEMO_FRESH=1: start over)"
		rm -rf "$DEMO/report" "$DEMO/work" "$LAB"
	fi
fi
mkdir -p "$DEMO/work" "$DEMO/report" || fail "cannot make $DEMO"
echo "klab: $KLAB ($("$KLAB" version 2>/dev/null || echo '?'))"
echo "config: $CONF (results), $LABCONF (while the lab is up); jobs: $JOBS"

demo_write_config "$CONF"
if [ "$MODE" = qemu ]; then
	# seed 003's intake and kernel (README command 1's job), unless only another job runs
	with003=0
	case " $JOBS " in *" demo-udp-wfree "*) with003=1 ;; esac
	if [ $with003 = 1 ]; then
		seed003=$(ls "$SHARED"/seeds/003_*.txt 2>/dev/null | head -n 1)
		[ -n "$seed003" ] || fail "seed 003 not found in $SHARED/seeds"

		phase "intake: klab series import seed 003"
		"$KLAB" --json series import "$seed003" >"$DEMO/series.json" ||
			fail "klab series import $seed003"
		series_id=$(json_field "$DEMO/series.json" id) || fail "no series id in $DEMO/series.json"
		"$KLAB" series show --id "$series_id" | sed -n '1,12p;/^expectations/,/^proposed/p'
	fi

	phase "build: baseline linux-source-6.1 (tinyconfig + qemu.config)"
	"$KLAB" --json kernels build --tree linux-source-6.1 --variant base >"$DEMO/base.json" ||
		fail "klab kernels build (baseline)"
	base_id=$(json_field "$DEMO/base.json" id) || fail "no kernel id in $DEMO/base.json"
	"$KLAB" kernels show "$base_id" | sed -n '1,12p'

	if [ $with003 = 1 ]; then
		phase "build: patched (baseline + seed 003)"
		"$KLAB" --json kernels build --tree linux-source-6.1 --series-id "$series_id" \
			>"$DEMO/patched.json" || fail "klab kernels build --series-id $series_id"
		patched_id=$(json_field "$DEMO/patched.json" id) || fail "no kernel id in $DEMO/patched.json"
		"$KLAB" kernels show "$patched_id" | sed -n '1,16p'
	fi

	# build_seed JOB SEED FIXUP: the kernel of a further job, its seed and 6.1 fix-up
	build_seed() {
		local seed
		case " $JOBS " in *" $1 "*) ;; *) return 0 ;; esac
		phase "intake + build: seed $2 with its 6.1 fix-up (job $1)"
		seed=$(ls "$SHARED"/seeds/"$2"_*.txt | head -n 1)
		"$KLAB" --json kernels build --tree linux-source-6.1 --series "$seed" \
			--local-patch "$SRCDIR/kernels/patches/$3" \
			>"$DEMO/$1.json" || fail "klab kernels build (seed $2)"
	}
	build_seed demo-ooo-okay 000 000-6.1-sk-wmem-alloc-bias.patch
	build_seed demo-napi-consume 004 004-6.1-release-head-state-twice.patch
	build_seed demo-ooo-okay-cm 000 000-6.1-sk-wmem-alloc-bias.patch
	build_seed demo-napi-consume-cm 004 004-6.1-release-head-state-twice.patch

	# The instruction-counting lab (docs/qemu-icount.md): one qemu, the peer a
	# namespace of the dut, so a verdict is a path-length verdict that 2 boots
	# per side decide. Seed 000's job needs 2 CPUs and 2 queues (XPS). Seed 004's
	# job runs alone on a real-clock lab with a peer guest (TX completions need a
	# NIC with interrupts, not the veth of the peer namespace), the NIC's
	# interrupts on CPU 1 (txcompl): kernels/lab/demo-qemu.conf says why.
	# A job named *-cm runs on the cache model (docs/cache-model.md): the lab
	# gets --cache-model, and so does every other job of the same demo.
	clock=icount
	case " $JOBS " in
	*" demo-napi-consume "*|*" demo-napi-consume-cm "*)
		smp="--smp 2 --queues 2 --peer guest --profile txcompl" clock=real ;;
	*" demo-ooo-okay "*|*" demo-ooo-okay-cm "*) smp="--smp 2 --queues 2 --profile xps" ;;
	*) smp="--smp 1" ;;
	esac
	case " $JOBS " in *"-cm "*) smp="$smp --cache-model" ;; esac
	clock=${KLAB_DEMO_CLOCK:-$clock}
	# Seed 003's job takes the pool's pairs (pairs = 2 in demo-qemu.conf): on the
	# icount clock with one vCPU two guests boot its two sides at once (a guest's
	# path length does not depend on its neighbour: docs/qemu-lab.md); on the
	# real clock, or with 2 vCPUs a guest, the two would share this host's cores.
	pairs=1
	[ "$clock" = icount ] && [ "$smp" = "--smp 1" ] && pairs=2
	pairs=${KLAB_DEMO_PAIRS:-$pairs}
	phase "lab: klab lab up --qemu --clock $clock ($smp, $pairs pair(s) in pool demo) from the baseline"
	# shellcheck disable=SC2086
	"$KLAB" lab up --qemu --clock "$clock" --kernel-id "$base_id" $smp --pairs "$pairs" --pool demo \
		${KLAB_DEMO_LAB_ARGS:-} --dir "$LAB" || fail "klab lab up --qemu"
	demo_write_config "$LABCONF" "$LAB/klab.conf" "$SRCDIR/kernels/lab/demo-qemu.conf"
	# a cache-model guest under load took more than the 10 s default to authenticate
	case " $JOBS " in *"-cm "*) printf '[lab]\n\tssh_timeout = 120s\n' >>"$LABCONF" ;; esac
else
	phase "lab: klab lab up --netns (dut + peer namespaces, multi-queue veth)"
	"$KLAB" lab up --netns --dir "$LAB" || fail "klab lab up --netns"
	demo_write_config "$LABCONF" "$LAB/klab.conf" "$SRCDIR/kernels/lab/demo-netns.conf"
fi
# the lab phases use the lab config; compare and report the results config
export KLAB_CONFIG=$LABCONF
"$KLAB" config check "$LABCONF" || fail "the demo's lab config does not load"

# The calibration (docs/demo.md, "The calibration"): what earlier demos on this
# machine learnt about the noise of its instruments. A job of boots = 1..N
# decides at one boot a side with it, and goes on to more boots without one
# (or with a stale one: another instrument key), and learns afterwards.
CALFILE=${KLAB_DEMO_CALIBRATIONS-${KLAB_KERNEL_CACHE:-/var/cache/klab}/calibrations/demo-$MODE.json}
[ "${KLAB_DEMO_NO_CALIBRATION:-0}" = 1 ] && CALFILE=
if [ -n "$CALFILE" ] && [ -f "$CALFILE" ]; then
	phase "calibration: klab calibrate import $CALFILE"
	"$KLAB" calibrate import "$CALFILE" || fail "klab calibrate import $CALFILE"
fi

job_ids=()
job_names=()
for job in $JOBS; do
	phase "job $job: klab run (ABBA boots, workloads, monitors)"
	"$KLAB" --json submit --job "$job" >"$DEMO/submit-$job.json" || fail "klab submit --job $job"
	id=$(json_field "$DEMO/submit-$job.json" id) || fail "no job id"
	job_ids+=("$id")
	job_names+=("$job")
	"$KLAB" run "$id" || fail "klab run $id (see: klab job show $id)"
done


export KLAB_CONFIG=$CONF
phase "compare: klab compare"
for id in "${job_ids[@]}"; do
	"$KLAB" compare "$id" >"$DEMO/compare-$id.txt" || fail "klab compare $id"
	cat "$DEMO/compare-$id.txt"
done

phase "report: klab report"
"$KLAB" report --out "$DEMO/report" "${job_ids[@]}" || fail "klab report"

if [ -n "$CALFILE" ]; then
	# after the comparison, which used the calibration as the job's looks did:
	# the same-kernel boots of each side (2 or more a side) add to it
	phase "calibration: klab calibrate learn, export to $CALFILE"
	"$KLAB" calibrate learn "${job_ids[@]}" | grep -v '^    instrument ' ||
		fail "klab calibrate learn ${job_ids[*]}"
	mkdir -p "$(dirname "$CALFILE")" && "$KLAB" calibrate export "$CALFILE" ||
		fail "klab calibrate export $CALFILE"
fi

phase "lab: klab lab down"
lab_down
"$KLAB" config check "$CONF" >/dev/null || fail "the demo's results config does not load after lab down"
print_times
index=$DEMO/report/index.html
[ -f "$index" ] || { echo "demo: no report index at $index" >&2; exit 1; }
echo
# The answer on one screen: per workload its headline verdict, the change with
# its 95% CI, what measured it and the claim check, then what the clock means
# (the first lines of klab compare, whose full tables scrolled past above).
echo
for i in "${!job_ids[@]}"; do
	echo "demo: the answer of job ${job_ids[$i]} (${job_names[$i]}):"
	sed -n '1,/^workload /p' "$DEMO/compare-${job_ids[$i]}.txt" | grep -v '^workload ' | sed '/^$/d' |
		fold -s -w 98 | sed 's/^/  /'
	# what each monitor cost (observation runs; no verdict reads them: docs/observation.md)
	"$KLAB" report --format=mail "${job_ids[$i]}" 2>/dev/null | sed -n '/^monitor cost/,/^$/p' |
		sed '/^$/d' | fold -s -w 98 | sed 's/^/  /'
done
echo
demo_results_hint "$KLAB" "${job_ids[@]}"
echo "demo: report: $index"
