/* build_make.c: the config of a build (base, fragments, olddefconfig, checked) and the make runs, logged, under ccache. */
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "buf.h"
#include "kbuild/build.h"
#include "kbuild/build_int.h"
#include "intake/fetch.h"
#include "log.h"
#include "progress.h"
#include "run.h"
#include "strvec.h"
#include "util.h"

/* Value of every CONFIG_ option in a .config-style text ("n" for "is not set"). */
static void config_values(const char *text, struct strvec *keys, struct strvec *vals)
{
	struct strvec lines = STRVEC_INIT;

	strvec_split(&lines, text, "\n");
	for (size_t i = 0; i < lines.n; i++) {
		const char *l = lines.v[i], *eq;

		if (starts_with(l, "# CONFIG_") && ends_with(l, " is not set")) {
			char *k = xstrndup(l + 2, strlen(l) - 2 - strlen(" is not set"));

			strvec_push(keys, k);
			strvec_push(vals, "n");
			free(k);
		} else if (starts_with(l, "CONFIG_") && (eq = strchr(l, '='))) {
			char *k = xstrndup(l, eq - l);

			strvec_push(keys, k);
			strvec_push(vals, eq + 1);
			free(k);
		}
	}
	strvec_clear(&lines);
}

/* Every option a fragment sets must have that value in DOTCONFIG; the ones that vanished are named. */
static int check_fragments(const struct tree *t, const char *dotconfig, struct buf *missing)
{
	struct buf cfg = BUF_INIT;
	struct strvec ck = STRVEC_INIT, cv = STRVEC_INIT;

	if (buf_read_file(&cfg, dotconfig) < 0)
		return -1;
	config_values(cfg.buf, &ck, &cv);
	for (size_t f = 0; f < t->fragments.n; f++) {
		struct buf frag = BUF_INIT;
		struct strvec fk = STRVEC_INIT, fv = STRVEC_INIT;

		if (buf_read_file(&frag, t->fragments.v[f]) < 0) {
			buf_release(&frag);
			continue;
		}
		config_values(frag.buf, &fk, &fv);
		for (size_t i = 0; i < fk.n; i++) {
			long at = strvec_find(&ck, fk.v[i]);
			const char *got = at >= 0 ? cv.v[at] : "n";

			if (strcmp(got, fv.v[i]))
				buf_addf(missing, "%s%s=%s (now %s%s)", missing->len ? ", " : "", fk.v[i], fv.v[i],
					 strcmp(got, "n") ? "=" : "", strcmp(got, "n") ? got : "not set");
		}
		strvec_clear(&fk);
		strvec_clear(&fv);
		buf_release(&frag);
	}
	strvec_clear(&ck);
	strvec_clear(&cv);
	buf_release(&cfg);
	return 0;
}

/* Hash of the config recipe: the base (and its file's content) and each fragment's content. */
int recipe_hash(const struct tree *t, char hex[65])
{
	struct buf b = BUF_INIT;
	char h[65];

	buf_addf(&b, "base %s\n", t->base);
	if (!strcmp(t->base, "running")) {
		struct utsname u;

		uname(&u);
		buf_addf(&b, "running %s %s\n", u.release, u.version);
	} else if (strchr(t->base, '/') || file_exists(t->base)) {
		if (sha256_file_hex(t->base, h) < 0) {
			buf_release(&b);
			return -1;
		}
		buf_addf(&b, "file %s\n", h);
	}
	for (size_t i = 0; i < t->fragments.n; i++) {
		if (sha256_file_hex(t->fragments.v[i], h) < 0) {
			buf_release(&b);
			return -1;
		}
		buf_addf(&b, "fragment %s\n", h);
	}
	sha256_hex(b.buf, b.len, hex);
	buf_release(&b);
	return 0;
}

/*
 * The objects the next make run is expected to compile (build_make() sets
 * it for the kernel's make, run_logged() shows it): the count and how it is
 * known (PROGRESS_*); 0: not known, the line counts without a total.
 */
static struct {
	long n;
	int kind;
} expect_next;

