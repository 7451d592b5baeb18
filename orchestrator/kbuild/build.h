/* build.h: kernel trees (git, URL, tarball), baseline/patched builds under ccache, the artifact store. */
#ifndef KLAB_BUILD_H
#define KLAB_BUILD_H

#include <stdint.h>

#include "conf/conf.h"
#include "store/db.h"

struct buf;
struct series;

/*
 * Where the long-lived build state lives (the "kernel cache"), in this order:
 * $KLAB_KERNEL_CACHE, else /var/cache/klab. Under it:
 *   src/TREE          the tree's git repository with a work tree (a tarball
 *                     is imported there as one commit; a git URL or a local
 *                     repository is cloned there once and fetched after)
 *   obj/TREE-CFG      the out-of-tree build folder (O=), one per tree and
 *                     config recipe, shared by the baseline and the patched
 *                     build so that the patched one is an incremental build
 *   ccache            CCACHE_DIR unless $CCACHE_DIR is set
 *   src/TREE.lock     flock held for the whole of a build of TREE
 * Artifacts go to [lab] artifact_dir/KEY16 (KEY16: the first 16 hex digits
 * of the build key); with no config, $KLAB_KERNEL_CACHE/artifacts.
 */
const char *build_cache_dir(void);

/*
 * The built-in tree used when a request names a tree the config does not
 * define and the name is "linux-source-6.1" (or NULL): Debian's
 * /usr/src/linux-source-6.1.tar.xz, tinyconfig + kernels/configs/qemu.config.
 */
#define BUILD_DEFAULT_TREE "linux-source-6.1"

/* One build. Strings are borrowed for the duration of build_kernel(). */
struct build_request {
	const char *tree;		/* [tree "NAME"], or NULL/BUILD_DEFAULT_TREE for the built-in one */
	const char *ref;		/* commit, tag or branch; NULL: the tree's branch (tarball: its import) */
	const struct series *series;	/* patches applied in order (NULL: none) */
	int64_t series_id;		/* its id in the database, for kernels.series_id (0: none) */
	const char *const *local_patches;	/* files applied after the series (backport fix-ups), NULL-terminated or NULL */
	const char *variant;		/* "base", "patched" or a label; NULL: "patched" with patches, else "base" */
	const char *artifact_dir;	/* overrides [lab] artifact_dir (NULL: config) */
	int jobs;			/* make -jN; 0: the tree's jobs, else nproc */
	int force;			/* rebuild even if the key exists */
	int apply_only;			/* only check that the patches apply: out->applied filled, nothing built or stored */
	int progress;			/* 1: show the step and elapsed time on stderr (when a terminal) */
	long timeout_ms;		/* whole make run; 0: 90 min */
};

/* How one patch applied (apply_log). */
enum apply_how { APPLY_CLEAN, APPLY_OFFSET, APPLY_FUZZ, APPLY_FAILED };

struct apply_result {
	char *name;			/* "1/2 udp: introduce ..." or the local patch's file name */
	enum apply_how how;
	char *method;			/* "git am -3" or "patch -p1 --fuzz=2" */
	int max_fuzz;			/* largest fuzz of any hunk */
	int offsets;			/* hunks applied at an offset */
	char *detail;			/* patch(1)'s messages, or the failing hunk */
};

/* A built kernel (free with kernel_artifact_release). */
struct kernel_artifact {
	int64_t id;			/* kernels.id */
	char key[65];			/* sha256 of (commit, series content, local patches, config recipe, compiler, variant) */
	char *tree;
	char *commit;			/* baseline commit of the tree */
	char *variant;
	char *dir;			/* artifact folder */
	char *image;			/* DIR/bzImage */
	char *config;			/* DIR/config */
	char *system_map;		/* DIR/System.map */
	char *modules;			/* DIR/modules.tar.gz, or NULL when the config builds no module */
	char *log;			/* DIR/build.log */
	char *release;			/* uname -r of the kernel, e.g. 6.1.192-lab-patched */
	char *build_id;			/* GNU build id of vmlinux (hex), or NULL */
	double duration_s;		/* of the make run (when cached: of the build that made it) */
	int cached;			/* 1: the key existed, nothing was built */
	struct apply_result *applied;	/* per patch, in order */
	size_t n_applied;
};

/*
 * Build (or reuse) the kernel the request describes and record it in the
 * kernels table of DB. CFG gives the trees and [lab] artifact_dir; it may
 * be NULL for the built-in tree. Steps, all under the tree's lock:
 *  1. the tree's repository is made or updated, the ref resolved to a commit;
 *  2. the key is computed; an ok row with that key and its files present is
 *     returned as is (out->cached = 1);
 *  3. the work tree is checked out at the commit, the series applied in
 *     order (git am -3, else patch -p1 --fuzz=2, each outcome recorded),
 *     then the local patches;
 *  4. the config is made (base + fragments merged + olddefconfig) in the
 *     tree's build folder and every option the fragments set is checked;
 *  5. make -jN bzImage (modules when any =m) under ccache, LOCALVERSION=-VARIANT;
 *  6. artifacts copied to the artifact folder (meta.json beside them);
 *  7. the work tree is put back to the baseline commit.
 * A patch that does not apply fails the build with its subject and the
 * failing hunk in the message; the kernels row says 'failed' with that
 * error, and nothing stored before is touched.
 * 0 (out filled), or -1 with that message in ERR (error_to(): logged when
 * ERR is NULL).
 */
int build_kernel(const struct klab_config *cfg, struct db *db, const struct build_request *req,
		 struct kernel_artifact *out, struct buf *err);

/*
 * Fill OUT from the kernels row ID (artifact paths included): 0, or -1 with
 * ERR saying why (NULL: logged; the database logs its own failure either way).
 */
int kernel_artifact_load(struct db *db, int64_t id, struct kernel_artifact *out, struct buf *err);

void kernel_artifact_release(struct kernel_artifact *a);

const char *apply_how_name(enum apply_how h);

#endif
