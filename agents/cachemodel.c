/* cachemodel.c: the agent's side of klab's cache model (docs/cache-model.md): marks a run's window, stores its modeled counts per operation. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "cache-mark.h"
#include "cachemodel.h"
#include "jsonh.h"
#include "log.h"
#include "monitor.h"
#include "util.h"

/* The windows of this guest: /run/klab/cache-model/NAME.jsonl, NAME from klab.name= (docs/cache-model.md). */
static int windows_path(char *out, size_t n)
{
	struct buf cmd = BUF_INIT;
	const char *p;
	int ret = -1;

	/*
	 * A 9p mount there (statfs's f_type cannot tell: over 9p2000.L it is
	 * the type of the host's file system); no mount is the usual case.
	 */
	if (buf_read_file(&cmd, "/proc/self/mounts") < 0 || !strstr(cmd.buf, " " CACHE_MODEL_DIR " 9p ")) {
		buf_release(&cmd);
		return -1;
	}
	buf_reset(&cmd);
	if (buf_read_file(&cmd, "/proc/cmdline") < 0)
		goto out;
	for (p = cmd.buf; (p = strstr(p, "klab.name=")); p++)
		if (p == cmd.buf || p[-1] == ' ') {
			size_t len = strcspn(p + 10, " \n");

			if (len && len < 32 && (size_t)snprintf(out, n, "%s/%.*s.jsonl", CACHE_MODEL_DIR,
								(int)len, p + 10) < n)
				ret = 0;
			break;
		}
out:
	buf_release(&cmd);
	return ret;
}

/* The last window in the file (a new reference), or NULL. */
static struct json_object *last_window(const char *path)
{
	struct buf b = BUF_INIT;
	struct json_object *w = NULL;
	char *nl;

	if (buf_read_file(&b, path) < 0 || !b.len)
		goto out;
	while (b.len && b.buf[b.len - 1] == '\n')
		b.buf[--b.len] = '\0';
	nl = strrchr(b.buf, '\n');
	nl = nl ? nl + 1 : b.buf;
	w = json_parse(nl, strlen(nl), "cache model window");
out:
	buf_release(&b);
	return w;
}

static int64_t wint(struct json_object *w, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(w, k, &v) ? json_object_get_int64(v) : -1;
}

void cm_window_start(struct cm_ctx *c)
{
	struct json_object *w;

	c->on = 0;
	if (windows_path(c->path, sizeof(c->path)) < 0)
		return;
	w = last_window(c->path);
	c->before = w ? wint(w, "window") : 0;
	json_object_put(w);
	c->on = 1;
	cache_mark_start();
}

void cm_window_end(struct cm_ctx *c)
{
	if (c->on)
		cache_mark_stop();
}

void cm_finish(struct cm_ctx *c, struct json_object *result, double ops)
{
	static const char *const keys[] = { "l1d_miss", "l2_miss", "llc_miss", "coh_miss", "cycles", NULL };
	struct json_object *w, *cm, *model;
	int i;

	if (!c->on)
		return;
	w = last_window(c->path);
	if (!w || wint(w, "window") != c->before + 1) {
		warn("cache model: no window of this run in '%s' (last %lld, expected %lld)", c->path,
		     (long long)(w ? wint(w, "window") : -1), (long long)c->before + 1);
		json_object_put(w);
		return;
	}
	cm = json_object_new_object();
	json_object_object_add(cm, "window", json_object_new_int64(wint(w, "window")));
	if (json_object_object_get_ex(w, "model", &model))
		json_object_object_add(cm, "model", json_object_get(model));
	for (i = 0; keys[i]; i++)
		json_object_object_add(cm, keys[i], json_object_new_int64(wint(w, keys[i])));
	json_object_object_add(cm, "insn", json_object_new_int64(wint(w, "insn")));
	json_object_object_add(result, "cache_model", cm);
	if (ops > 0) {
		/* "modeled": every figure says it comes from the model, not from a PMU */
		result_add_metric(result, "model_l1d_miss_per_op", wint(w, "l1d_miss") / ops, "modeled miss", "lower");
		result_add_metric(result, "model_l2_miss_per_op", wint(w, "l2_miss") / ops, "modeled miss", "lower");
		result_add_metric(result, "model_llc_miss_per_op", wint(w, "llc_miss") / ops, "modeled miss", "lower");
		result_add_metric(result, "model_coh_miss_per_op", wint(w, "coh_miss") / ops, "modeled miss", "lower");
		result_add_metric(result, "model_cycles_per_op", wint(w, "cycles") / ops, "modeled cycle", "lower");
	}
	json_object_put(w);
}
