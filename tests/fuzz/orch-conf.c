/* orch-conf.c (fuzz): the config parser (git-config syntax, sections, values, cron) on arbitrary text. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "conf/conf.h"
#include "log.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *path;
	static FILE *devnull;
	struct klab_config cfg;

	/* conf_load reads a file: the input is written to one per process */
	if (!path) {
		const char *tmp = getenv("TMPDIR");

		log_init("fuzz-conf", 0, LOG_EMERG);
		path = xasprintf("%s/klab-fuzz-conf.%d", tmp && *tmp ? tmp : "/tmp", (int)getpid());
		devnull = fopen("/dev/null", "w");
	}
	if (write_file_atomic(path, data, size, 0600) < 0)
		return 0;
	if (conf_load(&cfg, path) == 0) {
		if (devnull)
			conf_print(&cfg, devnull);
		conf_free(&cfg);
	}
	unlink(path);
	return 0;
}