/*
 * The estimate of a first build's objects: a fixed part (the core, lib/,
 * the boot code and host tools a tinyconfig builds too) and a part per
 * option set to y or m. Measured on linux-source-6.1 (docs/progress.md).
 */
#define OBJECTS_BASE 700
#define OBJECTS_PER_OPTION 1

/*
 * The progress line of a long command, on stderr: its label, the objects
 * compiled so far (kbuild's "  CC " lines in the log, read from where it
 * ended at the start) of the expected count, the time and an ETA.
 */
struct log_progress {
	const char *label;
	int fd;			/* the log, read from where it ended at the start */
	struct buf part;	/* the last line read, while it is not complete */
	long objects;
	struct progress line;
};

/* 1 when a kbuild output line says an object is compiled: "  CC      net/core/dev.o", "  CC [M]  ...". */
static int kbuild_compiles(const char *l, size_t n)
{
	return n > 5 && !memcmp(l, "  CC ", 5);
}

static void show_progress(void *arg)
{
	struct log_progress *p = arg;
	char chunk[4096];
	ssize_t n;

	while ((n = read(p->fd, chunk, sizeof(chunk))) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			if (chunk[i] != '\n') {
				if (p->part.len < 512)
					buf_add(&p->part, chunk + i, 1);
				continue;
			}
			p->objects += kbuild_compiles(p->part.buf, p->part.len);
			buf_reset(&p->part);
		}
	}
	/* in a log, a step that compiles nothing (config) stays quiet */
	if (p->objects || p->line.total > 0 || p->line.tty)
		progress_update(&p->line, p->objects);
}

/*
 * make (or any long command) with its output appended to LOGFD, at nice
 * 19 ($KLAB_BUILD_NICE), the step, the objects compiled and the elapsed
 * time shown on stderr when PROGRESS (lib/progress.h: in place on a
 * terminal, a line every few seconds otherwise), the whole process group killed
 * at the timeout. Returns the exit status (0 ok), 124 on a timeout, -1
 * when it could not start.
 */
static int run_logged(const char *const *argv, const char *dir, const char *const *env, int logfd,
		      const char *logpath, long timeout_ms, const char *label, int progress)
{
	struct run_cmd c = RUN_CMD_INIT;
	struct log_progress lp = { .label = label, .fd = -1, .part = BUF_INIT };
	struct buf why = BUF_INIT;
	const char *nv = getenv("KLAB_BUILD_NICE");
	long v;
	int ret;

	c.argv = argv;
	c.dir = dir;
	c.env = env;
	c.out_fd = logfd;
	c.timeout_ms = timeout_ms;
	c.kill_grace_ms = 5000;
	c.nice = nv && parse_long(nv, -20, 19, &v) == 0 ? (int)v : 19;
	c.why = &why;	/* a command that did not start says so in the build log too */
	if (progress)
		lp.fd = open(logpath, O_RDONLY | O_CLOEXEC);
	if (lp.fd >= 0) {
		lseek(lp.fd, 0, SEEK_END);
		progress_start(&lp.line, label, "objects", expect_next.n, expect_next.kind, stderr);
		c.tick = show_progress;
		c.tick_arg = &lp;
	}
	if (build_run(&c, 0) < 0) {
		dprintf(logfd, "klab: %s\n", why.buf);
		error("%s", why.buf);
		ret = -1;
	} else {
		ret = c.timed_out ? 124 : c.status;
	}
	if (lp.fd >= 0) {
		show_progress(&lp);
		/* a step that compiled nothing (config) leaves no last line */
		progress_end(&lp.line, lp.objects || lp.line.total > 0 ? (ret == 0 ? "done" : "failed") : NULL);
		close(lp.fd);
	}
	buf_release(&lp.part);
	buf_release(&why);
	run_release(&c);
	return ret;
}

/* The last lines of a log that say "error" (or simply the last ones), for messages. */
char *log_excerpt(const char *path)
{
	struct buf b = BUF_INIT, out = BUF_INIT;
	struct strvec lines = STRVEC_INIT;
	size_t shown = 0;

	if (buf_read_file(&b, path) < 0)
		return xstrdup("(no log)");
	strvec_split(&lines, b.buf, "\n");
	for (size_t i = 0; i < lines.n && shown < 3; i++)
		if (strstr(lines.v[i], "error:") || strstr(lines.v[i], "Error ")) {
			buf_addf(&out, "%s%s", out.len ? " | " : "", lines.v[i]);
			shown++;
		}
	if (!shown && lines.n)
		buf_addstr(&out, lines.v[lines.n - 1]);
	strvec_clear(&lines);
	buf_release(&b);
	return buf_detach(&out, NULL);
}

