/* wl-args.c: libFuzzer target for the generators' option parser, value converters and histogram. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"
#include "log.h"
#include "wl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct hist h;
	char *text = malloc(size + 1), *argv[34], *p;
	const char *a = NULL, *c = NULL, *d = NULL, *n = NULL, *f = NULL;
	struct wl_opt opts[] = {
		{ "addr", 1, &a }, { "cpus", 1, &c }, { "duration", 1, &d }, { "flows", 1, &n },
		{ "6", 0, &f }, { NULL, 0, NULL },
	};
	struct sockaddr_storage ss;
	struct wl_cpus cpus;
	socklen_t len;
	long v;
	int argc = 2;
	size_t i;

	log_init("fuzz", 0, LOG_CRIT);
	memcpy(text, data, size);
	text[size] = 0;
	argv[0] = "udp-rr";
	argv[1] = "client";
	for (p = text; argc < 33 && p < text + size; ) {	/* words split on newlines */
		char *nl = strchr(p, '\n');

		argv[argc++] = p;
		if (!nl)
			break;
		*nl = 0;
		p = nl + 1;
	}
	argv[argc] = NULL;
	if (!wl_parse_opts(argc, argv, 2, opts)) {
		if (c && !wl_arg_cpus("cpus", c, &cpus))
			wl_cpus_release(&cpus);
		if (a)
			wl_arg_addr("addr", a, f != NULL, 9000, &ss, &len);
		if (d)
			wl_arg_duration("duration", d, 100, 86400000L, &v);
		if (n)
			wl_arg_long("flows", n, 1, 65536, &v);
	}
	hist_init(&h);
	for (i = 0; i + 8 <= size; i += 8) {
		uint64_t x;

		memcpy(&x, data + i, 8);
		hist_add(&h, x);
	}
	hist_percentile(&h, 99.9);
	hist_percentile(&h, 50);
	free(text);
	return 0;
}
