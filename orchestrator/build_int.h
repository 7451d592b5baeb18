/* build_int.h: what the files of a kernel build share (build.c, build_tree.c, build_apply.c, build_make.c); not an API. */
#ifndef KLAB_BUILD_INT_H
#define KLAB_BUILD_INT_H

#include "buf.h"
#include "build.h"
#include "conf.h"
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
};

/* ---- build_tree.c: the source */
/* Fill T from the config (or the built-in tree when NAME is it or NULL): 0 or -1. */
int tree_resolve(const struct klab_config *cfg, const char *name, struct tree *t);
void tree_free(struct tree *t);
/* The folder name of a tree's repository and build folders (malloc'd). */
char *repo_name(const struct tree *t);
/* Take CACHE/src/NAME.lock, waiting for another build of the tree: fd, or -1. */
int lock_tree(const char *cache, const char *name);
/*
 * git [-C REPO] ARGS... (NULL-terminated): 0 when it exited 0, 1 when it
 * failed, -1 when it could not run; stdout to OUT, stderr and the reason
 * of a failure to ERR (either may be NULL).
 */
int git(const char *repo, struct buf *out, struct buf *err, long timeout_ms, ...);
/* Make or update the repository of T at SRC; resolve REF (NULL: the tree's branch) to *COMMIT: 0 or -1. */
int prepare_repo(const struct tree *t, const char *src, const char *ref, char **commit);
/* Put the work tree SRC at COMMIT with nothing else in it: 0 or -1. */
int reset_worktree(const char *src, const char *commit);

/* ---- build_apply.c: the patches */
/*
 * Apply one patch (a mail in FILE, or a plain diff) to the work tree SRC
 * and commit it: R is filled; 0, or -1 with FAIL saying where. The
 * attempts go to LOGFD.
 */
int apply_one(const char *src, const char *file, const char *diff, const char *subject,
	      int mail, struct apply_result *r, struct buf *fail, int logfd);

/* ---- build_make.c: config and make */
/* Hash of the config recipe (base and fragments, by content): 0 or -1. */
int recipe_hash(const struct tree *t, char hex[65]);
/* Make the .config in OBJ from the recipe (when it changed) and check it: 0 or -1. */
int make_config(const struct tree *t, const char *src, const char *obj, const char *recipe,
		const char *cc, const char *const *env, int logfd, const char *logpath, int progress);
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