/* make -C SRC O=OBJ CC=... ARGS... into the log. */
int make_step(const char *src, const char *obj, const char *cc, const char *const *env, int logfd,
	      const char *logpath, long timeout_ms, const char *label, int progress, ...)
{
	struct strvec av = STRVEC_INIT;
	va_list ap;
	const char *a;
	int r;

	strvec_push(&av, "make");
	strvec_push(&av, "-C");
	strvec_push(&av, src);
	strvec_pushf(&av, "O=%s", obj);
	strvec_pushf(&av, "CC=%s", cc);
	va_start(ap, progress);
	while ((a = va_arg(ap, const char *)))
		strvec_push(&av, a);
	va_end(ap);
	{
		char *cmd = strvec_join(&av, " ");

		dprintf(logfd, "klab: $ %s\n", cmd);
		free(cmd);
	}
	r = run_logged((const char *const *)av.v, NULL, env, logfd, logpath, timeout_ms, label, progress);
	strvec_clear(&av);
	return r;
}

/* Make the .config in OBJ from the recipe (when it changed) and check it. */
int make_config(const struct tree *t, const char *src, const char *obj, const char *recipe,
		const char *cc, const char *const *env, int logfd, const char *logpath, int progress,
		struct buf *why)
{
	char *stamp = xasprintf("%s/.klab-recipe", obj), *dotconfig = xasprintf("%s/.config", obj);
	struct buf old = BUF_INIT, missing = BUF_INIT, err = BUF_INIT;
	int ret = -1, fresh;

	fresh = !file_exists(stamp) || buf_read_file(&old, stamp) < 0 || strcmp(old.buf, recipe) ||
		!file_exists(dotconfig);
	if (fresh) {
		const char *b = t->base;

		unlink(stamp);
		if (!strcmp(b, "running")) {
			struct utsname u;
			struct buf cfg = BUF_INIT;
			char *boot;

			uname(&u);
			boot = xasprintf("/boot/config-%s", u.release);
			if (file_exists("/proc/config.gz")) {
				buf_read_file(&cfg, "/proc/config.gz");
				fetch_gunzip(&cfg, "/proc/config.gz");
			} else if (buf_read_file(&cfg, boot) < 0) {
				error_to(why, "tree '%s': config base 'running': no /proc/config.gz and no '%s'", t->name,
					 boot);
				free(boot);
				buf_release(&cfg);
				goto out;
			}
			free(boot);
			if (write_file_atomic(dotconfig, cfg.buf, cfg.len, 0644) < 0) {
				buf_release(&cfg);
				goto out;
			}
			buf_release(&cfg);
		} else if (strchr(b, '/') || (file_exists(b) && !ends_with(b, "config"))) {
			struct buf cfg = BUF_INIT;

			if (buf_read_file(&cfg, b) < 0 || write_file_atomic(dotconfig, cfg.buf, cfg.len, 0644) < 0) {
				buf_release(&cfg);
				goto out;
			}
			buf_release(&cfg);
		} else if (make_step(src, obj, cc, env, logfd, logpath, 600000, "config", progress, b, NULL)) {
			error_to(why, "tree '%s': 'make %s' failed", t->name, b);
			goto out;
		}
		if (t->fragments.n) {
			struct strvec av = STRVEC_INIT;
			char *script = xasprintf("%s/scripts/kconfig/merge_config.sh", src);

			strvec_push(&av, script);
			strvec_push(&av, "-m");
			strvec_push(&av, "-O");
			strvec_push(&av, obj);
			strvec_push(&av, dotconfig);
			for (size_t i = 0; i < t->fragments.n; i++)
				strvec_push(&av, t->fragments.v[i]);
			dprintf(logfd, "klab: merging %zu fragment(s)\n", t->fragments.n);
			if (run_logged((const char *const *)av.v, src, env, logfd, logpath, 300000, "config", progress)) {
				error_to(why, "tree '%s': merge_config.sh failed", t->name);
				free(script);
				strvec_clear(&av);
				goto out;
			}
			free(script);
			strvec_clear(&av);
		}
	}
	if (make_step(src, obj, cc, env, logfd, logpath, 600000, "config", progress, "olddefconfig", NULL)) {
		error_to(why, "tree '%s': 'make olddefconfig' failed", t->name);
		goto out;
	}
	if (check_fragments(t, dotconfig, &missing) < 0)
		goto out;
	if (missing.len) {
		error_to(why, "tree '%s': config options of the fragments did not survive olddefconfig: %s", t->name,
			 missing.buf);
		goto out;
	}
	if (fresh && write_file_atomic(stamp, recipe, strlen(recipe), 0644) < 0)
		goto out;
	ret = 0;
out:
	free(stamp);
	free(dotconfig);
	buf_release(&old);
	buf_release(&missing);
	buf_release(&err);
	return ret;
}

