# tests/demo-config.sh: the two configs of the demo (tests/demo.sh), sourced by it and by t0007.
#
# DEMO/klab.conf is the results config: the demo's database and reports, the
# kernel cache's artifact store and the tree, nothing of the lab, so that it
# loads after `klab lab down` and `klab compare`, `klab query` and `klab
# report` keep working on the demo's results. DEMO/lab.conf is the config of the lab phases: the same
# [lab] folders, the lab fragment `klab lab up` wrote and the demo's jobs; it
# names the lab's machines, so it stops loading when the lab is down.
#
# Both are written by demo_write_config OUT [FRAGMENT JOBFILE] from DEMO,
# MODE (qemu|netns) and SRCDIR.

demo_write_config() {	# demo_write_config OUT [FRAGMENT JOBFILE]
	local out=$1
	shift
	{
		if [ $# = 0 ]; then
			echo "# written by tests/demo.sh: the demo's results config (database, artifacts,"
			echo "# reports, the tree); it loads without the lab: klab compare/query/report"
		else
			echo "# written by tests/demo.sh: the demo's lab config (the results config's folders,"
			echo "# the lab's machines, the jobs); it loads only while the lab is up"
		fi
		echo "[lab]"
		echo "	db = $DEMO/klab.db"
		echo "	work_dir = $DEMO/work"
		# the kernels go to the kernel cache's artifact store, where a demo of
		# another clone (or after KLAB_DEMO_FRESH=1) finds them by key
		echo "	artifact_dir = ${KLAB_KERNEL_CACHE:-/var/cache/klab}/artifacts"
		echo "	report_dir = $DEMO/report"
		# a netns machine shares the host's files: keep the agent's tuning
		# state apart from other netns labs with a machine named dut
		[ "$MODE" = netns ] && echo "	agent_dir = $DEMO/agent"
		if [ $# = 0 ]; then
			echo "[include]"
			echo "	path = $SRCDIR/kernels/lab/demo-tree.conf"
		else
			echo "[include]"
			echo "	path = $1"
			echo "[include]"
			echo "	path = $2"
		fi
	} >"$out"
}

demo_results_hint() {	# demo_results_hint KLAB JOB_ID...: how to use the results after the demo (its last lines)
	local klab=$1
	shift
	echo "demo: the results stay in $DEMO/klab.db; its config $DEMO/klab.conf loads without the lab:"
	echo "  KLAB_CONFIG=$DEMO/klab.conf $klab compare $1"
	echo "  KLAB_CONFIG=$DEMO/klab.conf $klab query --job $1 --metric tps"
	echo "  KLAB_CONFIG=$DEMO/klab.conf $klab report --out $DEMO/report $*"
	echo "  (or without a config: $klab --db $DEMO/klab.db compare $1)"
}
