/* cachemodel.h: a run's window under klab's cache model (docs/cache-model.md). */
#ifndef KLAB_AGENT_CACHEMODEL_H
#define KLAB_AGENT_CACHEMODEL_H

#include <stdint.h>

struct json_object;

/* Where the qemu lab's guest-init mounts the plugin's windows (9p, uncached). */
#define CACHE_MODEL_DIR "/run/klab/cache-model"

struct cm_ctx {
	int on;			/* the window is marked (CACHE_MODEL_DIR is mounted) */
	int64_t before;		/* the last window number before ours */
	char path[128];		/* CACHE_MODEL_DIR/NAME.jsonl */
};

/*
 * At the window's edges: when CACHE_MODEL_DIR is a 9p mount (/proc/self/mounts) (a qemu lab
 * guest with --cache-model), note the last window and execute the start
 * mark; at the end the stop mark. Elsewhere nothing happens.
 */
void cm_window_start(struct cm_ctx *c);
void cm_window_end(struct cm_ctx *c);
/*
 * Read the run's window (the one after `before`) and add "cache_model" (the
 * model's text and counts) and the metrics model_{l1d,l2,llc,coh}_miss_per_op
 * and model_cycles_per_op (ops > 0) to the result; a missing window is warned about.
 */
void cm_finish(struct cm_ctx *c, struct json_object *result, double ops);

#endif