/* ccache counters (hits and misses) from `ccache --print-stats`. */
void ccache_counts(const char *const *env, long *hits, long *misses)
{
	const char *const argv[] = { "ccache", "--print-stats", NULL };
	struct run_cmd c = RUN_CMD_INIT;
	struct strvec lines = STRVEC_INIT;

	*hits = *misses = 0;
	c.argv = argv;
	c.env = env;
	c.timeout_ms = 30000;
	c.quiet = 1;
	if (build_run(&c, 0) == 0 && c.status == 0) {
		strvec_split(&lines, c.out.buf, "\n");
		for (size_t i = 0; i < lines.n; i++) {
			const char *tab = strchr(lines.v[i], '\t');
			long v;

			if (!tab || parse_long(tab + 1, 0, 1L << 62, &v) < 0)
				continue;
			if (starts_with(lines.v[i], "direct_cache_hit\t") ||
			    starts_with(lines.v[i], "preprocessed_cache_hit\t"))
				*hits += v;
			else if (starts_with(lines.v[i], "cache_miss\t"))
				*misses += v;
		}
	}
	strvec_clear(&lines);
	run_release(&c);
}

const char *kernel_arch(void)
{
	struct utsname u;
	static char arch[sizeof(((struct utsname *)0)->machine)];

	uname(&u);
	if (!strcmp(u.machine, "x86_64") || !strncmp(u.machine, "i", 1))
		return "x86";
	if (!strcmp(u.machine, "aarch64"))
		return "arm64";
	snprintf(arch, sizeof(arch), "%s", u.machine);
	return arch;
}

/* Count the .o files under DIR (a build folder made before klab kept its count). */
static long count_objects_in;
static int count_object(const char *path, const struct stat *st, int type, struct FTW *f)
{
	(void)st;
	(void)f;
	if (type == FTW_F && ends_with(path, ".o"))
		count_objects_in++;
	return 0;
}

/* The "  CC " lines of a build log: the objects that make compiled. */
static long log_objects(const char *path)
{
	struct buf b = BUF_INIT;
	long n = 0;

	if (buf_read_file(&b, path) < 0)
		return -1;
	for (const char *l = b.buf; *l;) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);

		n += kbuild_compiles(l, len);
		l += len + (e != NULL);
	}
	buf_release(&b);
	return n;
}

/*
 * The objects the kernel's make in OBJ will compile, into expect_next:
 * the count of the last full build of this folder (same tree and config
 * recipe) kept in OBJ/.klab-objects, exact for a full build and an upper
 * bound for an incremental one (vmlinux there); the .o files of a folder
 * built before that count was kept; else an estimate from the .config's
 * built-in options (docs/progress.md). Returns 1 for a full build.
 */
