/* build_int.h: what the files of a kernel build share (build.c, build_tree.c, build_apply.c, build_make.c); not an API. */
#ifndef KLAB_BUILD_INT_H
#define KLAB_BUILD_INT_H

#include <stdint.h>

#include "buf.h"
#include "kbuild/build.h"
#include "conf/conf.h"
#include "store/db.h"
#include "run.h"
#include "sandbox/sandbox.h"
#include "strvec.h"

/* A tree's recipe, resolved: the [tree "NAME"] section, or the built-in tree. */
struct tree {
	char *name;
	char *git;		/* URL or local path, or NULL */
	char *branch;
	char *tarball;
	char *base;		/* tinyconfig | defconfig | running | FILE */
	struct strvec fragments;	/* resolved paths */
	char *localversion;	/* prefix of LOCALVERSION */
	int jobs;
	struct tree *share;	/* [tree] share = NAME: that tree, whose repository and build folders this one uses */
};

/*
 * One build in progress: what the phases of build_kernel() hand on, in
 * the order they fill it in.
 */
struct build {
	const struct klab_config *cfg;
	struct db *db;
	const struct build_request *req;
	struct kernel_artifact *out;
	const char *cache;		/* build_cache_dir() */
	struct sandbox sb;		/* where every command of the build runs (docs/security.md) */
	char *ccache_dir;		/* CCACHE_DIR of the build (writable in the sandbox) */
	char *modroot;			/* set while modules_install runs: writable in the sandbox */
	/* the source (build_source) */
	struct tree t;
	const char *variant;
	size_t n_local;			/* local patches of the request */
	char *rname, *src, *commit;	/* repository name and folder, baseline commit */
	int lockfd;			/* the tree's lock */
	/* the key (build_key in build.c) */
	struct strvec env;		/* of every make */
	char *cc, *compiler;
	char recipe[65], key[65];
	char *artdir;			/* where the artifacts end up */
	int64_t kid;			/* kernels.id (0: no row: apply_only) */
	char *tmpdir, *logpath;		/* the artifacts while they are made, and the log */
	int logfd;
	/* the patches (build_apply) */
	int worktree_dirty;		/* the work tree is off the baseline commit */
	struct apply_result *ap;
	size_t nap;
	/* config and make (build_make) */
	char *obj, *label, *lv;		/* build folder (O=), progress label, LOCALVERSION=... */
	int has_modules;
	long hits, misses;		/* ccache counters of the make run */
	/* isolation of an untrusted build (build_isolate.c) */
	char *scratch;			/* the upper folders of the overlays */
	int mntns;			/* klab's own mount namespace, to go back to (-1: none) */
	int isolated, obj_overlay, ccache_overlay;
	struct buf msg;			/* why the build failed (kernels.error, build_kernel()'s ERR) */
};

/* ---- build_isolate.c: an untrusted build writes nothing a later build reads */
/* 1 when the build applies a series (patches from mail or a patchwork/lore fetch). */
int build_untrusted(const struct build *b);
/*
 * For an untrusted build run by root: overlays over the build folder and
 * the ccache, mounted on their own paths in a mount namespace of this
 * process, with this build's scratch folder above. 0 (also when nothing
 * is to be done), or -1 with ERR saying why (error_to()).
 */
int build_isolate(struct build *b, struct buf *err);
/* Unmount, go back to klab's mount namespace, remove the scratch folder. */
void build_unisolate(struct build *b);

/* ---- build_tree.c: the source, and the sandbox of the build's commands */
/* Flags of build_run(). */
#define BUILD_RUN_GIT 1u	/* the tree's .git writable (git itself); otherwise read-only */
#define BUILD_RUN_NET 2u	/* the host's network (git clone/fetch of a URL) */
#define BUILD_RUN_OUT 4u	/* the artifact folder being made writable (tar of the modules) */
/* The build whose sandbox build_run() and git() use, for the length of build_kernel() (NULL: none). */
void build_jail(struct build *b);
/*
 * Run C in the sandbox of the current build: as the sandbox user in bwrap
 * with the tree, the build folder and the ccache folder writable (the
 * tree's .git read-only unless BUILD_RUN_GIT), the patch file, fragments,
 * tarball and local repository visible, no network unless BUILD_RUN_NET.
 * run_command()'s result; -1 when there is no sandbox (never run without),
 * with the message in c->why when set (else logged), as run_command() does.
 */
