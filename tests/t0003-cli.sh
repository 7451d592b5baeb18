#!/bin/bash
test_description='the klab command line: help, usage errors, exit status, a missing config'
. "$(dirname "$0")/lib.sh"

test_expect_success 'klab help lists the commands and exits 0' '
	"$KLAB" help >out &&
	test_grep "compare" out && test_grep "submit" out && test_grep "report" out
'

test_expect_success 'klab help CMD and klab CMD --help print the command usage' '
	"$KLAB" help db >out1 && test_grep "usage: klab db init" out1 &&
	"$KLAB" db --help >out2 && test_cmp out1 out2
'

test_expect_success 'no command is a usage error (2)' '
	test_expect_code 2 "$KLAB" 2>err && test_grep "usage:" err
'

test_expect_success 'an unknown command is a usage error with one clear line' '
	test_expect_code 2 "$KLAB" frobnicate 2>err &&
	test_grep "unknown command .frobnicate." err
'

test_expect_success 'an unknown global option is a usage error' '
	test_expect_code 2 "$KLAB" --frob help 2>err && test_grep "unknown option .--frob." err
'

test_expect_success 'klab --version' '
	"$KLAB" --version >out && test_grep "^klab [0-9]" out
'

# a system-wide /etc/klab/config would be found: then there is no "without any config" here
test -e /etc/klab/config || test_set_prereq NO_SYSTEM_CONFIG

test_expect_success NO_SYSTEM_CONFIG 'without any config, a command that needs one says how to give it' '
	unset KLAB_CONFIG &&
	test_expect_code 1 "$KLAB" machines 2>err &&
	test_grep "^klab: error: no configuration file: give --config FILE or set KLAB_CONFIG" err &&
	test_grep -v "not implemented yet" err
'

test_expect_success 'writing to a full stdout is a failure, not silent' '
	test_expect_code 1 "$KLAB" help >/dev/full 2>err &&
	test_grep "cannot write the output" err
'
test_done