static int expect_objects(const char *obj, const char *dotconfig_text)
{
	char *stamp = xasprintf("%s/.klab-objects", obj), *vml = xasprintf("%s/vmlinux", obj);
	struct buf sb = BUF_INIT;
	int full = !file_exists(vml);
	long v;

	expect_next.n = 0;
	expect_next.kind = PROGRESS_ABOUT;
	if (file_exists(stamp) && buf_read_file(&sb, stamp) == 0)
		buf_rtrim(&sb);
	if (sb.len && parse_long(sb.buf, 1, 1L << 30, &v) == 0) {
		expect_next.n = v;
		expect_next.kind = full ? PROGRESS_EXACT : PROGRESS_AT_MOST;
	} else if (!full) {
		count_objects_in = 0;
		if (nftw(obj, count_object, 16, FTW_PHYS) == 0 && count_objects_in > 0) {
			expect_next.n = count_objects_in;
			expect_next.kind = PROGRESS_AT_MOST;
		}
	}
	if (!expect_next.n && dotconfig_text) {
		long set = 0;

		for (const char *l = dotconfig_text; (l = strstr(l, "\nCONFIG_")); l++) {
			const char *eq = strchr(l + 1, '=');

			set += eq && (eq[1] == 'y' || eq[1] == 'm') && eq[2] == '\n';
		}
		expect_next.n = OBJECTS_BASE + OBJECTS_PER_OPTION * set;
	}
	buf_release(&sb);
	free(stamp);
	free(vml);
	return full;
}

int build_make(struct build *b)
{
	const struct build_request *req = b->req;
	const char *const *env = (const char *const *)b->env.v;
	struct buf dc = BUF_INIT, why = BUF_INIT;
	char *jarg = NULL, *dotconfig = NULL;
	long hits0, miss0;
	int64_t t0;
	int jobs, r, full, ret = -1;

	b->label = xasprintf("build %s %s", b->t.name, b->variant);
	if (make_config(&b->t, b->src, b->obj, b->recipe, b->cc, env, b->logfd, b->logpath, req->progress,
			&why) < 0) {
		if (why.len)
			buf_addf(&b->msg, "%s (log: %s.failed.log)", why.buf, b->artdir);
		else
			buf_addf(&b->msg, "config of tree '%s' failed (log: %s.failed.log)", b->t.name, b->artdir);
		goto out;
	}
	jobs = req->jobs > 0 ? req->jobs : b->t.jobs > 0 ? b->t.jobs : (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (jobs < 1)
		jobs = 1;
	b->lv = xasprintf("LOCALVERSION=%s-%s", b->t.localversion, b->variant);
	jarg = xasprintf("-j%d", jobs);
	dotconfig = xasprintf("%s/.config", b->obj);
	if (buf_read_file(&dc, dotconfig) == 0)
		b->has_modules = strstr(dc.buf, "=m\n") != NULL;
	ccache_counts(env, &hits0, &miss0);
	full = expect_objects(b->obj, dc.len ? dc.buf : NULL);
	t0 = now_ms();
	r = make_step(b->src, b->obj, b->cc, env, b->logfd, b->logpath,
		      req->timeout_ms ? req->timeout_ms : 90L * 60 * 1000, b->label, req->progress, jarg, b->lv,
		      "bzImage", b->has_modules ? "modules" : NULL, NULL);
	expect_next.n = 0;
	if (r == 0) {
		/* the count of a full build is the next build's expectation */
		long n = log_objects(b->logpath);
		char *stamp = xasprintf("%s/.klab-objects", b->obj), *txt = xasprintf("%ld\n", n);

		if (full && n > 0 && write_file_atomic(stamp, txt, strlen(txt), 0644) < 0)
			warn("cannot keep the object count of '%s' (the error above)", b->obj);
		free(stamp);
		free(txt);
	}
	if (r) {
		char *ex = log_excerpt(b->logpath);

		buf_addf(&b->msg, "kernel build of tree '%s' variant '%s' failed (%s): %s (log: %s.failed.log)",
			 b->t.name, b->variant, r == 124 ? "timed out" : "make failed", ex, b->artdir);
		free(ex);
		goto out;
	}
	b->out->duration_s = (now_ms() - t0) / 1000.0;
	ccache_counts(env, &b->hits, &b->misses);
	b->hits -= hits0;
	b->misses -= miss0;
	ret = 0;
out:
	buf_release(&dc);
	buf_release(&why);
	free(jarg);
	free(dotconfig);
	return ret;
}