int build_run(struct run_cmd *c, unsigned flags);
/*
 * Phase 1: the variant checked, the tree's repository made or updated
 * under the tree's lock (held to the end of the build), the ref resolved
 * to b->commit. 0, or -1 with b->msg saying why.
 */
int build_source(struct build *b);
/* Fill T from the config (or the built-in tree when NAME is it or NULL): 0, or -1 with ERR saying why. */
int tree_resolve(const struct klab_config *cfg, const char *name, struct tree *t, struct buf *err);
void tree_free(struct tree *t);
/* The folder name of a tree's repository and build folders (malloc'd). */
char *repo_name(const struct tree *t);
/* Take CACHE/src/NAME.lock, waiting for another build of the tree: fd, or -1. */
int lock_tree(const char *cache, const char *name);
/*
 * git [-C REPO] ARGS... (NULL-terminated), in the sandbox (of the build in
 * progress, else one with REPO writable): 0 when it exited 0, 1 when it
 * failed, -1 when it could not run; stdout to OUT, stderr and the reason
 * of a failure to ERR (either may be NULL).
 */
int git(const char *repo, struct buf *out, struct buf *err, long timeout_ms, ...);
/*
 * Make or update the repository of T at SRC; resolve REF (NULL: the
 * tree's branch) to *COMMIT: 0, or -1 with ERR saying why (error_to()).
 */
int prepare_repo(const struct tree *t, const char *src, const char *ref, char **commit, struct buf *err);
/* Put the work tree SRC at COMMIT with nothing else in it: 0 or -1. */
int reset_worktree(const char *src, const char *commit);

/* ---- build_apply.c: the patches */
/*
 * Phase 3: the work tree at the baseline commit, then the series and the
 * local patches applied in order, each outcome in b->ap. 0, or -1 with
 * b->msg naming the patch and the failing hunk.
 */
int build_apply(struct build *b);
/*
 * Apply one patch (a mail in FILE, or a plain diff) to the work tree SRC
 * and commit it: R is filled; 0, or -1 with FAIL saying where. The
 * attempts go to LOGFD.
 */
int apply_one(const char *src, const char *file, const char *diff, const char *subject,
	      int mail, struct apply_result *r, struct buf *fail, int logfd);

/* ---- build_make.c: config and make */
/*
 * Phase 4: the config made and checked in the build folder, then make
 * bzImage (and modules when the config has any) under ccache. 0, or -1
 * with b->msg set.
 */
int build_make(struct build *b);
/* Hash of the config recipe (base and fragments, by content): 0 or -1. */
int recipe_hash(const struct tree *t, char hex[65]);
/*
 * Make the .config in OBJ from the recipe (when it changed) and check it:
 * 0, or -1 with WHY saying which step failed ("tree 'x': 'make olddefconfig'
 * failed"; empty when a file could not be read or written: that was logged).
 */
int make_config(const struct tree *t, const char *src, const char *obj, const char *recipe,
		const char *cc, const char *const *env, int logfd, const char *logpath, int progress,
		struct buf *why);
/* make -C SRC O=OBJ CC=CC ARGS... (NULL-terminated) into the log: exit status, 124 timed out, -1. */
int make_step(const char *src, const char *obj, const char *cc, const char *const *env, int logfd,
	      const char *logpath, long timeout_ms, const char *label, int progress, ...);
/* The lines of a log that say "error" (or its last line), for messages (malloc'd). */
char *log_excerpt(const char *path);
/* ccache's hit and miss counters now. */
void ccache_counts(const char *const *env, long *hits, long *misses);
/* The kernel's name of this machine's architecture (x86, arm64, ...). */
const char *kernel_arch(void);

#endif
