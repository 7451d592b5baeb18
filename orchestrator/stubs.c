/*
 * stubs.c: weak "not implemented yet" versions of subcommands whose real
 * version lives in the file of its concern (cmds.h names it). The linker
 * takes the real one when it exists; until then the command says so and
 * fails, and nothing pretends to work.
 */
#include <stdio.h>

#include "cmds.h"
#include "log.h"

static int not_yet(const char *what)
{
	error("'%s' is not implemented yet", what);
	return 1;
}

#define STUB(fn, what) \
	__attribute__((weak)) int fn(int argc, char **argv, struct klab_ctx *ctx) \
	{ (void)argc; (void)argv; (void)ctx; return not_yet(what); }

STUB(cmd_config, "klab config")
STUB(cmd_machines, "klab machines")
STUB(cmd_machine, "klab machine")
STUB(cmd_lab, "klab lab")
STUB(cmd_series, "klab series")
STUB(cmd_kernels, "klab kernels")
STUB(cmd_submit, "klab submit")
STUB(cmd_jobs, "klab jobs")
STUB(cmd_job, "klab job")
STUB(cmd_cancel, "klab cancel")
STUB(cmd_run, "klab run")
STUB(cmd_schedule, "klab schedule")
STUB(cmd_query, "klab query")
STUB(cmd_compare, "klab compare")
STUB(cmd_history, "klab history")
STUB(cmd_report, "klab report")
STUB(lab_qemu_up, "klab lab up --qemu")
STUB(lab_qemu_down, "klab lab down --qemu")
STUB(lab_qemu_status, "klab lab status --qemu")
